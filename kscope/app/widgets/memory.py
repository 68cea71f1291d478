"""The memory tab (key a): what one call holds, eager → compiled: the peak above what existed
before the call, what it holds at its end, and the tensors alive at each mode's peak with their
category, what allocated them and the line (render.memory, `--once`'s words)."""

from __future__ import annotations

from textual.widgets import DataTable

from kscope.render.memory import memory_rows, memory_title
from kscope.report.model import Report

NOT_MEASURED = "memory: not measured for this run (a half failed, or the worker ran an older kscope)"
COLUMNS = (("mode", 9), ("bytes", 9), ("category", 16), ("allocated by", 28), ("line", 24))


class MemoryPane(DataTable):
    """One row per tensor alive at a mode's peak; the title is the border's."""

    DEFAULT_CSS = "MemoryPane { height: auto; max-height: 16; border-title-align: left; }"

    def __init__(self, **kwargs):
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._shown: tuple | None = None

    def on_mount(self) -> None:
        for label, width in COLUMNS:
            self.add_column(label, width=width, key=label)

    def show(self, report: Report | None) -> None:
        title = None if report is None else memory_title(report)
        rows = [] if report is None else memory_rows(report)
        if (title, rows) == self._shown:  # the same figures: no new layout (issue 39)
            return
        self._shown = (title, rows)
        self.border_title = title if title is not None else NOT_MEASURED
        self.clear()
        for row in rows:
            self.add_row(*row)
