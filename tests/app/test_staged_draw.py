"""A report drawn a few panes a frame (issue 39: drawn at once, its one paint re-rendered the
whole screen and stalled the event loop up to 65 ms): each stage after the screen has painted the
one before, an older report's stages never drawn over a newer one's, and what waits for the
drawing (the worker's timing, the GC's freeze) told exactly once, after the last stage."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult
from textual.widgets import Static

from kscope.app.staged_draw import StagedDraw


class Counting(Static):
    """Counts its paints: a stage that re-renders it shows up here."""

    paints = 0

    def render_line(self, y: int):
        if y == 0:
            Counting.paints += 1
        return super().render_line(y)


class Host(App):
    def compose(self) -> ComposeResult:
        yield Counting("·", id="pane")


def test_stages_draw_one_a_frame_and_a_newer_report_stops_an_older_ones():
    async def scenario():
        app = Host()
        async with app.run_test(size=(40, 5)) as pilot:
            drawing, log, told = StagedDraw(app), [], []
            pane = app.query_one(Counting)

            def stage(report, i):
                def draw():
                    log.append((report, i, Counting.paints))
                    pane.update(f"{report} {i}")
                return draw

            drawing.start("old", [stage("old", i) for i in range(3)], then=lambda: told.append("old"))
            assert [(r, i) for r, i, _ in log] == [("old", 0)], "the first stage is drawn at once, the rest wait"
            assert drawing.busy and drawing.drawn is None
            drawing.start("new", [stage("new", i) for i in range(3)], then=lambda: told.append("new"))
            for _ in range(20):
                if told:
                    break
                await pilot.pause()
            await pilot.pause()
            assert [(r, i) for r, i, _ in log] == [("old", 0), ("new", 0), ("new", 1), ("new", 2)]
            assert drawing.drawn == "new" and not drawing.busy
            assert told == ["old", "new"], "what waited for the older report is told once, after the newer's last"
            assert str(pane.content) == "new 2"
            news = [paints for r, _, paints in log if r == "new"]
            assert news == sorted(set(news)), f"a stage drawn before the screen painted the one before: {news}"

    asyncio.run(scenario())


def test_a_stage_that_says_it_changed_nothing_is_followed_at_once():
    """Each frame waits for Textual's update timer (1/60 s): seven stages made `r` -> final 0.12 ->
    0.26 s (benchmarks/latency.py). A stage that returns False (a kernel table shown the same rows)
    waits for no frame; one that changed something still does."""
    async def scenario():
        app = Host()
        async with app.run_test(size=(40, 5)) as pilot:
            drawing, log = StagedDraw(app), []
            pane = app.query_one(Counting)

            def unchanged(name):
                return lambda: log.append(name) or False

            stages = [unchanged("a"), unchanged("b"), lambda: log.append("c") or pane.update("changed"),
                      unchanged("d"), unchanged("e")]
            drawing.start("r", stages)
            assert log == ["a", "b", "c"], "unchanged stages go on in the same frame; one that changed waits"
            for _ in range(20):
                if not drawing.busy:
                    break
                await pilot.pause()
            assert log == ["a", "b", "c", "d", "e"] and drawing.drawn == "r"

    asyncio.run(scenario())
