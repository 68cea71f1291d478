"""The source tab's costs per line (issue 25), on a Report from a real run of the two-line target
(`h = a + b` / `return h.relu()`, 10⁶ floats): the gutter gives each line's bytes eager → compiled,
`h` lists the costliest lines of the run, and a line chosen lights its kernels in both tables."""

import asyncio

import pytest
from support.paths import at, write_target
from support.pilot import fixed_app, wait_for
from support.runs import run_ok
from support.targets import TWO_LINES

from kscope.app.widgets.kernels import KernelTable
from kscope.app.widgets.source import SourcePane


@pytest.fixture(scope="module")
def two_lines(tmp_path_factory):
    path = write_target(tmp_path_factory.mktemp("source"), TWO_LINES)
    return path, run_ok(path, calls=2)


def option_texts(pane: SourcePane) -> list[str]:
    from textual.widgets import OptionList

    options = pane.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


def test_the_gutter_the_hottest_lines_and_a_chosen_lines_kernels(two_lines):
    asyncio.run(_source(*two_lines))


async def _source(path, report):
    add, relu = at(path, "h = a + b"), at(path, "return h.relu()")
    app = fixed_app(report, str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.good is not None, timeout=10)
        await pilot.press("s")
        await pilot.pause()
        pane = app.query_one(SourcePane)
        texts = option_texts(pane)
        first = next(t for t in texts if "h = a + b" in t)
        second = next(t for t in texts if "return h.relu()" in t)
        # eager → compiled bytes per call: 12 MB → 8 MB (the loads), 8 MB → 4 MB (the store)
        assert "12.0 MB→8.0 MB" in first and "8.0 MB→4.0 MB" in second
        assert "≈" in first  # the fused kernel's time is shared between the two lines by bytes
        blank = next(t for t in texts if "def two(a, b):" in t)
        assert "MB" not in blank  # a line that issued no work has an empty gutter

        await pilot.press("h")
        await pilot.pause()
        hot = option_texts(pane)
        order = [c.place for c in report.line_costs]
        assert len(hot) == len(order) == 2
        assert [f"{p.line} " in t for p, t in zip(order, hot)] == [True, True]
        assert {order[0], order[1]} == {add, relu}

        # the user moves to the other line: both tables light the kernels it went into
        from textual.widgets import OptionList

        pane.query_one(OptionList).focus()
        await pilot.pause()
        await pilot.press("down")
        await pilot.pause()
        chosen = order[1]
        eager = {"aten::add"} if chosen == add else {"aten::relu"}
        assert app.query_one("#eager-kernels", KernelTable).lit == eager
        assert app.query_one("#compiled-kernels", KernelTable).lit == {report.compiled.kernels[0].name}
        answer = str(pane.query_one(".answer").render())
        assert "compiled" in answer and ("12.0 MB" in answer if chosen == add else "8.0 MB" in answer)


def test_a_report_without_costs_per_line_says_whether_they_are_unknown_or_none():
    """The hottest lines (h) of a Report whose costs are unknown (an older kscope's: the codec
    marks them None) and of one whose run tied no work to a line (an empty tuple)."""
    from dataclasses import replace

    from support.fixed_session import article_report

    async def hot(report):
        app = fixed_app(report)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.good is not None, timeout=10)
            await pilot.press("s")
            await pilot.pause()
            await pilot.press("h")
            await pilot.pause()
            return option_texts(app.query_one(SourcePane))

    none = replace(article_report(), line_costs_known=True)
    assert none.line_costs == ()
    assert asyncio.run(hot(none)) == ["no line of this run issued work"]
    unknown = replace(article_report(), line_costs_known=False)  # its schema number left as it is: no view reads it
    assert asyncio.run(hot(unknown)) == ["this Report has no costs per line (a kscope before schema 11 made it)"]
