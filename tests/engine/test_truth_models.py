"""Blocks of public models, on real torch (CPU), against bytes derived by hand from the shapes.

fp32 is 4 bytes, int64 8. A library call (mm, addmm, convolution, attention) reads its operands and
writes its results; a generated kernel reads what it loads and writes what it stores; a gather
reads the elements it gathers plus its indices. Each row must carry exactly its own work, and the
rows must add up to the mode's total. Each mode's total is also checked against its own figure
derived from the shapes (`totals`), not only against the sum of the rows that the code computes the
total from: a row dropped from a mode, or a row no test pins, would leave that sum green.
"""

from __future__ import annotations

from support.paths import write_target

from kscope.engine.run import run
from kscope.report.request import RunRequest

F32, I64 = 4, 8


def run_file(tmp_path, source):
    report = run(RunRequest(str(write_target(tmp_path, source)), None, "cpu", calls=2))
    assert not report.errors, report.errors
    for mode in (report.eager, report.compiled):
        assert mode.bytes_read == sum(k.bytes_read for k in mode.kernels)
        assert mode.bytes_written == sum(k.bytes_written for k in mode.kernels)
        assert all(k.bytes_total for k in mode.kernels), "a kernel that touched a tensor never moves 0 B"
    return report


def rows(mode):
    return {k.name: (k.launches, k.bytes_read, k.bytes_written) for k in mode.kernels}


def totals(mode):
    return mode.bytes_read, mode.bytes_written


def test_two_library_calls_of_one_op_each_carry_their_own_bytes(tmp_path):
    r = run_file(
        tmp_path,
        """
        import torch

        def mlp(x, w1, w2):
            h = torch.relu(x @ w1)
            return torch.sigmoid(h @ w2)

        def inputs(device):
            return torch.randn(64, 96, device=device), torch.randn(96, 128, device=device), torch.randn(128, 32, device=device)
        """,
    )
    x, w1, w2, h, o = 64 * 96 * F32, 96 * 128 * F32, 128 * 32 * F32, 64 * 128 * F32, 64 * 32 * F32
    mm = (2, (x + w1) + (h + w2), h + o)  # both calls on one row, each with its own operands
    assert rows(r.eager) == {"aten::matmul › mm": mm, "aten::relu": (1, h, h), "aten::sigmoid": (1, o, o)}
    compiled = rows(r.compiled)
    assert compiled.pop("aten::mm") == mm
    # the ReLU and the sigmoid each read and write their own tensor, nothing of the mm's
    assert sorted(compiled.values()) == sorted([(1, h, h), (1, o, o)])
    # both modes: the mm's read x, w1 and h, w2 and write h and o; ReLU and sigmoid read and write theirs
    for mode in (r.eager, r.compiled):
        assert totals(mode) == (x + w1 + h + w2 + h + o, h + o + h + o)


def test_linear_on_3d_input_with_and_without_bias_moves_no_extra_copy(tmp_path):
    r = run_file(
        tmp_path,
        """
        import torch
        import torch.nn.functional as F

        def projections(x, w1, w2, b2):
            return F.linear(x, w1), F.linear(x, w2, b2)

        def inputs(device):
            return (torch.randn(2, 32, 64, device=device), torch.randn(96, 64, device=device),
                    torch.randn(96, 64, device=device), torch.randn(96, device=device))
        """,
    )
    x, w, b, out = 2 * 32 * 64 * F32, 96 * 64 * F32, 96 * F32, 2 * 32 * 96 * F32
    # mm then _unsafe_view (the 3-D result is the mm's storage): the view moves nothing
    assert rows(r.eager) == {"aten::linear › mm": (1, x + w, out), "aten::linear › addmm": (1, x + w + b, out)}
    assert rows(r.compiled) == {"aten::mm": (1, x + w, out), "aten::addmm": (1, x + w + b, out)}
    for mode in (r.eager, r.compiled):  # x twice, each weight, the bias; two results
        assert totals(mode) == (2 * x + 2 * w + b, 2 * out)


