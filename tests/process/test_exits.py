"""Leaving kscope (issue 4): q, Ctrl-C, SIGTERM, SIGHUP and the terminal closing under it (an SSH
session dropping), each while idle and mid-run (the worker busy in an endless run, the spare
frozen meanwhile). Within 2 seconds no process of kscope's may be left: not its workers, not
inductor's compile workers, not a process the user's code started.

kscope runs as a user runs it: `python -m kscope FILE --device cpu` in a pseudo-terminal that is
its controlling terminal. Every process it starts inherits a marker in its environment, so the
test finds them all in /proc, even one that was re-parented away from kscope. The target starts
inductor's compile-worker pool (on a GPU machine every worker has one; on a CPU it is asked for)
and a child process of its own.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
import uuid
from pathlib import Path

import pytest
from support.marked_processes import Marked, is_worker, name, state

from kscope.worker.ranks import rank_name

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; sets a controlling terminal"),
]

QUIT_WITHIN_S = 2.0
"""Measured 0.05-0.38 s for the ten quits with two other test runs loading both cores: a bound that
holds beside other tests, so these run in tests/run.py's parallel phase."""

TARGET = '''
import subprocess
import torch
from torch._inductor.async_compile import AsyncCompile

AsyncCompile.warm_pool()  # inductor's compile workers, as a GPU machine starts them
AsyncCompile.wakeup()
_child = subprocess.Popen(["sleep", "600"])  # a process of the user's own


def add_relu(a, b):
    return (a + b).relu()


def inputs(device, n=1000):
    return torch.randn(n, device=device), torch.randn(n, device=device)
'''.lstrip()
BUSY = TARGET.replace("return (a + b).relu()", "while True:\n        a = a + 1")


class Kscope(Marked):
    """kscope in a pseudo-terminal of 120x40, its screen output collected."""

    def __init__(self, folder: Path, source: str = TARGET, flags: tuple[str, ...] = ()):
        self.path = folder / "target.py"
        self.path.write_text(source)
        self.marker = f"KSCOPE_EXIT_TEST={uuid.uuid4().hex}"
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        key, value = self.marker.split("=")
        env = {**os.environ, "TERM": "xterm-256color", key: value, "TORCHINDUCTOR_COMPILE_THREADS": "2"}

        def controlling_terminal():  # a session of its own, this pty its terminal: as in an SSH login
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kscope", str(self.path), "--device", "cpu", *flags],
            stdin=slave, stdout=slave, stderr=slave, env=env, cwd=folder, preexec_fn=controlling_terminal,
        )
        os.close(slave)
        self.screen = bytearray()
        self._hang_up = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.seen: dict[int, str] = {}

    def _read(self) -> None:
        # Never blocked in read(): a read in progress keeps the terminal open through a close()
        # from another thread, and then the kernel never hangs it up.
        while not self._hang_up.is_set():
            if not select.select([self.master], [], [], 0.05)[0]:
                continue
            try:
                data = os.read(self.master, 65536)
            except OSError:  # EIO: the other side has gone
                return
            if not data:
                return
            self.screen.extend(data)

    def close_terminal(self) -> None:
        """Close the terminal's master side, as sshd does when the connection drops: the kernel
        hangs the terminal up and sends SIGHUP to kscope, its controlling process."""
        self._hang_up.set()
        self._reader.join()
        os.close(self.master)
        self.master = None

    def processes(self) -> dict[int, str]:
        found = super().processes()
        self.seen.update(found)
        return found

    def wait(self, condition, what: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if self.proc.poll() is not None:
                raise AssertionError(f"kscope exited ({self.proc.returncode}) while waiting for {what}")
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; processes: {self.processes()}")
            time.sleep(0.1)

    def wait_ready(self) -> None:
        """The first report is on screen, the spare worker is up, the compile pool and the
        user's child process are running."""

        def ready():
            cmds = list(self.processes().values())
            return (
                b"done in" in self.screen
                and len(self.workers()) == 2
                and any("compile_worker" in c for c in cmds)
                and any(c.startswith("sleep 600") for c in cmds)
            )

        self.wait(ready, "the first report, both workers, the compile pool and the user's child")

    def last_words(self, chars: int = 4000) -> str:
        """The end of what kscope wrote to its terminal, escape sequences taken out: after an
        unhandled exception Textual prints the traceback there as it leaves."""
        text = bytes(self.screen[-chars * 4:]).decode(errors="replace")
        return re.sub(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-B]|[=>])", "", text)[-chars:]

    def cleanup(self) -> None:
        self.kill_marked()
        if self.master is not None:
            self._hang_up.set()
            self._reader.join()
            os.close(self.master)


