"""The verifier: replay a game code and a move log into a :class:`Verdict`."""

from .replay import Played, play, replay
from .verdict import ActionError, Verdict, deal_json

__all__ = ["ActionError", "Played", "Verdict", "deal_json", "play", "replay"]
