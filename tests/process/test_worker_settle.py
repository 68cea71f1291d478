"""The worker times eager against compiled only once the app says the eager half is on screen
(RunRequest.settle), and waits SHOWN_WAIT_S at most for it: a real worker, its real messages."""

from __future__ import annotations

import time

import pytest
from support.paths import SAMPLES

from kscope.report.request import RunRequest
from kscope.worker.child import SHOWN_WAIT_S
from kscope.worker.client import Worker


def _gap(worker: Worker, request: RunRequest, shown_after: float | None) -> float:
    """Seconds from the eager half's message to the final report; the app's Shown sent
    `shown_after` seconds after the eager half arrived (None: never)."""
    rid = worker.send(request)
    eager = worker.read(300)
    assert eager is not None and eager.type == "eager", eager
    arrived = time.monotonic()
    if shown_after is not None:
        time.sleep(shown_after)
        worker.send_shown(rid)
    report, timing = worker.read(300), []
    while report is not None and report.type in ("phase", "timing"):  # a compile's start and end (worker.clock)
        if report.type == "timing":  # the worker says it times now: after the wait, once
            timing.append(time.monotonic() - arrived)
        report = worker.read(300)
    assert report is not None and report.type == "report", report
    assert len(timing) == 1, timing
    if shown_after is not None:
        assert timing[0] >= shown_after, (timing, shown_after)
    assert not report.report.errors, report.report.errors
    return time.monotonic() - arrived


@pytest.mark.slow
@pytest.mark.quiet
def test_the_worker_times_only_once_the_eager_half_is_on_screen():
    # 100 elements: the timing itself takes milliseconds, the waits are what shows
    request = RunRequest(str(SAMPLES / "add_relu.py"), None, "cpu", calls=2, n=100, settle=True)
    worker = Worker()
    worker.start()
    try:
        worker.wait_ready()
        _gap(worker, request, 0.0)  # compiles: the runs below hit the caches
        never = _gap(worker, request, None)
        late = _gap(worker, request, 0.3)
        at_once = _gap(worker, request, 0.0)
    finally:
        worker.kill()
    print(f"eager half → report: never shown {never:.2f} s, shown after 0.3 s {late:.2f} s, at once {at_once:.2f} s")
    assert never >= SHOWN_WAIT_S  # it waited the whole half second for a Shown that never came
    assert late >= 0.3  # it waited for the Shown it was sent
    assert at_once < never - SHOWN_WAIT_S / 2  # and a Shown ends the wait
