"""What the services say happened, declared once (``blinker`` signals). A service sends an
event; the app factory (:func:`api.create_app`) connects who listens (re-evaluation on the
worker tier, …), so no service reaches back into the tasks or the routes.

Listeners run in the sender's thread, inside the app context the service runs in
(a request's, or a task's), and read the app from it.
"""

from __future__ import annotations

from blinker import Namespace

_events = Namespace()

#: a new known winning line of a deal (``code=``): a solver search stored one, or a hint was
#: handed out at a position of it; fair play judges the deal's records again
line_learned = _events.signal("line-learned")

#: a submission stored a new record (``code=``), waiting for its judgement (``pending=``) or
#: ranked on a deal not searched yet (``ranked_unsearched=``): fair play judges it (and has the
#: deal searched if it ranks high)
record_submitted = _events.signal("record-submitted")

#: webhook deliveries were written with a change that just committed (``ids=``; the sender: the
#: session): they are sent, by a task on the worker tier or (embedded) by a thread
deliveries_written = _events.signal("deliveries-written")

#: a request found the ``kind`` window of ``variant`` on ``day`` without its challenge (``variant=``,
#: ``kind=``, ``day=``): the worker tier prepares it first (embedded: here and now)
challenge_unprepared = _events.signal("challenge-unprepared")

#: a request found the winnable pool of ``variant=`` empty: the worker tier searches a few deals
#: (embedded: here and now)
pool_empty = _events.signal("pool-empty")