def test_swiglu_feed_forward(tmp_path):
    r = run_file(
        tmp_path,
        """
        import torch
        import torch.nn.functional as F

        def ffn(x, w1, w3, w2):
            return F.linear(F.silu(F.linear(x, w1)) * F.linear(x, w3), w2)

        def inputs(device):
            return (torch.randn(2, 32, 64, device=device), torch.randn(160, 64, device=device),
                    torch.randn(160, 64, device=device), torch.randn(64, 160, device=device))
        """,
    )
    x, w, h = 2 * 32 * 64 * F32, 160 * 64 * F32, 2 * 32 * 160 * F32
    linears = (3, (x + w) + (x + w) + (h + w), h + h + x)
    assert rows(r.eager) == {"aten::linear › mm": linears, "aten::silu": (1, h, h), "aten::mul": (1, 2 * h, h)}
    assert r.eager.bytes_total == sum(linears[1:]) + 2 * h + 3 * h
    compiled = rows(r.compiled)
    assert compiled.pop("aten::mm") == linears
    # silu and mul fused: reads both projections, writes their product; silu's output never exists
    assert list(compiled.values()) == [(1, 2 * h, h)]
    assert r.eager.bytes_total - r.compiled.bytes_total == 2 * h
    # eager: three projections (x and w1, x and w3, the product and w2; h, h and the output x's
    # size written), silu (reads and writes h), mul (reads two h, writes one); compiled: the
    # projections and one kernel reading both projections and writing their product
    projections = (2 * x + 3 * w + h, 2 * h + x)
    assert totals(r.eager) == (projections[0] + h + 2 * h, projections[1] + h + h)
    assert totals(r.compiled) == (projections[0] + 2 * h, projections[1] + h)


def test_attention_block_with_its_projections(tmp_path):
    r = run_file(
        tmp_path,
        """
        import torch
        import torch.nn.functional as F

        def attention(x, w_qkv, b_qkv, w_o, b_o):
            B, T, C = x.shape
            q, k, v = F.linear(x, w_qkv, b_qkv).split(C, dim=2)
            q, k, v = (t.view(B, T, 4, C // 4).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return F.linear(y.transpose(1, 2).reshape(B, T, C), w_o, b_o)

        def inputs(device):
            B, T, C = 2, 32, 64
            return (torch.randn(B, T, C, device=device), torch.randn(3 * C, C, device=device),
                    torch.randn(3 * C, device=device), torch.randn(C, C, device=device), torch.randn(C, device=device))
        """,
    )
    B, T, C, heads = 2, 32, 64, 4
    x, qkv = B * T * C * F32, 3 * B * T * C * F32
    w_qkv, b_qkv, w_o, b_o = 3 * C * C * F32, 3 * C * F32, C * C * F32, C * F32
    lse = B * heads * T * F32  # attention's log-sum-exp, written though nothing reads it
    projections = (2, (x + w_qkv + b_qkv) + (x + w_o + b_o), qkv + x)
    attention = (1, qkv, x + lse)  # q, k and v are views of one buffer: read once
    eager = rows(r.eager)
    assert eager.pop("aten::linear › addmm") == projections
    assert list(eager.values()) == [attention]
    compiled = rows(r.compiled)
    assert compiled.pop("aten::addmm") == projections
    assert list(compiled.values()) == [attention]
    # both modes: the qkv projection (x, its weight and bias; writes qkv), the output projection
    # (y, the size of x, its weight and bias; writes x's size), attention (reads qkv; writes y, lse)
    for mode in (r.eager, r.compiled):
        assert totals(mode) == ((x + w_qkv + b_qkv) + (x + w_o + b_o) + qkv, qkv + x + (x + lse))


def test_embedding_lookup_reads_the_rows_it_gathers(tmp_path):
    r = run_file(
        tmp_path,
        """
        import torch

        def embed(idx, wte, wpe):
            pos = torch.arange(idx.shape[1], device=idx.device)
            return wte[idx] + wpe[pos]

        def inputs(device):
            return (torch.randint(0, 5000, (4, 32), device=device), torch.randn(5000, 64, device=device),
                    torch.randn(32, 64, device=device))
        """,
    )
    B, T, C, V = 4, 32, 64, 5000
    idx, rows_gathered, wpe, out, pos = B * T * I64, B * T * C * F32, T * C * F32, B * T * C * F32, T * I64
    assert rows_gathered < V * C * F32 / 10
    assert rows(r.eager) == {
        "aten::arange": (1, 0, pos),
        "aten::index": (2, (rows_gathered + idx) + (wpe + pos), out + wpe),
        "aten::add": (1, out + wpe, out),
    }
    # one kernel: the indices, the rows they pick, the position table (arange became an index)
    assert list(rows(r.compiled).values()) == [(1, idx + rows_gathered + wpe, out)]
    # eager: arange writes T positions; the two lookups read the rows they gather and their indices,
    # write (B, T, C) and (T, C); add reads both, writes (B, T, C)
    assert totals(r.eager) == (rows_gathered + idx + wpe + pos + out + wpe, pos + out + wpe + out)
    assert totals(r.compiled) == (idx + rows_gathered + wpe, out)


