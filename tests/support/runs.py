"""One in-process run of a target file on the CPU, for the engine tests: its Report, which must
have no errors."""

from __future__ import annotations

from kscope.engine.run import run
from kscope.report.model import Report
from kscope.report.request import RunRequest


def run_ok(path, target: str | None = None, calls: int = 2, **request) -> Report:
    report = run(RunRequest(str(path), target, "cpu", calls=calls, **request))
    assert not report.errors, report.errors
    return report
