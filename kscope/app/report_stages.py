"""A report's panes as the stages StagedDraw draws, one frame each, in the order a person reads
them: the launch counts and traffic, the eager kernel table, the compiled one, then the panes
under them and the tabs."""

from __future__ import annotations

from kscope.app.staged_draw import Stage
from kscope.app.widgets.breaks import BreaksPane
from kscope.app.widgets.fused import FusedKernels
from kscope.app.widgets.kernels import KernelTable
from kscope.app.widgets.launches import LaunchCounts
from kscope.app.widgets.memory import MemoryPane
from kscope.app.widgets.present import PresentView
from kscope.app.widgets.ranks import RanksPane
from kscope.app.widgets.roofline import RooflinePane
from kscope.app.widgets.round_trips import RoundTripsPane
from kscope.app.widgets.source import SourcePane
from kscope.app.widgets.traffic import TrafficBars
from kscope.render.plan import plan_note, plan_title, plan_view
from kscope.report.model import Report


def report_stages(app, report: Report, before: Report | None, *, partial: bool, saved: str) -> list[Stage]:
    """partial: the eager half, or inductor's plan while the compiled half compiles; before: the
    report that "since last save" compares with; saved: another file whose save asked for the run."""
    compiling = partial and report.compiled is None
    view = plan_view(report)  # while compiling, the compiled panes show inductor's plan

    def compiled_kernels() -> bool:  # its note read when drawn: the compile's progress may have moved
        note = plan_note(report.plan, app.progress, stale=not partial) if view is not report else ""
        return app.query_one("#compiled-kernels", KernelTable).show(
            view.compiled, before.compiled if before else None, note=note or ("compiling…" if compiling else ""),
            peak=report.judged(view.compiled), home=report.home,
            what=plan_title(stale=not partial) if view is not report else "",
        )

    def details() -> None:
        app.query_one(FusedKernels).show(view)
        app.query_one(BreaksPane).show(report.compiled, report.home)
        app.query_one(RoundTripsPane).show(view)

    def tabs() -> None:  # behind tabs: their show costs, their paint waits until a tab is chosen
        for pane in (SourcePane, RanksPane, RooflinePane, MemoryPane):
            app.query_one(pane).show(report)

    def headline() -> None:
        app.query_one(LaunchCounts).show(report, before, compiling, saved=saved)
        app.query_one(TrafficBars).show(report)

    def rest() -> None:
        details()
        tabs()
        if not app.presenting:
            present()

    def present() -> None:
        app.query_one(PresentView).show(report, before)

    # At most four frames: each waits for the screen's next update (1/60 s at Textual's default), so
    # seven stages of a pane each made a report's last pane come 0.1 s later than one frame did, and
    # the worker's timing, which waits for it, with it (`r` -> final 0.12 -> 0.26 s,
    # benchmarks/latency.py). The kernel tables are the costly paints, a frame each (none when their
    # rows are the same: StagedDraw goes on at once); the counts and bars are small, and the panes
    # behind tabs paint only when their tab is chosen.
    return [
        *([present] if app.presenting else []),  # presenting, the big view is all there is to see
        headline,
        lambda: app.query_one("#eager-kernels", KernelTable).show(
            report.eager, before.eager if before else None, peak=report.judged(report.eager), home=report.home),
        compiled_kernels,
        rest,
    ]
