"""What each line costs (issue 25), on real torch (CPU), against figures derived by hand.

fp32 is 4 bytes; vectors of N = 1,000,000 are 4,000,000 B (MB4). The two-line target
`h = a + b` / `return h.relu()`:
- eager: add reads a, b and writes h (12 MB, at the first line); relu reads h and writes the
  output (8 MB, at the second): one launch each.
- compiled: one fused kernel reads a and b (8 MB: the loads are the add's, at the first line) and
  writes the output (4 MB: the store is the relu's, at the second); h never touches memory, so
  nothing is counted for it at either line. The lines' shares add up to the kernel's 12 MB.
Two matmuls on two lines, x (64×128) @ w1 (128×32) and x @ w2 (128×16): each mm reads x and its
weight and writes its result, at its own line, in both modes.
"""

from __future__ import annotations

import json

import pytest
from support.paths import at, write_target
from support.runs import run_ok
from support.targets import TWO_LINES

from kscope.report.codec import report_from_dict, report_to_dict

F32 = 4
N = 1_000_000
MB4 = N * F32


def shares_at(mode, place):
    return [s for k in mode.kernels for s in k.shares if s.place == place]


def cost_at(report, place):
    (cost,) = [c for c in report.line_costs if c.place == place]
    return cost


def assert_shares_add_up(mode):
    """Every row's shares add up to the row, so the lines add up to the mode."""
    for k in mode.kernels:
        assert k.shares, k.name
        assert sum(s.bytes_read for s in k.shares) == k.bytes_read, k.name
        assert sum(s.bytes_written for s in k.shares) == k.bytes_written, k.name
        assert sum(s.time_us for s in k.shares) == pytest.approx(k.time_us, rel=1e-9), k.name


@pytest.fixture(scope="module")
def two_lines(tmp_path_factory):
    path = write_target(tmp_path_factory.mktemp("two"), TWO_LINES)
    return path, run_ok(path, calls=3)


def test_each_eager_line_costs_its_own_op(two_lines):
    path, r = two_lines
    add, relu = at(path, "h = a + b"), at(path, "return h.relu()")
    assert_shares_add_up(r.eager)
    first, second = cost_at(r, add).eager, cost_at(r, relu).eager
    assert (first.bytes_read, first.bytes_written, first.launches) == (2 * MB4, MB4, 1)
    assert (second.bytes_read, second.bytes_written, second.launches) == (MB4, MB4, 1)
    assert first.kernels == ("aten::add",) and second.kernels == ("aten::relu",)
    # one row per line: each line's time is its row's, measured, not shared out
    rows = {k.name: k for k in r.eager.kernels}
    assert first.time_us == pytest.approx(rows["aten::add"].time_us) and not first.estimated
    assert first.time_us + second.time_us == pytest.approx(r.eager.kernel_time_us)


def test_a_fused_kernel_charges_loads_to_the_loading_line_and_the_store_to_the_storing_one(two_lines):
    path, r = two_lines
    add, relu = at(path, "h = a + b"), at(path, "return h.relu()")
    assert_shares_add_up(r.compiled)
    (kernel,) = r.compiled.kernels
    by_line = {s.place: (s.bytes_read, s.bytes_written) for s in kernel.shares}
    assert by_line == {add: (2 * MB4, 0), relu: (0, MB4)}
    assert sum(s.bytes_total for s in kernel.shares) == 3 * MB4 == kernel.bytes_total
    # the time goes by bytes: 8 MB of 12 at the add's line, and it says it is an estimate
    first = cost_at(r, add).compiled
    assert first.time_us == pytest.approx(kernel.time_us * 2 / 3) and first.estimated
    assert cost_at(r, add).compiled.kernels == cost_at(r, relu).compiled.kernels == (kernel.name,)


def test_the_lines_are_in_the_json_costliest_first_and_round_trip(two_lines):
    path, r = two_lines
    d = json.loads(json.dumps(report_to_dict(r)))
    rows = d["line_costs"]
    assert [(x["file"], x["line"]) for x in rows] == [(c.place.file, c.place.line) for c in r.line_costs]
    times = [x["compiled_time_us"] for x in rows]
    assert times == sorted(times, reverse=True)
    first = next(x for x in rows if x["line"] == at(path, "h = a + b").line)
    assert (first["eager_bytes"], first["compiled_bytes"], first["eager_launches"]) == (3 * MB4, 2 * MB4, 1)
    again = report_from_dict(d)
    assert [(c.place, c.eager.bytes_total, c.compiled.bytes_total) for c in again.line_costs] == [
        (c.place, c.eager.bytes_total, c.compiled.bytes_total) for c in r.line_costs]


