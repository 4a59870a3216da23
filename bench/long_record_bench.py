"""Figures of the longest record a player may store (issue 22): ``"S U"`` x 2,500 on a Forty
Thieves deal, 5,000 actions (``MAX_LOG_ACTIONS``), against gunicorn on loopback (two worker
processes of four threads, the ``gthread`` worker, pinned to CPU 0 as in bench.http_bench) on a
scratch PostgreSQL database.

For the record's page (``GET /records/{id}?step=N``), its frames (``GET …/frames.json?step=N``)
and the checker (``POST /check`` of the same log), each on its own and then eight at a time from
one client while a probe asks ``/healthz`` every 100 ms: the answer's size and time (median and
worst; a new step each time, so that each request renders, unless ``same step``), and the worst
``/healthz`` under that load. Every loop is bounded by a count of requests.

    python -m bench.long_record_bench                        # this checkout
    python -m bench.long_record_bench --against /tmp/base    # and another checkout, in the same run
    python -m bench.long_record_bench --requests 48          # requests per kind under load
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from api.platform.db import scratch_postgres_database

from . import add_service_options
from .checkouts import ROOT
from .http_bench import free_port, server

CODE = "FT1-N-AAAAAAB"
LOG = " ".join(["S U"] * 2500)
#: the Done-when of issue 22: /healthz under load, and each answer on its own
HEALTHZ_LIMIT_S, ANSWER_LIMIT_S = 1.0, 2.0


def fetch(base: str, path: str, body: bytes | None = None, content_type: str = "") -> tuple[float, int, int]:
    """Seconds, status and body bytes of one request (gzip accepted, as browsers do)."""
    request = urllib.request.Request(base + path, data=body, headers={"Accept-Encoding": "gzip"})
    if content_type:
        request.add_header("Content-Type", content_type)
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            size, status = len(response.read()), response.status
    except urllib.error.HTTPError as exc:
        size, status = len(exc.read()), exc.code
    return time.perf_counter() - started, status, size


def requests_of(record: int) -> dict[str, Callable[[int], tuple[str, bytes | None, str]]]:
    """Each kind of request, as ``n → (path, body, content type)``: the n-th asks another step."""
    check = urllib.parse.urlencode({"code": CODE, "moves": LOG}).encode()
    return {
        "page, new step": lambda n: (f"/records/{record}?step={(n * 379) % 5001}", None, ""),
        "page, same step": lambda n: (f"/records/{record}?step=2500", None, ""),
        "frames, new window": lambda n: (f"/records/{record}/frames.json?step={(n * 211) % 5001}", None, ""),
        "POST /check": lambda n: ("/check", check, "application/x-www-form-urlencoded"),
    }


def alone(base: str, make: Callable[[int], tuple[str, bytes | None, str]], count: int) -> dict[str, float]:
    """``count`` requests one after another: median and worst seconds, and the bytes of the last."""
    times, size = [], 0
    for n in range(count):
        seconds, status, size = fetch(base, *make(n))
        assert status == 200, status
        times.append(seconds)
    return {"median": statistics.median(times), "worst": max(times), "bytes": size}


def loaded(base: str, make: Callable[[int], tuple[str, bytes | None, str]], count: int,
           concurrency: int = 8) -> dict[str, float]:
    """``count`` requests ``concurrency`` at a time from one client, while a probe asks /healthz
    every 100 ms: the requests' median and worst seconds, and the probe's worst and median."""
    probes: list[float] = []
    done = threading.Event()

    def probe() -> None:
        while not done.is_set():
            probes.append(fetch(base, "/api/v1/healthz")[0])
            done.wait(0.1)

    prober = threading.Thread(target=probe)
    prober.start()
    try:
        with ThreadPoolExecutor(concurrency) as pool:
            answers = list(pool.map(lambda n: fetch(base, *make(n)), range(count)))
    finally:
        done.set()
        prober.join()
    assert all(status == 200 for _, status, _ in answers), {status for _, status, _ in answers}
    times = [seconds for seconds, _, _ in answers]
    return {"median": statistics.median(times), "worst": max(times), "healthz_worst": max(probes),
            "healthz_median": statistics.median(probes)}


def measure(root: Path, args: argparse.Namespace) -> dict[str, dict[str, dict[str, float]]]:
    with scratch_postgres_database(args.database_url, f"bench_long_{os.getpid()}") as db, \
            server(db, free_port(), args.workers, args.threads, root) as (base, _):
        body = json.dumps({"code": CODE, "player": "bench", "moves": LOG}).encode()
        request = urllib.request.Request(base + "/api/v1/records", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            record = json.loads(response.read())["id"]
        kinds = requests_of(record)
        fetch(base, f"/records/{record}")  # each process's templates compiled
        fetch(base, f"/records/{record}")
        return {name: {"alone": alone(base, make, args.alone), "loaded": loaded(base, make, args.requests)}
                for name, make in kinds.items()}


def report(root: Path, results: dict[str, dict[str, dict[str, float]]]) -> None:
    print(f"\n{root}")
    print(f"{'request':20s} {'bytes (gzip)':>12s} {'alone: median':>14s} {'worst':>7s} "
          f"{'x8: median':>11s} {'worst':>7s} {'healthz worst':>14s} {'median':>7s}")
    for name, r in results.items():
        a, x = r["alone"], r["loaded"]
        print(f"{name:20s} {a['bytes']:12,.0f} {a['median']:13.3f}s {a['worst']:6.3f}s {x['median']:10.3f}s "
              f"{x['worst']:6.3f}s {x['healthz_worst']:13.3f}s {x['healthz_median']:6.3f}s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--alone", type=int, default=10, help="requests of each kind one after another")
    parser.add_argument("--requests", type=int, default=32, help="requests of each kind, eight at a time")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    add_service_options(parser)
    parser.add_argument("--against", type=Path, default=None, help="another checkout, measured in the same run")
    args = parser.parse_args()
    print(f"a record of 5,000 actions ({CODE}, 'S U' x 2,500); gunicorn {args.workers} x {args.threads} "
          f"(gthread) on CPU 0; {args.alone} requests alone, {args.requests} eight at a time with /healthz "
          "probed every 100 ms")
    roots = [ROOT] + ([args.against.resolve()] if args.against else [])
    seen = {root: measure(root, args) for root in roots}
    for root, results in seen.items():
        report(root, results)
    ours = seen[ROOT]
    worst_healthz = max(r["loaded"]["healthz_worst"] for r in ours.values())
    worst_answer = max(r["alone"]["worst"] for r in ours.values())
    print(f"\ntargets: /healthz under {HEALTHZ_LIMIT_S:g} s with 8 at a time (worst {worst_healthz:.3f} s), "
          f"each answer alone under {ANSWER_LIMIT_S:g} s (worst {worst_answer:.3f} s)")


if __name__ == "__main__":
    main()
