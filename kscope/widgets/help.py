"""`?`: what the panes mean and which keys do what."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# kscope

Every time you **save** the file, kscope runs the target eagerly and under `torch.compile`,
under `torch.profiler`, and shows what ran.

- **launches / call** — kernels launched per call of the target, eager → compiled, and the change since the last save.
- **memory traffic** — estimated bytes read + written per call (eager: each op reads each distinct input once and
  writes its outputs; compiled: inductor's own count per kernel), also in array-sized transfers (÷ the largest input).
- **kernels** — each mode's kernels: launches, measured µs per call, traffic; ★ marks kernels inductor generated.
  Select a row for its full name, ops and source lines.
- **fused kernels** — each generated kernel with the ATen ops it fused; graph breaks with their line.
- **output** — what your code printed.

| key | action |
|---|---|
| `r` | run again now |
| `tab` / `shift+tab` | move between panes |
| `ctrl+p` | command palette (themes, …) |
| `?` | this help |
| `q` | quit |

Results from an earlier save stay on screen marked **STALE** when the latest save fails.
"""


class HelpScreen(ModalScreen):
    BINDINGS = [("escape,q,question_mark", "dismiss", "close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen VerticalScroll { width: 90%; max-width: 100; height: 90%; border: round $primary; background: $surface; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(HELP)
