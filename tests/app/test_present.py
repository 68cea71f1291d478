"""The presentation view (issue 13): snapshots at a projector's 100×30 and at 120×40, the block
font drawn pixel for pixel, and the keys (p, v, z) on a fixed Report."""

import asyncio
from dataclasses import replace

import pytest
from support.fixed_session import F32, FixedSession, N, article_report

from kscope.app.app import KscopeApp
from kscope.app.widgets.bigtext import BigText, best_scale, big_lines
from kscope.app.widgets.present import PresentView, main_fused
from kscope.report.model import Kernel, Place
from kscope.report.request import RunRequest


def saved_with_times_two():
    """The article's report after a save that added `* 2`: eager 3 kernels and 7 array-sized
    transfers (add 3, relu 2, mul 2), compiled still one fused kernel, now with mul, 3 transfers."""
    n = N * F32
    r = article_report()
    mul = Kernel("aten::mul", 1, 190.0, n, n, ops=("aten.mul",), lines=(Place("add_relu.py", 7),), kind="op")
    eager = replace(r.eager, launches=3, bytes_read=4 * n, bytes_written=3 * n, kernels=r.eager.kernels + (mul,))
    fused = replace(r.compiled.kernels[0], name="cpp_fused_add_mul_relu_0", ops=("aten.add", "aten.relu", "aten.mul"))
    return replace(r, eager=eager, compiled=replace(r.compiled, kernels=(fused,)))


def presenting(report=None):
    return KscopeApp(RunRequest("/work/add_relu.py", None, "cpu", timeout=60.0, calls=5),
                     session_factory=FixedSession(report or article_report()), watch=False, present=True)


async def save(pilot, report) -> None:
    pilot.app.session.report = report
    await pilot.press("r")
    await pilot.pause()


def test_snapshot_present_after_a_save_100x30(snap_compare):
    async def saved(pilot):
        await save(pilot, saved_with_times_two())

    assert snap_compare(presenting(), terminal_size=(100, 30), run_before=saved)


def test_snapshot_present_120x40(snap_compare):
    assert snap_compare(presenting(), terminal_size=(120, 40))


def test_the_block_font_draws_pixels_as_half_blocks():
    # "1" is .#. / ##. / .#. / .#. / ###: rows 1+2, 3+4 and 5 (with an empty sixth) of half blocks
    assert big_lines("1", 1) == ["▄█ ", " █ ", "▀▀▀"]
    assert big_lines("1", 2) == ["  ██  ", "████  ", "  ██  ", "  ██  ", "██████"]
    # "2 → 1": glyphs 3 + 2 + 5 + 2 + 3 pixels and 4 one-pixel gaps = 19 pixels wide, 5 high
    assert best_scale("2 → 1", 19 * 5, 13) == 5
    assert best_scale("2 → 1", 19 * 5 - 1, 13) == 4  # one column short of scale 5
    assert best_scale("2 → 1", 98, 10) == 4  # scale 5 needs 13 rows
    assert best_scale("2 → 1", 18, 10) == 0  # not even at scale 1: shown as plain text
    assert best_scale("ü", 100, 100) == 0  # a character the font lacks


def test_main_fused_is_the_kernel_that_fused_the_most_ops():
    r = article_report()
    small = replace(r.compiled.kernels[0], name="cpp_fused_exp_1", ops=("aten.exp",))
    two = replace(r, compiled=replace(r.compiled, kernels=(small, r.compiled.kernels[0])))
    kernel, count = main_fused(two)
    assert (kernel.name, count) == ("cpp_fused_add_relu_0", 2)
    assert main_fused(replace(r, compiled=None)) == (None, 0)


def test_p_v_and_z_switch_what_the_room_sees():
    asyncio.run(_p_v_and_z())


async def _p_v_and_z():
    app = presenting()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        present, main = app.query_one(PresentView), app.query_one("#main")
        assert present.display and not main.display
        big = app.query_one("#present-big", BigText)
        assert big.text == "2 → 1"
        assert app.query_one("#present-name", BigText).text == "cpp_fused_add_relu_0"
        assert "5 → 3 array-sized transfers" in str(app.query_one("#present-bars-caption").render())
        await save(pilot, saved_with_times_two())
        assert big.text == "3 → 1"
        assert app.query_one("#present-name", BigText).text == "cpp_fused_add_mul_relu_0"
        change = str(app.query_one("#present-change").render())
        assert "Δ compiled: launches 1→1" in change and "Δ eager: launches 2→3, 20.0 MB→28.0 MB" in change
        await pilot.press("v")  # the verdict in the launches' place: 412 µs / 150 µs of kernel time
        assert big.text == app.shown.speedup.text() and "faster" in big.text
        await pilot.press("v")
        assert big.text == "3 → 1"
        await pilot.press("z")  # the sweep's plot in place of the figures, after a sweep
        await pilot.pause()
        assert present.slide == "sweep" and app.query_one("#present-plot").display
        assert not app.query_one("#present-big").display
        await pilot.press("z")
        assert present.slide == "launches"
        await pilot.press("p")  # back to the panes
        await pilot.pause()
        assert main.display and not present.display


# "2 → 1" is 19 pixels wide and 5 high, ceil(5·scale / 2) rows: the digits' box is 76×8 at 80×24
# (scale 3: 57 columns, 8 rows), 96×11 at 100×30 (4: 76, 10) and 116×16 at 120×40 (6: 114, 15).
@pytest.mark.parametrize("size, scale", [((80, 24), 3), ((100, 30), 4), ((120, 40), 6)])
def test_the_launch_digits_grow_with_the_window(size, scale):
    asyncio.run(_digits_at(size, scale))


async def _digits_at(size, scale):
    app = presenting()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        big = app.query_one("#present-big", BigText)
        assert best_scale(big.text, big.size.width, big.size.height) == scale, big.size
        drawn = [line.strip() for line in str(big.render().renderable).splitlines() if line.strip()]
        assert drawn == [line.strip() for line in big_lines("2 → 1", scale)]
