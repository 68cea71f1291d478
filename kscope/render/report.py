"""A whole Report as `--once` prints it (rich): header, both modes side by side, the summary,
timing, compile, round trips, fused kernels, memory, the costliest lines, the roofline, ranks, notes and errors."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from kscope.render.lines import lines_table
from kscope.render.memory import memory_table
from kscope.render.ranks import render_ranks
from kscope.render.roofline import roofline_table
from kscope.render.tables import (
    SideBySide,
    compile_line,
    errors_text,
    fused_table,
    header,
    mode_table,
    round_trips_table,
    timing_line,
)
from kscope.render.text import summary_line
from kscope.render.view import round_trips_line
from kscope.report.model import Report


def render_report(report: Report) -> RenderableType:
    parts: list[RenderableType] = [header(report)]
    if report.eager or report.compiled:
        parts.append(
            SideBySide(mode_table(report, "eager", report.eager), mode_table(report, "compiled", report.compiled))
        )
        parts.append(Text(summary_line(report), style="bold"))
        parts.append(Text(round_trips_line(report)))
        timing = timing_line(report)
        if timing.plain:
            parts.append(timing)
    if report.compiled:
        parts.append(compile_line(report.compiled, report.home))
        if report.compiled.round_trips:
            parts.append(round_trips_table(report.compiled.round_trips, report.home))
        fused = fused_table(report.compiled)
        if fused is not None:
            parts.append(fused)
    memory = memory_table(report)
    if memory is not None:
        parts.append(memory)
    lines = lines_table(report)
    if lines is not None:
        parts.append(lines)
    roofline = roofline_table(report)  # None until some kernel's FLOPs are known
    if roofline is not None:
        parts.append(roofline)
    if report.ranks:
        parts.append(render_ranks(report))
    for note in report.notes:
        parts.append(Text(f"note: {note}", style="dim"))
    if report.errors:
        parts.append(errors_text(report))
    return Group(*parts)
