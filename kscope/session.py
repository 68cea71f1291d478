"""The live app's link to torch: one thread that owns the worker processes.

The latest request wins. A save that arrives while a run is in flight kills that run's worker
(torch cannot be interrupted mid-compile) and hands the new request to a spare worker that is
already warm, so a superseded run costs nothing on screen. Everything the thread learns is
passed to `emit` as a SessionEvent: the app posts it as a message and never waits on it.
"""

from __future__ import annotations

import os
import selectors
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from kscope.report import Report, RunError
from kscope.worker_client import Worker, WorkerDied, describe_exit

POLL_S = 0.05
SPARE_NICE = 10
STORM_WINDOW_S = 1.0
"""A request this soon after the last run started means saves are coming in a burst..."""
STORM_SETTLE_S = 0.3
"""...so wait until they have stopped for this long before starting the next run."""
LOG_FLUSH_S = 0.05
LOG_MAX_BYTES = 16_384
"""At most this much of the user's output reaches the app per flush; the rest is counted."""


def _set_priority(worker: Worker, nice: int) -> None:
    """Renice every thread of the worker (on Linux a priority belongs to a thread, and torch's
    OpenMP threads inherit it when they start)."""
    pid = worker.proc.pid if worker.proc else None
    if pid is None:
        return
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        tids = [pid]
    for tid in tids:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
        except OSError:
            pass  # raising priority back needs privileges; a slower worker is still correct


@dataclass(frozen=True)
class SessionEvent:
    kind: str
    """starting | ready | running | eager | report | log | restarted"""
    run_id: int = 0
    report: Report | None = None
    text: str = ""
    at: float = field(default_factory=time.monotonic)


@dataclass(frozen=True)
class RunSpec:
    file: str
    target: str | None
    device: str = "auto"
    timeout: float = 60.0
    calls: int = 5


