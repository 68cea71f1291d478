"""The Report as GitHub-flavoured Markdown (`--once --markdown`): paste-ready for an issue, a PR
or a slide. The same words as `--once` (view.py's helpers); a figure kscope does not know reads
"unknown", never 0. No torch, textual or rich here: a machine with torch alone can print it."""

from __future__ import annotations

from collections.abc import Callable

from kscope.render import lines, roofline, view
from kscope.render.columns import Columns, Words
from kscope.render.memory import memory_rows, memory_title
from kscope.render.ranks_rows import COLLECTIVES, OVERVIEW, collective_rows, difference_lines
from kscope.render.sweep_rows import SWEEP_NARROW
from kscope.render.text import fmt_bytes, fmt_count, summary_line, traffic_text
from kscope.render.verdict import verdict_line, verdict_text
from kscope.report.model import GraphBreak, ModeResult, Recompile, Report, RunError

UNKNOWN = "unknown"


def report_markdown(report: Report) -> str:
    """Title, summary, eager and compiled side by side, fused kernels, graph breaks, recompiles,
    traces, notes and errors (a sweep: its table of sizes instead of the modes)."""
    parts = [_title(report)]
    if report.sweep is not None:
        parts += _sweep(report)
    elif report.eager is not None or report.compiled is not None:
        verdict = verdict_line(report)
        parts.append(f"**{summary_line(report, UNKNOWN)}**" + (f" · {verdict}" if verdict else ""))
        parts.append(_modes_table(report))
        if report.compiled is not None:
            parts += _compiled_sections(report, report.compiled)
        memory = _memory(report)
        if memory:
            parts.append(memory)
        if report.line_costs:
            shown = lines.costliest(report)
            parts.append(f"#### Costliest lines ({len(shown)} of {len(report.line_costs)})\n\n"
                         + columns_table(lines.LINES, shown, report.home)
                         + "\n\n≈: a kernel's time shared among its lines by their bytes, not measured per line")
        if roofline.any_flops(report):
            parts.append(_roofline(report))
    if report.ranks:
        parts += ranks_markdown(report)
    if report.traces:
        listed = ", ".join(f"{mode} {code(view.shown_path(path))}" for mode, path in report.traces.items())
        parts.append(f"Chrome traces (Perfetto, `kscope TRACE`): {listed}")
    parts += _listed("Notes", [cell(n) for n in report.notes])
    parts += _listed("Errors", [_error(e) for e in report.errors])
    return "\n\n".join(parts) + "\n"


def _memory(report: Report) -> str:
    """The memory section: one call's peak and end, and the tensors alive at the peak ("" when unknown)."""
    title = memory_title(report)
    if title is None:
        return ""
    rows = [[mode, size, category, code(by), code(line)] for mode, size, category, by, line in memory_rows(report)]
    return (f"#### Memory\n\n{cell(title)}\n\n"
            + table(["mode", "bytes", "category", "allocated by", "line"], rows, "lrlll"))


def _roofline(report: Report) -> str:
    return ("#### Roofline (FLOP/byte and FLOP/s)\n\n" + columns_table(roofline.ROOFLINE, roofline.points(report))
            + f"\n\n{cell(roofline.peaks_line(report, UNKNOWN))}")


def _error(e: RunError) -> str:
    """"**eager** `target.py:4`: ValueError: no good"."""
    where = view.error_where(e)
    return f"**{e.stage}**" + (f" {code(where)}" if where else "") + f": {cell(view.error_detail(e))}"


