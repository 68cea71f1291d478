"""One run in a fresh worker, with a time limit: what `--once` does."""

from __future__ import annotations

import os
import time

from kscope.report.codec import report_from_dict
from kscope.report.model import Report, RunError
from kscope.worker.client import Worker, WorkerDied, run_timeout, sweep_request


def run_once(
    file: str,
    target: str | None,
    device: str,
    timeout: float,
    calls: int,
    stdout=None,
    sweep: dict | None = None,
    **options,
) -> Report:
    """Run in a worker whose output goes to `stdout` (kscope's stderr for --json). A run past
    `timeout` seconds (not counting torch's start-up) is stopped and reported. `options`: the
    RunRequest's switches (cold, backward, no_grad) and compile options. `sweep`: a size sweep's fields (cli.sweep_options)
    instead of one run; it may take its budget more than the timeout."""
    worker = Worker(stdout=stdout, stderr=stdout)
    worker.start()
    base = Report(file=os.path.abspath(file), target=target or "")
    partial: Report | None = None
    try:
        worker.wait_ready()
        if sweep is not None:
            worker.send(sweep_request(file, target, device, sweep, options))
            timeout += sweep["budget_s"]
        else:
            worker.send({"file": file, "target": target, "device": device, "calls": calls, **options,
                         **({"timeout": timeout} if options.get("nproc") else {})})
            timeout = run_timeout(timeout, options.get("nproc"))
        deadline = time.monotonic() + timeout
        while True:
            message = worker.read(max(0.0, deadline - time.monotonic()))
            if message is None:
                worker.kill()
                stopped = RunError(
                    stage="timeout",
                    type="Timeout",
                    message=f"stopped after {timeout:g} s (--timeout); the target may loop forever or be very slow",
                    file=base.file,
                )
                return _with_error(partial or base, stopped)
            report = report_from_dict(message.report)
            if message.type in ("eager", "sweep"):
                partial = report
            elif message.type == "report":
                return report
    except WorkerDied as e:
        crashed = RunError(stage="crash", type="WorkerDied", message=str(e), file=base.file)
        return _with_error(partial or base, crashed)
    finally:
        # Nothing is left to save (inductor's caches and kscope's store are written during the
        # run), and a torch process takes ~0.9 s to tear itself down: kill it instead.
        worker.kill()


def _with_error(report: Report, error: RunError) -> Report:
    from dataclasses import replace

    return replace(report, errors=report.errors + (error,))
