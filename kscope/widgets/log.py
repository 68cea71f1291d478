"""What the user's code printed (and kscope's own notes), captured from the worker."""

from __future__ import annotations

from textual.widgets import RichLog

MAX_LINES = 2000


class LogPane(RichLog):
    DEFAULT_CSS = "LogPane { border: round $primary; height: 8; }"

    def __init__(self, **kwargs):
        super().__init__(max_lines=MAX_LINES, wrap=True, markup=False, highlight=False, **kwargs)

    def on_mount(self) -> None:
        self.border_title = "output"
