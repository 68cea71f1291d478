"""An nn.Linear then GELU, for inference: what a compile mode changes, run with
`--no-grad --option freezing=True` and then `--mode max-autotune`.

With freezing the weights become constants and the CPU matmul is MKL's packed linear, a library
call: GELU (bias add inside) runs as a second kernel and reads the matmul's output back from
memory, one round trip. Under max-autotune inductor also times a GEMM it generates from a C++
template, which fuses bias + GELU as its epilogue: if that wins (or with
`--option max_autotune_gemm_backends=CPP`, the only candidate), one kernel and no round trip.
"""

import torch
import torch.nn.functional as F

layer = torch.nn.Linear(512, 1024)


def linear_gelu(x):
    return F.gelu(layer(x))


def inputs(device, n=256):
    layer.to(device)
    return (torch.randn(n, 512, device=device),)
