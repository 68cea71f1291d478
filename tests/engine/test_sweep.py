"""Size sweeps (--sweep) on real torch (CPU), against figures derived by hand from the shapes.

The seed, (a + b).relu() on fp32 vectors of n elements: eager runs add (reads a and b, writes
a + b) and relu (reads it, writes the output): 3 reads and 2 writes of 4n bytes, 20 B an element,
in 2 launches. Compiled, one fused kernel reads a and b and writes the output: 12 B an element in
1 launch, at every size, including the sizes that run the graph compiled for dynamic shapes.
"""

from __future__ import annotations

import json

import pytest
from support.answered import answered
from support.paths import SAMPLES, write_target

from kscope.engine.sweep import run_sweep
from kscope.report.codec import report_from_dict, report_to_dict
from kscope.report.request import RunRequest, SweepOptions, SweepRequest

F32 = 4
SEED = str(SAMPLES / "add_relu.py")


@pytest.fixture(scope="module")
def seed_sweep():
    points_seen = []
    report = run_sweep(SweepRequest(RunRequest(SEED, device="cpu"), SweepOptions(sizes=(100, 1000, 10_000, 100_000))), points_seen.append)
    return report, points_seen


@pytest.mark.quiet
def test_seed_moves_20_bytes_an_element_eagerly_and_12_compiled_at_every_size(seed_sweep):
    report, _ = seed_sweep
    assert report.ok, report.errors
    sweep = report.sweep
    assert [p.n for p in sweep.points] == [100, 1000, 10_000, 100_000] and sweep.stopped is None
    for p in sweep.points:
        n = p.n
        assert (p.eager.launches, p.eager.bytes_read, p.eager.bytes_written) == (2, 3 * F32 * n, 2 * F32 * n)
        assert (p.compiled.launches, p.compiled.bytes_read, p.compiled.bytes_written) == (1, 2 * F32 * n, F32 * n)
        assert p.compiled.kernels == ("cpp_fused_add_relu_0",)
        for mode in (p.eager, p.compiled):
            assert mode.kernel_time_us > 0 and mode.call_time_us > 0
            low, high = mode.call_time_us_range
            assert low <= mode.call_time_us <= high


@pytest.mark.quiet
def test_one_compile_recompiles_once_with_dynamic_shapes_and_says_why(seed_sweep):
    sweep = seed_sweep[0].sweep
    first, second, *rest = sweep.points
    assert first.graph == "0/0" and "static shapes" in first.recompiled
    assert second.graph == "0/1 (dynamic)"
    assert "size mismatch" in second.recompiled and "expected 100, actual 1000" in second.recompiled
    assert all(p.graph == "0/1 (dynamic)" and p.recompiled is None for p in rest)
    assert sweep.recompiles == 1


@pytest.mark.quiet
def test_at_100_elements_the_compiled_call_costs_more(seed_sweep):
    # the article's lesson at the sweep's smallest size: guards and the wrapper cost more than the
    # fused kernel saves (the rule itself: tests/unit/test_sweep_rule.py)
    sweep = seed_sweep[0].sweep
    first = sweep.points[0]
    if first.verdict == "busy":  # other work took the cores at that size: that size alone, again
        first = answered(lambda: run_sweep(SweepRequest(RunRequest(SEED, device="cpu"), SweepOptions(sizes=(100,))))
                         .sweep.points[0], lambda p: (p.verdict, None))
    assert first.n == 100 and first.verdict == "slower"
    assert first.compiled.call_time_us > first.eager.call_time_us
    assert sweep.crossover_n is None or sweep.crossover_n > 100


@pytest.mark.quiet
def test_progress_after_each_size_and_the_json_round_trip(seed_sweep):
    report, seen = seed_sweep
    # one at the start (no size yet), then one after every size but the last (the final report)
    assert [len(r.sweep.points) for r in seen] == [0, 1, 2, 3]
    d = json.loads(json.dumps(report_to_dict(report)))
    again = report_from_dict(d)
    assert [p.n for p in again.sweep.points] == [p.n for p in report.sweep.points]
    assert again.sweep.crossover_n == report.sweep.crossover_n
    assert again.sweep.points[1].compiled.kernels == report.sweep.points[1].compiled.kernels


