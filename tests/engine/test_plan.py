"""The compiled half's plan (issue 26), on real torch (CPU): said while inductor compiles, before
any kernel of the graph is compiled, with the figures the final Report has.

Inductor's caches are off in these runs: a graph from its cache has nothing left to compile, so
it gets no plan of its own. The seed at 1,000,000 fp32 elements: one fused kernel that reads a
and b (8,000,000 B) and writes the output (4,000,000 B), from the sample's one line.
"""

from __future__ import annotations

import contextlib
import inspect

import pytest
import torch
from support.paths import SAMPLES, at, write_target
from support.targets import STEPPER

from kscope.engine.run import run
from kscope.report.codec import report_from_dict, report_to_dict
from kscope.report.request import RunRequest

ROW = ("name", "kind", "phase", "ops", "lines", "bytes_read", "bytes_written", "bytes_saved", "flops", "fused",
       "code", "what")
"""Everything a plan's row says: all of a final row but its launches, time and line shares."""


@contextlib.contextmanager
def fresh_compiles():
    with torch._inductor.config.patch(fx_graph_cache=False), torch._functorch.config.patch(
            enable_autograd_cache=False):
        yield


def planned_run(path, **request):
    """The final Report, and what was said before it: ("plan", Report, the functions on the
    stack when it was said) and ("progress", PlanProgress), in order."""
    said = []

    def on_plan(report):
        said.append(("plan", report, [f.function for f in inspect.stack()]))

    with fresh_compiles():
        report = run(RunRequest(str(path), None, "cpu", calls=2, **request), on_plan=on_plan,
                     on_progress=lambda p: said.append(("progress", p)))
    assert not report.errors, report.errors
    return report, said


def rows(kernels) -> dict:
    return {(k.phase, k.name): tuple(getattr(k, f) for f in ROW) for k in kernels}


def plans(said):
    return [x[1].plan for x in said if x[0] == "plan"]


def test_the_seeds_plan_is_said_before_its_kernel_compiles_with_the_final_figures():
    report, said = planned_run(SAMPLES / "add_relu.py")
    (plan,) = plans(said)
    (row,) = plan.kernels
    assert (row.name, row.bytes_read, row.bytes_written, row.flops) == ("cpp_fused_add_relu_0", 8_000_000, 4_000_000,
                                                                        2_000_000)
    assert row.lines == (at(SAMPLES / "add_relu.py", "(a + b).relu()"),)
    assert row.launches is None and row.time_us is None  # only the run knows them
    assert rows(plan.kernels) == rows(report.compiled.kernels)
    assert plan.round_trips == report.compiled.round_trips == ()
    # inductor's estimate of the graph's peak, told before it compiles: the output's 4,000,000 B
    # (the inputs existed before the call), the figure the final Report's memory carries
    assert plan.estimated_peak_bytes == report.compiled.memory.estimated_peak_bytes == (4_000_000,)
    # Said once inductor generated the module's code, before it loads the module, which is where
    # the kernels are compiled: the plan came before any of its kernels.
    stack = said[0][2]
    assert "_compile_to_module_lines" in stack and "load_by_key_path" not in stack
    assert (plan.progress.graphs_seen, plan.progress.graphs_done) == (1, 0)
    progress = [x[1] for x in said[1:]]
    assert progress and progress[-1].graphs_done == 1, progress  # then the compile ended
    # the eager half came with it (the app shows both; the final Report retimes it), and the final
    # Report carries no plan
    early = said[0][1]
    assert [(k.name, k.bytes_read, k.bytes_written) for k in early.eager.kernels] == [
        (k.name, k.bytes_read, k.bytes_written) for k in report.eager.kernels]
    assert early.compiled is None and report.plan is None


@pytest.mark.parametrize("sample, request_", [
    ("graph_break.py", {}),  # two graphs: a plan for each, the second with both graphs' kernels
    ("matmul_gelu.py", {}),  # a library call and a round trip inductor explains
    ("add_relu.py", {"backward": True}),  # a training step: the backward graph compiles later
])
def test_each_new_graph_is_planned_and_the_last_plan_is_the_final_report(sample, request_):
    report, said = planned_run(SAMPLES / sample, **request_)
    told = plans(said)
    graphs = 2 if sample == "graph_break.py" or request_ else 1
    assert [p.progress.graphs_seen for p in told] == list(range(1, graphs + 1))
    final = rows(report.compiled.kernels)
    assert rows(told[-1].kernels) == {key: final[key] for key in rows(told[-1].kernels)}
    # what the plan cannot show: ops run outside every graph (autograd's AccumulateGrad)
    assert {final[key][1] for key in final.keys() - rows(told[-1].kernels).keys()} <= {"op"}
    assert told[-1].round_trips == report.compiled.round_trips
    assert len(told[-1].estimated_peak_bytes) == graphs and None not in told[-1].estimated_peak_bytes
    assert told[-1].estimated_peak_bytes == report.compiled.memory.estimated_peak_bytes
    if sample == "matmul_gelu.py":
        assert told[-1].round_trips and told[-1].round_trips[0].producer == "aten::addmm"
    if request_:
        assert {k.phase for k in told[-1].kernels} == {"forward", "backward"}
    # a plan crosses the process boundary intact (the worker sends it as JSON)
    last = [x[1] for x in said if x[0] == "plan"][-1]
    assert report_from_dict(report_to_dict(last)).plan == told[-1]


def test_a_compiled_half_that_fails_after_its_plan_keeps_the_plan(tmp_path):
    path = write_target(tmp_path, """
        import torch

        def gather(x, idx):
            if torch.compiler.is_compiling():
                idx = idx + 1_000_000  # compiled only: out of bounds when the compiled code runs
            return x[idx].relu()

        def inputs(device):
            return torch.randn(1000, device=device), torch.arange(100, device=device)
    """)
    said = []
    with fresh_compiles():
        report = run(RunRequest(str(path), None, "cpu", calls=2), on_plan=said.append)
    (error,) = report.errors
    assert error.stage == "compile" and "index out of bounds" in error.message
    assert report.compiled is None and report.plan.kernels == said[-1].plan.kernels
    assert [k.name for k in report.plan.kernels] == ["cpp_fused_add_index_relu_0"]


def test_a_run_without_a_listener_says_no_plan():
    """--once and --json: the final figures only."""
    with fresh_compiles():
        report = run(RunRequest(str(SAMPLES / "add_relu.py"), None, "cpu", calls=2))
    assert report.plan is None and "plan" not in report_to_dict(report)


def test_a_graph_recompiled_after_the_first_call_is_compiling_again_not_timing(tmp_path):
    """A global the target changes at every call fails dynamo's guard: the warm-up calls after the
    first compile again. Their plans say so (not "timing"), and once compiled, timing again."""
    path = write_target(tmp_path, STEPPER)
    with torch._dynamo.config.patch(recompile_limit=2):  # then dynamo runs it eagerly: a short test
        _, said = planned_run(path)
    states = [("plan" if x[0] == "plan" else "progress", (x[1].plan.progress if x[0] == "plan" else x[1]).ran)
              for x in said]
    first_ran = states.index(("progress", True))
    assert ("plan", False) in states[first_ran:], states  # a recompile after the first call: compiling
    replanned = states.index(("plan", False), first_ran)
    assert ("progress", True) in states[replanned:], states  # compiled: timing again
