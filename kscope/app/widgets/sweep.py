"""The sweep tab (key z): where compiled pulls away, size by size, as a table and a plot.

It shows the last complete sweep until the next one completes: while a sweep runs, its progress
(size k of N, elapsed) and the sizes measured so far; a save cancels it (the last complete sweep
stays) and, when the save changed the graph, marks what is shown as stale.
"""

from __future__ import annotations

import time

from rich.console import Group
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static
from textual_plotext import PlotextPlot

from kscope.render.plot import draw
from kscope.render.sweep import ran_table, sweep_summary, sweep_table
from kscope.render.view import graph_signature
from kscope.report.model import Report
from kscope.report.sweep import fmt_n

HINT = "z runs a size sweep of this file: the target at n = 10², 10³, … through inputs(device, n)"


class SweepPlot(PlotextPlot):
    """The sweep's plot, drawn for the widget's size at each render."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.report: Report | None = None

    def show(self, report: Report | None) -> None:
        self.report = report
        self.display = bool(report and report.sweep and report.sweep.points)
        self.refresh()

    def render(self):
        if self.report is not None and self.report.sweep is not None:
            draw(self.plt, self.report.sweep, self.report.peak_gbps, self.size.width, self.size.height)
        return super().render()


class SweepPane(VerticalScroll):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.complete: Report | None = None
        """The last sweep that ran to its end (or stopped, saying why)."""
        self.running: Report | None = None
        self.started: float | None = None
        self.state = ""
        self.stale = False
        self.basis: tuple | None = None
        """The kernels of the run the sweep was asked for after (view.graph_signature)."""

    def compose(self):
        yield Static(HINT, id="sweep-status")
        yield Static("", id="sweep-table")
        yield SweepPlot(id="sweep-plot")
        yield Static("", id="sweep-ran")

    # --- what the app tells it ------------------------------------------------------------------

    def requested(self, latest: Report | None) -> None:
        """A sweep was asked for: a later save is compared with the latest good run."""
        self.basis = graph_signature(latest)

    def saved(self, report: Report) -> None:
        """A save's good run: the sweep shown is stale when its kernels changed."""
        if self.basis is not None and graph_signature(report) != self.basis:
            self.mark_stale()

    def session_event(self, kind: str, report: Report | None, at: float) -> None:
        """The session's events for the sweep in flight."""
        if kind == "sweeping":
            self.begin(at)
        elif kind == "sweep" and report is not None:
            self.progress(report)
        elif kind == "report" and report is not None:
            self.finish(report)

    def queue(self) -> None:
        """z while a save's run is in flight: the sweep starts when it ends."""
        self.state = "queued"
        self._redraw()

    def begin(self, at: float) -> None:
        self.running, self.started, self.state = None, at, "running"
        self._redraw()

    def progress(self, report: Report) -> None:
        self.running = report
        self._redraw()

    def finish(self, report: Report) -> None:
        self.started = None
        if report.sweep is not None and report.sweep.points and not report.errors:
            self.complete, self.running, self.state, self.stale = report, None, "done", False
        else:  # a size failed, or the worker died: the sizes measured are shown, with why
            self.running, self.state = report, "failed"
        self._redraw()

    def cancel(self) -> None:
        """A save superseded the sweep in flight."""
        if self.started is None:
            return
        self.started, self.running, self.state = None, None, "cancelled"
        self._redraw()

    def mark_stale(self) -> None:
        if self.complete is not None and not self.stale:
            self.stale = True
            self._redraw()

    def tick(self) -> None:
        if self.started is not None:
            self.query_one("#sweep-status", Static).update(self._status())

    # --- drawing ----------------------------------------------------------------------------------

    def _shown(self) -> Report | None:
        """The sweep in flight once it has sizes to show, else the last complete one."""
        if self.running is not None and self.running.sweep is not None and self.running.sweep.points:
            return self.running
        return self.complete

    def _status(self) -> Text:
        text = Text()
        if self.started is not None:
            done = len(self.running.sweep.points) if self.running and self.running.sweep else 0
            sizes = self.running.sweep.sizes if self.running and self.running.sweep else ()
            where = f"size {done + 1} of {len(sizes)} (n={fmt_n(sizes[done])})" if done < len(sizes) else "finishing"
            text.append(f"sweeping: {where if sizes else 'loading the file'} · {time.monotonic() - self.started:.1f} s",
                        style="bold yellow")
            if self.complete is not None and self._shown() is self.complete:
                text.append(" · below: the last complete sweep", style="dim")
            return text
        if self.state == "queued":
            text.append("sweep queued: it starts when the run in flight ends", style="bold yellow")
        elif self.state == "cancelled":
            text.append("sweep cancelled by a save", style="yellow")
            text.append(" · z sweeps again" + (" · below: the last complete sweep" if self.complete else ""),
                        style="dim")
        elif self.state == "failed" and self.running is not None:
            for e in self.running.errors:
                where = f"line {e.line}: " if e.line else ""
                text.append(f"✗ sweep {e.stage}: {where}{e.message}\n", style="bold red")
            if self.running.sweep is not None and self.running.sweep.stopped:
                text.append(f"✗ {self.running.sweep.stopped}\n", style="bold red")
            if self._shown() is self.running:
                text.append("below: the sizes measured before it failed", style="dim")
        elif self.complete is None:
            text.append(HINT, style="dim")
        if self.stale:
            text.append(("\n" if text.plain and not text.plain.endswith("\n") else "")
                        + "stale: the file changed since this sweep ran (z sweeps again)", style="bold magenta")
        return text

    def _redraw(self) -> None:
        report = self._shown()
        self.query_one("#sweep-status", Static).update(self._status())
        table, ran = self.query_one("#sweep-table", Static), self.query_one("#sweep-ran", Static)
        plot = self.query_one(SweepPlot)
        if report is None or report.sweep is None:
            table.update("")
            ran.update("")
            plot.show(None)
            return
        sweep = report.sweep
        table.update(Group(sweep_table(sweep, self.size.width or 120), sweep_summary(sweep)))
        plot.show(report)
        ran.update(ran_table(sweep))

    def on_resize(self) -> None:
        self._redraw()