def test_the_kernel_inductor_picks_changes_with_size_when_each_size_compiles(tmp_path):
    # Softmax over 8 rows of n: on the CPU one C++ kernel, serial for short rows, parallel over
    # the rows for longer ones, and with each row's reductions split across threads for long rows.
    # Inductor's rule (cpp.py, decide_parallel_depth: no loop parallel while a thread's share of the
    # work is under cpp.min_chunk_size, 512) and what it generated here with 2, 4 and 16 threads
    # (torch 2.13): 8 x 100 serial; 8 x 10,000 an `omp for` over the 8 rows; 8 x 1,000,000 the max
    # and the sum of each row over its million elements in an `omp for`, each thread's partial
    # result in tmp_acc0_arr[tid] (engine.inductor.variants), then the division parallel over the
    # rows. One thread would make every size serial: the machine this runs on has two cores or more.
    # The budget stop has its own test (below): here a budget no size comes near, so that every
    # size runs however busy the machine (at kscope's 60 s, on this 2-core machine shared at load 3-5,
    # the first two sizes took 15 s and n=1e6 was stopped: "about 52 s more"; it was `quiet` for that).
    options = SweepOptions(sizes=(100, 10_000, 1_000_000), static=True, budget_s=600)
    report = run_sweep(SweepRequest(RunRequest(str(SAMPLES / "softmax_wide.py"), device="cpu"), options))
    assert report.ok, report.errors
    points = report.sweep.points
    assert [p.n for p in points] == [100, 10_000, 1_000_000] and report.sweep.stopped is None
    kinds = [p.compiled.variants for p in points]
    assert kinds == [("serial",), ("parallel",), ("reduction split across threads",)], kinds
    assert all(p.recompiled == "compiled for this size (--sweep-static)" for p in points)
    assert report.sweep.recompiles == 2
    for p in points:  # one pass over 8 rows of n, each way
        assert (p.compiled.bytes_read, p.compiled.bytes_written) == (8 * p.n * F32, 8 * p.n * F32)


def test_a_file_without_n_is_told_how_to_add_it(tmp_path):
    no_n = write_target(tmp_path, """
        import torch

        def f(x):
            return x * 2

        def inputs(device):
            return (torch.randn(10, device=device),)
        """)
    report = run_sweep(SweepRequest(RunRequest(str(no_n), device="cpu")))
    assert not report.ok and report.errors[0].stage == "inputs"
    assert "inputs() to take the size n" in report.errors[0].message
    assert "def inputs(device, n=1000)" in report.errors[0].message
    module_level = write_target(tmp_path, """
        import torch

        x = torch.randn(10)

        def f(x):
            return x * 2
        """, name="module_level.py")
    report = run_sweep(SweepRequest(RunRequest(str(module_level), device="cpu")))
    assert "module-level tensors cannot be swept" in report.errors[0].message


def test_stops_before_a_size_that_would_not_fit_in_memory():
    report = run_sweep(SweepRequest(RunRequest(SEED, device="cpu"), SweepOptions(sizes=(100, 10**12))))
    sweep = report.sweep
    assert [p.n for p in sweep.points] == [100]
    # 2 inputs of 4e12 B each (from inputs() on the meta device), plus what a call writes
    assert sweep.stopped.startswith("n=1e12: would need about 16000.0 GB, more than 50% of the")
    assert report.ok  # what was measured stands


def test_stops_before_a_size_that_would_end_past_the_budget():
    # 10 ms: less than any size takes (a compile alone is longer), however warm the machine; the
    # first size always runs, the next is stopped before it starts
    report = run_sweep(SweepRequest(RunRequest(SEED, device="cpu"), SweepOptions(sizes=(100, 1000), budget_s=0.01)))
    sweep = report.sweep
    assert [p.n for p in sweep.points] == [100] and sweep.points[0].wall_s > 0.01
    assert sweep.stopped.startswith("n=1e3: would end past the 0.01 s budget")


@pytest.mark.slow
def test_a_training_step_sweeps_with_the_same_bytes_an_element_at_every_size():
    # --backward: the step (its leaves and gradient seeds) is made again at every size
    report = run_sweep(SweepRequest(RunRequest(SEED, device="cpu", backward=True), SweepOptions(sizes=(1000, 10_000, 100_000))))
    assert report.ok, report.errors
    assert report.backward is not None and report.backward.grads_of == ("a", "b")
    points = report.sweep.points
    for mode in ("eager", "compiled"):
        per_element = {(getattr(p, mode).bytes_read / p.n, getattr(p, mode).bytes_written / p.n) for p in points}
        launches = {getattr(p, mode).launches for p in points}
        assert len(per_element) == 1 and len(launches) == 1, (mode, per_element, launches)
    # forward + backward do more than the forward alone: 20 B an element eagerly
    assert points[0].eager.bytes_total > 20 * points[0].n


def test_crossover_leaves_busy_sizes_out_and_sizes_are_named_exactly():
    from kscope.report.sweep import Sweep, SweepMode, SweepPoint, fmt_n

    mode = SweepMode(1, 0, 0, 1.0)

    def sweep(*verdicts):
        points = tuple(SweepPoint(10**k, mode, mode, v, 1.0) for k, v in enumerate(verdicts, 2))
        return Sweep(points, tuple(p.n for p in points))

    assert sweep("slower", "faster", "busy", "faster").crossover_n == 1000
    assert sweep("slower", "faster", "faster", "busy").crossover_n == 1000
    assert sweep("faster", "same within noise", "faster").crossover_n == 10_000
    assert sweep("busy", "busy").crossover_text() == "can't tell: the CPU was busy at every size"
    assert sweep("faster", "faster").crossover_text() == "compiled is always faster here"
    assert sweep("faster", "slower").crossover_text() == "compiled is not faster at the largest size (n=1e3)"
    assert sweep("slower", "slower").crossover_text() == "compiled is never faster here"
    assert [fmt_n(n) for n in (100, 1000, 1024, 2_500_000, 10**7)] == ["100", "1e3", "1024", "2.5e6", "1e7"]
