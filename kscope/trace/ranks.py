"""`kscope DIR`: a folder of per-rank chrome traces (one a rank, as a torchrun job's profiler
writes them) summarised per rank: launches and collectives. Pure Python, no torch.

A rank is the trace's own `distributedInfo.rank` (torch's profiler writes it when a process group
is up), else the file's place in name order. Figures are per call when kscope marked the calls
(`kscope::call#N`), else the whole trace's totals, as `kscope TRACE` gives them.
"""

from __future__ import annotations

import glob
import gzip
import json
import os
from dataclasses import dataclass
from typing import Any

from kscope.report.codec import collective_to_dict
from kscope.report.model import Collective
from kscope.report.ranks import collective_bytes
from kscope.trace.collectives import per_call
from kscope.trace.file import TraceFigures, figures_to_dict, marked_calls, trace_figures
from kscope.trace.kernels import summarize


@dataclass(frozen=True)
class RankTrace:
    rank: int
    rank_from: str
    """"distributedInfo" (the trace says), or "file order"."""
    figures: TraceFigures
    collectives: tuple[Collective, ...]
    """Per call, as the figures are."""


def trace_paths(folder: str) -> list[str]:
    return sorted(glob.glob(os.path.join(folder, "*.json")) + glob.glob(os.path.join(folder, "*.json.gz")))


def rank_traces(folder: str) -> list[RankTrace]:
    """Each trace in the folder, by rank. Raises ValueError when one is not a profiler trace."""
    out = []
    for i, path in enumerate(trace_paths(folder)):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
        if not isinstance(data, dict) or "traceEvents" not in data:
            raise ValueError(f"{path}: no traceEvents")
        events = data["traceEvents"]
        info = data.get("distributedInfo") or {}
        rank, source = (info["rank"], "distributedInfo") if isinstance(info.get("rank"), int) else (i, "file order")
        calls = marked_calls(events)
        found = summarize(events).collectives
        if calls:
            found = [c for c in found if c.segment is not None]
        out.append(RankTrace(rank, source, trace_figures(path, events), per_call(found, calls or 1, lambda x: x.name)))
    return sorted(out, key=lambda r: r.rank)


def folder_dict(folder: str, ranks: list[RankTrace]) -> dict[str, Any]:
    """What `kscope DIR --json` prints."""
    return {"folder": os.path.abspath(folder), "ranks": [rank_trace_to_dict(r) for r in ranks]}


def rank_trace_to_dict(r: RankTrace) -> dict[str, Any]:
    return {"rank": r.rank, "rank_from": r.rank_from, **figures_to_dict(r.figures),
            "collectives": [collective_to_dict(c) for c in r.collectives],
            "collective_bytes": collective_bytes(r)}
