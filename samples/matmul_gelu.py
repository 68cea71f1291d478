"""A linear layer then GELU: compiled leaves the matmul to the vendor library (an extern
aten::mm / addmm) and fuses the bias add and GELU into one epilogue kernel after it."""

import torch
import torch.nn.functional as F


def linear_gelu(x, w, b):
    # Inductor does not write its own matmul here; it calls the library's (shown as extern).
    # The bias add and GELU are pointwise on the matmul's output, so they fuse into one kernel.
    return F.gelu(x @ w + b)


def inputs(device, n=256):
    x = torch.randn(n, 512, device=device)
    w = torch.randn(512, 1024, device=device)
    b = torch.randn(1024, device=device)
    return x, w, b
