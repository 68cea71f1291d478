"""Training steps (--backward), on real torch (CPU), against bytes derived by hand from the shapes.

fp32 is 4 bytes, a bool mask 1. kscope's loss runs no kernel: backward starts from a gradient of
ones for each output. Eager backward ops are counted by the forward's rules (each op reads each
distinct input storage once and writes its outputs); compiled, by inductor's count per graph.
"""

from __future__ import annotations

import json
import subprocess
import sys

from support.paths import at, line_of, write_target

from kscope.engine.run import run
from kscope.report.codec import report_to_dict
from kscope.report.place import Place
from kscope.report.request import RunRequest

F32 = 4


def run_backward(tmp_path, source, **switches):
    path = write_target(tmp_path, source)
    report = run(RunRequest(str(path), None, "cpu", calls=2, **{"backward": True, **switches}))
    assert not report.errors, report.errors
    for mode in (report.eager, report.compiled):
        # every launch the profiler saw (the mode's count) falls in exactly one phase
        assert mode.launches == sum(p.launches for p in mode.phases)
    return report, path


def rows(mode, phase):
    return {k.name: (k.launches, k.bytes_read, k.bytes_written) for k in mode.kernels if k.phase == phase}


ADD_RELU = """
    import torch

    def add_relu(a, b):
        return (a + b).relu()

    def inputs(device):
        return torch.randn(1000, device=device, requires_grad=True), torch.randn(1000, device=device, requires_grad=True)
    """


def test_add_relu_forward_and_backward(tmp_path):
    r, path = run_backward(tmp_path, ADD_RELU)
    n = 1000 * F32
    line = line_of(path, "(a + b).relu()")
    assert r.backward.grads_of == ("a", "b")
    assert "gradient of ones" in r.backward.loss
    # eager forward: add reads a, b, writes t; relu reads t, writes out
    assert rows(r.eager, "forward") == {"aten::add": (1, 2 * n, n), "aten::relu": (1, n, n)}
    # eager backward: relu's backward reads the gradient (ones) and the saved result, writes the
    # input gradient; add passes that one tensor to both a and b, so autograd copies it for one of
    # them (the copy reads n and writes n; copy_ does not read the tensor it overwrites)
    assert rows(r.eager, "backward") == {
        "ReluBackward0 › threshold_backward": (1, 2 * n, n),
        "AccumulateGrad › copy_": (1, n, n),
    }
    relu_backward = next(k for k in r.eager.kernels if k.name.startswith("ReluBackward0"))
    assert relu_backward.lines == (Place(path.name, line),), "a backward op points at the forward line it differentiates"
    (copy,) = [k for k in r.eager.kernels if k.name.startswith("AccumulateGrad")]
    assert copy.lines == (), "no forward op made it: no line, not a guess"

    # compiled forward: one kernel reads a, b, writes the result and the mask relu's backward
    # needs (1 byte per element), which nothing in the forward reads: written only for backward
    (forward,) = [k for k in r.compiled.kernels if k.phase == "forward"]
    assert (forward.bytes_read, forward.bytes_written, forward.bytes_saved) == (2 * n, n + 1000, 1000)
    assert forward.fused and forward.lines == (Place(path.name, line),)
    assert r.compiled.bytes_saved == 1000
    # compiled backward: one kernel reads the mask and the gradient, writes the input gradient;
    # autograd's copy for the second input runs outside the graph, as in eager
    backward = rows(r.compiled, "backward")
    generated = [k for k in r.compiled.kernels if k.phase == "backward" and k.fused]
    assert len(generated) == 1 and generated[0].lines == (Place(path.name, line),)
    assert backward[generated[0].name] == (1, n + 1000, n)
    assert backward["AccumulateGrad › copy_"] == (1, n, n)
    assert (r.compiled.phase("forward").launches, r.compiled.phase("backward").launches) == (1, 2)

    d = report_to_dict(r)
    assert d["backward"]["grads_of"] == ["a", "b"] and d["no_grad"] is False
    assert d["compiled"]["phases"]["backward"] == {
        "launches": 2, "bytes_read": 2 * n + 1000, "bytes_written": 2 * n,
        "kernel_time_us": d["compiled"]["phases"]["backward"]["kernel_time_us"],
    }
    assert {k["phase"] for k in d["eager"]["kernels"]} == {"forward", "backward"}


