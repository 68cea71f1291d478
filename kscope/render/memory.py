"""What one call holds, eager and compiled (report.memory): the peak above what existed before the
call, what it still holds at its end, and the tensors alive at the peak. Shared by `--once` and
Markdown; no torch, and rich only for `--once`'s table."""

from __future__ import annotations

from collections import Counter

from kscope.render.text import fmt_bytes
from kscope.report.memory import CallMemory, HeldTensor
from kscope.report.model import Report

UNKNOWN_LINE = "?"
"""A tensor no line of the user's allocated (a compiled graph's buffer)."""


def memory_title(report: Report) -> str | None:
    """"memory of one call: peak 8.0 MB → 4.0 MB, held at its end 4.0 MB → 4.0 MB (inductor's
    estimate before it ran: 4.0 MB)"; while the compiled half compiles, its peak is "?" beside the
    plan's estimate ("(compiling; inductor's estimate: 4.0 MB)"). None when neither mode's is known
    and there is no plan.
    A graph's estimate kscope could not read is "?", never 0."""
    e, c = (m.memory if m is not None else None for m in (report.eager, report.compiled))
    planned = report.plan is not None and report.compiled is None
    if e is None and c is None and not planned:
        return None

    def both(figure) -> str:
        return " → ".join("?" if m is None else fmt_bytes(figure(m)) for m in (e, c))

    text = (f"memory of one call, eager → compiled: peak {both(lambda m: m.peak_bytes)}, "
            f"held at its end {both(lambda m: m.held_bytes)}")
    if any(m is not None and m.saved_bytes for m in (e, c)):  # only where a forward kept something
        text += f", kept for backward {both(lambda m: m.saved_bytes)}"
    if planned:  # memory is recorded once both halves ran; a failed run keeps its plan (stale)
        state = "the run failed" if report.errors else "compiling"
        estimate = planned_peak(report)
        return text + (f" ({state}; inductor's estimate: {estimate})" if estimate else f" ({state})")
    estimates = c.estimated_peak_bytes if c is not None else ()
    if len(estimates) == 1:
        text += f" (inductor's estimate before it ran: {fmt_bytes(estimates[0])})"
    elif estimates:
        text += f" (inductor's estimates before they ran, per graph: {', '.join(fmt_bytes(x) for x in estimates)})"
    return text


def planned_peak(report: Report) -> str:
    """The plan's estimate of the compiled peak while it compiles: "4.0 MB", or per graph
    "4.0 MB, ?" ("?": a graph's unknown); "" without a plan or an estimate."""
    estimates = report.plan.estimated_peak_bytes if report.plan is not None else ()
    return ", ".join(fmt_bytes(x) for x in estimates)


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


def peak_change(before: CallMemory | None, now: CallMemory | None, *, brief: int = 0) -> str:
    """Since the last save: "peak +4.0 MB: a new temporary at model.py:14" ("" when either is
    unknown or the peak did not move). The tensor named is the largest at the new peak that is
    neither at the old one (same allocator, line and size, whatever its category: a result kept
    to the end is "held", the same result used on is "temporary") nor in the place of one of the
    same size gone from it (`(a + b).relu()` → `(a + b).relu() * 2`: the mul's 4 MB result took the
    add's place; the 12 B the peak rose are the scalar 2, wrapped as an int64 before any op runs
    and cast to float32 by aten::mul). Its size is said when it is not the whole rise. brief, for
    a narrow line: 1 drops its category and size ("peak +4.0 MB at model.py:14"), 2 says the rise alone."""
    if before is None or now is None or before.peak_bytes == now.peak_bytes:
        return ""
    delta = now.peak_bytes - before.peak_bytes
    text = f"peak {'+' if delta > 0 else '−'}{fmt_bytes(abs(delta))}"
    new = _new_at_peak(before, now)
    if delta > 0 and new and brief < 2:
        t = new[0]
        size = f" of {fmt_bytes(t.bytes)}" if t.bytes != delta else ""
        where = (f" at {t.place.text()}" if t.place is not None
                 else f" ({t.allocated_by})" if t.allocated_by != UNKNOWN_LINE else " (no op or line known)")
        text += where if brief else f": a new {t.category}{size}{where}"
    return text


def _new_at_peak(before: CallMemory, now: CallMemory) -> list[HeldTensor]:
    """now's tensors at the peak, largest first, less those at before's peak and those that
    replaced one of before's of the same size."""
    kept = Counter((t.allocated_by, t.place, t.bytes) for t in before.top)
    added = []
    for t in now.top:
        key = (t.allocated_by, t.place, t.bytes)
        if kept[key] > 0:
            kept[key] -= 1
        else:
            added.append(t)
    gone = Counter()
    for (_, _, size), n in kept.items():
        gone[size] += n
    new = []
    for t in added:
        if gone[t.bytes] > 0:
            gone[t.bytes] -= 1
        else:
            new.append(t)
    return new


PEAK_BRIEFS = 3
"""peak_change's forms, longest first (brief 0, 1, 2)."""
