"""A distributed run's data (--nproc N): each rank's modes and the collectives they ran. No torch.

The Report of a run with ranks keeps rank 0's figures at the top level, as a single-process
Report has them, so tools that know nothing of ranks keep working; `Report.ranks` has every rank.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Collective:
    """One collective op of a call (all figures per call of the target), counted once: the c10d
    or functional collective op the program called, never also the backend's own event."""

    name: str
    """The op as the profiler names it: "c10d::allreduce_" (eager), "_c10d_functional::all_reduce_"."""
    count: float
    """Times it ran per call."""
    bytes: int | None
    """Per call, all its runs: the size of the tensors handed to it (torch's record_param_comms
    "In msg nelems" × dtype where the backend records it, else the shapes the profiler recorded);
    None when unknown. Never counted as kernel memory traffic."""
    time_us: float
    """Per call: how long the backend's collective ran (its "gloo:all_reduce" event), else the op's."""
    wait_us: float | None = None
    """Per call: time spent in the wait for it (`_c10d_functional::wait_tensor`); None where the
    trace has no wait event (eager `dist.all_reduce` blocks inside the call, unrecorded)."""
    phase: str = "forward"
    after: str | None = None
    """The kernel row that ran just before it in the call (the work it waits on), if any."""
    before: str | None = None
    """The kernel row that ran just after it, if any."""

    def to_dict(self) -> dict[str, Any]:
        from kscope.report.codec import json_number

        return {
            "name": self.name, "count": json_number(self.count), "bytes": self.bytes,
            "time_us": round(self.time_us, 3), "wait_us": None if self.wait_us is None else round(self.wait_us, 3),
            "phase": self.phase, "after": self.after, "before": self.before,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Collective:
        return cls(d["name"], d["count"], d.get("bytes"), d.get("time_us", 0.0), d.get("wait_us"),
                   d.get("phase", "forward"), d.get("after"), d.get("before"))


@dataclass(frozen=True)
class RankResult:
    """One rank of a distributed run."""

    rank: int
    eager: Any = None
    """report.ModeResult, or None when that mode did not run on this rank."""
    compiled: Any = None
    errors: tuple[Any, ...] = ()
    """report.RunError of this rank (each also in the Report's errors, with its rank)."""
    notes: tuple[str, ...] = ()
    wall_s: float | None = None
    """Seconds the rank's run took; None when the rank sent no report (it died, hung or was stopped)."""
    stage: str = ""
    """Where the rank got to: "done", or the last progress it reported ("eager done", …)."""


def collective_bytes(mode: Any) -> int | None:
    """All collectives' bytes per call; None when any is unknown."""
    values = [c.bytes for c in getattr(mode, "collectives", ()) or ()]
    return None if None in values else sum(values)


def collective_order(mode: Any) -> tuple[str, ...]:
    """The collectives a mode ran, with their counts and bytes: what must agree between ranks."""
    return tuple(f"{c.name}×{c.count:g}:{c.bytes}" for c in getattr(mode, "collectives", ()) or ())


def kernel_names(mode: Any) -> tuple[str, ...]:
    return tuple(f"{k.name}×{k.launches:g}" for k in getattr(mode, "kernels", ()) or ())


def differences(ranks: tuple[RankResult, ...]) -> dict[int, list[str]]:
    """Rank -> what it did differently from rank 0 in either mode: other kernels (or launch
    counts), other collectives or another order of them. Times never count: they always differ."""
    if not ranks:
        return {}
    first = ranks[0]
    out: dict[int, list[str]] = {}
    for r in ranks[1:]:
        found = []
        for mode in ("eager", "compiled"):
            a, b = getattr(first, mode), getattr(r, mode)
            if a is None or b is None:
                if (a is None) != (b is None):
                    found.append(f"{mode}: ran on one rank only")
                continue
            if kernel_names(a) != kernel_names(b):
                found.append(f"{mode}: other kernels")
            if collective_order(a) != collective_order(b):
                found.append(f"{mode}: other collectives")
        if found:
            out[r.rank] = found
    return out


def ranks_to_list(ranks: tuple[RankResult, ...] | None) -> list[dict] | None:
    if ranks is None:
        return None
    from kscope.report.codec import error_to_dict, mode_to_dict

    return [
        {
            "rank": r.rank, "stage": r.stage, "wall_s": None if r.wall_s is None else round(r.wall_s, 3),
            "eager": mode_to_dict(r.eager, compiled=False), "compiled": mode_to_dict(r.compiled, compiled=True),
            "errors": [error_to_dict(e) for e in r.errors], "notes": list(r.notes),
        }
        for r in ranks
    ]


def ranks_from_list(items: list[dict] | None) -> tuple[RankResult, ...] | None:
    if items is None:
        return None
    from kscope.report.model import RunError
    from kscope.report.codec import mode_from_dict

    return tuple(
        RankResult(
            d["rank"], mode_from_dict(d.get("eager")), mode_from_dict(d.get("compiled")),
            tuple(RunError(**e) for e in d.get("errors", ())), tuple(d.get("notes", ())), d.get("wall_s"),
            d.get("stage", ""),
        )
        for d in items
    )

