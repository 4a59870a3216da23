"""The measurement: an honest corpus and the attacks, sent to a fresh service, and the flags counted.

Only the service's public surface is used, through the Flask test client: ``POST /players``
(one player per honest person and per attacker), ``POST /records`` with the player's token,
``GET /records/{id}``, ``POST /hint``, and ``GET /deals/{code}/solvability`` with an admin key
(made with the ``keys create --admin`` command), which runs the service's own search eagerly
(no broker) within a node budget and stores the deal's line. So the figures come from real
submissions, and the same bench measures the evidence as it is today and as it will be.
"""

from __future__ import annotations

import math
import random
import resource
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import Pool
from typing import Any

from api.fairplay.flags import ASSISTED, COPY, SOLVER_LIKE, TIMING
from engine import Game, GameCode
from engine.rules import RULE_SETS as DECLARED
from engine.rules.registry import rule_set as declared

from . import attacks
from .policies import POLICIES, HonestGame, Profile, layout, make_profile, play

API = "/api/v1"
#: the rule sets measured, as (game letters, rule letter): every rule set of the registry, in its order
RULE_SETS = tuple((s.game.letters, s.letter) for s in DECLARED)
#: flags listed even when no record carries them (any other flag seen is listed too)
KNOWN_FLAGS = tuple(kind.name for kind in (ASSISTED, COPY, SOLVER_LIKE, TIMING))
#: share of a rule set's games played on its challenge-like deals, and players on an ordinary deal
CHALLENGE_SHARE, GROUP = 0.3, (3, 8)
#: deals tried for an attack before giving up on finding a winnable one within the budget
TRIES = 40
#: deals a hint walker tries before giving up
WALKS = 3


def prefix(rules: tuple[str, str]) -> str:
    """The code prefix of a measured rule set: ``("YU", "C")`` → ``YU1-C``."""
    return declared(*rules).code_prefix


def title(rules: tuple[str, str]) -> str:
    """A measured rule set in the tables, from the registry's names: ``("YU", "C")`` → ``Yukon classic``,
    ``("FT", "N")`` → ``Forty Thieves`` (a game of one rule set goes by its title alone)."""
    rule_set = declared(*rules)
    alone = sum(s.game is rule_set.game for s in DECLARED) == 1
    return rule_set.game.title if alone else f"{rule_set.game.title} {rule_set.rules_name}"


