"""The source tab: the file of the selected kernel's lines, those lines lit; a chosen line says which
kernels it became (and lights them in the kernel tables) and what it cost. A gutter beside each line
gives its bytes and time per call, eager → compiled, with a bar against the costliest line; `h`
lists the run's costliest lines of every file instead, hottest first. It moves between the files
that hold lines of this run (action_step; the app's keys [ and ], kscope.app.links): the target's,
the user's modules it imports, a library's (read-only: kscope never writes a file)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from kscope.render.lines import gutter, line_answer
from kscope.render.view import kernels_of_line
from kscope.report.lines import LineCost, in_file
from kscope.report.model import Place, Report

CONTEXT = 2  # lines shown around the target's definition
WIDE = 110
"""From this width on the gutter shows eager → compiled; below, the compiled half alone."""


class SourcePane(Vertical):
    DEFAULT_CSS = """
    SourcePane OptionList { height: 1fr; border: none; }
    SourcePane .file { height: 1; color: $text-muted; }
    SourcePane .answer { height: 2; color: $text-muted; }
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.report: Report | None = None
        self.places: tuple[Place, ...] = ()
        self.file = ""  # the file shown, as places name it
        self.lit: tuple[int, ...] = ()  # its lines lit
        self.first = 1
        self.hot = False  # the costliest lines of every file, instead of one file
        self.entries: list[tuple[str, int]] = []  # (file, line) of each option shown
        self._gutters = False
        self._quiet: int | None = None  # the option a redraw highlighted: no user's move, lights nothing

    class LineChosen(Message):
        """A line was chosen: its kernels, to light in the kernel tables."""

        def __init__(self, eager: set[str], compiled: set[str]):
            super().__init__()
            self.eager, self.compiled = eager, compiled

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
        if lit is not None:  # kept when no report is here yet: a kernel can be chosen before the tab's first show
            self.places = lit
            self.hot = False
            # the innermost line: a library's, where a library issued the ops (the model's code)
            self.file = (lit[0].via or lit[0]).file if lit else self.file
        if self.report is None:
            return
        if self.file not in self.files:
            self.file = self.report.home
        self._draw()

    def toggle_hot(self) -> None:
        """The costliest lines of the run, or back to the file."""
        self.hot = not self.hot
        if self.report is not None:
            self._draw()

    def action_step(self, by: int) -> None:
        files = self.files
        self.hot = False
        if files:
            self.file = files[(files.index(self.file) + by) % len(files)] if self.file in files else files[0]
            self._draw()

    def _text(self, file: str) -> list[str]:
        report = self.report
        return (report.sources.get(file) or (report.source if file == report.home else "")).splitlines()

    def _draw(self) -> None:
        report, files = self.report, self.files
        home = report.home
        known = report.line_costs  # None: unknown (an older kscope's Report), no gutter
        costs = known or ()
        self._gutters = bool(costs)
        widest = max((c.hottest_us for c in costs), default=0.0)
        wide = self.size.width >= WIDE or not self.size.width
        self.lit = tuple(sorted({p.line for p in self.places if p.file == self.file}
                                | {p.via.line for p in self.places if p.via and p.via.file == self.file}))
        options = self.query_one(OptionList)
        keep = options.highlighted
        options.clear_options()
        if self.hot:
            self.query_one(".file", Static).update(Text("costliest lines of the run (h: back to the file)", style="bold"),
                                                   layout=False)  # fixed height: no new layout of the screen
            placed = [c for c in costs if c.place is not None]
            self.entries = [(c.place.file, c.place.line) for c in placed]
            texts = {f: self._text(f) for f, _ in self.entries}
            shown = [self._option(i, f, n, c, widest, wide, texts[f], label=c.place.text(home))
                     for i, ((f, n), c) in enumerate(zip(self.entries, placed))]
            if not shown:
                shown = [Option(Text("this Report has no costs per line (a kscope before schema 11 made it)"
                                     if known is None else "no line of this run issued work", style="dim"))]
            self._quiet = 0
            options.add_options(shown)
            options.highlighted = 0
            return
        lines = self._text(self.file)
        others = f"  ({files.index(self.file) + 1}/{len(files)}: [ ] other files)" if len(files) > 1 else ""
        head = f"{self.file}{others}" + ("  (h: costliest lines)" if costs else "")
        self.query_one(".file", Static).update(Text(head, style="bold"), layout=False)
        if not lines:
            self.entries = []
            return
        first, last = report.target_lines if self.file == home and report.target_lines else (1, len(lines))
        self.first, last = max(1, first - CONTEXT), min(len(lines), last + CONTEXT)
        here = in_file(costs, self.file)
        self.entries = [(self.file, n) for n in range(self.first, last + 1)]
        options.add_options([self._option(i, self.file, n, here.get(n), widest, wide, lines)
                             for i, (_, n) in enumerate(self.entries)])
        if self.lit and self.first <= min(self.lit) <= last:
            self._quiet = options.highlighted = min(self.lit) - self.first
        elif keep is not None:
            self._quiet = options.highlighted = min(keep, options.option_count - 1)

    def _option(self, index: int, file: str, number: int, cost: LineCost | None, widest: float, wide: bool,
                text: list[str], label: str | None = None) -> Option:
        lit = file == self.file and number in self.lit and label is None
        code = text[number - 1] if 0 < number <= len(text) else ""
        line = Text(gutter(cost, widest, wide) if self._gutters else "", style="cyan" if cost else "")
        line.append(f"{label or number:>4} ", style="bold yellow" if lit or label else "dim")
        line.append(code.strip() if label else code, style="bold on dark_green" if lit else "")
        return Option(line, id=str(index))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if self.report is None or event.option.id is None or int(event.option.id) >= len(self.entries):
            return
        file, number = self.entries[int(event.option.id)]
        eager, compiled = kernels_of_line(self.report, number, file)
        cost = in_file(self.report.line_costs or (), file).get(number)
        where = f"{file}:{number}" if file != self.report.home else f"line {number}"
        answer = f"{where} → eager: {', '.join(eager) or '—'}; compiled: {', '.join(compiled) or '—'}"
        if self.report.line_costs:  # None (unknown: an older kscope's Report) or none at all: nothing to say
            answer += f"\n{line_answer(cost)}"
        self.query_one(".answer", Static).update(answer, layout=False)
        quiet, self._quiet = self._quiet, None
        if self.query_one(OptionList).has_focus and quiet != int(event.option.id):  # the user's move, not a redraw's
            self.post_message(self.LineChosen(set(eager), set(compiled)))
