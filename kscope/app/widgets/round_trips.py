"""Round trips: buffers one kernel writes and another reads back, largest first, compiled ones
with why they were not fused. Choosing one lights its producer and consumer rows and its lines."""

from __future__ import annotations

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from kscope.render.text import fmt_bytes
from kscope.render.view import autotune_lines, places_text
from kscope.report.measures import sum_known
from kscope.report.model import Report, RoundTrip


class RoundTripsPane(OptionList):
    class Chosen(Message):
        def __init__(self, mode_name: str, trip: RoundTrip):
            super().__init__()
            self.mode_name, self.trip = mode_name, trip

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._trips: list[tuple[str, RoundTrip]] = []

    def show(self, report: Report | None) -> None:
        self.clear_options()
        self._trips = []
        if report is None:
            return
        for mode_name in ("compiled", "eager"):
            mode = getattr(report, mode_name)
            if mode is None:
                continue
            trips = mode.round_trips
            head = Text(f"{mode_name}: ", style="bold")
            if trips is None:
                head.append("round trips unknown", style="dim")
            elif not trips:
                head.append("no round trip: every intermediate stays inside a kernel", style="green")
            else:
                total, count = sum_known(t.bytes for t in trips), sum(t.count for t in trips)
                head.append(f"{count} round trip{'s' if count != 1 else ''}, {fmt_bytes(total)} "
                            "written and read back")
            self.add_option(Option(head, disabled=True))
            for trip in trips or ():
                self.add_option(Option(trip_text(trip, report.home), id=f"trip-{len(self._trips)}"))
                self._trips.append((mode_name, trip))
        # what the compile mode chose: max-autotune's candidates decide which round trips stay
        for line in autotune_lines(report.compiled):
            self.add_option(Option(Text(line, style="cyan"), disabled=True))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id and event.option.id.startswith("trip-"):
            mode_name, trip = self._trips[int(event.option.id.removeprefix("trip-"))]
            self.post_message(self.Chosen(mode_name, trip))


def trip_text(trip: RoundTrip, home: str = "") -> Text:
    """"buf0 1.0 MB aten::addmm → cpp_fused_gelu_0 (line 12)", then why and the hint."""
    text = Text(f"{trip.buffer} " + (f"and {trip.count - 1} more like it " if trip.count > 1 else ""), style="bold")
    text.append(f"{fmt_bytes(trip.bytes)}  ", style="bold yellow")
    text.append(f"{trip.producer} → {', '.join(trip.consumers)}")
    if trip.lines:
        text.append(f"  (line{'s' if len(trip.lines) > 1 else ''} {places_text(trip.lines, home)})", style="dim")
    text.append(f"\n  why: {trip.reason}")
    if trip.hint:
        text.append(f"\n  hint: {trip.hint}", style="italic")
    if trip.detail and trip.detail not in trip.reason:
        text.append(f"\n  inductor: {trip.detail}", style="dim")
    return text
