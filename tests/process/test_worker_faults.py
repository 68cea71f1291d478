"""Faults of the worker under the live app: a hang, a crash, a kill from outside (busy or idle),
the fork server killed, a worker that cannot start; each restarts the worker and the next save works."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest
from support.live import GOOD, Live, alive, body, drive, line_in

pytestmark = pytest.mark.slow


# --- faults -------------------------------------------------------------------------------------------

TIMEOUT_S = 3.0


async def _restarts_and_recovers(live: Live, case: str, source: str, has: list[str], good):
    """Save `source`: the last figures stay, marked stale, with `has` in the banner; the worker is
    replaced and said so; the stopped worker is gone; the next good save recovers. The seconds from
    the save to the stale banner, and the good report."""
    restarts, before = live.app.session.restarts, set(live.app.session.worker_pids())
    started = time.monotonic()
    await live.save(source, what=case)
    took = time.monotonic() - started
    live.assert_stale(case, file_line=None, has=has, good=good)
    await live.until(lambda: live.app.session.restarts == restarts + 1, f"{case}: a worker restart")
    await live.until(lambda: any("worker restarted" in line for line in live.logged[-3:]),
                     f"{case}: 'worker restarted' in the output pane", 10)
    dead = before - set(live.app.session.worker_pids())
    assert dead and not any(alive(pid) for pid in dead), f"{case}: the stopped worker is still running"
    good = await live.save(GOOD, what=f"the good save after: {case}")
    live.assert_recovered(case, good)
    return took, good


@pytest.mark.quiet
def test_hangs_are_stopped_at_the_timeout_and_an_idle_kill_is_said_within_a_second(tmp_path):
    """The bounds in seconds, timed alone (tests/run.py's quiet phase): a hang reported at the
    timeout, a worker killed while idle said within IDLE_NOTICE_S."""
    async def scenario(live: Live):
        good = await live.report("the first report")
        assert not good.errors, good.errors
        assert "timeout 3s" in live.status()  # the limit is on screen
        for case, source in [("infinite loop", body("while True:\n        a = a + 1")),
                             ("very slow target", body("time.sleep(600)\n    return a", "time"))]:
            took, good = await _restarts_and_recovers(live, case, source, ["timeout", "stopped after 3 s"], good)
            print(f"{case}: reported {took:.2f} s after the save")
            # the save to the stale banner: the watcher, the run's 3 s, the worker killed, the screen;
            # measured 3.16-3.38 s (load 2.7-6.7 from other work); was allowed 13 s (issue 38)
            assert TIMEOUT_S <= took < TIMEOUT_S + 2, f"{case}: reported after {took:.1f} s"

        # Killed from outside while idle: noticed, replaced and said in the output pane within
        # IDLE_NOTICE_S of the kill (the bound docs/reliability.md gives), and the next save works.
        noticed, said = await kill_idle_worker(live)
        assert said <= IDLE_NOTICE_S, f"the idle worker's death was said {said:.2f} s after the kill (noticed at {noticed:.2f} s)"
        live.assert_recovered("killed while idle", await live.save(GOOD, what="the save after the kill"))

    drive(Live(tmp_path, timeout=TIMEOUT_S), scenario)


def test_crashes_and_a_killed_fork_server_restart_the_worker_and_out_of_memory_does_not(tmp_path):
    """What no clock bounds, beside other tests (tests/run.py's parallel phase): kscope's own
    timeout, not the 3 s of the hangs (the seed's first run, compile included, took longer than that
    beside other tests)."""
    async def scenario(live: Live):
        good = await live.report("the first report")
        assert not good.errors, good.errors
        for case, source, has in [
            ("os._exit", body("os._exit(3)", "os"), ["crash", "exited with status 3"]),
            ("os.abort()", body("os.abort()", "os"), ["crash", "SIGABRT"]),
            ("segfault", body("ctypes.string_at(0)", "ctypes"), ["crash", "SIGSEGV"]),
        ]:
            _, good = await _restarts_and_recovers(live, case, source, has, good)

        # Out of memory in the user's code: reported as such; the worker is not restarted.
        restarts = live.app.session.restarts
        for case, source, has in [
            ("MemoryError", body("x = bytearray(2**50)\n    return a"), ["eager", "MemoryError"]),
            ("torch allocation too big", body("return torch.empty(2**50) + a"), ["can't allocate memory"]),
        ]:
            await live.save(source, what=case)
            live.assert_stale(case, file_line=f"target.py:{line_in(source, '2**50')}", has=has, good=good)
            good = await live.save(GOOD, what=f"the good save after: {case}")
            live.assert_recovered(case, good)
        assert live.app.session.restarts == restarts

        # The fork server killed from outside: its workers die with it (worker.lifetime), the
        # session starts a new server, and the next save works.
        server, workers = live.app.session._forks.proc.pid, live.app.session.worker_pids()
        restarts = live.app.session.restarts
        os.kill(server, signal.SIGKILL)
        await live.until(lambda: live.app.session.restarts > restarts, "a restart after the fork server's death", 10)
        await live.until(lambda: not any(alive(pid) for pid in [server, *workers]), "the server and its workers gone", 10)
        live.assert_recovered("fork server killed", await live.save(GOOD, what="the save after the server's death"))
        assert live.app.session._forks.proc.pid != server

    drive(Live(tmp_path), scenario)


IDLE_NOTICE_S = 1.0
"""docs/reliability.md: a worker killed from outside while idle is noticed within 1 s. The session looks every
IDLE_CHECK_S (0.5 s); measured 0.2-0.6 s from the kill to the line in the output pane."""


async def kill_idle_worker(live: Live) -> tuple[float, float]:
    """SIGKILL the idle current worker; seconds from the kill until the session replaced it
    (its `restarted` event) and until the output pane said so."""
    (victim, *_) = live.app.session.worker_pids()
    n, shown = len(live.events), len(live.logged)
    killed = time.monotonic()
    os.kill(victim, signal.SIGKILL)
    await live.until(lambda: any("SIGKILL while idle" in line for line in live.logged[shown:]),
                     "the idle worker's death in the output pane", IDLE_NOTICE_S + 10)
    said = time.monotonic() - killed
    (restarted,) = [e for e in live.events[n:] if e.kind == "restarted"]
    assert victim not in live.app.session.worker_pids() and not alive(victim)
    return restarted.at - killed, said


def test_a_worker_that_cannot_start_is_reported_and_retried_at_the_next_save(tmp_path, monkeypatch):
    """torch fails to import in the worker (a broken install, say): kscope says so on screen,
    does not respawn workers in a loop, and the save after the install is fixed works."""
    broken = tmp_path / "broken-site" / "torch"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('torch is broken in this test')\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(broken.parent), os.environ.get("PYTHONPATH")])))
    work = tmp_path / "work"
    work.mkdir()

    async def scenario(live: Live):
        report = await live.report("the failure report")
        assert report.eager is None and [e.stage for e in report.errors] == ["crash"]
        assert "no worker could start" in live.banner() and "target.py" in live.banner()
        # the dying worker's traceback comes through the output pipe, on its own thread
        await live.until(lambda: any("torch is broken in this test" in line for line in live.logged),
                         "the worker's ImportError in the output pane", timeout=10)
        failed = sum("worker failed to start" in line for line in live.logged)
        await asyncio.sleep(2)  # nothing happens meanwhile: no worker is started again and again
        assert sum("worker failed to start" in line for line in live.logged) == failed <= 4
        (broken / "__init__.py").unlink()  # the install is fixed
        report = await live.save(GOOD, what="the report after the fix")
        assert not report.errors and report.eager.launches == 2 and live.banner() == ""

    drive(Live(work, own_forks=True), scenario)  # the app's own fork server is the one that cannot start
