"""The soak's load: an open-loop generator (requests start on a schedule, whatever the
service's pace, and each latency counts from the moment its request was due, so a slow
service is not hidden by a generator that waits for it).

Per record (one ``POST /records`` under the bench's API key, from the player's own address
behind the trusted proxy), every third record a read by the same person (the record, the
deal's board, the daily challenge of its variant, the player's statistics, in turn), and
every ``HINT_EVERY``-th record a hint asked by a registered player on the game's deal after
its first actions.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from engine import GameCode

from .games import SoakGame, player_name

PREFIX = "/api/v1"
#: a read after every this many records, and a hint after every this many
READ_EVERY, HINT_EVERY = 3, 25
#: a request unanswered after this many seconds is an error
TIMEOUT = 30
#: requests in flight at most (the generator's threads)
THREADS = 96
#: records due and not answered yet, in seconds of the rate, at most: past that the service has
#: fallen behind, and a record due is not sent but counted as an error (``SHED``), so that a rate
#: that is not held ends on time with its errors instead of a queue that grows without end
BACKLOG_SECONDS = 5
#: the status of a record not sent because the service fell behind
SHED = -1


@dataclass
class Sample:
    at: float  # when it was due (time.monotonic())
    endpoint: str
    ms: float
    ok: bool
    status: int


@dataclass
class Samples:
    """Every request's outcome, thread-safe; the run's acknowledged records."""

    items: list[Sample] = field(default_factory=list)
    acknowledged: dict[int, tuple[str, str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, sample: Sample) -> None:
        with self.lock:
            self.items.append(sample)

    def since(self, start: float, end: float | None = None) -> list[Sample]:
        with self.lock:
            return [s for s in self.items if s.at >= start and (end is None or s.at < end)]


class Client:
    """One connection a thread (kept alive), to the service at ``host:port``."""

    local = threading.local()

    def __init__(self, port: int) -> None:
        self.port = port

    def _connection(self) -> tuple[http.client.HTTPConnection, bool]:
        """The thread's connection, and whether it is new."""
        connection = getattr(self.local, "connection", None)
        if connection is not None:
            return connection, False
        connection = self.local.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        return connection, True

    def call(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
             ) -> tuple[int, Any]:
        """(status, JSON answer or None); status 0 when the connection failed. A kept-alive
        connection the server closed meanwhile (gunicorn's keep-alive is 5 s) is opened again
        once, as HTTP clients do; a record sent twice is answered with the one stored (the
        submission is idempotent), and the checker would see a second one."""
        data = json.dumps(body).encode() if body is not None else None
        head = {"Content-Type": "application/json"} if data is not None else {}
        head.update(headers or {})
        while True:
            connection, fresh = self._connection()
            try:
                connection.request(method, PREFIX + path, data, head)
                response = connection.getresponse()
                raw = response.read()
            except (OSError, http.client.HTTPException):
                connection.close()
                self.local.connection = None
                if fresh:
                    return 0, None
                continue
            if response.getheader("Connection", "").lower() == "close":
                connection.close()
                self.local.connection = None
            try:
                return response.status, json.loads(raw) if raw else None
            except ValueError:
                return response.status, None


def address(person: int) -> str:
    """A person's own client address (behind the trusted proxy): limits are per client."""
    return f"10.{(person >> 16) & 255}.{(person >> 8) & 255}.{person & 255}"


def variant_of(code: str) -> str:
    return GameCode.from_text(code).variant


