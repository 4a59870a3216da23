"""Per-action times as records store them: the gaps between them in LEB128 varints
(imported by the schemas and the fair-play checks alike, so it needs neither)."""

from __future__ import annotations


def pack_times(times: list[int]) -> bytes:
    """Times (non-decreasing ms from the start) as the gaps between them in LEB128 varints:
    a gap under 16 s takes two bytes.

    >>> pack_times([300, 1000, 1000])
    b'\\xac\\x02\\xbc\\x05\\x00'
    >>> unpack_times(pack_times([300, 1000, 1000, 2 ** 40]))
    [300, 1000, 1000, 1099511627776]
    """
    out = bytearray()
    append = out.append
    previous = 0
    for time in times:
        gap, previous = time - previous, time
        if gap < 0x4000:  # (gaps under 16 s: one or two bytes, written out)
            if gap < 0x80:
                append(gap)
            else:
                append(gap & 0x7F | 0x80)
                append(gap >> 7)
            continue
        while True:
            byte, gap = gap & 0x7F, gap >> 7
            append(byte | (0x80 if gap else 0))
            if not gap:
                break
    return bytes(out)


def unpack_times(data: bytes | None) -> list[int] | None:
    if data is None:
        return None
    times, total, gap, shift = [], 0, 0, 0
    for byte in data:
        gap |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            total += gap
            times.append(total)
            gap, shift = 0, 0
    return times
