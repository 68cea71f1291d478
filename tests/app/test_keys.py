"""The live app's keys as its help (`?`), README.md and docs/app.md document them, each asserted on
what the screen then shows: the tab keys f, o, k (scrolled into view at 80×24), b and enter on a
break (its line lit in the source), [ and ] (the files of the run), ? itself; and n and o on a real
worker (the target run under torch.no_grad(), the target's own print in the output tab)."""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import replace

import pytest
from support.fixed_session import ARTICLE_SOURCE, article_report, graph_break_report, ranks_report
from support.forks import shared_session
from support.live import alive
from support.pilot import fixed_app, screen_text, wait_for
from textual.widgets import Markdown, OptionList, TabbedContent

from kscope.app.app import KscopeApp
from kscope.app.widgets.breaks import BreaksPane
from kscope.app.widgets.help import HelpScreen
from kscope.app.widgets.kernels import KernelTable
from kscope.app.widgets.source import SourcePane
from kscope.report.request import RunRequest


def active(app) -> str:
    return app.query_one(TabbedContent).active


def drive(app, scenario, size=(120, 40)):
    async def main():
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            return await scenario(pilot)

    return asyncio.run(main())


# --- ? ----------------------------------------------------------------------------------------------


def help_keys(source: str) -> set[str]:
    """The keys in the first column of the help's table of keys."""
    keys = set()
    for line in source.splitlines():
        if line.startswith("| `"):
            keys.update(re.findall(r"`([^`]+)`", line.split("|")[1]))
    return keys


def test_question_mark_shows_the_help_listing_every_key_and_q_closes_it():
    """`?`: the help over the panes, its table naming every key the app binds (ctrl+c aside, an
    alias of q); q closes it (as ? and escape do) and there does not quit the app. (Opening it costs
    2-3 s of Markdown on a busy 2-core machine: once.)"""
    app = fixed_app(article_report())
    bound = {"?" if b.key == "question_mark" else b.key for b in KscopeApp.BINDINGS if b.key != "ctrl+c"}
    assert {"n", "f", "b", "o", "k", "[", "]"} <= bound

    async def scenario(pilot):
        main = app.screen
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert "Every time you save the file, kscope runs the target eagerly" in screen_text(app)
        missing = bound - help_keys(app.screen.query_one(Markdown).source)
        assert not missing, f"keys the app binds that its help does not list: {sorted(missing)}"
        await pilot.press("q")  # one binding closes it with ?, q or escape: q, which elsewhere quits
        await pilot.pause()
        assert app.screen is main and app.is_running
        assert "Every time you save the file" not in screen_text(app)

    drive(app, scenario)


# --- f, o, k: the tabs ----------------------------------------------------------------------------


def test_f_and_o_switch_between_the_fused_kernels_and_the_output():
    """o: what the target printed and kscope's notes (said once); f: each generated kernel with
    the ops it fused and their line."""
    report = replace(article_report(), notes=("a note kscope has for this run",))
    app = fixed_app(report)

    async def scenario(pilot):
        await wait_for(pilot, lambda: app.shown is not None and app.shown.compiled is not None, 10)
        await pilot.press("o")
        await pilot.pause()
        assert active(app) == "output"
        assert "[kscope] note: a note kscope has for this run" in screen_text(app)
        assert "add, relu  (line 7)" not in screen_text(app)
        await pilot.press("f")
        await pilot.pause()
        assert active(app) == "fused"
        shown = screen_text(app)
        assert re.search(r"cpp_fused_add_relu_0 +add, relu  \(line 7\)", shown), shown
        assert "[kscope] note" not in shown

    drive(app, scenario)


@pytest.mark.parametrize("report, words", [
    (ranks_report(), "rank 1 differs from rank 0: compiled: other collectives"),
    (article_report(), "one process: kscope FILE.py --nproc N runs N ranks"),
])
def test_k_shows_the_ranks_tab_scrolled_into_view_at_80x24(report, words):
    """k: the ranks tab, which at 80×24 is below the fold: the key scrolls it into view."""
    app = fixed_app(report)

    async def scenario(pilot):
        await wait_for(pilot, lambda: app.shown is not None and app.shown.compiled is not None, 10)
        assert words not in screen_text(app)
        await pilot.press("k")
        await pilot.pause(0.2)
        assert active(app) == "ranks"
        assert app.query_one("#main").scroll_y > 0
        assert words in screen_text(app)

    drive(app, scenario, size=(80, 24))


# --- b and enter ------------------------------------------------------------------------------------


def test_b_shows_the_graph_break_and_enter_on_it_lights_its_line_in_the_source():
    """b: the graph breaks tab, each break with its line; enter on a break (tab moves between
    panes) shows the source tab with that line lit and highlighted."""
    app = fixed_app(graph_break_report(), "/work/branchy.py")
    (brk,) = graph_break_report().compiled.graph_breaks

    async def scenario(pilot):
        await wait_for(pilot, lambda: app.shown is not None and app.shown.compiled is not None, 10)
        await pilot.press("b")
        await pilot.pause()
        assert active(app) == "breaks"
        shown = screen_text(app)
        assert "2 graphs" in shown and f"break at line {brk.line}: {brk.reason[:40]}" in shown
        breaks = app.query_one(BreaksPane)
        for _ in range(10):  # tab, as the help says, to the list of breaks
            if app.focused is breaks:
                break
            await pilot.press("tab")
        assert app.focused is breaks
        for _ in range(3):  # down to the break (the first row, which says how many graphs, is not one)
            if breaks.highlighted == 1:
                break
            await pilot.press("down")
        assert breaks.highlighted == 1
        await pilot.press("enter")
        await pilot.pause()
        assert active(app) == "source"
        source = app.query_one(SourcePane)
        assert source.lit == (brk.line,)
        options = source.query_one(OptionList)
        assert source.entries[options.highlighted] == ("branchy.py", brk.line)
        line = ARTICLE_SOURCE.splitlines()[brk.line - 1]
        assert re.search(rf"\b{brk.line} {re.escape(line)}", screen_text(app))

    drive(app, scenario)


