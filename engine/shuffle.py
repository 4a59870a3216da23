"""Version 1 of deal generation: SplitMix64, an unbiased bounded draw, Fisher–Yates.

>>> rng = SplitMix64(0)
>>> hex(rng.next())
'0xe220a8397b1dcdaf'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, TypeVar, final

if TYPE_CHECKING:  # (for the type checker and mypyc only: nothing is imported at run time)
    from mypy_extensions import i64

MASK64: Final = (1 << 64) - 1
T = TypeVar("T")


@final
class SplitMix64:
    """The 64-bit SplitMix generator; the state starts at the deal number."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & MASK64

    def next(self) -> int:
        self.state = z = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """An unbiased integer in ``[0, n)``: redraw while under ``(2^64 - n) mod n``."""
        if n <= 0:
            raise ValueError("n must be positive")
        threshold = ((1 << 64) - n) % n
        while True:
            r = self.next()
            if r >= threshold:
                return r % n


def shuffle(items: list[T], rng: SplitMix64) -> None:
    """Fisher–Yates from the end, in place: swap item ``i`` with one of ``0 … i``."""
    for i in range(len(items) - 1, 0, -1):
        j = rng.below(i + 1)
        items[i], items[j] = items[j], items[i]


def shuffle_seeded(items: list[T], seed: int) -> None:
    """``shuffle(items, SplitMix64(seed))``, in machine arithmetic where the build has it."""
    if MACHINE_ARITHMETIC:
        _shuffle_i64(items, seed)
    else:
        shuffle(items, SplitMix64(seed))


def _shuffle_i64(items: list[T], seed: int) -> None:
    """:func:`shuffle` with SplitMix64 on 64-bit machine integers (mypyc's ``i64``), which wrap
    around as the spec's unsigned arithmetic does: a value ``v`` of the spec is held as ``v - 2^64``
    when ``v ≥ 2^63``, shifts right are masked to be logical, and the draw's remainder is taken
    as the unsigned value's. Pure Python's integers do not wrap, so only compiled code uses it."""
    seed &= MASK64
    state: i64 = seed - (1 << 64) if seed >> 63 else seed
    for i in range(len(items) - 1, 0, -1):
        n: i64 = i + 1
        half: i64 = (0x7FFFFFFFFFFFFFFF % n + 1) % n  # 2^63 mod n
        threshold = 2 * half % n  # (2^64 - n) mod n
        while True:
            state += -0x61C8864680B583EB  # 0x9E3779B97F4A7C15
            z = state
            z = (z ^ ((z >> 30) & 0x3FFFFFFFF)) * -0x40A7B892E31B1A47  # 0xBF58476D1CE4E5B9
            z = (z ^ ((z >> 27) & 0x1FFFFFFFFF)) * -0x6B2FB644ECCEEE15  # 0x94D049BB133111EB
            z ^= (z >> 31) & 0x1FFFFFFFF
            if z < 0:  # at least 2^63 unsigned, so above the threshold
                j = ((z & 0x7FFFFFFFFFFFFFFF) % n + half) % n
                break
            if z >= threshold:
                j = z % n
                break
        items[i], items[j] = items[j], items[i]


def _machine_arithmetic() -> bool:
    """Whether :func:`_shuffle_i64` gives the spec's shuffles here (compiled: integers wrap)."""
    for seed in (0, 1 << 63, MASK64):
        fast, reference = list(range(104)), list(range(104))
        _shuffle_i64(fast, seed)
        shuffle(reference, SplitMix64(seed))
        if fast != reference:
            return False
    return True


#: the build's ``i64`` wraps around at 64 bits (mypyc), so :func:`shuffle_seeded` uses it
MACHINE_ARITHMETIC: Final = _machine_arithmetic()
