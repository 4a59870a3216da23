"""Doctests of the engine's modules run from their source: where the compiled build is
loaded, a compiled module cannot be collected again as its ``.py`` file, so its doctests
are left to the pure-Python run (``SOLITAIRE_PURE=1``; CI runs both builds)."""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.suffix != ".py" or "engine" not in collection_path.parts:
        return None
    import engine
    from engine.build import sources

    return True if engine.BUILD == "compiled" and str(collection_path) in sources() else None


def pytest_runtest_setup(item: pytest.Item) -> None:
    """``@pytest.mark.pure_only``: a test that subclasses or patches an engine class, which
    the compiled build does not allow; it runs in the pure-Python run."""
    if item.get_closest_marker("pure_only") is not None:
        import engine

        if engine.BUILD == "compiled":
            pytest.skip("subclasses or patches an engine class: runs on the pure-Python build")
