"""A verdict to check, measured again while other work took the CPU from the timed calls, never
skipped: a test of a verdict that read "busy" times again (up to TRIES times within WITHIN_S
seconds), and fails, saying how long the calls waited each time, if it never got an answer.

And busy loops beside a test (`python -c 'while True: pass'`), for as long as it needs them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

TRIES = 30
WITHIN_S = 180.0
PAUSE_S = 3.0
"""Between tries: a burst of other work (a compile, another test's start-up) may pass meanwhile.
On this 2-core machine shared with other engineers (2026-12-03) bursts lasted seconds to minutes."""


def answered(measure: Callable[[], T], verdict_of: Callable[[T], tuple[str, float | None]]) -> T:
    """measure() again while verdict_of(its result) is ("busy", the share the calls waited)."""
    waits: list[float | None] = []
    deadline = time.monotonic() + WITHIN_S
    while True:
        result = measure()
        verdict, waiting = verdict_of(result)
        if verdict != "busy":
            return result
        waits.append(waiting)
        if len(waits) >= TRIES or time.monotonic() + PAUSE_S > deadline:
            shares = ", ".join("?" if w is None else f"{w:.0%}" for w in waits)
            raise AssertionError(
                f"no verdict: the timed calls waited for a CPU past engine.measure.timing.BUSY in each of "
                f"{len(waits)} timings ({shares} of the CPU time they wanted): other work took the cores")
        time.sleep(PAUSE_S)


def cpus() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0))


@contextmanager
def busy_loops(n: int, nice: int = 0, own_sessions: bool = True) -> Iterator[list[subprocess.Popen]]:
    """n processes spinning `while True: pass`, each in a session of its own (as one started from
    another terminal: Linux schedules each session as a group) unless not `own_sessions`, at
    `nice`; killed on the way out. Yields once each has run."""
    code = f"import os\nos.nice({nice})\nwhile True: pass" if nice else "while True: pass"
    procs = [subprocess.Popen([sys.executable, "-c", code], start_new_session=own_sessions) for _ in range(n)]
    try:
        deadline = time.monotonic() + 10
        while not all(_ran(p.pid) for p in procs) and time.monotonic() < deadline:
            time.sleep(0.05)
        yield procs
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def _ran(pid: int) -> bool:
    """The process has run its loop for a while (0.1 s of CPU: past the interpreter's start)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") >= 0.1
