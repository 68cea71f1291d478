"""Memory on screen (render.memory, issue 37): the summary's peak, `--once`'s and Markdown's
section, an unknown mode's figures as "?" (never 0)."""

from __future__ import annotations

from dataclasses import replace

from support.fixed_session import article_report

from kscope.render.markdown import report_markdown
from kscope.render.memory import memory_rows, memory_title
from kscope.render.text import summary_line
from kscope.report.memory import CallMemory, HeldTensor
from kscope.report.model import RunError
from kscope.report.place import Place

EAGER = CallMemory(8_000_000, 4_000_000, 2, {"temporary": 4_000_000, "held": 4_000_000}, (
    HeldTensor(4_000_000, "temporary", "aten::add", Place("add_relu.py", 7)),
    HeldTensor(4_000_000, "held", "aten::relu", Place("add_relu.py", 7))))
COMPILED = CallMemory(4_000_000, 4_000_000, 1, {"held": 4_000_000}, (HeldTensor(4_000_000, "held", "buf0"),))


def with_memory(eager, compiled):
    r = article_report()
    return replace(r, eager=replace(r.eager, memory=eager), compiled=replace(r.compiled, memory=compiled))


def test_the_summary_gives_the_peak_of_both_modes():
    assert summary_line(with_memory(EAGER, COMPILED)).endswith(", peak 8.0 MB → 4.0 MB")
    assert "peak" not in summary_line(with_memory(EAGER, None))  # one mode's alone: no arrow to a guess


def test_the_section_lists_what_is_alive_at_each_peak_with_its_line():
    r = with_memory(EAGER, COMPILED)
    assert memory_title(r) == ("memory of one call, eager → compiled: peak 8.0 MB → 4.0 MB, "
                               "held at its end 4.0 MB → 4.0 MB")
    assert r.home == "add_relu.py"  # a line in the target's own file is its number alone
    assert memory_rows(r) == [
        ("eager", "4.0 MB", "temporary", "aten::add", "7"),
        ("eager", "4.0 MB", "held", "aten::relu", "7"),
        ("compiled", "4.0 MB", "held", "buf0", "?"),
    ]
    md = report_markdown(r)
    assert "#### Memory" in md and "| compiled | 4.0 MB | held | `buf0` | `?` |" in md


def test_inductors_estimate_is_beside_the_measured_peak_one_per_graph():
    one = replace(COMPILED, estimated_peak_bytes=(4_000_000,))
    assert memory_title(with_memory(EAGER, one)).endswith("(inductor's estimate before it ran: 4.0 MB)")
    two = replace(COMPILED, estimated_peak_bytes=(4_000_000, None))  # a graph's estimate unknown: "?"
    assert memory_title(with_memory(EAGER, two)).endswith(
        "(inductor's estimates before they ran, per graph: 4.0 MB, ?)")


def test_while_compiling_the_plans_estimate_stands_for_the_compiled_peak():
    from kscope.report.plan import Plan

    r = replace(with_memory(EAGER, None), compiled=None, plan=Plan(estimated_peak_bytes=(4_000_000,)))
    assert memory_title(r).endswith("peak 8.0 MB → ?, held at its end 4.0 MB → ? (compiling; inductor's estimate: 4.0 MB)")
    unknown = replace(r, plan=Plan(estimated_peak_bytes=(None,)))  # a cached graph kscope has no estimate of
    assert memory_title(unknown).endswith("(compiling; inductor's estimate: ?)")
    assert memory_title(replace(r, plan=Plan())).endswith("→ ? (compiling)")  # no graph planned yet: no figure
    # memory is recorded once both halves ran: while compiling neither may be known, and it says why
    early = replace(r, eager=replace(r.eager, memory=None))
    assert memory_title(early).endswith("peak ? → ?, held at its end ? → ? (compiling; inductor's estimate: 4.0 MB)")
    failed = replace(early, errors=(RunError("compiled", "RuntimeError", "boom"),))
    assert memory_title(failed).endswith("(the run failed; inductor's estimate: 4.0 MB)")


