"""A small HTML tree from the standard library's parser, enough to query pages in tests:
elements with their attributes, children and text, found by tag and attributes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str | None]
    children: list[Element | str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """All the text inside, as the browser would show it (white space collapsed)."""
        return " ".join("".join(self._texts()).split())

    def _texts(self) -> Iterator[str]:
        for child in self.children:
            if isinstance(child, str):
                yield child
            else:
                yield from child._texts()

    def iter(self) -> Iterator[Element]:
        for child in self.children:
            if isinstance(child, Element):
                yield child
                yield from child.iter()

    def find_all(self, tag: str | None = None, **attrs: str | bool) -> list[Element]:
        """Descendants with ``tag`` whose attributes match: a string equals, ``True`` is present;
        ``class_`` is one of the element's classes; ``-`` in names is written ``_`` (``for`` as ``for_``)."""
        found = []
        for element in self.iter():
            if tag is not None and element.tag != tag:
                continue
            if all(self._matches(element, name, value) for name, value in attrs.items()):
                found.append(element)
        return found

    def find(self, tag: str | None = None, **attrs: str | bool) -> Element:
        found = self.find_all(tag, **attrs)
        assert found, f"no <{tag or '*'}> with {attrs}"
        return found[0]

    @staticmethod
    def _matches(element: Element, name: str, value: str | bool) -> bool:
        if name == "class_":
            return str(value) in (element.attrs.get("class") or "").split()
        attr = name.rstrip("_").replace("_", "-")  # for_ → for, data_step → data-step
        if value is True:
            return attr in element.attrs
        return element.attrs.get(attr) == value


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, dict(attrs))
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Element(tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return
        raise AssertionError(f"</{tag}> closes nothing")

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str) -> Element:
    builder = _Builder()
    builder.feed(html)
    builder.close()
    assert len(builder.stack) == 1, f"unclosed elements: {[e.tag for e in builder.stack[1:]]}"
    return builder.root
