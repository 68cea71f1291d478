"""The ranks tab (key k) on a fixed Report of 2 ranks, one of which all-reduces another size."""

from __future__ import annotations

from kscope.report.model import Report

MB4 = 4_000_000


def ranks_report() -> Report:
    """The article's report run as 2 ranks, rank 1 all-reducing a different size in compiled code."""
    from dataclasses import replace

    from support.fixed_session import article_report

    from kscope.report.model import Collective, RankResult

    base = article_report()
    ar = Collective("c10d::allreduce_", 1, MB4, 900.0, None, after="aten::add", before="aten::relu")
    fn = Collective("_c10d_functional::all_reduce_", 1, MB4, 800.0, 850.0, after="cpp_fused_add_0",
                    before="cpp_fused_relu_1")
    eager, compiled = replace(base.eager, collectives=(ar,)), replace(base.compiled, collectives=(fn,))
    ranks = (RankResult(0, eager, compiled, stage="done"),
             RankResult(1, eager, replace(compiled, collectives=(replace(fn, bytes=MB4 // 2),)), stage="done"))
    return replace(base, eager=eager, compiled=compiled, ranks=ranks)


def test_ranks_pane_shows_the_ranks_and_marks_the_one_that_differs():
    import io

    from rich.console import Console
    from support.pilot import fixed_app
    from textual.widgets import TabbedContent

    async def check():
        app = fixed_app(ranks_report())
        async with app.run_test(size=(120, 40)) as pilot:
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
