"""Fixtures for the page tests: records stored through the REST API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture
def submit(client: Any) -> Callable[..., dict[str, Any]]:
    """``submit(player, code, moves, **more)``: a record stored through ``POST /api/v1/records``
    (``more``: other fields of the body, such as ``times``)."""

    def store(player: str, code: str, moves: str | list[Any], **more: Any) -> dict[str, Any]:
        response = client.post("/api/v1/records", json={"code": code, "player": player, "moves": moves, **more})
        assert response.status_code == 201, response.get_data(as_text=True)
        return response.get_json()

    return store