def test_embedding_then_layer_norm_does_not_count_the_whole_table(tmp_path):
    r = run_file(
        tmp_path,
        """
        import torch
        import torch.nn.functional as F

        def gpt2_input(idx, wte, wpe, w, b):
            pos = torch.arange(idx.shape[1], device=idx.device)
            x = wte[idx] + wpe[pos]
            return F.layer_norm(x, (x.shape[-1],), w, b)

        def inputs(device):
            return (torch.randint(0, 5000, (4, 32), device=device), torch.randn(5000, 64, device=device),
                    torch.randn(32, 64, device=device), torch.ones(64, device=device), torch.zeros(64, device=device))
        """,
    )
    B, T, C, V = 4, 32, 64, 5000
    idx, gathered, wpe, out, table = B * T * I64, B * T * C * F32, T * C * F32, B * T * C * F32, V * C * F32
    stats, affine = B * T * F32, C * F32
    eager = rows(r.eager)
    assert eager["aten::index"] == (2, (gathered + idx) + (wpe + T * I64), out + wpe)
    # layer norm reads x, weight and bias; writes y, and the mean and 1/std it saves
    assert eager["aten::layer_norm › native_layer_norm"] == (1, out + 2 * affine, out + 2 * stats)
    # Compiled: one C++ kernel of two passes over the gathered rows (mean and variance, then
    # normalise), each loading the indices, the rows and the position table; the two per-row
    # statistics go to memory between them. Never the 5000-row table.
    (kernel,) = r.compiled.kernels
    one_pass = idx + gathered + wpe
    assert (kernel.bytes_read, kernel.bytes_written) == (2 * one_pass + 2 * stats + 2 * affine, 2 * stats + out)
    assert kernel.bytes_read < table
    assert "gather" in r.compiled.traffic_source
    # eager, every op: arange (writes T positions), the two lookups, add (reads (B, T, C) and
    # (T, C), writes (B, T, C)), layer norm; the rows above pin only the lookups and layer norm
    pos = T * I64
    assert totals(r.eager) == (
        (gathered + idx + wpe + pos) + (out + wpe) + (out + 2 * affine),
        pos + (out + wpe) + out + (out + 2 * stats),
    )
    assert totals(r.compiled) == (2 * one_pass + 2 * stats + 2 * affine, 2 * stats + out)


def test_cross_entropy_is_two_launches_in_eager_and_one_compiled(tmp_path):
    r = run_file(
        tmp_path,
        """
        import torch
        import torch.nn.functional as F

        def loss(logits, t):
            return F.cross_entropy(logits, t)

        def inputs(device):
            return torch.randn(64, 1000, device=device), torch.randint(0, 1000, (64,), device=device)
        """,
    )
    N, V = 64, 1000
    logits, t, picked = N * V * F32, N * I64, N * F32
    # log-softmax reads and writes the logits; the NLL loss picks one log-probability per row
    # (a gather) and writes the loss and the total weight (two fp32 scalars)
    assert rows(r.eager) == {
        "aten::cross_entropy_loss › _log_softmax": (1, logits, logits),
        "aten::cross_entropy_loss › nll_loss_forward": (1, picked + t, 2 * F32),
    }
    # one kernel: a pass over the logits for each row's max and sum of exponentials (written),
    # a pass picking the target logits, a sum and a count of the targets (int64), a division
    (kernel,) = r.compiled.kernels
    assert kernel.fused and r.compiled.launches == 1
    row_stats = 2 * N * F32
    assert kernel.bytes_read == logits + (row_stats + t + picked) + (F32 + I64)
    assert kernel.bytes_written == row_stats + (F32 + I64) + F32
    assert totals(r.eager) == (logits + picked + t, logits + 2 * F32)
    assert totals(r.compiled) == (logits + row_stats + t + picked + F32 + I64, row_stats + F32 + I64 + F32)


def test_in_place_ops_read_and_write(tmp_path):
    r = run_file(
        tmp_path,
        """
        import torch

        def bump(x):
            x.add_(1)
            return x.relu_()

        def inputs(device):
            return (torch.randn(1000, 100, device=device),)
        """,
    )
    x = 1000 * 100 * F32
    assert rows(r.eager) == {"aten::add_": (1, x, x), "aten::relu_": (1, x, x)}
    (kernel,) = r.compiled.kernels
    assert (kernel.bytes_read, kernel.bytes_written) == (x, x)
    assert totals(r.eager) == (2 * x, 2 * x) and totals(r.compiled) == (x, x)


