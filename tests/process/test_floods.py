"""Floods the live app must take without stalling: a target printing in a loop, and a loop of
hundreds of small ops (aggregated into few rows)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from support.live import Live, body, drive
from textual.widgets import DataTable

from kscope.app.output_pump import LOG_FLOOD_FLUSH_S, LOG_MAX_BYTES
from kscope.app.widgets.log import MAX_LINES
from kscope.report.codec import report_to_dict

pytestmark = pytest.mark.slow

FLOOD_STALL_S = 0.25
FLOOD_P99_S = 0.05
"""The event loop while a flood is on (pane hidden or shown): its worst stall, which is a report's
paint on a 2-core machine with the worker busy (measured 30-115 ms; CI 202 ms), and its 99th percentile
(measured 2-6 ms here, 28 ms on CI's machine on 2026-12-03). With the RichLog the pane was before:
worst 150-350 ms, p99 80-170 ms shown: the bound still tells the two apart."""
OPEN_STALL_S = 0.15
"""Opening the output pane after a flood: measured 18-73 ms (the RichLog: 140-430 ms)."""


@pytest.mark.quiet
def test_a_flood_of_output_keeps_the_screen_responsive(tmp_path):
    """20,000 lines printed per call, hundreds of thousands in all: the output pane keeps the newest
    lines and says what it skipped, and the event loop never stalls for long, whether the pane
    is on screen during the flood or opened after it. The stall measured is the worst one
    (not the last) while the flood is on: from the save to its last line reaching the pane."""
    lags: list[tuple[float, float]] = []  # (when the sample ended, how late the loop woke)

    async def monitor():
        while True:
            start = time.perf_counter()
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            lags.append((now, now - start - 0.01))

    def during(since: float, until: float) -> list[float]:
        return sorted(lag for at, lag in lags if since <= at <= until)

    def worst(window: list[float]) -> str:
        return f"{window[-1] * 1000:.0f} ms (p99 {window[int(len(window) * .99)] * 1000:.0f} ms, {len(window)} samples)"

    def last_flood_line(lines: list[str], flood: int) -> list[str]:
        # kscope's own notes (this target's prints make dynamo compile no graph: a note says so)
        # reach the pane when the report does, before or after the flood's last batch
        return [line for line in lines if line.startswith(f"flood {flood} ")][-1:]

    async def scenario(live: Live):
        await live.report("the first report")
        task = asyncio.create_task(monitor())
        for flood, shown in [(1, False), (2, True)]:
            if shown:
                live.show_output()
            last = f"flood {flood} line 19999"
            source = body(f"for i in range(20_000):\n        print('flood {flood} line', i)\n    return (a + b).relu()")
            n = len(live.logged)
            saved = time.perf_counter()
            report = await live.save(source, what=f"flood {flood}'s report")
            await live.until(lambda: last_flood_line(live.logged, flood) == [last], f"flood {flood}'s last line", 10)
            window = during(saved, time.perf_counter())
            assert not report.errors and report.eager.launches == 2
            # What reaches the pane is a bounded rate of the newest lines (at most LOG_MAX_BYTES per
            # LOG_FLOOD_FLUSH_S; twice that allowed for the first batches, before the flood is seen),
            # and a note of the rest. A rate: how long the flood lasts depends on the calls timed.
            took = time.perf_counter() - saved
            reached = sum(len(line) + 1 for line in live.logged[n:])
            assert reached / took <= 2 * LOG_MAX_BYTES / LOG_FLOOD_FLUSH_S, (
                f"{reached:,} bytes ({len(live.logged) - n:,} lines) reached the output pane in {took:.1f} s")
            assert any("bytes of output not shown" in line for line in live.logged[n:])
            assert len(window) > 100, f"flood {flood}: only {len(window)} lag samples"
            p99 = window[int(len(window) * .99)]
            assert window[-1] < FLOOD_STALL_S and p99 < FLOOD_P99_S, f"flood {flood}: the event loop stalled {worst(window)}"
            print(f"flood {flood} (pane {'shown' if shown else 'hidden'}): {reached:,} bytes reached the pane"
                  f" in {took:.1f} s; worst stall {worst(window)}")
            if not shown:  # the pane comes on screen after the flood: it must not stall either
                opened = time.perf_counter()
                live.show_output()
                await live.until(lambda: last_flood_line(live.rendered_log(), flood) == [last], "the output pane on screen", 10)
                await asyncio.sleep(0.2)
                window = during(opened, time.perf_counter())
                # It wraps the newest MAX_LINES lines kept while hidden, and renders the rows on screen.
                assert window[-1] < OPEN_STALL_S, f"opening the output pane after a flood stalled the event loop {worst(window)}"
                print(f"opening the pane after flood {flood}: worst stall {worst(window)}")
        await live.until(lambda: last_flood_line(live.rendered_log(), 2) == [last], "the last line on screen", 10)
        assert len(live.rendered_log()) <= MAX_LINES
        task.cancel()

    drive(Live(tmp_path), scenario)


def test_a_loop_of_300_small_ops_aggregates_into_few_rows(tmp_path):
    """A Python loop of 300 small ops: 300 eager launches per call in one row, one fused kernel
    compiled; the screen stays responsive and the Report stays small (2,000 rows of round trips
    made it 600 kB before they were grouped, 300 B a row: 300 would be 90 kB, and both size checks
    below would fail). 2,000 ops took 34 s to run once here, 1,000 took 22 s; in one warm process,
    1,000 took 3.3 s and 300 0.8 s."""

    async def scenario(live: Live):
        await live.report("the first report")
        source = body("for _ in range(300):\n        a = a + 1\n    return a").replace("n=1_000_000", "n=1024")
        report = await live.save(source, what="the 300-op report")
        assert not report.errors, report.errors
        assert [(k.name, k.launches) for k in report.eager.kernels] == [("aten::add", 300)]
        assert len(report.compiled.kernels) <= 3
        for mode in ("eager", "compiled"):
            assert live.table(mode).query_one(DataTable).row_count <= 3
        data = report_to_dict(report)
        without_code = json.dumps({**data, "compiled": {**data["compiled"], "kernels": [
            {**k, "code": None} for k in data["compiled"]["kernels"]]}})
        assert len(without_code) < 16_384
        # generated code is capped per kernel, so the whole Report stays small too
        assert len(json.dumps(data)) < 256_000

    drive(Live(tmp_path, timeout=180.0), scenario)
