"""A size sweep (--sweep, key z): the target at sizes n from small to large, eager and compiled.

Plain, frozen data like the Report that carries it (Report.sweep); its JSON is in report.codec.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kscope.report.measures import Traffic
from kscope.report.roofs import Roof, judged


@dataclass(frozen=True)
class SweepMode(Traffic):
    """Eager or compiled at one size: per-call figures, as in a ModeResult."""

    launches: float
    bytes_read: int | None
    bytes_written: int | None
    kernel_time_us: float
    kernel_time_us_range: tuple[float, float] | None = None
    call_time_us: float | None = None
    call_time_us_range: tuple[float, float] | None = None
    kernels: tuple[str, ...] = ()
    """The kernels that ran, by name (compiled: inductor's kernels and library calls)."""
    working_set_bytes: int | None = None
    """The distinct bytes one call touches (ModeResult.working_set_bytes); None: unknown."""
    variants: tuple[str, ...] = ()
    """Per kernel, what kind inductor generated ("parallel", "persistent reduction"; see
    engine.inductor.variants); "" when it says nothing."""


@dataclass(frozen=True)
class SweepPoint:
    n: int
    eager: SweepMode
    compiled: SweepMode
    verdict: str
    """Compiled against eager by wall time per call, calls timed in pairs: "faster", "slower",
    "same within noise", or "busy" (other work competed for the CPU)."""
    ratio: float
    """Median over the pairs of eager ÷ compiled wall time per call."""
    graph: str = ""
    """The compiled graph(s) that ran, by compile id ("0/1")."""
    recompiled: str | None = None
    """At this size torch.compile compiled again: the guard that failed (or "static: compiled for
    this size" under --sweep-static); None when an earlier graph ran."""
    wall_s: float = 0.0


@dataclass(frozen=True)
class Sweep:
    points: tuple[SweepPoint, ...]
    sizes: tuple[int, ...]
    """The sizes asked for; `points` has those measured, in order."""
    static: bool = False
    """--sweep-static: each size compiled on its own (else one torch.compile for all sizes)."""
    stopped: str | None = None
    """Why the sweep ended before its last size (memory, time budget, an error), with where."""
    budget_s: float = 60.0
    recompiles: int = 0
    """Compiles after the first (under --sweep-static, one per size after the first)."""
    roofs: tuple[Roof, ...] = field(default=(), compare=False)
    """The Report's memory roofs (report.roofs), for the crossover's words; not in the sweep's JSON."""

    @property
    def crossover_n(self) -> int | None:
        """The smallest measured size from which compiled is faster at every larger measured size
        (verdict "faster", beyond noise); None when it is not faster at the largest. A "busy" size
        (other work competed for the CPU) claims neither: it is left out."""
        found = None
        for p in reversed(self._told()):
            if p.verdict != "faster":
                break
            found = p.n
        return found

    def _told(self) -> list[SweepPoint]:
        return [p for p in self.points if p.verdict != "busy"]

    def crossover_text(self) -> str:
        told = self._told()
        if not self.points:
            return "no size measured"
        if not told:
            return "can't tell: the CPU was busy at every size"
        n = self.crossover_n
        if n is None:
            return "compiled is never faster here" if not any(
                p.verdict == "faster" for p in told
            ) else f"compiled is not faster at the largest size (n={fmt_n(told[-1].n)})"
        if n == told[0].n:
            return "compiled is always faster here"
        return f"compiled is faster from n={fmt_n(n)} on" + self._left_a_level(n)

    def _left_a_level(self, n: int) -> str:
        """": the arrays left the 110 MB L3" where the compiled working set moved out of a level
        between the last size measured before n and n; "" where it did not, or is unknown."""
        told = self._told()
        at = next(i for i, p in enumerate(told) if p.n == n)
        before, after = told[at - 1].compiled.working_set_bytes, told[at].compiled.working_set_bytes
        was, now = judged(self.roofs, before), judged(self.roofs, after)
        if was is None or now is None or before is None or after is None or was.roof == now.roof:
            return ""
        size = f"{was.roof.capacity_bytes / 1e6:.3g} MB " if was.roof.capacity_bytes else ""
        return f": its arrays left the {size}{was.roof.level}"


def fmt_n(n: int) -> str:
    """10 -> "10", 1000 -> "1e3", 2500000 -> "2.5e6", 1024 -> "1024": short only when exact."""
    if n >= 1000:
        for digits in (0, 1, 2):
            mantissa, exponent = f"{n:.{digits}e}".split("e")
            if float(f"{mantissa}e{exponent}") == n:
                return f"{mantissa}e{int(exponent)}"
    return str(n)
