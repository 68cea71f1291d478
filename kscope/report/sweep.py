"""A size sweep (--sweep, key z): the target at sizes n from small to large, eager and compiled.

Plain, frozen data like the Report that carries it (Report.sweep), with its JSON. Nothing here
imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kscope.report.model import Traffic


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
    variants: tuple[str, ...] = ()
    """Per kernel, what kind inductor generated ("parallel", "persistent reduction"; see
    engine.variants); "" when it says nothing."""


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
        return f"compiled is faster from n={fmt_n(n)} on"


def fmt_n(n: int) -> str:
    """10 -> "10", 1000 -> "1e3", 2500000 -> "2.5e6", 1024 -> "1024": short only when exact."""
    if n >= 1000:
        for digits in (0, 1, 2):
            mantissa, exponent = f"{n:.{digits}e}".split("e")
            if float(f"{mantissa}e{exponent}") == n:
                return f"{mantissa}e{int(exponent)}"
    return str(n)


def per_element(nbytes: int | None, n: int) -> str:
    """Bytes per element of n, as a sweep's table says it ("20"; "?" when unknown)."""
    return "?" if nbytes is None else f"{nbytes / n:.3g}"


def sweep_to_dict(s: Sweep) -> dict[str, Any]:
    return {
        "points": [
            {
                "n": p.n,
                "eager": _mode_to_dict(p.eager, compiled=False),
                "compiled": _mode_to_dict(p.compiled, compiled=True),
                "verdict": p.verdict,
                "ratio": round(p.ratio, 3),
                "compares": "wall time per call, eager and compiled calls timed in pairs: median of eager ÷ compiled",
                "graph": p.graph,
                "recompiled": p.recompiled,
                "wall_s": round(p.wall_s, 3),
            }
            for p in s.points
        ],
        "sizes": list(s.sizes),
        "static": s.static,
        "crossover_n": s.crossover_n,
        "crossover": s.crossover_text(),
        "recompiles": s.recompiles,
        "stopped": s.stopped,
        "budget_s": s.budget_s,
    }


def sweep_from_dict(d: dict[str, Any] | None) -> Sweep | None:
    if d is None:
        return None
    return Sweep(
        points=tuple(
            SweepPoint(
                n=p["n"],
                eager=_mode_from_dict(p["eager"]),
                compiled=_mode_from_dict(p["compiled"]),
                verdict=p["verdict"],
                ratio=p["ratio"],
                graph=p.get("graph", ""),
                recompiled=p.get("recompiled"),
                wall_s=p.get("wall_s", 0.0),
            )
            for p in d.get("points", ())
        ),
        sizes=tuple(d.get("sizes", ())),
        static=d.get("static", False),
        stopped=d.get("stopped"),
        budget_s=d.get("budget_s", 60.0),
        recompiles=d.get("recompiles", 0),
    )


def _mode_to_dict(m: SweepMode, *, compiled: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "launches": int(m.launches) if float(m.launches).is_integer() else round(m.launches, 3),
        "bytes_read": m.bytes_read,
        "bytes_written": m.bytes_written,
        "kernel_time_us": round(m.kernel_time_us, 3),
        "kernel_time_us_range": _pair(m.kernel_time_us_range),
        "call_time_us": None if m.call_time_us is None else round(m.call_time_us, 3),
        "call_time_us_range": _pair(m.call_time_us_range),
        "achieved_gbps": None if m.achieved_gbps is None else round(m.achieved_gbps, 3),
    }
    out["kernels"] = list(m.kernels)
    if compiled:
        out["variants"] = list(m.variants)
    return out


def _mode_from_dict(d: dict[str, Any]) -> SweepMode:
    return SweepMode(
        launches=d["launches"],
        bytes_read=d["bytes_read"],
        bytes_written=d["bytes_written"],
        kernel_time_us=d["kernel_time_us"],
        kernel_time_us_range=_tuple(d.get("kernel_time_us_range")),
        call_time_us=d.get("call_time_us"),
        call_time_us_range=_tuple(d.get("call_time_us_range")),
        kernels=tuple(d.get("kernels", ())),
        variants=tuple(d.get("variants", ())),
    )


def _pair(p: tuple[float, float] | None) -> list[float] | None:
    return None if p is None else [round(p[0], 3), round(p[1], 3)]


def _tuple(p) -> tuple[float, float] | None:
    return None if p is None else (p[0], p[1])
