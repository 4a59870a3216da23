"""``replay(code, log, claimed=None) -> Verdict``: play a log action by action
and stop at the first action that is not valid notation or breaks a rule."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine import Game, GameCode, IllegalActionError, InvalidActionError
from engine.actions import item_text, log_items

from .inputs import log_and_claims
from .verdict import ActionError, Verdict, compare_claims

__all__ = ["log_and_claims", "replay"]


def replay(code: GameCode | str, log: str | Iterable[Any], claimed: dict[str, Any] | None = None) -> Verdict:
    """Replay ``log`` (text form, or a list of text actions and JSON action objects)
    on the deal of ``code``.

    Raises :class:`engine.InvalidCodeError` for a bad code,
    :class:`engine.InvalidActionError` (without an index) when ``log`` is
    neither text nor a list, and :class:`verifier.verdict.InvalidClaimsError`
    for claims that are not ``{score, moves, won}``; every problem inside the
    log is reported in the verdict instead.
    """
    game = Game.from_code(code)
    items = log_items(log)
    canonical: list[str] = []
    error = None
    try:
        game.push_items(items, canonical, text_log=isinstance(log, str))
    except InvalidActionError as exc:
        index = len(canonical)
        error = ActionError(index, item_text(items[index]), "syntax", exc.message, "syntax", str(game.position))
    except IllegalActionError as exc:
        index = len(canonical)
        error = ActionError(
            index, item_text(items[index]), exc.rule, exc.message, "rule", str(game.position), exc.key, exc.params
        )
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
