"""Graph breaks and recompiles, in plain words, each with the line it points at and dynamo's own
words for it (its type, explanation and hints)."""

from __future__ import annotations

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from kscope.render.view import break_where, break_words
from kscope.report.model import ModeResult
from kscope.report.place import Place


class BreaksPane(OptionList):
    class LineChosen(Message):
        def __init__(self, place: Place):
            super().__init__()
            self.place = place

    def show(self, compiled: ModeResult | None, home: str = "") -> None:
        """home: the target's file as places name it (its breaks say "line N"; another file's say
        its name, a library's says so)."""
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
            text = Text(f"break at {break_where(b, home)}: ", style="bold yellow")
            text.append(b.reason)
            for line in break_words(b):
                text.append("\n  " + line.replace("\n", "\n    "), style="dim" if line.startswith("dynamo") else "italic")
            self.add_option(Option(text, id=f"break-{i}" if b.place or b.line else None))
        for r in compiled.recompiles:
            text = Text(f"recompiled {r.function or 'target'}: ", style="bold magenta")
            text.append(r.reason)
            self.add_option(Option(text))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id and event.option.id.startswith("break-"):
            b = self._breaks[int(event.option.id.removeprefix("break-"))]
            self.post_message(self.LineChosen(b.place or Place("", b.line or 0)))
