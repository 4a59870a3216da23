"""Helpers for the browser tests."""

from __future__ import annotations

from engine import Game

#: a player's name with markup in it (at most 32 characters, as the API allows)
MARKUP_NAME = '<img src=x onerror="alert(1)">&'


def play_greedy(code: str, length: int) -> list[str]:
    """Up to ``length`` legal actions in canonical text: each time the one that scores
    most (the first of equals) among those reaching a position not seen before."""
    game = Game.from_code(code)
    seen = {" ".join(str(game.position).split()[:5])}
    played: list[str] = []
    while len(played) < length:
        best = None
        for action in game.legal_actions():
            game.push(action)
            where, score = " ".join(str(game.position).split()[:5]), game.position.score
            game.undo()
            if where not in seen and (best is None or score > best[0]):
                best = (score, action, where)
        if best is None:
            break
        played.append(str(game.push(best[1])))
        seen.add(best[2])
    return played
