"""The engine on real torch (CPU), against numbers derived by hand from the shapes.

fp32 is 4 bytes. Eager: each op reads each distinct input storage once and writes its outputs.
Compiled: each kernel reads its inputs and writes its outputs; intermediates inside a fused kernel
never touch memory. Expected values are computed in the test from the sizes, never copied from
kscope's output.
"""

from __future__ import annotations

import pytest
from support.paths import at, line_of, write_target
from support.runs import run_ok

F32 = 4


def run_file(path, target=None):
    return run_ok(path, target, calls=3)


def names(mode):
    return [k.name for k in mode.kernels]


def test_article_add_relu(tmp_path):
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
    r = run_file(path)
    n = 1_000_000 * F32
    # eager: add reads a, b, writes tmp; relu reads tmp, writes c: 5 array-sized transfers.
    assert r.eager.launches == 2
    assert (r.eager.bytes_read, r.eager.bytes_written) == (3 * n, 2 * n)
    assert r.eager.bytes_total == 20_000_000
    assert r.transfers(r.eager.bytes_total) == 5
    # compiled: one fused kernel reads a, b, writes c: 3 transfers.
    assert r.compiled.launches == 1
    (kernel,) = r.compiled.kernels
    assert "fused_add_relu" in kernel.name and kernel.fused
    assert (kernel.bytes_read, kernel.bytes_written) == (2 * n, n)
    assert r.compiled.bytes_total == 12_000_000
    assert r.transfers(r.compiled.bytes_total) == 3
    assert {"aten.add", "aten.relu"} <= set(kernel.ops)
    assert kernel.lines == (at(path, "return (a + b).relu()"),)
    # the generated source: two inputs in, one output out
    assert "in_ptr1" in kernel.code and "out_ptr0" in kernel.code and "out_ptr1" not in kernel.code


def test_broadcast_add_relu(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def bias_relu(x, b):
            return (x + b).relu()

        def inputs(device):
            return torch.randn(1000, 100, device=device), torch.randn(100, device=device)
        """,
    )
    r = run_file(path)
    x, b = 1000 * 100 * F32, 100 * F32
    assert r.eager.launches == 2
    assert r.eager.bytes_read == (x + b) + x
    assert r.eager.bytes_written == x + x
    assert r.compiled.launches == 1
    assert (r.compiled.bytes_read, r.compiled.bytes_written) == (x + b, x)


def test_reduction_reads_square_input_once(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def sum_sq(x):
            return (x * x).sum(dim=1)

        def inputs(device):
            return (torch.randn(1000, 100, device=device),)
        """,
    )
    r = run_file(path)
    x, out = 1000 * 100 * F32, 1000 * F32
    # x * x reads x once.
    assert r.eager.launches == 2
    assert (r.eager.bytes_read, r.eager.bytes_written) == (x + x, x + out)
    assert r.compiled.launches == 1
    assert (r.compiled.bytes_read, r.compiled.bytes_written) == (x, out)


def test_matmul_with_epilogue(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def linear_relu(x, w, b):
            return (x @ w + b).relu()

        def inputs(device):
            return (torch.randn(64, 128, device=device), torch.randn(128, 256, device=device),
                    torch.randn(256, device=device))
        """,
    )
    r = run_file(path)
    x, w, b, y = 64 * 128 * F32, 128 * 256 * F32, 256 * F32, 64 * 256 * F32
    # eager: matmul (x, w -> y), add (y, b -> y2), relu (y2 -> out)
    assert r.eager.launches == 3
    assert r.eager.bytes_read == (x + w) + (y + b) + y
    assert r.eager.bytes_written == 3 * y
    # compiled: a library matmul plus one generated kernel for the rest; y goes through memory once.
    assert r.compiled.launches == 2
    kinds = sorted(k.kind for k in r.compiled.kernels)
    assert kinds == ["extern", "kernel"]
    extern = next(k for k in r.compiled.kernels if k.kind == "extern")
    assert extern.name in ("aten::mm", "aten::addmm")
    assert r.compiled.bytes_read == (x + w + b) + y
    assert r.compiled.bytes_written == 2 * y


def test_cat_then_scale(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def cat_scale(a, b):
            return torch.cat([a, b]) * 2

        def inputs(device):
            return torch.randn(1000, device=device), torch.randn(3000, device=device)
        """,
    )
    r = run_file(path)
    a, b = 1000 * F32, 3000 * F32
    assert r.eager.launches == 2
    assert (r.eager.bytes_read, r.eager.bytes_written) == ((a + b) + (a + b), (a + b) + (a + b))
    # One kernel, but on the CPU inductor still materialises the concatenation: it copies a and
    # b into the cat buffer (two loops), then reads that buffer back to scale it (a third loop).
    assert r.compiled.launches == 1
    (kernel,) = r.compiled.kernels
    assert kernel.code.count("#pragma omp for") + kernel.code.count("for(int64_t x0") >= 3
    assert "in_ptr2" in kernel.code  # a, b, and the cat buffer read back
    assert (r.compiled.bytes_read, r.compiled.bytes_written) == ((a + b) + (a + b), (a + b) + (a + b))
    assert {"aten.cat", "aten.mul"} <= set(kernel.ops)


