"""Run a callable under torch.profiler and read the trace with kernels.summarize."""

from __future__ import annotations

import functools
import os
import tempfile
from collections.abc import Callable

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from kscope.trace.kernels import (
    NONWORK_OPS,
    Dispatched,
    TraceSummary,
    load_trace,
    summarize,
)
from kscope.trace.nest import CALL_PREFIX


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


Keep = Callable[[str], object]
"""Handed the path of an exported chrome trace before it is deleted (to keep a copy of it)."""


def profile_calls(
    fn: Callable[[], object],
    device: torch.device,
    calls: int,
    dispatched: Dispatched | None = None,
    keep: Keep | None = None,
) -> TraceSummary:
    """Profile `calls` calls of fn (synchronizing after each on CUDA) and summarize the trace."""
    return summarize(record_events(fn, device, calls, keep), is_nonwork, dispatched)


def record_events(fn: Callable[[], object], device: torch.device, calls: int, keep: Keep | None = None) -> list[dict]:
    """The chrome-trace events of `calls` calls of fn under torch.profiler, each call marked
    ("kscope::call#0", ...) so that its launches can be told from the others'."""
    return record_labelled([(str(i), fn) for i in range(calls)], device, keep=keep)


def record_labelled(
    calls: list[tuple[str, Callable[[], object]]],
    device: torch.device,
    between: Callable[[], object] | None = None,
    keep: Keep | None = None,
    shapes: bool = False,
) -> list[dict]:
    """Profile each (label, fn) in turn inside a "kscope::call#label" marker, synchronizing after
    each on CUDA; `between` runs before each call, outside its marker (a cache flush). `keep`
    sees the exported trace file before it is deleted (--trace-dir). `shapes`: record each op's
    input shapes (engine.inductor.ran_sizes: data-dependent sizes are read off them)."""
    activities = [ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(ProfilerActivity.CUDA)
    # A collective's bytes come from its tensors' shapes (trace.collectives): record them when
    # there can be collectives; elsewhere they would only slow every profiled op.
    with profile(activities=activities, record_shapes=shapes or distributed()) as prof:
        for label, fn in calls:
            if between is not None:
                between()
                synchronize(device)
            with record_function(CALL_PREFIX + label):
                fn()
                synchronize(device)
    fd, path = tempfile.mkstemp(prefix="kscope-", suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        if keep is not None:
            keep(path)
        return load_trace(path)
    finally:
        os.unlink(path)


def distributed() -> bool:
    """A process group is up (--nproc, or the user's own init_process_group)."""
    return torch.distributed.is_available() and torch.distributed.is_initialized()


@functools.cache
def is_nonwork(name: str) -> bool:
    """A view, metadata or allocation op: the static list, or an op all of whose overloads are views."""
    if name in NONWORK_OPS:
        return True
    if not name.startswith("aten::"):
        return False
    packet = getattr(torch.ops.aten, name[len("aten::"):], None)
    if packet is None:
        return False
    try:
        overloads = [getattr(packet, o) for o in packet.overloads()]
    except (AttributeError, RuntimeError):
        return False
    return bool(overloads) and all(o.is_view for o in overloads)
