"""The live app: a pure view of the Reports the session sends, refreshed on every save.

Data flows one way: save -> FileWatcher -> LiveSession (worker process) -> SessionEvent message
-> panes. Nothing here imports torch or waits on a process, a pipe or a file.
"""

from __future__ import annotations

import gc
import os
import time
from dataclasses import replace
from functools import partial

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import Footer, TabbedContent, TabPane

from kscope.app.export import DEFAULT_ROOT
from kscope.app.links import PaneLinks
from kscope.app.messages import FileMissing, FileSaved, SessionUpdate
from kscope.app.session import LiveSession, SessionEvent
from kscope.app.report_stages import report_stages
from kscope.app.staged_draw import StagedDraw
from kscope.app.talk import TalkKeys
from kscope.app.watch import FileWatcher
from kscope.app.widgets.breaks import BreaksPane
from kscope.app.widgets.code import CodePane
from kscope.app.widgets.errors import ErrorBanner
from kscope.app.widgets.fused import FusedKernels
from kscope.app.widgets.help import HelpScreen
from kscope.app.widgets.kernels import KernelTable
from kscope.app.widgets.launches import LaunchCounts
from kscope.app.widgets.log import LogPane
from kscope.app.widgets.memory import MemoryPane
from kscope.app.widgets.present import PresentView
from kscope.app.widgets.ranks import RanksPane
from kscope.app.widgets.roofline import RooflinePane
from kscope.app.widgets.round_trips import RoundTripsPane
from kscope.app.widgets.source import SourcePane
from kscope.app.widgets.status import StatusLine
from kscope.app.widgets.sweep import SweepPane
from kscope.app.widgets.traffic import TrafficBars
from kscope.render.plan import compile_state, plan_note
from kscope.report.model import Report
from kscope.report.plan import PlanProgress
from kscope.report.request import RunRequest, SweepOptions

NARROW_BELOW = 110
TABS = (("fused kernels", "fused", FusedKernels), ("source", "source", SourcePane), ("code", "code", CodePane),
        ("graph breaks", "breaks", BreaksPane), ("round trips", "round-trips", RoundTripsPane),
        ("output", "output", LogPane), ("sweep", "sweep", SweepPane), ("roofline", "roofline", RooflinePane),
        ("ranks", "ranks", RanksPane), ("memory", "memory", MemoryPane))
"""The detail tabs, in order: (title, id, pane)."""


