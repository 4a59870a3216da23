"""evidence on settled positions: every stored line, index key and hint position computed again

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-04

Fair play's positions are *settled* (``engine.layouts.settled_hash``: every card that can go
to a foundation put there, the foundations left out), so that a move to a foundation played
later or earlier changes no position; copies are found by the positions two lines share
(``api.fairplay.evidence.overlap``), through index keys that are a line's own positions (about one in
four, ``api.fairplay.evidence.index_keys``) instead of MinHash bands. What the migration computes again
from what is stored (no table or column changes):

- ``records.line`` of every record that has one, from its canonical log; a log that does not
  replay (none should) keeps the line it had;
- ``line_bands``: the index keys of those lines, in place of their band keys;
- ``hints.reached`` of every hint that handed out an action, from its position and action;
  a hint whose position or action does not replay keeps the value it had;
- the evidence of each stored ``copy`` flag gains ``shared_positions``, ``share_of_original``,
  ``share_of_game`` and ``overlap``, measured on the new lines against the record's
  ``copy_of`` (so that its page names the share); every key it had stays as it was.

Flags, ranks, statuses and every other value stay as they were (the worker tier judges a
deal's records again when it learns a new line of it; ``flask --app api fairplay reevaluate``
does every deal at once). The downgrade computes the former lines, band keys and hint
positions again (with the former definitions, kept here) and takes the added evidence keys
out of the flags that had a ``jaccard`` before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | Sequence[str] | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: records (or hints) read and written per round
BATCH = 500
#: the evidence keys the upgrade adds to a stored ``copy`` flag
ADDED = ("shared_positions", "share_of_original", "share_of_game", "overlap")

records = sa.table("records", sa.column("id", sa.BigInteger), sa.column("code", sa.String()),
                   sa.column("canonical", sa.Text()), sa.column("line", sa.LargeBinary()),
                   sa.column("flags", sa.JSON()), sa.column("copy_of", sa.BigInteger))
bands = sa.table("line_bands", sa.column("band", sa.BigInteger), sa.column("record_id", sa.BigInteger))
hints = sa.table("hints", sa.column("id", sa.BigInteger), sa.column("position", sa.Text()),
                 sa.column("action", sa.String()), sa.column("reached", sa.BigInteger))


def upgrade() -> None:
    from api.fairplay import evidence  # the service's own computation

    connection = op.get_bind()
    recompute_lines(connection, lambda code, actions: evidence.pack(evidence.effective_line(code, actions)),
                    lambda code, line: evidence.index_keys(evidence.unpack(line)))
    recompute_hints(connection, evidence.position_hash)
    extend_copy_flags(connection)


def downgrade() -> None:
    from engine.layouts import position_hash

    connection = op.get_bind()
    retract_copy_flags(connection)
    recompute_lines(connection, lambda code, actions: _pack(former_line(code, actions)),
                    lambda code, line: former_band_keys(code, _unpack(line)))
    recompute_hints(connection, position_hash)


# -- the computations, a batch at a time ----------------------------------------------

def recompute_lines(connection: sa.Connection, line_of: Callable[[str, list[str]], bytes],
                    keys_of: Callable[[str, bytes], Iterable[int]]) -> None:
    """Every record with a line: ``line_of(code, actions)`` and its index keys, ``keys_of(code, line)``
    in place of its rows of ``line_bands``. A log that does not replay keeps its line and keys."""
    from engine import EngineError

    after = 0
    while True:
        rows = connection.execute(sa.select(records.c.id, records.c.code, records.c.canonical)
                                  .where(records.c.id > after, records.c.line.is_not(None))
                                  .order_by(records.c.id).limit(BATCH)).all()
        if not rows:
            return
        lines, keys = [], []
        for record_id, code, canonical in rows:
            try:
                line = line_of(str(code), str(canonical).split())
            except (EngineError, ValueError):
                continue
            lines.append({"record_id": record_id, "packed": line})
            keys += [{"band": key, "record_id": record_id} for key in set(keys_of(str(code), line))]
        if lines:
            connection.execute(records.update().where(records.c.id == sa.bindparam("record_id"))
                               .values(line=sa.bindparam("packed")), lines)
            connection.execute(bands.delete().where(bands.c.record_id.in_([line["record_id"] for line in lines])))
        if keys:
            connection.execute(bands.insert(), keys)
        after = rows[-1][0]


def recompute_hints(connection: sa.Connection, hash_of: Callable[[Any], int]) -> None:
    """Every hint that handed out an action: ``reached``, the hash of the position it leads to."""
    from engine import EngineError, Game

    after = 0
    while True:
        rows = connection.execute(sa.select(hints.c.id, hints.c.position, hints.c.action)
                                  .where(hints.c.id > after, hints.c.action.is_not(None))
                                  .order_by(hints.c.id).limit(BATCH)).all()
        if not rows:
            return
        changed = []
        for hint_id, position, action in rows:
            try:
                game = Game.from_position(position)
                game.push_text(action)
            except (EngineError, ValueError):
                continue
            changed.append({"hint_id": hint_id, "value": hash_of(game.position)})
        if changed:
            connection.execute(hints.update().where(hints.c.id == sa.bindparam("hint_id"))
                               .values(reached=sa.bindparam("value")), changed)
        after = rows[-1][0]


def _copy_flags(connection: sa.Connection, change: Callable[[dict[str, Any], Any], bool]) -> None:
    """Each record with a ``copy`` flag: ``change(flag, record)`` on each, written back if one changed."""
    after = 0
    while True:
        rows = connection.execute(sa.select(records.c.id, records.c.flags, records.c.line, records.c.copy_of)
                                  .where(records.c.id > after).order_by(records.c.id).limit(BATCH)).all()
        if not rows:
            return
        for row in rows:
            flags = json.loads(row.flags) if isinstance(row.flags, str) else row.flags
            changed = [change(f, row) for f in flags or [] if isinstance(f, dict) and f.get("flag") == "copy"]
            if any(changed):  # (every copy flag changed, then written once)
                connection.execute(records.update().where(records.c.id == row.id).values(flags=flags))
        after = rows[-1][0]


def extend_copy_flags(connection: sa.Connection) -> None:
    """The shared share of each stored copy flag, measured on the new lines."""
    from api.fairplay import evidence

    def extend(flag: dict[str, Any], row: Any) -> bool:
        found = flag.get("evidence")
        original = row.copy_of if row.copy_of is not None else (found or {}).get("original")
        if not isinstance(found, dict) or "share_of_original" in found or row.line is None or original is None:
            return False
        theirs = connection.execute(sa.select(records.c.line).where(records.c.id == original)).scalar()
        if theirs is None:
            return False
        mine, other = evidence.unpack(row.line), evidence.unpack(theirs)
        measured = evidence.copy_finding(int(original), len(mine & other), len(mine), len(other)).evidence
        found.update({key: measured[key] for key in ADDED})
        return True

    _copy_flags(connection, extend)


def retract_copy_flags(connection: sa.Connection) -> None:
    """The keys :func:`extend_copy_flags` added, out of the flags it added them to (those with a ``jaccard``)."""
    def retract(flag: dict[str, Any], row: Any) -> bool:
        found = flag.get("evidence")
        if not isinstance(found, dict) or "jaccard" not in found or not set(ADDED) & set(found):
            return False
        for key in ADDED:
            found.pop(key, None)
        return True

    _copy_flags(connection, retract)


# -- the former definitions (before 0018), for the downgrade ----------------------------

def _pack(positions: Iterable[int]) -> bytes:
    import struct

    values = sorted(set(positions))
    return struct.pack(f">{len(values)}q", *values)


def _unpack(data: bytes) -> list[int]:
    import struct

    return list(struct.unpack(f">{len(data) // 8}q", data))


def former_line(code: str, actions: list[str]) -> list[int]:
    """The effective line as it was: layout hashes (foundations counted), an undo popping the path."""
    from engine import Game
    from engine.layouts import Layouts

    game = Game.from_code(code)
    layouts = Layouts(game.position)
    path: list[int] = []
    where: dict[int, int] = {layouts.hash(game.position): -1}
    done: list[str] = []
    for index, text in enumerate(actions):
        game.push_items([text], done, True)
        if len(done) == index:
            raise ValueError(f"action {index} {text!r} is not a legal action here")
        here = layouts.hash(game.position)
        if done[-1] == "U":
            if path:
                where.pop(path.pop(), None)
            continue
        seen = where.get(here)
        if seen is not None:
            for dropped in path[seen + 1:]:
                where.pop(dropped, None)
            del path[seen + 1:]
            continue
        where[here] = len(path)
        path.append(here)
    return path


def former_band_keys(code: str, positions: Iterable[int]) -> list[int]:
    """The MinHash band keys as they were: 64 bins of one-permutation hashing, 16 bands of 4."""
    from engine.layouts import hash64

    bins: list[int | None] = [None] * 64
    for value in positions:
        unsigned = value & 0xFFFFFFFFFFFFFFFF
        slot, rest = unsigned >> 58, unsigned & ((1 << 58) - 1)
        current = bins[slot]
        if current is None or rest < current:
            bins[slot] = rest
    if all(b is None for b in bins):
        return []
    filled = []
    for index in range(64):
        distance = 0
        while bins[(index + distance) % 64] is None:
            distance += 1
        filled.append((bins[(index + distance) % 64] or 0) + distance * (1 << 58))
    return [hash64(f"{code} {band} " + " ".join(map(str, filled[band * 4:(band + 1) * 4]))) for band in range(16)]
