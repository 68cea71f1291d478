"""The live app's link to torch: one thread that owns the worker processes.

The latest request wins. A save that arrives while a run is in flight kills that run's worker
(torch cannot be interrupted mid-compile) and hands the new request to a spare worker that is
already warm, so a superseded run costs nothing on screen. Everything the thread learns is
passed to `emit` as a SessionEvent: the app posts it as a message and never waits on it.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from kscope.app.output_pump import pump_output
from kscope.report.model import Report, RunError
from kscope.report.plan import PlanProgress
from kscope.report.request import RunRequest, SweepOptions, SweepRequest
from kscope.worker.client import (
    Worker,
    WorkerDied,
    describe_exit,
    has_answered,
    run_timeout,
    set_priority,
)
from kscope.worker.clock import RunClock
from kscope.worker.forks import ForkServer

POLL_S = 0.05
SHOWN_POLL_S = 0.005
"""While the worker waits to hear that the eager half is on screen, look this often."""
SPARE_NICE = 10
STORM_WINDOW_S = 0.5
"""A request this soon after the last run started means saves are coming in a burst..."""
STORM_SETTLE_S = 0.3
"""...so wait until they have stopped for this long before starting the next run."""
IDLE_CHECK_S = 0.5
"""Between runs, how often the session looks whether its worker is still alive: a worker killed
from outside while idle is replaced and said within 1 s (docs/reliability.md), with room for a busy machine."""
@dataclass(frozen=True)
class SessionEvent:
    kind: str
    """starting | ready | running | eager | plan | progress | phase | timing | report | log | restarted; for a sweep,
    sweeping | sweep (the sizes so far) | report"""
    run_id: int = 0
    report: Report | None = None
    progress: PlanProgress | None = None
    """For "progress": how far the compiled half's compile is."""
    text: str = ""
    """For "log" and "restarted": the words; for "phase": the compile that started ("" once it ended)."""
    at: float = field(default_factory=time.monotonic)


