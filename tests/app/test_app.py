"""The live app: snapshots from a fixed Report, and a Pilot test with a real CPU worker."""

import asyncio
import os
import shutil
import time

import pytest
from support.fixed_session import (
    article_report,
    backward_report,
    graph_break_report,
)
from support.forks import shared_session
from support.paths import SAMPLES
from support.pilot import compiled_names, fixed_app, wait_for

from kscope.app.app import KscopeApp
from kscope.app.widgets.code import CodePane
from kscope.app.widgets.kernels import KernelTable
from kscope.app.widgets.source import SourcePane
from kscope.report.request import RunRequest


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_snapshot_article(snap_compare, size):
    assert snap_compare(fixed_app(article_report()), terminal_size=size)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_snapshot_forward_and_backward(snap_compare, size):
    assert snap_compare(fixed_app(backward_report(), backward=True), terminal_size=size)


def test_snapshot_graph_break_120x40(snap_compare):
    assert snap_compare(fixed_app(graph_break_report(), "/work/branchy.py"), terminal_size=(120, 40))


def test_snapshot_source_of_the_fused_kernel_120x40(snap_compare):
    # tab to the compiled table (its first row, the fused kernel, is selected), then the source tab
    async def select_fused(pilot):
        app = pilot.app
        await wait_for(pilot, lambda: pilot.app.drawn is not None)  # the report's panes all drawn
        app.query_one("#compiled-kernels DataTable").focus()
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()

    assert snap_compare(fixed_app(article_report()), terminal_size=(120, 40), run_before=select_fused)


def test_snapshot_generated_code_80x24(snap_compare):
    async def select_code(pilot):
        await wait_for(pilot, lambda: pilot.app.drawn is not None)  # the report's panes all drawn
        pilot.app.query_one("#compiled-kernels DataTable").focus()
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        pilot.app.query_one("#details").scroll_visible(animate=False)
        await pilot.pause()

    assert snap_compare(fixed_app(article_report()), terminal_size=(80, 24), run_before=select_code)


def test_the_kernel_tables_show_the_declared_columns_a_cell_each():
    """The app's kernel tables are render.view.KERNELS_APP: its labels in its order, and every row
    (tagged forward and backward rows too) has a cell for each column, the unknown ones "?"."""
    from textual.widgets import DataTable

    from kscope.render.view import KERNELS_APP

    async def scenario():
        app = fixed_app(backward_report(), backward=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.session.shown_runs == [1], timeout=10)
            for table in app.query(DataTable):
                if not isinstance(table.parent, KernelTable):
                    continue
                assert [str(c.label) for c in table.columns.values()] == KERNELS_APP.labels(narrow=True)
                assert [c.value for c in table.columns] == KERNELS_APP.keys
                assert table.row_count > 0
                for key in table.rows:
                    assert len(table.get_row(key)) == len(KERNELS_APP)

    asyncio.run(scenario())


def test_the_app_says_when_the_eager_half_is_on_screen():
    # the worker times eager against compiled only then (RunRequest.settle): the app's own drawing
    # must not compete with the timed calls
    async def scenario():
        app = fixed_app(article_report())
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.session.shown_runs == [1], timeout=10)
            # the fixture's calls: 440 µs eager, 171 µs compiled (2.57×); its kernels 412 → 150 µs (2.75×)
            assert app.query_one("#verdict").render().plain.split("\n") == ["2.6× faster", "call 440 µs → 171 µs", "kernels 2.7× faster"]

    asyncio.run(scenario())


@pytest.mark.slow
def test_g_m_and_a_save_each_change_what_the_screen_shows(tmp_path):
    """One app on a real worker, as a user drives it: key g runs forward and backward and back (the
    article's sample: its inputs do not require grad, so kscope makes them, and says so); key m
    steps the compile mode and reads as an A/B; a save changes the kernels on screen, and the why
    panes follow the selected compiled kernel. Quitting leaves no worker behind."""
    target = tmp_path / "add_relu.py"
    shutil.copy(SAMPLES / "add_relu.py", target)
    app = KscopeApp(RunRequest(str(target), None, "cpu", timeout=60.0, calls=3), session_factory=shared_session())

    def phases():
        table = app.query_one("#compiled-kernels", KernelTable)
        return {k.phase for k in table.mode.kernels} if table.mode and app.run_started is None else set()

    def status():
        return app.query_one("#status").render().plain

    def done_in(mode: str) -> bool:
        r = app.shown
        return (app.run_started is None and r is not None and r.compiled is not None
                and r.compile_options is not None and r.compile_options.mode == mode)

    async def g_forward_and_backward(pilot):
        await wait_for(pilot, lambda: phases() == {"forward"})
        assert "fwd+bwd" not in status()
        await pilot.press("g")
        assert "fwd+bwd" in status(), "the status line says which, at once"
        await wait_for(pilot, lambda: phases() == {"forward", "backward"})
        assert app.shown.backward is not None and app.shown.backward.grads_of == ("a", "b")
        assert app.query_one("#summary").render().plain.startswith("fwd 2 → 1 · bwd")
        table = app.query_one("#eager-kernels DataTable")
        tags = {str(table.get_row_at(i)[0]).split()[0] for i in range(table.row_count)}
        assert tags == {"fwd", "bwd"}
        await pilot.press("g")
        await wait_for(pilot, lambda: phases() == {"forward"})
        assert "fwd+bwd" not in status() and app.shown.backward is None

    async def m_steps_the_compile_mode(pilot):
        await wait_for(pilot, lambda: done_in("default"))
        assert "reduce-overhead" not in status()
        await pilot.press("m")
        assert "reduce-overhead" in status(), "the status line says which, at once"
        await wait_for(pilot, lambda: done_in("reduce-overhead"))
        await pilot.pause(0.2)
        assert str(app.query_one("#launch-change").render()).startswith("Δ default→reduce-overhead: launches 1→1")
        assert "no CUDA graphs on the CPU" in str(app.query_one("#graphs").render())

    async def a_save_changes_the_kernels(pilot):
        await wait_for(pilot, lambda: "cpp_fused_add_relu_0" in compiled_names(app))
        assert app.query_one("#eager-kernels", KernelTable).mode.launches == 2
        target.write_text(target.read_text().replace("(a + b).relu()", "(a + b).relu() * 2"))
        await wait_for(pilot, lambda: "cpp_fused_add_mul_relu_0" in compiled_names(app))
        assert app.query_one("#eager-kernels", KernelTable).mode.launches == 3
        assert not app.stale
        # the why panes follow the selected compiled kernel: its line lit, its code shown
        app.query_one("#compiled-kernels DataTable").focus()
        await pilot.pause(0.2)
        source_line = target.read_text().splitlines().index("    return (a + b).relu() * 2") + 1
        await wait_for(pilot, lambda: app.query_one(SourcePane).lit == (source_line,), timeout=10)
        shown = app.query_one(CodePane).kernel
        assert shown.name == "cpp_fused_add_mul_relu_0" and "out_ptr0" in shown.code

    async def scenario():
        async with app.run_test(size=(120, 40)) as pilot:
            await g_forward_and_backward(pilot)
            await m_steps_the_compile_mode(pilot)
            await a_save_changes_the_kernels(pilot)
            pids = app.session.worker_pids()
            assert pids
        app.shutdown()
        return pids

    pids = asyncio.run(scenario())
    time.sleep(0.5)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
