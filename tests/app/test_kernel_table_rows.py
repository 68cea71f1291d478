"""The kernel table's rows after a save: in the mode's order (the cursor's row is the kernel its
detail names), and a save that keeps the row count lays out nothing (issue 39: each layout of the
screen was a stall a person could see)."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult
from textual.widgets import DataTable, Static

from kscope.app.widgets.kernels import KernelTable
from kscope.report.kernel import Kernel
from kscope.report.model import ModeResult


def mode(*names: str) -> ModeResult:
    kernels = tuple(Kernel(n, 1.0, 10.0, 400, 400, fused=True) for n in names)
    return ModeResult(launches=len(names), bytes_read=400 * len(names), bytes_written=400 * len(names),
                      kernel_time_us=10.0 * len(names), kernels=kernels)


class OneTable(App):
    def compose(self) -> ComposeResult:
        yield KernelTable("compiled", id="t")


def shown_names(app) -> list[str]:
    table = app.query_one(DataTable)
    return [str(table.get_row_at(i)[0]).lstrip("★ ").strip() for i in range(table.row_count)]


def layouts(app) -> int:
    """Layouts the table and its DataTable asked of the screen so far (textual counts them)."""
    return sum(w._layout_updates for w in (app.query_one(KernelTable), app.query_one(DataTable)))


def test_rows_follow_the_modes_order_and_a_same_count_save_asks_no_layout():
    async def scenario():
        app = OneTable()
        async with app.run_test(size=(120, 20)) as pilot:
            table = app.query_one(KernelTable)
            table.show(mode("k_a", "k_b"), None)
            await pilot.pause()
            assert shown_names(app) == ["k_a", "k_b"]
            before = layouts(app)
            # a save whose kernels are one new, one kept but moved: the same count of rows
            table.show(mode("k_c", "k_a"), mode("k_a", "k_b"))
            await pilot.pause()
            assert shown_names(app) == ["k_c", "k_a"]
            assert "k_c" in str(table.query_one(".detail", Static).content)  # the cursor's row, 0
            assert layouts(app) == before
            # one row more, then one fewer: the rows still in order
            table.show(mode("k_d", "k_c", "k_a"), mode("k_c", "k_a"))
            await pilot.pause()
            assert shown_names(app) == ["k_d", "k_c", "k_a"]
            table.show(mode("k_a"), mode("k_d", "k_c", "k_a"))
            await pilot.pause()
            assert shown_names(app) == ["k_a"]

    asyncio.run(scenario())
