"""The sweep tab: snapshots from a fixed sweep, and `z` with a real CPU worker, cancelled by a save."""

import asyncio
import os
import shutil

import pytest
from support.fixed_session import FixedSession, article_report
from support.forks import shared_session
from support.paths import SAMPLES
from support.pilot import compiled_names, wait_for

from kscope.app.app import KscopeApp
from kscope.app.widgets.sweep import SweepPane
from kscope.report.request import RunRequest, SweepOptions


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_snapshot_sweep_tab(snap_compare, size):
    app = KscopeApp(RunRequest("/work/add_relu.py", None, "cpu", timeout=60.0, calls=5), session_factory=FixedSession(article_report()),
                    watch=False)
    async def sweep(pilot):
        await wait_for(pilot, lambda: app.good is not None, timeout=10)
        await pilot.press("z")
        await wait_for(pilot, lambda: app.query_one(SweepPane).complete is not None, timeout=10)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=sweep)


@pytest.mark.slow
def test_z_queues_then_fills_the_sweep_tab_and_a_save_cancels_the_next_sweep(tmp_path):
    target = tmp_path / "add_relu.py"
    shutil.copy(SAMPLES / "add_relu.py", target)
    spec = RunRequest(str(target), None, "cpu", timeout=60.0, calls=3)
    sweep = SweepOptions(sizes=(100, 1000), budget_s=60.0, static=False)
    app = KscopeApp(spec, sweep=sweep, session_factory=shared_session())

    async def scenario():
        async with app.run_test(size=(120, 40)) as pilot:
            pane = app.query_one(SweepPane)
            await pilot.press("z")  # before the first run is done: queued behind it
            assert app.good is None and pane.state == "queued"
            await wait_for(pilot, lambda: pane.complete is not None)
            assert app.good is not None and app.good.compiled is not None  # the first run was not dropped
            assert app.query_one("#details").active == "sweep"
            first = pane.complete
            assert [p.n for p in first.sweep.points] == [100, 1000] and pane.state == "done"
            table = app.query_one("#sweep-table").content.renderables[0]  # the sizes table, as drawn
            assert [c.header for c in table.columns][:3] == ["n", "launches", "B/n"]
            assert list(table.columns[2].cells) == ["20 → 12", "20 → 12"]  # bytes an element, eager → compiled
            # a second sweep, and a save that changes the graph as it starts: saved from the pane's
            # own begin(), since the two small sizes (their C++ already compiled by the first sweep)
            # can start and end within one of this loop's looks at the screen beside other tests
            begin, begun = pane.begin, []

            def begin_and_save(at):
                begin(at)
                if not begun:  # saved as vim or a "safe write" does, whole (a new file renamed over the old):
                    # the worker reads the file as the sweep begins, and a write in place can hand it
                    # a truncated file, a load error, and a "failed" sweep before the save is seen (CI, once)
                    edited = target.with_suffix(".new")
                    edited.write_text(target.read_text().replace("(a + b).relu()", "(a + b).relu() * 2"))
                    os.replace(edited, target)
                begun.append(at)

            pane.begin = begin_and_save
            await pilot.press("z")
            await wait_for(pilot, lambda: begun, timeout=60)
            await wait_for(pilot, lambda: "cpp_fused_add_mul_relu_0" in compiled_names(app))
            failed = pane.running.errors if pane.running is not None else ()
            assert pane.state == "cancelled" and pane.started is None, (pane.state, failed)
            assert pane.complete is first  # the last complete sweep stays, marked stale
            assert pane.stale
            status = app.query_one("#sweep-status").render().plain
            assert "sweep cancelled by a save" in status and "stale" in status
        app.shutdown()

    asyncio.run(scenario())
