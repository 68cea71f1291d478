"""The memory tab (key a): what one call holds, eager → compiled: the peak above what existed
before the call, what it holds at its end (the caption), and the tensors alive at each mode's
peak with their category, what allocated them and the line (render.memory, `--once`'s words)."""

from __future__ import annotations

from textual.containers import Vertical
from textual.widgets import DataTable, Label, Static

from kscope.render.memory import memory_rows, memory_title
from kscope.render.names import middle_cut
from kscope.report.model import Report

NOT_MEASURED = "memory: not measured for this run (a half failed, or the worker ran an older kscope)"
COLUMNS = (("mode", 9), ("bytes", 9), ("category", 16), ("allocated by", 28), ("line", 24))


class MemoryPane(Vertical):
    DEFAULT_CSS = """
    MemoryPane { height: auto; }
    MemoryPane #memory-caption { width: 1fr; height: auto; color: $text-muted; padding: 0 1; }
    MemoryPane DataTable { height: auto; max-height: 12; }
    MemoryPane .detail { height: 2; color: $text-muted; padding: 0 1; }
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._shown: tuple | None = None
        self._rows: list[tuple[str, ...]] = []

    def compose(self):
        yield Label(NOT_MEASURED, id="memory-caption")
        table = DataTable(cursor_type="row", zebra_stripes=True)
        for label, width in COLUMNS:
            table.add_column(label, width=width, key=label)
        yield table
        yield Static("", classes="detail")  # the cursor's row whole: its cells are cut to their columns

    def show(self, report: Report | None) -> None:
        title = None if report is None else memory_title(report)
        rows = [] if report is None else memory_rows(report)
        if (title, rows) == self._shown:  # the same figures: no new layout (issue 39)
            return
        self._shown = (title, rows)
        self.query_one("#memory-caption", Label).update(title if title is not None else NOT_MEASURED)
        table = self.query_one(DataTable)
        table.clear()
        self._rows = rows
        for row in rows:  # cut in the middle, so that a kernel's or a file's name keeps both its ends
            table.add_row(*(middle_cut(cell, width) for cell, (_, width) in zip(row, COLUMNS)))
        self._show_detail(table.cursor_row)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(event.cursor_row)

    def _show_detail(self, index: int) -> None:
        text = ""
        if 0 <= index < len(self._rows):
            mode, size, category, by, line = self._rows[index]
            text = f"{mode}: {size} {category}, allocated by {by} at {line}"
        self.query_one(".detail", Static).update(text, layout=False)  # fixed height: no new layout
