"""Six elementwise ops in a row: eager launches 6 kernels, each reading and writing a full array;
compiled fuses the whole chain into 1 kernel that reads x and y once and writes the result once."""

import torch


def fused_chain(x, y):
    # Every op is pointwise: element i of the output needs only element i of the inputs,
    # so inductor can keep each value in a register and never store the intermediates.
    t = x * 2 + 1  # mul, add
    t = torch.sin(t)
    t = torch.sigmoid(t)
    t = t * y
    return t.relu()


def inputs(device, n=1_000_000):
    x = torch.randn(n, device=device)
    y = torch.randn(n, device=device)
    return x, y