def test_two_matmuls_on_two_lines_each_cost_their_own_bytes_and_time(tmp_path):
    path = write_target(tmp_path, """
        import torch

        def two_mm(x, w1, w2):
            y = x @ w1
            z = x @ w2
            return y, z

        def inputs(device):
            return (torch.randn(64, 128, device=device), torch.randn(128, 32, device=device),
                    torch.randn(128, 16, device=device))
        """)
    r = run_ok(path, calls=3)
    first, second = at(path, "y = x @ w1"), at(path, "z = x @ w2")
    x, y, z = 64 * 128 * F32, 64 * 32 * F32, 64 * 16 * F32
    w1, w2 = 128 * 32 * F32, 128 * 16 * F32
    for mode in (r.eager, r.compiled):
        assert_shares_add_up(mode)
        one, two = (sum(s.bytes_read for s in shares_at(mode, p)) for p in (first, second))
        assert (one, two) == (x + w1, x + w2)
        assert [sum(s.bytes_written for s in shares_at(mode, p)) for p in (first, second)] == [y, z]
    # the compiled row of the two mm calls: each launch timed at its own line, one launch each
    for p in (first, second):
        compiled = cost_at(r, p).compiled
        assert compiled.launches == 1 and not compiled.estimated


def test_a_line_inside_an_imported_function_is_its_files(tmp_path):
    (tmp_path / "model.py").write_text("import torch\n\ndef block(a, b):\n    h = a + b\n    return h.relu()\n")
    bench = write_target(tmp_path, """
        import torch
        from model import block

        def run(a, b):
            return block(a, b) * 2

        def inputs(device):
            return torch.randn(1_000_000, device=device), torch.randn(1_000_000, device=device)
        """, name="bench.py")
    r = run_ok(bench, calls=2)
    add, relu, mul = at(tmp_path / "model.py", "h = a + b"), at(tmp_path / "model.py", "return h.relu()"), at(bench, "* 2")
    assert add.file == "model.py"
    eager = {p: cost_at(r, p).eager.bytes_total for p in (add, relu, mul)}
    assert eager == {add: 3 * MB4, relu: 2 * MB4, mul: 2 * MB4}
    # compiled: one kernel loads a and b at model.py's add, stores the product at bench.py's line
    compiled = {p: (cost_at(r, p).compiled.bytes_read, cost_at(r, p).compiled.bytes_written) for p in (add, relu, mul)}
    assert compiled == {add: (2 * MB4, 0), relu: (0, 0), mul: (0, MB4)}


def test_a_backward_line_costs_its_gradient_kernels_too(tmp_path):
    path = write_target(tmp_path, TWO_LINES)
    r = run_ok(path, calls=2, backward=True)
    add, relu = at(path, "h = a + b"), at(path, "return h.relu()")
    for mode in (r.eager, r.compiled):
        assert_shares_add_up(mode)
    # eager backward: threshold_backward reads the output's gradient and relu's output, writes
    # h's gradient, at relu's line (add's backward launches nothing: it hands the gradient on)
    backward = [s for k in r.eager.kernels if k.phase == "backward" for s in k.shares if s.place == relu]
    assert sum(s.bytes_read for s in backward) == 2 * MB4 and sum(s.bytes_written for s in backward) == MB4
    assert cost_at(r, relu).eager.bytes_total == 2 * MB4 + 3 * MB4
    assert cost_at(r, add).eager.bytes_total == 3 * MB4
    # compiled: the backward kernel is the relu line's; the lines' totals are the mode's
    compiled_backward = [k for k in r.compiled.kernels if k.phase == "backward" and k.fused]
    assert compiled_backward and all(s.place == relu for k in compiled_backward for s in k.shares)
    assert sum(c.compiled.bytes_total for c in r.line_costs if c.compiled) == r.compiled.bytes_total
    # Each line's and each mode's figures from the shapes, not only the sum the code adds up. The add
    # hands one gradient to both a and b: AccumulateGrad keeps it as one's and copies it for the
    # other (reads and writes 4 MB, at no line of the target's: the line None).
    # Compiled: the forward kernel loads a and b (the add's line), stores the output and the ReLU's
    # mask for backward (1 byte an element: MB1) at the ReLU's line; the backward kernel reads the
    # output's gradient and the mask and writes h's gradient, at the ReLU's line.
    MB1, copy = N, (MB4, MB4)
    lines = {c.place: (c.compiled.bytes_read, c.compiled.bytes_written) for c in r.line_costs if c.compiled}
    assert lines == {add: (2 * MB4, 0), relu: (MB1 + MB4, MB4 + MB1 + MB4), None: copy}
    assert (r.compiled.bytes_read, r.compiled.bytes_written) == (2 * MB4 + (MB4 + MB1) + MB4, (MB4 + MB1) + MB4 + MB4)
    # Eager: add (a, b -> h), relu (h -> out), threshold_backward (the gradient, out -> h's), the copy
    eager = {c.place: (c.eager.bytes_read, c.eager.bytes_written) for c in r.line_costs if c.eager}
    assert eager == {add: (2 * MB4, MB4), relu: (MB4 + 2 * MB4, MB4 + MB4), None: copy}
    assert (r.eager.bytes_read, r.eager.bytes_written) == (2 * MB4 + MB4 + 2 * MB4 + MB4, MB4 + MB4 + MB4 + MB4)


