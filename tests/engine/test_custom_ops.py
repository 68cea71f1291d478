"""Custom ops (`torch.library.custom_op`) on real torch (CPU), against numbers derived from shapes.

A custom op is one op to the dispatcher, its kernel below it: the ATen ops its Python body runs
are its launches, shown as one row under its name, at the line that called it, in both modes
(compiled code calls it as a library call that runs the same body eagerly). A kernel that runs no
ATen op of its own (here one that reads and writes raw memory through the tensors' data pointers,
as a C++ or Triton kernel would) counts its inputs and outputs.
Each test defines its op under a name of its own: the registry is global to the process.
"""

from __future__ import annotations

from support.paths import at, write_target

from kscope.engine.run import run
from kscope.report.request import RunRequest

F32 = 4
N = 100_000


def rows(mode):
    return {k.name: (k.launches, k.bytes_read, k.bytes_written, k.lines) for k in mode.kernels}


def run_target(tmp_path, source):
    path = write_target(tmp_path, source)
    r = run(RunRequest(str(path), None, "cpu", calls=3))
    assert not r.errors, r.errors
    # every byte tied to a launch: none left out of the totals
    assert not [note for note in r.notes if "could not tie" in note], r.notes
    return path, r


def test_a_custom_ops_body_is_counted_under_its_name_at_the_line_that_called_it(tmp_path):
    path, r = run_target(
        tmp_path,
        """
        import torch

        @torch.library.custom_op("kscope_test_body::add2", mutates_args=())
        def add2(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return a + 2 * b

        @add2.register_fake
        def _(a, b):
            return torch.empty_like(a)

        def f(a, b):
            return add2(a, b)

        def inputs(device):
            return torch.randn(100_000, device=device), torch.randn(100_000, device=device)
        """,
    )
    n = N * F32
    # mul reads b, writes tmp; add reads a and tmp, writes out: two launches, 3n read, 2n written
    # (the temporary is written and read back: the op's inputs and outputs alone would be 2n + n).
    expected = {"kscope_test_body::add2": (2, 3 * n, 2 * n, (at(path, "return add2(a, b)"),))}
    assert rows(r.eager) == expected
    assert {k.ops for k in r.eager.kernels} == {("aten.mul", "aten.add")}
    assert (r.eager.bytes_read, r.eager.bytes_written) == (3 * n, 2 * n)
    # compiled: inductor calls the op, whose kernel runs the same body eagerly
    assert rows(r.compiled) == expected
    assert (r.compiled.bytes_read, r.compiled.bytes_written) == (3 * n, 2 * n)


def test_a_custom_op_whose_kernel_runs_no_aten_op_counts_its_inputs_and_outputs(tmp_path):
    path, r = run_target(
        tmp_path,
        """
        import array
        import ctypes

        import torch

        @torch.library.custom_op("kscope_test_own::add2", mutates_args=())
        def add2(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            # the inputs' memory read raw and the output built in Python's own buffer: no ATen op
            # (data_ptr and frombuffer dispatch none), and nothing beyond torch and Python needed
            n = a.numel()
            xa = (ctypes.c_float * n).from_address(a.data_ptr())
            xb = (ctypes.c_float * n).from_address(b.data_ptr())
            return torch.frombuffer(array.array("f", [x + 2 * y for x, y in zip(xa, xb)]), dtype=torch.float32)

        @add2.register_fake
        def _(a, b):
            return torch.empty_like(a)

        def f(a, b):
            return add2(a, b).relu()

        def inputs(device):
            return torch.randn(10_000, device=device), torch.randn(10_000, device=device)
        """,
    )
    # 10⁴ elements, not N: the kernel's loop is Python's, run a hundred times and more by the timing
    # rounds (at 10⁵ this test took 12.7 s against 2.8 s with a numpy kernel)
    n = 10_000 * F32
    line = (at(path, "return add2(a, b).relu()"),)
    # the custom op reads a and b and writes its output (its Python list is out of sight);
    # relu reads that output and writes its own
    own = (1, 2 * n, n, line)
    assert rows(r.eager) == {"kscope_test_own::add2": own, "aten::relu": (1, n, n, line)}
    compiled = rows(r.compiled)
    assert compiled.pop("kscope_test_own::add2") == own
    ((launches, read, written, lines),) = compiled.values()  # relu, a kernel of inductor's
    assert (launches, read, written, lines) == (1, n, n, line)
