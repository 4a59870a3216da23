"""What a game earns: the points the boards rank by (``docs/api.md``, *Board kinds*), from a verified log.

The app's score rewards a take-back in Yukon: taking a card back from a foundation
costs nothing and putting it up again earns another 10, so a win with 30 take-back
loops scores 925 where every honest win scores 625 (``rules-and-scoring.md``). A
game's *earned* points are the app's score with every take-back cancelling the
points its card brought (−10, where Yukon counts 0 and Forty Thieves −15), and the
score's floor at 0 (which only a take-back can reach) left out. So earned points are
the cards a game put on the foundations for good, the face-down cards it turned up
(Yukon) and the waste cards it played to a column (Forty Thieves): no take-back,
loop or undo raises them, and the boards rank fewer take-backs and fewer moves after
them.

>>> earned("YU1-C-AAAAAAB", [], 645, 2)
625
"""

from __future__ import annotations

from collections.abc import Iterable

from engine import EngineError, Game, GameCode
from engine.rules import by_variant


def earned(code: str, actions: Iterable[str], score: int, takebacks: int) -> int:
    """The earned points of a verified game: ``actions`` are its canonical texts, ``score``
    and ``takebacks`` what its replay counted. Without a take-back they are the score; in a
    rule set whose every gain is positive (Yukon) the score less each take-back's card's
    points (the floor never bites there); otherwise (a take-back in Forty Thieves) the game
    is replayed, since the floor may have bitten."""
    scoring = by_variant(GameCode.from_text(code).variant).scoring
    if takebacks == 0:
        return score
    if min(scoring.foundation, scoring.flip, scoring.waste_to_column, scoring.takeback) >= 0:
        return score - (scoring.foundation + scoring.takeback) * takebacks
    return replayed(code, actions)


def estimate(code: str, score: int, takebacks: int) -> int:
    """The earned points from the counters alone, for a stored log that does not replay
    (none should): exact unless the score's floor bit in a take-back."""
    scoring = by_variant(GameCode.from_text(code).variant).scoring
    return max(0, score - (scoring.foundation + scoring.takeback) * takebacks)


def replayed(code: str, actions: Iterable[str]) -> int:
    """The earned points by replaying the log: each action in effect adds what it added to the
    score, a take-back −(a foundation card's points) instead; an undo takes its action's share
    away. :class:`ValueError` for an action the engine refuses (not a verified log)."""
    game = Game.from_code(code)
    foundation = game.rules.score_foundation
    shares: list[int] = []  # what each action still in effect adds, in order
    done: list[str] = []
    for text in actions:
        before, takebacks = game.position.score, game.position.takebacks
        played = len(done)
        game.push_items([text], done, True)
        if len(done) == played:
            raise ValueError(f"action {played} {text!r} is not a legal action here: not a verified log")
        if done[-1] == "U":
            shares.pop()
        elif game.position.takebacks > takebacks:
            shares.append(-foundation)
        else:
            shares.append(game.position.score - before)
    return sum(shares)


def of_row(code: str, canonical: str, score: int, takebacks: int) -> int:
    """The earned points of a stored record's columns: :func:`earned`, or :func:`estimate` for a
    log that does not replay."""
    try:
        return earned(code, canonical.split(), score, takebacks)
    except (EngineError, ValueError):
        return estimate(code, score, takebacks)
