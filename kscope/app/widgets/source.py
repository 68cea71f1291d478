"""The target's source: a kernel's lines lit up; a chosen line says which kernels it became."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from kscope.render.view import kernels_of_line
from kscope.report.model import Report

CONTEXT = 2  # lines shown around the target's definition


class SourcePane(Vertical):
    DEFAULT_CSS = """
    SourcePane OptionList { height: 1fr; border: none; }
    SourcePane .answer { height: 2; color: $text-muted; }
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.report: Report | None = None
        self.lit: tuple[int, ...] = ()
        self.first = 1

    def compose(self) -> ComposeResult:
        yield OptionList()
        yield Static("select a kernel to light up its lines; select a line to see its kernels", classes="answer")

    def show(self, report: Report | None, lit: tuple[int, ...] | None = None) -> None:
        self.report = report or self.report
        if lit is not None:
            self.lit = lit
        if self.report is None or not self.report.source:
            return
        lines = self.report.source.splitlines()
        first, last = self.report.target_lines or (1, len(lines))
        self.first, last = max(1, first - CONTEXT), min(len(lines), last + CONTEXT)
        options = self.query_one(OptionList)
        keep = options.highlighted
        options.clear_options()
        options.add_options([self._option(n, lines[n - 1]) for n in range(self.first, last + 1)])
        if self.lit:
            options.highlighted = max(0, min(self.lit) - self.first)
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
        eager, compiled = kernels_of_line(self.report, number)
        answer = f"line {number} → eager: {', '.join(eager) or '—'}; compiled: {', '.join(compiled) or '—'}"
        self.query_one(".answer", Static).update(answer)
