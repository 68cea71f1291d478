"""support/quiet.py: under pytest-xdist a quiet test waits for the tests running on other workers,
and they wait for it; outside xdist nothing waits."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid

from support import quiet
from support.paths import REPO

HOLD_S = 1.0
HOLDER = """
import sys, time
sys.path.insert(0, {tests!r})
from support import quiet
with quiet.held({quiet}):
    print("held", flush=True)
    time.sleep({hold})
"""


def _waited(monkeypatch, other_quiet: bool, mine_quiet: bool) -> float:
    """Seconds this process waited for the lock while another worker held it for HOLD_S."""
    run = uuid.uuid4().hex
    monkeypatch.setenv("PYTEST_XDIST_TESTRUNUID", run)
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    code = HOLDER.format(tests=str(REPO / "tests"), quiet=other_quiet, hold=HOLD_S)
    other = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "held"
        start = time.monotonic()
        with quiet.held(mine_quiet):
            waited = time.monotonic() - start
    finally:
        other.wait(10)
        for path in quiet.lock_files(run):
            path.unlink(missing_ok=True)
    return waited


def test_a_quiet_test_waits_for_a_test_on_another_worker(monkeypatch):
    assert _waited(monkeypatch, other_quiet=False, mine_quiet=True) > HOLD_S / 2


def test_other_tests_wait_while_a_quiet_test_runs(monkeypatch):
    assert _waited(monkeypatch, other_quiet=True, mine_quiet=False) > HOLD_S / 2


def test_tests_that_time_nothing_run_side_by_side(monkeypatch):
    assert _waited(monkeypatch, other_quiet=False, mine_quiet=False) < HOLD_S / 2


def test_without_xdist_nothing_is_locked(monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    assert quiet._lock_files() is None  # checked first: a lock taken twice would hang, not fail
    with quiet.held(True), quiet.held(True):
        pass