def cell(text: str) -> str:
    """Text for a table cell or a list item: a `|` escaped (GFM splits cells on it, even inside
    backticks), line breaks folded."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(text: str) -> str:
    return f"`{cell(text)}`" if text else ""


def table(header: list[str], rows: list[list[str]], align: str = "") -> str:
    """A GFM table; `align`, per column: "l" or "r" (default "l")."""
    marks = ["---:" if a == "r" else "---" for a in align.ljust(len(header), "l")]
    lines = [header, marks, *rows]
    return "\n".join("| " + " | ".join(row) + " |" for row in lines)


def columns_table(columns: Columns, rows, home: str = "") -> str:
    """A GFM table of declared columns (render.columns), a row of cells from each of `rows`: a
    name or a place as code, every other cell as text."""
    words = Words(home=home, unknown=UNKNOWN)
    cells = [[code(x) if c.code else cell(x) for c, x in zip(columns, columns.cells(row, words))] for row in rows]
    return table(columns.labels(), cells, columns.align)


def known(value, fmt: Callable) -> str:
    """fmt(value), or "unknown" for None."""
    return UNKNOWN if value is None else fmt(value)


def _title(report: Report) -> str:
    text = f"### kscope: {code(view.where_text(report))}"
    facts = [cell(view.device_text(report))] + ([f"torch {cell(report.torch_version)}"] if report.torch_version else [])
    how, detail = view.grad_text(report)
    if how:
        facts.append(cell(how + (f" ({detail})" if detail else "")))
    if view.mode_label(report):
        facts.append(f"torch.compile: {code(view.mode_label(report))}")
    return text + "\n\n" + " · ".join(facts)


def _modes_table(report: Report) -> str:
    e, c = report.eager, report.compiled

    def row(label: str, fig: Callable[[ModeResult], str]) -> list[str]:
        return [label] + [cell(fig(m)) if m is not None else "no result" for m in (e, c)]

    def traffic(m: ModeResult) -> str:
        total = traffic_text(m, UNKNOWN)
        return f"{total} ({fmt_bytes(m.bytes_read, UNKNOWN)} + {fmt_bytes(m.bytes_written, UNKNOWN)})"

    def kernel_time(m: ModeResult) -> str:
        spread = m.kernel_time_us_range
        middle = f", middle half {view.fmt_us(spread[0])}–{view.fmt_us(spread[1])}" if spread else ""
        calls = f", {m.kernel_samples} calls" if m.kernel_samples else ""
        return view.fmt_us(m.kernel_time_us) + (f" ({middle[2:]}{calls})" if middle or calls else "")

    rows = [
        row("launches", lambda m: fmt_count(m.launches)),
        row("traffic (read + written)", traffic),
        *([] if report.reads_parameters else [
            row("array-sized transfers", lambda m: view.transfers_text(report, m.bytes_total) or UNKNOWN)]),
        row("kernel time (median)", kernel_time),
        row("call time (median)", lambda m: known(m.call_time_us, view.fmt_us)),
        row("round trips", lambda m: view.round_trips_text(m, UNKNOWN)),
        ["verdict (call time)", "", cell(verdict_text(report) or UNKNOWN)],
        ["kernels alone", "", cell(report.speedup.kernel_text() if report.speedup and report.speedup.kernel_text() else UNKNOWN)],
    ]
    if c is not None:
        graphs = f"{known(c.graphs, str)} graph{'s' if c.graphs != 1 else ''}"
        rows.append(["compile", "", cell(f"{known(c.compile_s, lambda s: f'{s:.2f} s')}, {graphs}")])
    return table(["per call", "eager", "compiled"], rows, "lrr")


def _lines(report: Report, places) -> str:
    return ", ".join(code(p.text()) for p in places)


def _compiled_sections(report: Report, c: ModeResult) -> list[str]:
    parts = []
    fused = [k for k in c.kernels if k.fused]
    if fused:
        rows = [
            [code(k.name), cell(", ".join(k.ops) or k.what or ""), _lines(report, k.lines) or "no line",
             cell(fmt_bytes(k.bytes_total, UNKNOWN))]
            for k in fused
        ]
        header = ["kernel", "ops fused", "lines", "traffic / call"]
        parts.append("#### Fused kernels\n\n" + table(header, rows, "lllr"))
    title = f"Graph breaks ({c.graphs} graphs)" if c.graphs is not None else "Graph breaks"
    parts += _listed(title, [_graph_break(report, b) for b in c.graph_breaks])
    parts += _listed("Recompiles", [_recompile(r) for r in c.recompiles])
    extra = view.autotune_lines(c) + ([c.cuda_graphs.line()] if c.cuda_graphs is not None else [])
    parts += _listed("Compile mode", [cell(x) for x in extra])
    return parts


def _graph_break(report: Report, b: GraphBreak) -> str:
    """"`line 11`: data-dependent branch: … ", then dynamo's words, a sub-item each."""
    where = code(view.break_where(b, report.home)) + ": " if b.line else ""
    words = "".join(f"\n  - {cell(line)}" for line in view.break_words(b))
    return where + cell(b.reason) + words


def _recompile(r: Recompile) -> str:
    """"`stepper` line 4: `G['step'] == 1`": the function, and the guard that failed."""
    where = code(r.function) + (f" line {r.line}" if r.line else "") + ": " if r.function else ""
    return where + code(r.reason)


def _listed(title: str, items: list[str]) -> list[str]:
    return [f"#### {title}\n\n" + "\n".join(f"- {x}" for x in items)] if items else []


def _sweep(report: Report) -> list[str]:
    sweep = report.sweep
    parts = []
    if sweep.points:
        parts.append("#### Size sweep\n\n" + columns_table(SWEEP_NARROW, sweep.points))
        parts.append(view.SWEEP_COLUMNS)
    parts.append(f"**{cell(sweep.crossover_text())}** · {cell(view.sweep_how(sweep))}")
    if sweep.stopped:
        parts.append(f"Stopped early: {cell(sweep.stopped)}")
    return parts


def ranks_markdown(report: Report) -> list[str]:
    """The overview and each rank's collectives as GFM sections ."""
    if not report.ranks:
        return []
    parts = [f"#### Ranks ({len(report.ranks)})", columns_table(OVERVIEW, report.ranks)]
    parts += [f"**{line}**" if "differs" in line else line for line in difference_lines(report)]
    for r in report.ranks:
        rows = collective_rows(r)
        if rows:
            parts.append(f"Rank {r.rank}, collectives per call:\n\n" + columns_table(COLLECTIVES, rows))
    return parts