def _quit(k: Kscope, how: str) -> None:
    if how == "q":
        os.write(k.master, b"q")
    elif how == "ctrl-c":
        os.write(k.master, b"\x03")
    elif how == "SIGTERM":
        k.proc.send_signal(signal.SIGTERM)
    elif how == "SIGHUP":
        k.proc.send_signal(signal.SIGHUP)
    elif how == "terminal closed":
        k.close_terminal()
    else:
        raise ValueError(how)


EXIT_STATUS = {"q": 0, "ctrl-c": 0, "SIGTERM": 128 + signal.SIGTERM, "SIGHUP": 128 + signal.SIGHUP,
               "terminal closed": 128 + signal.SIGHUP}


QUITS = ("q", "ctrl-c", "SIGTERM", "SIGHUP", "terminal closed")
MID_RUN_QUITS = ("q", "SIGTERM", "terminal closed")
"""Mid-run, one quit of each path out of the app: ctrl-c is q's binding (the terminal is raw, so
the app reads it as a key) and a SIGHUP is a closed terminal's signal without the hang-up, both
checked idle. Each case starts kscope, its fork server, a spare, inductor's compile workers and
a compile: ~9 s of CPU."""


@pytest.mark.parametrize(
    "how, busy",
    [(how, False) for how in QUITS] + [(how, True) for how in MID_RUN_QUITS],
    ids=lambda v: {True: "during-a-run", False: "idle"}.get(v, v) if isinstance(v, bool) else v,
)
def test_quitting_leaves_no_process_behind(tmp_path, how, busy):
    k = Kscope(tmp_path)
    try:
        k.wait_ready()
        if busy:  # a run that never ends: the worker is busy in the user's loop
            mark = len(k.screen)
            k.path.write_text(BUSY)
            k.wait(lambda: b"running eager" in k.screen[mark:], "the endless run to start")
            time.sleep(0.5)  # well inside the run
        before = dict(k.processes())
        if busy:  # the spare is frozen (SIGSTOP) while a run is timed: it must go too
            assert any(state(pid) == "T" and is_worker(pid, cmd) for pid, cmd in before.items()), before
        mark = len(k.screen)
        _quit(k, how)
        took, left = k.gone_within(QUIT_WITHIN_S + 3)
        print(f"{how} ({'mid-run' if busy else 'idle'}): everything gone in {took:.2f} s")
        assert k.proc.poll() is not None, f"{how}: kscope itself still running {took:.1f} s later"
        assert not left, f"{how}: still running {took:.1f} s later: {left}"
        assert took <= QUIT_WITHIN_S, f"{how}: everything gone only after {took:.1f} s"
        assert k.proc.returncode == EXIT_STATUS[how], f"{how}: exit status {k.proc.returncode}; it printed:\n{k.last_words()}"
        assert any("compile_worker" in c for c in before.values())  # the check had something to find
        if how in ("q", "ctrl-c", "SIGTERM"):
            k._reader.join(2)
            assert b"\x1b[?1049l" in k.screen[mark:], f"{how}: the terminal was not restored"
    finally:
        k.cleanup()


RANKS_BUSY = """
import torch
import torch.distributed as dist


def spin(a):
    while True:  # every rank busy in the eager half, its process group up
        a = a + 1


def inputs(device, n=1000):
    return (torch.ones(n, device=device) * dist.get_rank(),)
""".lstrip()


@pytest.mark.parametrize("how", ["q", "SIGTERM"])
def test_quitting_mid_run_with_ranks_leaves_no_process_behind(tmp_path, how):
    """--nproc 2 (issue 14): the ranks the worker started go with kscope too."""
    k = Kscope(tmp_path, RANKS_BUSY, flags=("--nproc", "2"))
    try:
        def ranks_running():
            ranks = [pid for pid in k.processes() if name(pid) in (rank_name(0), rank_name(1))]
            return b"running eager" in k.screen and len(ranks) == 2

        k.wait(ranks_running, "both ranks busy in the eager half")
        time.sleep(0.5)
        before = dict(k.processes())
        _quit(k, how)
        took, left = k.gone_within(QUIT_WITHIN_S + 3)
        print(f"{how} with 2 ranks mid-run: {len(before)} processes gone in {took:.2f} s")
        assert not left, f"{how}: still running {took:.1f} s later: {left}"
        assert took <= QUIT_WITHIN_S, f"{how}: everything gone only after {took:.1f} s"
    finally:
        k.cleanup()
