"""Every sample in samples/ does what its docstring says, run through the engine on the CPU.

Each sample teaches one thing and its docstring says what kscope will show: launch counts eager
and compiled, graphs and breaks, which ops one generated kernel fuses, a library matmul. Every
expected number is derived here from the sample's code and the shapes of its inputs (made by its
own `inputs()`), never copied from kscope's output. A sample without a check here fails; the two
that need a process group are checked on each of two ranks by tests/process/test_distributed.py
(support/rank_claims.py).

Not asserted: compiled bytes (their accounting is pinned by tests/engine/test_truth.py, the article's
case included); eager rows by name (a composite op may be shown as `aten::linear › mm`): counts,
kinds and the names of generated kernels are what the samples claim.
"""

from __future__ import annotations

import importlib.util
import re

import pytest
from support.paths import SAMPLES, at, line_of
from support.rank_claims import RANK_CLAIMS

from kscope.engine.run import run
from kscope.report.compile import CompileOptions
from kscope.report.place import Place
from kscope.report.request import RunRequest

SAMPLE_FILES = sorted(p.name for p in SAMPLES.glob("*.py"))


def sample_inputs(path):
    """The sample's own inputs on the CPU: the shapes every expected number comes from."""
    spec = importlib.util.spec_from_file_location(f"kscope_sample_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.inputs("cpu")


def nbytes(t) -> int:
    return t.numel() * t.element_size()


def generated(mode):
    """The kernels inductor wrote (not library calls)."""
    return [k for k in mode.kernels if k.kind == "kernel"]


def fused_ops(kernel) -> set[str]:
    """The ops inductor named a generated kernel after: cpp_fused_add_relu_0 -> {add, relu}."""
    m = re.fullmatch(r"(?:cpp|triton)_\w*?fused_(\w+)_\d+", kernel.name)
    assert m, f"not a fused kernel's name: {kernel.name}"
    return set(m.group(1).split("_"))


def pointers(kernel) -> tuple[list[str], list[str]]:
    """The generated C++ kernel's array arguments: (read only, written)."""
    m = re.search(r'extern\s+"C"\s+void\s+kernel\s*\(([^)]*)\)', kernel.code or "")
    assert m, f"{kernel.name}: no C++ kernel signature in its code"
    params = [p.strip() for p in m.group(1).split(",")]
    return [p for p in params if p.startswith("const")], [p for p in params if not p.startswith("const")]


# --- one check per sample: what its docstring claims -------------------------------------------------


def check_add_relu(r, path, inputs):
    """eager is 2 kernels and 5 array-sized transfers; compiled, 1 and 3."""
    a, b = inputs
    n = nbytes(a)
    assert nbytes(b) == n and r.largest_input_bytes == n
    # (a + b).relu(): add reads a, b, writes tmp; relu reads tmp, writes the result.
    assert r.eager.launches == 2
    assert (r.eager.bytes_read, r.eager.bytes_written) == (3 * n, 2 * n)
    assert r.transfers(r.eager.bytes_total) == 5
    # Compiled: 1 kernel that reads a and b and writes the result (3 transfers, in its arguments).
    assert r.compiled.launches == 1
    (kernel,) = r.compiled.kernels
    assert kernel.kind == "kernel" and kernel.fused and fused_ops(kernel) == {"add", "relu"}
    reads, writes = pointers(kernel)
    assert (len(reads), len(writes)) == (2, 1), (reads, writes)


def check_chain(r, path, inputs):
    """Six elementwise ops: eager 6 kernels, each reading and writing a full array; compiled, the
    whole chain in 1 kernel that reads x and y once and writes the result once."""
    x, y = inputs
    n = nbytes(x)
    assert nbytes(y) == n
    # mul, add, sin, sigmoid, mul, relu: each writes one array and reads one, `t * y` reads two.
    assert r.eager.launches == 6
    assert (r.eager.bytes_read, r.eager.bytes_written) == (7 * n, 6 * n)
    assert r.compiled.launches == 1
    (kernel,) = r.compiled.kernels
    assert kernel.kind == "kernel" and kernel.fused
    assert fused_ops(kernel) == {"mul", "add", "sin", "sigmoid", "relu"}
    reads, writes = pointers(kernel)
    assert (len(reads), len(writes)) == (2, 1), (reads, writes)  # x and y in, the result out
    # the kernel points at every line of the chain
    chain = {line_of(path, s) for s in ("x * 2 + 1", "torch.sin(t)", "torch.sigmoid(t)", "t * y", "t.relu()")}
    assert set(kernel.lines) == {Place(path.name, line) for line in chain}


def check_graph_break(r, path, inputs):
    """A data-dependent `if` splits the function: compiled shows 2 graphs and 1 graph break,
    pointing at the `if` line."""
    assert r.compiled.graphs == 2
    (brk,) = r.compiled.graph_breaks
    assert brk.line == line_of(path, "if y.sum() > 0")
    assert "data-dependent" in brk.reason.lower(), brk.reason
    # Each graph is fused on its own: one generated kernel per graph, sin * 2 in the first,
    # relu + 1 in the second.
    assert r.compiled.launches == 2
    kernels = generated(r.compiled)
    assert len(kernels) == 2 and all(k.fused for k in kernels)
    (first,) = [k for k in kernels if "sin" in fused_ops(k)]
    (second,) = [k for k in kernels if "relu" in fused_ops(k)]
    assert "mul" in fused_ops(first) and "add" in fused_ops(second)
    assert second.lines == (at(path, "return torch.relu(y) + 1"),)  # the branch that ran


def check_layer_norm(r, path, inputs):
    """eager runs layer_norm (its own kernel) and then add; compiled decomposes layer_norm into
    mean/variance reductions and fuses the add into them."""
    assert r.eager.launches == 2
    assert r.compiled.launches == 1
    (kernel,) = r.compiled.kernels
    assert kernel.kind == "kernel" and kernel.fused
    assert "layer_norm" in kernel.name and "add" in fused_ops(kernel), kernel.name
    assert "aten.var_mean" in kernel.ops, kernel.ops  # the decomposition: mean and variance


def check_matmul_gelu(r, path, inputs):
    """compiled leaves the matmul to the library (an extern kernel) and fuses what follows into
    one epilogue. CPU: addmm (bias inside) + gelu."""
    # eager: the matmul, the bias add, gelu
    assert r.eager.launches == 3
    assert r.compiled.launches == 2
    (extern,) = [k for k in r.compiled.kernels if k.kind == "extern"]
    assert extern.name == "aten::addmm", extern.name
    (epilogue,) = generated(r.compiled)
    assert epilogue.fused and "gelu" in fused_ops(epilogue), epilogue.name


def check_reduction(r, path, inputs):
    """eager squares, averages and square-roots in 3 kernels; compiled fuses the square into the
    mean's reduction loop and the sqrt onto its result: 1 kernel."""
    (x,) = inputs
    rows = x.shape[0]
    assert r.eager.launches == 3
    # x * x writes a full array; the mean and the sqrt one value per row.
    assert r.eager.bytes_written == nbytes(x) + 2 * rows * x.element_size()
    assert r.compiled.launches == 1
    (kernel,) = r.compiled.kernels
    assert kernel.kind == "kernel" and kernel.fused and fused_ops(kernel) == {"mul", "mean", "sqrt"}
    # the squared array never exists in memory: x in, the per-row result out, nothing else
    reads, writes = pointers(kernel)
    assert (len(reads), len(writes)) == (1, 1), (reads, writes)


def check_softmax(r, path, inputs):
    """eager runs max, sub, exp, sum and div as separate kernels; compiled fuses them into one or
    two reduction kernels (the sample's words): on the CPU one C++ kernel, its loops one after
    another (a GPU may split it in two)."""
    assert r.eager.launches == 5
    assert r.compiled.launches == 1
    kernels = r.compiled.kernels
    assert len(kernels) == r.compiled.launches and all(k.kind == "kernel" and k.fused for k in kernels)
    assert set().union(*(fused_ops(k) for k in kernels)) == {"max", "sub", "exp", "sum", "div"}


def check_train_mlp(r, path, inputs):
    """Eager: 3 forward launches (two addmm, gelu) and 6 backward ones (three mm for the gradients,
    the GELU derivative, two bias sums). Compiled: the matmuls stay library calls, and inductor fuses
    the GELU derivative with a bias gradient's sum into one backward kernel."""
    e, c = r.eager, r.compiled
    assert (e.phase("forward").launches, e.phase("backward").launches) == (3, 6)
    backward = [k for k in c.kernels if k.phase == "backward"]
    (mm,) = [k for k in backward if k.kind == "extern"]
    assert mm.name == "aten::mm" and mm.launches == 3
    (fused,) = [k for k in backward if k.kind == "kernel" and "gelu" in fused_ops(k)]
    assert {"gelu", "backward", "sum"} <= fused_ops(fused), fused.name
    assert c.phase("backward").launches == 5


def check_train_step(r, path, inputs):
    """torch.compile breaks the graph at `loss.backward()`; autograd then runs the compiled
    backward graph, and the optimizer's step is compiled on its own into one kernel per parameter
    group, where eager launches a dozen small ops per parameter."""
    e, c = r.eager, r.compiled
    (brk,) = c.graph_breaks
    assert brk.line == line_of(path, "    loss.backward()")
    assert any(k.phase == "backward" and k.kind == "kernel" for k in c.kernels)
    (step,) = [k for k in c.kernels if k.phase == "optimizer"]
    assert step.kind == "kernel" and step.fused
    # traced in torch/optim alone, the fused AdamW kernel is at the line that called opt.step(),
    # as eager's ops are: the two modes' costs meet at one line
    called = Place(path.name, line_of(path, "    opt.step()"))
    assert step.lines == (called,) and {k.lines for k in e.kernels if k.phase == "optimizer"} == {(called,)}
    parameters = 4  # two Linear layers: weight and bias each
    # AdamW one tensor at a time on the CPU (docs/training.md's 36): per parameter the step
    # count's add_, weight decay's mul_, lerp_ and mul_ + addcmul_ for the two moments, then
    # sqrt, div, add_ (eps) and addcdiv_; zero_grad sets the gradients to None: no launch
    optimizer = {k.name: k.launches for k in e.kernels if k.phase == "optimizer"}
    assert optimizer == {
        "aten::add_": 2 * parameters, "aten::mul_": 2 * parameters, "aten::lerp_": parameters,
        "aten::addcmul_": parameters, "aten::sqrt": parameters, "aten::div": parameters, "aten::addcdiv_": parameters,
    }
    assert e.phase("optimizer").launches == 9 * parameters == 36


def check_softmax_wide(r, path, inputs):
    """One softmax over rows of n: one kernel either way, of one of the kinds the docstring names.
    How the kind changes with n is a sweep's claim: tests/engine/test_sweep.py checks it."""
    from kscope.engine.inductor.variants import variant

    assert (r.eager.launches, r.compiled.launches) == (1, 1)
    (kernel,) = r.compiled.kernels
    assert "_softmax" in kernel.name
    # at n = 4096 the 8 rows are long enough to run in parallel (where there are threads to run on)
    import torch

    assert variant(kernel.name, kernel.code) == ("parallel" if torch.get_num_threads() > 1 else "serial")


def check_linear_frozen(r, path, inputs):
    # frozen weights: MKL's packed linear (a library call), then one generated kernel: bias + GELU
    (x,) = inputs
    assert r.compile_options.options == {"freezing": True}
    assert [k.kind for k in r.compiled.kernels] == ["extern", "kernel"]
    assert r.compiled.kernels[0].name == "mkl::_mkl_linear"
    assert {"addmm", "gelu"} <= fused_ops(r.compiled.kernels[1])
    (trip,) = r.compiled.round_trips  # the matmul's output, read back by the GELU kernel
    assert trip.bytes == x.shape[0] * 1024 * x.element_size()


CLAIMS = {
    "add_relu.py": check_add_relu,
    "chain.py": check_chain,
    "graph_break.py": check_graph_break,
    "layer_norm.py": check_layer_norm,
    "linear_frozen.py": check_linear_frozen,
    "matmul_gelu.py": check_matmul_gelu,
    "reduction.py": check_reduction,
    "softmax.py": check_softmax,
    "softmax_wide.py": check_softmax_wide,
    "train_mlp.py": check_train_mlp,
    "train_step.py": check_train_step,
}
SWITCHES = {
    "train_mlp.py": {"backward": True},
    "linear_frozen.py": {"no_grad": True, "compile": CompileOptions(options={"freezing": True})},
}
"""Samples meant to be run with a switch (their docstring says which)."""


def test_every_claim_check_has_its_sample():
    assert SAMPLE_FILES, f"no samples in {SAMPLES}"
    checked = set(CLAIMS) | set(RANK_CLAIMS)
    assert not checked - set(SAMPLE_FILES), f"checks for samples that are gone: {checked - set(SAMPLE_FILES)}"
    assert not set(CLAIMS) & set(RANK_CLAIMS)


@pytest.mark.parametrize("name", [n for n in SAMPLE_FILES if n not in RANK_CLAIMS])  # those: test_distributed.py
def test_sample_does_what_its_docstring_says(name):
    check = CLAIMS.get(name)
    assert check, f"samples/{name} has no check of its docstring's claim: add one to CLAIMS in {__file__}"
    path = SAMPLES / name
    assert path.read_text().startswith('"""'), f"samples/{name}: no docstring saying what it teaches"
    request = RunRequest(str(path), None, "cpu", calls=2, **SWITCHES.get(name, {}))
    report = run(request)
    assert not report.errors, report.errors
    assert report.eager is not None and report.compiled is not None
    check(report, path, sample_inputs(path))
