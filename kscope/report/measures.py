"""Sums and rates of bytes where a part may be unknown (None): what every figure with bytes uses."""

from __future__ import annotations


def add_known(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


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
