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


def test_atomic_saves_delete_recreate_and_moving_the_file_away(tmp_path):
    async def scenario(live: Live):
        await live.report("the first report")
        edited = GOOD.replace(OP, OP + " * 2")

        report = await live.save(edited, how="atomic", what="an atomic save")
        assert "cpp_fused_add_mul_relu_0" in [k.name for k in report.compiled.kernels]
        assert live.table("eager").mode.launches == 3

        # Delete + recreate at once (some editors), then with a pause between.
        before = live.app.latest_run
        live.path.unlink()
        live.write(GOOD)
        await live.until(lambda: live.app.latest_run > before, "the recreated file to be noticed", 10)
        live.assert_recovered("delete + recreate", await live.report())
        live.path.unlink()
        await live.until(lambda: "file missing" in live.status(), "'file missing' on the status line", 10)
        report = await live.save(edited, what="the file recreated")
        assert live.table("eager").mode.launches == 3 and not report.errors

        # Moved away: say so and keep waiting; moved back: run again.
        away = tmp_path.parent / f"{tmp_path.name}-away.py"
        os.rename(live.path, away)
        await live.until(lambda: "file missing" in live.status(), "'file missing' after a move", 10)
        assert live.app.is_running and not live.banner()
        before = live.app.latest_run
        os.rename(away, live.path)
        await live.until(lambda: live.app.latest_run > before, "the file moved back to be noticed", 10)
        report = await live.report()
        assert not report.errors and live.table("eager").mode.launches == 3
        live.written = edited

    drive(Live(tmp_path), scenario)
