"""Figures of the replay viewer's frames (``GET /records/{id}/frames.json?step=N``: the window
of the log page that holds step N): the first request of a window (computed with the engine,
then cached) against the next ones (from the cache: plain, gzipped, or ``304`` to
``If-None-Match``), in one warm process through the WSGI test client (no network), on a record
of 5,000 actions, at its last window (the one that costs most to reach).

    python -m bench.frames_bench              # 5,000 actions, 200 cached requests each
    python -m bench.frames_bench --actions 1000 --repeat 50 --step 10
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from api import create_app
from engine import Game

CODE = "FT1-N-AAAAAAB"


def long_log(actions: int) -> str:
    """A legal log of ``actions`` actions: a move and its undo, over and over."""
    game = Game.from_code(CODE)
    move = str(game.legal_actions()[0])
    pairs = [move, "U"] * (actions // 2)
    return " ".join(pairs + ([move] if actions % 2 else []))


def timed(call, repeat: int) -> tuple[float, object]:
    """Median milliseconds of ``repeat`` calls, and the last answer."""
    times, answer = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        answer = call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--step", type=int, default=None, help="the step asked for (default: the last)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        app = create_app({"DATABASE_URL": f"sqlite:///{Path(scratch) / 'frames.sqlite3'}", "RATELIMIT_ENABLED": False,
                          "API_KEYS_REQUIRED": False, "LOG_LEVEL": "WARNING"})
        client = app.test_client()
        record = client.post("/api/v1/records", json={"code": CODE, "player": "bench", "moves": long_log(args.actions)})
        assert record.status_code == 201, record.get_data(as_text=True)
        step = args.actions if args.step is None else args.step
        url = f"/records/{record.get_json()['id']}/frames.json?step={step}"
        cache = app.extensions["api.frames"]

        def cold():
            cache._entries.clear()  # as on a new process: computed, packed and cached
            cache.size = 0
            return client.get(url)

        cold_ms, first = timed(cold, max(3, args.repeat // 40))
        plain_ms, plain = timed(lambda: client.get(url), args.repeat)
        gzip_ms, zipped = timed(lambda: client.get(url, headers={"Accept-Encoding": "gzip"}), args.repeat)
        tag = plain.headers["ETag"]
        not_modified_ms, not_modified = timed(lambda: client.get(url, headers={"If-None-Match": tag}), args.repeat)
        assert first.status_code == plain.status_code == zipped.status_code == 200 and not_modified.status_code == 304
    print(f"the window of step {step} of a record of {args.actions} actions ({len(first.get_json()['frames'])} "
          "frames; warm process, WSGI test client, SQLite), median:")
    print(f"  first request (replay, JSON, gzip, cache): {cold_ms:8.1f} ms  {len(first.get_data()):>9,} bytes")
    print(f"  cached, plain JSON:                        {plain_ms:8.1f} ms  {len(plain.get_data()):>9,} bytes")
    print(f"  cached, gzip:                              {gzip_ms:8.1f} ms  {len(zipped.get_data()):>9,} bytes")
    print(f"  304 to If-None-Match:                      {not_modified_ms:8.1f} ms  {0:>9,} bytes")


if __name__ == "__main__":
    main()
