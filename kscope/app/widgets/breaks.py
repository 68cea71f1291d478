"""Graph breaks and recompiles, in plain words, each with the line it points at."""

from __future__ import annotations

import os

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from kscope.report.model import ModeResult


class BreaksPane(OptionList):
    class LineChosen(Message):
        def __init__(self, file: str | None, line: int):
            super().__init__()
            self.file, self.line = file, line

    def show(self, compiled: ModeResult | None, target: str = "") -> None:
        """target: the target's file (its breaks say "line N"; another file's say its name)."""
        self.clear_options()
        if compiled is None:
            return
        graphs = compiled.graphs or 0
        head = Text(f"{graphs} graph{'s' if graphs != 1 else ''}", style="bold")
        if not compiled.graph_breaks:
            head.append(" — no graph break: the whole target compiled as one graph", style="green")
        self.add_option(Option(head, disabled=True))
        self._breaks = compiled.graph_breaks
        for i, b in enumerate(compiled.graph_breaks):
            other = b.file and b.line and os.path.realpath(b.file) != os.path.realpath(target or b.file)
            where = f"{os.path.basename(b.file)}:{b.line}" if other else f"line {b.line}"
            text = Text(f"break at {where}: ", style="bold yellow")
            text.append(b.reason)
            if b.explanation:
                text.append(f"\n  {b.explanation}", style="dim")
            if b.hint:
                text.append(f"\n  hint: {b.hint}", style="italic")
            self.add_option(Option(text, id=f"break-{i}" if b.line else None))
        for r in compiled.recompiles:
            text = Text(f"recompiled {r.function or 'target'}: ", style="bold magenta")
            text.append(r.reason)
            self.add_option(Option(text))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id and event.option.id.startswith("break-"):
            b = self._breaks[int(event.option.id.removeprefix("break-"))]
            self.post_message(self.LineChosen(b.file, b.line))
