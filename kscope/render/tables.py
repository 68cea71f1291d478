"""Rich renderables for `--once`: the Report as tables, eager and compiled side by side."""

from __future__ import annotations

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from kscope.render.columns import Words
from kscope.render.names import short_name
from kscope.render.text import fmt_bytes, traffic_text
from kscope.render.verdict import call_text, explanation, measure_text, verdict_line
from kscope.render.view import (
    KERNELS,
    KERNELS_ONCE,
    autotune_lines,
    break_where,
    break_words,
    device_text,
    error_detail,
    error_where,
    fmt_us,
    grad_text,
    mode_label,
    places_text,
    transfers_text,
    where_text,
)
from kscope.report.model import Kernel, ModeResult, Report


class KernelName:
    """A kernel name in a rich table: cut in the middle to the column's width, not at the end."""

    def __init__(self, name: str, style: str = "", suffix: str = ""):
        self.name, self.style, self.suffix = name, style, suffix

    def __rich_measure__(self, console, options):
        from rich.measure import Measurement

        full = len(short_name(self.name, 10**6)) + len(self.suffix)
        return Measurement(min(12, full), full)

    def __rich_console__(self, console, options):
        text = Text(short_name(self.name, max(1, options.max_width - len(self.suffix))), style=self.style)
        if self.suffix:
            text.append(self.suffix, style="dim")
        yield text


def header(report: Report) -> Text:
    text = Text()
    text.append("kscope ", style="bold")
    text.append(where_text(report), style="bold cyan")
    text.append(f"  {device_text(report)}  torch {report.torch_version}", style="dim")
    how, detail = grad_text(report)
    if how:
        text.append(f"\n{how}", style="bold magenta")
        text.append(f": {detail}" if detail else "")
    if mode_label(report):
        text.append(f"\ntorch.compile: {mode_label(report)}", style="bold magenta")
    return text


