"""A distributed run (--nproc) as rows of plain words: the ranks side by side, each rank's
collectives, and what differs between ranks. One set of rows for the `--once` tables, Markdown
and the app's pane."""

from __future__ import annotations

from kscope.render.columns import NO_WRAP, UNKNOWN, Column, Columns, or_unknown
from kscope.render.text import PHASE_TAGS, fmt_bytes, fmt_count
from kscope.render.view import fmt_us
from kscope.report.model import Collective, RankResult, Report
from kscope.report.ranks import collective_bytes, differences


def _figure(fmt):
    """A column's fill of a rank: "eager → compiled", each worded by fmt (None: the unknown word),
    "…" for a mode that did not run."""
    def one(m, words):
        if m is None:
            return "…"
        value = fmt(m)
        return words.unknown if value is None else value
    return lambda r, w: f"{one(r.eager, w)} → {one(r.compiled, w)}"


OVERVIEW = Columns("ranks", (
    Column("rank", "rank", lambda r, w: str(r.rank), rich=NO_WRAP),
    Column("launches", "launches", _figure(lambda m: fmt_count(m.launches)), "r", rich=NO_WRAP),
    Column("traffic", "traffic", _figure(lambda m: None if m.bytes_total is None else fmt_bytes(m.bytes_total)), "r",
           rich=NO_WRAP),
    Column("collectives", "collectives", _figure(lambda m: fmt_count(sum(x.count for x in m.collectives))), "r",
           rich=NO_WRAP),
    Column("collective_bytes", "collective bytes",
           _figure(lambda m: None if collective_bytes(m) is None else fmt_bytes(collective_bytes(m))), "r", rich=NO_WRAP),
    Column("kernel_time", "kernel time", _figure(lambda m: fmt_us(m.kernel_time_us)), "r", rich=NO_WRAP),
    Column("call_time", "call time", _figure(lambda m: None if m.call_time_us is None else fmt_us(m.call_time_us)), "r",
           rich=NO_WRAP),
    Column("stage", "stage", lambda r, w: r.stage or UNKNOWN, rich=NO_WRAP),
))
"""One row per rank (a RankResult), eager → compiled, per call."""

COLLECTIVES = Columns("collectives", (
    Column("mode", "mode", lambda x, w: x[0], rich=NO_WRAP),
    Column("phase", "phase", lambda x, w: PHASE_TAGS.get(x[1].phase, x[1].phase), rich=NO_WRAP),
    Column("collective", "collective", lambda x, w: x[1].name, rich=NO_WRAP),
    Column("count", "×/call", lambda x, w: fmt_count(x[1].count), "r", rich=NO_WRAP),
    Column("bytes", "bytes", lambda x, w: or_unknown(x[1].bytes, fmt_bytes), "r", rich=NO_WRAP),
    Column("time", "µs", lambda x, w: f"{x[1].time_us:.0f}", "r", rich=NO_WRAP),
    Column("wait", "wait µs", lambda x, w: or_unknown(x[1].wait_us, lambda us: f"{us:.0f}"), "r", rich=NO_WRAP),
    Column("between", "between", lambda x, w: f"{x[1].after or '(start)'} → {x[1].before or '(end)'}"),
))
"""Each collective of a rank, a (mode, Collective) pair a row; a trace's collectives show all but the first two."""


def collective_rows(rank: RankResult) -> list[tuple[str, Collective]]:
    """The rows of COLLECTIVES for a rank: eager's collectives, then compiled's."""
    return [(label, x) for label, mode in (("eager", rank.eager), ("compiled", rank.compiled))
            for x in getattr(mode, "collectives", ()) or ()]


def difference_lines(report: Report) -> list[str]:
    """"rank 1 differs from rank 0: compiled: other collectives", or one line that they agree."""
    if not report.ranks:
        return []
    found = differences(report.ranks)
    if not found:
        ran = [r for r in report.ranks if r.eager is not None or r.compiled is not None]
        return [f"all {len(report.ranks)} ranks ran the same kernels and collectives"] if len(ran) == len(report.ranks) else []
    return [f"rank {rank} differs from rank 0: {', '.join(what)}" for rank, what in found.items()]
