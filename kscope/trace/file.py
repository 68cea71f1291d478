"""A saved chrome trace as `kscope TRACE` shows it: launches per kernel name, per call when the
trace marks its calls, as kscope's own do (`kscope::call#N`, --trace-dir), else totals (a trace
from torchrun, Perfetto, anywhere). Pure Python: what the table and `--json` print."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from kscope.report.json_numbers import json_number
from kscope.trace.kernels import TraceSummary, summarize
from kscope.trace.nest import CALL_PREFIX


@dataclass(frozen=True)
class TraceKernel:
    name: str
    launches: float
    time_us: float


@dataclass(frozen=True)
class TraceFigures:
    file: str
    device: str
    calls: int | None
    """How many calls kscope marked in the trace (figures are per call); None: unmarked, totals."""
    launches: float
    memcpy: float
    memset: float
    kernels: tuple[TraceKernel, ...]
    """By time, longest first."""


def figures_to_dict(f: TraceFigures) -> dict[str, Any]:
    return {
        "file": f.file,
        "device": f.device,
        "calls": f.calls,
        "launches": json_number(f.launches),
        "memcpy": json_number(f.memcpy),
        "memset": json_number(f.memset),
        "kernels": [
            {"name": k.name, "launches": json_number(k.launches), "time_us": round(k.time_us, 3)} for k in f.kernels
        ],
    }


def marked_calls(events: list[dict]) -> int:
    """How many calls kscope marked (`kscope::call#0`, ...): each label counted once (a CUDA trace
    repeats a marker on the device's timeline)."""
    return len({e["name"] for e in events if str(e.get("name", "")).startswith(CALL_PREFIX)})


def trace_figures(path: str, events: list[dict]) -> TraceFigures:
    """Launches per kernel name; per call (the launches inside the marked calls ÷ their number)
    when kscope marked the calls, else the whole trace's totals."""
    summary = summarize(events)
    calls = marked_calls(events) or None
    if calls is not None:  # only what ran inside the marked calls
        summary = TraceSummary(
            summary.device,
            [x for x in summary.launches if x.segment is not None],
            sum(1 for kind, seg in summary.copies if kind == "memcpy" and seg is not None),
            sum(1 for kind, seg in summary.copies if kind == "memset" and seg is not None),
        )
    per = calls or 1
    counts: dict[str, list[float]] = {}
    for launch in summary.launches:
        entry = counts.setdefault(launch.name, [0, 0.0])
        entry[0] += 1
        entry[1] += launch.dur_us
    kernels = tuple(
        TraceKernel(name, n / per, us / per) for name, (n, us) in sorted(counts.items(), key=lambda kv: -kv[1][1])
    )
    return TraceFigures(
        os.path.abspath(path), summary.device, calls, len(summary.launches) / per, summary.memcpy / per,
        summary.memset / per, kernels,
    )
