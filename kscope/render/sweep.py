"""A sweep as rich renderables: the table of sizes (the app's sweep tab and `--once`) and, for
`--once`, the plot as plotext draws it."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from kscope.render.plot import plot_text
from kscope.render.sweep_rows import SWEEP, SWEEP_NARROW
from kscope.render.tables import errors_text, header
from kscope.render.view import (
    SWEEP_COLUMNS,
    spread,
    sweep_how,
    sweep_verdict,
)
from kscope.report.model import Report
from kscope.report.sweep import Sweep, SweepPoint, fmt_n

VERDICT_STYLE = {"faster": "green", "slower": "red"}


def versus(p: SweepPoint) -> Text:
    """"1.4× faster", "5.6× slower", "same", "busy": compiled against eager, wall time per call."""
    return Text(sweep_verdict(p), style=VERDICT_STYLE.get(p.verdict, "dim"))


def kernels_text(p: SweepPoint) -> str:
    """The compiled kernels that ran and their kind ("cpp_fused_add_relu_0 (parallel)"), and the
    graph ("0/1, dynamic")."""
    names = [f"{k} ({v})" if v else k for k, v in zip(p.compiled.kernels, p.compiled.variants or [""] * 99)]
    return ", ".join(names) + (f" · graph {p.graph}" if p.graph else "")


def sweep_table(sweep: Sweep, width: int = 120) -> Table:
    """The sweep's columns (render.sweep_rows.SWEEP): GB/s from 90 columns on, the compiled
    kernel from 116."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, header_style="bold", padding=(0, 1))
    wide, wider = width >= 90, width >= 116
    columns = SWEEP if wider else SWEEP.pick(*SWEEP_NARROW.keys, "gbps") if wide else SWEEP_NARROW
    columns.add_to(table, kernel={"max_width": width - 86})
    for p in sweep.points:
        table.add_row(*columns.cells(p, verdict=versus(p)))
    return table


def ran_table(sweep: Sweep) -> Table:
    """Per size, the kernel time (median ± half its interquartile range), the compiled kernels that
    ran, their kind, the graph, and whether it compiled."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, header_style="bold", padding=(0, 1))
    table.add_column("n", justify="right", no_wrap=True)
    table.add_column("kernel time", justify="right", no_wrap=True)
    table.add_column("compiled kernels that ran (kind) · graph · compile", overflow="fold")
    for p in sweep.points:
        kernel_time = f"{spread(p.eager.kernel_time_us, p.eager.kernel_time_us_range)} → " \
                      f"{spread(p.compiled.kernel_time_us, p.compiled.kernel_time_us_range)}"
        table.add_row(fmt_n(p.n), kernel_time, kernels_text(p) + (f" · {p.recompiled}" if p.recompiled else ""))
    return table


def sweep_summary(sweep: Sweep) -> Text:
    """The crossover, the compiles, and why the sweep stopped, in one or three lines."""
    text = Text(sweep.crossover_text(), style="bold")
    text.append(f" · {sweep_how(sweep)}")
    if sweep.stopped:
        text.append(f"\nstopped early: {sweep.stopped}", style="yellow")
    return text


def render_sweep(report: Report, width: int = 100) -> RenderableType:
    sweep = report.sweep
    parts: list[RenderableType] = [header(report)]
    if sweep is not None and sweep.points:
        parts.append(sweep_table(sweep, width))
        parts.append(Text(SWEEP_COLUMNS, style="dim"))
        parts.append(ran_table(sweep))
        parts.append(sweep_summary(sweep))
        parts.append(Text.from_ansi(plot_text(sweep, report.peak_gbps, width=min(width, 120), height=20)))
    elif sweep is not None and sweep.stopped:
        parts.append(Text(f"stopped: {sweep.stopped}", style="yellow"))
    for note in report.notes:
        parts.append(Text(f"note: {note}", style="dim"))
    if report.errors:
        parts.append(errors_text(report))
    return Group(*parts)
