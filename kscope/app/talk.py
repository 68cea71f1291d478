"""The app's keys for talks and sharing: p (the presentation view), v (its verdict), l (the
roofline: its tab, or large while presenting) and e (export the Report on screen). A mixin of
KscopeApp, which owns the state these read: `presenting`, `shown`, `before`, `good`,
`export_dir`, `state`."""

from __future__ import annotations

import os

from textual.worker import Worker, WorkerState

from kscope.app.export import export_report
from kscope.app.widgets.present import PresentView


class TalkKeys:
    def action_present(self) -> None:
        """p: the presentation view <-> the panes."""
        self.presenting = not self.presenting
        self.set_class(self.presenting, "-present")
        present = self.query_one(PresentView)
        if self.presenting and hasattr(present, "pending"):
            present.show(*present.pending)  # not drawn while hidden

    def action_slide(self, slide: str) -> None:
        """v (and z or l while presenting): the verdict (the sweep's plot, the roofline) in the
        presentation view, or back to the launches."""
        present = self.query_one(PresentView)
        if not self.presenting:
            self.action_present()
            if present.slide == slide:
                return
        present.choose(slide)
        present.show(self.shown, self.before)

    def action_roofline(self) -> None:
        """l: the roofline tab; while presenting, the roofline in place of everything (l again: the launches)."""
        if self.presenting:
            self.action_slide("roofline")
        else:
            self.action_tab("roofline")

    def action_export(self) -> None:
        """e: the Report on screen, its traces and a screenshot, into a new folder, on a thread."""
        report = self.shown if self.shown is not None and self.shown.compiled is not None else self.good
        if report is None:
            self.notify("nothing to export yet: the first run has not finished")
            return
        svg = self.export_screenshot()
        self.run_worker(lambda: export_report(report, self.export_dir, svg), name="export", thread=True)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name != "export" or event.state not in (WorkerState.SUCCESS, WorkerState.ERROR):
            return
        if event.state == WorkerState.SUCCESS:
            self.state = f"exported to {os.path.relpath(event.worker.result)}{os.sep}"
        else:
            self.state = f"export failed: {event.worker.error}"
        self._refresh_status()
