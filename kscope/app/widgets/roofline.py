"""The roofline tab (key l): each kernel's FLOP/s against its FLOPs per byte, log-log, under the
device's two roofs, eager and compiled; the kernel selected in a kernel table is marked. Drawn by
render/roofline.py; above the plot, the peaks and what it leaves out, in `--once`'s words."""

from __future__ import annotations

from textual.containers import Vertical
from textual.widgets import Static
from textual_plotext import PlotextPlot

from kscope.render.roofline import any_flops, draw, left_out_text, peaks_line
from kscope.report.model import Report
from kscope.report.roofline import points

NO_FLOPS = "no kernel's FLOPs are known for this run: nothing to place on the roofline"


class RooflinePlot(PlotextPlot):
    """The roofline, drawn for the widget's size at each render, the selected kernel marked."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.report: Report | None = None
        self.selected: tuple[str, str] | None = None
        """(row name, mode) of the kernel selected in a kernel table."""

    def show(self, report: Report | None) -> None:
        self.report = report
        self.refresh()

    def select(self, name: str, mode: str) -> None:
        if self.selected != (name, mode):
            self.selected = (name, mode)
            self.refresh()

    def render(self):
        if self.report is not None:
            name, mode = self.selected or (None, None)
            draw(self.plt, self.report, self.size.width, self.size.height, name, mode)
        return super().render()


class RooflinePane(Vertical):
    DEFAULT_CSS = """
    RooflinePane { height: 1fr; }
    RooflinePane #roofline-caption { height: auto; color: $text-muted; padding: 0 1; }
    RooflinePane RooflinePlot { height: 1fr; min-height: 8; }
    """

    def compose(self):
        yield Static(NO_FLOPS, id="roofline-caption")
        yield RooflinePlot(id="roofline-plot")

    def show(self, report: Report | None) -> None:
        known = report is not None and any_flops(report)
        left_out = left_out_text(points(report)) if known else ""
        caption = peaks_line(report) + (f" · {left_out}" if left_out else "") if known else NO_FLOPS
        if caption != getattr(self, "_caption", None):  # an update, even the same, lays the screen out again
            self._caption = caption
            self.query_one("#roofline-caption", Static).update(caption)
        plot = self.query_one(RooflinePlot)
        plot.display = known
        plot.show(report)
