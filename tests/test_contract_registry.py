"""The contract's game, rules and variant enums are the engine's registry of rule sets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from engine.rules.registry import GAMES, RULE_SETS

SPEC = Path(__file__).resolve().parent.parent / "openapi.yaml"
EXPECTED = {
    "variant": [s.variant for s in RULE_SETS],
    "game": list(dict.fromkeys(g.name for g in GAMES.values())),
    "rules": list(dict.fromkeys(s.rules_name for s in RULE_SETS)),
}


def _enums(node: Any, name: str | None = None) -> list[tuple[str, list[Any]]]:
    """(property or schema name, enum) of every enum in the document, wherever it is declared."""
    found: list[tuple[str, list[Any]]] = []
    if isinstance(node, dict):
        if "enum" in node and name is not None:
            found.append((name, node["enum"]))
        for key, value in node.items():
            found += _enums(value, key)
    elif isinstance(node, list):
        for value in node:
            found += _enums(value, name)
    return found


def test_every_game_rules_and_variant_enum_lists_the_registry_in_its_order():
    enums = _enums(yaml.safe_load(SPEC.read_text(encoding="utf-8")))
    checked = {"variant": 0, "game": 0, "rules": 0}
    for name, values in enums:
        key = "variant" if name == "Variant" else name
        if key in EXPECTED:
            assert values == EXPECTED[key], f"{name}: {values} in openapi.yaml, {EXPECTED[key]} in the registry"
            checked[key] += 1
    assert all(checked.values()), f"enums not found in openapi.yaml: {checked}"
