"""The eager half: kernels from the profiler, bytes and lines from dispatch accounting."""

from __future__ import annotations

from collections import defaultdict

import torch

from kscope.engine.kernels import Launch, TraceSummary
from kscope.engine.profiling import profile_calls, synchronize
from kscope.engine.target import Target
from kscope.engine.traffic import TrafficMode
from kscope.report import Kernel, ModeResult

WARMUP_CALLS = 2


def run_eager(target: Target, device: torch.device, calls: int, user_file: str) -> tuple[ModeResult, dict]:
    """The eager ModeResult, and per launch name the (bytes read, bytes written, lines) of one
    launch, which the compiled half uses for ops that run outside any compiled graph."""
    def call():
        return target.fn(*target.args)

    for _ in range(WARMUP_CALLS):
        call()
        synchronize(device)
    timed = profile_calls(call, device, calls)

    # One more call, untimed, under dispatch accounting: bytes and lines per launch.
    mode = TrafficMode(user_file)

    def accounted():
        with mode:
            return call()

    accounting = profile_calls(accounted, device, 1)
    by_owner: dict[int, list] = defaultdict(list)
    for op in mode.ops:
        by_owner[accounting.markers.get(op.marker, -1)].append(op)

    per_name = _accounted_per_name(accounting, by_owner)
    kernels = aggregate(timed, calls, lambda name: per_name.get(name, (0, 0, ())), fused=False)
    counts: dict[str, int] = defaultdict(int)
    for launch in accounting.launches:
        counts[launch.name] += 1
    per_launch = {
        name: (r // max(1, counts[name]), w // max(1, counts[name]), lines) for name, (r, w, lines) in per_name.items()
    }
    result = ModeResult(
        launches=len(timed.launches) / calls,
        bytes_read=sum(op.read for op in mode.ops),
        bytes_written=sum(op.written for op in mode.ops),
        kernel_time_us=sum(k.time_us for k in kernels),
        kernels=tuple(kernels),
        memcpy=round(timed.memcpy / calls),
        memset=round(timed.memset / calls),
        calls=calls,
        traffic_source="dispatch accounting: each op reads each distinct input storage once, writes its outputs",
    )
    return result, per_launch


def _accounted_per_name(accounting: TraceSummary, by_owner: dict[int, list]) -> dict[str, tuple[int, int, tuple]]:
    """Launch name -> (bytes read, bytes written, lines) over one call. On CUDA an op that
    launches several kernels has its bytes given to the first of them."""
    out: dict[str, list] = {}
    seen_owner: set[int] = set()
    for launch in accounting.launches:
        entry = out.setdefault(launch.name, [0, 0, set()])
        if launch.owner is None or launch.owner in seen_owner:
            continue
        seen_owner.add(launch.owner)
        for op in by_owner.get(launch.owner, ()):
            entry[0] += op.read
            entry[1] += op.written
            if op.line is not None:
                entry[2].add(op.line)
    return {name: (r, w, tuple(sorted(lines))) for name, (r, w, lines) in out.items()}


def aggregate(timed: TraceSummary, calls: int, info, *, fused: bool) -> list[Kernel]:
    """Group launches by name, in order of first launch; figures per call."""
    groups: dict[str, list[Launch]] = {}
    for launch in timed.launches:
        groups.setdefault(launch.name, []).append(launch)
    kernels = []
    for name, launches in groups.items():
        read, written, lines = info(name)
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
            )
        )
    return kernels
