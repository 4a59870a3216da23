"""The solver's interface: what a search asks of a state, and the settings it runs with.

A state is a game's own mutable copy of a position (small integers, make and
unmake, a canonical key); :mod:`engine.solver.search` knows states only
through :class:`SolverState`, and each rule set's state and settings are
registered by variant id in :mod:`engine.solver.registry`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

#: a card as the solver sees it: ``suit * 13 + rank - 1`` (the engine's ``Card.index``)
CardValue = int
#: a move as a state makes it: a tuple of small integers whose first is its kind (each
#: state module documents its fields); ``places`` and ``action_text`` read it
SolverMove = tuple[int, ...]
#: the weights of a state's estimate (Yukon: face-down cards, unbuilt cards, covers)
Weights = tuple[int, ...]
#: (the card moved, where it came from, where it went), for the "same card twice" pruning
Places = tuple[int, int, int]


class SolverState(Protocol):
    """What every search asks of a state."""

    def won(self) -> bool: ...
    def key(self) -> bytes:
        """The canonical key: equal for positions the rules treat alike."""
        ...

    def encode(self) -> bytes:
        """Everything :meth:`decode` needs to come back to this position."""
        ...

    def decode(self, data: bytes) -> None: ...
    def estimate(self, weights: Weights | None = None) -> int:
        """Lower is closer to a win (``weights``: None for the state's own)."""
        ...

    def auto_move(self) -> SolverMove | None:
        """A foundation move that provably loses nothing, or None."""
        ...

    def dead(self) -> bool:
        """Whether the position is provably lost."""
        ...

    def moves(self) -> list[SolverMove]:
        """Every move worth trying, best first."""
        ...

    def lean_moves(self) -> list[SolverMove]:
        """The moves a beam tries (``SearchSettings.lean_beams``): some of :meth:`moves`, best first."""
        ...

    def do(self, m: SolverMove) -> bool:
        """Make ``m``; whether it turned a card up (for :meth:`undo`)."""
        ...

    def undo(self, m: SolverMove, flip: bool) -> None:
        """Take back ``m``, the last move made and not yet taken back (``flip``: what :meth:`do` said)."""
        ...
    def places(self, m: SolverMove) -> Places: ...
    def between_columns(self, m: SolverMove) -> bool:
        """Whether ``m`` only moves a group of cards from one column onto another, such that a card
        taken back where it came from across such a move reaches (with its automatic moves) the key
        of a child of the position before both: :func:`~engine.solver.search.depth_first` then skips
        it (the cases, and why they hold for Yukon: docs/winnability.md, "A card taken back across
        one move"). False is always safe.
        """
        ...

    def action_text(self, m: SolverMove) -> str:
        """``m`` in the log's canonical text form."""
        ...


@runtime_checkable
class StagedState(SolverState, Protocol):
    """A state whose positions fall into stages no move raises (Forty Thieves: the cards
    left in the stock), for :func:`~engine.solver.search.stage_beam`."""

    def stage(self) -> int: ...
    def stage_estimate(self) -> int: ...


@dataclass(frozen=True)
class SearchSettings:
    """How :func:`engine.solver.solve` and the searches run for one rule set."""

    #: the estimate's weights (None: the state's own)
    weights: Weights | None = None
    #: the beam portfolio: (weights, part of the beam share) per sequence of beams
    styles: tuple[tuple[Weights | None, int], ...] = ((None, 1),)
    #: widths of the beam searches run before the complete search (none: no beams)
    beam_widths: tuple[int, ...] = ()
    #: the share of the budgets the beams get (None: ``engine.solver.BEAM_SHARE``)
    beam_share: float | None = None
    #: at most this many positions for the beams, whatever the share (None: no cap)
    beam_cap: int | None = None
    #: the complete search after the beams: ``"best"`` (best-first) or ``"depth"``
    complete_search: str = "best"
    #: beams try the state's ``lean_moves`` only (never a complete search: it needs every move)
    lean_beams: bool = False
    #: best-first ties: the newest position first (a dive toward a win) instead of the oldest
    newest_first: bool = False
    #: what an ``unwinnable`` answer covers: the moves searched, and the game's own reductions
    #: (beside those every game shares; :func:`engine.solver.coverage_for`)
    covered_moves: tuple[str, ...] = ()
    reductions: tuple[str, ...] = ()
