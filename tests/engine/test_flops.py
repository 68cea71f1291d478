"""FLOPs per kernel and the device's peak (issue 25), on real torch (CPU), derived by hand.

One target, one run: (a + b).relu() on 10⁶ floats, x (64×128) @ w (128×32), and a 3×3 convolution
of a 1×3×16×16 image to 8 channels (14×14 out).
- add and relu: one FLOP per element each: 10⁶ each eagerly, 2·10⁶ in the one fused kernel (inductor's
  op counts of its loop body: an add and a relu per element).
- the matmul: 2·M·N·K = 2·64·32·128 in both modes.
- the convolution: 2·N·C_out·H_out·W_out·C_in·k_h·k_w = 2·1·8·14·14·3·3·3, which is also what
  torch.utils.flop_counter counts for it.
"""

from __future__ import annotations

import pytest
import torch
from support.paths import write_target
from support.runs import run_ok
from torch.utils.flop_counter import FlopCounterMode

from kscope.engine.machine.peak_flops import compute_dtype, gpu_peak_flops
from kscope.report.roofline import mode_roofs, points

N = 1_000_000
MM = 2 * 64 * 32 * 128
CONV = 2 * 1 * 8 * 14 * 14 * 3 * 3 * 3


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    path = write_target(tmp_path_factory.mktemp("flops"), """
        import torch
        import torch.nn.functional as F

        def mixed(a, b, x, w, img, weight):
            h = (a + b).relu()
            y = x @ w
            z = F.conv2d(img, weight)
            return h, y, z

        def inputs(device):
            return (torch.randn(1_000_000, device=device), torch.randn(1_000_000, device=device),
                    torch.randn(64, 128, device=device), torch.randn(128, 32, device=device),
                    torch.randn(1, 3, 16, 16, device=device), torch.randn(8, 3, 3, 3, device=device))
        """)
    return run_ok(path, calls=2)


def row(mode, part: str):
    (k,) = [k for k in mode.kernels if part in k.name]
    return k


def test_pointwise_ops_count_one_flop_per_element_and_the_fused_kernel_two(mixed):
    assert row(mixed.eager, "add").flops == N and row(mixed.eager, "relu").flops == N
    fused = row(mixed.compiled, "fused_add_relu")
    assert fused.flops == 2 * N
    # the seed's kernel moves 12 MB for 2·10⁶ FLOPs: 1/6 FLOP per byte
    (seed,) = [p for p in points(mixed) if p.name == fused.name]
    assert seed.intensity == pytest.approx(2 * N / (3 * 4 * N))


def test_a_matmul_is_2mnk_in_both_modes(mixed):
    assert row(mixed.eager, "mm").flops == MM
    assert row(mixed.compiled, "mm").flops == MM


def test_a_convolution_is_what_flop_counter_counts(mixed):
    img, weight = torch.randn(1, 3, 16, 16), torch.randn(8, 3, 3, 3)
    with FlopCounterMode(display=False) as counter:
        torch.nn.functional.conv2d(img, weight)
    assert counter.get_total_flops() == CONV
    assert row(mixed.eager, "conv").flops == CONV
    # compiled: the library convolution; the layout copies around it compute nothing
    assert sum(k.flops for k in mixed.compiled.kernels if "convolution" in k.name) == CONV
    copies = [k for k in mixed.compiled.kernels if k.what and k.what.startswith("copies")]
    assert all(k.flops == 0 for k in copies)
    assert mixed.compiled.flops == 2 * N + MM + CONV == mixed.eager.flops


def test_the_cpu_peak_is_measured_and_every_kernel_sits_under_a_roof(mixed):
    assert mixed.peak_flops and mixed.peak_flops > 1e9  # at least a GFLOP/s on any CPU that runs this
    assert "fp32 matmul" in mixed.peak_flops_source
    for p in points(mixed):
        assert p.bound in ("memory", "compute"), p
        # the ridge: peak FLOP/s ÷ the bytes/s of the level that holds the mode's working set (not
        # always main memory's: this test read main memory's and failed where the two ridges
        # straddled a kernel); left of it the memory roof is the lower
        roofs = mode_roofs(mixed, getattr(mixed, p.mode))
        ridge = mixed.peak_flops / (roofs.gbps * 1e9)
        assert p.bound == ("memory" if p.intensity < ridge else "compute")


def test_a_gpu_peak_is_the_data_sheets_for_the_exact_part_and_dtype():
    assert gpu_peak_flops("NVIDIA H100 80GB HBM3", torch.bfloat16) == (989.4e12, "data sheet of H100 80GB HBM3, bfloat16, dense")
    assert gpu_peak_flops("NVIDIA A100-SXM4-40GB", torch.float32)[0] == 19.5e12
    assert gpu_peak_flops("NVIDIA L40", torch.float32)[0] is None  # not an L40S, not an L4
    assert gpu_peak_flops("Tesla T4", torch.bfloat16)[0] is None  # no bf16 figure: unknown
    assert compute_dtype([torch.zeros(3, dtype=torch.int64), torch.zeros(2, dtype=torch.bfloat16)]) == torch.bfloat16


def test_an_op_dynamo_leaves_to_run_eagerly_has_its_flops_in_the_compiled_mode_too(tmp_path):
    path = write_target(tmp_path, """
        import torch

        @torch._dynamo.disable
        def scale(x):
            return x * 3

        def target(a, b):
            return scale(a + b)

        def inputs(device):
            return torch.randn(1_000_000, device=device), torch.randn(1_000_000, device=device)
        """)
    r = run_ok(path, "target", calls=2)
    outside = row(r.compiled, "mul")  # run by eager code between the graphs: eager's accounting
    assert not outside.fused and outside.flops == N
    assert r.compiled.flops == 2 * N == r.eager.flops
