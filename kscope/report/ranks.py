"""A distributed run (--nproc N): what ranks did differently, and their collectives' totals.

The Report of a run with ranks keeps rank 0's figures at the top level, as a single-process
Report has them, so tools that know nothing of ranks keep working; `Report.ranks` has every rank.
"""

from __future__ import annotations

from typing import Any

from kscope.report.measures import sum_known
from kscope.report.model import RankResult


def collective_bytes(mode: Any) -> int | None:
    """All collectives' bytes per call; None when any is unknown."""
    return sum_known(c.bytes for c in getattr(mode, "collectives", ()) or ())


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
