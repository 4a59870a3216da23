"""Reads as the records table grows: each read's median and p95 at 100k and 1M
records (``--records`` for other sizes, e.g. ``--records 100000 1000000 10000000``),
and ``POST /records`` throughput at the largest size, with and without the board
upkeep, in the same run.

    python -m bench.scale
    python -m bench.scale --records 100000 --repeat 20     # quicker
    python -m bench.scale --records 10000000 --keep --load-only   # load now, measure later

With ``--keep`` each size's database (``bench_scale_<size>``) is kept after the run and
reused by the next ``--keep`` run when its load finished (a comment on the database says
so), so that a long load and a measurement on a quiet machine can be separate runs.

Each size is loaded into a scratch PostgreSQL database (``bench.load_records``:
real schema, real legal logs, skewed players and deals, a year of timestamps),
then the app answers in this process through Flask's test client (a warm
process: connection pooled, statements prepared), so a figure is the app's and
the database's time for the request, without HTTP. Every read runs a few times
first, then ``--repeat`` times.
"""

from __future__ import annotations

import argparse
import os
import pickle
import random
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy import make_url, text

from api import create_app
from api.boards import reads as boards
from api.platform.db import fresh_postgres_database, postgres_database_url, scratch_postgres_database
from api.records import store
from engine import GameCode
from engine.rules import RULE_SETS, by_prefix

from .load_records import build_logs, load, playout

#: the store statement as the service runs it (post_rounds swaps it for plain_insert)
real_store = store.store_statement

API = "/api/v1"
WARMUP = 3
#: this run's mark on its posts' players and logs (a kept database holds earlier runs' posts)
RUN = f"{time.time_ns() % 2**32:x}"


