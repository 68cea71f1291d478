"""The roofline's views (report.roofline): its words and table for `--once` and `--markdown`, and
its plot, drawn with plotext on a figure as the sweep's is (render/plot.py): x the kernels' FLOPs
per byte, y their FLOP/s, log-log, under the device's two roofs. A figure kscope does not know is
"?" ("unknown" in Markdown), never 0. No rich or plotext at import: markdown.py imports this.
"""

from __future__ import annotations

import math

from kscope.render.columns import NO_WRAP, UNKNOWN, Column, Columns, Unknown, Words, or_unknown
from kscope.render.names import short_name
from kscope.render.plot import COMPILED_COLOR, EAGER_COLOR, MARK_COLOR
from kscope.render.text import fmt_bytes
from kscope.report.model import Report
from kscope.report.roofline import RoofPoint, attainable, points, ridge

TITLE = "roofline: FLOPs, bytes and achieved FLOP/s per call"
SELECTED_COLOR = "red"
CACHE_COLOR = "gray"
"""A cache level's memory roof: dimmer than main memory's."""


def _sig(x: float) -> str:
    """Three significant figures, without an exponent: 0.167, 5, 41.7, 1234."""
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _scaled(x: float, units: tuple[tuple[str, float], ...], bare: str = "") -> str:
    for unit, scale in units:
        if abs(x) >= scale:
            return f"{_sig(x / scale)} {unit}"
    return f"{_sig(x)} {bare}".rstrip()


def fmt_flops(n: float | None, unknown: str = "?") -> str:
    """A count of FLOPs in decimal units: 2,000,000 is "2 M"."""
    return unknown if n is None else _scaled(n, (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)))


def fmt_rate(flop_s: float | None, unknown: str = "?") -> str:
    """FLOP/s: 1.2e12 is "1.2 TFLOP/s"."""
    if flop_s is None:
        return unknown
    return _scaled(flop_s, (("TFLOP/s", 1e12), ("GFLOP/s", 1e9), ("MFLOP/s", 1e6), ("kFLOP/s", 1e3)), "FLOP/s")


def any_flops(report: Report) -> bool:
    """Some kernel's FLOPs are known: the roofline has something to say."""
    return any(p.flops is not None for p in points(report))


ROOFLINE = Columns("roofline", (
    Column("mode", "mode", lambda p, w: p.mode, rich=NO_WRAP),
    Column("kernel", "kernel", lambda p, w: p.name, code=True, rich={"no_wrap": True, "ratio": 1, "min_width": 12}),
    Column("flops", "FLOPs", lambda p, w: or_unknown(p.flops, fmt_flops), "r", rich=NO_WRAP),
    Column("bytes", "bytes", lambda p, w: or_unknown(p.bytes, fmt_bytes), "r", rich=NO_WRAP),
    Column("intensity", "FLOP/byte", lambda p, w: or_unknown(p.intensity, _sig), "r", narrow="FLOP/B", rich=NO_WRAP),
    Column("achieved", "GFLOP/s", lambda p, w: or_unknown(p.achieved, lambda x: _sig(x / 1e9)), "r", rich=NO_WRAP),
    Column("bound", "bound", lambda p, w: p.bound or UNKNOWN, rich=NO_WRAP),
    Column("roof", "% of roof", lambda p, w: _percent(p), "r", narrow="% roof", rich=NO_WRAP),
))
"""Each kernel on the roofline (a RoofPoint a row): FLOPs, bytes, FLOP/byte, achieved GFLOP/s, what
bounds it and its share of that roof. A terminal's table has the narrow labels: at 80 columns the
kernel's name keeps its room."""


def row(p: RoofPoint, unknown: str = "?") -> list[str]:
    """mode, kernel, FLOPs, bytes, FLOP/byte, achieved GFLOP/s, bound, % of roof."""
    return ROOFLINE.cells(p, Words(unknown=unknown))


def _percent(p: RoofPoint) -> str | Unknown:
    if p.flops == 0:
        return "—"  # a kernel that only moves data has no roof to reach: not unknown, nothing to say
    if p.roof_percent is None:
        return UNKNOWN
    return f"{p.roof_percent:.0f}%" if p.roof_percent >= 10 else f"{p.roof_percent:.2g}%"


