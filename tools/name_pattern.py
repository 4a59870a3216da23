"""The contract's pattern for names (``Name``, ``Player``, ``Reason`` in openapi.yaml),
made from the server's own check (``api.schemas.Name``: white space around it trimmed,
then 1 to N printable characters) over this Python's Unicode database.

The pattern is written for both dialects it must work in: ECMA-262 with the ``u`` flag
(what JSON Schema 2020-12 and OpenAPI 3.1 validators use: JavaScript, TypeScript,
Spectral) and Python's ``re`` (openapi-core). So it uses neither ``\\s`` (the two
dialects differ on it) nor ``\\U`` (Python only): characters beyond the BMP stand in
it as themselves, and openapi.yaml writes them as YAML escapes (``\\U000110BD``).

    python -m tools.name_pattern 100     # the YAML (double-quoted) form for a length of 100
"""

from __future__ import annotations

import sys
import unicodedata

#: how a character is judged by the server: refused anywhere, or trimmed at either end
_REFUSED, _ALLOWED, _UNASSIGNED = 0, 1, 2


def _kind(char: str) -> int:
    if unicodedata.category(char) == "Cn":
        return _UNASSIGNED  # refused by the server too, but no pattern can list what is yet to be assigned
    return _ALLOWED if char.isprintable() and not char.isspace() else _REFUSED


def _ranges(refused: set[int]) -> list[tuple[int, int]]:
    """Runs of refused code points; a run goes on over unassigned ones (either way is right for them)."""
    runs: list[tuple[int, int]] = []
    start = end = None
    for point in range(0x110000):
        kind = _REFUSED if point in refused else (_UNASSIGNED if _kind(chr(point)) == _UNASSIGNED else _ALLOWED)
        if kind == _REFUSED:
            start, end = (point if start is None else start), point
        elif kind == _ALLOWED and start is not None:
            runs.append((start, end))  # type: ignore[arg-type]
            start = end = None
    if start is not None:
        runs.append((start, end))  # type: ignore[arg-type]
    return runs


def _char(point: int) -> str:
    if point > 0xFFFF:
        return chr(point)          # itself: both dialects read a literal character alike
    return f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}"


def _class(runs: list[tuple[int, int]], negate: bool = True) -> str:
    body = "".join(_char(a) if a == b else f"{_char(a)}{'-' if b > a + 1 else ''}{_char(b)}" for a, b in runs)
    return f"[{'^' if negate else ''}{body}]"


def _astral(runs: list[tuple[int, int]]) -> str:
    """A lookahead that refuses the code points of ``runs`` (all beyond the BMP). A range of them
    is "at most the last and not at most the one before the first": each class then starts in
    the BMP, so an ECMA-262 engine without the ``u`` flag (Spectral's) can still compile it,
    where a range between two such characters is out of order for it."""
    singles = "".join(_char(a) for a, b in runs if a == b)
    pieces = [f"[{singles}]"] if singles else []
    pieces += [f"(?=[\\x00-{_char(b)}])[^\\x00-{_char(a - 1)}]" for a, b in runs if a != b]
    return f"(?!{'|'.join(pieces)})" if pieces else ""


def _allowed(refused: set[int]) -> str:
    """One character the server keeps: not refused in the BMP (a class) nor beyond it (a lookahead)."""
    runs = _ranges(refused)
    bmp = [(a, min(b, 0xFFFF)) for a, b in runs if a <= 0xFFFF]
    beyond = [(max(a, 0x10000), b) for a, b in runs if b > 0xFFFF]
    return _astral(beyond) + _class(bmp)


def name_pattern(length: int) -> str:
    """The pattern of a name of 1 to ``length`` characters once white space around it is trimmed."""
    refused = {point for point in range(0x110000) if _kind(chr(point)) == _REFUSED}
    trimmed = [(p, p) for p in sorted(p for p in refused if chr(p).isspace() and unicodedata.category(chr(p)) != "Cc")]
    ends = _allowed(refused)                        # the first and last character: no space either
    middle = _allowed(refused - {0x20})             # inside: the plain space is fine
    around = _class(_merge(trimmed), negate=False)  # trimmed: white space that is not a control
    return f"^{around}*{ends}(?:(?:{middle}){{0,{length - 2}}}{ends})?{around}*$(?!\\n)"


def _merge(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for a, b in runs:
        if merged and merged[-1][1] + 1 == a:
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return merged


def whitespace_class() -> str:
    """Every character ``str.strip`` removes (Python's white space), as a character class."""
    return _class(_merge([(p, p) for p in range(0x110000) if chr(p).isspace()]), negate=False)


def yaml_string(pattern: str) -> str:
    """``pattern`` as a YAML double-quoted scalar (characters beyond the BMP as ``\\U`` escapes)."""
    out = []
    for char in pattern:
        if ord(char) > 0xFFFF:
            out.append(f"\\U{ord(char):08X}")
        elif char in '\\"':
            out.append("\\" + char)
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


if __name__ == "__main__":
    print(yaml_string(name_pattern(int(sys.argv[1]) if len(sys.argv) > 1 else 100)))
