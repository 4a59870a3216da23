"""Version 1 of deal generation: SplitMix64, an unbiased bounded draw, Fisher–Yates.

>>> rng = SplitMix64(0)
>>> hex(rng.next())
'0xe220a8397b1dcdaf'
"""

from __future__ import annotations

from typing import Final, TypeVar, final

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
