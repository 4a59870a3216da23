"""Where a web process's request time goes, under the soak's load (``--sample-web``): the
service's app (``api.create_app()``, unchanged) with a thread that every ``SOAK_SAMPLE_MS``
(default 10) ms looks at every other thread's stack, and counts, for each thread that is
serving a request (Flask's ``wsgi_app`` on its stack), the innermost frame of the service's own
code (``api/``, ``verifier/``, ``engine/``) and the innermost frame of all (where it waits or
computes). Wall-clock samples: waiting for the database, the interpreter lock or a lock of
the pool counts as much as computing, which is what a request's latency is made of.

Each process writes its counts to ``SOAK_SAMPLES_DIR/<pid>.json`` every 10 s;
:func:`summary` adds them up. gunicorn: ``bench.soak.sampler:app()``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

OWN = (f"{os.sep}api{os.sep}", f"{os.sep}verifier{os.sep}", f"{os.sep}engine{os.sep}")


def where(frame: Any) -> tuple[str, str] | None:
    """(innermost own frame, innermost frame) of a stack, None when it serves no request (no
    Flask ``wsgi_app`` frame on it: a background thread, or a thread waiting for a request)."""
    leaf = f"{_short(frame.f_code.co_filename)}:{frame.f_code.co_name}"
    own, serving = None, False
    while frame is not None:
        name = frame.f_code.co_filename
        if own is None and any(part in name for part in OWN):
            own = f"{_short(name)}:{frame.f_code.co_name}"
        serving = serving or (frame.f_code.co_name == "wsgi_app" and f"{os.sep}flask{os.sep}" in name)
        frame = frame.f_back
    return (own or "?", leaf) if serving else None


def _short(path: str) -> str:
    for marker in ("site-packages" + os.sep, *(part[1:] for part in OWN)):
        at = path.rfind(marker)
        if at >= 0:
            return path[at + (len(marker) if marker.startswith("site") else 0):]
    return os.path.basename(path)


def _sample(out: Path, every: float) -> None:
    own, leaves, pairs = Counter(), Counter(), Counter()
    me, samples, written = threading.get_ident(), 0, time.monotonic()
    while True:
        time.sleep(every)
        samples += 1
        for ident, frame in sys._current_frames().items():
            if ident == me:
                continue
            found = where(frame)
            if found is not None:
                own[found[0]] += 1
                leaves[found[1]] += 1
                pairs[" <- ".join(reversed(found))] += 1
        if time.monotonic() - written > 10:
            written = time.monotonic()
            out.write_text(json.dumps({"ticks": samples, "every_ms": every * 1000, "own": own, "leaf": leaves,
                                       "pairs": pairs}))


def app() -> Any:
    from api import create_app

    service = create_app()
    out = Path(os.environ["SOAK_SAMPLES_DIR"]) / f"{os.getpid()}.json"
    every = float(os.environ.get("SOAK_SAMPLE_MS", "10")) / 1000
    threading.Thread(target=_sample, args=(out, every), daemon=True, name="soak-sampler").start()
    return service


def summary(directory: Path, top: int = 20) -> str:
    """The processes' counts added up: the shares of request-thread samples, by own frame and by leaf."""
    totals: dict[str, Counter[str]] = {"own": Counter(), "leaf": Counter(), "pairs": Counter()}
    for path in directory.glob("*.json"):
        data = json.loads(path.read_text())
        for key in totals:
            totals[key].update(data[key])
    lines = []
    for key, title in (("own", "the service's innermost frame"), ("leaf", "the innermost frame (where it waits "
                                                                          "or computes)"), ("pairs", "both")):
        counts = totals[key]
        whole = sum(counts.values()) or 1
        lines.append(f"  request-thread samples by {title} ({whole:,} samples):")
        lines += [f"    {100 * n / whole:5.1f} %  {name}" for name, n in counts.most_common(top)]
    return "\n".join(lines)
