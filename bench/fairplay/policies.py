"""Honest players that are not the solver: the corpus the fair-play flags are measured on.

Three ways of choosing an action, each with the habits of people:

- ``random``: any legal action, foundation moves taken more often than not;
- ``greedy``: the action whose next position looks best (:func:`evaluate`), with noise;
- ``lookahead``: the best position one or two actions ahead, with a little noise.

Each person (:class:`Profile`) also mis-clicks and undoes, sometimes undoes only to play
the same action again, now and then takes back a few actions or a card from a foundation,
gives up when nothing comes of the play, and has a pace (log-normal gaps between actions,
occasional long thinks) and a client that sends per-action times, only ``elapsed_ms``, or
neither. Everything is drawn from the ``random.Random`` given, so a seed fixes the corpus.
Engine only: no service, no solver.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from engine import UNDO, Action, Game, GameCode, Move, Position

POLICIES = ("random", "greedy", "lookahead")
#: what a person's client sends with a record
CLIENTS = ("times", "elapsed", "none")
#: no game goes on longer than this many actions (people give up long before)
MAX_ACTIONS = 1000
#: a lookahead player looks two actions ahead only from this many first actions
BEAM = 4


@dataclass(frozen=True)
class Profile:
    """One honest person: how they choose, how they err, how fast they play, what their client sends."""

    policy: str
    noise: float  # scale of the Gumbel noise added to each action's value
    plies: int  # lookahead depth (1 or 2); greedy and random: 1
    misclick: float  # chance, per action, of first playing a wrong action and undoing it
    rethink: float  # chance, per action, of undoing it and playing the same action again
    retries: int  # times the person, stuck, takes back a few actions and tries another way
    back: int  # the most actions taken back at once
    foundation_takeback: float  # chance, per action, of taking a card back from a foundation
    patience: int  # actions without progress before giving up
    quit_early: float  # chance of giving up within the first few actions (a deal one does not like)
    gap_ms: float  # median gap between two actions
    spread: float  # sigma of the log-normal gaps
    client: str  # one of CLIENTS
    autofinish: bool  # the client plays the last foundation moves itself, a few ms apart


@dataclass(frozen=True)
class HonestGame:
    """One game as a client would submit it."""

    code: str
    moves: list[str]  # canonical text actions, undos included
    times: list[int] | None  # ms from the game's start, one per action
    elapsed_ms: int | None
    won: bool
    policy: str


def make_profile(rng: random.Random, policy: str | None = None) -> Profile:
    """A person drawn at random (``policy`` forced when given)."""
    policy = policy or rng.choice(POLICIES)
    fast = rng.random() < 0.06  # a few people play very fast
    client = rng.choices(CLIENTS, weights=(70, 15, 15))[0]
    return Profile(
        policy=policy,
        noise={"random": 0.0, "greedy": rng.uniform(0.5, 4.0), "lookahead": rng.uniform(0.0, 1.5)}[policy],
        plies=rng.choice((1, 2, 2)) if policy == "lookahead" else 1,
        misclick=rng.uniform(0.0, 0.04),
        rethink=rng.uniform(0.0, 0.02),
        retries=rng.choice((0, 0, 0, 1, 1, 2, 3, 5, 10)),
        back=rng.randint(3, 25),
        foundation_takeback=rng.uniform(0.0, 0.01),
        patience=rng.randint(15, 60),
        quit_early=rng.uniform(0.0, 0.15),
        gap_ms=rng.uniform(250, 500) if fast else math.exp(rng.gauss(math.log(1800), 0.45)),
        spread=rng.uniform(0.35, 0.8),
        client=client,
        autofinish=client == "times" and rng.random() < 0.3,
    )


# -- judging a position ----------------------------------------------------------

def layout(position: Position) -> str:
    """The cards' places, without score and counters: positions a person would call the same."""
    return " ".join(str(position).split()[1:5])


def evaluate(position: Position) -> float:
    """How good a position looks to a player: cards home, cards turned up, order in the columns,
    empty columns, and (Forty Thieves) a short waste."""
    builds_on = position.rules.builds_on  # the rule set's own build rule
    value = 10.0 * position.foundation_cards - 6.0 * sum(position.down)
    for column, down in zip(position.columns, position.down):
        if not column:
            value += 4.0
            continue
        for index in range(down + 1, len(column)):
            value += 1.0 if builds_on(column[index], column[index - 1]) else -1.5
    value -= 0.4 * len(position.waste) + 0.2 * len(position.stock)
    return value - _buried(position)


def _buried(position: Position) -> float:
    """Cards lying on cards that go home soon (within two ranks of their suit's lowest foundation)."""
    soon = [14] * 4
    for foundation, suit in zip(position.foundations, position.rules.spec.layout.foundation_suits):
        soon[suit] = min(soon[suit], len(foundation) + 3)
    penalty = 0.0
    for pile in (*position.columns, position.waste):
        for index, card in enumerate(pile):
            if card.rank <= soon[card.suit]:
                penalty += len(pile) - 1 - index
    return penalty


def progress(position: Position) -> int:
    """What goes up when a game gets somewhere: cards home, cards turned up."""
    return 3 * position.foundation_cards - 2 * sum(position.down)


# -- choosing an action -----------------------------------------------------------

