"""Per-action times as records store them (``api.records.times``): the gaps in LEB128 varints."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from api.records.times import pack_times, unpack_times


def leb128(gaps: list[int]) -> bytes:
    """The reference: each gap in 7-bit groups, low first, the high bit set on all but the last."""
    out = bytearray()
    for gap in gaps:
        while gap >= 0x80:
            out.append(gap & 0x7F | 0x80)
            gap >>= 7
        out.append(gap)
    return bytes(out)


@given(st.lists(st.one_of(st.sampled_from([0, 1, 127, 128, 16383, 16384, 2 ** 21 - 1, 2 ** 21]),
                          st.integers(0, 2 ** 45)), max_size=60))
def test_times_pack_as_leb128_gaps_and_come_back_the_same(gaps):
    times = [sum(gaps[:index + 1]) for index in range(len(gaps))]
    packed = pack_times(times)
    assert packed == leb128(gaps)
    assert unpack_times(packed) == times


def test_a_gap_under_16_seconds_takes_at_most_two_bytes():
    assert len(pack_times([127, 255, 16_638])) == 1 + 2 + 2
    assert unpack_times(None) is None
