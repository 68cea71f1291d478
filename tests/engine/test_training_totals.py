"""A training step as written (forward, loss, `loss.backward()`, an optimizer's step, zero_grad):
its total traffic is known in both modes, on real torch (CPU). Eager, against bytes derived by
hand from the shapes; compiled, against inductor's own count for each graph it compiled, plus the
ops that run outside the graphs, derived by hand, and its reads and writes apart against the shapes
(inductor's count is of both together: reads and writes swapped would have matched it).

The rows that were unknown (issue 22, item 4): with kscope's dispatch mode on, ATen takes every
tensor for a subclass, so autograd sums two gradients of one tensor with `add` where the timed
call runs `add_` (and SDPA adds its mask with `add`, not `add_`); and AOTAutograd's zeros for the
gradient of an output no loss uses run outside any compiled graph, an op eager never runs.

fp32 is 4 bytes. Each eager op reads each distinct input storage once and writes its outputs.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
from support.paths import at, write_target
from support.runs import run_ok

from kscope.engine.dispatch.accounting import AccountedFigures, align_twins
from kscope.engine.eager.half import _unknown_notes
from kscope.engine.inductor.capture import capture_inductor, configure_inductor
from kscope.report.model import Kernel
from kscope.trace.kernels import Launch

F32 = 4
B, D, H = 8, 16, 32  # batch, input features, hidden (= output) features

STEP = f"""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear({D}, {H}), nn.ReLU(), nn.Linear({H}, {H}))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)


    def train_step(x, y):
        h = model[1](model[0](x))
        out = model[2](h) + h  # h feeds two ops: autograd sums its two gradients
        loss = F.mse_loss(out, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss, out  # out requires grad but no loss uses it: compiled backward makes it zeros


    def inputs(device):
        model.to(device)
        return torch.randn({B}, {D}, device=device), torch.randn({B}, {H}, device=device)
    """


@pytest.fixture(scope="module")
def step(tmp_path_factory):
    """Inductor's own count of each graph of the step, and the step's one run, whose eager half and
    compiled half the next two tests check."""
    path = write_target(tmp_path_factory.mktemp("step"), STEP)
    counts = _inductors_counts(path)
    return counts, run_ok(path)


def rows(mode, phase):
    return {k.name: (k.launches, k.bytes_read, k.bytes_written) for k in mode.kernels if k.phase == phase}


def test_a_training_steps_eager_total_is_known_and_derived_from_the_shapes(step):
    _, r = step
    x, y = B * D * F32, B * H * F32
    act = B * H * F32  # every activation and its gradient: (B, H)
    w1, b1, w2, b2 = H * D * F32, H * F32, H * H * F32, H * F32
    scalar = F32
    e = r.eager

    assert rows(e, "forward") == {
        # each addmm reads bias, input, weight; writes (B, H)
        "aten::linear › addmm": (2, (b1 + x + w1) + (b2 + act + w2), 2 * act),
        "aten::relu": (1, act, act),
        "aten::add": (1, 2 * act, act),  # model[2](h) + h
        "aten::mse_loss": (1, act + y, scalar),
        "aten::ones_like": (1, scalar, scalar),  # backward's seed: its input is the loss
    }
    assert rows(e, "backward") == {
        "MseLossBackward0 › mse_loss_backward": (1, scalar + act + y, act),
        # layer 2: grad of h (reads g, W2; writes (B, H)) and of W2 (reads g, h; writes W2);
        # layer 1: grad of W1 only (x needs none: reads g1, x; writes W1)
        "AddmmBackward0 › mm": (3, (act + w2) + (act + act) + (act + x), act + w2 + w1),
        "AddmmBackward0 › sum": (2, 2 * act, b2 + b1),  # the biases' gradients
        # autograd's engine sums h's two gradients in place: reads both, writes the first.
        # Unknown before: kscope's accounted call ran it as `add`, under another row name
        "AddmmBackward0 › add_": (1, 2 * act, act),
        "ReluBackward0 › threshold_backward": (1, 2 * act, act),  # the gradient and relu's output
    }
    params = w1 + b1 + w2 + b2
    # SGD on the CPU, one parameter at a time: p.add_(grad, alpha=-lr) reads p and its gradient,
    # writes p; zero_grad sets the gradients to None (no kernel)
    assert rows(e, "optimizer") == {"aten::add_": (4, 2 * params, params)}

    all_rows = [v for phase in ("forward", "backward", "optimizer") for v in rows(e, phase).values()]
    assert (e.bytes_read, e.bytes_written) == (sum(v[1] for v in all_rows), sum(v[2] for v in all_rows))
    # The step's total from the shapes alone, phase by phase (each term a row above, in order):
    forward = ((b1 + x + w1) + (b2 + act + w2) + act + 2 * act + (act + y) + scalar, 2 * act + act + act + scalar + scalar)
    backward = ((scalar + act + y) + (act + w2) + 2 * act + (act + x) + 2 * act + 2 * act + 2 * act,
                act + (act + w2 + w1) + (b2 + b1) + act + act)
    optimizer = (2 * params, params)
    assert (e.bytes_read, e.bytes_written) == tuple(f + b + o for f, b, o in zip(forward, backward, optimizer))
    assert e.bytes_read is not None and e.bytes_written is not None
    assert not [n for n in r.notes if n.startswith("eager:")], r.notes


def _inductors_counts(path) -> list[int]:
    """inductor's own count (bytes accessed) of each graph torch.compile makes of the step, on a
    fresh copy of the target, with inductor's caches off so that every graph is compiled and counted."""
    spec = importlib.util.spec_from_file_location("training_totals_target", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    args = module.inputs("cpu")
    configure_inductor()
    torch._dynamo.reset()
    with torch._inductor.config.patch(fx_graph_cache=False), torch._functorch.config.patch(
        enable_autograd_cache=False
    ), capture_inductor() as graphs:
        torch.compile(module.train_step)(*args)
    torch._dynamo.reset()
    return [g.inductor_total for g in graphs if g.inductor_total]


def test_a_training_steps_compiled_total_is_inductors_count_per_graph_and_the_ops_outside(step):
    counts, r = step
    assert len(counts) == 3, counts  # forward (to the break at backward()), backward, the SGD step
    c = r.compiled
    assert c.bytes_read is not None and c.bytes_written is not None
    in_graphs = [k for k in c.kernels if k.kind in ("kernel", "extern")]
    outside = {k.name: (k.launches, k.bytes_read, k.bytes_written) for k in c.kernels if k.kind == "op"}
    assert sum(k.bytes_read + k.bytes_written for k in in_graphs) == sum(counts)

    out = B * H * F32
    assert outside == {
        "aten::ones_like": (1, F32, F32),  # the seed of backward, as in eager
        # AOTAutograd's gradient for `out`, which no loss uses: written, nothing read.
        # Unknown before: no graph's kernel and an op eager never runs
        "CompiledFunctionBackward › zeros": (1, 0, out),
    }
    assert c.bytes_read + c.bytes_written == sum(counts) + sum(v[1] + v[2] for v in outside.values())

    # Inductor counts each graph's reads and writes together; what it reads and what it writes,
    # derived from the shapes and the code inductor generated for this step (torch 2.13, CPU):
    x, y, act, scalar = B * D * F32, B * H * F32, B * H * F32, F32
    w1, b1, w2, b2 = H * D * F32, H * F32, H * H * F32, H * F32
    params = w1 + b1 + w2 + b2
    forward = (
        # the two addmm (bias, input, weight -> (B, H)); the ReLU in place on the first's result;
        (b1 + x + w1) + (b2 + act + w2) + act,
        2 * act + act,
    ), (
        # one kernel: loads the second result, h and y (adding h in place: out), stores out, the
        # loss's gradient for backward ((out - y) / 128) and the squares' sum, then loads the sum
        # and stores the loss: 3 (B, H) + 1 scalar read, 2 (B, H) + 2 scalars written
        3 * act + scalar,
        2 * act + 2 * scalar,
    )
    backward = (
        # out's gradient: the loss's (the seed, a scalar) and the zeros for out's own, plus the
        # saved (out - y) / 128 -> (B, H); the weights' gradients (mm: g and h -> W2, g1 and x -> W1);
        # the biases' (sum: g, g1 -> b2, b1); h's (addmm: g once as its bias and its input, W2
        # -> (B, H)); through the ReLU (threshold_backward: h's gradient and h -> g1)
        (scalar + act + act) + ((act + act) + (act + x)) + 2 * act + (act + w2) + 2 * act,
        act + (w2 + w1) + (b2 + b1) + act + act,
    )
    optimizer = (2 * params, params)  # SGD in one kernel: each parameter and its gradient -> the parameter
    in_graph_read = sum(p[0] for p in (*forward, backward, optimizer))
    in_graph_written = sum(p[1] for p in (*forward, backward, optimizer))
    assert in_graph_read + in_graph_written == sum(counts)  # the split adds up to inductor's own count
    assert (sum(k.bytes_read for k in in_graphs), sum(k.bytes_written for k in in_graphs)) == (in_graph_read, in_graph_written)
    assert (c.bytes_read, c.bytes_written) == (in_graph_read + F32, in_graph_written + F32 + out)  # and the ops outside
    assert not [n for n in r.notes if n.startswith("compiled:")], r.notes

    # The SGD step's graph is traced from torch/optim, no line of the target's in its stack traces:
    # it is placed at the line that called opt.step() when dynamo compiled it, as eager's ops are
    step_line = at(Path(r.file), "opt.step()")
    assert {k.lines for k in r.eager.kernels if k.phase == "optimizer"} == {(step_line,)}
    (sgd,) = [k for k in c.kernels if k.phase == "optimizer"]
    assert sgd.lines == (step_line,) and [s.place for s in sgd.shares] == [step_line]


SDPA = """
    import torch
    import torch.nn.functional as F

    def attend(q, k, v, mask):
        # dropout: the math path, which adds the mask to the scores in place
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.5)

    def inputs(device):
        q, k, v = (torch.randn(2, 2, 16, 8, device=device) for _ in range(3))
        return q, k, v, torch.randn(16, 16, device=device)
    """


def test_a_training_step_holds_every_gradient_at_its_peak_and_frees_them_by_its_end(step):
    """Memory (issue 37): at the step's peak, in both modes, every parameter's gradient is alive
    (backward wrote them all, opt.step reads them, zero_grad frees them after): W1, b1, W2, b2."""
    _, r = step
    params = (H * D + H + H * H + H) * F32
    for mode in (r.eager, r.compiled):
        m = mode.memory
        assert m.by_category["gradient"] == params, m.by_category
        assert sorted(t.bytes for t in m.top if t.category == "gradient") == sorted(
            [H * D * F32, H * F32, H * H * F32, H * F32])
        assert m.peak_bytes >= params + B * H * F32  # and the output it returns: (B, H)
        # what the step returns: out (B, H) and the loss (a scalar), its gradients freed by zero_grad
        assert m.held_bytes >= B * H * F32
    # eager keeps the forward's activations for backward until backward ends (relu's output, the
    # sum's, mse's): compiled keeps what its forward graph saves; both hold less than they allocate
    assert r.eager.memory.peak_bytes > r.compiled.memory.peak_bytes


def test_an_in_place_op_only_run_where_no_dispatch_mode_is_on_is_a_launch_with_its_bytes(tmp_path):
    """Nothing else in the target runs `add_`: the mode never sees it, yet the timed call runs it."""
    path = write_target(tmp_path, SDPA)
    r = run_ok(path, no_grad=True)
    scores, mask = 2 * 2 * 16 * 16 * F32, 16 * 16 * F32
    (add,) = [k for k in r.eager.kernels if k.name.endswith("add_")]
    assert (add.name, add.launches) == ("aten::scaled_dot_product_attention › add_", 1)
    assert (add.bytes_read, add.bytes_written) == (scores + mask, scores)
    assert r.eager.bytes_read is not None and not [n for n in r.notes if n.startswith("eager:")], r.notes


def _launch(name, composite=None, phase="backward"):
    return Launch(name, 1.0, "op", owner_name=name, composite=composite, phase=phase)


def test_an_accounted_launch_takes_its_in_place_twins_name_only_where_the_timed_call_ran_the_twin():
    accounted = [_launch("aten::mm", "MmBackward0"), _launch("aten::add", "MulBackward0"), _launch("aten::add", "X")]
    timed = [_launch("aten::mm", "MmBackward0"), _launch("aten::add_", "MulBackward0"), _launch("aten::add", "X")]
    assert align_twins(accounted, timed) == 1
    assert [(x.name, x.owner_name) for x in accounted] == [
        ("aten::mm", "aten::mm"), ("aten::add_", "aten::add_"), ("aten::add", "aten::add")
    ]
    # another op's in-place form, or the twin in another phase, is not a twin
    other = [_launch("aten::sub"), _launch("aten::add", phase="forward")]
    assert align_twins(other, [_launch("aten::add_"), _launch("aten::add_")]) == 0
    assert [x.name for x in other] == ["aten::sub", "aten::add"]


def test_every_unknown_eager_row_has_a_note_saying_why():
    known = Kernel("aten::relu", 1, 1.0, 8, 8)
    unknown = Kernel("Foo › add_", 1, 1.0, None, None, phase="backward")
    assert _unknown_notes([known], {("forward", "aten::relu"): AccountedFigures(8, 8, (), None)}) == []
    (note,) = _unknown_notes([known, unknown], {("backward", "Foo › add"): AccountedFigures(16, 8, (), None)})
    assert "Foo › add_" in note and "Foo › add (24 B)" in note and "not counted" in note
