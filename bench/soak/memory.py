"""Where a worker process's memory goes, under the soak's load (``--trace-worker``): the
service's Celery app (``api.tasks``, unchanged) whose pool processes trace their allocations
(:mod:`tracemalloc`, ``SOAK_TRACE_FRAMES`` frames, default 1) and write a snapshot to
``SOAK_MEMORY_DIR/<pid>-<n>.snapshot`` every ``SOAK_TRACE_SECONDS`` (default 60) seconds;
:func:`summary` compares each process's first snapshot after the warm-up with its last, by
line. Tracing slows the process (a few tens of percent): the run's latencies are not the
service's. Celery: ``--app bench.soak.memory:celery``.
"""

from __future__ import annotations

import os
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

from celery.signals import worker_process_init

import api.tasks


def _snapshots(folder: Path, every: float) -> None:
    count = 0
    while True:
        time.sleep(every)
        left_out = [tracemalloc.Filter(False, tracemalloc.__file__),
                    tracemalloc.Filter(False, "<frozen importlib._bootstrap>")]
        snapshot = tracemalloc.take_snapshot().filter_traces(left_out)
        snapshot.dump(str(folder / f"{os.getpid()}-{count:04d}.snapshot"))
        count += 1


@worker_process_init.connect
def _trace(**_: Any) -> None:
    folder = os.environ.get("SOAK_MEMORY_DIR")
    if not folder:
        return
    tracemalloc.start(int(os.environ.get("SOAK_TRACE_FRAMES", "1")))
    every = float(os.environ.get("SOAK_TRACE_SECONDS", "60"))
    threading.Thread(target=_snapshots, args=(Path(folder), every), name="soak-memory", daemon=True).start()


def __getattr__(name: str) -> Any:
    """``celery``: the service's worker app (:data:`api.tasks.celery`)."""
    if name == "celery":
        return api.tasks.celery
    raise AttributeError(name)


def summary(folder: Path, skip: int = 1, top: int = 15) -> str:
    """Per traced process: the growth from its snapshot ``skip`` (after the warm-up) to its last,
    in total and by line (the ``top`` lines that grew most)."""
    lines: list[str] = []
    by_pid: dict[str, list[Path]] = {}
    for path in sorted(folder.glob("*.snapshot")):
        by_pid.setdefault(path.name.split("-")[0], []).append(path)
    for pid, paths in sorted(by_pid.items()):
        if len(paths) <= skip + 1:
            lines.append(f"process {pid}: {len(paths)} snapshots, too few to compare")
            continue
        first, last = tracemalloc.Snapshot.load(str(paths[skip])), tracemalloc.Snapshot.load(str(paths[-1]))
        minutes = (len(paths) - 1 - skip) * float(os.environ.get("SOAK_TRACE_SECONDS", "60")) / 60
        stats = last.compare_to(first, "lineno")
        grown = sum(stat.size_diff for stat in stats)
        total = sum(stat.size for stat in stats)
        lines.append(f"process {pid}: traced {total / 1e6:.1f} MB, {grown / 1e6:+.2f} MB in {minutes:g} min "
                     f"({grown / 1e6 / minutes:+.2f} MB/min)")
        for stat in stats[:top]:
            frame = stat.traceback[0]
            lines.append(f"  {stat.size_diff / 1e3:+10.1f} KB {stat.count_diff:+8d} blocks  "
                         f"{frame.filename.split('site-packages/')[-1]}:{frame.lineno}")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    print(summary(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 1))
