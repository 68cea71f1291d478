"""The live app: snapshots from a fixed Report, and a Pilot test with a real CPU worker."""

import asyncio
import shutil
import time

import pytest

from conftest import SAMPLES
from fixed_session import FixedSession, article_report, graph_break_report
from kscope.app import KscopeApp
from kscope.session import RunSpec
from kscope.widgets.kernels import KernelTable


def fixed_app(report, file="/work/add_relu.py"):
    return KscopeApp(RunSpec(file, None, "cpu", 60.0, 5), session_factory=FixedSession(report), watch=False)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_snapshot_article(snap_compare, size):
    assert snap_compare(fixed_app(article_report()), terminal_size=size)


def test_snapshot_graph_break_120x40(snap_compare):
    assert snap_compare(fixed_app(graph_break_report(), "/work/branchy.py"), terminal_size=(120, 40))


async def _wait_for(pilot, condition, timeout=90.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        await pilot.pause(0.1)
    raise AssertionError("condition not met in time")


def _compiled_names(app):
    table = app.query_one("#compiled-kernels", KernelTable)
    return [k.name for k in table.mode.kernels] if table.mode else []


@pytest.mark.slow
def test_save_changes_the_kernels_on_screen(tmp_path):
    target = tmp_path / "add_relu.py"
    shutil.copy(SAMPLES / "add_relu.py", target)
    app = KscopeApp(RunSpec(str(target), None, "cpu", 60.0, 3))

    async def scenario():
        async with app.run_test(size=(120, 40)) as pilot:
            await _wait_for(pilot, lambda: "cpp_fused_add_relu_0" in _compiled_names(app))
            assert app.query_one("#eager-kernels", KernelTable).mode.launches == 2
            target.write_text(target.read_text().replace("(a + b).relu()", "(a + b).relu() * 2"))
            await _wait_for(pilot, lambda: "cpp_fused_add_mul_relu_0" in _compiled_names(app))
            assert app.query_one("#eager-kernels", KernelTable).mode.launches == 3
            assert not app.stale
            pids = app.session.worker_pids()
            assert pids
        app.shutdown()
        return pids

    pids = asyncio.run(scenario())
    time.sleep(0.5)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            import os

            os.kill(pid, 0)
