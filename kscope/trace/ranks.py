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

from kscope.trace.collectives import per_call
from kscope.trace.kernels import summarize
from kscope.report.ranks import collective_bytes
from kscope.trace.file import TraceFigures, marked_calls, trace_figures


@dataclass(frozen=True)
class RankTrace:
    rank: int
    rank_from: str
    """"distributedInfo" (the trace says), or "file order"."""
    figures: TraceFigures
    collectives: tuple
    """report_ranks.Collective, per call as the figures are."""

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "rank_from": self.rank_from, **self.figures.to_dict(),
                "collectives": [c.to_dict() for c in self.collectives],
                "collective_bytes": collective_bytes(self)}


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
    return {"folder": os.path.abspath(folder), "ranks": [r.to_dict() for r in ranks]}


def render_rank_traces(folder: str, ranks: list[RankTrace]):
    """The ranks side by side, then each rank's collectives (rich)."""
    from rich.console import Group
    from rich.table import Table

    from kscope.render.ranks import COLLECTIVE_HEADER
    from kscope.render.text import fmt_bytes, fmt_count

    per = "per call" if all(r.figures.calls for r in ranks) else "totals"
    table = Table(title=f"{folder}: {len(ranks)} rank traces ({per})", title_justify="left")
    for name in ("rank", "file", "launches", "collectives", "collective bytes"):
        table.add_column(name, justify="right" if name != "file" else "left")
    parts = [table]
    for r in ranks:
        table.add_row(str(r.rank) + ("" if r.rank_from == "distributedInfo" else " (file order)"),
                      os.path.basename(r.figures.file), fmt_count(r.figures.launches),
                      fmt_count(sum(c.count for c in r.collectives)), fmt_bytes(collective_bytes(r)))
        if r.collectives:
            sub = Table(title=f"rank {r.rank}: collectives", title_justify="left")
            for name in COLLECTIVE_HEADER[2:]:
                sub.add_column(name)
            for c in r.collectives:
                sub.add_row(c.name, fmt_count(c.count), fmt_bytes(c.bytes), f"{c.time_us:.0f}",
                            "?" if c.wait_us is None else f"{c.wait_us:.0f}", f"{c.after or '(start)'} → {c.before or '(end)'}")
            parts.append(sub)
    return Group(*parts)
