"""A mode's kernels as a table, updated in place row by row (never cleared and refilled)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from kscope.render.names import short_name
from kscope.render.view import KERNELS_APP, kernel_detail, kernel_rows, vanished
from kscope.report.model import Kernel, ModeResult

# The columns are KERNELS_APP's; the launches cell also says what changed since the last save: "1→2", "1 new".
MIN_NAME = 12


def forget_renders(table: DataTable) -> None:
    """Drop the table's rendered rows and cells: each is cached under the table's update count,
    which every update_cell raises, so those of an earlier save are never read again, yet textual
    keeps them until its LRU caches are full (10,000 cells, 1,000 rows and lines a table). Kept,
    they grew the app ~70 kB a save for hundreds of saves, and the GC's full passes with them."""
    clear = getattr(table, "_clear_caches", None)  # textual's own, as after sort() or clear()
    if clear is not None:
        clear()


class KernelTable(Vertical):
    class KernelSelected(Message):
        """The cursor moved to a kernel: the source and code panes follow it."""

        def __init__(self, mode_name: str, kernel: Kernel):
            super().__init__()
            self.mode_name, self.kernel = mode_name, kernel

    DEFAULT_CSS = """
    KernelTable { border: round $primary; height: 1fr; min-height: 6; }
    KernelTable DataTable { height: 1fr; }
    KernelTable .detail { height: 4; color: $text-muted; padding: 0 1; }
    """

    def __init__(self, mode_name: str, **kwargs):
        super().__init__(**kwargs)
        self.mode_name = mode_name
        self.mode: ModeResult | None = None
        self.previous: ModeResult | None = None
        self.peak: float | None = None
        self.name_width = KERNELS_APP["kernel"].width
        self._note = ""
        """What the table says under it (compiling…, a plan and its progress), kept across redraws."""
        self._drawn: tuple | None = None  # what show() drew last
        self.lit: set[str] = set()
        """Kernel names shown lit (a chosen round trip's producer and consumers)."""

    def compose(self) -> ComposeResult:
        self.border_title = f"{self.mode_name} kernels"
        table = DataTable(cursor_type="row", zebra_stripes=True)
        for c in KERNELS_APP:
            table.add_column(c.header(narrow=True), key=c.key, width=c.width)
        yield table
        yield Static("", classes="detail")

    def show(
        self, mode: ModeResult | None, previous: ModeResult | None, *, note: str = "", peak: float | None = None,
        home: str | None = None, what: str = "",
    ) -> bool:
        """home: the target's file as places name it (its lines need no file name); what: said in
        the title after the mode's name (the rows are inductor's plan, not a run's). False: the
        same rows as shown, nothing redrawn (report_stages' frames skip it)."""
        title = f"{self.mode_name} kernels" + (f" — {what}" if what else "")
        title_changed = self.border_title != title
        if title_changed:
            self.border_title = title
        home = home if home is not None else getattr(self, "home", "")
        peak = peak if peak is not None else self.peak
        drawn = (mode, previous, note, peak, home, frozenset(self.lit), self.name_width)
        if drawn == self._drawn:
            return title_changed  # the same rows (a run's eager half comes three times): redrawn, they cost a whole paint
        self._drawn = drawn
        self.mode, self.previous, self._note, self.home, self.peak = mode, previous, note, home, peak
        table = self.query_one(DataTable)
        rows = kernel_rows(mode, previous)
        # rows keyed by position, not by kernel: row i is always the mode's kernel i (the cursor's
        # index picks the kernel), and a save with as many kernels as the last updates cells only,
        # which repaints the table; a row added or removed lays the whole screen out (issue 39)
        for i in range(table.row_count - 1, len(rows) - 1, -1):
            table.remove_row(str(i))
        existing = {k.value for k in table.rows}
        for i, r in enumerate(rows):
            tag = f"{r.tag} " if r.tag else ""
            name = Text(tag, style="bold magenta" if r.tag == "bwd" else "bold cyan")
            name.append(
                ("★ " if r.fused else "") + short_name(r.name, self.name_width - 2 - len(tag)),
                style="bold green" if r.fused else "",
            )
            if r.name in self.lit:
                name.stylize("reverse")
            launches = Text(r.launches) if not r.change else Text(
                f"{r.launches} new" if r.change == "new" else r.change, style="bold yellow"
            )
            cells = [Text(v, justify="right" if c.align == "r" else None) if isinstance(v, str) else v
                     for c, v in zip(KERNELS_APP, KERNELS_APP.cells(r.kernel, kernel=name, launches=launches))]
            if str(i) in existing:
                for c, value in zip(KERNELS_APP, cells):
                    table.update_cell(str(i), c.key, value)
            else:
                table.add_row(*cells, key=str(i))
        forget_renders(table)
        gone = vanished(mode, previous)
        subtitle = note or (f"gone: {', '.join(short_name(g, 24) for g in gone)}" if gone else "")
        if self.border_subtitle != subtitle:
            self.border_subtitle = subtitle
        self._show_detail(table.cursor_row)
        return True

    def note(self, text: str) -> None:
        """Say this under the table (a plan's progress) without redrawing its rows."""
        self._note, self._drawn = text, None  # the next show() says its own note again
        if self.border_subtitle != text:
            self.border_subtitle = text

    def light(self, names: set[str]) -> None:
        """Show these kernels' rows lit (none: an empty set)."""
        if names != self.lit:
            self.lit = names
            if self.mode is not None:
                self.show(self.mode, self.previous, note=self._note, peak=self.peak)

    def on_resize(self) -> None:
        """Give the kernel name whatever width the other columns leave."""
        table = self.query_one(DataTable)
        others = sum(c.width + 2 * table.cell_padding for c in KERNELS_APP if c.key != "kernel")
        name_width = max(MIN_NAME, self.content_size.width - others - 2 * table.cell_padding - 2)
        column = table.columns.get("kernel")
        if column is not None and column.width != name_width:
            column.width = name_width
            self.name_width = name_width
            table.refresh()
            if self.mode is not None:
                self.show(self.mode, self.previous, note=self._note, peak=self.peak)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(event.cursor_row)
        if self.mode is not None and 0 <= event.cursor_row < len(self.mode.kernels):
            self.post_message(self.KernelSelected(self.mode_name, self.mode.kernels[event.cursor_row]))

    def _show_detail(self, index: int) -> None:
        detail = self.query_one(".detail", Static)
        text = ""
        if self.mode is not None and 0 <= index < len(self.mode.kernels):
            text = kernel_detail(self.mode.kernels[index], self.peak, self.home)
        detail.update(text, layout=False)  # fixed height: no new layout of the screen
