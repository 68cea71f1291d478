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
from dataclasses import replace

import torch

from kscope.engine.compat.memory_profile import Allocation, record_allocations
from kscope.engine.memory.places import eager_places, matched
from kscope.engine.memory.saved import saved_bytes
from kscope.engine.target.project import is_generated_file, place_of
from kscope.report.memory import TOP, CallMemory, HeldTensor
from kscope.report.place import Place

_BUFFER = re.compile(r"^\s*(\w+)\s*=")
_CALL = re.compile(r"^\s*(?:\w+\s*=\s*)?([\w.]+)\((.*)\)\s*$")
_NOT_KERNELS = {"empty_strided_cpu", "empty_strided_cuda", "empty_strided", "reinterpret_tensor", "as_strided",
                "assert_size_stride", "assert_alignment", "del"}
"""Wrapper calls that only allocate, view or check a buffer: not what fills it."""


def call_memory(fn: Callable[[], object], device: torch.device, eager: bool) -> CallMemory:
    """One call of fn, its memory (the result dropped only after it is measured); `eager`: the
    lines that allocated come from another call under a dispatch mode (engine.memory.places). What
    the forward kept for backward comes from a call of its own too (engine.memory.saved)."""
    before = _cuda_start(device)
    events, result = record_allocations(fn, device)
    checked = None if before is None else torch.cuda.max_memory_allocated(device) - before
    del result
    lines = matched(events, eager_places(fn)) if eager else {}
    return replace(summarize(events, lines, checked), saved_bytes=saved_bytes(fn, device))


def summarize(events: list[Allocation], lines: dict[int, Place | None] | None = None,
              checked: int | None = None) -> CallMemory:
    """The peak of the call's own allocations alive at once, those still alive at its end, and the
    tensors alive at the peak."""
    live: dict[int, Allocation] = {}
    now = peak = 0
    at_peak: dict[int, Allocation] = {}
    freed: set[int] = set()  # ids of allocations freed later in the call
    order: dict[int, int] = {}  # ptr -> index of its live allocation
    lines = lines or {}
    for i, e in enumerate(events):
        if e.bytes > 0:
            live[e.ptr], order[e.ptr] = e, i
        elif e.ptr in live:
            freed.add(order.pop(e.ptr))
            del live[e.ptr]
        else:
            # A block allocated before the call: its free is not the call's. Counted, the peak hung
            # on history: a training step frees the last step's gradients as it begins, and how
            # many were still alive then (autograd may hold a stolen one) depended on what ran
            # before it (measured: a compiled MLP step's peak 5,762,048, 6,815,744 or 7,864,320 B).
            continue
        now += e.bytes
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
            m = _BUFFER.match(linecache.getline(path, line))
            if m is None:
                return HeldTensor(a.bytes, category, "a compiled graph's buffer")
            return HeldTensor(a.bytes, category, m.group(1), filled_by=_filler(path, line, m.group(1)))
    if place is None and a.exact:  # no noted output matched: the profiler's line, where it has the innermost
        place = place_of(a.frames)
    return HeldTensor(a.bytes, category, _allocating_op(a.ops), place)


def _filler(path: str, line: int, buffer: str) -> str | None:
    """The kernel the wrapper first hands `buffer` to after the line that allocates it:
    "cpp_fused_add_relu_0(arg0_1, arg1_1, buf0)", "extern_kernels.mm(x, w, out=buf3)"."""
    used = re.compile(rf"\b{re.escape(buffer)}\b")
    for text in linecache.getlines(path)[line:]:
        call = _CALL.match(text)
        if call and call.group(1) not in _NOT_KERNELS and used.search(call.group(2)):
            return call.group(1)
    return None


def with_kernel_lines(memory: CallMemory, kernels) -> CallMemory:
    """Each compiled buffer at the peak placed at the first line of the kernel that fills it (the
    compiled rows' `lines`, report.model.Kernel)."""
    lines = {k.name: k.lines for k in kernels if k.lines}
    top = tuple(replace(t, place=lines[_row_name(t.filled_by, lines)][0])
                if t.place is None and t.filled_by and _row_name(t.filled_by, lines) else t for t in memory.top)
    return replace(memory, top=top)


def _row_name(callee: str | None, lines: dict) -> str | None:
    """The kernel row a wrapper's callee is: its own name, or an extern kernel's op ("extern_kernels.mm": "mm")."""
    if callee in lines:
        return callee
    short = (callee or "").rsplit(".", 1)[-1]
    return next((name for name in lines if name.rsplit("::", 1)[-1] == short or name.endswith(f".{short}")), None)


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
