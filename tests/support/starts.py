"""The tests that start a kscope process (the CLI, a worker, a fork server), a browser or a
terminal are marked `slow`, which the quick tier (`tests/run.py --quick`) leaves out; this module
keeps that mark true. Every test is watched, in the whole suite as in the quick tier: one that
starts such a process without the mark fails at its teardown, saying what it started and to mark
it. So a new test can neither make the quick tier start processes nor be left out of CI (which
runs every test, marked or not).

Watched: every subprocess Python starts (its audit event "subprocess.Popen", which sees them all)
and every kscope worker (Worker.start: a worker forked from an already running fork server starts
no subprocess in this process).
"""

from __future__ import annotations

import os
import shlex
import sys
import threading

MARK = "slow"

PROGRAMS = {"kscope", "tmux", "chromium", "chromium-browser", "google-chrome", "chrome", "node", "tesseract"}
"""Programs that are such a process by name (Playwright drives the browser through node)."""

_current: list = [None]  # the test item running now (setup, call and teardown)
_started: dict[str, list[str]] = {}  # nodeid -> what it started
_lock = threading.Lock()


def what(args) -> str | None:
    """The command line, when it is one the quick tier must not run; None otherwise."""
    if isinstance(args, (str, bytes)):
        argv = shlex.split(os.fsdecode(args))
    else:
        argv = [os.fsdecode(a) if isinstance(a, (bytes, os.PathLike)) else str(a) for a in args]
    if not argv:
        return None
    program = os.path.basename(argv[0])
    kscope_module = any(a == "-m" and (b == "kscope" or b.startswith("kscope.")) for a, b in zip(argv, argv[1:]))
    script = program in ("bash", "sh") and any(a.endswith(".sh") for a in argv[1:])
    if program in PROGRAMS or kscope_module or script:
        return " ".join(argv)[:200]
    return None


def _record(line: str) -> None:
    item = _current[0]
    if item is not None:
        with _lock:
            _started.setdefault(item.nodeid, []).append(line)


def _audit(event: str, args: tuple) -> None:
    if event == "subprocess.Popen" and _current[0] is not None:
        line = what(args[1])
        if line:
            _record(line)


def install() -> None:
    """Once per test process, before any test runs."""
    sys.addaudithook(_audit)
    from kscope.worker.client import Worker

    start = Worker.start

    def watched_start(self, *args, **kwargs):
        _record("a kscope worker (Worker.start)")
        return start(self, *args, **kwargs)

    Worker.start = watched_start


def running(item) -> None:
    _current[0] = item


def unmarked_starts(item) -> list[str]:
    """What `item` started, if it is not marked `slow` (and forget it either way)."""
    with _lock:
        started = _started.pop(item.nodeid, [])
    _current[0] = None
    return [] if item.get_closest_marker(MARK) is not None else started


def message(item, started: list[str]) -> str:
    shown = "\n  ".join(dict.fromkeys(started))
    return (f"{item.nodeid} started a kscope process, a browser or a terminal without the `{MARK}` mark "
            f"(tests/run.py --quick runs the unmarked tests and must start none; tests/support/starts.py):\n  {shown}\n"
            f"Mark it: @pytest.mark.{MARK}")
