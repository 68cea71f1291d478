"""Sums and rates of bytes where a part may be unknown (None): what every figure with bytes uses."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

N = TypeVar("N", int, float)


def sum_known(values: Iterable[N | None]) -> N | None:
    """The sum of `values`, or None (unknown) when any of them is: a part unknown makes the whole
    unknown, never a smaller number. An empty sum is 0."""
    total = 0
    for v in values:
        if v is None:
            return None
        total += v
    return total


def add_known(a: int | None, b: int | None) -> int | None:
    """a + b, or None when either is unknown (sum_known of two)."""
    return sum_known((a, b))


def gbps(nbytes: int | None, time_us: float | None) -> float | None:
    """Bytes over microseconds as GB/s (1 GB = 1e9 B); None when nothing was timed or the bytes
    are unknown."""
    if nbytes is None or time_us is None or time_us <= 0 or nbytes <= 0:
        return None
    return nbytes / (time_us * 1e3)


class Traffic:
    """Totals and bandwidth of something with bytes_read, bytes_written and a kernel_time_us."""

    bytes_read: int | None
    bytes_written: int | None
    kernel_time_us: float

    @property
    def bytes_total(self) -> int | None:
        return add_known(self.bytes_read, self.bytes_written)

    @property
    def achieved_gbps(self) -> float | None:
        return gbps(self.bytes_total, self.kernel_time_us)
