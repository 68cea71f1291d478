"""Saved traces as `kscope TRACE` and `kscope DIR` print them (rich): launches per kernel name,
and a folder of rank traces side by side with their collectives."""

from __future__ import annotations

import os

from rich.console import Group, RenderableType
from rich.table import Table

from kscope.render.names import short_name
from kscope.render.ranks_rows import COLLECTIVES
from kscope.render.text import fmt_bytes, fmt_count
from kscope.report.ranks import collective_bytes
from kscope.trace.file import TraceFigures
from kscope.trace.ranks import RankTrace

TRACE_COLLECTIVES = COLLECTIVES.pick("collective", "count", "bytes", "time", "wait", "between")
"""A rank trace's collectives: the Report's columns but its mode and phase (a trace is of one mode)."""


def trace_caption(figures: TraceFigures) -> str:
    """"2 launches (5 calls, per call)", "10 launches" (unmarked: the whole trace's)."""
    text = f"{fmt_count(figures.launches)} launch{'es' if figures.launches != 1 else ''}"
    if figures.calls is not None:
        text += f" ({figures.calls} call{'s' if figures.calls != 1 else ''}, per call)"
    if figures.device == "cuda":
        text += f", memcpy {fmt_count(figures.memcpy)}, memset {fmt_count(figures.memset)} (not counted as kernels)"
    return text


def render_trace(figures: TraceFigures) -> RenderableType:
    """A saved profiler trace: launches per kernel name, per call when
    kscope marked the calls."""
    per = "/call" if figures.calls is not None else " total"
    title = f"{os.path.basename(figures.file)}: {figures.device} trace"
    table = Table(title=title, title_justify="left", expand=True)
    table.add_column("kernel", overflow="fold", ratio=3)
    table.add_column(f"launches{per}", justify="right")
    table.add_column(f"µs{per}", justify="right")
    for k in figures.kernels:
        table.add_row(short_name(k.name, 80), fmt_count(k.launches), f"{k.time_us:.1f}")
    table.caption = trace_caption(figures)
    return table


def render_rank_traces(folder: str, ranks: list[RankTrace]) -> RenderableType:
    """The ranks side by side, then each rank's collectives (rich)."""
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
            TRACE_COLLECTIVES.add_to(sub)
            for c in r.collectives:
                sub.add_row(*TRACE_COLLECTIVES.cells(("", c)))
            parts.append(sub)
    return Group(*parts)
