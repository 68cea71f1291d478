"""Where each kernel sits on the roofline: its FLOPs per byte against the device's two roofs.

How FLOPs are counted (per call; None where kscope cannot tell, never 0 for an unknown):
- a matmul, a convolution or attention as `torch.utils.flop_counter` counts it (2·M·N·K for a matmul);
- a pointwise or reduction op one FLOP per element it computes (add, mul, maximum/relu, exp: 1 each;
  loads and stores none), eagerly per ATen op, compiled from inductor's own op counts of the kernel's
  loop body: the seed's `cpp_fused_add_relu_0` is 2 FLOPs an element (an add and a relu);
- an op that only moves data (a copy, a view, a gather) 0.
The roofs: the device's peak FLOP/s (Report.peak_flops) and the bandwidth of the memory level that
holds the call's working set (report.roofs: a cache's, or main memory's, Report.peak_gbps).
A kernel's attainable FLOP/s is min(peak FLOP/s, intensity × peak bandwidth); it is memory-bound
where intensity × bandwidth is the lower of the two (left of the ridge), compute-bound right of it.
"""

from __future__ import annotations

from dataclasses import dataclass


def intensity(flops: int | None, nbytes: int | None) -> float | None:
    """FLOPs per byte moved; None where either is unknown or nothing moved."""
    if flops is None or not nbytes:
        return None
    return flops / nbytes


def achieved(flops: int | None, time_us: float | None) -> float | None:
    """FLOP/s over the kernel's measured time; None where unknown or untimed (a plan's row)."""
    if flops is None or time_us is None or time_us <= 0:
        return None
    return flops / (time_us * 1e-6)


def ridge(peak_flops: float | None, peak_gbps: float | None) -> float | None:
    """The intensity (FLOP/byte) where the memory roof meets the compute roof."""
    if not peak_flops or not peak_gbps:
        return None
    return peak_flops / (peak_gbps * 1e9)


def attainable(at: float | None, peak_flops: float | None, peak_gbps: float | None) -> float | None:
    """The roof over an intensity: min(peak FLOP/s, intensity × peak bandwidth)."""
    if at is None or not peak_flops or not peak_gbps:
        return None
    return min(peak_flops, at * peak_gbps * 1e9)


@dataclass(frozen=True)
class Roofs:
    """The two roofs a mode's kernels sit under: the device's peak FLOP/s, and the bandwidth of
    the memory level that holds the mode's working set (report.roofs)."""

    peak_flops: float | None = None
    gbps: float | None = None
    level: str | None = None


@dataclass(frozen=True)
class RoofPoint:
    """One kernel row on the roofline."""

    mode: str
    name: str
    flops: int | None
    bytes: int | None
    time_us: float
    intensity: float | None
    achieved: float | None
    """FLOP/s."""
    bound: str | None
    """"memory" or "compute" (which roof is over it); None where a figure is unknown."""
    roof_percent: float | None
    """Achieved FLOP/s as a percentage of the roof over its intensity."""


def point(mode: str, kernel, peak_flops: float | None, peak_gbps: float | None) -> RoofPoint:
    at = intensity(kernel.flops, kernel.bytes_total)
    done = achieved(kernel.flops, kernel.time_us)
    roof = attainable(at, peak_flops, peak_gbps)
    meet = ridge(peak_flops, peak_gbps)
    bound = None if at is None or meet is None else ("memory" if at < meet else "compute")
    percent = None if roof is None or done is None or roof <= 0 else 100.0 * done / roof
    return RoofPoint(mode, kernel.name, kernel.flops, kernel.bytes_total, kernel.time_us, at, done, bound, percent)


def mode_roofs(report, mode) -> Roofs:
    """The roofs over a mode's kernels (Report.judged says which level, and why)."""
    j = report.judged(mode)
    if j is None:
        return Roofs(report.peak_flops, report.peak_gbps, None)
    return Roofs(report.peak_flops, j.roof.gbps, j.roof.level)


def points(report) -> list[RoofPoint]:
    """Every kernel row of both modes, eager first, each under its mode's roofs."""
    out = []
    for name in ("eager", "compiled"):
        mode = getattr(report, name)
        roofs = mode_roofs(report, mode)
        for k in mode.kernels if mode is not None else ():
            out.append(point(name, k, roofs.peak_flops, roofs.gbps))
    return out