def peaks_line(report: Report, unknown: str = "?") -> str:
    """"peak 1.2 TFLOP/s (…); memory roofs L2 114 GB/s, L3 93 GB/s, main memory 29 GB/s (…); each
    mode judged against the level that holds its working set"."""
    flops = (fmt_rate(report.peak_flops) if report.peak_flops else f"{unknown} FLOP/s") \
        + (f" ({report.peak_flops_source})" if report.peak_flops_source else "")
    gbps = (unknown if report.peak_gbps is None else _sig(report.peak_gbps)) + " GB/s" \
        + (f" ({report.peak_source})" if report.peak_source else "")
    meet = ridge(report.peak_flops, report.peak_gbps)
    memory = "main memory " if report.roofs else ""  # a Report before schema 13 has one roof
    line = f"peak {flops}, {memory}{gbps}; ridge {unknown if meet is None else _sig(meet)} FLOP/byte"
    caches = [f"{r.level} {_sig(r.gbps)} GB/s" for r in report.roofs[:-1] if r.gbps]
    if caches:
        line += "; cache roofs " + ", ".join(caches)
    for name in ("eager", "compiled") if report.roofs else ():
        judged = report.judged(getattr(report, name))
        if judged is not None and getattr(report, name) is not None:
            line += f"; {name} judged against {judged.roof.level} ({judged.why})"
    over = {p.mode: p.bound for p in points(report) if (p.roof_percent or 0) > 100}
    for mode, bound in over.items():
        judged = report.judged(getattr(report, mode))
        if bound == "memory" and judged is not None:
            line += f"; {mode} over 100% of the {judged.roof.level} roof: {judged.above()}"
        elif bound == "compute":
            line += (f"; {mode} over 100% of the compute roof: the peak may be another precision's than the one "
                     "that ran (TF32, autocast)")
    return line


def why_not_plotted(p: RoofPoint) -> str | None:
    """Why a kernel has no place on a log-log roofline; None where it has one."""
    if p.flops is None:
        return "with FLOPs unknown"
    if p.bytes is None:
        return "with bytes unknown"
    if p.bytes == 0:
        return "moving no bytes"
    if p.flops == 0:
        return "moving data only (0 FLOPs)"
    if p.achieved is None:
        return "not timed"
    return None


def left_out_text(shown: list[RoofPoint]) -> str:
    """"3 kernels not plotted: 2 with FLOPs unknown, 1 moving data only (0 FLOPs)"; "" when none."""
    reasons: dict[str, int] = {}
    for p in shown:
        why = why_not_plotted(p)
        if why is not None:
            reasons[why] = reasons.get(why, 0) + 1
    total = sum(reasons.values())
    if not total:
        return ""
    return f"{total} kernel{'s' if total != 1 else ''} not plotted: " + ", ".join(f"{n} {why}" for why, n in reasons.items())


def roofline_table(report: Report):
    """`--once`'s roofline section (rich); None when no kernel's FLOPs are known."""
    if not any_flops(report):
        return None
    from rich.table import Table

    from kscope.render.tables import KernelName

    table = Table(title=TITLE, title_justify="left", expand=True, pad_edge=False, collapse_padding=True,
                  caption=peaks_line(report), caption_justify="left")
    ROOFLINE.add_to(table, narrow=True)
    for p in points(report):
        table.add_row(*ROOFLINE.cells(p, kernel=KernelName(p.name)))
    return table


# --- the plot -------------------------------------------------------------------------------------


def _decades(values: list[float]) -> tuple[int, int]:
    """The powers of ten just around the values: at least one decade."""
    low, high = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
    return low, max(high, low + 1)


def _ticks(low: int, high: int) -> list[float]:
    step = max(1, math.ceil((high - low + 1) / 7))
    return [10.0**k for k in range(low, high + 1, step)]


def _tick(x: float) -> str:
    """1e9 is "1G", 0.01 is "0.01": short enough for a narrow axis."""
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:g}{unit}"
    return f"{x:g}"


def memory_roofs(report: Report) -> list[float]:
    """Every level's bandwidth, main memory's last (its peak_gbps alone before schema 13)."""
    caches = [r.gbps for r in report.roofs[:-1] if r.gbps and r.gbps > (report.peak_gbps or 0)]
    return caches + ([report.peak_gbps] if report.peak_gbps else [])


