"""Start, talk to, and stop the worker process. No torch here: the caller stays light.

The worker runs in its own process group, so stopping it also stops any compile workers inductor
started, and it is killed by the kernel if this process dies (see kscope.worker.child).
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from typing import IO

from kscope.report.request import RunRequest, SweepRequest
from kscope.worker.forks import Forked, ForkServer
from kscope.worker.protocol import Message, read_message, request_line, shown_line

STARTUP_TIMEOUT_S = 180.0
KILL_WAIT_S = 5.0


class WorkerDied(Exception):
    def __init__(self, returncode: int | None):
        self.returncode = returncode
        super().__init__(describe_exit(returncode))


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "the worker stopped answering"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"the worker was killed by {name}"
    return f"the worker exited with status {returncode}"


class Worker:
    """A fresh `python -m kscope.worker.child` (--once), or one forked warm from `forks` (the live
    app; `stdout` is then an fd, which takes stderr too, and `nice` its CPU priority)."""

    def __init__(self, stdout: int | IO | None = None, stderr: int | IO | None = None, warm: bool = False,
                 forks: ForkServer | None = None, nice: int = 0):
        self.stdout, self.stderr, self.warm, self.forks, self.nice = stdout, stderr, warm, forks, nice
        self.proc: subprocess.Popen | Forked | None = None
        self._requests: IO | None = None
        self._results_fd: int | None = None
        self._buffer = b""
        self._next_id = 0
        self.ready = False

    def start(self) -> None:
        req_r, req_w = os.pipe()
        res_r, res_w = os.pipe()
        if self.forks is not None:
            assert isinstance(self.stdout, int)
            self.proc = self.forks.fork((req_r, res_w, self.stdout), self.nice)
        else:
            self._popen(req_r, res_w)
        os.close(req_r)
        os.close(res_w)
        self._requests = os.fdopen(req_w, "w", encoding="utf-8")
        self._results_fd = res_r
        self._buffer = b""

    def _popen(self, req_r: int, res_w: int) -> None:
        argv = [sys.executable, "-m", "kscope.worker.child", str(req_r), str(res_w)]
        if self.warm:
            argv.append("--warm")
        self.proc = subprocess.Popen(
            argv,
            pass_fds=(req_r, res_w),
            stdin=subprocess.DEVNULL,
            stdout=self.stdout,
            stderr=self.stderr,
            start_new_session=True,
        )

    @property
    def results_fd(self) -> int | None:
        return self._results_fd

    def wait_ready(self, timeout: float = STARTUP_TIMEOUT_S) -> None:
        """Block until the worker has imported torch (at once if it already said so)."""
        if self.ready:
            return
        message = self.read(timeout)
        if message is None:
            self.kill()
            raise WorkerDied(None)
        if message.type != "ready":
            raise RuntimeError(f"unexpected first message from the worker: {message.type}")
        self.ready = True

    def send(self, request: RunRequest | SweepRequest) -> int:
        """Ask for a run or a sweep; its id, which the worker's messages about it carry."""
        self._next_id += 1
        self._write(request_line(request, self._next_id))
        return self._next_id

    def send_shown(self, request_id: int) -> None:
        """Say the eager half of that request is on screen (RunRequest.settle)."""
        self._write(shown_line(request_id))

    def _write(self, line: str) -> None:
        assert self._requests is not None
        try:
            self._requests.write(line)
            self._requests.flush()
        except (BrokenPipeError, ValueError):
            raise WorkerDied(self.proc.poll() if self.proc else None) from None

    def read(self, timeout: float | None) -> Message | None:
        """The next message, None after `timeout` seconds; WorkerDied if the worker is gone."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            with selectors.DefaultSelector() as sel:
                sel.register(self._results_fd, selectors.EVENT_READ)
                if not sel.select(left):
                    return None
            chunk = os.read(self._results_fd, 1 << 20)
            if not chunk:
                raise WorkerDied(self._reap())
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return read_message(line)

    def _reap(self) -> int | None:
        if self.proc is None:
            return None
        try:
            return self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def signal_group(self, signum: int) -> None:
        """Send a signal to the worker and everything it started (SIGSTOP / SIGCONT to pause)."""
        if self.proc is not None and self.proc.pid is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signum)
            except (ProcessLookupError, PermissionError):
                pass

    def kill(self) -> None:
        """Stop the worker and everything it started, now."""
        if self.proc is not None and self.proc.poll() is None:
            if isinstance(self.proc, Forked):
                self.proc.kill()  # its process group, or on arrival if it is still to be forked
            else:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    self.proc.kill()
            try:
                self.proc.wait(timeout=KILL_WAIT_S)
            except subprocess.TimeoutExpired:
                pass  # a process SIGKILL does not end at once (in the kernel, on a dead NFS mount): never hang on it
        self.close()

    def close(self) -> None:
        if self._requests is not None:
            try:
                self._requests.close()
            except OSError:
                pass
            self._requests = None
        if self._results_fd is not None:
            os.close(self._results_fd)
            self._results_fd = None


def has_answered(worker: Worker) -> bool:
    """The worker said it is ready, or has something to say (its ready message, or its end)."""
    if worker.ready or worker.results_fd is None:
        return True
    with selectors.DefaultSelector() as sel:
        sel.register(worker.results_fd, selectors.EVENT_READ)
        return bool(sel.select(0))


def set_priority(worker: Worker, nice: int) -> None:
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


RANKS_EXTRA_S = 130.0
"""--nproc: the ranks import torch before their timeout starts (worker.ranks.RANK_STARTUP_S),
and the worker stops them itself at the timeout to say where each was: wait this much longer."""


def run_timeout(timeout: float, nproc: int | None) -> float:
    """How long a client waits for a run's report before it kills the worker."""
    return timeout + (RANKS_EXTRA_S if nproc else 0.0)
