"""The settings are declared once (``api.platform.config.SETTINGS``): the README's table and the
module's docstring are made from that declaration."""

from __future__ import annotations

import re
from pathlib import Path

import api.platform.config
from api.platform.config import SETTINGS, load_settings, markdown_table, rst_table

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_settings_table_is_the_generated_one():
    text = README.read_text(encoding="utf-8")
    found = re.search(r"<!-- settings-table[^>]*-->\n(.*?)\n<!-- /settings-table -->", text, re.S)
    assert found, "README.md has no settings-table markers"
    assert found.group(1) == markdown_table(), "README.md's settings table is stale: run python -m tools.settings_table"


def test_docstring_holds_the_table_and_every_setting_is_loaded(tmp_path):
    assert rst_table() in (api.platform.config.__doc__ or "")
    names = [setting.name for setting in SETTINGS]
    assert len(names) == len(set(names))
    assert set(names) <= set(load_settings(str(tmp_path), environ={}))
    for name in names:
        assert f"``{name}``" in rst_table() and f"| `{name}` |" in markdown_table()
