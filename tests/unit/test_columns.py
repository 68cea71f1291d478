"""Each table's columns are declared once (render/columns.py) and every output builds its table from
that declaration: `--once`'s rich tables, Markdown and (tests/app) the app's kernel tables. Here: no
output's row has more or fewer cells than its table has columns (rich pads a short row with blanks
and Markdown would shift its cells, so neither would say so itself); the outputs show the declared
labels in the declared order; an unknown figure is the UNKNOWN marker, worded by each output."""

from __future__ import annotations

import importlib
import io
import pkgutil
import re
from dataclasses import replace

import pytest
from rich.console import Console
from rich.table import Table
from support.fixed_session import (
    article_report,
    backward_report,
    graph_break_report,
    ranks_report,
    sweep_report,
)
from support.roofline_reports import seed_with_flops

import kscope.render
from kscope.render.columns import UNKNOWN, Column, Columns, Words
from kscope.render.lines import LINES
from kscope.render.markdown import report_markdown
from kscope.render.ranks_rows import COLLECTIVES, OVERVIEW
from kscope.render.report import render_report
from kscope.render.roofline import ROOFLINE
from kscope.render.sweep import render_sweep, sweep_table
from kscope.render.sweep_rows import SWEEP, SWEEP_NARROW
from kscope.render.view import KERNELS, KERNELS_APP, KERNELS_ONCE
from kscope.report.model import Kernel


def unknown_bytes():
    r = article_report()
    blind = replace(r.compiled, kernels=tuple(replace(k, bytes_read=None) for k in r.compiled.kernels))
    return replace(r, compiled=blind, speedup=None)


REPORTS = {
    "article": article_report,
    "forward and backward": backward_report,
    "graph break": graph_break_report,
    "roofline": seed_with_flops,
    "ranks": ranks_report,
    "sweep": sweep_report,
    "unknown bytes": unknown_bytes,
    "no compiled half": lambda: replace(article_report(), compiled=None, speedup=None),
}


