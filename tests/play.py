"""Legal games for tests that need real logs (pages, browser)."""

from __future__ import annotations

from engine import Game


def play_greedy(code: str, length: int) -> list[str]:
    """Up to ``length`` legal actions on ``code``'s deal, in canonical text: each time the
    action that scores most (the first of equals) among those reaching a new position."""
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
