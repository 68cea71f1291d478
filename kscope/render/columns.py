"""A table's columns, declared once: each column's label, how it aligns and sizes, and how its cell
is filled from a row. The app's DataTables, `--once`'s rich tables and Markdown build a table from
the same declaration, as torch/_inductor/metrics.py registers a table's columns once and checks
each row against them: no output counts cells by hand.

A fill returns the cell's text, or UNKNOWN for a figure kscope does not know, which each output
words its own way ("?" in a terminal, "unknown" in Markdown), never as 0. A fill that words
several figures in one cell ("? → 12") reads that word from its `Words`. A row with no figure for
a column (a total has no lines, "no result" has nothing) gets that column's blank from
Columns.given, never from padding counted by hand.

No rich or textual here: Markdown uses it on a machine with torch alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


class Unknown:
    """The marker a fill returns for a figure kscope does not know (see UNKNOWN)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = Unknown()
"""A cell whose figure is unknown: "?" in a terminal, "unknown" in Markdown; never 0."""


@dataclass(frozen=True)
class Words:
    """How an output words a cell: the target's file (its lines need no file name) and its word
    for a figure kscope does not know."""

    home: str = ""
    unknown: str = "?"


TERMINAL = Words()
"""The app's and `--once`'s words."""

Fill = Callable[[Any, Words], "str | Unknown"]

NO_WRAP = MappingProxyType({"no_wrap": True})
"""A rich column that never wraps (a figure)."""


def or_unknown(value: Any, fmt: Callable[[Any], str]) -> str | Unknown:
    """fmt(value), or UNKNOWN for None."""
    return UNKNOWN if value is None else fmt(value)


@dataclass(frozen=True)
class Column:
    key: str
    """What code calls the column (a DataTable's column key, Columns.given's names)."""
    label: str
    """Its header (Markdown's, and a terminal's unless `narrow` is set)."""
    fill: Fill
    """The cell from a row: its text, or UNKNOWN."""
    align: str = "l"
    """"l" or "r"."""
    narrow: str = ""
    """A shorter header where room is short (a terminal's table: the app, `--once`); "" for the label."""
    width: int | None = None
    """The app's DataTable width; None: sized by what it holds."""
    rich: Mapping[str, Any] = field(default_factory=dict)
    """How a rich table sizes it (no_wrap, overflow, ratio, min_width, max_width)."""
    code: bool = False
    """A name or a place: Markdown writes it as code."""

    def text(self, row: Any, words: Words = TERMINAL) -> str:
        value = self.fill(row, words)
        return words.unknown if value is UNKNOWN else value

    def header(self, narrow: bool = False) -> str:
        return (self.narrow or self.label) if narrow else self.label


@dataclass(frozen=True)
class Columns:
    """One table's columns, in order."""

    name: str
    columns: tuple[Column, ...]

    def __post_init__(self) -> None:
        keys = [c.key for c in self.columns]
        if len(set(keys)) != len(keys):
            raise ValueError(f"{self.name}: a column declared twice in {keys}")
        if any(c.align not in ("l", "r") for c in self.columns):
            raise ValueError(f"{self.name}: align is 'l' or 'r'")

    def __len__(self) -> int:
        return len(self.columns)

    def __iter__(self):
        return iter(self.columns)

    def __getitem__(self, key: str) -> Column:
        for c in self.columns:
            if c.key == key:
                return c
        raise KeyError(f"{self.name} has no column {key!r} (it has {self.keys})")

    @property
    def keys(self) -> list[str]:
        return [c.key for c in self.columns]

    def labels(self, narrow: bool = False) -> list[str]:
        return [c.header(narrow) for c in self.columns]

    @property
    def align(self) -> str:
        """"lrrl…": each column's alignment, as Markdown's table takes it."""
        return "".join(c.align for c in self.columns)

    def pick(self, *keys: str) -> Columns:
        """These columns, in this order: the part of the table an output has room for."""
        return Columns(self.name, tuple(self[k] for k in keys))

    def cells(self, row: Any, words: Words = TERMINAL, **instead: Any) -> list:
        """Each column's cell for `row`, in order; `instead`: cells an output draws itself (a
        styled name), by key, in place of the fill's text."""
        self._declared(instead)
        return [instead[c.key] if c.key in instead else c.text(row, words) for c in self.columns]

    def given(self, **cells: Any) -> list:
        """A row that is no row of figures ("no result", a caption row): these cells by key, every
        other column blank."""
        self._declared(cells)
        return [cells.get(c.key, "") for c in self.columns]

    def check(self, cells: list | tuple) -> list | tuple:
        """`cells`, when there is one for each column; else a ValueError saying how many."""
        if len(cells) != len(self.columns):
            raise ValueError(f"{self.name}: {len(cells)} cells for {len(self.columns)} columns {self.keys}")
        return cells

    def add_to(self, table: Any, narrow: bool = False, **sizing: Mapping[str, Any]) -> None:
        """Add the columns to a rich Table; `sizing`: by key, what only the output knows (a width
        that depends on the terminal's)."""
        for c in self.columns:
            table.add_column(c.header(narrow), justify="right" if c.align == "r" else "left",
                             **{**c.rich, **sizing.get(c.key, {})})

    def _declared(self, cells: Mapping[str, Any]) -> None:
        unknown = set(cells) - set(self.keys)
        if unknown:
            raise KeyError(f"{self.name} has no column {sorted(unknown)} (it has {self.keys})")
