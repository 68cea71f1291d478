"""A sweep as rich renderables: the table of sizes (the app's sweep tab and `--once`) and, for
`--once`, the plot as plotext draws it."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from kscope.render.names import short_name
from kscope.render.plot import plot_text
from kscope.render.tables import errors_text, header
from kscope.render.text import fmt_count, per_element
from kscope.render.view import (
    SWEEP_COLUMNS,
    spread,
    spread_text,
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
    """Per size, eager → compiled: launches, bytes per element, wall time per call (median ±
    half the interquartile range), the verdict; GB/s and the compiled kernel where there is room."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, header_style="bold", padding=(0, 1))
    wide, wider = width >= 90, width >= 116
    table.add_column("n", justify="right", no_wrap=True)
    table.add_column("launches", justify="right", no_wrap=True)
    table.add_column("B/n", justify="right", no_wrap=True)
    table.add_column("eager call", justify="right", no_wrap=True)
    table.add_column("compiled call", justify="right", no_wrap=True)
    table.add_column("compiled", no_wrap=True)
    if wide:
        table.add_column("GB/s", justify="right", no_wrap=True)
    if wider:
        table.add_column("compiled kernel (kind)", no_wrap=True, overflow="ellipsis", max_width=width - 86)
    for p in sweep.points:
        e, c = p.eager, p.compiled
        row = [
            fmt_n(p.n),
            f"{fmt_count(e.launches)} → {fmt_count(c.launches)}",
            f"{per_element(e.bytes_total, p.n)} → {per_element(c.bytes_total, p.n)}",
            spread_text(e),
            spread_text(c),
            versus(p),
        ]
        if wide:
            row.append(f"{_gbps(e.achieved_gbps)} → {_gbps(c.achieved_gbps)}")
        if wider:
            row.append(_first_kernel(p))
        table.add_row(*row)
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


def _first_kernel(p: SweepPoint) -> str:
    """"add_relu_0 (parallel)", "+2" when more kernels ran (the sizes table below lists them)."""
    if not p.compiled.kernels:
        return ""
    kind = p.compiled.variants[0] if p.compiled.variants else ""
    text = short_name(p.compiled.kernels[0], 24) + (f" ({kind})" if kind else "")
    more = len(p.compiled.kernels) - 1
    return text + (f" +{more}" if more else "")


def _gbps(x: float | None) -> str:
    return "?" if x is None else f"{x:.1f}"


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
