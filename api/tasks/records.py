"""Bulk re-verification of stored records, a range of ids a task."""

from __future__ import annotations

import logging
from typing import Any

from api.records.reverify import reverify_records
from api.tasks.worker import flask_app

log = logging.getLogger(__name__)


class WrongDatabase(Exception):
    """A bulk task sent for another database than the worker's: refused, nothing done."""


def reverify_range(first_id: int, last_id: int, update: bool, database: str | None = None) -> dict[str, Any]:
    """Re-verify the records with ids ``first_id`` … ``last_id``: how many, and those that changed.
    ``database``: the sender's :meth:`api.platform.db.Database.identity`; a worker on another database
    refuses the range (:class:`WrongDatabase`) before it reads a record."""
    app = flask_app()
    with app.app_context():
        mine = app.extensions["api.platform.db"].identity()
        if database is not None and database != mine:
            raise WrongDatabase(f"the worker's database is {mine}, the command's is {database}")
        checked = 0

        def count(n: int) -> None:
            nonlocal checked
            checked += n

        with app.extensions["api.platform.db"].sessions() as session:
            changes = [[c.record_id, c.player, c.code, list(c.differences)]
                       for c in reverify_records(session, update=update, progress=count, first_id=first_id,
                                                 last_id=last_id)]
    return {"checked": checked, "changes": changes}
