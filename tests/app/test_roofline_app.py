"""The roofline tab (key l) and slide, on a fixed Report with FLOPs: what the plot drew, and the
kernel selected in a kernel table marked on it."""

import asyncio

from support.fixed_session import FixedSession, article_report
from support.pilot import fixed_app, wait_for
from support.roofline_reports import seed_with_flops

from kscope.app.app import KscopeApp
from kscope.app.widgets.present import PresentView
from kscope.app.widgets.roofline import NO_FLOPS, RooflinePlot
from kscope.report.request import RunRequest


def marks(drawn: str, marker: str) -> int:
    """How many points drawn with `marker`, the legend's two a label left out."""
    return drawn.count(marker) - 2 * drawn.count(marker * 2 + " ")


def test_l_shows_the_roofline_tab_and_the_selected_kernel_is_marked():
    asyncio.run(_tab())


async def _tab():
    app = fixed_app(seed_with_flops())
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.good is not None, timeout=10)
        await pilot.press("l")
        await pilot.pause()
        assert app.query_one("#details").active == "roofline" and not app.presenting
        assert not app.query_one("#overview").display and app.query_one("#compiled-kernels").display
        assert "peak 100 GFLOP/s" in app.query_one("#roofline-caption").render().plain
        plot = app.query_one("#roofline-plot", RooflinePlot)
        drawn = plot.render().plain
        assert "FLOP/byte" in drawn and "FLOP/s" in drawn and "●● eager" in drawn and "●● compiled" in drawn
        # eager add, compiled fused and mm (relu's FLOPs unknown, the copy's 0); the compiled table's
        # first row, selected as it filled, marked
        assert plot.selected == ("cpp_fused_add_relu_0", "compiled")
        assert (marks(drawn, "●"), marks(drawn, "◆")) == (2, 1)
        # the compiled table's second row, the matmul: marked on the plot
        app.query_one("#compiled-kernels DataTable").focus()
        await pilot.pause()
        await pilot.press("down")
        await pilot.pause()
        assert plot.selected == ("aten::mm", "compiled")
        drawn = plot.render().plain
        assert "◆◆ selected: aten::mm" in drawn
        assert (marks(drawn, "●"), marks(drawn, "◆")) == (2, 1)  # the fused kernel's mark back to a point
        # another tab gives the overview its room back
        await pilot.press("s")
        await pilot.pause()
        assert app.query_one("#details").active == "source" and app.query_one("#overview").display


def test_the_roofline_tab_says_when_no_kernel_has_flops():
    async def scenario():
        app = fixed_app(article_report())
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.good is not None, timeout=10)
            await pilot.press("l")
            await pilot.pause()
            assert app.query_one("#roofline-caption").render().plain == NO_FLOPS
            assert not app.query_one("#roofline-plot").display

    asyncio.run(scenario())


def test_l_while_presenting_shows_the_roofline_in_place_of_the_figures():
    async def scenario():
        app = KscopeApp(RunRequest("/work/add_relu.py", None, "cpu", timeout=60.0, calls=5),
                        session_factory=FixedSession(seed_with_flops()), watch=False, present=True)
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: app.good is not None, timeout=10)
            present = app.query_one(PresentView)
            await pilot.press("l")
            await pilot.pause()
            plot = app.query_one("#present-roofline", RooflinePlot)
            assert present.slide == "roofline" and plot.display and not app.query_one("#present-big").display
            assert app.query_one("#details").active == "fused"  # the panes' tab left as it was
            drawn = plot.render().plain
            assert "ridge 1.03 FLOP/byte" in drawn and marks(drawn, "●") + marks(drawn, "◆") == 3
            await pilot.press("l")
            await pilot.pause()
            assert present.slide == "launches" and not plot.display and app.query_one("#present-big").display

    asyncio.run(scenario())
