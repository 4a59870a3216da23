"""The docs state what is: the two reference pages stay short, history narration stays in
docs/CHANGELOG.md, and a doc's link to another doc's section finds that section."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

#: what reads as a lab notebook rather than a reference (the changelog is where it belongs)
NARRATION = re.compile(r"\b(first|second|third|[a-z]+th) round\b|this session|no longer|used to", re.I)


def prose(text: str) -> list[tuple[int, str]]:
    """The numbered lines of ``text`` outside fenced code blocks (a program's output is quoted
    there as it is)."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


def anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", ["performance.md", "winnability.md"])
def test_the_reference_pages_are_at_most_400_lines(page):
    assert len((DOCS / page).read_text(encoding="utf-8").splitlines()) <= 400


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md") if p.name != "CHANGELOG.md"))
def test_no_history_narration_outside_the_changelog(page):
    text = (DOCS / page).read_text(encoding="utf-8")
    found = [f"{page}:{number}: {line.strip()}" for number, line in prose(text) if NARRATION.search(line)]
    assert found == []


def test_the_changelog_is_decisions_without_figures_tables():
    text = (DOCS / "CHANGELOG.md").read_text(encoding="utf-8")
    assert not [line for _, line in prose(text) if line.startswith("|")]


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_links_to_a_section_of_another_doc_find_it(page):
    text = (DOCS / page).read_text(encoding="utf-8")
    for target, section in re.findall(r"\]\(([\w-]+\.md)#([\w-]+)\)", text):
        headings = [anchor(line.lstrip("#")) for _, line in prose((DOCS / target).read_text(encoding="utf-8"))
                    if line.startswith("#")]
        assert section in headings, f"{page} links to {target}#{section}, which has no such section"
