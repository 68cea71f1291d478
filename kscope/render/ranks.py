"""A distributed run (--nproc) as rich tables: the ranks side by side, each rank's collectives, and
what differs between ranks (the rows are render.ranks_rows', shared with Markdown and the app)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from kscope.render.ranks_rows import COLLECTIVES, OVERVIEW, collective_rows, difference_lines
from kscope.render.tables import SideBySide, mode_table
from kscope.report.model import RankResult, Report
from kscope.report.ranks import differences


def ranks_overview(report: Report) -> Table:
    table = Table(title=f"ranks ({len(report.ranks)}), per call, eager → compiled", title_justify="left",
                  pad_edge=False)
    OVERVIEW.add_to(table)
    odd = set(differences(report.ranks))
    for r in report.ranks:
        table.add_row(*OVERVIEW.cells(r), style="bold yellow" if r.rank in odd else ("red" if r.errors else None))
    table.caption = "collective bytes: the tensors handed to the collectives, never counted as kernel traffic"
    return table


def collectives_table(rank: RankResult) -> Table | None:
    rows = collective_rows(rank)
    if not rows:
        return None
    table = Table(title=f"rank {rank.rank}: collectives per call", title_justify="left", pad_edge=False)
    COLLECTIVES.add_to(table)
    for row in rows:
        table.add_row(*COLLECTIVES.cells(row))
    return table


def render_ranks(report: Report) -> RenderableType:
    """The ranks side by side, what differs, rank 0's collectives, then every other rank's
    kernel tables and collectives (rank 0's kernel tables are the main ones above)."""
    parts: list[RenderableType] = [ranks_overview(report)]
    parts += [Text(line, style="bold yellow" if "differs" in line else "green") for line in difference_lines(report)]
    for r in report.ranks:
        if r.rank != 0:
            parts.append(Text(f"rank {r.rank}", style="bold cyan"))
            parts.append(SideBySide(mode_table(report, "eager", r.eager), mode_table(report, "compiled", r.compiled)))
        table = collectives_table(r)
        if table is not None:
            parts.append(table)
    return Group(*parts)
