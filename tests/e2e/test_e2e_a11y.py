"""axe-core on every page type, in English, Korean and Finnish at phone, tablet and desktop widths:
no violation, and no colour contrast axe cannot judge (text on solid backgrounds only); and every
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
    results = page.evaluate("() => axe.run(document, {resultTypes: ['violations', 'incomplete']})")
    violations = [f"{v['id']}: {[n['target'] for n in v['nodes']][:3]}" for v in results["violations"]]
    # (a card's rank is one glyph, and in a fanned column the next card lies over the card below it: axe
    # judges neither, "too short" or "overlapped"; the cards' colours are fixed in pages.css, dark on white)
    unjudged = [f"{n['target']}: {n['any'][0]['message'] if n['any'] else ''}"
                for item in results["incomplete"] if item["id"] == "color-contrast" for n in item["nodes"]
                if "data-card" not in str(n["target"])]
    return violations, unjudged


@pytest.mark.parametrize("width", sorted(WIDTHS))
@pytest.mark.parametrize("lang", LANGS)
def test_axe_finds_nothing_on_any_page_and_every_control_is_44_px(open_page, live_server, expect, width, lang):
    for name, (path, status) in paths(live_server).items():
        page = open_page(with_lang(path, lang), width=width, height=WIDTHS[width], status=status)
        if name.startswith("record") or name in ("check-illegal", "check-syntax"):
            viewer_ready(page, expect)
            # axe takes a log item scrolled out of the log's box for one covered by what lies above it
            # (and the page to its top: the phone's sticky controls cover what scrolled beneath them)
            # (axe calls an item clipped by the log's scroll box "obscured": the box is opened to its full height,
            # so that every item's contrast is judged)
            page.evaluate("() => { document.querySelectorAll('[data-log-panel]').forEach(n => {"
                          " n.scrollTop = 0; n.style.maxHeight = 'none'; }); window.scrollTo(0, 0); }")
        violations, unjudged = axe(page)
        assert violations == [], (name, lang, width, violations)
        assert unjudged == [], (name, lang, width, unjudged)
        small = [(control, height) for control, height in page.evaluate(CONTROLS) if height < TOUCH - 0.5]
        assert small == [], (name, lang, width, small)
        page.context.close()
