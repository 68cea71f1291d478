"""The ranks tab (--nproc N): the ranks side by side, what differs between them (highlighted),
and each rank's collectives. A pure view of the Report (kscope.render.ranks makes the tables)."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from kscope.render.ranks import collectives_table, difference_lines, ranks_overview
from kscope.report.model import Report


class RanksPane(VerticalScroll):
    DEFAULT_CSS = """
    RanksPane { height: auto; max-height: 30; }
    RanksPane > Static { width: auto; }
    """

    def compose(self):
        yield Static(Text("one process: kscope FILE.py --nproc N runs N ranks", style="dim"), id="ranks-body")

    def show(self, report: Report) -> None:
        body = self.query_one("#ranks-body", Static)
        if not report.ranks:
            if getattr(self, "_ranks", True):  # said once: an update, even the same, lays the screen out again
                body.update(Text("one process: kscope FILE.py --nproc N runs N ranks", style="dim"))
            self._ranks = False
            return
        self._ranks = True
        parts = [ranks_overview(report)]
        parts += [Text(line, style="bold yellow" if "differs" in line else "green") for line in difference_lines(report)]
        parts += [t for r in report.ranks if (t := collectives_table(r)) is not None]
        body.update(Group(*parts))