def test_a_forward_under_grad_mode_says_what_it_writes_for_backward_and_no_grad_shows_inference(tmp_path):
    path = write_target(tmp_path, ADD_RELU)
    n = 1000 * F32
    training = run(RunRequest(str(path), None, "cpu", calls=2))
    (kernel,) = training.compiled.kernels
    assert (kernel.bytes_written, kernel.bytes_saved) == (n + 1000, 1000)
    assert any("1,000 B only for backward" in note for note in training.notes)
    inference = run(RunRequest(str(path), None, "cpu", calls=2, no_grad=True))
    (kernel,) = inference.compiled.kernels
    assert (kernel.bytes_read, kernel.bytes_written, kernel.bytes_saved) == (2 * n, n, 0)
    assert inference.no_grad and not any("for backward" in note for note in inference.notes)


def test_linear_layer_input_weight_and_bias_gradients(tmp_path):
    r, path = run_backward(
        tmp_path,
        """
        import torch
        import torch.nn.functional as F

        def linear(x, w, b):
            return F.linear(x, w, b)

        def inputs(device):
            x = torch.randn(64, 96, device=device, requires_grad=True)
            w = torch.randn(32, 96, device=device, requires_grad=True)
            b = torch.randn(32, device=device, requires_grad=True)
            return x, w, b
        """,
    )
    x, w, b, out = 64 * 96 * F32, 32 * 96 * F32, 32 * F32, 64 * 32 * F32
    assert r.backward.grads_of == ("x", "w", "b")
    assert rows(r.eager, "forward") == {"aten::linear › addmm": (1, x + w + b, out)}
    # grad_x = grad @ w reads grad and w; grad_w = grad^T @ x reads grad and x; grad_b sums grad
    assert rows(r.eager, "backward") == {
        "AddmmBackward0 › mm": (2, (out + w) + (out + x), x + w),
        "AddmmBackward0 › sum": (1, out, b),
    }
    # compiled: the same library calls, the bias sum a generated kernel
    assert rows(r.compiled, "forward") == {"aten::addmm": (1, x + w + b, out)}
    backward = rows(r.compiled, "backward")
    assert backward.pop("aten::mm") == (2, (out + w) + (out + x), x + w)
    ((name, figures),) = backward.items()
    assert "sum" in name and figures == (1, out, b)


def test_layer_norm_backward(tmp_path):
    r, path = run_backward(
        tmp_path,
        """
        import torch
        import torch.nn.functional as F

        def norm(x, w, b):
            return F.layer_norm(x, (256,), w, b)

        def inputs(device):
            x = torch.randn(128, 256, device=device, requires_grad=True)
            return x, torch.randn(256, device=device, requires_grad=True), torch.randn(256, device=device, requires_grad=True)
        """,
    )
    rows_, d = 128, 256
    x, vec, stat = rows_ * d * F32, d * F32, rows_ * F32
    # forward: reads x, w, b; writes the output and the per-row mean and 1/std it saves
    assert rows(r.eager, "forward") == {"aten::layer_norm › native_layer_norm": (1, x + 2 * vec, x + 2 * stat)}
    # backward: reads the gradient, x, mean, rstd, w and b (passed, by the eager rule read once);
    # writes the gradients of x, w and b
    assert rows(r.eager, "backward") == {
        "NativeLayerNormBackward0 › native_layer_norm_backward": (1, 2 * x + 2 * stat + 2 * vec, x + 2 * vec)
    }
    # compiled: every byte is inductor's count for its graph (pinned in test_inductor_contract);
    # here, that its forward reads x, w and b once and writes the output and the two per-row
    # statistics it saves, and its backward writes the three gradients and nothing else
    forward, backward = r.compiled.phase("forward"), r.compiled.phase("backward")
    assert (forward.bytes_read, forward.bytes_written) == (x + 2 * vec, x + 2 * stat)
    assert backward.bytes_written == x + 2 * vec


