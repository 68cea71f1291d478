"""One call's memory, per mode, from the allocator's events (engine.compat.memory_profile): the
peak of allocated minus freed since the call began, what is left when it returns, and the
tensors alive at the peak, each with its category and the line that allocated it.

On a call of its own (after both modes ran, before they are timed): profile_memory and
with_stack slow every op, so the timed calls never carry them. On CUDA the allocator's own peak
(torch.cuda.max_memory_allocated after reset_peak_memory_stats) is kept beside it as a check.
A compiled graph's buffers are allocated by inductor's wrapper, not by an op: each is named by
the wrapper's line ("buf0 = empty_strided_cpu(...)"), its place unknown.
"""

from __future__ import annotations

import linecache
import re
from collections.abc import Callable

import torch

from kscope.engine.compat.memory_profile import Allocation, record_allocations
from kscope.engine.memory.places import eager_places, matched
from kscope.engine.target.project import is_generated_file, place_of
from kscope.report.memory import TOP, CallMemory, HeldTensor
from kscope.report.place import Place

_BUFFER = re.compile(r"^\s*(\w+)\s*=")


def call_memory(fn: Callable[[], object], device: torch.device, eager: bool) -> CallMemory:
    """One call of fn, its memory (the result dropped only after it is measured); `eager`: the
    lines that allocated come from another call under a dispatch mode (engine.memory.places)."""
    before = _cuda_start(device)
    events, result = record_allocations(fn, device)
    checked = None if before is None else torch.cuda.max_memory_allocated(device) - before
    del result
    lines = matched(events, eager_places(fn)) if eager else {}
    return summarize(events, lines, checked)


def summarize(events: list[Allocation], lines: dict[int, Place | None] | None = None,
              checked: int | None = None) -> CallMemory:
    """The peak, what is held at the end, and the tensors alive at the peak."""
    live: dict[int, Allocation] = {}
    now = peak = 0
    at_peak: dict[int, Allocation] = {}
    freed: set[int] = set()  # ids of allocations freed later in the call
    order: dict[int, int] = {}  # ptr -> index of its live allocation
    lines = lines or {}
    for i, e in enumerate(events):
        now += e.bytes
        if e.bytes > 0:
            live[e.ptr], order[e.ptr] = e, i
        elif e.ptr in live:
            freed.add(order.pop(e.ptr))
            del live[e.ptr]
        if now > peak:
            peak, at_peak = now, {order[p]: a for p, a in live.items()}
    held = [_held(a, i in freed, lines.get(i)) for i, a in at_peak.items()]
    by_category: dict[str, int] = {}
    for t in held:
        by_category[t.category] = by_category.get(t.category, 0) + t.bytes
    top = tuple(sorted(held, key=lambda t: -t.bytes)[:TOP])
    return CallMemory(peak, now, sum(1 for e in events if e.bytes > 0), by_category, top, checked)


def _held(a: Allocation, freed_in_call: bool, place: Place | None) -> HeldTensor:
    category = a.category or ("temporary" if freed_in_call else "held")
    for path, line in a.frames:
        if is_generated_file(path):  # a compiled graph's wrapper
            source = linecache.getline(path, line)
            m = _BUFFER.match(source)
            return HeldTensor(a.bytes, category, m.group(1) if m else "a compiled graph's buffer")
    if place is None and a.exact:  # no noted output matched: the profiler's line, where it has the innermost
        place = place_of(a.frames)
    return HeldTensor(a.bytes, category, _allocating_op(a.ops), place)


def _allocating_op(ops: tuple[str, ...]) -> str:
    """The outermost aten op it was allocated under: the op the line called ("aten::relu", not the
    "aten::clamp_min" it runs), in backward the op under autograd's node ("aten::mm")."""
    return next((op for op in reversed(ops) if op.startswith("aten::")), ops[-1] if ops else "?")


def _cuda_start(device: torch.device) -> int | None:
    if device.type != "cuda":
        return None
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    return torch.cuda.memory_allocated(device)