def test_a_torch_helper_called_from_two_lines_charges_each_line_its_own_loads(tmp_path):
    # F.relu's op is issued inside torch/nn/functional.py for both lines: each node keeps its own
    # stack trace, so b's and c's loads are the second line's, a's the first's
    path = write_target(tmp_path, """
        import torch
        import torch.nn.functional as F

        def helpers(a, b, c):
            x = F.relu(a)
            y = F.relu(b) * c
            return x + y

        def inputs(device):
            return tuple(torch.randn(1_000_000, device=device) for _ in range(3))
        """)
    r = run_ok(path, calls=2)
    first, second, last = at(path, "x = F.relu(a)"), at(path, "y = F.relu(b) * c"), at(path, "return x + y")
    assert_shares_add_up(r.compiled)
    (kernel,) = r.compiled.kernels
    by_line = {s.place: (s.bytes_read, s.bytes_written) for s in kernel.shares}
    assert by_line == {first: (MB4, 0), second: (2 * MB4, 0), last: (0, MB4)}


def test_an_in_place_update_stores_at_the_line_that_computes_the_new_value(tmp_path):
    path = write_target(tmp_path, """
        import torch

        def update(x, y):
            x.mul_(2)
            x.add_(y)
            return x

        def inputs(device):
            return torch.randn(1_000_000, device=device), torch.randn(1_000_000, device=device)
        """)
    r = run_ok(path, calls=2)
    mul, add = at(path, "x.mul_(2)"), at(path, "x.add_(y)")
    # eager: mul_ reads and writes x; add_ reads x and y and writes x
    assert cost_at(r, mul).eager.bytes_total == 2 * MB4 and cost_at(r, add).eager.bytes_total == 3 * MB4
    # compiled: one kernel loads x (at mul_) and y (at add_) and stores x once, for add_'s value
    for mode in (r.eager, r.compiled):
        assert_shares_add_up(mode)
    assert sum(c.compiled.bytes_total for c in r.line_costs if c.compiled) == r.compiled.bytes_total
    # the totals from the shapes: eager mul_ (x -> x) and add_ (x, y -> x); compiled x and y loaded, x stored
    assert (r.eager.bytes_read, r.eager.bytes_written) == (MB4 + 2 * MB4, MB4 + MB4)
    assert (r.compiled.bytes_read, r.compiled.bytes_written) == (2 * MB4, MB4)
    fused = [k for k in r.compiled.kernels if k.fused]
    assert len(fused) == 1
    by_line = {s.place: (s.bytes_read, s.bytes_written) for s in fused[0].shares}
    assert by_line == {mul: (MB4, 0), add: (MB4, MB4)}


def test_with_dynamic_shapes_each_access_weighs_the_same_and_the_kernel_still_adds_up(tmp_path):
    from kscope.report.compile import CompileOptions

    path = write_target(tmp_path, TWO_LINES)
    r = run_ok(path, calls=2, compile=CompileOptions(dynamic=True))
    add, relu = at(path, "h = a + b"), at(path, "return h.relu()")
    assert_shares_add_up(r.compiled)
    (kernel,) = [k for k in r.compiled.kernels if k.fused]
    by_line = {s.place: (s.bytes_read, s.bytes_written) for s in kernel.shares}
    assert by_line == {add: (2 * MB4, 0), relu: (0, MB4)}  # the loads are all add's, the store relu's
