"""``replay(code, log, claimed=None) -> Verdict``: play a log action by action
and stop at the first action that is not valid notation or breaks a rule.

:func:`play` is the one pass behind it: besides the verdict it keeps the game where the
log left it (for a hint's search, without replaying the text again) and, when asked,
the game's effective line (:class:`engine.layouts.Line`: fair play's positions)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, final

from engine import Game, GameCode, IllegalActionError, InvalidActionError, Position
from engine.actions import item_text, log_items
from engine.layouts import Line

from .inputs import log_and_claims
from .verdict import ActionError, Verdict, compare_claims

__all__ = ["Played", "log_and_claims", "play", "replay"]


@final
class Played:
    """One replay of a log: its verdict, the game where the log left it (its undo stack
    too), and its effective line when :func:`play` was asked for it (else ``None``)."""

    __slots__ = ("verdict", "game", "line")

    def __init__(self, verdict: Verdict, game: Game, line: Line | None) -> None:
        self.verdict = verdict
        self.game = game
        self.line = line

    @property
    def positions(self) -> list[int]:
        """The effective line's settled positions, in order (:meth:`engine.layouts.Line.positions`)."""
        if self.line is None:
            raise ValueError("the log was played without its line: play(..., line=True)")
        return self.line.positions()


def replay(code: GameCode | str, log: str | Iterable[Any], claimed: dict[str, Any] | None = None) -> Verdict:
    """Replay ``log`` (text form, or a list of text actions and JSON action objects)
    on the deal of ``code``.

    Raises :class:`engine.InvalidCodeError` for a bad code,
    :class:`engine.InvalidActionError` (without an index) when ``log`` is
    neither text nor a list, and :class:`verifier.verdict.InvalidClaimsError`
    for claims that are not ``{score, moves, won}``; every problem inside the
    log is reported in the verdict instead.
    """
    return play(code, log, claimed).verdict


def play(code: GameCode | str, log: str | Iterable[Any], claimed: dict[str, Any] | None = None, *,
         line: bool = False, path: list[Position] | None = None) -> Played:
    """:func:`replay`, keeping the game: with ``line``, its effective line too (kept action by
    action in the same pass); ``path``, when given, gets every position before the last (the
    start, then the position after each action but the last: what a hint's search avoids)."""
    game = Game.from_code(code)
    items = log_items(log)
    canonical: list[str] = []
    kept = Line(game) if line else None
    error = None
    try:
        _push(game, kept, items, canonical, isinstance(log, str), path)
    except InvalidActionError as exc:
        index = len(canonical)
        error = ActionError(index, item_text(items[index]), "syntax", exc.message, "syntax", str(game.position))
    except IllegalActionError as exc:
        index = len(canonical)
        error = ActionError(
            index, item_text(items[index]), exc.rule, exc.message, "rule", str(game.position), exc.key, exc.params
        )
    return Played(_verdict(game, canonical, error, claimed), game, kept)


def _push(game: Game, line: Line | None, items: list[Any], canonical: list[str], text_log: bool,
          path: list[Position] | None) -> None:
    """Play ``items`` in one pass: all at once, or one by one where each position is kept
    (a position before each item: before the last one too, which an illegal item leaves)."""
    if path is None:
        (game if line is None else line).push_items(items, canonical, text_log)
        return
    for item in items:
        path.append(game.position.copy())
        (game if line is None else line).push_items((item,), canonical, text_log)


def _verdict(game: Game, canonical: list[str], error: ActionError | None, claimed: dict[str, Any] | None) -> Verdict:
    pos = game.position
    won = game.is_won
    claims = compare_claims(claimed, {"score": pos.score, "moves": pos.moves, "won": won})
    assert game.code is not None
    return Verdict(
        code=game.code,
        legal=error is None,
        won=won,
        score=pos.score,
        moves=pos.moves,
        actions=game.actions,
        undos=game.undos,
        takebacks=pos.takebacks,
        foundation_cards=pos.foundation_cards,
        canonical=canonical,
        position=str(pos),
        error=error,
        claims=claims,
    )
