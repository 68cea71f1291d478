"""The sweep's plot, drawn with plotext: the same drawing in `--once` (plotext's text) and in the
app (textual-plotext's widget, whose `plt` has plotext's API).

Left: wall time per call against n, eager and compiled, log-log, the crossover marked. Right:
achieved GB/s against n (kernel time), the device's memory peak as a line. plotext, not a
textual-only widget: it draws on a plain terminal too, and it is pure Python (it travels to a
GPU machine that has no textual).
"""

from __future__ import annotations

import math

from kscope.render.view import fmt_us
from kscope.report.sweep import Sweep, fmt_n

EAGER_COLOR, COMPILED_COLOR, MARK_COLOR, CACHE_COLOR = "blue", "orange", "gray", "gray"


def draw(figure, sweep: Sweep, peak_gbps: float | None, width: int, height: int) -> None:
    """Draw on a plotext figure (`plotext._figure._figure_class()`, or a textual-plotext widget's
    `plt`): settings made on a figure apply to all its subplots, so each is drawn on its own."""
    figure.clear_figure()
    side_by_side = width >= 90
    figure.subplots(1, 2) if side_by_side else figure.subplots(2, 1)
    figure.plotsize(width, height)
    points = [p for p in sweep.points if p.eager.call_time_us and p.compiled.call_time_us]
    ns = [p.n for p in points]
    ticks = _ticks(ns)

    times = figure.subplot(1, 1)
    times.title("wall time per call, log-log")
    if points:
        times.xscale("log")
        times.yscale("log")
        times.plot(ns, [p.eager.call_time_us for p in points], label="eager", color=EAGER_COLOR, marker="braille")
        times.plot(ns, [p.compiled.call_time_us for p in points], label="compiled", color=COMPILED_COLOR,
                   marker="braille")
        times.xticks(ticks, [fmt_n(int(t)) for t in ticks])
        levels = _ticks([p.eager.call_time_us for p in points] + [p.compiled.call_time_us for p in points])
        times.yticks(levels, [fmt_us(t) for t in levels])
        if sweep.crossover_n is not None and len(points) > 1:
            times.vline(sweep.crossover_n, MARK_COLOR)
        times.xlabel(sweep.crossover_text())

    rates = figure.subplot(1, 2) if side_by_side else figure.subplot(2, 1)
    rates.title("achieved GB/s (kernel time)" + (f", main memory {peak_gbps:.0f}" if peak_gbps else "")
                + (" · | a cache level left" if level_exits(sweep) else ""))
    rated = [p for p in points if p.eager.achieved_gbps and p.compiled.achieved_gbps]
    if rated:
        rates.xscale("log")
        xs = [p.n for p in rated]
        rates.plot(xs, [p.eager.achieved_gbps for p in rated], label="eager", color=EAGER_COLOR, marker="braille")
        rates.plot(xs, [p.compiled.achieved_gbps for p in rated], label="compiled", color=COMPILED_COLOR,
                   marker="braille")
        for n in level_exits(sweep):  # where the compiled arrays leave a cache level
            rates.vline(n, CACHE_COLOR)
        if peak_gbps:
            rates.hline(peak_gbps, MARK_COLOR)
            top = max([peak_gbps] + [p.eager.achieved_gbps for p in rated] + [p.compiled.achieved_gbps for p in rated])
            rates.ylim(0, top * 1.05)
        rates.xticks(ticks, [fmt_n(int(t)) for t in ticks])
    figure.main()
    figure.theme("clear")


def level_exits(sweep: Sweep) -> list[int]:
    """The first size at which the compiled working set no longer fits each cache level (report.roofs)."""
    out = []
    for roof in sweep.roofs[:-1]:
        if roof.capacity_bytes and roof.gbps:
            n = next((p.n for p in sweep.points if (p.compiled.working_set_bytes or 0) > roof.capacity_bytes), None)
            if n is not None and n != sweep.points[0].n and n not in out:
                out.append(n)
    return out


def _ticks(ns: list[float]) -> list[float]:
    """Powers of ten across the values (at most 7), else the smallest and largest value."""
    if not ns:
        return []
    low, high = math.floor(math.log10(min(ns))), math.ceil(math.log10(max(ns)))
    powers = [10.0**k for k in range(low, high + 1)]
    while len(powers) > 7:
        powers = powers[::2]
    inside = [p for p in powers if min(ns) <= p <= max(ns)]
    return inside if len(inside) > 1 else sorted({float(min(ns)), float(max(ns))})


def plot_text(sweep: Sweep, peak_gbps: float | None, width: int = 100, height: int = 20) -> str:
    """The plot as text with ANSI colours, for a plain terminal."""
    from plotext._figure import (
        _figure_class,  # a figure of its own: plotext's module-level one keeps state
    )

    figure = _figure_class()
    draw(figure, sweep, peak_gbps, width, height)
    return figure.build()
