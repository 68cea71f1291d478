"""The live app on a project of two files, with a real worker: a save of the imported model.py
re-runs bench.py with the new code, and the status line and the Δ line name the file saved; a
file beside them that the run does not import never starts a run; `r` runs the code on disk."""

from __future__ import annotations

import asyncio
import time

import pytest
from support.forks import shared_session
from support.pilot import compiled_names, wait_for

from kscope.app.app import KscopeApp
from kscope.report.request import RunRequest

BENCH = """\
import torch
from model import block

def run(a, b):
    return block(a, b)

def inputs(device):
    return torch.randn(100_000, device=device), torch.randn(100_000, device=device)
"""
MODEL = "import torch\n\ndef block(a, b):\n    return (a + b).relu()\n"

pytestmark = pytest.mark.slow


def test_a_save_of_the_imported_file_reruns_and_is_named(tmp_path):
    (tmp_path / "bench.py").write_text(BENCH)
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "notes.py").write_text("x = 1\n")
    app = KscopeApp(RunRequest(str(tmp_path / "bench.py"), None, "cpu", timeout=60.0, calls=2), session_factory=shared_session())

    def status() -> str:
        return app.query_one("#status").render().plain

    async def scenario():
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: "cpp_fused_add_relu_0" in compiled_names(app) and app.run_started is None)
            assert app.watcher.paths == {str(tmp_path / "bench.py"), str(tmp_path / "model.py")}
            runs = app.latest_run
            (tmp_path / "notes.py").write_text("x = 2\n")  # not imported: no run
            await pilot.pause(1.0)
            assert app.latest_run == runs
            (tmp_path / "model.py").write_text(MODEL.replace("(a + b).relu()", "(a + b).relu() * 2"))
            await wait_for(pilot, lambda: "cpp_fused_add_mul_relu_0" in compiled_names(app) and app.run_started is None)
            assert app.latest_run == runs + 1
            assert "model.py saved" in status()
            change = app.query_one("#launch-change").render().plain
            assert change.startswith("Δ compiled, model.py: launches 1→1")
            # an imported file deleted is said, nothing runs; it re-runs when it comes back
            runs = app.latest_run
            (tmp_path / "model.py").unlink()
            await wait_for(pilot, lambda: "model.py: file missing" in status())
            assert app.latest_run == runs
            (tmp_path / "model.py").write_text(MODEL)
            await wait_for(pilot, lambda: app.latest_run == runs + 1 and app.run_started is None
                           and "cpp_fused_add_relu_0" in compiled_names(app))
            assert not app.stale
            # r runs the code on disk, whether or not a save was seen
            app.watcher.stop()
            (tmp_path / "model.py").write_text(MODEL.replace("(a + b).relu()", "(a - b).relu()"))
            await pilot.press("r")
            await wait_for(pilot, lambda: "cpp_fused_relu_sub_0" in compiled_names(app) and app.run_started is None)
            assert "saved" not in status()
        app.shutdown()

    asyncio.run(scenario())
    time.sleep(0.2)