def declared() -> dict[str, Columns]:
    """Every table declared in the render layer, by module and name."""
    found = {}
    for info in pkgutil.iter_modules(kscope.render.__path__):
        module = importlib.import_module(f"kscope.render.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, Columns):
                found[f"{info.name}.{name}"] = value
    return found


def test_the_render_layer_declares_each_table_it_draws_in_more_than_one_place():
    names = set(declared())
    assert {"view.KERNELS", "sweep_rows.SWEEP", "lines.LINES", "roofline.ROOFLINE", "ranks_rows.OVERVIEW",
            "ranks_rows.COLLECTIVES"} <= names


@pytest.fixture
def strict_rows(monkeypatch):
    """rich's add_row pads a short row with blanks: here a row of the wrong length fails, naming
    the table. Returns the tables that got a row."""
    seen = []
    add = Table.add_row

    def checked(self, *cells, **kwargs):
        assert len(cells) == len(self.columns), (
            f"{self.title!r}: {len(cells)} cells for {len(self.columns)} columns "
            f"{[c.header for c in self.columns]}")
        seen.append(self)
        return add(self, *cells, **kwargs)

    monkeypatch.setattr(Table, "add_row", checked)
    return seen


def text_of(renderable, width: int) -> str:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


@pytest.mark.parametrize("name", REPORTS)
@pytest.mark.parametrize("width", [80, 140])
def test_every_once_row_has_a_cell_for_each_column(strict_rows, name, width, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(width))
    report = REPORTS[name]()
    text_of(render_sweep(report, width) if report.sweep is not None else render_report(report), width)
    assert strict_rows


def markdown_tables(md: str) -> list[list[list[str]]]:
    """Each GFM table: its rows (the header first, the alignment row left out), each a list of cells."""
    tables, current = [], None
    for line in md.splitlines():
        if line.startswith("| "):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            if current is None:
                current = []
                tables.append(current)
            if not all(re.fullmatch(r"-+:?", c) for c in cells):
                current.append(cells)
        else:
            current = None
    return tables


@pytest.mark.parametrize("name", REPORTS)
def test_every_markdown_row_has_a_cell_for_each_column(name):
    tables = markdown_tables(report_markdown(REPORTS[name]()))
    assert tables
    for rows in tables:
        header = rows[0]
        assert all(len(row) == len(header) for row in rows), (header, [row for row in rows if len(row) != len(header)])


def headers(table: Table) -> list[str]:
    return [str(c.header) for c in table.columns]


def test_once_and_markdown_show_the_declared_labels_in_the_declared_order(strict_rows, monkeypatch):
    monkeypatch.setenv("COLUMNS", "140")
    text_of(render_report(seed_with_flops()), 140)
    text_of(render_report(ranks_report()), 140)
    once = {tuple(headers(t)) for t in strict_rows}
    assert tuple(KERNELS_ONCE.labels()) in once
    assert tuple(LINES.labels(narrow=True)) in once
    assert tuple(ROOFLINE.labels(narrow=True)) in once
    assert tuple(OVERVIEW.labels()) in once
    assert tuple(COLLECTIVES.labels()) in once
    text_of(render_report(backward_report()), 140)
    tagged = {tuple(headers(t)) for t in strict_rows}
    assert ("phase", *KERNELS_ONCE.labels()) in tagged

    md = {tuple(rows[0]) for r in (seed_with_flops(), ranks_report(), sweep_report())
          for rows in markdown_tables(report_markdown(r))}
    for columns in (LINES, ROOFLINE, OVERVIEW, COLLECTIVES, SWEEP_NARROW):
        assert tuple(columns.labels()) in md, columns.name
    # the terminal's narrow labels name the same columns, in the same order, as Markdown's
    assert LINES.keys == [c.key for c in LINES] and len(LINES.labels(narrow=True)) == len(LINES.labels())


@pytest.mark.parametrize("width", [80, 100, 120])
def test_the_sweep_table_shows_the_markdown_columns_first_then_what_its_width_has_room_for(width):
    shown = headers(sweep_table(sweep_report().sweep, width))
    assert shown[:len(SWEEP_NARROW)] == SWEEP_NARROW.labels()
    assert shown == SWEEP.labels()[:len(shown)]


def test_the_apps_kernel_columns_are_the_once_tables_in_the_same_order():
    """The app has room for fewer columns (and a total, traffic, where `--once` splits it into read
    and written): the columns both show come in the same order, from the one declaration."""
    app, once = KERNELS_APP.keys, KERNELS_ONCE.keys
    both = [k for k in app if k in once]
    assert both == [k for k in once if k in app] == ["kernel", "launches", "time"]
    assert all(KERNELS[k] is KERNELS_APP[k] for k in app)
    assert all(c.width for c in KERNELS_APP), "the app's DataTable needs each column's width"


def test_a_row_of_the_wrong_length_or_an_undeclared_cell_is_refused():
    k = Kernel("aten::add", 1, 2.0, 8, 4)
    cells = KERNELS_ONCE.cells(k)
    assert KERNELS_ONCE.check(cells) == cells
    with pytest.raises(ValueError, match="5 cells for 6 columns"):
        KERNELS_ONCE.check(cells[:-1])
    with pytest.raises(KeyError, match="traffic"):
        KERNELS_ONCE.given(traffic="1 B")
    with pytest.raises(KeyError):
        KERNELS_ONCE.cells(k, phase="fwd")
    # a row with no figures: its blanks come from the declaration
    assert KERNELS_ONCE.given(kernel="no result") == ["no result", "", "", "", "", ""]
    with pytest.raises(ValueError, match="twice"):
        Columns("t", (Column("a", "a", lambda r, w: ""), Column("a", "b", lambda r, w: "")))


def test_an_unknown_figure_is_the_marker_each_output_words_never_zero():
    k = Kernel("aten::add", 1, 2.0, None, None)
    for key in ("traffic", "read", "written"):
        assert KERNELS[key].fill(k, Words()) is UNKNOWN
    assert KERNELS_ONCE.cells(k)[3:5] == ["?", "?"]
    assert KERNELS_ONCE.cells(k, Words(unknown="unknown"))[3:5] == ["unknown", "unknown"]
    # a plan's row (report.plan): launches and time pending, not unknown and not 0
    planned = Kernel("cpp_fused_add_0", None, None, 8, 4)
    assert KERNELS_APP.cells(planned)[1:] == ["…", "…", "12 B"]
