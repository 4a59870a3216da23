"""The verifier: replay a game code and a move log into a :class:`Verdict`."""

from .replay import replay
from .verdict import ActionError, Verdict, deal_json

__all__ = ["ActionError", "Verdict", "deal_json", "replay"]
