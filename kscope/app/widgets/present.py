"""The presentation view (`--present`, key p): for a talk, the three figures the article is about,
as large as the window allows, in high contrast: launches eager → compiled, array-sized transfers
eager → compiled as two thick bars, and the fused kernel's name. Below them, what changed since the
last save (the Δ line), marked without animation. v puts the verdict in the launches' place; z the
size sweep's plot in place of everything, l the roofline.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label, Static

from kscope.app.widgets.bigtext import BigText
from kscope.app.widgets.roofline import RooflinePlot
from kscope.app.widgets.sweep import SweepPlot
from kscope.render.text import fmt_bytes, fmt_count, peak_text
from kscope.render.verdict import busy, change_line, explanation, verdict_text
from kscope.render.view import mode_change
from kscope.report.model import Kernel, Report

SLIDES = ("launches", "verdict", "sweep", "roofline")


def figure(value: float | None) -> str:
    """2 → "2", 2.5 → "2.5", unknown → "?" (never 0)."""
    if value is None:
        return "?"
    return f"{value:.0f}" if abs(value - round(value)) < 0.05 else f"{value:.1f}"


def main_fused(report: Report | None) -> tuple[Kernel | None, int]:
    """The fused kernel to name (the one that fused the most ops, then the most bytes) and how many
    fused kernels the compiled mode has in all."""
    fused = [k for k in report.compiled.kernels if k.fused] if report and report.compiled else []
    if not fused:
        return None, 0
    return max(fused, key=lambda k: (len(k.ops), k.bytes_total or 0)), len(fused)


class TransferBars(Static):
    """Two thick bars, eager and compiled, as long as their array-sized transfers."""

    def show(self, report: Report | None) -> None:
        self.report = report
        self.refresh()

    def render(self):
        report = getattr(self, "report", None)
        if report is None or report.eager is None:
            return Text("")
        rows = [("eager", report.eager, "bold magenta"), ("compiled", report.compiled, "bold bright_green")]
        # a target with weights: bars by bytes (its traffic is no multiple of its inputs)
        weighed = report.reads_parameters
        values = [(m.bytes_total if weighed else report.transfers(m.bytes_total)) if m else None for _, m, _ in rows]
        top = max((v for v in values if v), default=0) or 1
        label_w, value_w = 9, (9 if weighed else 7)
        room = max(4, self.size.width - label_w - value_w - 2)
        thick = max(1, (self.size.height - 1) // 2)
        text = Text()
        for (label, mode, style), value in zip(rows, values):
            length = round(room * value / top) if value else 0
            for i in range(thick):
                text.append(f"{label if i == thick // 2 else '':<{label_w}}", style="bold")
                text.append("█" * length, style=style)
                text.append(" " * (room - length + 1))
                shown = (fmt_bytes(value) if weighed else figure(value) + "×") if value is not None else ""
                text.append(f"{shown if i == thick // 2 else '':>{value_w}}",
                            style="bold")
                text.append("\n")
        return text


class PresentView(Vertical):
    DEFAULT_CSS = """
    PresentView { background: black; color: white; padding: 0 2; }
    PresentView .caption { width: 1fr; content-align: center middle; color: #ffff5f; text-style: bold; }
    PresentView #present-big { height: 3fr; color: white; }
    PresentView #present-bars { height: 2fr; min-height: 3; }
    PresentView #present-name { height: 1fr; min-height: 1; color: #5fffff; }
    PresentView #present-change { width: 1fr; height: 2; color: black; background: #ffff5f; text-style: bold; }
    PresentView #present-change.-none { background: black; color: #a8a8a8; text-style: none; }
    PresentView #present-plot { height: 1fr; display: none; }
    PresentView.-sweep #present-plot { display: block; }
    PresentView.-sweep > .figures { display: none; }
    PresentView #present-roofline { height: 1fr; display: none; }
    PresentView.-roofline #present-roofline { display: block; }
    PresentView.-roofline > .figures { display: none; }
    """

    slide = "launches"

    def compose(self) -> ComposeResult:
        yield Label("", id="present-big-caption", classes="caption figures")
        yield BigText(id="present-big", classes="figures")
        yield Label("", id="present-bars-caption", classes="caption figures")
        yield TransferBars(id="present-bars", classes="figures")
        yield Label("", id="present-name-caption", classes="caption figures")
        yield BigText(id="present-name", classes="figures")
        yield Label("", id="present-change", classes="figures")
        yield SweepPlot(id="present-plot")
        yield RooflinePlot(id="present-roofline")

    def choose(self, slide: str) -> None:
        """Show a slide: v, z and l toggle theirs, falling back to the launches."""
        self.slide = "launches" if slide == self.slide else slide
        self.set_class(self.slide == "sweep", "-sweep")
        self.set_class(self.slide == "roofline", "-roofline")

    def show(self, report: Report | None, before: Report | None) -> None:
        """Drawn only while presenting (a hidden view's updates still asked for new layouts of the
        screen at every save); key p draws the latest (`pending`) when the view comes up."""
        self.pending = (report, before)
        if not getattr(self.app, "presenting", True):
            return
        e = report.eager if report else None
        c = report.compiled if report else None
        big, caption = self.query_one("#present-big", BigText), self.query_one("#present-big-caption", Label)
        if self.slide == "verdict":
            big.text = verdict_text(report) if report and report.speedup else "…"
            why = explanation(report, short=True) if report else ""
            caption.update("call time, compiled against eager" + (f" · {why}" if why else ""))
        else:
            big.text = f"{fmt_count(e.launches) if e else '…'} → {fmt_count(c.launches) if c else '…'}"
            caption.update("launches per call: eager → compiled")
        bars = self.query_one(TransferBars)
        bars.show(report)
        transfers = [report.transfers(m.bytes_total) if report and m else None for m in (e, c)]
        traffic = f"{fmt_bytes(e.bytes_total) if e else '?'} → {fmt_bytes(c.bytes_total) if c else '?'}"
        if report and peak_text(report):  # what a call holds, beside what it moves
            traffic += f" · {peak_text(report)}"
        self.query_one("#present-bars-caption", Label).update(
            "" if not e
            else f"{traffic} traffic per call (the model's weights included)" if report.reads_parameters
            else f"{figure(transfers[0])} → {figure(transfers[1])} array-sized transfers   ({traffic})"
        )
        kernel, count = main_fused(report)
        self.query_one("#present-name", BigText).text = kernel.name if kernel else ("compiling…" if e and not c else "")
        more = f" (+{count - 1} more)" if count > 1 else ""
        self.query_one("#present-name-caption", Label).update(
            f"fused: {', '.join(op.removeprefix('aten.') for op in kernel.ops)}{more}" if kernel
            else "no fused kernel" if c else ""
        )
        change = self.query_one("#present-change", Label)
        label = (mode_change(before, report) or "compiled") if before else "compiled"
        width = change.size.width or None  # 0: not laid out yet
        lines = [
            change_line(label, before.compiled if before else None, c, compact=True, busy=busy(report, before),
                        width=width),
            change_line("eager", before.eager if before else None, e, compact=True, busy=busy(report, before),
                        width=width),
        ]
        change.update("\n".join(lines) if all(lines) else "Δ: what changed appears here after the next save")
        change.set_class(not all(lines), "-none")
        self.query_one(RooflinePlot).show(report)

    def show_sweep(self, report: Report | None) -> None:
        self.query_one(SweepPlot).show(report)
