"""The ranks tab (key k) on a fixed Report of 2 ranks, one of which all-reduces another size."""

from __future__ import annotations

from support.fixed_session import ranks_report


def test_ranks_pane_shows_the_ranks_and_marks_the_one_that_differs():
    import io

    from rich.console import Console
    from support.pilot import fixed_app, wait_for
    from textual.widgets import TabbedContent

    async def check():
        app = fixed_app(ranks_report())
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.drawn is not None, timeout=10)  # the report's panes all drawn
            app.query_one(TabbedContent).active = "ranks"
            await pilot.pause()
            body = app.query_one("#ranks-body")
            console = Console(width=110, record=True, file=io.StringIO())
            console.print(body.renderable if hasattr(body, "renderable") else body.content)
            return console.export_text()

    import asyncio

    text = asyncio.run(check())
    assert "rank 1 differs from rank 0: compiled: other collectives" in text
    lines = text.splitlines()
    row0 = next(x for x in lines if x.lstrip("│ ").startswith("0 "))
    row1 = next(x for x in lines if x.lstrip("│ ").startswith("1 "))
    assert "4.0 MB → 4.0 MB" in row0 and "4.0 MB → 2.0 MB" in row1
    assert "c10d::allreduce_" in text and "_c10d_functional::all_reduce_" in text
