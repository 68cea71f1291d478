"""What the user's code printed (and kscope's own notes), captured from the worker."""

from __future__ import annotations

from collections import deque

from textual.widgets import RichLog

MAX_LINES = 2000


class LogPane(RichLog):
    DEFAULT_CSS = "LogPane { border: round $primary; height: 8; }"

    def __init__(self, **kwargs):
        super().__init__(max_lines=MAX_LINES, wrap=True, markup=False, highlight=False, **kwargs)
        self._unseen: deque[str] = deque(maxlen=MAX_LINES)
        """Lines written while the pane has no size (a hidden tab): RichLog would keep every
        write until shown, without bound; we keep the newest MAX_LINES."""

    def write(self, content, *args, **kwargs):
        if not self.size.width:
            self._unseen.extend(str(content).splitlines())
            return self
        return super().write(content, *args, **kwargs)

    def on_resize(self) -> None:
        if self._unseen and self.size.width:
            text = "\n".join(self._unseen)
            self._unseen.clear()
            super().write(text)

    def on_mount(self) -> None:
        self.border_title = "output"