class KscopeApp(PaneLinks, TalkKeys, App):
    CSS_PATH = "kscope.tcss"
    TITLE = "kscope"
    BINDINGS = [
        Binding("r", "rerun", "re-run"),
        Binding("g", "grad('backward')", "fwd+bwd"),
        Binding("n", "grad('no_grad')", "no_grad", show=False),
        Binding("z", "sweep", "sweep"),
        Binding("m", "mode", "mode"),
        Binding("p", "present", "present"),
        Binding("e", "export", "export"),
        Binding("v", "slide('verdict')", "verdict", show=False),
        Binding("q", "quit", "quit"),
        Binding("ctrl+c", "quit", "quit", show=False, priority=True),
        Binding("question_mark", "help", "help"),
        Binding("f", "tab('fused')", "fused", show=False),
        Binding("s", "tab('source')", "source"),
        Binding("h", "hot_lines", "hot lines", show=False),
        Binding("c", "tab('code')", "code"),
        Binding("b", "tab('breaks')", "breaks"),
        Binding("t", "tab('round-trips')", "round trips", show=False),
        Binding("o", "tab('output')", "output", show=False),
        Binding("k", "tab('ranks')", "ranks", show=False),
        Binding("l", "roofline", "roofline", show=False),
        Binding("a", "tab('memory')", "memory", show=False),
        Binding("[", "source_file(-1)", "previous file", show=False), Binding("]", "source_file(1)", "next file", show=False),
    ]

    def __init__(
        self, request: RunRequest, session_factory=LiveSession, watch: bool = True, sweep: SweepOptions | None = None,
        sweep_at_start: bool = False, present: bool = False, export_dir: str = DEFAULT_ROOT, trace_root: str | None = None,
    ):
        super().__init__()
        self.presenting, self.export_dir, self.request = present, export_dir, request
        self.sweep_options = sweep or SweepOptions()
        self.session = session_factory(request, lambda ev: self.post_message(SessionUpdate(ev)), trace_root=trace_root)
        self.watcher = (
            FileWatcher(request.file, lambda path: self.post_message(FileSaved(path)),
                        lambda path: self.post_message(FileMissing(path)))
            if watch
            else None
        )
        self.latest_run = 0
        self.shown: Report | None = None  # what the panes show now
        self.good: Report | None = None  # the last complete, error-free report
        self.before: Report | None = None  # the good report before it: "since last save"
        self.state = "starting…"
        self.run_started: float | None = None
        self.eager_done, self.compiling = False, ""  # the compile in flight, as the worker says it ("graph 0/1")
        self.progress: PlanProgress | None = None  # how far the compile in flight is, once planned
        self.timing_shown: int | None = None  # while the worker times the halves: the whole second on screen
        self.stale = False
        self.sweep_run = 0  # the id of the latest sweep requested
        self.sweep_queued = sweep_at_start  # sweep when the run in flight ends (--sweep: the first run)
        self.done_run = 0  # the latest run whose report arrived
        self.saved_file: str | None = None  # the file whose save asked for the latest run
        self.drawing = StagedDraw(self)

    # --- layout ------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        with VerticalScroll(id="main"):
            with Horizontal(id="overview", classes="row"):
                yield LaunchCounts(id="launches")
                yield TrafficBars(id="traffic")
            with Horizontal(id="kernels", classes="row"):
                yield KernelTable("eager", id="eager-kernels")
                yield KernelTable("compiled", id="compiled-kernels")
            with TabbedContent(id="details", initial="fused"):
                for title, pane_id, pane in TABS:
                    with TabPane(title, id=pane_id):
                        yield pane()
        yield PresentView(id="present")
        yield ErrorBanner("", id="errors")
        yield Footer()

    def on_mount(self) -> None:
        self.set_class(self.presenting, "-present")
        self._apply_width(self.size.width)
        self._refresh_status()
        self.set_interval(0.1, self._tick)
        self.session.start()
        if self.watcher is not None:
            self.watcher.start()
        self._latest(self.session.request_run())
        gc.freeze()  # all built so far lives as long as the app: out of the GC's full passes (they stall the loop)

    def on_resize(self, event) -> None:
        self._apply_width(event.size.width)

    def _apply_width(self, width: int) -> None:
        narrow = width < NARROW_BELOW
        self.set_class(narrow, "-narrow")
        traffic, launches = self.query_one(TrafficBars), self.query_one(LaunchCounts)
        if traffic.compact != narrow:
            traffic.compact = launches.compact = narrow
            if self.shown is not None:
                self._show(self.shown, partial=self.shown.compiled is None and not self.shown.errors)
            else:
                traffic.show(None)

    # --- actions -----------------------------------------------------------------------------------

    def action_rerun(self) -> None:
        self.saved_file = None
        self._latest(self.session.request_run(coalesce=False))

    def action_grad(self, switch: str) -> None:
        """g: forward <-> forward + backward; n: as written <-> under no_grad. Re-runs at once;
        what changed since the last save starts over (another kind of run is no baseline)."""
        on = not getattr(self.request, switch)
        self.request = replace(self.request, backward=on and switch == "backward", no_grad=on and switch == "no_grad")
        self.session.request = self.request
        self.good = self.before = None
        self._latest(self.session.request_run(coalesce=False))
        self._refresh_status()

    def action_mode(self) -> None:
        """m: the next torch.compile mode (default, reduce-overhead, max-autotune, ...), re-run at
        once. The Δ lines compare with the run before: switching reads as an A/B."""
        self.request = replace(self.request, compile=self.request.compile.next_mode())
        self.session.request = self.request
        self._latest(self.session.request_run(coalesce=False))
        self._refresh_status()

    def action_tab(self, name: str) -> None:
        """A tab's key: the tab, scrolled into view (at 80×24 the tabs are below the fold)."""
        self.query_one(TabbedContent).active = name
        self.call_after_refresh(lambda: [d.scroll_visible(animate=False, top=True) for d in self.query("#details")])

    def action_sweep(self) -> None:
        """z: sweep the file's sizes (a save cancels it) in the sweep tab. A run in flight (a save's)
        finishes first: its results, and the graph the sweep is compared with, are the save's."""
        if self.presenting:
            self.action_slide("sweep")
            if self.query_one(PresentView).slide != "sweep":
                return  # z again: back to the launches, the sweep's results kept
        self.action_tab("sweep")
        if self.latest_run not in (self.done_run, self.sweep_run):
            self.sweep_queued = True
            self.query_one(SweepPane).queue()
            return
        self.sweep_queued = False
        self.query_one(SweepPane).requested(self.good)
        self._latest(self.session.request_sweep(self.sweep_options))
        self.sweep_run = self.latest_run

    def _latest(self, run_id: int) -> None:
        """A new request replaces the latest: a sweep in flight is cancelled by it."""
        if self.sweep_run and self.latest_run == self.sweep_run != run_id:
            self.query_one(SweepPane).cancel()
        self.latest_run = run_id

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        # the sweep's table and plot take the kernel tables' room, the roofline the overview's
        self.set_class(event.pane.id == "sweep", "-sweep-tab")
        self.set_class(event.pane.id == "roofline", "-roofline-tab")

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        self.shutdown()
        self.exit()

    def shutdown(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
        self.session.stop()

    # --- events from the watcher and the session --------------------------------------------------

    @on(FileSaved)
    def _saved(self, message: FileSaved) -> None:
        self.saved_file = message.path
        self._latest(self.session.request_run())

    @on(FileMissing)
    def _missing(self, message: FileMissing) -> None:
        self.state = f"{os.path.basename(message.path)}: file missing — waiting for it to come back"
        self._refresh_status()

    def _watch_files_of(self, report: Report | None) -> None:
        """Watch the user's files the latest run imported, and those of the last good run (a file
        whose deletion broke the import is waited for)."""
        if self.watcher is not None and report is not None:
            files = {self.request.file, *report.files, *(self.good.files if self.good else ())}
            self.watcher.watch(files)

    @on(SessionUpdate)
    def _session(self, message: SessionUpdate) -> None:
        try:
            self._on_session_event(message.event)
        except NoMatches:
            pass  # the app is exiting and its panes are already gone

    def _on_session_event(self, ev: SessionEvent) -> None:
        if ev.kind == "log":
            self.query_one(LogPane).write(ev.text.rstrip("\n"))
            return
        if ev.kind == "restarted":
            self.query_one(LogPane).write(f"[kscope] worker restarted: {ev.text}")
            return
        if ev.kind == "starting":
            self.state = "starting worker (importing torch)…"
        elif ev.kind == "ready":
            self.state = "watching"
        elif ev.run_id != self.latest_run:
            return  # a superseded run: its results never reach the screen
        elif ev.run_id == self.sweep_run:
            self._on_sweep_event(ev)
        elif ev.kind == "running":
            self.run_started, self.eager_done, self.progress, self.compiling = ev.at, False, None, ""
            self.timing_shown = None
            self.state = "running eager…"
        elif ev.kind == "eager":
            self.eager_done = True
            self._watch_files_of(ev.report)
            self._show(ev.report, partial=True, then=partial(self.session.shown, ev.run_id))
        elif ev.kind == "plan":  # inductor's plan of the compiled half, before its kernels compile
            self.progress = ev.report.plan.progress
            self._show(ev.report, partial=True)
        elif ev.kind == "phase":  # a compile started ("graph 0/1") or ended (""): the status says which
            self.compiling = ev.text
        elif ev.kind == "timing":
            self.timing_shown = -1
        elif ev.kind == "progress" and self.shown is not None and self.shown.plan is not None:
            self.progress = ev.progress
            self.query_one("#compiled-kernels", KernelTable).note(plan_note(self.shown.plan, ev.progress))
        elif ev.kind == "report":
            self._finish(ev.report, ev.at)
        self._refresh_status()

    def _on_sweep_event(self, ev: SessionEvent) -> None:
        self.query_one(SweepPane).session_event(ev.kind, ev.report, ev.at)
        if ev.report is not None and ev.report.sweep is not None:
            self.query_one(PresentView).show_sweep(ev.report)
        if ev.kind == "sweeping":
            self.run_started = ev.at
        elif ev.kind == "report":
            took = ev.at - self.run_started if self.run_started else ev.report.wall_s
            self.run_started, self.done_run = None, ev.run_id
            self.state = f"sweep {'done' if ev.report.ok else 'failed'} in {took:.1f} s"

    def _finish(self, report: Report, at: float) -> None:
        self._watch_files_of(report)
        took = at - self.run_started if self.run_started else report.wall_s
        # what drawing the first report built (lazy imports, caches) lives as long: freeze it too
        freeze = (lambda: (gc.collect(), gc.freeze())) if not self.done_run else None  # full passes: 34 ms -> 9 ms
        self.run_started, self.done_run = None, self.latest_run
        if self.sweep_queued:
            self.call_after_refresh(self.action_sweep)
        if report.errors and report.eager is None:
            self.stale = self.good is not None  # keep the last good results, marked stale
            self.state = f"failed in {took:.1f} s"
            self.drawing.start(report, [partial(self._show_errors, report)], then=freeze)
            return
        self.stale = False
        if report.notes != (self.good.notes if self.good else ()):
            for note in report.notes:  # said once, not at every save
                self.query_one(LogPane).write(f"[kscope] note: {note}")
        if not report.errors:
            self.before, self.good = self.good, report
            self.query_one(SweepPane).saved(report)
        self.state = f"{'failed' if report.errors else 'done'} in {took:.1f} s"  # a failed compiled half too
        self._show_errors(report)
        self._show(report, partial=False, then=freeze)

    @property
    def drawn(self) -> Report | None:
        """The last report whose panes are all drawn (`shown` is the one being drawn)."""
        return self.drawing.drawn

    def _show(self, report: Report, *, partial: bool, then=None) -> None:
        """Draw the report's panes, a few a frame: what a person reads first, first."""
        self.shown = report
        before = self.before if not partial and not report.errors else self.good  # a failed run changed no good
        other = self.saved_file if self.saved_file and self.saved_file != self.request.file else ""
        stages = report_stages(self, report, before, partial=partial, saved=os.path.basename(other))
        self.drawing.start(report, stages, then=then)

    def _show_errors(self, report: Report) -> None:
        self.query_one(ErrorBanner).show(report)

    # --- status line -------------------------------------------------------------------------------

    def _tick(self) -> None:
        if self.run_started is not None and self._clock_moved():
            try:
                self._refresh_status()
                if self.latest_run == self.sweep_run:
                    self.query_one(SweepPane).tick()
            except NoMatches:
                pass  # the app is exiting mid-run and its panes are already gone

    def _clock_moved(self) -> bool:
        """Whether the status line's clock has something new to say. While the worker times the
        halves it counts whole seconds: a redraw ten times a second would be the app's own work
        beside the timed calls (a compile begun meanwhile counts tenths again)."""
        if self.timing_shown is None or self.compiling:
            return True
        return int(time.monotonic() - self.run_started) != self.timing_shown

    def _refresh_status(self) -> None:
        state = self.state
        if self.run_started is not None:
            elapsed = time.monotonic() - self.run_started
            if self.latest_run == self.sweep_run:
                state = f"sweeping… {elapsed:.1f} s"
            elif self.timing_shown is not None and not self.compiling:
                self.timing_shown = int(elapsed)
                state = f"timing eager vs compiled… {self.timing_shown} s"
            else:
                state = f"compiling… {elapsed:.1f} s" if self.eager_done else f"running eager… {elapsed:.1f} s"
                state = compile_state(self.progress, elapsed, self.compiling) or state
        r = self.shown or self.good
        compiled = r.compiled if r else None
        if (compiled is not None and compiled.compile_s is not None and self.run_started is None and not self.stale
                and not state.startswith("sweep")):
            state += f" (compile {compiled.compile_s:.2f} s)"
        if self.saved_file and self.saved_file != self.request.file:
            state += f" · {os.path.basename(self.saved_file)} saved"
        device = f"{r.device} ({r.device_name})" if r and r.device_name else (r.device if r else self.request.device)
        mode = self.request.compile.label()
        self.query_one(StatusLine).show(
            file=self.request.file,
            target=(r.target if r and r.target else self.request.target) or "",
            device=device,
            torch_version=r.torch_version if r else "",
            state=state,
            timeout=self.request.timeout,
            stale=self.stale,
            breaks=len(compiled.graph_breaks) if compiled else 0,
            grad="fwd+bwd" if self.request.backward else "no_grad" if self.request.no_grad else "",
            mode=mode if mode != "default" else "",
        )