# --- [ and ] ----------------------------------------------------------------------------------------


MODEL = "import torch\n\n\ndef block(a, b):\n    return (a + b).relu()\n"


def test_brackets_move_between_the_files_that_hold_lines_of_the_run():
    """[ and ]: the source tab, on the next or previous file of the run (the target's, then the
    modules it imports, in order), from whichever pane has the focus."""
    # a module the target imports, holding no line of the kernels selected (those are add_relu.py's)
    report = replace(article_report(), sources={"add_relu.py": ARTICLE_SOURCE, "model.py": MODEL})
    app = fixed_app(report)

    def heading() -> str:
        return next(line.strip() for line in screen_text(app).splitlines() if "other files)" in line)

    async def scenario(pilot):
        await wait_for(pilot, lambda: app.shown is not None and app.shown.compiled is not None, 10)
        assert active(app) == "fused" and not isinstance(app.focused, (SourcePane, OptionList))
        await pilot.press("]")
        await pilot.pause()
        assert active(app) == "source"
        assert heading().startswith("model.py  (2/2: [ ] other files)")
        assert "def block(a, b):" in screen_text(app)
        await pilot.press("]")  # past the last file: the first again
        await pilot.pause()
        assert heading().startswith("add_relu.py  (1/2: [ ] other files)")
        assert "def add_relu(a, b):" in screen_text(app) and "def block" not in screen_text(app)
        await pilot.press("[")
        await pilot.pause()
        assert heading().startswith("model.py  (2/2: [ ] other files)")
        app.query_one("#compiled-kernels", KernelTable).query_one("DataTable").focus()
        await pilot.press("[")
        await pilot.pause()
        assert heading().startswith("add_relu.py  (1/2: [ ] other files)")

    drive(app, scenario)


# --- n and o on a real worker -------------------------------------------------------------------------


GRAD_TARGET = """\
import torch

print("target.py loaded: this is the target's own print")


def add_relu(a, b):
    return (a + b).relu()


def inputs(device, n=1000):
    return torch.randn(n, device=device, requires_grad=True), torch.randn(n, device=device, requires_grad=True)
"""
N = 1000
"""GRAD_TARGET's elements: fp32 inputs that require grad, so that as written torch.compile builds a
training forward, which also writes the 1-byte mask relu's backward reads (docs/training.md: 1,000
B for 1,000 elements); under torch.no_grad() the inference graph writes the output alone."""


@pytest.mark.slow
def test_o_shows_the_targets_print_and_n_runs_it_under_no_grad_and_back(tmp_path):
    """On a real worker: o shows what the target printed, and kscope's note on the training forward
    it compiled; n (docs/app.md: "as written ↔ under torch.no_grad()") re-runs at once under no_grad,
    the status line saying so, and the compiled kernel is the inference graph's; n again, as
    written. Quitting leaves no worker behind."""
    target = tmp_path / "target.py"
    target.write_text(GRAD_TARGET)
    app = KscopeApp(RunRequest(str(target), None, "cpu", timeout=60.0, calls=2), session_factory=shared_session())

    def status() -> str:
        return app.query_one("#status").render().plain

    def finished(no_grad: bool) -> bool:
        r = app.shown
        return (app.run_started is None and r is not None and r.compiled is not None and r.no_grad == no_grad
                and all(k.time_us is not None for k in r.compiled.kernels))

    def compiled_kernel():
        (kernel,) = app.query_one("#compiled-kernels", KernelTable).mode.kernels
        return kernel

    async def until(pilot, no_grad: bool):
        try:
            await wait_for(pilot, lambda: finished(no_grad), timeout=120)
        except AssertionError:
            raise AssertionError(f"no run with no_grad={no_grad} on screen in 120 s; status: {status()!r}; "
                                 f"errors: {app.shown.errors if app.shown else None}") from None

    async def scenario(pilot):
        await until(pilot, no_grad=False)
        # as written: a training forward, writing relu's mask for a backward that never runs
        kernel = compiled_kernel()
        assert "threshold_backward" in kernel.name and kernel.bytes_saved == N, kernel
        assert "no_grad" not in status()

        await pilot.press("o")
        await pilot.pause()
        assert active(app) == "output"
        shown = screen_text(app)
        assert "target.py loaded: this is the target's own print" in shown
        assert f"[kscope] note: compiled: the forward writes {N:,} B only for backward to read" in shown

        await pilot.press("n")
        assert "no_grad" in status(), "the status line says which, at once"
        await until(pilot, no_grad=True)
        kernel = compiled_kernel()
        assert kernel.name == "cpp_fused_add_relu_0"
        assert (kernel.bytes_read, kernel.bytes_written, kernel.bytes_saved) == (2 * 4 * N, 4 * N, 0)
        assert {k.phase for m in (app.shown.eager, app.shown.compiled) for k in m.kernels} == {"forward"}

        await pilot.press("n")
        assert "no_grad" not in status()
        await until(pilot, no_grad=False)
        kernel = compiled_kernel()
        assert "threshold_backward" in kernel.name and kernel.bytes_saved == N
        return app.session.worker_pids()

    try:
        pids = drive(app, scenario)
    finally:
        app.shutdown()
    assert pids
    deadline = time.monotonic() + 2
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in pids if alive(p)], "workers still running after quitting"
