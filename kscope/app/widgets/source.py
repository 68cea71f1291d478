"""The source tab: the file of the selected kernel's lines, those lines lit; a chosen line says which
kernels it became. It moves between the files that hold lines of this run ([ and ]): the target's,
the user's modules it imports, a library's (read-only: kscope never writes a file)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from kscope.render.view import kernels_of_line
from kscope.report.model import Place, Report

CONTEXT = 2  # lines shown around the target's definition


class SourcePane(Vertical):
    DEFAULT_CSS = """
    SourcePane OptionList { height: 1fr; border: none; }
    SourcePane .file { height: 1; color: $text-muted; }
    SourcePane .answer { height: 2; color: $text-muted; }
    """
    BINDINGS = [
        Binding("[", "step(-1)", "previous file", show=False),
        Binding("]", "step(1)", "next file", show=False),
    ]

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.report: Report | None = None
        self.places: tuple[Place, ...] = ()
        self.file = ""  # the file shown, as places name it
        self.lit: tuple[int, ...] = ()  # its lines lit
        self.first = 1

    def compose(self) -> ComposeResult:
        yield Static("", classes="file")
        yield OptionList()
        yield Static("select a kernel to light up its lines; select a line to see its kernels", classes="answer")

    @property
    def files(self) -> list[str]:
        """The files holding lines of this run, the target's first."""
        if self.report is None:
            return []
        home = self.report.home
        return [home] + sorted(f for f in self.report.sources if f != home)

    def show(self, report: Report | None, lit: tuple[Place, ...] | None = None) -> None:
        """A new report keeps the file shown; `lit` (a kernel's places) shows the file of its first."""
        self.report = report or self.report
        if self.report is None:
            return
        if lit is not None:
            self.places = lit
            # the innermost line: a library's, where a library issued the ops (the model's code)
            self.file = (lit[0].via or lit[0]).file if lit else self.file
        if self.file not in self.files:
            self.file = self.report.home
        self._draw()

    def action_step(self, by: int) -> None:
        files = self.files
        if files:
            self.file = files[(files.index(self.file) + by) % len(files)] if self.file in files else files[0]
            self._draw()

    def _draw(self) -> None:
        report, files = self.report, self.files
        home = report.home
        text = report.sources.get(self.file) or (report.source if self.file == home else "")
        lines = text.splitlines()
        self.lit = tuple(sorted({p.line for p in self.places if p.file == self.file}
                                | {p.via.line for p in self.places if p.via and p.via.file == self.file}))
        others = f"  ({files.index(self.file) + 1}/{len(files)}: [ ] other files)" if len(files) > 1 else ""
        self.query_one(".file", Static).update(Text(self.file + others, style="bold"))
        if not lines:
            self.query_one(OptionList).clear_options()
            return
        first, last = report.target_lines if self.file == home and report.target_lines else (1, len(lines))
        self.first, last = max(1, first - CONTEXT), min(len(lines), last + CONTEXT)
        options = self.query_one(OptionList)
        keep = options.highlighted
        options.clear_options()
        options.add_options([self._option(n, lines[n - 1]) for n in range(self.first, last + 1)])
        if self.lit and self.first <= min(self.lit) <= last:
            options.highlighted = min(self.lit) - self.first
        elif keep is not None:
            options.highlighted = min(keep, options.option_count - 1)

    def _option(self, number: int, text: str) -> Option:
        lit = number in self.lit
        line = Text(f"{number:>4} ", style="bold yellow" if lit else "dim")
        line.append(text, style="bold on dark_green" if lit else "")
        return Option(line, id=str(number))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if self.report is None or event.option.id is None:
            return
        number = int(event.option.id)
        eager, compiled = kernels_of_line(self.report, number, self.file)
        answer = f"line {number} → eager: {', '.join(eager) or '—'}; compiled: {', '.join(compiled) or '—'}"
        self.query_one(".answer", Static).update(answer)
