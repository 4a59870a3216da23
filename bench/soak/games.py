"""The soak's games: honest people (``bench.fairplay``'s policies: random, greedy and
lookahead players who mis-click, undo, take back and give up, each with a pace) on every
rule set of the registry, on popular deals (a share of each rule
set's games on one or two deals that many play, as a daily challenge is) and on new ones
(3 to 8 players a deal). Each game carries what its player's client sends: per-action
times (most clients), only ``elapsed_ms``, or neither.

A game costs about 20 ms of CPU to play out, so they are played before the load starts
(in ``--jobs`` processes, at low priority) and kept in a file that later runs reuse.
"""

from __future__ import annotations

import gzip
import json
import os
import random
from dataclasses import asdict, dataclass
from multiprocessing import Pool
from pathlib import Path

from bench.fairplay.measure import Planned, person, plan
from bench.fairplay.policies import play


@dataclass(frozen=True)
class SoakGame:
    """One game as its client submits it, and who played it."""

    code: str
    moves: list[str]
    times: list[int] | None
    elapsed_ms: int | None
    person: int

    def body(self, player: str) -> dict[str, object]:
        """The ``POST /records`` body of the game under the player name ``player``."""
        body: dict[str, object] = {"code": self.code, "moves": " ".join(self.moves), "player": player,
                                   "client": "soak/1.0"}
        if self.times is not None:
            body["times"] = self.times
        if self.elapsed_ms is not None:
            body["elapsed_ms"] = self.elapsed_ms
        return body


def _play(job: tuple[int, Planned]) -> SoakGame:
    seed, planned = job
    game = play(planned.code, person(seed, planned.person),
                random.Random(f"{seed}:{planned.code}:{planned.person}"))
    return SoakGame(game.code, game.moves, game.times, game.elapsed_ms, planned.person)


def _nice() -> None:
    os.nice(10)


def generate(count: int, seed: int, jobs: int = 1) -> list[SoakGame]:
    """``count`` honest games in a seeded order that mixes the deals (a popular deal's games
    spread over the run, a new deal's few players close together)."""
    planned, _ = plan(count, seed)
    random.Random(f"{seed}:order").shuffle(planned)
    work = [(seed, p) for p in planned]
    if jobs <= 1:
        return [_play(job) for job in work]
    with Pool(jobs, initializer=_nice) as pool:
        return pool.map(_play, work, chunksize=64)


def cache_path(directory: Path, count: int, seed: int) -> Path:
    return directory / f"soak-games-{seed}-{count}.jsonl.gz"


def load(count: int, seed: int, directory: Path, jobs: int = 1, say=print) -> list[SoakGame]:
    """``count`` games of ``seed``: the first of a cached file of as many or more in ``directory``,
    or played (and cached)."""
    files = directory.glob(f"soak-games-{seed}-*.jsonl.gz")
    cached = sorted((int(p.name.split("-")[3].split(".")[0]), p) for p in files)
    for size, found in cached:
        if size >= count:
            with gzip.open(found, "rt") as file:
                return [SoakGame(**json.loads(line)) for line, _ in zip(file, range(count))]
    path = cache_path(directory, count, seed)
    say(f"playing {count:,} honest games (seed {seed}, {jobs} processes; cached in {path}) ...")
    games = generate(count, seed, jobs)
    directory.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(".part")
    with gzip.open(part, "wt") as file:
        for game in games:
            file.write(json.dumps(asdict(game)) + "\n")
    part.replace(path)
    return games


def default_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "solitaire-verifier-soak"


def player_name(tag: str, person_index: int) -> str:
    """The name a game's person submits under in the run ``tag`` (unregistered: the bench's API
    key submits for it)."""
    return f"{tag}-p{person_index:05d}"