class LiveSession:
    """Runs `request` in a warm worker each time it is asked to, one at a time, the newest first;
    says what happens through `emit` (called on the session's own threads, never the UI's).
    `request` may be replaced between runs (keys g, n, m); `trace_root` keeps each run's traces
    (see run_trace_dir). The workers are forked from `forks` if given (a fork server others share,
    left running at stop), else from a fork server of the session's own."""

    def __init__(self, request: RunRequest, emit: Callable[[SessionEvent], None], trace_root: str | None = None,
                 forks: ForkServer | None = None):
        self.request, self.emit, self.trace_root = request, emit, trace_root
        self._wanted = 0  # id of the latest requested run
        self._last_request_at = float("-inf")
        self._previous_request_at = float("-inf")  # the request before the latest one
        self._last_run_at = float("-inf")
        self._cond = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._main, name="kscope-session", daemon=True)
        self._workers: list[Worker] = []  # [current, spare?]
        self._forks, self._own_forks = forks, forks is None  # every worker is forked warm from it
        self.restarts = 0
        self._shown = 0  # the latest run whose eager half the app has drawn
        self._sweeps: dict[int, SweepOptions] = {}  # run id -> sweep options, for the runs that are sweeps

    # --- called from the UI thread -------------------------------------------------------------

    def shown(self, run_id: int) -> None:
        """The app has drawn this run's eager half (one attribute write: the session thread,
        polling, tells the worker, which times the two modes once the screen is still)."""
        self._shown = run_id

    def start(self) -> None:
        self._thread.start()

    def request_sweep(self, options: SweepOptions) -> int:
        """Ask for a size sweep of the file as it is now, at once. Like
        any request it gives way to the next: a save cancels it."""
        with self._cond:
            run_id = self.request_run(coalesce=False)
            self._sweeps[run_id] = options
            return run_id

    def request_run(self, coalesce: bool = True) -> int:
        """Ask for a run of the file as it is now. `coalesce=False` (the `r` key) starts it at
        once: a deliberate request is never part of a burst of saves."""
        with self._cond:
            self._wanted += 1
            self._sweeps = {k: v for k, v in self._sweeps.items() if k >= self._wanted}  # superseded
            now = time.monotonic()
            if coalesce:
                self._previous_request_at, self._last_request_at = self._last_request_at, now
            else:
                self._previous_request_at = self._last_request_at = float("-inf")
            self._cond.notify_all()
            return self._wanted

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        for w in list(self._workers):
            w.kill()
        if self._forks is not None and self._own_forks:
            self._forks.close()

    def worker_pids(self) -> list[int]:
        return [w.proc.pid for w in self._workers if w.proc is not None and w.proc.pid is not None and w.proc.poll() is None]

    # --- the session thread ----------------------------------------------------------------------

    def _output(self) -> int:
        """A pipe whose text goes to the output pane; its write end."""
        read_end, write_end = os.pipe()

        def emit_log(text: str) -> None:
            self.emit(SessionEvent("log", text=text))

        threading.Thread(target=pump_output, args=(read_end, emit_log), daemon=True, name="kscope-logs").start()
        return write_end

    def _spawn(self, nice: int = 0) -> Worker:
        if self._forks is None:  # its output (a torch that fails to import) goes to the pane too
            self._forks = ForkServer(self._output())
        write_end = self._output()
        worker = Worker(stdout=write_end, warm=True, forks=self._forks, nice=nice)
        worker.start()
        os.close(write_end)
        return worker

    def _ready_worker(self) -> Worker:
        """The current worker, warm; a fresh one (or the spare) when it is gone.

        Raises WorkerDied when two workers in a row die before they are ready: one that cannot
        start at all (torch fails to import, say) is tried again at the next request, not in a
        loop (that respawned ~30 workers a second, for ever, flooding the output pane)."""
        failures = 0
        while True:
            if not self._workers:
                self._workers.append(self._spawn())
            worker = self._workers[0]
            if worker.proc is not None and worker.proc.poll() is not None:
                if not worker.ready:  # died while starting up
                    self._workers.remove(worker)
                    worker.kill()
                    failures += 1
                    why = describe_exit(worker.proc.returncode)
                    self.emit(SessionEvent("log", text=f"[kscope] worker failed to start: {why}\n"))
                    if failures >= 2 or self._stopping:
                        raise WorkerDied(worker.proc.returncode)
                    continue
                self._replace_current(f"{describe_exit(worker.proc.returncode)} while idle")
                continue
            if not has_answered(worker):
                # A replacement still importing torch (after a crash or a timeout): say so, or
                # the status line shows the last failure for seconds with nothing happening.
                self.emit(SessionEvent("starting"))
            try:
                worker.wait_ready()
                return worker
            except (WorkerDied, RuntimeError) as e:
                self._workers.remove(worker)
                worker.kill()
                failures += 1
                self.emit(SessionEvent("log", text=f"[kscope] worker failed to start: {e}\n"))
                if failures >= 2 or self._stopping:
                    raise

    def _replace_current(self, why: str) -> None:
        dead = self._workers.pop(0)
        dead.kill()
        for w in self._workers:
            w.signal_group(signal.SIGCONT)
        if self._workers:
            set_priority(self._workers[0], 0)  # the spare is now the one being timed
        self.restarts += 1
        if not self._workers and not self._stopping:
            self._workers.append(self._spawn())
        self.emit(SessionEvent("restarted", text=why))

    def _ensure_spare(self) -> None:
        """A warm stand-in for when the current worker must be killed. It starts at low CPU
        priority, so its start-up (torch import, inductor warm-up) does not skew the timings of
        the runs the current worker is making meanwhile."""
        if len(self._workers) < 2 and not self._stopping:
            self._workers.append(self._spawn(nice=SPARE_NICE))

    def _main(self) -> None:
        self.emit(SessionEvent("starting"))
        try:
            self._ready_worker()
            self.emit(SessionEvent("ready"))
        except (WorkerDied, RuntimeError):
            if self._stopping:
                return
            # No worker could start: the first run reports it, and each request tries again
            # (before, the session thread ended here and no save ever ran).
        done = 0
        while True:
            with self._cond:
                while self._wanted == done and not self._stopping and not self._current_died():
                    self._cond.wait(IDLE_CHECK_S)
                if self._stopping:
                    return
                run_id = None  # None: no new request, the current worker died while idle
                if self._wanted != done:
                    self._settle()
                    if self._stopping:
                        return
                    run_id = self._wanted
                    self._last_run_at = time.monotonic()
            try:
                if run_id is None:
                    # Killed from outside (kill -9, the OOM killer) between saves: replace it now
                    # and say so, rather than at the next save.
                    try:
                        self._ready_worker()
                    finally:
                        if not self._stopping:
                            self.emit(SessionEvent("ready"))
                    continue
                done = run_id
                self._run(run_id)
            except (WorkerDied, RuntimeError):
                if self._stopping:
                    return

    def _current_died(self) -> bool:
        """The current worker was up and has died since (one that never started up is left
        for the next request)."""
        worker = self._workers[0] if self._workers else None
        return worker is not None and worker.ready and worker.proc is not None and worker.proc.poll() is not None

    def _settle(self) -> None:
        """In a burst of saves (an editor's autosave, a formatter, a script), wait for the burst
        to end instead of starting a run per save: the run that follows sees the last content."""
        while not self._stopping:
            # Two requests close together are a burst too, however long ago the last run started:
            # without this a burst longer than STORM_WINDOW_S started a run every STORM_WINDOW_S
            # (20 saves in 2 s: 3 runs, each killing a worker).
            in_burst = (
                self._last_request_at - self._last_run_at < STORM_WINDOW_S
                or self._last_request_at - self._previous_request_at < STORM_WINDOW_S
            )
            left = self._last_request_at + STORM_SETTLE_S - time.monotonic() if in_burst else 0
            if left <= 0:
                return
            self._cond.wait(left)

    def _run(self, run_id: int) -> None:
        try:
            worker = self._ready_worker()
        except (WorkerDied, RuntimeError) as e:
            if not self._stopping:  # say so on screen, not only in the output pane
                self._report_failure(
                    run_id, None, "crash", f"no worker could start ({e}); its output is in the output pane; "
                    "the next save tries again"
                )
            raise
        if self._wanted != run_id:
            # Newer saves came while a fresh worker warmed up: leave this one for the latest
            # (starting it would only kill the worker we just waited for).
            return
        # A spare still warming up would share the CPU with the run being timed: freeze it for
        # the length of the run.
        spares = self._workers[1:]
        for spare in spares:
            spare.signal_group(signal.SIGSTOP)
        try:
            self._run_on(worker, run_id)
        finally:
            for spare in spares:
                spare.signal_group(signal.SIGCONT)

    def _run_on(self, worker: Worker, run_id: int) -> None:
        base = self.request
        started = time.monotonic()
        sweep = self._sweeps.pop(run_id, None)
        clock = RunClock(run_timeout(base.timeout, base.nproc) + (sweep.budget_s if sweep else 0), base.compile_timeout,
                         started=started)
        self.emit(SessionEvent("sweeping" if sweep else "running", run_id, at=started))
        try:
            request_id = worker.send(
                SweepRequest(base, sweep) if sweep
                else replace(base, trace_dir=run_trace_dir(self.trace_root, run_id), settle=not base.nproc, plan=not base.nproc)
            )
        except WorkerDied as e:
            self._report_failure(run_id, None, "crash", str(e))
            self._replace_current(str(e))
            return
        partial: Report | None = None
        told = sweep is not None  # a sweep times each size itself: it waits for no screen
        while True:
            if partial is not None and not told and self._shown == run_id:
                # The eager half is on screen: the worker may time the modes now (see RunRequest.settle).
                told = True
                try:
                    worker.send_shown(request_id)
                except WorkerDied:
                    pass  # read() below says so
            if self._wanted != run_id or self._stopping:
                if not self._stopping:
                    self._replace_current("superseded by a newer save")
                return
            stopped = clock.expired(None)
            if stopped is not None:
                self._report_failure(run_id, partial, "timeout", f"{stopped.message}; worker restarted", stopped.type)
                self._replace_current("compile timeout" if stopped.type == "CompileTimeout" else "timeout")
                return
            try:
                message = worker.read(POLL_S if told or partial is None else SHOWN_POLL_S)
            except WorkerDied as e:
                self._report_failure(run_id, partial, "crash", f"{e}; worker restarted")
                self._replace_current(str(e))
                return
            if message is None:
                continue
            if message.type in ("eager", "plan", "sweep"):
                partial = message.report  # what a crash or timeout keeps on screen
                self.emit(SessionEvent(message.type, run_id, message.report))
            elif message.type == "progress":
                clock.progress = message.progress
                self.emit(SessionEvent("progress", run_id, progress=message.progress))
            elif message.type == "phase":
                clock.phase(bool(message.compiling), message.what)
                self.emit(SessionEvent("phase", run_id, text=clock.what if message.compiling else ""))
            elif message.type == "timing":
                self.emit(SessionEvent("timing", run_id))
            elif message.type == "report":
                self.emit(SessionEvent("report", run_id, message.report))
                self._ensure_spare()
                return

    def _report_failure(self, run_id: int, partial: Report | None, stage: str, message: str, kind: str = "") -> None:
        base = partial or Report(file=os.path.abspath(self.request.file), target=self.request.target or "")
        error = RunError(stage=stage, type=kind or stage.capitalize(), message=message, file=base.file)
        self.emit(SessionEvent("report", run_id, replace(base, errors=base.errors + (error,))))


KEPT_TRACE_RUNS = 3
"""Runs whose traces the app keeps (the one on screen may be a run or two behind the newest)."""


def run_trace_dir(root: str | None, run_id: int) -> str | None:
    """A run's own trace folder under root (the app's, for key e), the older ones removed: an
    export copies the traces of the Report it exports, never those of a newer run."""
    if root is None:
        return None
    for name in os.listdir(root) if os.path.isdir(root) else ():
        if name.startswith("run-") and name[4:].isdigit() and int(name[4:]) <= run_id - KEPT_TRACE_RUNS:
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    return os.path.join(root, f"run-{run_id}")
