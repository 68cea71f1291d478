"""A data-dependent `if` splits the function: compiled shows 2 graphs and 1 graph break,
pointing at the `if` line, because the branch needs a tensor's value back in Python."""

import torch


def branchy(x):
    y = torch.sin(x) * 2  # graph 1: fusable pointwise
    # Python must know y.sum() to pick a branch, so dynamo stops tracing here,
    # runs graph 1, reads the value, then starts graph 2 for whichever branch ran.
    if y.sum() > 0:
        return torch.relu(y) + 1  # graph 2: fused again, but in a separate kernel
    return torch.relu(-y) + 1


def inputs(device, n=1_000_000):
    # rand (in [0, 1)) makes y.sum() positive, so every run takes the same branch.
    return (torch.rand(n, device=device),)
