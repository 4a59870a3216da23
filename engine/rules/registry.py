"""Every rule set the engine knows, declared once.

A :class:`RuleSet` names a rule set (code letters, names, variant id, display
name) and holds what is data rather than rule logic: the deal's layout, the
stock policy and the scoring table. Game codes, position text forms, the API's
enums, the pages' names and score wording and the benchmarks' lists of rule sets
derive from :data:`RULE_SETS`; the databases' ``variant`` columns are
:data:`VARIANT_ID_MAX` wide, which :func:`check_rule_sets` holds every variant id to.
The solver registers its part of each rule set by variant id
(:mod:`engine.solver.registry`), so the rules never import it.
``docs/adding-a-game.md`` says what a new game adds.

>>> by_variant("yukon-relaxed").code_prefix
'YU1-R'
>>> [g.name for g in GAMES.values()]
['yukon', 'forty-thieves']
>>> titles()
('Yukon', 'Yukon, classic rules', 'Yukon, relaxed rules', 'Forty Thieves')
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Final

from ..position import Position
from .base import Rules
from .forty_thieves import FortyThieves
from .yukon import Yukon

#: the longest variant id: the databases' ``variant`` columns hold this many characters
#: (``api.platform.models``), and the registry refuses a longer one when it loads
VARIANT_ID_MAX: Final = 16

# (Plain classes of read-only fields rather than dataclasses: a dataclass costs every
# process about a millisecond to define, and these are read once per process.)


class Layout:
    """The deal: cards per column and face-down cards at their bottom, dealt in
    deck order column by column; the rest of the deck(s) is the stock."""

    __slots__ = ("decks", "columns", "face_down", "foundation_suits")

    def __init__(
        self, *, decks: int, columns: tuple[int, ...], face_down: tuple[int, ...], foundation_suits: tuple[int, ...]
    ) -> None:
        self.decks: Final = decks
        self.columns: Final = columns
        self.face_down: Final = face_down
        #: the suit each foundation slot takes, left to right
        self.foundation_suits: Final = foundation_suits


class StockPolicy:
    """How the stock is gone through: ``passes`` times, ``per_draw`` cards a draw.
    The interpreter implements one pass of one card (the only policy in play)."""

    __slots__ = ("passes", "per_draw")

    def __init__(self, *, passes: int = 1, per_draw: int = 1) -> None:
        self.passes: Final = passes
        self.per_draw: Final = per_draw


class Scoring:
    """Points for a card onto a foundation, a face-down card turned up, a waste card
    onto a column and a take-back; the score never falls below 0.

    What the boards and pages say about a score derives from this table, so a new
    source of points (a field here) has to say how the two properties below change."""

    __slots__ = ("foundation", "flip", "waste_to_column", "takeback")

    def __init__(self, *, foundation: int = 10, flip: int = 0, waste_to_column: int = 0, takeback: int = 0) -> None:
        self.foundation: Final = foundation
        self.flip: Final = flip
        self.waste_to_column: Final = waste_to_column
        self.takeback: Final = takeback

    @property
    def wins_differ(self) -> bool:
        """Whether won games earn different points. A win puts every card on the foundations and
        turns every face-down card up, so only the waste cards played to a column differ from win
        to win (take-backs aside, which earned points cancel). Where wins earn alike (Yukon: 625),
        the boards show no earned column: moves and the difference from par tell the wins apart.

        >>> by_variant("yukon-classic").scoring.wins_differ, by_variant("forty-thieves").scoring.wins_differ
        (False, True)
        """
        return self.waste_to_column != 0

    @property
    def takeback_loop(self) -> int:
        """What a card taken back from a foundation and put up again adds to the app's score
        (Yukon: 10; negative where a take-back costs more than the card brought)."""
        return self.foundation + self.takeback


class GameFamily:
    """The declaration of a game (its rule sets share it): its two code letters and names.
    (Not :class:`engine.Game`, a game in play.)"""

    __slots__ = ("letters", "name", "title")

    def __init__(self, *, letters: str, name: str, title: str) -> None:
        self.letters: Final = letters  # "YU"
        self.name: Final = name  # "yukon": the ``game`` field of verdicts and records
        self.title: Final = title  # "Yukon": in rule messages and pages


class RuleSet:
    """One rule set of a game, everything about it that is not rule logic."""

    def __init__(
        self,
        *,
        game: GameFamily,
        letter: str,
        rules_name: str,
        variant: str,
        title: str,
        layout: Layout,
        stock: StockPolicy | None,
        scoring: Scoring,
        max_group: int,
        rules_factory: Callable[[RuleSet], Rules],
    ) -> None:
        self.game: Final = game
        self.letter: Final = letter  # the code's rule letter: "C"
        self.rules_name: Final = rules_name  # "classic": the ``rules`` field of verdicts
        self.variant: Final = variant  # "yukon-classic": leaderboards and records
        self.title: Final = title  # "Yukon, classic rules": pages
        self.layout: Final = layout
        self.stock: Final = stock  # None: no stock and no waste
        self.scoring: Final = scoring
        #: the most cards one move takes (1: a column's top card only)
        self.max_group: Final = max_group
        #: makes the rule logic (a :class:`Rules` subclass) for this set
        self.rules_factory: Final = rules_factory
        self.rules: Final = rules_factory(self)

    def __repr__(self) -> str:
        return f"<RuleSet {self.variant}>"

    @property
    def code_prefix(self) -> str:
        """``YU1-C``: the start of its game codes and the rules field of its positions."""
        return f"{self.game.letters}1-{self.letter}"


YUKON = GameFamily(letters="YU", name="yukon", title="Yukon")
FORTY_THIEVES = GameFamily(letters="FT", name="forty-thieves", title="Forty Thieves")

_YUKON_LAYOUT = Layout(
    decks=1, columns=(1, 6, 7, 8, 9, 10, 11), face_down=(0, 1, 2, 3, 4, 5, 6), foundation_suits=(0, 1, 2, 3)
)


def _yukon(letter: str, rules_name: str, *, relaxed: bool) -> RuleSet:
    """A Yukon rule set: classic and relaxed differ only in whether a build must alternate colours."""
    return RuleSet(
        game=YUKON,
        letter=letter,
        rules_name=rules_name,
        variant=f"yukon-{rules_name}",
        title=f"Yukon, {rules_name} rules",
        layout=_YUKON_LAYOUT,
        stock=None,
        scoring=Scoring(flip=5),
        max_group=20,
        rules_factory=partial(Yukon, alternate_colours=not relaxed),
    )


#: every rule set, in the order the API and the pages list them
RULE_SETS: tuple[RuleSet, ...] = (
    _yukon("C", "classic", relaxed=False),
    _yukon("R", "relaxed", relaxed=True),
    RuleSet(
        game=FORTY_THIEVES,
        letter="N",
        rules_name="normal",
        variant="forty-thieves",
        title="Forty Thieves",
        layout=Layout(decks=2, columns=(4,) * 10, face_down=(0,) * 10, foundation_suits=(0, 1, 2, 3, 0, 1, 2, 3)),
        stock=StockPolicy(passes=1, per_draw=1),
        scoring=Scoring(waste_to_column=5, takeback=-15),
        max_group=1,
        rules_factory=FortyThieves,
    ),
)

#: every game, by its code letters
GAMES: dict[str, GameFamily] = {s.game.letters: s.game for s in RULE_SETS}
_BY_LETTERS = {(s.game.letters, s.letter): s for s in RULE_SETS}
_BY_VARIANT = {s.variant: s for s in RULE_SETS}
_BY_PREFIX = {s.code_prefix: s for s in RULE_SETS}


def check_rule_sets(rule_sets: tuple[RuleSet, ...]) -> None:
    """Refuse declarations the rest of the service cannot hold: a variant id longer than
    :data:`VARIANT_ID_MAX` or not in lower-case letters, digits and hyphens (it is a URL path
    segment and a board key), and a repeated variant id, code prefix, game's letters or game name."""
    for s in rule_sets:
        if not 0 < len(s.variant) <= VARIANT_ID_MAX or s.variant.strip("abcdefghijklmnopqrstuvwxyz0123456789-"):
            raise ValueError(f"variant id {s.variant!r}: 1 to {VARIANT_ID_MAX} lower-case letters, digits and hyphens")
    games = list(dict.fromkeys(s.game for s in rule_sets))
    for what, values in (("variant id", [s.variant for s in rule_sets]),
                         ("code prefix", [s.code_prefix for s in rule_sets]),
                         ("game's letters", [g.letters for g in games]), ("game name", [g.name for g in games])):
        if len(set(values)) != len(values):
            raise ValueError(f"a {what} is declared twice: {values}")


