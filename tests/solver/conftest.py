"""Shared fixtures for the solver tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def hint_lines_in_a_temporary_cache(tmp_path_factory, monkeypatch):
    """``verifier hint`` keeps its lines under ``$XDG_CACHE_HOME``: a directory of the test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
