"""Finding every process a test started, at any depth, even one re-parented away: the test puts a
marker in the first process's environment, which everything it starts inherits, and reads /proc."""

from __future__ import annotations

import os
import signal
import subprocess
import time


def state(pid: int) -> str | None:
    """The process's state letter (R, S, T, Z, ...), None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


WORKER_COMMAND = "kscope.worker.forkserver"
"""The command line of the fork server and of each worker forked from it..."""
WORKER_NAME = "kscope-worker"
"""...which the workers' names (/proc/PID/comm) tell apart."""


def name(pid: int) -> bytes | None:
    """The process's name (/proc/PID/comm), as kscope's processes set it."""
    try:
        with open(f"/proc/{pid}/comm", "rb") as f:
            return f.read().strip()
    except OSError:
        return None


def is_worker(pid: int, cmd: str) -> bool:
    """A live app's worker (not its fork server)."""
    return WORKER_COMMAND in cmd and name(pid) == WORKER_NAME.encode()


class Marked:
    """A test's process (`proc`), started with `marker` ("KEY=VALUE") in its environment."""

    proc: subprocess.Popen
    marker: str

    def processes(self) -> dict[int, str]:
        """Every live process `proc` started (any depth), with its command line; zombies hold
        nothing and are left out."""
        found = {}
        needle = self.marker.encode() + b"\0"
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == self.proc.pid:
                continue
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if needle not in f.read():
                        continue
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                continue
            if state(int(entry)) not in (None, "Z"):
                found[int(entry)] = cmd
        return found

    def workers(self) -> list[int]:
        return [pid for pid, cmd in self.processes().items() if is_worker(pid, cmd)]

    def gone_within(self, seconds: float) -> tuple[float, dict[int, str]]:
        """Seconds until `proc` and everything it started had exited, or what was left."""
        start = time.monotonic()
        while True:
            left = self.processes()
            if self.proc.poll() is not None and not left:
                return time.monotonic() - start, {}
            if time.monotonic() - start > seconds:
                return time.monotonic() - start, left
            time.sleep(0.02)

    def kill_marked(self) -> None:
        for pid in self.processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
