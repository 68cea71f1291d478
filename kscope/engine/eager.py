"""The eager half: kernels from the profiler, bytes and lines from dispatch accounting."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import torch

from kscope.engine.profiling import (
    Keep,
    is_nonwork,
    profile_calls,
    record_events,
    synchronize,
)
from kscope.engine.round_trips import eager_round_trips
from kscope.engine.target import Target
from kscope.engine.timing import kernel_samples, retimed
from kscope.engine.traffic import TrafficMode, storages
from kscope.report.model import Kernel, ModeResult
from kscope.report.place import Place, sorted_places
from kscope.trace.collectives import per_call
from kscope.trace.kernels import Dispatched, Launch, TraceSummary, is_custom_op, summarize

WARMUP_CALLS = 2


@dataclass(frozen=True)
class EagerRun:
    result: ModeResult
    per_launch: dict[tuple[str, str], tuple[int, int, tuple[int, ...]]]
    """(phase, launch name) -> (bytes read, bytes written, lines) of one launch: the compiled half
    uses them for ops that run outside any compiled graph."""
    dispatched: Dispatched
    """The ops the dispatcher ran, and the ops under which it ran none: what decides which op of
    a composite is a launch, and which op is none."""
    notes: tuple[str, ...] = ()
    reads_parameters: bool = False
    """Some op read an nn.Parameter (TrafficMode.reads_parameters)."""


def run_eager(target: Target, device: torch.device, calls: int, keep: Keep | None = None) -> EagerRun:
    """`keep`: handed the trace of the `calls` profiled calls (--trace-dir)."""
    call = target.runner()

    for _ in range(WARMUP_CALLS):
        call()
        synchronize(device)

    # One call, untimed, under dispatch accounting: bytes and lines per op, and which ops the
    # dispatcher ran once composite ops were decomposed.
    mode = TrafficMode()

    returned: set = set()

    def accounted():
        with mode:
            out = call()
        returned.update(storages(out))
        return out

    events = record_events(accounted, device, 1)
    accounting = summarize(events, is_nonwork, Dispatched(frozenset(mode.dispatched)))
    dispatched = Dispatched(frozenset(mode.dispatched), accounting.silent)
    timed = profile_calls(call, device, calls, dispatched, keep)

    by_owner: dict[int, list] = defaultdict(list)
    for op in mode.ops:
        by_owner[accounting.markers.get(op.marker, -1)].append(op)
    per_name = _accounted_per_name(accounting, by_owner, {op.marker: op.place for op in mode.ops})
    kernels = aggregate(timed, calls, lambda key: per_name.get(key, (None, None, ())), fused=False)
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for launch in accounting.launches:
        counts[launch.phase, launch_label(launch)] += 1
    per_launch = {
        name: (r // max(1, counts[name]), w // max(1, counts[name]), lines) for name, (r, w, lines) in per_name.items()
    }
    owners = {launch.owner for launch in accounting.launches}
    stray = sum(op.read + op.written for owner, ops in by_owner.items() if owner not in owners for op in ops)
    result = retimed(ModeResult(
        launches=len(timed.launches) / calls,
        bytes_read=total(k.bytes_read for k in kernels),
        bytes_written=total(k.bytes_written for k in kernels),
        kernel_time_us=sum(k.time_us for k in kernels),
        kernels=tuple(kernels),
        memcpy=round(timed.memcpy / calls),
        memset=round(timed.memset / calls),
        calls=calls,
        traffic_source=TRAFFIC_RULE,
        round_trips=eager_round_trips(mode.ops, returned, _row_names(accounting, by_owner)),
        collectives=per_call(timed.collectives, calls, launch_label),
    ), kernel_samples(timed, calls))
    notes = (f"eager: {stray:,} B moved by ops kscope could not tie to a launch are not counted",) if stray else ()
    return EagerRun(result, per_launch, dispatched, notes, mode.reads_parameters)


TRAFFIC_RULE = (
    "dispatch accounting: each op reads each distinct input storage once and writes its outputs; "
    "aliasing ops move nothing; a gather reads min(the elements it gathers, its source) and its indices"
)


def _row_names(accounting: TraceSummary, by_owner: dict[int, list]):
    """op -> the name of the kernel row its launch is in ("aten::matmul › mm")."""
    label = {op.marker: launch_label(launch) for launch in accounting.launches for op in by_owner.get(launch.owner, ())}
    return lambda op: label.get(op.marker, op.op.replace(".", "::", 1))


def launch_label(launch: Launch) -> str:
    """A launch's row name: the op, after the composite the user called when there is one
    ("aten::cross_entropy_loss › _log_softmax"); the custom op the user called, for the ATen ops
    its kernel ran ("mylib::add2": one row, its launches and bytes those of its body)."""
    if launch.composite and launch.kind != "kernel":
        if is_custom_op(launch.composite):
            return launch.composite
        return f"{launch.composite} › {launch.name.removeprefix('aten::')}"
    return launch.name


def total(values) -> int | None:
    """Sum of per-kernel bytes; unknown (None) when any of them is."""
    values = list(values)
    return None if any(v is None for v in values) else sum(values)


def _accounted_per_name(
    accounting: TraceSummary, by_owner: dict[int, list], place_of_marker: dict[int, Place | None]
) -> dict[tuple[str, str], tuple[int, int, tuple]]:
    """(phase, launch name) -> (bytes read, bytes written, lines) over one call. On CUDA an op
    that launches several kernels has its bytes given to the first of them. A backward op has no
    line of its own (autograd's engine runs it): it gets the lines of the forward op it
    differentiates, tied by autograd's sequence number."""
    out: dict[tuple[str, str], list] = {}
    seen_owner: set[int] = set()
    for launch in accounting.launches:
        entry = out.setdefault((launch.phase, launch_label(launch)), [0, 0, set()])
        if launch.seq is not None:
            entry[2].update(
                place for m in accounting.forward_seq.get(launch.seq, ()) if (place := place_of_marker.get(m)) is not None
            )
        if launch.owner is None or launch.owner in seen_owner:
            continue
        seen_owner.add(launch.owner)
        for op in by_owner.get(launch.owner, ()):
            entry[0] += op.read
            entry[1] += op.written
            if op.place is not None:
                entry[2].add(op.place)
    return {key: (r, w, sorted_places(places)) for key, (r, w, places) in out.items()}


def aggregate(timed: TraceSummary, calls: int, info, *, fused: bool) -> list[Kernel]:
    """Group launches by name, in order of first launch; figures per call."""
    groups: dict[tuple[str, str], list[Launch]] = {}
    for launch in timed.launches:
        groups.setdefault((launch.phase, launch_label(launch)), []).append(launch)
    kernels = []
    for (phase, name), launches in groups.items():
        read, written, lines = info((phase, name))
        ops = tuple(dict.fromkeys(x.owner_name for x in launches if x.owner_name and x.owner_name != name))
        kernels.append(
            Kernel(
                name=name,
                launches=len(launches) / calls,
                time_us=sum(x.dur_us for x in launches) / calls,
                bytes_read=read,
                bytes_written=written,
                fused=fused,
                ops=tuple(op.replace("::", ".") for op in (ops or (name,))),
                lines=lines,
                kind=launches[0].kind,
                phase=phase,
                bytes_saved=None if phase == "forward" else 0,  # not told apart in eager (see Kernel)
            )
        )
    return kernels
