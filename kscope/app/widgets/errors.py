"""The errors banner under the panes: one line per error of the run, with its stage, file and line."""

from __future__ import annotations

import os

from textual.widgets import Static

from kscope.report.model import Report


class ErrorBanner(Static):
    def show(self, report: Report) -> None:
        if not report.errors:
            if self.display:  # only a change of what is shown needs a new layout
                self.update("")
                self.display = False
            return
        lines = []
        for e in report.errors:
            where = os.path.basename(e.file) if e.file else ""
            where += f":{e.line}" if e.line else ""
            kind = "" if e.type == "TargetError" or not e.message else f"{e.type}: "
            lines.append(f"✗ {e.stage} {where}  {kind}{e.message or e.type}")
        self.update("\n".join(lines))
        self.display = True