def mode_table(report: Report, title: str, mode: ModeResult | None) -> Table:
    table = Table(title=title, title_justify="left", expand=True, pad_edge=False)
    phases = mode.phases if mode is not None else ()
    tagged = len(phases) > 1 or any(p.phase != "forward" for p in phases)
    columns = KERNELS.pick("phase", *KERNELS_ONCE.keys) if tagged else KERNELS_ONCE
    columns.add_to(table, lines={"max_width": max(12, _width() // 3)})
    if mode is None:
        table.add_row(*columns.given(kernel=Text("no result", style="red")))
        return table
    words = Words(home=report.home)
    for k in mode.kernels:
        name = KernelName(k.name, "bold green" if k.fused else "", " (extern)" if k.kind == "extern" else "")
        table.add_row(*columns.cells(k, words, kernel=name))
    table.add_section()
    # the totals, as kernel-shaped rows of the same columns: a total has no lines, the mode's no phase
    totals = [(p, p.phase, f"{p.phase} per call") for p in (phases if tagged else ())] + [(mode, "", "per call")]
    for t, phase, name in totals:
        row = Kernel(name, t.launches, t.kernel_time_us, t.bytes_read, t.bytes_written, phase=phase)
        table.add_row(*columns.cells(row, words, kernel=Text(name, style="bold")))
    multiple = transfers_text(report, mode.bytes_total)
    traffic = (
        f"traffic {fmt_bytes(mode.bytes_total)}" + (f" = {multiple} array-sized transfers" if multiple else "")
        if mode.bytes_total is not None
        else f"traffic {traffic_text(mode)} (see the notes)"
    )
    table.caption = (
        traffic
        + (f", {mode.achieved_gbps:.1f} GB/s" if mode.achieved_gbps else "")
        + (f"; memcpy {mode.memcpy}, memset {mode.memset}" if mode.memcpy or mode.memset else "")
        + (f"; {fmt_bytes(mode.bytes_saved)} written only for backward" if mode.bytes_saved else "")
    )
    return table


def _width() -> int:
    """The terminal's width, as rich sees it (COLUMNS, else the terminal, else 80)."""
    from rich.console import Console

    return Console().width


def fused_table(mode: ModeResult) -> Table | None:
    fused = [k for k in mode.kernels if k.fused]
    if not fused:
        return None
    table = Table(title="fused kernels", title_justify="left", expand=True, pad_edge=False)
    table.add_column("kernel", style="green")
    table.add_column("ops fused", overflow="fold")
    for k in fused:
        table.add_row(short_name(k.name), ", ".join(k.ops) or k.what or "")
    return table


def timing_line(report: Report) -> Text:
    """"compiled 1.9× slower by call time: call 4.6 µs → 21 µs (middle half …; 200 calls each)",
    then the kernels' own verdict as the explanation: "kernels 20.0× faster, but the compiled call
    costs 17 µs more: wrapper and guards dominate at this size: kernel time 4.0 µs → 0.2 µs (…)",
    then which measure the verdict uses and why."""
    e, c, s = report.eager, report.compiled, report.speedup
    text = Text()
    if not e or not c or s is None:
        return text
    style = {"faster": "bold green", "slower": "bold red", "busy": "bold yellow"}.get(s.verdict, "bold")
    text.append(verdict_line(report), style=style)
    call = call_text(report)
    if call:
        text.append(f"{'' if s.verdict == 'busy' else ' by call time'}: {call}")
        text.append(_middle(e.call_time_us_range, c.call_time_us_range, c.call_samples), style="dim")
    why = explanation(report)
    text.append(f"\n{why}: " if why else "\n")
    text.append(f"kernel time {fmt_us(e.kernel_time_us)} → {fmt_us(c.kernel_time_us)}")
    text.append(_middle(e.kernel_time_us_range, c.kernel_time_us_range, c.kernel_samples), style="dim")
    text.append(f"\n{measure_text(report)}", style="dim")
    return text


def _middle(eager: tuple | None, compiled: tuple | None, samples: int | None) -> str:
    if not eager or not compiled:
        return ""
    spread = ", ".join(f"{fmt_us(lo)}–{fmt_us(hi)}" for lo, hi in (eager, compiled))
    return f" (middle half {spread}; {samples} calls each)"


def compile_line(mode: ModeResult, home: str = "") -> Text:
    text = Text()
    if mode.compile_s is not None:
        text.append(f"compile {mode.compile_s:.2f} s, ")
    text.append(f"{mode.graphs} graph{'s' if mode.graphs != 1 else ''}")
    if mode.graph_breaks:
        text.append(f", {len(mode.graph_breaks)} graph break(s):", style="bold yellow")
        for b in mode.graph_breaks:
            text.append(f"\n  {break_where(b, home)}: {b.reason}", style="yellow")
            for line in break_words(b):
                text.append("\n    " + line.replace("\n", "\n      "), style="dim" if line.startswith("dynamo") else "italic")
    if mode.cuda_graphs is not None:
        text.append(f"\n{mode.cuda_graphs.line()}", style="yellow" if mode.cuda_graphs.skipped else "")
    for line in autotune_lines(mode):
        text.append(f"\n{line}")
    return text


def round_trips_table(trips, home: str = "") -> Table:
    """The compiled round trips, largest first: what was left between kernels, and why."""
    table = Table(title="compiled round trips (not fused)", title_justify="left", expand=True, pad_edge=False)
    table.add_column("buffer", no_wrap=True, min_width=6)
    table.add_column("bytes", justify="right", no_wrap=True, min_width=8)
    table.add_column("producer → consumers", overflow="fold", ratio=1)
    table.add_column("lines", overflow="fold", ratio=1, max_width=max(12, _width() // 4))
    table.add_column("why", overflow="fold", ratio=2)
    for t in trips:
        why = Text(t.reason)
        if t.hint:
            why.append(f"\nhint: {t.hint}", style="italic")
        table.add_row(t.buffer + (f" ×{t.count}" if t.count > 1 else ""), fmt_bytes(t.bytes), f"{t.producer} → {', '.join(t.consumers)}",
                      places_text(t.lines, home), why)
    return table


def errors_text(report: Report) -> Text:
    text = Text()
    for e in report.errors:
        where = error_where(e)
        text.append(f"error ({e.stage}) ", style="bold red")
        text.append(f"{where} " if where else "")
        text.append(f"{error_detail(e)}\n")
    return text


class SideBySide:
    """Two renderables side by side when the console is wide enough, else one above the other."""

    def __init__(self, left: RenderableType, right: RenderableType, min_width: int = 140):
        self.left, self.right, self.min_width = left, right, min_width

    def __rich_console__(self, console, options):
        if options.max_width < self.min_width:
            yield self.left
            yield self.right
            return
        grid = Table.grid(expand=True, padding=(0, 2))
        grid.add_column(ratio=1)
        grid.add_column(ratio=1)
        grid.add_row(self.left, self.right)
        yield grid
