"""Helpers for the browser tests."""

from __future__ import annotations

#: a player's name with markup in it (at most 32 characters, as the API allows)
MARKUP_NAME = '<img src=x onerror="alert(1)">&'
#: a name of one 32-character word; its player's page has ranked, copied and in-review records, statistics
#: and challenge ranks
LONG_NAME = "Hubert_Blaine_Wolfeschlegelstein"