check_rule_sets(RULE_SETS)
for _set in RULE_SETS:
    Position.register_rules(_set.rules)


def rule_set(game: str, letter: str) -> RuleSet:
    """The rule set of code letters ``YU`` + ``C``; ``KeyError`` if unknown."""
    return _BY_LETTERS[(game, letter)]


def by_variant(variant: str) -> RuleSet:
    """The rule set of a variant id such as ``forty-thieves``; ``KeyError`` if unknown."""
    return _BY_VARIANT[variant]


def by_prefix(prefix: str) -> RuleSet:
    """The rule set of ``YU1-C``; ``KeyError`` if unknown."""
    return _BY_PREFIX[prefix]


def rule_letters(game: str) -> dict[str, str]:
    """The rule letters a game accepts and their names: ``{"C": "classic", "R": "relaxed"}``."""
    return {s.letter: s.rules_name for s in RULE_SETS if s.game.letters == game}


def game_titles() -> tuple[str, ...]:
    """Each game's title, in the registry's order: ``('Yukon', 'Forty Thieves')``."""
    return tuple(game.title for game in GAMES.values())


def games_in_words() -> str:
    """The games' titles in an English sentence (the verifier's help): ``Yukon and Forty Thieves``."""
    names = game_titles()
    return " and ".join((", ".join(names[:-1]), names[-1])) if len(names) > 1 else names[0]


def titles() -> tuple[str, ...]:
    """Every title the pages show, each game's before its rule sets' (each once), for translation."""
    return tuple(dict.fromkeys(title for s in RULE_SETS for title in (s.game.title, s.title)))
