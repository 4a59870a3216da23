"""A deterministic corpus of legal games for the benchmarks: random play with a
bias towards progress, plus undos and take-backs, for each rule set."""

from __future__ import annotations

import random
from dataclasses import dataclass

from engine import UNDO, Game, GameCode, Move
from engine.rules import RULE_SETS

#: every rule set of the registry: its variant id → (game letters, rule letter)
VARIANTS = {s.variant: (s.game.letters, s.letter) for s in RULE_SETS}


@dataclass(frozen=True)
class CorpusGame:
    code: str
    moves: list[str]  # canonical text actions


def play_random(code: GameCode, rng: random.Random, max_actions: int = 400, undo_rate: float = 0.05,
                takeback_rate: float = 0.5) -> list[str]:
    """One legal game: foundation moves first, then random moves; undos and take-backs now and then."""
    game = Game.from_code(code)
    log: list[str] = []
    recent: list[str] = []
    while len(log) < max_actions and not game.is_won:
        if game.can_undo and rng.random() < undo_rate:
            game.push(UNDO)
            log.append("U")
            continue
        legal = game.legal_actions()
        if not legal:
            break
        to_foundation = [a for a in legal if isinstance(a, Move) and a.target == "F"]
        takebacks = [a for a in legal if isinstance(a, Move) and a.source == "F"]
        if to_foundation and rng.random() < 0.8:
            action = rng.choice(to_foundation)
        elif takebacks and rng.random() < takeback_rate * 0.1:
            action = rng.choice(takebacks)
        else:
            others = [a for a in legal if str(a) not in recent] or legal
            action = rng.choice(others)
        text = str(game.push(action))
        log.append(text)
        recent = (recent + [text])[-6:]
    return log


def build_corpus(variant: str, games: int, seed: int = 2026, max_actions: int = 400) -> list[CorpusGame]:
    game_letter, rules_letter = VARIANTS[variant]
    rng = random.Random(f"{seed}-{variant}")
    corpus = []
    for _ in range(games):
        code = GameCode(game_letter, rules_letter, rng.randrange(32 ** 7))
        corpus.append(CorpusGame(str(code), play_random(code, rng, max_actions)))
    return corpus


def long_game(variant: str, actions: int, seed: int = 7) -> CorpusGame:
    """One game of exactly ``actions`` actions (more undos keep it going)."""
    game_letter, rules_letter = VARIANTS[variant]
    rng = random.Random(seed)
    while True:
        code = GameCode(game_letter, rules_letter, rng.randrange(32 ** 7))
        log = play_random(code, rng, max_actions=actions, undo_rate=0.3)
        if len(log) >= actions:
            return CorpusGame(str(code), log)
