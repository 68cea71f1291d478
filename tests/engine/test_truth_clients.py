"""Truths found on real clients (issue 22), on real torch (CPU), every number derived here from
the shapes: gathers, ops that run no kernel, custom ops.

A gather reads min(the elements it gathers, its whole source) plus its indices, in both modes.
"""

from __future__ import annotations

from support.paths import at, write_target
from support.runs import run_ok

F32, I32, I64 = 4, 4, 8


def run_file(path, target=None):
    return run_ok(path, target, calls=3)


def test_a_gather_of_single_elements_reads_each_element_it_gathers(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def pick(a, b):
            return a[b]

        def inputs(device):
            a = torch.randn(10, device=device)
            return a, torch.randperm(10, device=device).to(torch.int32)
        """,
    )
    r = run_file(path)
    gathered, indices, out = 10 * F32, 10 * I32, 10 * F32
    for mode in (r.eager, r.compiled):
        assert mode.launches == 1
        assert (mode.bytes_read, mode.bytes_written) == (gathered + indices, out)


def test_a_gather_that_repeats_rows_reads_no_more_than_its_source(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def rows_cos(a, b):
            return a[b].cos()

        def inputs(device):
            a = torch.randn(10, 10, device=device)
            return a, torch.arange(20, device=device) % 10
        """,
    )
    r = run_file(path)
    source, drawn, indices, out = 10 * 10 * F32, 20 * 10 * F32, 20 * I64, 20 * 10 * F32
    assert drawn > source  # every row twice: the whole table, once
    # eager: index (reads the table once and the indices, writes 20 rows), then cos
    assert r.eager.launches == 2
    assert r.eager.bytes_read == (source + indices) + out
    assert r.eager.bytes_written == out + out
    # compiled: one fused kernel gathers and takes the cosine
    assert r.compiled.launches == 1
    assert (r.compiled.bytes_read, r.compiled.bytes_written) == (source + indices, out)


def test_eval_dropout_runs_no_kernel_and_train_dropout_runs_its_own(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch
        import torch.nn.functional as F

        def dropouts(x):
            kept = F.dropout(x, 0.1, training=False)
            doubled = kept * 2
            return doubled, F.dropout(x, 0.5, training=True)

        def inputs(device):
            return (torch.randn(1000, device=device),)
        """,
    )
    r = run_file(path)
    n, seed = 1000 * F32, 8
    # eval dropout returns x itself: no launch, no bytes, no row
    assert not any("dropout" in k.name and "›" not in k.name for k in r.eager.kernels)
    rows = {k.name: (k.launches, k.bytes_read, k.bytes_written) for k in r.eager.kernels}
    # train dropout: bernoulli_ draws the mask (writes it, reads nothing), div_ scales it in place,
    # mul applies it; then the eval half's `* 2`
    assert rows == {
        "aten::dropout › bernoulli_": (1, 0, n),
        "aten::dropout › div_": (1, n, n),
        "aten::dropout › mul": (1, n + n, n),
        "aten::mul": (1, n, n),
    }
    assert r.eager.launches == 4
    # compiled: one seed (an int64) for the random draws, then one kernel reading x and the seed
    # and writing both outputs
    assert r.compiled.launches == 2
    assert (r.compiled.bytes_read, r.compiled.bytes_written) == (n + seed, seed + n + n)
    # The seed (inductor's, no stack trace: it ran no line of the target's) is placed at the
    # dropout that reads it, as eager's mask is; not at the kernel's other line (the `* 2`)
    drop = at(path, "training=True")
    lines = {k.name: k.lines for k in r.eager.kernels}
    assert lines["aten::dropout › bernoulli_"] == lines["aten::dropout › mul"] == (drop,)
    (seeds,) = [k for k in r.compiled.kernels if k.name == "aten::randint"]
    assert seeds.lines == (drop,) and [(s.place, s.bytes_written) for s in seeds.shares] == [(drop, seed)]
