"""The memory roofs: one per level (each cache, then main memory), and which one a kernel is judged
against. Data in a cache moves faster than main memory can: a kernel whose call's working set
fits the L3 judged against main memory's bandwidth reads above 100% of a roof it never touched.

A call's working set (ModeResult.working_set_bytes) is held by the smallest level whose capacity
is at least as large; one larger than every cache, one kscope does not know, and every call timed
with --cold (caches flushed between calls) is judged against main memory, and says which.
"""

from __future__ import annotations

from dataclasses import dataclass

MAIN_MEMORY = "main memory"


@dataclass(frozen=True)
class Roof:
    level: str
    """"L1d", "L2", "L3" (as the OS names the CPU's caches; on CUDA "L2"), or "main memory"."""
    gbps: float | None
    """Its bandwidth, read + write bytes per second / 1e9; None: unknown (source says why)."""
    capacity_bytes: int | None
    """What it holds for the worker's threads (a per-core cache times the threads); None for main memory."""
    source: str
    measured: bool = True
    """Measured on this machine (False: read from a data sheet, or unknown)."""


@dataclass(frozen=True)
class Judged:
    """The roof a mode's kernels are judged against, and why that one."""

    roof: Roof
    why: str
    """"L3-resident: 12.0 MB of 105 MB", "--cold: caches flushed between calls", ..."""
    faster: Roof | None = None
    """The next faster level whose rate is known: where a kernel above this roof may have found
    part of its data."""

    def above(self) -> str:
        """Why a kernel can read above this roof, as far as kscope can tell."""
        if self.faster is not None:
            return f"part of its data may sit in the faster {self.faster.level} ({self.faster.gbps:.0f} GB/s)"
        return "the roof is the best copy measured; bytes a kernel reads again may come from a faster cache"


def judged(roofs: tuple[Roof, ...], working_set: int | None, cold: bool = False,
           main_memory: Roof | None = None) -> Judged | None:
    """The roof that holds a working set; None where there are no roofs. main_memory: the only roof
    of a Report from before schema 13 (its peak_gbps)."""
    roofs = roofs or ((main_memory,) if main_memory is not None and main_memory.gbps else ())
    if not roofs:
        return None
    main = roofs[-1]
    if len(roofs) == 1:
        return Judged(main, f"{main.level}, the only roof known")
    if cold:
        return Judged(main, "--cold: caches flushed between calls", _faster(roofs, main))
    if working_set is None:
        return Judged(main, "working set unknown", _faster(roofs, main))
    for roof in roofs[:-1]:
        if roof.capacity_bytes is not None and working_set <= roof.capacity_bytes and roof.gbps is not None:
            why = f"{roof.level}-resident: {_mb(working_set)} of {_mb(roof.capacity_bytes)}"
            return Judged(roof, why, _faster(roofs, roof))
    return Judged(main, f"working set {_mb(working_set)}: larger than every cache", _faster(roofs, main))


def _faster(roofs: tuple[Roof, ...], roof: Roof) -> Roof | None:
    known = [r for r in roofs[:roofs.index(roof)] if r.gbps]
    return known[-1] if known else None


def _mb(n: int) -> str:
    return f"{n / 1e6:.3g} MB" if n >= 1e5 else f"{n / 1e3:.3g} kB"
