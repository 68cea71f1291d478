"""The eager half: kernels from the profiler, bytes and lines from dispatch accounting."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kscope.engine.dispatch.accounting import (
    AccountedFigures,
    account,
    align_twins,
    figures_per_launch,
    figures_per_name,
    first_call,
    launch_label,
    with_twins,
)
from kscope.engine.dispatch.traffic import TrafficMode
from kscope.engine.dispatch.working_set import WorkingSet, working_set
from kscope.engine.eager.lines import LineShares
from kscope.engine.eager.round_trips import eager_round_trips
from kscope.engine.measure.profiling import Keep, profile_calls, synchronize
from kscope.engine.measure.timing import kernel_samples, retimed
from kscope.engine.target.loading import Target
from kscope.report.measures import sum_known
from kscope.report.model import Kernel, ModeResult
from kscope.trace.collectives import per_call
from kscope.trace.kernels import Dispatched, Launch, TraceSummary

WARMUP_CALLS = 2


@dataclass(frozen=True)
class EagerRun:
    result: ModeResult
    per_launch: dict[tuple[str, str], AccountedFigures]
    """(phase, launch name) -> the figures of one launch: the compiled half uses them for ops that
    run outside any compiled graph."""
    dispatched: Dispatched
    """The ops the dispatcher ran, and the ops under which it ran none: what decides which op of
    a composite is a launch, and which op is none."""
    notes: tuple[str, ...] = ()
    reads_parameters: bool = False
    """Some op read an nn.Parameter (TrafficMode.reads_parameters)."""
    working_set: WorkingSet | None = None
    """The bytes the call touched (engine.dispatch.working_set): the compiled half's is reckoned from it."""


def run_eager(target: Target, device: torch.device, calls: int, keep: Keep | None = None) -> EagerRun:
    """`keep`: handed the trace of the `calls` profiled calls (--trace-dir)."""
    call = target.runner()

    for _ in range(WARMUP_CALLS):
        call()
        synchronize(device)

    # One call, untimed, under dispatch accounting: bytes and lines per op, and which ops the
    # dispatcher ran once composite ops were decomposed (and their in-place twins: see accounting).
    done = account(call, device, TrafficMode())
    mode, accounting, by_owner = done.mode, done.summary, done.by_owner
    dispatched = Dispatched(with_twins(mode.dispatched), accounting.silent)
    timed = profile_calls(call, device, calls, dispatched, keep)
    align_twins(accounting.launches, first_call(timed, "0"))

    per_name = figures_per_name(done)
    kernels = aggregate(timed, calls, per_name, LineShares(done, timed, calls))
    per_launch = figures_per_launch(done, per_name)
    owners = {launch.owner for launch in accounting.launches}
    stray = sum(op.read + op.written for owner, ops in by_owner.items() if owner not in owners for op in ops)
    ws = working_set(mode.ops, done.returned)
    result = retimed(ModeResult(
        launches=len(timed.launches) / calls,
        bytes_read=sum_known(k.bytes_read for k in kernels),
        bytes_written=sum_known(k.bytes_written for k in kernels),
        kernel_time_us=sum(k.time_us for k in kernels),
        kernels=tuple(kernels),
        memcpy=round(timed.memcpy / calls),
        memset=round(timed.memset / calls),
        calls=calls,
        traffic_source=TRAFFIC_RULE,
        round_trips=eager_round_trips(mode.ops, done.returned, _row_names(accounting, by_owner)),
        collectives=per_call(timed.collectives, calls, launch_label),
        working_set_bytes=ws.eager_bytes,
    ), kernel_samples(timed, calls))
    notes = [f"eager: {stray:,} B moved by ops kscope could not tie to a launch are not counted"] if stray else []
    notes += _unknown_notes(kernels, per_name)
    return EagerRun(result, per_launch, dispatched, tuple(notes), mode.reads_parameters, ws)


TRAFFIC_RULE = (
    "dispatch accounting: each op reads each distinct input storage once and writes its outputs; "
    "aliasing ops move nothing; a gather reads min(the elements it gathers, its source) and its indices"
)


def _row_names(accounting: TraceSummary, by_owner: dict[int, list]):
    """op -> the name of the kernel row its launch is in ("aten::matmul › mm")."""
    label = {op.marker: launch_label(launch) for launch in accounting.launches for op in by_owner.get(launch.owner, ())}
    return lambda op: label.get(op.marker, op.op.replace(".", "::", 1))


def _unknown_notes(kernels: list[Kernel], per_name: dict[tuple[str, str], AccountedFigures]) -> list[str]:
    """Why rows have no bytes: the timed calls launched them and the accounted call did not;
    and what the accounted call launched that no timed call did (bytes no row holds)."""
    unknown = [k.name for k in kernels if k.bytes_read is None]
    if not unknown:
        return []
    rows = {(k.phase, k.name) for k in kernels}
    elsewhere = sorted(
        f"{name} ({f.bytes_read + f.bytes_written:,} B)" for (phase, name), f in per_name.items()
        if (phase, name) not in rows and f.bytes_read + f.bytes_written
    )
    return [
        f"eager: bytes unknown for {', '.join(unknown)}: the timed calls launched them, the call kscope accounted did not"
        + (f"; it launched {', '.join(elsewhere)}, which no timed call did: not counted" if elsewhere else "")
    ]


def aggregate(timed: TraceSummary, calls: int, per_name: dict[tuple[str, str], AccountedFigures],
              shares: LineShares) -> list[Kernel]:
    """One row per (phase, launch name), in order of first launch; figures per call: the
    profiler's launches and time, accounting's bytes, lines and FLOPs (`per_name`, over the call;
    a row it has none for is unknown), shared among the lines by `shares`."""
    groups: dict[tuple[str, str], list[Launch]] = {}
    for launch in timed.launches:
        groups.setdefault((launch.phase, launch_label(launch)), []).append(launch)
    kernels = []
    for (phase, name), launches in groups.items():
        figures = per_name.get((phase, name))
        ops = tuple(dict.fromkeys(x.owner_name for x in launches if x.owner_name and x.owner_name != name))
        per_call, time_us = len(launches) / calls, sum(x.dur_us for x in launches) / calls
        kernels.append(
            Kernel(
                name=name,
                launches=per_call,
                time_us=time_us,
                bytes_read=None if figures is None else figures.bytes_read,
                bytes_written=None if figures is None else figures.bytes_written,
                fused=False,
                ops=tuple(op.replace("::", ".") for op in (ops or (name,))),
                lines=() if figures is None else figures.lines,
                kind=launches[0].kind,
                phase=phase,
                bytes_saved=None if phase == "forward" else 0,  # not told apart in eager (see Kernel)
                shares=shares.of((phase, name), figures, per_call, time_us),
                flops=None if figures is None else figures.flops,
                working_set_bytes=None if figures is None else figures.working_set_bytes,
            )
        )
    return kernels