def test_conv_batch_norm_relu_and_the_layout_copy_inductor_adds(tmp_path):
    r = run_file(
        tmp_path,
        """
        import torch
        from torch import nn

        class ConvBNReLU(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(16, 32, 3, padding=1, bias=False)
                self.bn = nn.BatchNorm2d(32)

            def forward(self, x):
                return torch.relu(self.bn(self.conv(x)))

        block = ConvBNReLU().eval().requires_grad_(False)

        def inputs(device):
            return (torch.randn(4, 16, 10, 10, device=device),)
        """,
    )
    x, w, out, bn = 4 * 16 * 10 * 10 * F32, 32 * 16 * 3 * 3 * F32, 4 * 32 * 10 * 10 * F32, 4 * 32 * F32
    assert rows(r.eager) == {
        "aten::conv2d › convolution": (1, x + w, out),
        "aten::batch_norm › native_batch_norm": (1, out + bn, out),
        "aten::relu": (1, out, out),
    }
    compiled = {k.name: k for k in r.compiled.kernels}
    conv = compiled.pop("aten::convolution")
    assert (conv.bytes_read, conv.bytes_written) == (x + w, out)
    copy, bn_relu = sorted(compiled.values(), key=lambda k: k.bytes_total)
    # inductor's layout optimisation: x and the weight copied to channels-last for the convolution
    assert (copy.bytes_read, copy.bytes_written) == (x + w, x + w)
    assert copy.ops == () and "x" in copy.what and "conv.weight" in copy.what and "channels-last" in copy.what
    # batch norm (mean, var, weight, bias per channel) and ReLU in one pass
    assert (bn_relu.bytes_read, bn_relu.bytes_written) == (out + bn, out) and bn_relu.fused
    # eager: convolution, batch norm, ReLU; compiled: the copy, the convolution, batch norm + ReLU
    assert totals(r.eager) == ((x + w) + (out + bn) + out, 3 * out)
    assert totals(r.compiled) == (2 * (x + w) + (out + bn), (x + w) + 2 * out)


def test_a_training_step_has_bytes_for_its_forward_and_backward_kernels(tmp_path):
    r = run_file(
        tmp_path,
        """
        import torch

        def step(x, w):
            loss = torch.relu(x @ w).sum()
            loss.backward()
            return loss

        def inputs(device):
            return torch.randn(64, 96, device=device), torch.randn(96, 32, device=device, requires_grad=True)
        """,
    )
    x, w, h = 64 * 96 * F32, 96 * 32 * F32, 64 * 32 * F32
    mms = {k.phase: k for k in r.compiled.kernels if k.name == "aten::mm"}
    forward_mm, backward_mm = mms["forward"], mms["backward"]
    assert (forward_mm.bytes_read, forward_mm.bytes_written) == (x + w, h)
    assert (backward_mm.bytes_read, backward_mm.bytes_written) == (x + h, w)  # grad_w = x^T @ grad_h
    assert r.compiled.graph_breaks and all(k.bytes_read is not None for k in r.compiled.kernels)
    # Every row of the step, by hand (the rows above pin only the two mm's). loss is one fp32, the
    # ReLU's mask one bool (1 byte) per element of h. Eager: mm (x, w -> h), relu (h -> h), sum
    # (h -> loss), ones_like (backward's seed: loss -> loss), threshold_backward (the relu's output
    # and the seed, expanded but one element in memory -> h), mm (x, grad h -> w), and w's gradient
    # added to the one the call before left (AccumulateGrad's add_: two w -> w).
    loss, mask = F32, 64 * 32
    accumulate = (2 * w, w)
    assert totals(r.eager) == (
        (x + w) + h + h + loss + (h + loss) + (x + h) + accumulate[0],
        h + h + loss + loss + h + w + accumulate[1],
    )
    # Compiled: mm; one kernel for the ReLU, its sum and the mask kept for backward (two passes
    # over h -> loss, mask); ones_like; backward's kernel (the seed and the mask -> grad h); mm;
    # the same AccumulateGrad add_, outside the graphs.
    assert totals(r.compiled) == (
        (x + w) + 2 * h + loss + (loss + mask) + (x + h) + accumulate[0],
        h + (loss + mask) + loss + h + w + accumulate[1],
    )