def targets(app: Any) -> dict[str, Any]:
    """The ids, names and cursors the reads ask about, found once per size (not timed)."""
    with app.extensions["api.platform.db"].engine.connect() as c:
        one = lambda sql, **kw: c.execute(text(sql), kw).first()
        popular = one("SELECT board FROM board_entries WHERE board LIKE 'deal:%' GROUP BY board "
                      "ORDER BY count(*) DESC LIMIT 1")[0][len("deal:"):]
        challenge = one("SELECT id FROM challenges WHERE variant = 'yukon-classic' AND ends_at < now() "
                        "ORDER BY starts_at DESC LIMIT 1")[0]
        size = one("SELECT count(*) FROM board_entries WHERE board = 'variant:yukon-classic'")[0]
        middle = one("SELECT player FROM board_entries WHERE board = 'variant:yukon-classic' "
                     "ORDER BY sort_key, received_at, record_id OFFSET :n LIMIT 1", n=size // 2)[0]
        standings = one("SELECT count(*) FROM standings WHERE variant = 'yukon-classic'")[0]
        standing = one("SELECT player FROM standings WHERE variant = 'yukon-classic' "
                       "ORDER BY sort_key, updated_at, player OFFSET :n LIMIT 1", n=standings // 2)[0]
        busy = one("SELECT player FROM player_stats ORDER BY games DESC LIMIT 1")[0]
        quiet = one("SELECT player FROM records GROUP BY player ORDER BY max(received_at) LIMIT 1")[0]
        total = one("SELECT max(id) FROM records")[0]
        mid = one("SELECT id, received_at FROM records WHERE status = 'visible' AND id >= :id ORDER BY id LIMIT 1",
                  id=total // 2)
        player_mid = one("SELECT id, received_at FROM records WHERE player = :p AND status = 'visible' "
                         "ORDER BY received_at LIMIT 1 OFFSET (SELECT count(*) / 2 FROM records WHERE player = :p)",
                         p=busy)
        code_mid = one("SELECT id, received_at FROM records WHERE code = :c AND status = 'visible' "
                       "ORDER BY received_at LIMIT 1 OFFSET (SELECT count(*) / 2 FROM records WHERE code = :c)",
                       c=popular)
    cursor = lambda row: boards.encode_cursor((row.received_at, row.id))
    return {"popular": popular, "challenge": challenge, "middle": middle, "standing": standing, "busy": busy,
            "quiet": quiet,
            "record": mid.id, "deep": cursor(mid), "player_deep": cursor(player_mid), "code_deep": cursor(code_mid)}


def reads(t: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """Each read, as the requests it makes (the home page asks for three boards)."""
    variants = [s.variant for s in RULE_SETS]
    return [
        ("home page: 3 standings boards", [f"{API}/standings?variant={v}" for v in variants]),
        ("standings, around= (middle)", [f"{API}/standings?variant=yukon-classic&around={t['standing']}"]),
        ("variant board, raw best (3 variants)", [f"{API}/leaderboard?variant={v}" for v in variants]),
        ("challenge board", [f"{API}/challenges/{t['challenge']}/board"]),
        ("popular deal's board", [f"{API}/leaderboard?variant={variant_of(t['popular'])}&code={t['popular']}"]),
        ("around= (middle of a variant board)", [f"{API}/leaderboard?variant=yukon-classic&around={t['middle']}"]),
        ("player stats (busiest player)", [f"{API}/players/{t['busy']}/stats"]),
        ("records?player= busiest, page 1", [f"{API}/records?player={t['busy']}"]),
        ("records?player= busiest, deep cursor", [f"{API}/records?player={t['busy']}&cursor={t['player_deep']}"]),
        ("records?player= all records old", [f"{API}/records?player={t['quiet']}"]),
        ("records?code= popular, page 1", [f"{API}/records?code={t['popular']}"]),
        ("records?code= popular, deep cursor", [f"{API}/records?code={t['popular']}&cursor={t['code_deep']}"]),
        ("records, page 1", [f"{API}/records"]),
        ("records, deep cursor", [f"{API}/records?cursor={t['deep']}"]),
        ("one record", [f"{API}/records/{t['record']}"]),
    ]


def variant_of(code: str) -> str:
    return by_prefix(code[:5]).variant


def backend_cpu(app: Any) -> float:
    """CPU seconds (user + system) the database's server processes for this app's database have
    used so far (from /proc: on a busy machine, CPU time holds where wall time does not)."""
    with app.extensions["api.platform.db"].engine.connect() as c:
        pids = [row[0] for row in c.execute(text(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"))]
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def timed(client: Any, app: Any, paths: list[str], repeat: int) -> tuple[float, float, float]:
    """Median and p95 wall time, in ms, of making all ``paths`` requests once, and the mean CPU
    time (this process plus the database server's) in ms."""
    def once() -> float:
        began = time.perf_counter()
        for path in paths:
            response = client.get(path)
            assert response.status_code == 200, (path, response.status_code, response.get_data(as_text=True)[:300])
        return (time.perf_counter() - began) * 1000

    for _ in range(WARMUP):
        once()
    cpu = time.process_time() + backend_cpu(app)
    samples = sorted(once() for _ in range(repeat))
    cpu = (time.process_time() + backend_cpu(app) - cpu) * 1000 / repeat
    return (statistics.median(samples), samples[min(len(samples) - 1, int(round(0.95 * (len(samples) - 1))))],
            cpu)


def plain_insert() -> Any:
    """``POST /records`` without the board upkeep: the store statement without its boards and totals."""
    return real_store(upkeep=False)


def throughput(client: Any, app: Any, bodies: list[dict[str, Any]]) -> tuple[float, float]:
    """Records stored a second (wall time), and CPU ms a record (this process plus the database's)."""
    cpu = time.process_time() + backend_cpu(app)
    began = time.perf_counter()
    unranked = 0
    for body in bodies:
        response = client.post(f"{API}/records", json=body)
        assert response.status_code == 201, response.get_data(as_text=True)[:300]
        unranked += not response.get_json()["ranked"]
    rate = len(bodies) / (time.perf_counter() - began)
    # a played-out log may happen to equal a stored one (a copy: unranked, no upkeep); keep those rare
    assert unranked <= max(1, len(bodies) // 50), f"{unranked} of {len(bodies)} posts were not ranked"
    return rate, (time.process_time() + backend_cpu(app) - cpu) * 1000 / len(bodies)


def posts(app: Any, logs: dict[str, Any], count: int, tag: str) -> list[dict[str, Any]]:
    """New submissions, each a new player's own log, played out anew (never a copy of a stored
    log: a copy is not ranked, so it would skip the boards' upkeep): half on today's challenge
    deals, half on popular deals."""
    with app.extensions["api.platform.db"].engine.connect() as c:
        today = [row[0] for row in c.execute(text(
            "SELECT code FROM challenges WHERE starts_at <= now() AND now() < ends_at"))]
    popular = [deal_logs[0].code for deal in logs.values() for deal_logs in deal[:20]]
    rng = random.Random(f"{tag}-{RUN}")
    out = []
    for n in range(count):
        code = GameCode.from_text(today[n % len(today)] if n % 2 and today else popular[n % len(popular)])
        played = playout(code, rng)
        moves = played[:rng.randrange(min(20, len(played)), len(played) + 1)] or played
        out.append({"code": str(code), "player": f"post-{RUN}-{tag}-{n}", "moves": " ".join(moves)})
    return out


def post_rounds(client: Any, app: Any, logs: dict[str, Any], count: int, rates: dict[str, list[float]],
                say: Any) -> None:
    """``POST /records`` with and without the board upkeep: a warm-up of each (untimed), then four
    rounds of ``count`` new records, the order of the two alternating from round to round."""
    real = real_store
    for round_, order in enumerate([(True, False)] + [(True, False), (False, True)] * 2):
        for upkeep in order:
            store.store_statement = real if upkeep else plain_insert
            try:
                tag = f"{round_}-{'with' if upkeep else 'without'}"
                rate, cpu = throughput(client, app, posts(app, logs, count if round_ else 20, tag))
            finally:
                store.store_statement = real
            if round_:
                rates.setdefault("with" if upkeep else "without", []).append(rate)
                rates.setdefault("cpu with" if upkeep else "cpu without", []).append(cpu)
            say(f"  POST /records {tag:>10}: {rate:6.1f} records/s, CPU {cpu:5.2f} ms a record"
                + ("" if round_ else " (warm-up)"))


def loaded_mark(size: int, seed: int, deals: int) -> str:
    return f"bench.scale: {size} records, seed {seed}, {deals} deals, loaded"


@contextmanager
def database(admin_url: str, size: int, keep: bool, mark: str) -> Iterator[tuple[str, bool]]:
    """The database of one size and whether it is already loaded: a scratch one dropped
    afterwards, or with ``keep`` the kept ``bench_scale_<size>`` (reused when its comment is
    ``mark``, made anew otherwise)."""
    name = f"bench_scale_{size}"
    if not keep:
        with scratch_postgres_database(admin_url, name) as url:
            yield url, False
        return
    url = postgres_database_url(admin_url, name)
    ready = comment_of(url) == mark
    yield (url if ready else fresh_postgres_database(admin_url, name)), ready


def comment_of(url: str) -> str | None:
    """The comment on the database of ``url``; None if it has none or does not exist."""
    try:
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT shobj_description(oid, 'pg_database') FROM pg_database "
                               "WHERE datname = current_database()").fetchone()
    except psycopg.OperationalError:
        return None
    return row[0] if row else None


def mark_loaded(url: str, mark: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"COMMENT ON DATABASE \"{make_url(url).database}\" IS '{mark}'")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default="postgresql://postgres@127.0.0.1:5432/test",
                        help="a PostgreSQL server (scratch databases are created on it and dropped)")
    parser.add_argument("--records", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--deals", type=int, default=8_000)
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--posts", type=int, default=300,
                        help="submissions per throughput round (4 rounds of each, after a warm-up)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--logs-cache", type=Path,
                        help="keep the built logs in this file and read them from it next time")
    parser.add_argument("--keep", action="store_true",
                        help="keep each size's database and reuse a fully loaded one (bench_scale_<size>)")
    parser.add_argument("--load-only", action="store_true", help="load (with --keep), measure nothing")
    args = parser.parse_args(argv)

    say = lambda line: print(line, flush=True)
    if args.logs_cache and args.logs_cache.exists():
        logs = pickle.loads(args.logs_cache.read_bytes())
    else:
        say(f"building logs for {args.deals} deals …")
        logs = build_logs(args.deals, 8, args.seed, say)
        if args.logs_cache:
            args.logs_cache.write_bytes(pickle.dumps(logs))
    results: dict[int, dict[str, tuple[float, float]]] = {}
    rates: dict[str, list[float]] = {}
    for size in args.records:
        mark = loaded_mark(size, args.seed, args.deals)
        with database(args.database_url, size, args.keep, mark) as (url, ready):
            if ready:
                say(f"reusing the kept database of {size:,} records")
            else:
                say(f"loading {size:,} records …")
                load(url, size, logs, seed=args.seed, say=say)
                if args.keep:
                    mark_loaded(url, mark)
            if args.load_only:
                continue
            app = create_app({"DATABASE_URL": url, "AUTO_MIGRATE": False, "RATELIMIT_ENABLED": False,
                              "API_KEYS_REQUIRED": False, "SOLVER_ENABLED": False, "LOG_LEVEL": "WARNING"})
            client = app.test_client()
            found = targets(app)
            # the reads get fresh connections: a server process that ran targets()' scans of the whole
            # tables answered the board counts after them 3 times slower (10M: 48 ms, not 15)
            app.extensions["api.platform.db"].engine.dispose()
            results[size] = {}
            for name, paths in reads(found):
                results[size][name] = timed(client, app, paths, args.repeat)
                median, p95, cpu = results[size][name]
                say(f"  {name:40} median {median:7.1f} ms   p95 {p95:7.1f} ms   CPU {cpu:6.1f} ms")
            if size == max(args.records):
                post_rounds(client, app, logs, args.posts, rates, say)
            app.extensions["api.platform.db"].dispose()

    if args.load_only:
        return
    sizes = args.records
    say("\nread (ms)".ljust(42) + "".join(f"{f'{s:,} median':>16}{'p95':>8}{'CPU':>8}" for s in sizes)
        + ("   ratio (median, CPU)" if len(sizes) > 1 else ""))
    for name in results[sizes[0]]:
        cells = "".join(f"{results[s][name][0]:16.1f}{results[s][name][1]:8.1f}{results[s][name][2]:8.1f}"
                        for s in sizes)
        first, last = results[sizes[0]][name], results[sizes[-1]][name]
        ratio = f"{last[0] / first[0]:8.2f}{last[2] / max(first[2], 0.01):8.2f}" if len(sizes) > 1 else ""
        say(f"{name:41}{cells}{ratio}")
    if rates:
        with_, without = statistics.median(rates["with"]), statistics.median(rates["without"])
        cpu_with, cpu_without = statistics.median(rates["cpu with"]), statistics.median(rates["cpu without"])
        say(f"\nPOST /records at {max(sizes):,}: {with_:.1f}/s with the board upkeep, {without:.1f}/s without "
            f"({100 * with_ / without:.0f} %); CPU a record {cpu_with:.2f} ms with, {cpu_without:.2f} ms without "
            f"(a CPU-bound rate of {100 * cpu_without / cpu_with:.0f} %)")


if __name__ == "__main__":
    main(sys.argv[1:])
