"""The generated source of the selected compiled kernel (C++ or Triton), highlighted."""

from __future__ import annotations

from rich.syntax import Syntax
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from kscope.report.model import Kernel


class CodePane(VerticalScroll):
    DEFAULT_CSS = "CodePane Static { width: auto; }"

    def compose(self):
        yield Static(Text("select a compiled kernel to see the code inductor generated", style="dim"))

    kernel: Kernel | None = None

    def show(self, kernel: Kernel | None) -> None:
        self.kernel = kernel
        body = self.query_one(Static)
        if kernel is None or not kernel.code:
            what = "an extern (library) call" if kernel and kernel.kind == "extern" else "no generated code"
            body.update(Text(f"{kernel.name if kernel else ''}: {what}", style="dim"))
            return
        language = "python" if kernel.name.startswith("triton") else "cpp"
        body.update(Syntax(kernel.code, language, line_numbers=True, word_wrap=False, theme="ansi_dark"))
        self.scroll_home(animate=False)
