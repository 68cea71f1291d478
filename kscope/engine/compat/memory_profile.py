"""The allocator's events of one call, from torch.profiler's memory profile (profile_memory=True):
each allocation and free, with the ops and Python frames it happened under and the category
torch's memory profile gives its tensor.

Private torch, kept here: the profiler's event tree (`kineto_results.experimental_event_tree()`:
`_EventType.Allocation` events, `extra_fields.alloc_size` positive for an allocation, negative for
a free, `ptr`, `allocation_id`; parents up to the call: `TorchOp` events named "aten::add",
`PyCall` and `PyCCall` events whose `extra_fields.caller` is the calling frame at the call's line:
`file_name`, `line_number`) and
`prof._memory_profile()` (its `timeline` of (t, Action, (TensorKey, version), bytes) and
`_categories.get(key, version)`: INPUT, TEMPORARY, ACTIVATION, GRADIENT, AUTOGRAD_DETAIL,
PARAMETER, OPTIMIZER_STATE, or None). A tensor's key matches its allocation by
`key.storage.allocation_id` (a training step: 30 of its 30 allocations matched, torch 2.13).
Measured on torch 2.13: the profiler names a file relative to the sys.path entry it was imported
from ("model.py", "torch/_inductor/output_code.py"); an allocation in a compiled graph's wrapper
(`empty_strided_cpu`) has no op, its innermost Python frame the wrapper's line.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.profiler import ProfilerActivity, profile, record_function

MARKER = "kscope::memory"


@dataclass(frozen=True)
class Allocation:
    """One allocator event inside the call, in order."""

    bytes: int
    """Positive: allocated; negative: freed."""
    ptr: int
    ops: tuple[str, ...]
    """The ops it happened under, innermost first ("aten::clamp_min", "aten::relu")."""
    frames: tuple[tuple[str, int], ...]
    """The Python frames it happened under, innermost first, as (path, line): each the line of a
    call the profiler saw (a function, a builtin); a frame whose op ran from an operator (`a + b`,
    no call event) is known only at the line that called it."""
    category: str | None
    """torch's category of its tensor, lower-case ("activation"); None where it gives none."""
    exact: bool = False
    """frames[0] is the line of the innermost frame (the op ran under a builtin's or a function's
    call the profiler saw from that line); else the op ran from an operator in a function whose own
    line is not known, and frames[0] is its caller's."""


def record_allocations(fn: Callable[[], object], device: torch.device) -> tuple[list[Allocation], object]:
    """The allocator's events of one call of fn on `device` (inside the call only: what existed
    before it and what its caller frees after it are not its own), and the call's result, kept
    alive until the profile ends (else its free would look like the call's)."""
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=activities, profile_memory=True, record_shapes=True, with_stack=True) as prof:
        with record_function(MARKER):
            result = fn()
            if device.type == "cuda":
                torch.cuda.synchronize(device)
    categories = _categories(prof)
    out = []
    for event in _events_under_marker(prof):
        fields = event.extra_fields
        if fields.device.type != device.type or not fields.alloc_size:
            continue
        # a free needs no ancestry: only what it frees is looked up
        ops, frames, exact = _ancestry(event) if fields.alloc_size > 0 else ((), (), False)
        out.append(Allocation(fields.alloc_size, fields.ptr, ops, frames, categories.get(fields.allocation_id), exact))
    return out, result


def allocated_pointers(fn: Callable[[], object], device: torch.device) -> set[int]:
    """The addresses of the blocks one call of fn allocates on `device`: the allocator's events
    alone (no stacks, no shapes, no categories), for a call whose figures are not recorded."""
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=activities, profile_memory=True) as prof:
        with record_function(MARKER):
            result = fn()
            if device.type == "cuda":
                torch.cuda.synchronize(device)
    del result
    return {e.extra_fields.ptr for e in _events_under_marker(prof)
            if e.extra_fields.device.type == device.type and e.extra_fields.alloc_size > 0}


def _events_under_marker(prof) -> list:
    """The allocation events within the marker's time (the marker is no parent of the Python
    tracer's events, so the tree cannot tell)."""
    from torch._C._profiler import _EventType

    everything = []

    def walk(event) -> None:
        everything.append(event)
        for child in event.children:
            walk(child)

    for root in prof.profiler.kineto_results.experimental_event_tree():
        walk(root)
    marks = [e for e in everything if e.tag == _EventType.TorchOp and e.name == MARKER]
    if not marks:
        return []
    start, end = marks[0].start_time_ns, marks[0].end_time_ns
    found = [e for e in everything if e.tag == _EventType.Allocation and start <= e.start_time_ns <= end]
    return sorted(found, key=lambda e: e.start_time_ns)


def _ancestry(event) -> tuple[tuple[str, ...], tuple[tuple[str, int], ...], bool]:
    """(ops, frames, whether frames[0] is exact): see Allocation."""
    from torch._C._profiler import _EventType

    ops, frames, exact = [], [], False
    parent = event.parent
    while parent is not None:
        if parent.tag == _EventType.TorchOp and parent.name != MARKER:
            ops.append(parent.name)
        elif parent.tag in (_EventType.PyCall, _EventType.PyCCall):
            if not frames:
                exact = parent.tag == _EventType.PyCCall
            site = parent.extra_fields.caller  # the calling frame, at the line of the call
            frames.append((_path(site.file_name), site.line_number))
        parent = parent.parent
    return tuple(ops), tuple(frames), exact


@functools.lru_cache(maxsize=4096)
def _path(name: str) -> str:
    """The file the profiler names relative to a sys.path entry, as a path on this machine."""
    if os.path.isabs(name):
        return name
    for entry in sys.path:
        candidate = os.path.join(entry or os.getcwd(), name)
        if os.path.isfile(candidate):
            return candidate
    return name


def _categories(prof) -> dict[int, str]:
    """allocation_id -> torch's category of the tensor created there (where it gives one)."""
    from torch.profiler._memory_profiler import Action

    try:
        memory = prof._memory_profile()
    except Exception:  # noqa: BLE001 - the categories are an extra; the allocations stand without them
        return {}
    out = {}
    for _, action, (key, version), _ in memory.timeline:
        storage = getattr(key, "storage", None)
        if action != Action.CREATE or storage is None:
            continue
        category = memory._categories.get(key, version)
        if category is not None:
            out[storage.allocation_id] = category.name.lower()
    return out
