"""A call's working set: the distinct bytes it touches (report.roofs: which level of memory holds it).

From the same dispatch accounting as the traffic (engine.dispatch.traffic): every storage an op
of the call read or wrote, at the most bytes any op covered there, counted once. Storages are told
apart by address, as the caches see memory: an intermediate freed during the call whose block the
allocator hands out again for a later result is the same cache lines, counted once. Eager, that is
the inputs, the outputs and every intermediate (each goes through memory). Compiled, the inputs
and the outputs are the same storages, and the intermediates that go through memory are the
buffers left between inductor's kernels (its round trips); a fused intermediate lives in
registers and touches no memory.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WorkingSet:
    eager_bytes: int
    """Everything the eager call touched."""
    outside_bytes: int
    """What any mode's call must touch: the storages that existed before the call and it read
    (inputs, weights), and what it returned."""


def touched_bytes(ops) -> int:
    """The distinct bytes these ops touch: each storage once, at the most bytes one of them covers
    there (one launch's, engine.dispatch.accounting: an in-place add reads and writes one array)."""
    size: dict = {}
    for op in ops:
        for key, nbytes in op.sizes.items():
            size[key] = max(size.get(key, 0), nbytes)
    return sum(size.values())


def working_set(ops, returned: set) -> WorkingSet:
    """ops: the accounted call's OpTraffic in order; returned: the storages of its outputs."""
    size: dict = {}
    written: set = set()
    before: set = set()
    for op in ops:
        for key, nbytes in op.sizes.items():
            size[key] = max(size.get(key, 0), nbytes)
        before |= {key for key in op.reads if key not in written}
        written |= set(op.writes)
    outside = (before | returned) & set(size)
    return WorkingSet(sum(size.values()), sum(size[key] for key in outside))


def compiled_working_set(ws: WorkingSet | None, round_trips) -> int | None:
    """The compiled call's: what it must touch, and the buffers between its kernels (None where
    either is unknown)."""
    if ws is None or round_trips is None or any(t.bytes is None for t in round_trips):
        return None
    return ws.outside_bytes + sum(t.bytes for t in round_trips)
