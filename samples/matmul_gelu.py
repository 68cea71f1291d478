"""A linear layer then GELU: compiled leaves the matmul to the library (an extern kernel) and
fuses what follows into one epilogue. CPU: addmm (bias inside) + gelu; CUDA: mm + fused add+gelu."""

import torch
import torch.nn.functional as F


def linear_gelu(x, w, b):
    # Inductor does not write its own matmul here; it calls the library's (shown as extern).
    # GELU is pointwise on the matmul's output, so it runs in one kernel right after. On CUDA
    # inductor moves the bias add out of addmm into that kernel too; on CPU addmm keeps it.
    return F.gelu(x @ w + b)


def inputs(device, n=256):
    x = torch.randn(n, 512, device=device)
    w = torch.randn(512, 1024, device=device)
    b = torch.randn(1024, device=device)
    return x, w, b
