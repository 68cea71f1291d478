"""While the worker times eager against compiled, the app keeps still: its status clock counts whole
seconds then (a redraw ten times a second is the app's own work beside the timed calls, issue 36)."""

from __future__ import annotations

import time

import pytest
from support.live import Live, body, drive

from kscope.app.widgets.status import StatusLine

pytestmark = pytest.mark.slow

SLOW = body("""x, y = a.view(1000, 1000), b.view(1000, 1000)
    for _ in range(12):
        x = torch.tanh(x @ y)
    return x""")
"""The sample's 10⁶ floats as 1000×1000 matrices, multiplied 12 times: 24 GFLOP a call, tenths of a
second on 2 CPU cores, so that the timing (3 rounds of each mode, then its call rounds) lasts seconds."""


def test_the_status_clock_counts_seconds_while_the_worker_times(tmp_path):
    async def scenario(live: Live):
        status = live.app.query_one(StatusLine)
        show, said = status.show, []

        def recording_show(**kwargs):
            said.append((time.monotonic(), kwargs["state"]))
            return show(**kwargs)

        status.show = recording_show
        await live.report()
        timing = next(e.at for e in live.events if e.kind == "timing")
        report = next(e.at for e in live.events if e.kind == "report" and e.at > timing)
        window = report - timing
        assert window >= 0.8, f"the timing took {window:.2f} s: too short to tell a 10 Hz clock from 1 Hz"
        during = [state for at, state in said if timing + 0.15 < at < report]
        assert during and all(state.startswith("timing eager vs compiled… ") for state in during), during
        # the old clock redrew 10 times a second: ~10 × window; whole seconds: one a second
        assert len(during) <= int(window) + 2, f"{len(during)} redraws in {window:.2f} s of timing: {during}"
        before = [state for at, state in said if at < timing]
        assert len(before) > 3, "the clock ran before the timing (the recording saw its redraws)"

    drive(Live(tmp_path, source=SLOW), scenario)