class LiveSession:
    def __init__(self, spec: RunSpec, emit: Callable[[SessionEvent], None]):
        self.spec, self.emit = spec, emit
        self._wanted = 0  # id of the latest requested run
        self._last_request_at = float("-inf")
        self._last_run_at = float("-inf")
        self._cond = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._main, name="kscope-session", daemon=True)
        self._workers: list[Worker] = []  # [current, spare?]
        self.restarts = 0

    # --- called from the UI thread -------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def request_run(self) -> int:
        with self._cond:
            self._wanted += 1
            self._last_request_at = time.monotonic()
            self._cond.notify_all()
            return self._wanted

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        for w in list(self._workers):
            w.kill()

    def worker_pids(self) -> list[int]:
        return [w.proc.pid for w in self._workers if w.proc is not None and w.proc.poll() is None]

    # --- the session thread ----------------------------------------------------------------------

    def _spawn(self) -> Worker:
        read_end, write_end = os.pipe()
        worker = Worker(stdout=write_end, stderr=write_end, warm=True)
        worker.start()  # from this long-lived thread: the worker's death signal follows it
        os.close(write_end)
        threading.Thread(target=self._pump_logs, args=(read_end,), daemon=True, name="kscope-logs").start()
        return worker

    def _pump_logs(self, fd: int) -> None:
        """Forward the worker's output in batches of at most LOG_MAX_BYTES every LOG_FLUSH_S:
        a target printing in a loop must not flood the app's message queue. Reading never
        stops, so the worker never blocks on a full pipe."""
        pending, skipped, last_flush = bytearray(), 0, time.monotonic()

        def flush():
            nonlocal skipped, last_flush
            if pending or skipped:
                text = pending.decode("utf-8", "replace")
                if skipped:
                    text += f"\n[kscope] … {skipped:,} bytes of output not shown\n"
                self.emit(SessionEvent("log", text=text))
            pending.clear()
            skipped, last_flush = 0, time.monotonic()

        with os.fdopen(fd, "rb", buffering=0) as src, selectors.DefaultSelector() as sel:
            sel.register(src, selectors.EVENT_READ)
            while True:
                if sel.select(LOG_FLUSH_S):
                    chunk = src.read(65536)
                    if not chunk:
                        break
                    room = max(0, LOG_MAX_BYTES - len(pending))
                    pending.extend(chunk[:room])
                    skipped += len(chunk) - len(chunk[:room])
                if time.monotonic() - last_flush >= LOG_FLUSH_S:
                    flush()
            flush()

    def _ready_worker(self) -> Worker:
        """The current worker, warm; a fresh one (or the spare) when it is gone."""
        while True:
            if not self._workers:
                self._workers.append(self._spawn())
            worker = self._workers[0]
            if worker.proc is not None and worker.proc.poll() is not None:
                self._replace_current(f"{describe_exit(worker.proc.returncode)} while idle")
                continue
            try:
                worker.wait_ready()
                return worker
            except (WorkerDied, RuntimeError) as e:
                self._workers.remove(worker)
                worker.kill()
                self.emit(SessionEvent("log", text=f"[kscope] worker failed to start: {e}\n"))
                if self._stopping:
                    raise

    def _replace_current(self, why: str) -> None:
        dead = self._workers.pop(0)
        dead.kill()
        for w in self._workers:
            w.signal_group(signal.SIGCONT)
        if self._workers:
            _set_priority(self._workers[0], 0)  # the spare is now the one being timed
        self.restarts += 1
        if not self._workers and not self._stopping:
            self._workers.append(self._spawn())
        self.emit(SessionEvent("restarted", text=why))

    def _ensure_spare(self) -> None:
        """A warm stand-in for when the current worker must be killed. It starts at low CPU
        priority, so its start-up (torch import, inductor warm-up) does not skew the timings of
        the runs the current worker is making meanwhile."""
        if len(self._workers) < 2 and not self._stopping:
            spare = self._spawn()
            _set_priority(spare, SPARE_NICE)
            self._workers.append(spare)

    def _main(self) -> None:
        self.emit(SessionEvent("starting"))
        try:
            self._ready_worker()
        except (WorkerDied, RuntimeError):
            return
        self.emit(SessionEvent("ready"))
        done = 0
        while True:
            with self._cond:
                while self._wanted == done and not self._stopping:
                    self._cond.wait()
                self._settle()
                if self._stopping:
                    return
                run_id = self._wanted
                self._last_run_at = time.monotonic()
            done = run_id
            try:
                self._run(run_id)
            except (WorkerDied, RuntimeError):
                if self._stopping:
                    return

    def _settle(self) -> None:
        """In a burst of saves (an editor's autosave, a formatter, a script), wait for the burst
        to end instead of starting a run per save: the run that follows sees the last content."""
        while not self._stopping:
            in_burst = self._last_request_at - self._last_run_at < STORM_WINDOW_S
            left = self._last_request_at + STORM_SETTLE_S - time.monotonic() if in_burst else 0
            if left <= 0:
                return
            self._cond.wait(left)

    def _run(self, run_id: int) -> None:
        worker = self._ready_worker()
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
        spec = self.spec
        started = time.monotonic()
        self.emit(SessionEvent("running", run_id, at=started))
        try:
            worker.send({"file": spec.file, "target": spec.target, "device": spec.device, "calls": spec.calls})
        except WorkerDied as e:
            self._report_failure(run_id, None, "crash", str(e))
            self._replace_current(str(e))
            return
        partial: Report | None = None
        while True:
            if self._wanted != run_id or self._stopping:
                if not self._stopping:
                    self._replace_current("superseded by a newer save")
                return
            if time.monotonic() - started > spec.timeout:
                self._report_failure(
                    run_id, partial, "timeout", f"stopped after {spec.timeout:g} s (--timeout); worker restarted"
                )
                self._replace_current("timeout")
                return
            try:
                message = worker.read(POLL_S)
            except WorkerDied as e:
                self._report_failure(run_id, partial, "crash", f"{e}; worker restarted")
                self._replace_current(str(e))
                return
            if message is None:
                continue
            report = Report.from_dict(message.report) if message.report else None
            if message.type == "eager":
                partial = report
                self.emit(SessionEvent("eager", run_id, report))
            elif message.type == "report":
                self.emit(SessionEvent("report", run_id, report))
                self._ensure_spare()
                return

    def _report_failure(self, run_id: int, partial: Report | None, stage: str, message: str) -> None:
        base = partial or Report(file=os.path.abspath(self.spec.file), target=self.spec.target or "")
        error = RunError(stage=stage, type=stage.capitalize(), message=message, file=base.file)
        from dataclasses import replace

        self.emit(SessionEvent("report", run_id, replace(base, errors=base.errors + (error,))))
