"""Launch counts per call, eager → compiled, in digits big enough for the back of a room."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Digits, Label

from kscope.render.memory import planned_peak
from kscope.render.text import fmt_count, peak_text, summary_line
from kscope.render.verdict import (
    busy,
    call_text,
    change_line,
    explanation,
    verdict_text,
)
from kscope.render.view import mode_change, round_trips_line
from kscope.report.model import Report


class LaunchCounts(Vertical):
    DEFAULT_CSS = """
    LaunchCounts { height: 10; border: round $primary; border-title-align: left; padding: 0 1; }
    LaunchCounts Horizontal { height: auto; }
    LaunchCounts Digits { width: auto; }
    LaunchCounts .arrow { padding: 1 2; }
    LaunchCounts .mode { width: auto; padding: 1 1 0 0; color: $text-muted; }
    LaunchCounts #verdict { width: 1fr; padding: 0 0 0 3; height: 3; content-align: left middle; }
    LaunchCounts #verdict.-faster { color: $success; text-style: bold; }
    LaunchCounts #verdict.-slower { color: $error; text-style: bold; }
    LaunchCounts #verdict.-busy { color: $warning; }
    LaunchCounts Label.change { color: $warning; text-wrap: nowrap; text-overflow: ellipsis; }  /* cut shows as …, not a wrap out of sight */
    LaunchCounts #summary { text-style: bold; }
    LaunchCounts #summary, LaunchCounts #graphs, LaunchCounts #round-trips, LaunchCounts Label.change {
        width: 1fr; height: 1;
    }
    LaunchCounts #graphs.-breaks { color: $warning; text-style: bold; }
    """

    compact = False
    """Narrow screens: no digits, so the verdict and the call time go on the graphs line."""

    def compose(self) -> ComposeResult:
        self.border_title = "launches / call"
        with Horizontal():
            yield Label("eager", classes="mode")
            yield Digits("-", id="eager-launches")
            yield Label("→", classes="arrow")
            yield Label("compiled", classes="mode")
            yield Digits("-", id="compiled-launches")
            yield Label("", id="verdict")
        yield Label("", id="summary")
        yield Label("", id="graphs")
        yield Label("", id="round-trips")
        yield Label("", id="launch-change", classes="change")
        yield Label("", id="eager-change", classes="change")

    _shown: tuple | None = None
    """show()'s last arguments, to fit the Δ lines again to a new width."""

    def on_resize(self) -> None:
        if self._shown is not None:
            self.show(*self._shown)

    def show(self, report: Report | None, previous: Report | None, compiling: bool, saved: str = "") -> None:
        """saved: the file whose save made this run, when it is not the target (the Δ lines name it)."""
        self._shown = (report, previous, compiling, saved)
        e = report.eager if report else None
        c = report.compiled if report else None
        self.query_one("#eager-launches", Digits).update(fmt_count(e.launches) if e else "-")
        self.query_one("#compiled-launches", Digits).update(fmt_count(c.launches) if c else ("…" if compiling else "-"))
        summary = summary_line(report, peak=False) if report and e else ""
        if e and not c:
            summary = f"launches {fmt_count(e.launches)} → …" + (" (compiling)" if compiling else "")
            if planned_peak(report):  # inductor's, before its kernels exist; eager's is measured after both ran
                summary += f" · peak est. {planned_peak(report)}"
        # Fixed-size labels: updating them needs no new layout of the screen.
        self.query_one("#summary", Label).update(summary, layout=False)
        self.query_one("#round-trips", Label).update(round_trips_line(report), layout=False)
        graphs = self.query_one("#graphs", Label)
        breaks = c.graph_breaks if c else ()
        graphs.set_class(bool(breaks), "-breaks")
        verdict, call = (verdict_text(report), call_text(report)) if report else ("", "")
        if c and c.graphs is not None:
            where = ", ".join(f"line {b.line}" for b in breaks if b.line)
            text = f"{c.graphs} graph{'s' if c.graphs != 1 else ''}" + (
                f", {len(breaks)} graph break{'s' if len(breaks) > 1 else ''} ({where})" if breaks else ""
            )
            if c.cuda_graphs is not None:
                text += f" · {c.cuda_graphs.short()}"
            if peak_text(report):  # here, not in the summary: that line is full at 120 columns
                text += f" · {peak_text(report)}"
            if self.compact:
                text = " · ".join(x for x in (text, verdict, call) if x)
            graphs.update(text, layout=False)
        else:
            graphs.update("", layout=False)
        shown = self.query_one("#verdict", Label)
        said = report.speedup.verdict if report is not None and report.speedup is not None else ""
        for kind in ("faster", "slower", "busy"):
            shown.set_class(said == kind, f"-{kind}")
        why = explanation(report, short=True) if report else ""
        shown.update("\n".join(x for x in (verdict, call, why) if x) if verdict else "", layout=False)
        # What changed since the last save (Δ), one line per mode, the compiled one first.
        for label_id, name, now, then in (
            ("#launch-change", "compiled", c, previous.compiled if previous else None),
            ("#eager-change", "eager", e, previous.eager if previous else None),
        ):
            if name == "compiled" and previous is not None:
                name = mode_change(previous, report) or name  # "default→max-autotune": an A/B of modes
            if saved:
                name = f"{name}, {saved}"
            told = change_line(name, then, now, compact=True, busy=busy(report, previous),
                               width=self.content_size.width or None)  # 0: not laid out yet
            self.query_one(label_id, Label).update(told, layout=False)
