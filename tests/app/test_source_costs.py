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
