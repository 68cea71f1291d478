"""A size sweep's table (report.sweep) as columns of plain words, declared once: the app's sweep tab
and `--once` draw it with rich (render.sweep), as many columns as the width allows; Markdown the
first six. No rich here: Markdown imports it."""

from __future__ import annotations

from kscope.render.columns import NO_WRAP, Column, Columns, Words, or_unknown
from kscope.render.names import short_name
from kscope.render.text import fmt_count, per_element
from kscope.render.view import spread_text, sweep_verdict
from kscope.report.sweep import SweepMode, SweepPoint, fmt_n


def _pair(p: SweepPoint, words: Words, fmt) -> str:
    """"eager → compiled", each figure worded by fmt, or the unknown word where it is None."""
    return " → ".join(words.unknown if (x := fmt(m)) is None else x for m in (p.eager, p.compiled))


def _call(m: SweepMode):
    return or_unknown(m.call_time_us, lambda _: spread_text(m))


def first_kernel(p: SweepPoint) -> str:
    """"add_relu_0 (parallel)", "+2" when more kernels ran (the sizes table below lists them)."""
    if not p.compiled.kernels:
        return ""
    kind = p.compiled.variants[0] if p.compiled.variants else ""
    text = short_name(p.compiled.kernels[0], 24) + (f" ({kind})" if kind else "")
    more = len(p.compiled.kernels) - 1
    return text + (f" +{more}" if more else "")


SWEEP = Columns("sweep", (
    Column("n", "n", lambda p, w: fmt_n(p.n), "r", rich=NO_WRAP),
    Column("launches", "launches", lambda p, w: _pair(p, w, lambda m: fmt_count(m.launches)), "r", rich=NO_WRAP),
    Column("per_element", "B/n", lambda p, w: _pair(
        p, w, lambda m: None if m.bytes_total is None else per_element(m.bytes_total, p.n)), "r", rich=NO_WRAP),
    Column("eager", "eager call", lambda p, w: _call(p.eager), "r", rich=NO_WRAP),
    Column("compiled", "compiled call", lambda p, w: _call(p.compiled), "r", rich=NO_WRAP),
    Column("verdict", "compiled", lambda p, w: sweep_verdict(p), rich=NO_WRAP),
    Column("gbps", "GB/s", lambda p, w: _pair(
        p, w, lambda m: None if m.achieved_gbps is None else f"{m.achieved_gbps:.1f}"), "r", rich=NO_WRAP),
    Column("kernel", "compiled kernel (kind)", lambda p, w: first_kernel(p), code=True,
           rich={"no_wrap": True, "overflow": "ellipsis"}),
))
"""Per size, eager → compiled: launches, bytes per element, wall time per call (median ± half the
interquartile range), the verdict; GB/s and the compiled kernel where there is room."""
SWEEP_NARROW = SWEEP.pick("n", "launches", "per_element", "eager", "compiled", "verdict")
"""What every output shows: Markdown, and a terminal under 90 columns."""
