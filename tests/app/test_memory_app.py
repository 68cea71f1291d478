"""The memory tab (key a, issue 37): what one call holds, eager → compiled, and the tensors alive
at each peak; the summary's peak; a Report without memory says it was not measured."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from support.fixed_session import article_report
from support.pilot import fixed_app, wait_for
from textual.widgets import DataTable, Label

from kscope.app.widgets.memory import NOT_MEASURED, MemoryPane
from kscope.report.memory import CallMemory, HeldTensor
from kscope.report.place import Place

EAGER = CallMemory(8_000_000, 4_000_000, 2, {"temporary": 4_000_000, "held": 4_000_000}, (
    HeldTensor(4_000_000, "temporary", "aten::add", Place("add_relu.py", 7)),
    HeldTensor(4_000_000, "held", "aten::relu", Place("add_relu.py", 7))))
COMPILED = CallMemory(4_000_000, 4_000_000, 1, {"held": 4_000_000}, (HeldTensor(4_000_000, "held", "buf0"),))


def seed_with_memory():
    r = article_report()
    return replace(r, eager=replace(r.eager, memory=EAGER), compiled=replace(r.compiled, memory=COMPILED))


def cells(pane: DataTable) -> list[list[str]]:
    return [[str(c) for c in pane.get_row_at(i)] for i in range(pane.row_count)]


def in_memory_tab(report, size, check, key: str = "a") -> None:
    """The app on `report` at `size`, `key` pressed (a: the memory tab); check(app) on what it shows."""
    async def scenario():
        app = fixed_app(report)
        async with app.run_test(size=size) as pilot:
            await wait_for(pilot, lambda: app.good is not None, timeout=10)
            await pilot.press(key)
            await pilot.pause()
            check(app)

    asyncio.run(scenario())


def caption(app) -> str:
    return app.query_one("#memory-caption", Label).render().plain


def test_a_shows_the_memory_tab_with_each_peak_and_what_is_alive_there():
    def check(app):
        assert app.query_one("#details").active == "memory"
        assert caption(app).startswith("memory of one call, eager → compiled: peak 8.0 MB → 4.0 MB")
        assert cells(app.query_one(MemoryPane).query_one(DataTable)) == [
            ["eager", "4.0 MB", "temporary", "aten::add", "7"],
            ["eager", "4.0 MB", "held", "aten::relu", "7"],
            ["compiled", "4.0 MB", "held", "buf0", "?"]]
        # the peak on the graphs line (the summary line is full at 120 columns)
        graphs = app.query_one("#graphs", Label).render().plain
        assert graphs == "1 graph · peak 8.0 MB → 4.0 MB", graphs
        assert "peak" not in app.query_one("#summary", Label).render().plain

    in_memory_tab(seed_with_memory(), (120, 40), check)


def test_a_report_without_memory_says_it_was_not_measured():
    def check(app):
        assert caption(app) == NOT_MEASURED
        assert app.query_one(MemoryPane).query_one(DataTable).row_count == 0

    in_memory_tab(article_report(), (80, 24), check)


def test_a_long_name_is_cut_in_the_middle_and_the_cursors_row_is_said_whole():
    long_op = "aten::_scaled_dot_product_flash_attention_for_cpu"
    place = Place("transformers/models/llama/modeling_llama.py", 412)
    held = HeldTensor(2_097_152, "activation", long_op, place)
    r = seed_with_memory()
    report = replace(r, eager=replace(r.eager, memory=replace(EAGER, top=(held,) + EAGER.top)))

    def check(app):
        by, line = cells(app.query_one(MemoryPane).query_one(DataTable))[0][3:]
        assert by.startswith("aten::_scaled") and by.endswith("for_cpu") and "…" in by and len(by) == 28, by
        assert line.endswith(".py:412") and "…" in line and len(line) == 24, line
        detail = app.query_one(MemoryPane).query_one(".detail").render().plain
        assert long_op in detail and "modeling_llama.py:412" in detail, detail

    in_memory_tab(report, (80, 24), check)


def test_the_presentation_view_gives_the_peak_beside_the_traffic():
    def check(app):
        bars = app.query_one("#present-bars-caption", Label).render().plain
        assert bars.endswith("(20.0 MB → 12.0 MB · peak 8.0 MB → 4.0 MB)"), bars

    in_memory_tab(seed_with_memory(), (100, 30), check, key="p")
