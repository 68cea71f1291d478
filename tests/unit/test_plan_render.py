"""What the screen says of a compile in progress (render/plan.py), state by state."""

from __future__ import annotations

from kscope.render.plan import compile_state, plan_note, plan_view, progress_text
from kscope.report.model import Kernel, Report
from kscope.report.plan import Plan, PlanProgress

ROWS = (Kernel("cpp_fused_add_relu_0", None, None, 8_000_000, 4_000_000, fused=True),
        Kernel("aten::mm", None, None, 100, 50, kind="extern"))


def test_progress_says_kernels_where_inductor_counts_them_and_which_graph():
    assert progress_text(PlanProgress(1, 0)) == "compiling"
    assert progress_text(PlanProgress(1, 0, 3, 12)) == "compiling 3/12 kernels"
    assert progress_text(PlanProgress(3, 1, 0, 4)) == "compiling 0/4 kernels · graph 2/3"
    # every graph seen is done but the first call has not returned: dynamo traces on, or backward waits
    assert progress_text(PlanProgress(2, 2)) == "compiling"
    assert progress_text(PlanProgress(2, 2, ran=True)) == ""


def test_the_note_marks_a_plan_its_progress_and_a_stale_one():
    plan = Plan(ROWS, (), PlanProgress(1, 0, 1, 2))
    assert plan_note(plan) == "plan: 2 kernels · compiling 1/2 kernels…"
    assert plan_note(plan, PlanProgress(1, 1, ran=True)) == "plan: 2 kernels · compiled, timing…"
    assert plan_note(Plan(ROWS[:1]), stale=True) == "plan: 1 kernel (stale: the run failed)"
    assert compile_state(None, 3.0) == ""
    assert compile_state(PlanProgress(1, 0, 1, 2), 3.04) == "compiling 1/2 kernels · 3.0 s"
    assert compile_state(PlanProgress(1, 1, ran=True), 9.0) == "timing… 9.0 s"


def test_the_plan_takes_the_compiled_halfs_place_only_until_there_is_one():
    report = Report("/w/t.py", "t", plan=Plan(ROWS, ()))
    view = plan_view(report)
    assert view.compiled.kernels == ROWS and view.compiled.bytes_read == 8_000_100
    assert view.compiled.phases == ()  # a plan's rows have no launches or time to add up
    assert plan_view(Report("/w/t.py", "t")).compiled is None
