"""A distributed run (--nproc) as text: the ranks side by side, each rank's collectives, and what
differs between ranks. One set of rows for the `--once` tables, Markdown and the app's pane."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from kscope.report.model import Report
from kscope.render.text import PHASE_TAGS, fmt_bytes, fmt_count
from kscope.report.ranks import RankResult, collective_bytes, differences
from kscope.render.view import fmt_us

OVERVIEW_HEADER = ["rank", "launches", "traffic", "collectives", "collective bytes", "kernel time", "call time", "stage"]
COLLECTIVE_HEADER = ["mode", "phase", "collective", "×/call", "bytes", "µs", "wait µs", "between"]


def _pair(report_mode_a, report_mode_b, fmt) -> str:
    """"a → b", "?" for an unknown figure, "…" for a mode that did not run."""
    def one(m):
        if m is None:
            return "…"
        value = fmt(m)
        return "?" if value is None else value
    return f"{one(report_mode_a)} → {one(report_mode_b)}"


def overview_rows(ranks: tuple[RankResult, ...]) -> list[list[str]]:
    """One row per rank, eager → compiled, per call (OVERVIEW_HEADER)."""
    rows = []
    for r in ranks:
        e, c = r.eager, r.compiled
        rows.append([
            str(r.rank),
            _pair(e, c, lambda m: fmt_count(m.launches)),
            _pair(e, c, lambda m: fmt_bytes(m.bytes_total, "?") if m.bytes_total is not None else None),
            _pair(e, c, lambda m: fmt_count(sum(x.count for x in m.collectives))),
            _pair(e, c, lambda m: None if collective_bytes(m) is None else fmt_bytes(collective_bytes(m))),
            _pair(e, c, lambda m: fmt_us(m.kernel_time_us)),
            _pair(e, c, lambda m: None if m.call_time_us is None else fmt_us(m.call_time_us)),
            r.stage or "?",
        ])
    return rows


def collective_rows(rank: RankResult) -> list[list[str]]:
    """Each collective of a rank, eager then compiled (COLLECTIVE_HEADER)."""
    rows = []
    for label, mode in (("eager", rank.eager), ("compiled", rank.compiled)):
        for x in getattr(mode, "collectives", ()) or ():
            between = f"{x.after or '(start)'} → {x.before or '(end)'}"
            rows.append([
                label, PHASE_TAGS.get(x.phase, x.phase), x.name, fmt_count(x.count), fmt_bytes(x.bytes),
                f"{x.time_us:.0f}", "?" if x.wait_us is None else f"{x.wait_us:.0f}", between,
            ])
    return rows


def difference_lines(report: Report) -> list[str]:
    """"rank 1 differs from rank 0: compiled: other collectives", or one line that they agree."""
    if not report.ranks:
        return []
    found = differences(report.ranks)
    if not found:
        ran = [r for r in report.ranks if r.eager is not None or r.compiled is not None]
        return [f"all {len(report.ranks)} ranks ran the same kernels and collectives"] if len(ran) == len(report.ranks) else []
    return [f"rank {rank} differs from rank 0: {', '.join(what)}" for rank, what in found.items()]


def ranks_overview(report: Report) -> Table:
    table = Table(title=f"ranks ({len(report.ranks)}), per call, eager → compiled", title_justify="left",
                  pad_edge=False)
    for i, name in enumerate(OVERVIEW_HEADER):
        table.add_column(name, justify="left" if i in (0, 7) else "right", no_wrap=True)
    odd = set(differences(report.ranks))
    for row, r in zip(overview_rows(report.ranks), report.ranks):
        table.add_row(*row, style="bold yellow" if r.rank in odd else ("red" if r.errors else None))
    table.caption = "collective bytes: the tensors handed to the collectives, never counted as kernel traffic"
    return table


def collectives_table(rank: RankResult) -> Table | None:
    rows = collective_rows(rank)
    if not rows:
        return None
    table = Table(title=f"rank {rank.rank}: collectives per call", title_justify="left", pad_edge=False)
    for i, name in enumerate(COLLECTIVE_HEADER):
        table.add_column(name, justify="right" if 3 <= i <= 6 else "left", no_wrap=i != 7)
    for row in rows:
        table.add_row(*row)
    return table


def render_ranks(report: Report) -> RenderableType:
    """The ranks side by side, what differs, rank 0's collectives, then every other rank's
    kernel tables and collectives (rank 0's kernel tables are the main ones above)."""
    from kscope.render.tables import SideBySide, mode_table

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


def ranks_markdown(report: Report) -> list[str]:
    """The overview and each rank's collectives as GFM sections (render_markdown)."""
    from kscope.render.markdown import cell, table

    if not report.ranks:
        return []
    parts = [f"#### Ranks ({len(report.ranks)})", table(OVERVIEW_HEADER, [[cell(x) for x in row] for row in
                                                                        overview_rows(report.ranks)], "lrrrrrrl")]
    parts += [f"**{line}**" if "differs" in line else line for line in difference_lines(report)]
    for r in report.ranks:
        rows = collective_rows(r)
        if rows:
            parts.append(f"Rank {r.rank}, collectives per call:\n\n"
                         + table(COLLECTIVE_HEADER, [[cell(x) for x in row] for row in rows], "lllrrrrl"))
    return parts