def draw(figure, report: Report, width: int, height: int, selected: str | None = None,
         selected_mode: str | None = None) -> None:
    """Draw on a plotext figure (`plotext._figure._figure_class()`, or a textual-plotext widget's
    `plt`). `selected`: a kernel row's name, marked (in `selected_mode` only, where given)."""
    figure.clear_figure()
    figure.plotsize(width, height)
    every = points(report)
    placed = [p for p in every if why_not_plotted(p) is None]
    meet = ridge(report.peak_flops, report.peak_gbps)
    if meet is None:
        titles = ["roofline · no roofs: " + ("peak FLOP/s" if not report.peak_flops else "peak GB/s") + " unknown"]
    else:
        peaks = f"{fmt_rate(report.peak_flops)}, {_sig(report.peak_gbps)} GB/s"
        titles = [f"roofline · peak {peaks} · ridge {_sig(meet)} FLOP/byte", f"roofline · {peaks}"]
    figure.title(_fitting(titles + ["roofline"], width))
    if placed:
        # the view: every point and, with roofs, a decade either side of the ridge
        xs = [p.intensity for p in placed] + ([meet / 10, meet * 10] if meet else [])
        x_low, x_high = _decades(xs)
        ys = [p.achieved for p in placed]
        if meet is not None:
            ys += [report.peak_flops, attainable(10.0**x_low, report.peak_flops, report.peak_gbps)]
        y_low, y_high = _decades(ys)
        figure.xscale("log")
        figure.yscale("log")
        figure.xlim(x_low, x_high)  # plotext takes a log axis's limits as exponents
        figure.ylim(y_low, y_high)
        if meet is not None:  # straight on log-log: the ends are enough
            for gbps in memory_roofs(report):  # every level's, a cache's dimmer than main memory's
                ridge_here = report.peak_flops / (gbps * 1e9)
                memory_from = max(10.0**x_low, 10.0**y_low / (gbps * 1e9))
                if memory_from < ridge_here:
                    figure.plot([memory_from, ridge_here], [memory_from * gbps * 1e9, report.peak_flops],
                                color=MARK_COLOR if gbps == report.peak_gbps else CACHE_COLOR, marker="braille")
            figure.plot([meet, 10.0**x_high], [report.peak_flops] * 2, color=MARK_COLOR, marker="braille")
        for mode, color in (("eager", EAGER_COLOR), ("compiled", COMPILED_COLOR)):
            mine = [p for p in placed if p.mode == mode]
            if mine:
                figure.scatter([p.intensity for p in mine], [p.achieved for p in mine], color=color, marker="●",
                               label=mode)
        chosen = [p for p in placed if _is_selected(p, selected, selected_mode)]
        if chosen:  # drawn last: over its own point
            figure.scatter([p.intensity for p in chosen], [p.achieved for p in chosen], color=SELECTED_COLOR,
                           marker="◆", label=f"selected: {short_name(selected, 28)}")
        x_ticks, y_ticks = _ticks(x_low, x_high), _ticks(y_low, y_high)
        figure.xticks(x_ticks, [_tick(t) for t in x_ticks])
        figure.yticks(y_ticks, [_tick(t) for t in y_ticks])
    notes, short = _notes(every, selected, selected_mode)
    # plotext drops a label that does not fit: the longest that does, centred between the y label's
    labels = [_joined("FLOP/byte (arithmetic intensity)", notes), _joined("FLOP/byte", notes), _joined("FLOP/byte", short)]
    figure.xlabel(_fitting(labels + ["FLOP/byte"], width - 2 * len("FLOP/s") - 4))
    figure.ylabel("FLOP/s")
    figure.theme("clear")


def _is_selected(p: RoofPoint, selected: str | None, mode: str | None) -> bool:
    return p.name == selected and mode in (None, p.mode)


def _notes(every: list[RoofPoint], selected: str | None, mode: str | None) -> tuple[list[str], list[str]]:
    """What the plot leaves out, in full and in short."""
    if not every:
        return ["no kernels yet"], ["no kernels yet"]
    left_out = sum(1 for p in every if why_not_plotted(p) is not None)
    notes, short = [left_out_text(every)], [f"{left_out} not plotted" if left_out else ""]
    missing = next((why_not_plotted(p) for p in every if _is_selected(p, selected, mode)), None)
    if missing:
        notes.append(f"selected {short_name(selected, 28)}: not plotted ({missing.removeprefix('with ')})")
        short.append("selected: not plotted")
    return notes, short


def _joined(axis: str, notes: list[str]) -> str:
    return " · ".join(x for x in [axis, *notes] if x)


def _fitting(texts: list[str], room: int) -> str:
    return next((t for t in texts if len(t) <= room), "")


def plot_text(report: Report, width: int = 100, height: int = 24, selected: str | None = None) -> str:
    """The plot as text with ANSI colours, for a plain terminal."""
    from plotext._figure import (
        _figure_class,  # a figure of its own: plotext's module-level one keeps state
    )

    figure = _figure_class()
    draw(figure, report, width, height, selected)
    figure._limit_size(False, False)  # the size asked for, not the terminal's (draw's clear_figure resets it)
    figure.plotsize(width, height)
    return figure.build()