def test_indexing(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def gather_scale(x, idx):
            return x[idx] * 2

        def inputs(device):
            return torch.randn(1000, 64, device=device), torch.arange(0, 1000, 10, device=device)
        """,
    )
    r = run_file(path)
    x, idx, rows = 1000 * 64 * F32, 100 * 8, 100 * 64 * F32
    # a gather reads the rows it gathers and the indices, not the whole of x.
    assert r.eager.launches == 2
    assert rows < x
    assert r.eager.bytes_read == (rows + idx) + rows
    assert r.eager.bytes_written == rows + rows
    # inductor counts the rows it gathers (at most the buffer), the indices, and the output.
    assert r.compiled.launches == 1
    assert (r.compiled.bytes_read, r.compiled.bytes_written) == (rows + idx, rows)


def test_transpose_is_a_view_until_copied(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def transpose_add(x):
            return x.t().contiguous() + 1

        def inputs(device):
            return (torch.randn(300, 200, device=device),)
        """,
    )
    r = run_file(path)
    x = 300 * 200 * F32
    # t() moves nothing; contiguous() copies (clone); + 1 reads and writes once more.
    assert r.eager.launches == 2
    assert (r.eager.bytes_read, r.eager.bytes_written) == (2 * x, 2 * x)
    assert not any(k.name == "aten::t" for k in r.eager.kernels)
    assert r.compiled.launches == 1
    assert (r.compiled.bytes_read, r.compiled.bytes_written) == (x, x)


def test_two_outputs(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def sum_and_double(a, b):
            s = a + b
            return s, s * 2

        def inputs(device):
            return torch.randn(10_000, device=device), torch.randn(10_000, device=device)
        """,
    )
    r = run_file(path)
    n = 10_000 * F32
    assert r.eager.launches == 2
    assert (r.eager.bytes_read, r.eager.bytes_written) == (2 * n + n, n + n)
    # one kernel writes both outputs
    assert r.compiled.launches == 1
    assert (r.compiled.bytes_read, r.compiled.bytes_written) == (2 * n, 2 * n)


def test_in_place_reads_and_writes_its_buffer(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def copy_scale(x):
            y = x.clone()
            y.mul_(2)
            return y

        def inputs(device):
            return (torch.randn(50_000, device=device),)
        """,
    )
    r = run_file(path)
    n = 50_000 * F32
    assert r.eager.launches == 2
    assert (r.eager.bytes_read, r.eager.bytes_written) == (2 * n, 2 * n)
    assert r.compiled.launches == 1
    assert (r.compiled.bytes_read, r.compiled.bytes_written) == (n, n)


def test_x_plus_x_reads_x_once(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def double(x):
            return x + x

        def inputs(device):
            return (torch.randn(4096, device=device),)
        """,
    )
    r = run_file(path)
    n = 4096 * F32
    assert r.eager.launches == 1
    assert (r.eager.bytes_read, r.eager.bytes_written) == (n, n)
    assert (r.compiled.bytes_read, r.compiled.bytes_written) == (n, n)


def test_graph_break(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def branchy(x):
            y = x * 2
            if y.sum() > 0:
                z = y + 1
            else:
                z = y - 1
            return z.relu()

        def inputs(device):
            return (torch.ones(1000, device=device),)
        """,
    )
    r = run_file(path)
    n, scalar = 1000 * F32, F32
    # eager: mul, sum, gt (a 1-byte bool), add, relu; item() is metadata, not a launch.
    assert r.eager.launches == 5
    assert r.eager.bytes_read == n + n + scalar + n + n
    assert r.eager.bytes_written == n + scalar + 1 + n + n
    # compiled: two graphs split at the data-dependent branch
    assert r.compiled.graphs == 2
    (brk,) = r.compiled.graph_breaks
    assert brk.line == line_of(path, "if y.sum() > 0:")
    assert brk.reason
    # the second graph is one fused add + relu kernel: reads y, writes the result
    tail = [k for k in r.compiled.kernels if "relu" in k.name]
    assert len(tail) == 1 and (tail[0].bytes_read, tail[0].bytes_written) == (n, n)


def test_nn_module_target(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        model = torch.nn.Linear(64, 32)

        def inputs(device):
            return (torch.randn(16, 64, device=device),)
        """,
    )
    r = run_file(path)
    assert r.target == "model"
    x, w, b, out = 16 * 64 * F32, 32 * 64 * F32, 32 * F32, 16 * 32 * F32
    assert r.eager.launches == 1
    assert (r.eager.bytes_read, r.eager.bytes_written) == (x + w + b, out)
    assert r.compiled.launches == 1
    assert (r.compiled.bytes_read, r.compiled.bytes_written) == (x + w + b, out)
    # a module's weights: its traffic is no multiple of its input, so none is shown
    assert r.reads_parameters and r.transfers(r.eager.bytes_total) is None


def test_module_level_tensors_as_in_the_article(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def add_relu(a, b):
            return (a + b).relu()

        a = torch.randn(1000)
        b = torch.randn(1000)
        """,
    )
    r = run_file(path)
    assert r.eager.launches == 2 and r.compiled.launches == 1
    assert r.eager.bytes_total == 5 * 1000 * F32
    # module-level tensors, not parameters: the article's 5 array-sized transfers
    assert not r.reads_parameters and r.transfers(r.eager.bytes_total) == 5.0


@pytest.mark.parametrize("softmax_dim", [-1])
def test_softmax_is_one_launch_eager(tmp_path, softmax_dim):
    path = write_target(
        tmp_path,
        f"""
        import torch

        def soft(x):
            return torch.softmax(x, {softmax_dim})

        def inputs(device):
            return (torch.randn(128, 256, device=device),)
        """,
    )
    r = run_file(path)
    x = 128 * 256 * F32
    # aten::softmax calls aten::_softmax: one launch
    assert r.eager.launches == 1
    assert (r.eager.bytes_read, r.eager.bytes_written) == (x, x)
