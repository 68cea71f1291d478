"""LayerNorm followed by a residual add: eager runs layer_norm (its own kernel) and then add;
compiled decomposes layer_norm into mean/variance reductions and fuses the add into them."""

import torch
import torch.nn.functional as F


def layer_norm_residual(x, weight, bias):
    # Eager calls one hand-written layer_norm kernel, but the add still needs its own pass.
    # Inductor sees the normalisation as reductions plus pointwise math, so the scale,
    # shift and residual add can all happen in the kernel that writes the output.
    return F.layer_norm(x, (x.shape[-1],), weight, bias) + x


def inputs(device, n=4096):
    x = torch.randn(n, 1024, device=device)
    weight = torch.randn(1024, device=device)
    bias = torch.randn(1024, device=device)
    return x, weight, bias
