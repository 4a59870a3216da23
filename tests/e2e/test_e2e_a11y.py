"""axe-core on every page type, in English, Korean and Finnish at phone, tablet and desktop widths:
no violation (with axe's experimental label-content-name-mismatch too), and no colour contrast axe
cannot judge (text on solid backgrounds only, a card's rank and suit included: the next card in a fanned
column leaves them whole, even in a column of 39 cards); and every
control (header, language and variant links, menus, buttons, fields, pagers, calendar days) at
least 44 px tall. axe-core comes from the axe-playwright-python package (its axe.min.js)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_e2e_layout import LANGS, WIDTHS, paths, viewer_ready, with_lang

#: the least height of a control, CSS px (WCAG 2.5.5)
TOUCH = 44
#: the controls held to it; the replay viewer's own controls and log are checked with the viewer
CONTROLS = """() => [...document.querySelectorAll(['.site-header a', '.variant-switch a', '.pager a', '.calendar a',
                                                  'button', 'select', 'input:not([type=hidden]):not([type=range])'])]
    .filter(n => !n.closest('[data-viewer], [hidden], .visually-hidden') && n.getClientRects().length)
    .map(n => [`${n.tagName}.${n.className} ${n.textContent.trim().slice(0, 20)}`, n.getBoundingClientRect().height])"""


@cache
def axe_source() -> str:
    import axe_playwright_python

    return (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text(encoding="utf-8")


def axe(page: Any) -> tuple[list[str], list[str]]:
    """axe-core's violations on the page, and the colour contrasts it could not judge."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_source())  # evaluated by the browser's debugger: the page's CSP does not apply
    results = page.evaluate("() => axe.run(document, {rules: {'label-content-name-mismatch': {enabled: true}},"
                            " resultTypes: ['violations', 'incomplete']})")
    violations = [f"{v['id']}: {[n['target'] for n in v['nodes']][:3]}" for v in results["violations"]]
    unjudged = [f"{n['target']}: {n['any'][0]['message'] if n['any'] else ''}"
                for item in results["incomplete"] if item["id"] == "color-contrast" for n in item["nodes"]]
    return violations, unjudged


#: the log opened to its full height: axe calls an item clipped by the log's scroll box "obscured" (on a
#: wide screen the log takes the board's height beside it: the side panel is let grow); and the page to its
#: top (the phone's sticky controls cover what scrolled beneath them)
OPEN_LOG = """() => { document.querySelectorAll('[data-log-panel]').forEach(n => {
    n.scrollTop = 0; n.style.maxHeight = 'none'; n.style.flex = 'none';
    const side = n.closest('.viewer-side'); if (side) side.style.contain = 'none'; }); window.scrollTo(0, 0); }"""


def pages_to_judge(live_server: Any) -> dict[str, tuple[str, int]]:
    """Every page type, and a record at its end with a column of 39 cards (the tightest fan)."""
    timed = live_server.records["timed"]
    return {**paths(live_server), "record-long-column": (f"/records/{timed['id']}?step={timed['actions']}", 200)}


@pytest.mark.parametrize("width", sorted(WIDTHS))
@pytest.mark.parametrize("lang", LANGS)
def test_axe_finds_nothing_on_any_page_and_every_control_is_44_px(open_page, live_server, expect, width, lang):
    for name, (path, status) in pages_to_judge(live_server).items():
        page = open_page(with_lang(path, lang), width=width, height=WIDTHS[width], status=status)
        if name.startswith("record") or name in ("check-illegal", "check-syntax", "solution"):
            viewer_ready(page, expect)
            page.evaluate(OPEN_LOG)
        violations, unjudged = axe(page)
        assert violations == [], (name, lang, width, violations)
        assert unjudged == [], (name, lang, width, unjudged)
        small = [(control, height) for control, height in page.evaluate(CONTROLS) if height < TOUCH - 0.5]
        assert small == [], (name, lang, width, small)
        page.context.close()