def test_a_mode_without_memory_reads_unknown_and_none_at_all_no_section():
    r = with_memory(EAGER, None)
    assert memory_title(r).endswith("peak 8.0 MB → ?, held at its end 4.0 MB → ?")
    assert [row[0] for row in memory_rows(r)] == ["eager", "eager"]
    assert memory_title(with_memory(None, None)) is None and "#### Memory" not in report_markdown(with_memory(None, None))


def test_a_save_that_moves_the_peak_says_by_how_much_and_what_is_new():
    from kscope.render.memory import peak_change
    from kscope.render.verdict import change_line

    r = with_memory(EAGER, COMPILED)
    bigger = CallMemory(12_000_000, 4_000_000, 3, {}, EAGER.top + (
        HeldTensor(4_000_000, "temporary", "aten::mul", Place("model.py", 14)),))
    assert peak_change(EAGER, bigger) == "peak +4.0 MB: a new temporary at model.py:14"
    assert peak_change(bigger, EAGER) == "peak −4.0 MB"
    assert peak_change(EAGER, EAGER) == "" and peak_change(None, EAGER) == ""  # unknown: no change claimed
    line = change_line("eager", r.eager, replace(r.eager, memory=bigger), compact=True)
    assert line.endswith(", peak +4.0 MB: a new temporary at model.py:14"), line


def test_a_narrow_change_line_shortens_the_peaks_clause_and_keeps_its_delta():
    """At 80 columns the Δ line has ~76: "peak +12 B: a new temporary at …" was cut off mid-word."""
    from kscope.render.verdict import change_line

    r = with_memory(EAGER, COMPILED)
    bigger = CallMemory(12_000_000, 4_000_000, 3, {}, EAGER.top + (
        HeldTensor(4_000_000, "temporary", "aten::mul", Place("model.py", 14)),))
    now = replace(r.eager, memory=bigger)
    full = change_line("eager", r.eager, now, compact=True)
    assert change_line("eager", r.eager, now, compact=True, width=len(full)) == full
    shorter = change_line("eager", r.eager, now, compact=True, width=len(full) - 1)
    assert shorter.endswith(", peak +4.0 MB at model.py:14") and len(shorter) < len(full)
    delta = change_line("eager", r.eager, now, compact=True, width=len(shorter) - 1)
    assert delta.endswith(", peak +4.0 MB") and delta == full.removesuffix(": a new temporary at model.py:14")
    # narrower still: the delta stays (the line is cut on screen, its figure never dropped)
    assert change_line("eager", r.eager, now, compact=True, width=10) == delta


def test_a_result_that_took_anothers_place_is_not_what_moved_the_peak():
    """`(a + b).relu()` → `(a + b).relu() * 2` at 10⁶ floats, as kscope measured it: the eager peak
    8,000,000 → 8,000,012 B. The mul's 4 MB result replaced the add's (and relu's result went from
    held to temporary); what is new is 12 B: the scalar 2 wrapped as an int64 (8 B, before any op)
    and its float32 cast by aten::mul (4 B). The old rule named relu's 4 MB result as "a new temporary"."""
    from kscope.render.memory import peak_change

    at = Place("add_relu.py", 7)
    times_two = CallMemory(8_000_012, 4_000_000, 5, {"temporary": 4_000_012, "held": 4_000_000}, (
        HeldTensor(4_000_000, "temporary", "aten::relu", at), HeldTensor(4_000_000, "held", "aten::mul", at),
        HeldTensor(8, "temporary", "?"), HeldTensor(4, "temporary", "aten::mul")))
    seed = CallMemory(8_000_000, 4_000_000, 2, {"temporary": 4_000_000, "held": 4_000_000}, (
        HeldTensor(4_000_000, "temporary", "aten::add", at), HeldTensor(4_000_000, "held", "aten::relu", at)))
    assert peak_change(seed, times_two) == "peak +12 B: a new temporary of 8 B (no op or line known)"
    assert peak_change(seed, times_two, brief=1) == "peak +12 B (no op or line known)"
    assert peak_change(times_two, seed) == "peak −12 B"
