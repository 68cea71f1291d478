"""What one call holds, eager and compiled (report.memory): the peak above what existed before the
call, what it still holds at its end, and the tensors alive at the peak. Shared by `--once` and
Markdown; no torch, and rich only for `--once`'s table."""

from __future__ import annotations

from kscope.render.text import fmt_bytes
from kscope.report.memory import CallMemory
from kscope.report.model import Report

UNKNOWN_LINE = "?"
"""A tensor no line of the user's allocated (a compiled graph's buffer)."""


def memory_title(report: Report) -> str | None:
    """"memory of one call: peak 8.0 MB → 4.0 MB, held at its end 4.0 MB → 4.0 MB (inductor's
    estimate before it ran: 4.0 MB)"; None when neither mode's is known. A graph's estimate kscope
    could not read is "?", never 0."""
    e, c = (m.memory if m is not None else None for m in (report.eager, report.compiled))
    if e is None and c is None:
        return None

    def both(figure) -> str:
        return " → ".join("?" if m is None else fmt_bytes(figure(m)) for m in (e, c))

    text = (f"memory of one call, eager → compiled: peak {both(lambda m: m.peak_bytes)}, "
            f"held at its end {both(lambda m: m.held_bytes)}")
    estimates = c.estimated_peak_bytes if c is not None else ()
    if len(estimates) == 1:
        text += f" (inductor's estimate before it ran: {fmt_bytes(estimates[0])})"
    elif estimates:
        text += f" (inductor's estimates before they ran, per graph: {', '.join(fmt_bytes(x) for x in estimates)})"
    return text


def memory_rows(report: Report) -> list[tuple[str, str, str, str, str]]:
    """(mode, bytes, category, allocated by, line) of each tensor alive at each mode's peak."""
    rows = []
    for name in ("eager", "compiled"):
        mode = getattr(report, name)
        memory: CallMemory | None = None if mode is None else mode.memory
        for t in memory.top if memory else ():
            line = UNKNOWN_LINE if t.place is None else t.place.text(report.home)
            by = f"{t.allocated_by} ({t.filled_by})" if t.filled_by else t.allocated_by
            rows.append((name, fmt_bytes(t.bytes), t.category, by, line))
    return rows


def memory_table(report: Report):
    """`--once`'s memory section (rich); None when no mode's memory is known."""
    title = memory_title(report)
    if title is None:
        return None
    from rich.table import Table  # Markdown reads this module's words without rich

    table = Table(title=title + " · alive at the peak:", title_justify="left", expand=True, pad_edge=False)
    for label, justify in (("mode", "left"), ("bytes", "right"), ("category", "left"), ("allocated by", "left"),
                           ("line", "left")):
        table.add_column(label, justify=justify, overflow="fold")
    for row in memory_rows(report):
        table.add_row(*row)
    return table


def peak_change(before: CallMemory | None, now: CallMemory | None) -> str:
    """Since the last save: "peak +4.0 MB: a new temporary at model.py:14" ("" when either is
    unknown or the peak did not move); the new tensor is the largest alive at the new peak that
    was not at the old one (same category, allocator and line)."""
    if before is None or now is None or before.peak_bytes == now.peak_bytes:
        return ""
    delta = now.peak_bytes - before.peak_bytes
    text = f"peak {'+' if delta > 0 else '−'}{fmt_bytes(abs(delta))}"
    old = {(t.category, t.allocated_by, t.place) for t in before.top}
    new = [t for t in now.top if (t.category, t.allocated_by, t.place) not in old]
    if delta > 0 and new:
        where = f" at {new[0].place.text()}" if new[0].place is not None else f" ({new[0].allocated_by})"
        text += f": a new {new[0].category}{where}"
    return text
