"""Why a kernel exists: source lines, generated code, graph breaks, recompiles, bandwidth.
Expected lines are read from the file the test writes, never typed in."""

import pytest
from support.answered import answered
from support.paths import at, line_of, write_target
from support.runs import run_ok
from support.targets import STEPPER

from kscope.report.codec import report_to_dict
from kscope.report.place import Place


def test_lines_of_eager_ops_and_of_the_kernel_that_fused_them(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def two_lines(a, b):
            y = a + b
            z = y.relu()
            return z

        def inputs(device):
            return torch.randn(1000, device=device), torch.randn(1000, device=device)
        """,
    )
    r = run_ok(path)
    add_line, relu_line = line_of(path, "y = a + b"), line_of(path, "z = y.relu()")
    eager = {k.name: k.lines for k in r.eager.kernels}
    add, relu = Place(path.name, add_line), Place(path.name, relu_line)
    assert eager == {"aten::add": (add,), "aten::relu": (relu,)}
    (kernel,) = r.compiled.kernels
    assert kernel.lines == (add, relu)
    # the source that ran, and where the target is defined in it
    assert r.source == path.read_text()
    assert r.target_lines == (line_of(path, "def two_lines"), line_of(path, "return z"))


def test_graph_break_in_plain_words_with_a_hint(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def branchy(x):
            y = x * 2
            if y.sum() > 0:
                y = y + 1
            return y

        def inputs(device):
            return (torch.ones(100, device=device),)
        """,
    )
    r = run_ok(path)
    (brk,) = r.compiled.graph_breaks
    assert brk.line == line_of(path, "if y.sum() > 0:")
    assert "data-dependent branch" in brk.reason and "torch.where" in brk.hint
    assert r.compiled.graphs == 2


def test_print_break_keeps_dynamos_explanation(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def chatty(x):
            y = x * 2
            print("value computed")
            return y + 1

        def inputs(device):
            return (torch.ones(100, device=device),)
        """,
    )
    r = run_ok(path)
    (brk,) = r.compiled.graph_breaks
    assert brk.line == line_of(path, "print(")
    assert "print" in brk.explanation


def test_recompiles_name_the_failed_guard(tmp_path):
    path = write_target(tmp_path, STEPPER)  # every call fails dynamo's guard on a global and compiles again
    r = run_ok(path)
    assert r.compiled.recompiles
    assert any("step" in rc.reason for rc in r.compiled.recompiles)
    assert r.compiled.recompiles[0].function == "stepper"


@pytest.mark.quiet
def test_bandwidth_per_kernel_and_mode_against_a_measured_peak(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def add_relu(a, b):
            return (a + b).relu()

        def inputs(device):
            return torch.randn(1_000_000, device=device), torch.randn(1_000_000, device=device)
        """,
    )
    r = run_ok(path)
    assert r.peak_gbps and r.peak_gbps > 0 and "copy" in r.peak_source
    # 12 MB through one memory-bound kernel: its rate is of the order of the measured copy's
    # (a cache may lift it past the peak, a loaded machine drag it down: an order of magnitude)
    (fused,) = r.compiled.kernels
    # Exact, whatever the load: 12 MB through the one kernel (a and b read, the result written);
    # a rate is the row's own bytes over its own time (1 GB = 1e9 B), the mode's its bytes over
    # its kernel time, which its rows add up to (one kernel: the whole of it)
    n = 1_000_000 * 4
    assert (fused.bytes_read, fused.bytes_written) == (2 * n, n)
    assert fused.time_us == pytest.approx(r.compiled.kernel_time_us)
    for mode in (r.eager, r.compiled):
        assert sum(k.time_us for k in mode.kernels) == pytest.approx(mode.kernel_time_us)
        assert mode.achieved_gbps == pytest.approx(mode.bytes_total / (mode.kernel_time_us * 1e3))
        for k in mode.kernels:
            assert k.achieved_gbps == pytest.approx(k.bytes_total / (k.time_us * 1e3))
    if r.speedup.verdict == "busy":  # other work took the cores: a rate measured then says nothing
        r = answered(lambda: run_ok(path), lambda r: (r.speedup.verdict, r.speedup.cpu_waiting))
        (fused,) = r.compiled.kernels
    assert r.peak_gbps / 10 < fused.achieved_gbps < r.peak_gbps * 10
    # eager moves 20 MB in two kernels, compiled 12 MB in one: the same memory, a like rate
    assert r.compiled.achieved_gbps / 10 < r.eager.achieved_gbps < r.compiled.achieved_gbps * 10
    d = report_to_dict(r)
    j = d["compiled"]["kernels"][0]
    assert d["peak_gbps"] and j["achieved_gbps"] == pytest.approx(
        (j["bytes_read"] + j["bytes_written"]) / (j["time_us"] * 1e3), abs=2e-3)


def test_lines_follow_the_file_after_inductor_cache_hits(tmp_path):
    # A second run of an unchanged file is served from inductor's cache, with this file's lines.
    # The same graph in another file, or this file with its lines shifted, would be a hit too
    # without kscope's key (the graph's stack traces): they must miss, and show their own lines.
    body = """
        import torch

        def f(a, b):
            return (a * b).sin()

        def inputs(device):
            return torch.randn(500, device=device), torch.randn(500, device=device)
        """
    first = write_target(tmp_path, body, "first.py")
    other = write_target(tmp_path, "\n\n\n" + body, "other.py")
    hit = "graph(s) from inductor's cache"
    for path, cached in ((first, None), (first, True), (other, False)):
        r = run_ok(path)
        (kernel,) = r.compiled.kernels
        assert kernel.lines == (at(path, "return (a * b).sin()"),)
        if cached is not None:
            assert (hit in r.compiled.traffic_source) == cached, (path.name, r.compiled.traffic_source)
    first.write_text("# a comment that moves everything down\n" + first.read_text())
    r = run_ok(first)
    (kernel,) = r.compiled.kernels
    assert kernel.lines == (at(first, "return (a * b).sin()"),)
    assert hit not in r.compiled.traffic_source