def test_two_layer_mlp_with_gelu_sample(tmp_path):
    from support.paths import SAMPLES

    report = run(RunRequest(str(SAMPLES / "train_mlp.py"), None, "cpu", calls=2, backward=True))
    assert not report.errors, report.errors
    n, d, h = 512, 256, 1024
    x, w1, b1, h1 = n * d * F32, h * d * F32, h * F32, n * h * F32
    w2, b2, out = d * h * F32, d * F32, n * d * F32
    assert report.backward.grads_of == ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")
    e, c = report.eager, report.compiled
    assert rows(e, "forward") == {
        "aten::linear › addmm": (2, (x + w1 + b1) + (h1 + w2 + b2), h1 + out),
        "aten::gelu": (1, h1, h1),
    }
    # x does not require grad: no grad_x matmul. fc2: grad_g = grad @ w2, grad_w2 = grad^T @ g;
    # fc1: grad_w1 = grad_h1^T @ x. Bias gradients sum the output gradients.
    mm = (3, (out + w2) + (out + h1) + (h1 + x), h1 + w2 + w1)
    assert rows(e, "backward") == {
        "AddmmBackward0 › mm": mm,
        "AddmmBackward0 › sum": (2, out + h1, b2 + b1),
        "GeluBackward0 › gelu_backward": (1, 2 * h1, h1),
    }
    assert rows(c, "forward")["aten::addmm"] == (2, (x + w1 + b1) + (h1 + w2 + b2), h1 + out)
    backward = rows(c, "backward")
    assert backward.pop("aten::mm") == mm
    # one kernel: GELU's derivative (reads grad_g and h1, writes grad_h1) and fc2's bias sum
    # (reads the output gradient, writes b2's); another: fc1's bias sum
    fused = {name: v for name, v in backward.items() if "gelu" in name}
    sums = {name: v for name, v in backward.items() if "gelu" not in name}
    assert list(fused.values()) == [(1, 2 * h1 + out, h1 + b2)]
    assert list(sums.values()) == [(1, h1, b1)]
    assert c.bytes_saved == 0, "each saved activation is read by the forward's next op anyway"
    # What the forward kept for backward (issue 37), by autograd's own saved tensors: eager, GELU
    # saves its input (fc1's result, h1) and fc2's addmm its input (GELU's output, h1 again); x is
    # an input, the weights parameters: not the call's. Compiled, AOTAutograd saves the same two
    # (inductor recomputes nothing here). Both allocated in the call, freed by its backward.
    assert (e.memory.saved_bytes, c.memory.saved_bytes) == (2 * h1, 2 * h1)
    # alive together at the peak: torch's memory profile calls them activations eagerly
    assert [t.bytes for t in e.memory.top if t.category == "activation"][:2] == [h1, h1], e.memory.top
    # Inductor's estimate per graph, against the step's measured peak: the forward's is what it
    # saves and its output; the backward's, its two saved inputs, a third h1-sized buffer and fc2's
    # weight and bias gradients alive. The step's measured peak (its tensors: the two saved, the mm's
    # grad buffer, fc2's weight gradient, the output) has the forward's output, which the step still
    # holds and which is no input of the backward graph, and not yet fc2's 1 kB bias gradient.
    assert c.memory.estimated_peak_bytes == (2 * h1 + out, 3 * h1 + w2 + b2)
    assert c.memory.peak_bytes == 3 * h1 + w2 + b2 + out - b2
    assert sorted(t.bytes for t in c.memory.top) == sorted([h1, h1, h1, w2, out])


