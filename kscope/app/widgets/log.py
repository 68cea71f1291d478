"""What the user's code printed (and kscope's own notes), captured from the worker.

The pane keeps the newest MAX_LINES lines as plain strings and renders only the rows on screen
(textual's Log). It was a RichLog, which renders every line written into styled strips at once
and keeps them: under a flood of output (8 KB every 0.25 s from the session) that cost ~70 µs a
line to render, and 2,000 kept lines were ~60,000 objects for the cyclic GC, whose full passes
then stalled the event loop 100-300 ms each on a 2-core machine with the worker busy. Strings
are not tracked by the GC, and a screen shows a few rows.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from rich.cells import chop_cells
from textual.widgets import Log

MAX_LINES = 2000


_CONTROL = {c: "\N{REPLACEMENT CHARACTER}" for c in [*range(0x20), 0x7F]}
"""Control characters (escape sequences included) must not reach the terminal: one cell each."""


def wrap(lines: Iterable[str], width: int) -> list[str]:
    """Each line cut into rows of at most `width` cells, as a terminal wraps (no word breaks).
    A blank line is one space: textual's Log drops empty strings."""
    rows: list[str] = []
    for line in lines:
        line = line.expandtabs().translate(_CONTROL)
        if len(line) > width or not line.isascii():  # wide characters take two cells
            rows.extend(chop_cells(line, width) or [" "])
        else:
            rows.append(line or " ")
    return rows


class LogPane(Log):
    DEFAULT_CSS = """
    LogPane { border: round $primary; height: 8; overflow-x: hidden; overflow-y: scroll; }
    """

    def __init__(self, **kwargs):
        super().__init__(max_lines=MAX_LINES, highlight=False, **kwargs)
        self._raw: deque[str] = deque(maxlen=MAX_LINES)
        """The newest lines written, as written: wrapped again when the width changes. Lines
        written while the pane has no size (a hidden tab) wait here, bounded like the pane."""
        self._wrapped_at = 0  # the width the rows on screen were wrapped at

    def write(self, content, scroll_end: bool | None = None):
        """Add lines of text (a trailing newline adds nothing)."""
        lines = str(content).splitlines() or [""]
        self._raw.extend(lines)
        width = self.scrollable_content_region.width
        if width > 0 and width == self._wrapped_at:
            self.write_lines(wrap(lines, width), scroll_end)
        else:
            self._rewrap()
        return self

    def _rewrap(self) -> None:
        width = self.scrollable_content_region.width
        if width <= 0:
            return  # hidden: wrapped when it gets a size
        self._wrapped_at = width
        self.clear()
        self.write_lines(wrap(self._raw, width))

    def _update_size(self, updates: int, lines: list[str]) -> None:
        """Log measures its widest line on a worker thread per write; rows here are wrapped to
        the pane's width, so that width is known (and a flood starts no threads)."""
        update = getattr(self, "_update_maximum_width", None)
        if update is None:  # another textual: let it measure
            return super()._update_size(updates, lines)
        update(updates, self._wrapped_at)

    def on_resize(self) -> None:
        if self.scrollable_content_region.width != self._wrapped_at:
            self._rewrap()

    def on_mount(self) -> None:
        self.border_title = "output"
