"""Tests that time something against the clock run alone, even when pytest-xdist runs the others
two or more at a time.

A test marked `quiet` (a verdict by time, a bound in seconds, the event loop's stalls, a rate
timed again while the CPU is busy: support/answered.py) holds an exclusive lock on one file for its setup, call and
teardown; every other test holds a shared lock on it. So while a quiet test runs, the other
workers wait between tests, and its timing sees the machine as a serial run would. A second file,
taken exclusively for a moment before either lock, is a turnstile: a quiet test waiting for the
exclusive lock holds it, so the others cannot keep taking shared locks in turn and starve it.

Outside xdist (no worker id in the environment) there is nothing to wait for, and no lock.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

MARK = "quiet"


def lock_files(run: str) -> tuple[Path, Path]:
    """The turnstile and the lock of pytest-xdist's run `run` (its --testrunuid)."""
    base = Path(tempfile.gettempdir()) / f"kscope-tests-{run}"
    return base.with_suffix(".turnstile"), base.with_suffix(".lock")


def _lock_files() -> tuple[Path, Path] | None:
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run or not os.environ.get("PYTEST_XDIST_WORKER"):
        return None
    return lock_files(run)


@contextmanager
def held(quiet: bool):
    """Hold the run's lock for one test: exclusively if `quiet`, else shared with other tests."""
    files = _lock_files()
    if files is None:
        yield
        return
    turnstile = os.open(files[0], os.O_RDWR | os.O_CREAT, 0o600)
    try:
        lock = os.open(files[1], os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        os.close(turnstile)
        raise
    try:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        if quiet:
            fcntl.flock(lock, fcntl.LOCK_EX)  # waits for the tests running on other workers
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        else:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
            fcntl.flock(lock, fcntl.LOCK_SH)
        yield
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        os.close(lock)
        os.close(turnstile)
