"""How choosing something in one pane lights it in the others: a kernel its lines (and its point
on the roofline), a round trip its kernels and lines, a graph break its line, a line its kernels;
h, the costliest lines; [ and ], the source's files. A mixin of KscopeApp, which owns `shown` and
`good`. Its handlers go by textual's names (`on_<widget>_<message>`): a mixin is not a message
pump, so `@on` would not register them."""

from __future__ import annotations

from kscope.app.widgets.breaks import BreaksPane
from kscope.app.widgets.code import CodePane
from kscope.app.widgets.kernels import KernelTable
from kscope.app.widgets.roofline import RooflinePlot
from kscope.app.widgets.round_trips import RoundTripsPane
from kscope.app.widgets.source import SourcePane
from kscope.report.model import Place


class PaneLinks:
    def on_kernel_table_kernel_selected(self, message: KernelTable.KernelSelected) -> None:
        for source in self.query(SourcePane):  # query, not query_one: gone while the app exits
            source.show(None, lit=message.kernel.lines)
        if message.mode_name == "compiled":
            for code in self.query(CodePane):
                code.show(message.kernel)
        for plot in self.query(RooflinePlot):  # the tab's and the presentation's
            plot.select(message.kernel.name, message.mode_name)

    def on_round_trips_pane_chosen(self, message: RoundTripsPane.Chosen) -> None:
        trip = message.trip
        for table in self.query(KernelTable):
            table.light({trip.producer, *trip.consumers} if table.mode_name == message.mode_name else set())
        for source in self.query(SourcePane):
            source.show(None, lit=trip.lines)

    def on_breaks_pane_line_chosen(self, message: BreaksPane.LineChosen) -> None:
        r = self.shown or self.good
        place = message.place  # a break of a Report from before breaks had places: in the target's file
        place = place if place.file else Place(r.home if r else "", place.line)
        for source in self.query(SourcePane):
            source.show(None, lit=(place,))
        self.action_tab("source")

    def on_source_pane_line_chosen(self, message: SourcePane.LineChosen) -> None:
        for table in self.query(KernelTable):
            table.light(message.eager if table.mode_name == "eager" else message.compiled)

    def action_source_file(self, by: int) -> None:
        """[ and ]: the source tab, on the previous or next file holding lines of this run, from
        any pane (bound on the source pane alone, they did nothing until it had the focus)."""
        self.action_tab("source")
        for source in self.query(SourcePane):
            source.action_step(by)

    def action_hot_lines(self) -> None:
        """h: the source tab, with the run's costliest lines first (h again: back to the file)."""
        self.action_tab("source")
        for source in self.query(SourcePane):
            source.toggle_hot()
