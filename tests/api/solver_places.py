"""The solver queue's places as the tests read them: not a test module.

``places_taken(solver)`` counts the searches waiting or running now, as the queue itself
counts them when it hands out a place (``SOLVER_QUEUE_SIZE`` bounds them): rows of
``solver_jobs`` with a place (``slot >= 0``, not the locks of ``api.tasks.singleton``) that
have not expired.
"""

from __future__ import annotations

from sqlalchemy import func, select

from api.platform.models import SolverJob
from api.solver.queue import Solver, now


def places_taken(solver: Solver) -> int:
    """Searches waiting or running now in ``solver``'s queue."""
    with solver.database.sessions() as session:
        return session.scalar(select(func.count()).select_from(SolverJob).where(
            SolverJob.expires_at >= now(), SolverJob.slot >= 0)) or 0
