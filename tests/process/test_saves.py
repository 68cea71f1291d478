"""How editors save, under the live app: storms of saves coalesce, atomic saves, delete and
recreate, and the file moved away."""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from support.live import GOOD, OP, Live, drive, line_in

from kscope.report.place import Place

pytestmark = pytest.mark.slow


# --- storms and editors ----------------------------------------------------------------------------


def shifted(i: int, broken: bool = False) -> str:
    """The sample with i blank lines above the target: each save puts the op on its own line."""
    src = GOOD.replace("def add_relu", "\n" * i + "def add_relu")
    return src.replace(OP, OP + " +") if broken else src


@pytest.mark.quiet
def test_a_storm_of_saves_starts_at_most_two_runs_and_ends_on_the_last_content(tmp_path):
    async def scenario(live: Live):
        await live.report("the first report")
        for storm, last_broken in [(1, False), (2, True)]:
            n = len(live.events)
            start = time.monotonic()
            for i in range(1, 21):  # 20 saves in 2 s, good and broken mixed
                live.write(shifted(i, broken=(i % 3 == 0) or (i == 20 and last_broken)))
                await asyncio.sleep(max(0.0, start + i * 0.1 - time.monotonic()))
            watcher = live.app.watcher
            await live.until(lambda: not watcher.pending(), "the watcher to deliver the saves")
            report = await live.report(f"storm {storm}: the final report")
            runs = live.kinds(n).count("running")
            assert 1 <= runs <= 2, f"storm {storm}: {runs} runs started for 20 saves"
            last = shifted(20, broken=last_broken)
            if last_broken:
                assert f"target.py:{line_in(last, OP)}" in live.banner() and live.app.stale
            else:
                assert not report.errors and not live.app.stale
                assert {k.lines for k in live.table("eager").mode.kernels} == {(Place("target.py", line_in(last, OP)),)}
        live.assert_recovered("after the storms", await live.save(GOOD))

    drive(Live(tmp_path), scenario)


SETTLE_S = 0.5
"""How long after a save's run is on screen no further request may come: the watcher delivers a save
0.05 s after its last event (app/watch.py, DEBOUNCE_S) and the session starts a run 0.3 s after a
burst's last request (app/session.py, STORM_SETTLE_S); the run itself took seconds before that."""


class Counted:
    """The requests (the watcher's deliveries: each raises app.latest_run) and the runs the
    session started ("running" events) from now on."""

    def __init__(self, live: Live):
        self.live, self.request, self.event = live, live.app.latest_run, len(live.events)

    def requests(self) -> int:
        return self.live.app.latest_run - self.request

    def runs(self) -> int:
        return self.live.kinds(self.event).count("running")

    async def settled(self) -> tuple[int, int]:
        """(requests, runs), once the watcher holds nothing back and SETTLE_S has passed."""
        watcher = self.live.app.watcher
        await self.live.until(lambda: not watcher.pending(), "the watcher to deliver what it saw", 10)
        await asyncio.sleep(SETTLE_S)  # the app runs in this loop meanwhile
        await self.live.until(lambda: not watcher.pending(), "the watcher to deliver what it saw", 10)
        return self.requests(), self.runs()


def test_atomic_saves_delete_recreate_and_moving_the_file_away(tmp_path):
    """Each runs once (docs/reliability.md): counted, the watcher's deliveries and the session's runs,
    for an atomic save, a delete and recreate, a delete with a pause, a move away and back."""
    async def scenario(live: Live):
        await live.report("the first report")
        edited = GOOD.replace(OP, OP + " * 2")

        counted = Counted(live)
        report = await live.save(edited, how="atomic", what="an atomic save")
        assert "cpp_fused_add_mul_relu_0" in [k.name for k in report.compiled.kernels]
        assert live.table("eager").mode.launches == 3
        assert await counted.settled() == (1, 1), "an atomic save: (requests, runs)"

        # Delete + recreate at once (some editors), then with a pause between.
        counted = Counted(live)
        before = live.app.latest_run
        live.path.unlink()
        live.write(GOOD)
        await live.until(lambda: live.app.latest_run > before, "the recreated file to be noticed", 10)
        live.assert_recovered("delete + recreate", await live.report())
        assert await counted.settled() == (1, 1), "a delete and recreate at once: (requests, runs)"
        counted = Counted(live)
        live.path.unlink()
        await live.until(lambda: "file missing" in live.status(), "'file missing' on the status line", 10)
        assert await counted.settled() == (0, 0), "a delete: (requests, runs)"
        report = await live.save(edited, what="the file recreated")
        assert live.table("eager").mode.launches == 3 and not report.errors
        assert await counted.settled() == (1, 1), "a delete, a pause and the file recreated: (requests, runs)"

        # Moved away: say so and keep waiting; moved back: run again.
        away = tmp_path.parent / f"{tmp_path.name}-away.py"
        counted = Counted(live)
        os.rename(live.path, away)
        await live.until(lambda: "file missing" in live.status(), "'file missing' after a move", 10)
        assert live.app.is_running and not live.banner()
        assert await counted.settled() == (0, 0), "a move away: (requests, runs)"
        before = live.app.latest_run
        os.rename(away, live.path)
        await live.until(lambda: live.app.latest_run > before, "the file moved back to be noticed", 10)
        report = await live.report()
        assert not report.errors and live.table("eager").mode.launches == 3
        assert await counted.settled() == (1, 1), "a move away and back: (requests, runs)"
        live.written = edited

    drive(Live(tmp_path), scenario)
