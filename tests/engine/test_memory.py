"""What a call holds (engine.memory.peak, issue 37), on real torch, against figures derived from
the shapes: float32 arrays of N elements are 4·N bytes each."""

from __future__ import annotations

import pytest
from support.paths import SAMPLES, line_of, write_target
from support.runs import run_ok

from kscope.report.codec import report_from_dict, report_to_dict

N = 1_000_000
ARRAY = 4 * N


@pytest.fixture(scope="module")
def seed():
    return run_ok(SAMPLES / "add_relu.py")


def test_the_seed_holds_two_arrays_at_its_eager_peak_and_one_compiled(seed):
    e, c = seed.eager.memory, seed.compiled.memory
    # eager: a + b's result and the ReLU's output are alive together; the first is freed, the
    # second returned. Compiled: one fused kernel writes the output, nothing else is allocated
    assert (e.peak_bytes, e.held_bytes, e.allocations) == (2 * ARRAY, ARRAY, 2)
    assert (c.peak_bytes, c.held_bytes, c.allocations) == (ARRAY, ARRAY, 1)
    assert e.by_category == {"temporary": ARRAY, "held": ARRAY}
    assert c.by_category == {"held": ARRAY}
    line = line_of(SAMPLES / "add_relu.py", "(a + b).relu()")
    assert [(t.bytes, t.category, t.allocated_by, t.place.line) for t in e.top] == [
        (ARRAY, "temporary", "aten::add", line), (ARRAY, "held", "aten::relu", line)]
    (buf,) = c.top  # the wrapper's buffer, at the line of the fused kernel that fills it
    assert (buf.bytes, buf.category, buf.allocated_by, buf.filled_by) == (ARRAY, "held", "buf0", "cpp_fused_add_relu_0")
    assert buf.place.line == line
    assert e.checked_peak_bytes is None  # the CPU has no allocator peak to check against
    # inductor's own estimate before the graph ran, from its schedule: the measured peak
    assert (c.estimated_peak_bytes, e.estimated_peak_bytes) == ((ARRAY,), ())
    assert report_from_dict(report_to_dict(seed)).eager.memory == e


def test_a_chain_of_six_ops_holds_an_input_and_an_output_at_a_time_eagerly(tmp_path):
    path = write_target(tmp_path, """
        import torch

        def chain(a, b):
            return (a + b).sin().cos().exp().relu().neg()

        def inputs(device):
            return torch.randn(1_000_000, device=device), torch.randn(1_000_000, device=device)
        """)
    r = run_ok(path)
    e, c = r.eager.memory, r.compiled.memory
    # each op's input and output alive together, the input freed as the next op starts: 2 arrays
    # at the peak, 6 allocated in all, 1 held; compiled, one kernel: its output alone
    assert (e.peak_bytes, e.held_bytes, e.allocations) == (2 * ARRAY, ARRAY, 6)
    assert (c.peak_bytes, c.held_bytes, c.allocations) == (ARRAY, ARRAY, 1)
    assert c.estimated_peak_bytes == (ARRAY,)  # inductor's estimate: the same
    # the peak is the first moment it is reached: sin's output allocated, add's not yet freed
    assert [t.allocated_by for t in e.top] == ["aten::add", "aten::sin"]
    assert all(t.place.line == line_of(path, ".neg()") for t in e.top)


def test_a_target_under_torch_func_grad_is_measured_without_the_saved_tensors_hook(tmp_path):
    """torch.func.grad refuses to run under a saved-tensors hook: the memory call runs again
    without one, and what the forward kept is unknown (None), never 0 and never a failed run."""
    path = write_target(tmp_path, """
        import torch

        def gradient(x):
            return torch.func.grad(lambda y: y.sin().sum())(x)

        def inputs(device):
            return (torch.randn(1_000_000, device=device),)
        """)
    r = run_ok(path)
    e = r.eager.memory
    assert e.saved_bytes is None and e.peak_bytes >= ARRAY  # the gradient, cos(x), is returned
    assert r.compiled.memory is not None


def test_a_forward_with_grad_on_keeps_what_backward_would_need(tmp_path):
    """No backward runs, but the input requires grad: exp saves its result, which is also the
    output (one array, 4·N B, kept as long as the output is); under no_grad nothing is kept."""
    path = write_target(tmp_path, """
        import torch

        def expo(x):
            return x.exp()

        def inputs(device):
            return (torch.randn(1_000_000, device=device, requires_grad=True),)
        """)
    r = run_ok(path)
    assert (r.eager.memory.saved_bytes, r.compiled.memory.saved_bytes) == (ARRAY, ARRAY)
    assert not r.compiled.recompiles  # the hook on the memory call compiled nothing again
    quiet = run_ok(path, no_grad=True)
    assert (quiet.eager.memory.saved_bytes, quiet.compiled.memory.saved_bytes) == (0, 0)
