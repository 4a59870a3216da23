"""Helpers for the browser tests."""

from __future__ import annotations

#: a player's name with markup in it (at most 32 characters, as the API allows)
MARKUP_NAME = '<img src=x onerror="alert(1)">&'
