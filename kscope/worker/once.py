"""One run in a fresh worker, with a time limit: what `--once` does."""

from __future__ import annotations

import os
from dataclasses import replace

from kscope.report.model import Report, RunError
from kscope.report.request import RunRequest, SweepOptions, SweepRequest
from kscope.worker.client import Worker, WorkerDied, run_timeout
from kscope.worker.clock import RunClock


def run_once(request: RunRequest, stdout=None, sweep: SweepOptions | None = None) -> Report:
    """Run in a worker whose output goes to `stdout` (kscope's stderr for --json). A run past
    request.timeout seconds outside torch.compile (not counting torch's start-up), or whose compiles
    pass request.compile_timeout, is stopped and reported (worker.clock). `sweep`: a size sweep
    instead of one run; it may take its budget more than the timeout."""
    worker = Worker(stdout=stdout, stderr=stdout)
    worker.start()
    base = Report(file=os.path.abspath(request.file), target=request.target or "")
    partial: Report | None = None
    try:
        worker.wait_ready()
        if sweep is not None:
            worker.send(SweepRequest(request, sweep))
            clock = RunClock(request.timeout + sweep.budget_s, request.compile_timeout)
        else:
            worker.send(request)
            clock = RunClock(run_timeout(request.timeout, request.nproc), request.compile_timeout)
        while True:
            message = worker.read(clock.left_s())
            if message is None:
                pass
            elif message.type == "phase":
                clock.phase(bool(message.compiling), message.what)
            elif message.type in ("eager", "sweep"):
                partial = message.report
            elif message.type == "report":
                return message.report
            stopped = clock.expired(base.file)
            if stopped is not None:
                worker.kill()
                return _with_error(partial or base, stopped)
    except WorkerDied as e:
        crashed = RunError(stage="crash", type="WorkerDied", message=str(e), file=base.file)
        return _with_error(partial or base, crashed)
    finally:
        # Nothing is left to save (inductor's caches and kscope's store are written during the
        # run), and a torch process takes ~0.9 s to tear itself down: kill it instead.
        worker.kill()


def _with_error(report: Report, error: RunError) -> Report:
    return replace(report, errors=report.errors + (error,))