def test_grads_are_cleared_between_calls_and_inputs_made_to_require_grad(tmp_path):
    r, path = run_backward(
        tmp_path,
        """
        import torch

        def scale(x):
            return x * 3

        def inputs(device):
            return (torch.randn(500, device=device),)
        """,
    )
    n = 500 * F32
    assert r.backward.grads_of == ("x",)
    assert any("made its floating inputs x require it" in note for note in r.notes)
    # MulBackward0 reads the gradient and writes x's: no add into an old .grad (cleared each call)
    assert rows(r.eager, "backward") == {"MulBackward0 › mul": (1, n, n)}


def test_a_target_that_runs_backward_itself_is_told_to_run_without_the_switch(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def step(x, w):
            loss = (x @ w).sum()
            loss.backward()
            return loss

        def inputs(device):
            return torch.randn(8, 4, device=device), torch.randn(4, 2, device=device, requires_grad=True)
        """,
    )
    r = run(RunRequest(str(path), None, "cpu", calls=2, backward=True))
    (error,) = r.errors
    assert error.stage == "backward" and "already calls backward() itself" in error.message


FORKED = """
import json, os, torch
from kscope.engine.measure.profiling import profile_calls

@torch.jit.script
def doubled(x):
    y = x * 2
    for _ in range(9):
        y = y * 2
    return y

@torch.jit.script
def forked(x):
    return torch.jit.wait(torch.jit.fork(doubled, x)) + 1

x = torch.randn(10_000)
for _ in range(2):
    forked(x)
summary = profile_calls(lambda: forked(x), torch.device("cpu"), 3)
per_call = {}
for launch in summary.launches:
    per_call.setdefault(launch.segment, []).append(launch.name)
print(json.dumps(per_call), flush=True)
os._exit(0)  # not the interpreter's exit: see the test
"""


def test_work_on_another_thread_belongs_to_the_profiled_call_it_started_in(tmp_path):
    # Autograd's engine runs a CUDA backward on threads of its own, outside the call's marker on
    # the calling thread. TorchScript's fork does the same on the CPU (its inter-op pool carries
    # the profiler along): the ops run on other threads, inside each call's span. In a process of
    # its own, which leaves by os._exit: after a TorchScript fork, torch 2.13 itself sometimes
    # crashes in the interpreter's last garbage collection (a segfault or "free(): invalid next
    # size"), with or without the profiler: 4 of 40 plain runs beside two busy loops, 0 of 40
    # leaving by os._exit. kscope's workers leave by os._exit too (worker.forkserver).
    script = tmp_path / "forked.py"  # TorchScript reads its functions' source from a file
    script.write_text(FORKED)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    per_call = json.loads(out.stdout.strip().splitlines()[-1])
    assert sorted(per_call) == ["0", "1", "2"], per_call
    assert all(names.count("aten::mul") == 10 and names.count("aten::add") == 1 for names in per_call.values())


def test_a_backward_op_points_at_the_op_that_made_its_node_not_a_comparison_before_it(tmp_path):
    # the profiler gives `x > 0` (no autograd node) the same sequence number as the `x * w` after it
    r, path = run_backward(
        tmp_path,
        """
        import torch

        def masked(x, w):
            mask = x > 0
            y = x * w
            return torch.where(mask, y, 0.0)

        def inputs(device):
            return torch.randn(100, device=device), torch.randn(100, device=device, requires_grad=True)
        """,
    )
    lines = {k.name: k.lines for k in r.eager.kernels if k.phase == "backward"}
    assert lines["MulBackward0 › mul"] == (at(path, "y = x * w"),)
    assert lines["WhereBackward0 › where"] == (at(path, "torch.where"),)
    # eager does not tell the tensors it keeps for backward apart: unknown, not 0
    assert r.eager.bytes_saved is None and report_to_dict(r)["eager"]["bytes_saved_for_backward"] is None