def wilson(hits: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval (95 % by default) of a rate ``hits / total``.

    >>> [round(x, 4) for x in wilson(0, 600)]
    [0.0, 0.0064]
    """
    if total == 0:
        return 0.0, 1.0
    p = hits / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z / (1 + z * z / total) * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total))
    return (0.0 if hits == 0 else max(0.0, centre - half)), (1.0 if hits == total else min(1.0, centre + half))


# -- the corpus --------------------------------------------------------------------

@dataclass(frozen=True)
class Planned:
    """One honest game to play: the deal, the person, and whether the deal is challenge-like."""

    code: str
    person: int
    challenge: bool


def person(seed: int, index: int) -> Profile:
    """Honest person ``index``: the policies take turns, the rest is drawn from the seed."""
    return make_profile(random.Random(f"{seed}:person:{index}"), POLICIES[index % len(POLICIES)])


def plan(games: int, seed: int) -> tuple[list[Planned], int]:
    """Which person plays which deal: per rule set an equal share of the games, ``CHALLENGE_SHARE`` of them
    on one or two challenge-like deals that many play, the rest in groups of 3-8 players a deal.
    The players of a deal are consecutive people, so every policy plays every deal of 3 players or more."""
    rng = random.Random(f"{seed}:plan")
    people = max(4 * len(POLICIES), games // 8)
    planned: list[Planned] = []
    for number, (letters, rule) in enumerate(RULE_SETS):
        share = games // len(RULE_SETS) + (number < games % len(RULE_SETS))
        challenges = 2 if share >= 60 else 1
        on_challenges = min(round(share * CHALLENGE_SHARE), challenges * people)
        sizes = [on_challenges // challenges + (k < on_challenges % challenges) for k in range(challenges)]
        left = share - on_challenges
        while left > 0:
            sizes.append(min(left, rng.randint(*GROUP)))
            left -= sizes[-1]
        for index, size in enumerate(sizes):
            code = str(GameCode(letters, rule, rng.randrange(2 ** 34)))
            start = rng.randrange(people)
            planned += [Planned(code, (start + k) % people, index < challenges) for k in range(size)]
    return planned, people


def _play(job: tuple[int, Planned]) -> HonestGame:
    seed, planned = job
    return play(planned.code, person(seed, planned.person), random.Random(f"{seed}:{planned.code}:{planned.person}"))


def generate(planned: list[Planned], seed: int) -> list[HonestGame]:
    """Play the planned games, each from its own seed (so that worker processes change nothing)."""
    return [_play((seed, p)) for p in planned]


# -- the service -------------------------------------------------------------------

class Service:
    """A fresh app on ``url``, spoken to through its test client."""

    def __init__(self, url: str, nodes: int) -> None:
        from api import create_app

        self.app = create_app({
            "DATABASE_URL": url, "LOG_LEVEL": "WARNING", "CELERY_BROKER_URL": None, "SOLVER_ENABLED": True,
            "RATELIMIT_ENABLED": False, "API_KEYS_REQUIRED": False,
            # node budgets decide; the seconds only stop a search gone wrong
            "SOLVER_BUDGET_NODES": nodes, "SOLVER_HINT_NODES": nodes,
            "SOLVER_BUDGET_SECONDS": 120, "SOLVER_HINT_SECONDS": 120, "SOLVER_STALE_SECONDS": 600,
        })
        self.client = self.app.test_client()
        result = self.app.test_cli_runner().invoke(args=["keys", "create", "fairplay-bench", "--admin"])
        assert result.exit_code == 0, result.output
        self.admin = result.stdout.split()[0]
        self.names = 0

    def close(self) -> None:
        self.app.extensions["api.platform.db"].dispose()

    def _call(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = self.client.open(f"{API}{path}", method=method, headers=headers, **kwargs)
        return response.status_code, response.get_json()

    def register(self, name: str) -> str:
        status, body = self._call("POST", "/players", json={"name": name})
        assert status == 201, (name, body)
        return str(body["token"])

    def solve(self, code: str) -> dict[str, Any]:
        """The service's answer for the deal, with its line (the admin key sees it); stored by the service."""
        status, body = self._call("GET", f"/deals/{code}/solvability", self.admin)
        assert status == 200, (code, body)
        return dict(body)

    def submit(self, token: str, code: str, moves: Any, times: list[int] | None = None,
               elapsed_ms: int | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"code": code, "moves": moves}
        if times is not None:
            body["times"] = times
        if elapsed_ms is not None:
            body["elapsed_ms"] = elapsed_ms
        status, answer = self._call("POST", "/records", token, json=body)
        assert status in (200, 201), (code, answer)
        return dict(answer)

    def record(self, record_id: int) -> dict[str, Any]:
        status, body = self._call("GET", f"/records/{record_id}")
        assert status == 200, (record_id, body)
        return dict(body)

    def hint(self, token: str, code: str, log: list[str]) -> dict[str, Any]:
        status, body = self._call("POST", "/hint", token, json={"code": code, "moves": " ".join(log)})
        assert status == 200, (code, body)
        return dict(body)


def flags_of(record: dict[str, Any]) -> list[str]:
    return sorted({f["flag"] for f in record["flags"]})


def state(record: dict[str, Any]) -> dict[str, Any]:
    """What the bench keeps of a record: id, ranked, status and its flags' names."""
    return {"id": record["id"], "ranked": record["ranked"], "status": record["status"], "flags": flags_of(record),
            "evidence": {f["flag"]: f.get("evidence") for f in record["flags"]}}


# -- the attacks ---------------------------------------------------------------------

class Attacker:
    """Runs every attack of :data:`attacks.ATTACKS` on one rule set, each on a deal of its own
    (but the near-copies and copies: they copy a ranked honest record)."""

    def __init__(self, service: Service, seed: int, nodes: int, rule_set: tuple[str, str], taken: set[str],
                 honest: list[tuple[HonestGame, dict[str, Any]]]) -> None:
        self.service, self.nodes, self.rule_set, self.taken = service, nodes, rule_set, taken
        self.rng = random.Random(f"{seed}:attacks:{rule_set}")
        self.seed = seed
        self.honest = honest  # this rule set's honest games with their records at submission
        self.count = 0

    def token(self) -> str:
        self.count += 1
        return self.service.register(f"attacker-{''.join(self.rule_set)}-{self.count:03d}")

    def fresh_code(self) -> str:
        while True:
            code = str(GameCode(*self.rule_set, self.rng.randrange(2 ** 34)))
            if code not in self.taken:
                self.taken.add(code)
                return code

    def solved_deal(self) -> tuple[str, list[str]]:
        """A new deal the service solves now, and its stored line."""
        for _ in range(TRIES):
            code = self.fresh_code()
            answer = self.service.solve(code)
            if answer["status"] == "winnable":
                return code, answer["solution"].split()
        raise RuntimeError(f"no winnable deal of {self.rule_set} within the budget in {TRIES} tries")

    def unsolved_deal(self) -> tuple[str, list[str]]:
        """A new deal the service has not searched, and the line of a local run of the solver."""
        for _ in range(TRIES):
            code = self.fresh_code()
            line = attacks.offline_line(code, self.nodes)
            if line is not None:
                return code, line
        raise RuntimeError(f"no winnable deal of {self.rule_set} within the budget in {TRIES} tries")

    def target(self) -> HonestGame:
        """The ranked honest record a copier copies: won and best scored if any, else the longest."""
        ranked = [(g, r) for g, r in self.honest if r["ranked"] and len(r["canonical"].split()) >= 20]
        game, record = max(ranked, key=lambda gr: (gr[1]["won"], gr[1]["score"], len(gr[0].moves)))
        return HonestGame(game.code, record["canonical"].split(), None, None, record["won"], game.policy)

    def human_game(self, code: str) -> HonestGame:
        """A new game of ``code`` as an honest-looking player plays it (to hang other evidence on)."""
        profile = person(self.seed, 2)  # a lookahead player
        return play(code, profile, random.Random(f"{self.seed}:{code}:attacker"))

    def send(self, code: str, moves: Any, clock: tuple[list[int] | None, int | None] | None = None) -> dict[str, Any]:
        """One submission by a new account, with human-looking times unless ``clock`` is given."""
        times, elapsed_ms = clock or attacks.plausible_times(len(moves), self.rng)
        return state(self.service.submit(self.token(), code, moves, times, elapsed_ms))

    def one(self, kind: str, code: str, moves: Any, clock: tuple[list[int] | None, int | None] | None = None,
            note: str = "") -> dict[str, Any]:
        return {"attack": kind, "code": code, "records": [self.send(code, moves, clock)], "note": note}

    def run(self, kind: str) -> dict[str, Any]:  # one branch an attack, in the order of issue 21
        if kind in ("exact-copy", "copy-other-notation", "near-copy-swapped-pair", "near-copy-inserted-undo"):
            target = self.target()
            log: Any = target.moves
            if kind == "copy-other-notation":
                log = attacks.other_notation(target.moves)
            elif kind == "near-copy-swapped-pair":
                log = attacks.swapped_pair(target.code, target.moves)
                if log is None:
                    return {"attack": kind, "code": target.code, "records": [], "note": "no independent pair"}
            elif kind == "near-copy-inserted-undo":
                log = attacks.inserted_undo(target.moves)
            return self.one(kind, target.code, log, note=f"copies a ranked {'won ' if target.won else ''}record")
        if kind == "lazy-copy" or kind in attacks.COPY_SHARES:
            target = self.target()
            moves = (attacks.lazy_foundations(target.code, target.moves) if kind == "lazy-copy"
                     else attacks.copied_share(target.code, target.moves, attacks.COPY_SHARES[kind], self.nodes))
            if moves is None:
                return {"attack": kind, "code": target.code, "records": [], "note": "the solver found no finish"}
            return self.one(kind, target.code, moves, note=f"copies a ranked {'won ' if target.won else ''}record")
        if kind == "lazy-service-line":
            code, line = self.solved_deal()
            return self.one(kind, code, attacks.lazy_foundations(code, line))
        if kind.startswith("service-line"):
            code, line = self.solved_deal()
            if kind.endswith("undo-pairs"):
                line = attacks.padded_with_undos(line)
            elif kind.endswith("takeback-loops"):
                line = attacks.padded_with_takebacks(code, line)
            return self.one(kind, code, line)
        if kind == "race-10-players":
            code = self.fresh_code()
            game = self.human_game(code)
            clock = attacks.plausible_times(len(game.moves), self.rng)
            records = [self.send(code, game.moves, clock) for _ in range(10)]
            return {"attack": kind, "code": code, "records": records, "note": "sequential, one short window"}
        if kind == "second-account-hint-line":
            return self.second_account()
        if kind == "offline-solver-line":
            code, line = self.unsolved_deal()
            result = self.one(kind, code, line, note="submitted before the service searched the deal")
            self.service.solve(code)
            result["after_service_solved"] = state(self.service.record(result["records"][0]["id"]))
            return result
        if kind.startswith("times-"):
            code = self.fresh_code()
            game = self.human_game(code)
            return self.one(kind, code, game.moves, attacks.faked_times(kind, len(game.moves)),
                            note="an honest-looking game, faked clock")
        raise ValueError(f"no attack {kind!r}")

    def second_account(self) -> dict[str, Any]:
        """Player A walks a whole winning line by hints (never submitting); player B submits it.
        A deal whose hints stop (a search that ran out of budget on the way), go round in a circle or
        run past twice the solver's line is given up for another."""
        kind, stops = "second-account-hint-line", []
        for _ in range(WALKS):
            code, line = self.unsolved_deal()
            walker, game, log = self.token(), Game.from_code(code), []
            seen, most = {layout(game.position)}, 2 * len(line) + 20
            while not game.is_won and len(log) < most:
                hint = self.service.hint(walker, code, log)["hint"]
                if hint is None:
                    break
                log.append(str(game.push_text(hint)))
                if layout(game.position) in seen:  # the hints went round in a circle
                    break
                seen.add(layout(game.position))
            if game.is_won:
                return self.one(kind, code, log, note=f"{len(log)} hints walked by another token")
            stops.append(len(log))
        return {"attack": kind, "code": None, "records": [], "note": f"the hints stopped after {stops} actions"}


# -- the run ---------------------------------------------------------------------------

def run(games: int = 2000, seed: int = 2026, database_url: str | None = None, nodes: int = 50_000,
        workers: int = 1, attack_kinds: tuple[str, ...] = attacks.ATTACKS,
        attack_rule_sets: tuple[tuple[str, str], ...] = RULE_SETS,
        say: Callable[[str], None] = print) -> dict[str, Any]:
    """Measure: the report (:func:`bench.fairplay.report.summary` prints it) as a JSON-ready dict.
    ``workers`` processes play the honest games while the service searches their deals."""
    started = time.perf_counter()
    planned, people = plan(games, seed)
    with tempfile.TemporaryDirectory() as scratch, Pool(workers) as pool:
        pending = pool.map_async(_play, [(seed, p) for p in planned], chunksize=4)
        service = Service(database_url or f"sqlite:///{scratch}/fairplay.sqlite3", nodes)
        try:
            deals = sorted({p.code for p in planned})
            solvability = Counter(service.solve(code)["status"] for code in deals)
            say(f"the service searched {len(deals)} deals ({dict(solvability)}) in "
                f"{time.perf_counter() - started:.0f} s")
            honest = pending.get()
            seconds = {"play and search": time.perf_counter() - started}
            say(f"played {len(honest)} honest games by {people} people in {seconds['play and search']:.0f} s")
            measured = _measure(service, planned, honest, seed, nodes, attack_kinds, attack_rule_sets, seconds, say)
        finally:
            service.close()
    seconds["total"] = time.perf_counter() - started
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    seconds["cpu"] = sum(u.ru_utime + u.ru_stime for u in usage)  # processor time of every process
    return {"games": len(honest), "seed": seed, "nodes": nodes, "people": people, "deals": len(deals),
            "solvability": dict(solvability), "seconds": {k: round(v, 1) for k, v in seconds.items()}, **measured}


def _measure(service: Service, planned: list[Planned], honest: list[HonestGame], seed: int, nodes: int,
             attack_kinds: tuple[str, ...], attack_rule_sets: tuple[tuple[str, str], ...],
             seconds: dict[str, float], say: Callable[[str], None]) -> dict[str, Any]:
    """Register the players, submit the honest games interleaved, run the attacks, read every record back."""
    mark = time.perf_counter()
    tokens = {i: service.register(f"{person(seed, i).policy}-{i:04d}") for i in sorted({p.person for p in planned})}
    order = list(range(len(honest)))
    random.Random(f"{seed}:order").shuffle(order)  # as traffic arrives: deals and players interleaved
    submitted: list[dict[str, Any]] = [{}] * len(honest)
    for index in order:
        game = honest[index]
        submitted[index] = service.submit(tokens[planned[index].person], game.code, game.moves, game.times,
                                          game.elapsed_ms)
    seconds["submit"] = time.perf_counter() - mark
    say(f"submitted {len(honest)} honest records in {seconds['submit']:.0f} s")
    mark = time.perf_counter()
    taken = {p.code for p in planned}
    found = []
    for rule_set in attack_rule_sets:
        prefix = "{}1-{}".format(*rule_set)
        mine = [(g, r) for g, r in zip(honest, submitted) if g.code.startswith(prefix)]
        attacker = Attacker(service, seed, nodes, rule_set, taken, mine)
        found += [{"rule_set": prefix, **attacker.run(kind)} for kind in attack_kinds]
    seconds["attacks"] = time.perf_counter() - mark
    say(f"ran {len(found)} attacks in {seconds['attacks']:.0f} s")
    final = [state(service.record(r["id"])) for r in submitted]  # after anything the service re-evaluated
    for attack in found:
        attack["final"] = [state(service.record(r["id"])) for r in attack["records"]]
    return {
        "honest": [{"code": g.code, "policy": g.policy, "won": g.won, "actions": len(g.moves),
                    "undos": g.moves.count("U"), "timed": g.times is not None, "challenge": p.challenge,
                    "at_submission": state(r), "final": f}
                   for g, p, r, f in zip(honest, planned, submitted, final)],
        "attacks": found,
    }
