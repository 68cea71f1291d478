"""The words and cells for what each line costs (report.lines), shared by `--once`, `--markdown`
and the source tab's gutter. An estimated time (a kernel's time shared among several lines by
their bytes) is marked "≈"."""

from __future__ import annotations

from kscope.render.columns import Column, Columns, Words
from kscope.render.text import fmt_bytes, fmt_count
from kscope.render.view import fmt_us
from kscope.report.lines import LineCost, LineMode
from kscope.report.model import Report

SHOWN = 10
"""How many lines `--once` and `--markdown` list."""
NO_LINE = "(no line)"


def costliest(report: Report, n: int = SHOWN) -> tuple[LineCost, ...]:
    """The n costliest lines (compiled time, else eager: LineCost.hottest_us); the work tied to
    no line is listed among them if it is that costly."""
    costs = report.line_costs or ()  # None: unknown, nothing to list
    return costs[:n] if n else costs


def line_name(cost: LineCost, home: str = "") -> str:
    return NO_LINE if cost.place is None else cost.place.text(home)


def time_text(m: LineMode | None) -> str:
    if m is None:
        return "—"
    return ("≈" if m.estimated else "") + fmt_us(m.time_us)


def bytes_text(m: LineMode | None, unknown: str = "?") -> str:
    return "—" if m is None else fmt_bytes(m.bytes_total, unknown)


def kernels_text(cost: LineCost) -> str:
    """The compiled kernels it went into (its eager ones where it has none compiled)."""
    m = cost.compiled or cost.eager
    return ", ".join(m.kernels) if m else ""


FIGURE = {"no_wrap": True, "overflow": "fold"}
LINES = Columns("lines", (
    Column("line", "line", lambda c, w: line_name(c, w.home), code=True, rich=FIGURE),
    Column("eager_bytes", "eager bytes", lambda c, w: bytes_text(c.eager, w.unknown), "r", narrow="eager", rich=FIGURE),
    Column("eager_time", "eager µs", lambda c, w: time_text(c.eager), "r", narrow="µs", rich=FIGURE),
    Column("launches", "launches", lambda c, w: fmt_count(c.eager.launches) if c.eager else "—", "r", narrow="×",
           rich=FIGURE),
    Column("compiled_bytes", "compiled bytes", lambda c, w: bytes_text(c.compiled, w.unknown), "r",
           narrow="compiled", rich=FIGURE),
    Column("compiled_time", "compiled µs", lambda c, w: time_text(c.compiled), "r", narrow="µs", rich=FIGURE),
    Column("kernels", "compiled kernels", lambda c, w: kernels_text(c), narrow="kernels",
           rich={"no_wrap": False, "overflow": "fold", "ratio": 1, "min_width": 14}),
))
"""Each line's cost (a LineCost a row): bytes and µs per call in both modes, eager's launches, the
kernels. A terminal's table has the narrow labels ("×": eager's launches)."""


def gutter(cost: LineCost | None, widest_us: float, wide: bool = True, bar: int = 5) -> str:
    """The source tab's gutter for one line, of fixed width (blank for a line that issued no
    work): wide "12.0 MB→ 8.0 MB   685 µs→≈251 µs  ███▍ ", else the compiled half alone
    " 8.0 MB ≈251 µs ███▍ ". The bar is the line's time (compiled, else eager) against the
    costliest line's."""
    if cost is None:
        return " " * gutter_width(wide, bar)
    compiled = f"{bytes_text(cost.compiled):>8} {time_text(cost.compiled):>8}"
    figures = f"{bytes_text(cost.eager):>8}→{bytes_text(cost.compiled):<8} {time_text(cost.eager):>8}→{time_text(cost.compiled):<8}"
    share = cost.hottest_us / widest_us if widest_us > 0 else 0.0
    return f"{figures if wide else compiled} {_bar(share, bar)} "


def gutter_width(wide: bool = True, bar: int = 5) -> int:
    return (8 + 1 + 8 + 1 + 8 + 1 + 8 if wide else 8 + 1 + 8) + 1 + bar + 1


def line_answer(cost: LineCost | None, home: str = "") -> str:
    """What the source tab says of the line chosen: its cost in both modes and its kernels."""
    if cost is None:
        return "issued no kernel"
    e, c = cost.eager, cost.compiled
    eager = f"eager {bytes_text(e)}, {time_text(e)}, {fmt_count(e.launches)} launch{'es' if e.launches != 1 else ''}" if e else "eager —"
    compiled = f"compiled {bytes_text(c)}, {time_text(c)}" if c else "compiled —"
    return f"{eager} → {compiled}"


def _bar(share: float, width: int) -> str:
    eighths = round(max(0.0, min(1.0, share)) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")).ljust(width)


def lines_table(report: Report):
    """`--once`'s table of the costliest lines; None when no line issued work."""
    from rich.table import Table

    shown = costliest(report)
    if not shown:
        return None
    more = len(report.line_costs) - len(shown)
    title = "costliest lines: bytes, µs and eager launches per call"
    table = Table(title=f"{title} ({len(shown)} of {len(report.line_costs)})" if more else title,
                  title_justify="left", expand=True, pad_edge=False,
                  caption="≈: a kernel's time shared among its lines by their bytes" if any(
                      m is not None and m.estimated for c in shown for m in (c.eager, c.compiled)) else None)
    LINES.add_to(table, narrow=True)
    words = Words(home=report.home)
    for cost in shown:
        table.add_row(*LINES.cells(cost, words))
    return table
