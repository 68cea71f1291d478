"""A distributed run (--nproc) as rows of plain words: the ranks side by side, each rank's
collectives, and what differs between ranks. One set of rows for the `--once` tables, Markdown
and the app's pane."""

from __future__ import annotations

from kscope.render.text import PHASE_TAGS, fmt_bytes, fmt_count
from kscope.render.view import fmt_us
from kscope.report.model import RankResult, Report
from kscope.report.ranks import collective_bytes, differences

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