class Load:
    """The requests of the run: records, reads and hints."""

    def __init__(self, client: Client, tag: str, api_key: str, hint_tokens: list[str], samples: Samples) -> None:
        self.client, self.tag, self.key, self.hint_tokens, self.samples = client, tag, api_key, hint_tokens, samples
        self.count = 0

    def timed(self, due: float, endpoint: str, method: str, path: str, body: Any = None,
              headers: dict[str, str] | None = None, good: tuple[int, ...] = (200,)) -> tuple[int, Any]:
        status, answer = self.client.call(method, path, body, headers)
        self.samples.add(Sample(due, endpoint, 1000 * (time.monotonic() - due), status in good, status))
        return status, answer

    def record(self, index: int, game: SoakGame, due: float) -> None:
        player = player_name(self.tag, game.person)
        who = {"Authorization": f"Bearer {self.key}", "X-Forwarded-For": address(game.person)}
        status, answer = self.timed(due, "POST /records", "POST", "/records", game.body(player), who, (200, 201))
        if status in (200, 201) and isinstance(answer, dict):
            with self.samples.lock:
                self.samples.acknowledged[int(answer["id"])] = (player, game.code)
        if index % READ_EVERY == READ_EVERY - 1:
            self.read(index // READ_EVERY, game, player, answer if status in (200, 201) else None)
        if index % HINT_EVERY == HINT_EVERY - 1 and self.hint_tokens:
            self.hint(index // HINT_EVERY, game)

    def read(self, turn: int, game: SoakGame, player: str, answer: Any) -> None:
        due = time.monotonic()
        who = {"X-Forwarded-For": address(game.person)}
        kind = turn % 4
        if kind == 0 and answer:
            self.timed(due, "GET /records/{id}", "GET", f"/records/{answer['id']}", headers=who)
        elif kind == 1:
            self.timed(due, "GET /leaderboard", "GET", f"/leaderboard?variant={variant_of(game.code)}"
                       f"&code={game.code}", headers=who)
        elif kind == 2:
            self.timed(due, "GET /challenges/daily", "GET", f"/challenges/daily?variant={variant_of(game.code)}",
                       headers=who)
        else:
            # (404: the player has no visible record yet, e.g. only one under review: an answer, not a failure)
            self.timed(due, "GET /players/{name}/stats", "GET", f"/players/{quote(player)}/stats", headers=who,
                       good=(200, 404))

    def hint(self, turn: int, game: SoakGame) -> None:
        token = self.hint_tokens[turn % len(self.hint_tokens)]
        who = {"Authorization": f"Bearer {token}", "X-Forwarded-For": f"10.200.{turn % 250}.{turn // 250 % 250}"}
        prefix = " ".join(game.moves[:max(0, min(len(game.moves), 3 + turn % 12))])
        self.timed(time.monotonic(), "POST /hint", "POST", "/hint", {"code": game.code, "moves": prefix}, who,
                   (200, 202))


def drive(load: Load, games: list[SoakGame], start: int, rate: float, seconds: float,
          stop: threading.Event | None = None, on_tick: Callable[[], None] | None = None) -> int:
    """Send records ``games[start:]`` at ``rate`` a second for ``seconds`` (fewer if the games
    run out); returns the index of the next unsent game. Bounded: it stops when the time is up."""
    total = min(len(games) - start, int(rate * seconds))
    most = max(THREADS, int(rate * BACKLOG_SECONDS))
    began = time.monotonic()
    waiting = threading.Semaphore(most)
    with ThreadPoolExecutor(THREADS, thread_name_prefix="soak") as pool:
        for n in range(total):
            due = began + n / rate
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            if stop is not None and stop.is_set():
                return start + n
            if not waiting.acquire(blocking=False):
                load.samples.add(Sample(due, "POST /records", 0.0, False, SHED))
                continue
            pool.submit(_guarded, waiting, load.record, start + n, games[start + n], due)
            if on_tick is not None:
                on_tick()
    return start + total


def _guarded(waiting: threading.Semaphore, function: Callable[..., None], *args: Any) -> None:
    try:
        function(*args)
    except Exception as error:  # a bug in the generator must not end the run silently
        print(f"soak: a request failed in the generator: {error!r}", flush=True)
    finally:
        waiting.release()


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (``share`` in 0 … 1) of ``values``; 0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(-(-share * len(ordered) // 1)) - 1))]


def by_endpoint(samples: list[Sample]) -> dict[str, dict[str, float]]:
    """Per endpoint: requests, errors, p50/p95/p99 and max in ms."""
    groups: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        groups[sample.endpoint].append(sample)
    out = {}
    for endpoint, group in sorted(groups.items()):
        ms = [s.ms for s in group if s.status != SHED] or [0.0]
        out[endpoint] = {"n": len(group), "errors": sum(not s.ok for s in group),
                         "shed": sum(s.status == SHED for s in group), "p50": percentile(ms, 0.5),
                         "p95": percentile(ms, 0.95), "p99": percentile(ms, 0.99), "max": max(ms)}
    return out
