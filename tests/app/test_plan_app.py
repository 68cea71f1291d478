"""The compiled half's plan on screen (issue 26), through Pilot with a real worker.

The target is held in its compile by inductor itself: four matmul + GELU layers, each GELU with its
own constant, are four C++ kernels of one graph that inductor's two compile workers build in turn
(about 1.5–3 s each on this 2-core machine); a constant drawn for each test keeps every graph out of
inductor's caches. While they compile, the compiled table shows the plan's kernels, marked as a
plan, and they are replaced in place by the final rows when the run ends. A worker killed after
the plan leaves the plan on screen, marked stale, with the crash in the banner.
"""

from __future__ import annotations

import os
import random
import re
import signal

import pytest
from support.live import GOOD, Live, drive
from textual.widgets import DataTable

pytestmark = pytest.mark.slow

LAYERS = 4
SLOW = """
import torch


def layers(x, w):
    for i in range({layers}):
        x = torch.nn.functional.{activation}(x @ w) * ({scale!r} + i / 64)
    return x


def inputs(device):
    return torch.randn(64, 64, device=device), torch.randn(64, 64, device=device) / 8
"""
PLANNED = {"aten::mm", *(f"cpp_fused_gelu_mul_{i}" for i in range(LAYERS))}
"""The plan of SLOW: one library matmul row (its 4 calls) and a fused kernel per layer."""
PLANNED_SILU = {"aten::mm", *(f"cpp_fused_mul_silu_{i}" for i in range(LAYERS))}
"""The same with SiLU in place of GELU: new kernels, new names."""


def slow_source(activation: str = "gelu") -> str:
    return SLOW.format(layers=LAYERS, scale=1 + random.random(), activation=activation)


def compile_threads() -> int:
    """inductor's compile_threads in a worker of the app's (its default, as
    torch._inductor.config.decide_compile_threads says it on Linux), without importing torch here."""
    threads = os.environ.get("TORCHINDUCTOR_COMPILE_THREADS")
    return int(threads) if threads else min(32, len(os.sched_getaffinity(0)))


def plan_shown(live: Live, names: set[str] = PLANNED) -> bool:
    mode = live.table("compiled").mode
    return mode is not None and {k.name for k in mode.kernels} == names and mode.kernels[0].time_us is None


def row_keys(live: Live) -> list[str]:
    return [key.value for key in live.table("compiled").query_one(DataTable).rows]


def test_the_plan_is_on_screen_while_inductor_compiles_and_the_final_rows_replace_it(tmp_path):
    async def scenario(live: Live):
        await live.until(lambda: plan_shown(live), "the plan of the first run on screen")
        # still compiling: no report yet, and inductor has kernels left to build
        assert live.app.latest_run not in live.finished
        progress = live.app.progress
        assert progress.graphs_done == 0 and (progress.kernels_total is None
                                              or progress.kernels_compiled < progress.kernels_total), progress
        table = live.table("compiled")
        assert str(table.border_subtitle).startswith(f"plan: {len(PLANNED)} kernels"), table.border_subtitle
        planned = {k.name: (k.bytes_read, k.bytes_written, k.ops) for k in table.mode.kernels}
        assert planned["aten::mm"][:2] == (LAYERS * 2 * 64 * 64 * 4, LAYERS * 64 * 64 * 4)  # x and w in, x out
        # inductor's estimate of the graph's peak stands for the compiled one until it is measured
        summary = live.app.query_one("#summary").render().plain
        assert re.fullmatch(r"launches 12 → … \(compiling\) · peak est. [\d.]+ kB", summary), summary
        keys = row_keys(live)
        first = live.app.latest_run
        report = await live.report("the first run's report")
        assert not report.errors, report.errors
        # inductor's compile threads counted the graph's kernels as they built them, and the app
        # was told each count against the plan's total (LAYERS C++ kernels; the mm is a library
        # call), up to all of them: a progress hook that never fires fails here. On one thread
        # inductor keeps no count, and kscope tells none.
        told = [(e.progress.kernels_compiled, e.progress.kernels_total) for e in live.events
                if e.kind == "progress" and e.run_id == first and e.progress.kernels_total is not None]
        if compile_threads() > 1:
            assert told and {total for _, total in told} == {LAYERS} and told[-1] == (LAYERS, LAYERS), told
        else:
            assert told == [], told
        # the final rows took the plan's places, with its figures, now timed
        assert row_keys(live) == keys
        final = {k.name: (k.bytes_read, k.bytes_written, k.ops) for k in report.compiled.kernels}
        assert final == planned and all(k.time_us is not None for k in table.mode.kernels)
        assert not str(table.border_subtitle).startswith("plan")

        # A save that makes new kernels (SiLU for GELU): their names are on screen while they
        # compile; the worker dies then: the plan stays, marked stale, beside the crash; the next
        # save works.
        before = live.app.latest_run
        live.write(slow_source("silu"))
        await live.until(lambda: live.app.latest_run > before and plan_shown(live, PLANNED_SILU),
                         "the new kernels' names on screen")
        assert live.app.latest_run not in live.finished and not live.app.progress.ran  # still compiling
        os.kill(live.app.session._workers[0].proc.pid, signal.SIGKILL)
        crashed = await live.report("the crash's report")
        assert crashed.plan is not None and {k.name for k in crashed.plan.kernels} == PLANNED_SILU
        assert "crash" in live.banner() and "SIGKILL" in live.banner(), live.banner()
        assert plan_shown(live, PLANNED_SILU) and "stale" in str(table.border_subtitle), table.border_subtitle
        assert "run failed" in str(table.border_title)
        live.assert_recovered("after the crash", await live.save(GOOD, what="the good save after the crash"))
        assert "plan" not in str(table.border_subtitle)

    drive(Live(tmp_path, source=slow_source()), scenario)