class Player:
    """One person playing one deal: the live game, the log and what they remember."""

    def __init__(self, code: str, profile: Profile, rng: random.Random) -> None:
        self.game = Game.from_code(code)
        self.code = code
        self.profile = profile
        self.rng = rng
        self.log: list[str] = []
        self.kinds: list[str] = []  # per action: "play", "undo", "slip" (for the times)
        self.seen = {layout(self.game.position)}

    def push(self, action: Action, kind: str = "play") -> None:
        self.log.append(str(self.game.push(action)))
        self.kinds.append(kind)
        if kind != "undo":
            self.seen.add(layout(self.game.position))

    def undo(self, kind: str = "undo") -> None:
        self.push(UNDO, kind)

    def _value(self, sim: Game, action: Action, plies: int) -> tuple[float, str]:
        """The value of the position ``action`` leads to, looking ``plies`` actions ahead, and its layout."""
        sim.push(action)
        try:
            value, where = evaluate(sim.position), layout(sim.position)
            if plies > 1 and not sim.is_won:
                for reply in sim.legal_actions():
                    sim.push(reply)
                    if layout(sim.position) not in self.seen:
                        value = max(value, evaluate(sim.position) - 0.5)
                    sim.undo()
            return value, where
        finally:
            sim.undo()

    def choose(self, legal: list[Action]) -> Action | None:
        """The action this person plays next, or None when every action leads back to a known place."""
        profile, rng = self.profile, self.rng
        sim = Game(self.game.rules, self.game.position.copy())
        if profile.policy == "random":
            fresh = [a for a in legal if self._fresh(sim, a)]
            home = [a for a in fresh if isinstance(a, Move) and a.target == "F" and a.source != "F"]
            if home and rng.random() < 0.7:
                return rng.choice(home)
            return rng.choice(fresh) if fresh else None
        scored = []
        for action in legal:
            value, where = self._value(sim, action, 1)
            if where not in self.seen:
                scored.append((value, action))
        if profile.plies > 1:  # the second action only for the few that look best at first sight
            scored.sort(key=lambda pair: -pair[0])
            scored = [(self._value(sim, action, profile.plies)[0], action) for _, action in scored[:BEAM]]
        best, best_value = None, -math.inf
        for value, action in scored:
            if profile.noise:
                value -= profile.noise * math.log(-math.log(rng.random() or 1e-12))  # Gumbel
            if value > best_value:
                best, best_value = action, value
        return best

    def _fresh(self, sim: Game, action: Action) -> bool:
        sim.push(action)
        try:
            return layout(sim.position) not in self.seen
        finally:
            sim.undo()

    def play(self) -> None:
        """Play until the game is won or the person gives up."""
        profile, rng = self.profile, self.rng
        early = rng.randint(2, 15) if rng.random() < profile.quit_early else None
        best, stalled, retries = progress(self.game.position), 0, profile.retries
        while len(self.log) < MAX_ACTIONS and not self.game.is_won:
            if early is not None and len(self.log) >= early:
                return
            legal = self.game.legal_actions()
            takebacks = [a for a in legal if isinstance(a, Move) and a.source == "F"]
            if takebacks and rng.random() < profile.foundation_takeback:
                self.push(rng.choice(takebacks))
                continue
            action = self.choose(legal)
            if action is None or stalled >= profile.patience:
                if not (retries and self.game.can_undo):
                    return
                retries -= 1
                for _ in range(min(rng.randint(2, profile.back), len(self.game.stack))):
                    self.undo()
                stalled = 0
                continue
            if rng.random() < profile.misclick and len(legal) > 1:
                self.push(rng.choice([a for a in legal if a != action]), "slip")
                if self.game.is_won:  # the slip itself put the last card home
                    return
                self.undo("fix")
            self.push(action)
            if rng.random() < profile.rethink and not self.game.is_won:
                self.undo("fix")
                self.push(action)
            now = progress(self.game.position)
            best, stalled = (now, 0) if now > best else (best, stalled + 1)


# -- times ------------------------------------------------------------------------------

def clock(player: Player) -> tuple[list[int] | None, int | None]:
    """Per-action times and ``elapsed_ms`` as the person's client would send them."""
    profile, rng = player.profile, player.rng
    mu = math.log(profile.gap_ms)
    finish = _autofinish_start(player) if profile.autofinish else len(player.kinds)
    times, now = [], 0.0
    for index, kind in enumerate(player.kinds):
        if index >= finish:
            gap = rng.uniform(40, 120)  # the app plays the last cards home by itself
        elif kind == "fix":
            gap = rng.uniform(0.25, 0.7) * profile.gap_ms
        elif kind == "slip":
            gap = rng.uniform(0.3, 0.9) * profile.gap_ms
        else:
            gap = math.exp(rng.gauss(mu, profile.spread)) * (2.5 if index == 0 else 1.0)
            if rng.random() < 0.03:
                gap += rng.uniform(5_000, 60_000)  # a long think, or the phone rang
        now += max(gap, 30.0)
        times.append(int(now))
    elapsed = int(now + rng.uniform(0, 3_000))
    if profile.client == "times":
        return times, elapsed
    return None, elapsed if profile.client == "elapsed" else None


def _autofinish_start(player: Player) -> int:
    """Where the tail of foundation moves begins, if the game was won (the app's auto-finish)."""
    if not player.game.is_won:
        return len(player.log)
    start = len(player.log)
    while start > 0 and player.log[start - 1].endswith(tuple(f">F{n}" for n in range(1, 9))):
        start -= 1
    return start


def play(code: GameCode | str, profile: Profile, rng: random.Random) -> HonestGame:
    """One game of ``code``'s deal as ``profile`` plays it."""
    player = Player(str(code), profile, rng)
    player.play()
    times, elapsed = clock(player)
    return HonestGame(str(code), player.log, times, elapsed, player.game.is_won, profile.policy)
