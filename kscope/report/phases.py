"""A mode's kernels summed by phase: forward, backward (autograd's engine), optimizer (a step)."""

from __future__ import annotations

from dataclasses import dataclass

from kscope.report.measures import add_known, sum_known

PHASES = ("forward", "backward", "optimizer")


@dataclass(frozen=True)
class PhaseTotals:
    """One phase of a mode: the sum of its kernels."""

    phase: str
    launches: float
    bytes_read: int | None
    bytes_written: int | None
    kernel_time_us: float

    @property
    def bytes_total(self) -> int | None:
        return add_known(self.bytes_read, self.bytes_written)


def phase_totals(kernels) -> tuple[PhaseTotals, ...]:
    """Per phase that ran, in PHASES order: launches, bytes (unknown if any kernel's is) and time."""
    out = []
    for phase in PHASES:
        mine = [k for k in kernels if k.phase == phase]
        if not mine:
            continue
        if any(k.launches is None or k.time_us is None for k in mine):
            continue  # a plan's rows (report.plan): not run, no totals
        out.append(
            PhaseTotals(
                phase,
                sum(k.launches for k in mine),
                sum_known(k.bytes_read for k in mine),
                sum_known(k.bytes_written for k in mine),
                sum(k.time_us for k in mine),
            )
        )
    return tuple(out)
