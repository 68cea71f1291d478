"""Compiled against eager: the verdict, by call time, and the kernels' own ratio beside it."""

from __future__ import annotations

from dataclasses import dataclass

NOISE_FLOOR = 0.1
"""A difference smaller than this never makes a verdict. Timing each sample's eager function
against itself (benchmarks/timing_stability.py --null, 10 runs each) gave median pair ratios of
0.96-1.03, and single runs whose middle half of ratios reached from 0.66 to 1.23."""


@dataclass(frozen=True)
class Speedup:
    """Compiled against eager, from calls timed in pairs (eager, compiled). The verdict rests on the
    wall time of one call, what the program pays (on CUDA synchronized after the call, what it waits
    for): kernel times do not measure the same thing in both modes (on the CPU an eager op's event
    holds the dispatcher, a compiled C++ kernel's only its loop; neither holds the compiled wrapper
    and its guards). The kernels' own ratio stays, as the explanation."""

    ratio: float
    """Median over the pairs of eager ÷ compiled call time: 1.9 is compiled 1.9× faster."""
    verdict: str
    """"faster", "slower" or "same within noise" by call time: the first two only when the middle
    half of the pairs' ratios lies wholly above 1.1 (or below 1/1.1); "busy" when other work
    competed for the CPU."""
    kernel_ratio: float | None = None
    """Median over the pairs of eager ÷ compiled kernel time (the explanation)."""
    ratio_range: tuple[float, float] | None = None
    """The middle half (25th and 75th percentiles) of the pairs' call-time ratios."""
    cpu_waiting: float | None = None
    """Share of the CPU time the timed calls' threads wanted that they spent waiting for it, another
    task having it (engine.measure.timing.Timed.waiting); None where unknown. Past BUSY, other
    work competed with the timed calls."""
    kernel_verdict: str | None = None
    """The kernels alone, by the same rule ("faster", "slower", "same within noise", "busy")."""
    kernel_ratio_range: tuple[float, float] | None = None

    def text(self) -> str:
        """"1.9× faster", "2.0× slower", "same within noise" (call time)."""
        return ratio_text(self.ratio, self.verdict)

    def kernel_text(self) -> str:
        """The kernels' own verdict, in the same words ("" when unknown)."""
        if self.kernel_ratio is None or self.kernel_verdict is None:
            return ""
        return ratio_text(self.kernel_ratio, self.kernel_verdict)


def ratio_text(ratio: float, verdict: str) -> str:
    if verdict == "faster":
        return f"{ratio:.1f}× faster"
    if verdict == "slower":
        return f"{1 / ratio:.1f}× slower" if ratio > 0 else "slower"
    if verdict == "busy":
        return "can't tell: CPU busy"
    return "same within noise"
