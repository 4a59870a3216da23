"""Fill a PostgreSQL database quickly with realistic records, for the scale benchmark.

    python -m bench.load_records --database-url postgresql://postgres@127.0.0.1:5432/scratch --records 1000000

- the real schema (the Alembic migrations to head);
- real legal logs from the engine: per deal, one played-out game (legal actions
  picked at random, take-backs rarely) whose prefixes are distinct logs, each
  replayed by the verifier for its figures; a few deals carry a solver's winning
  line, so that boards have won entries;
- skewed players (50,000) and deals (about 8,000 over the three variants): a few
  play a lot, most a little;
- a year of timestamps, oldest first, and one daily challenge per variant and day
  (about a tenth of the records are on the day's challenge deal);
- then every board, standing and total built in one pass (``api.boards.upkeep.rebuild_all``).

Records go in with ``COPY``; a player's same log of the same deal is drawn once.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import psycopg
from sqlalchemy import make_url

import engine
from api.boards.upkeep import rebuild_all
from api.platform.db import Database, unbounded
from engine import BY_VARIANT, Game, GameCode
from verifier import replay
from verifier.earned import earned
from verifier.solving import solve_code

#: the share of each variant's deals
SHARES = {"yukon-classic": 0.5, "yukon-relaxed": 0.25, "forty-thieves": 0.25}
#: actions of each played-out game, and the prefixes of it that are stored as logs
PLAYOUT, PREFIXES = 60, (12, 20, 28, 36, 44, 52, 60)
COLUMNS = ("player", "code", "variant", "number", "canonical", "log_hash", "won", "score", "moves", "actions",
           "undos", "takebacks", "foundation_cards", "claimed_score", "claimed_moves", "claimed_won", "elapsed_ms",
           "client", "engine_version", "rules_version", "received_at", "verified_at", "submitted_by", "status",
           "earned")


@dataclass(frozen=True)
class Log:
    """A legal log of a deal and what the verifier recomputed for it."""

    code: str
    variant: str
    number: int
    canonical: str
    log_hash: str
    won: bool
    score: int
    moves: int
    actions: int
    takebacks: int
    foundation_cards: int
    earned: int


def _log(code: GameCode, actions: list[str]) -> Log:
    verdict = replay(code, actions)
    assert verdict.legal, verdict
    text = verdict.canonical_text
    return Log(str(code), code.variant, code.number, text, hashlib.sha256(text.encode()).hexdigest(), verdict.won,
               verdict.score, verdict.moves, verdict.actions, verdict.takebacks, verdict.foundation_cards,
               earned(str(code), text.split(), verdict.score, verdict.takebacks))


def playout(code: GameCode, rng: random.Random) -> list[str]:
    game = Game.from_code(code)
    played: list[str] = []
    while len(played) < PLAYOUT:
        options = game.legal_actions()
        if not options:
            break
        forward = [o for o in options if not str(o).startswith("F")] or options  # take-backs rarely
        played.append(str(game.push(rng.choice(options if rng.random() < 0.05 else forward))))
    return played


def build_logs(deals: int, won_deals: int, seed: int, say=print) -> dict[str, list[list[Log]]]:
    """Per variant, per deal, its logs (the first ``won_deals`` deals of each variant also end in a win)."""
    rng = random.Random(seed)
    started = time.perf_counter()
    out: dict[str, list[list[Log]]] = {}
    for variant, share in SHARES.items():
        rules = BY_VARIANT[variant]
        logs: list[list[Log]] = []
        wanted_wins = won_deals
        while len(logs) < max(1, int(deals * share)):
            code = GameCode(rules.game, rules.letter, rng.randrange(2 ** 35))
            played = playout(code, rng)
            mine = [_log(code, played[:length]) for length in PREFIXES if length <= len(played)]
            if wanted_wins:
                answer = solve_code(code, budget_seconds=5, max_nodes=20000)
                if answer.status != "winnable":
                    continue
                line = list(answer.actions)
                mine += [_log(code, line[:len(line) // 2]), _log(code, line)]
                wanted_wins -= 1
            if mine:
                logs.append(mine)
        out[variant] = logs
        say(f"  logs: {variant}: {len(logs)} deals, {sum(map(len, logs))} logs "
            f"({time.perf_counter() - started:.0f} s)")
    return out


def skewed(rng: random.Random, count: int, power: float = 3.0) -> int:
    """An index in 0 … count − 1, low ones far more often (a few players and deals are popular)."""
    return min(count - 1, int(count * rng.random() ** power))


def load(url: str, records: int, logs: dict[str, list[list[Log]]], players: int = 50_000, seed: int = 1,
         end: datetime | None = None, say=print) -> dict[str, object]:
    """Migrate the database at ``url`` to head and fill it with ``records`` records; returns facts the
    benchmark reads about (the challenges, a busy and a quiet player, a popular deal)."""
    rng = random.Random(seed)
    Database(url).upgrade()
    end = end or datetime.now(UTC).replace(microsecond=0)
    start = end - timedelta(days=365)
    variants = list(SHARES)
    weights = [SHARES[v] for v in variants]
    days = [(start + timedelta(days=d)).date() for d in range(366)]
    # one daily challenge per variant and day, on a deal with a winning line (the first deals)
    challenge_of = {(v, d): logs[v][i % max(1, min(len(logs[v]), 8))] for v in variants
                    for i, d in enumerate(days)}
    libpq = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    seen: set[int] = set()
    began = time.perf_counter()
    span = (end - start).total_seconds()
    with psycopg.connect(libpq) as conn:
        with conn.cursor() as cursor:
            for (variant, day), deal_logs in challenge_of.items():
                moment = datetime(day.year, day.month, day.day, tzinfo=UTC)
                cursor.execute(
                    "INSERT INTO challenges (variant, kind, starts_at, ends_at, code, candidate, par, par_line, "
                    "prepared_at) VALUES (%s, 'daily', %s, %s, %s, 0, 0, '', %s)",
                    (variant, moment, moment + timedelta(days=1), deal_logs[0].code, moment - timedelta(hours=1)))
            with cursor.copy(f"COPY records ({', '.join(COLUMNS)}) FROM STDIN") as copy:
                made = 0
                while made < records:
                    at = start + timedelta(seconds=span * made / records)
                    variant = rng.choices(variants, weights)[0]
                    if rng.random() < 0.1:
                        deal_logs = challenge_of[(variant, at.date())]
                    else:
                        deal_logs = logs[variant][skewed(rng, len(logs[variant]), 2.0)]
                    player = skewed(rng, players)
                    which = rng.randrange(len(deal_logs))
                    log = deal_logs[which]
                    key = hash((player, log.log_hash))
                    if key in seen:
                        continue
                    seen.add(key)
                    status = "hidden" if rng.random() < 0.005 else "visible"
                    copy.write_row((
                        f"player{player:05d}", log.code, log.variant, log.number, log.canonical, log.log_hash,
                        log.won, log.score, log.moves, log.actions, 0, log.takebacks, log.foundation_cards, None, None,
                        None, rng.randrange(30_000, 900_000), "bench/1.0", engine.__version__, engine.RULES_VERSION,
                        at, at, None, status, log.earned))
                    made += 1
                    if made % 1_000_000 == 0:
                        say(f"  copied {made:,} records ({time.perf_counter() - began:.0f} s)")
        conn.commit()
    say(f"  {records:,} records copied in {time.perf_counter() - began:.0f} s")
    began = time.perf_counter()
    database = Database(url)
    with database.engine.begin() as connection, unbounded(connection):  # minutes at 1M: no statement timeout
        rebuild_all(connection)
    with psycopg.connect(libpq, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    database.dispose()
    say(f"  boards, standings and totals built, tables analysed in {time.perf_counter() - began:.0f} s")
    return {"start": start, "end": end}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.load_records", description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True, help="an empty PostgreSQL database (it is migrated)")
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--players", type=int, default=50_000)
    parser.add_argument("--deals", type=int, default=8_000, help="deals over the three variants")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    logs = build_logs(args.deals, 8, args.seed)
    load(args.database_url, args.records, logs, args.players, args.seed)


if __name__ == "__main__":
    main(sys.argv[1:])
