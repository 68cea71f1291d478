"""Estimated memory traffic per mode and per kernel, in bytes and array-sized transfers, as bars."""

from __future__ import annotations

from rich.bar import Bar
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from kscope.render.text import PHASE_TAGS, fmt_bytes, phases_ran, traffic_text
from kscope.render.view import roofs_note, saving, short_level, transfers_text
from kscope.report.model import Report

KERNEL_ROWS = 4


class TrafficBars(Static):
    DEFAULT_CSS = "TrafficBars { height: 10; border: round $primary; padding: 0 1; }"

    def on_mount(self) -> None:
        self.border_title = "memory traffic / call"

    compact = False
    """Narrow screens: the two mode bars and the saving, no per-kernel rows."""

    def show(self, report: Report | None) -> None:
        if report is None or report.eager is None:
            self.update(Text("waiting for the first run…", style="dim"), layout=False)
            return
        modes = [("eager", report.eager), ("compiled", report.compiled)]
        top = max((m.bytes_total or 0) for _, m in modes if m) or 1
        table = Table.grid(padding=(0, 1), expand=True)
        table.add_column(no_wrap=True, width=16, overflow="ellipsis")
        table.add_column(ratio=1, min_width=6)
        table.add_column(no_wrap=True, justify="right")
        for label, mode in modes:
            if mode is None:
                table.add_row(label, Text("compiling…", style="dim"), "")
                continue
            color = "green" if label == "compiled" else "magenta"
            value = f"{traffic_text(mode, short=True)} {transfers_text(report, mode.bytes_total)}".rstrip()
            if mode.achieved_gbps and not self.compact:
                value += f" {mode.achieved_gbps:.0f} GB/s"
                judged = report.judged(mode)
                if judged is not None and judged.roof.gbps:  # the roof of the level that holds its data
                    value += f" {mode.achieved_gbps / judged.roof.gbps * 100:.0f}% {short_level(judged.roof.level)}"
            table.add_row(Text(label, style="bold"), Bar(top, 0, mode.bytes_total or 0, color=color), value)
        # Below the modes: each phase eager → compiled when backward ran, else the biggest kernels.
        for name, nbytes, value in ([] if self.compact else _detail_rows(report)):
            table.add_row(Text(name, style="dim"), Bar(top, 0, nbytes or 0, color="grey50"), Text(value, style="dim"))
        note = "" if self.compact else saving(report)  # narrow: the summary line says it
        if note:
            note_text = Text(note, style="bold green" if "less" in note else "bold" if "same" in note else "bold red")
            note_text.append(roofs_note(report), style="dim")
            self.update(Group(table, note_text), layout=False)  # the pane's height is fixed by CSS
            return
        self.update(table, layout=False)  # the pane's height is fixed by CSS


def _detail_rows(report: Report) -> list[tuple[str, int | None, str]]:
    """(label, bytes for the bar, value) rows: per phase (bar: compiled) when more than a forward
    ran, else the KERNEL_ROWS kernels that move the most."""
    e, c = report.eager, report.compiled
    ran = phases_ran(report)
    if ran and ran != ["forward"]:
        rows = []
        for phase in ran:
            before, after = (m.phase(phase) if m else None for m in (e, c))
            e_bytes = before.bytes_total if before else 0
            c_bytes = (after.bytes_total if after else 0) if c else None
            value = f"{fmt_bytes(e_bytes)} → {fmt_bytes(c_bytes) if c else '…'}"
            rows.append((f" {PHASE_TAGS[phase]}", c_bytes if c else e_bytes, value))
        return rows
    kernels = [(label, k) for label, m in (("eager", e), ("compiled", c)) if m for k in m.kernels]
    kernels.sort(key=lambda lk: -(lk[1].bytes_total or 0))
    return [(f" {label[0]}: {k.name}", k.bytes_total, fmt_bytes(k.bytes_total)) for label, k in kernels[:KERNEL_ROWS]]

