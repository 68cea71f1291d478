"""Each compiled kernel that inductor generated, with the ATen ops it fused."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from kscope.render.view import places_text
from kscope.report.model import Report


class FusedKernels(Static):
    DEFAULT_CSS = "FusedKernels { height: auto; border: round $primary; padding: 0 1; }"

    def on_mount(self) -> None:
        self.border_title = "fused kernels"

    def show(self, report: Report | None) -> None:
        compiled = report.compiled if report else None
        if compiled is None:
            self.update(Text("no compiled result yet", style="dim"), layout=False)
            return
        table = Table.grid(padding=(0, 1))
        table.add_column(no_wrap=True, overflow="ellipsis", style="bold green")
        table.add_column(overflow="fold")
        for k in compiled.kernels:
            if k.fused:
                ops = ", ".join(op.removeprefix("aten.") for op in k.ops) or k.what or ""
                lines = f"  (line {places_text(k.lines, report.home)})" if k.lines else ""
                table.add_row(k.name, Text(ops + lines))
        breaks = compiled.graph_breaks
        if breaks:
            for b in breaks:
                table.add_row(Text("graph break", style="bold yellow"), Text(f"line {b.line}: {b.reason}", style="yellow"))
        if not table.row_count:
            table.add_row(Text("nothing fused", style="dim"), "")
        self.update(table, layout=False)  # the pane's height is fixed by CSS
