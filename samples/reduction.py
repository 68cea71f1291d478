"""Root-mean-square of each row: eager squares, averages and square-roots in 3 kernels;
compiled fuses the square into the mean's reduction loop and the sqrt onto its result: 1 kernel."""

import torch


def rms(x):
    # x * x is pointwise, so the reduction can square each element as it reads it:
    # the squared array never exists in memory. sqrt then acts on the per-row result.
    return (x * x).mean(dim=-1).sqrt()


def inputs(device, n=2048):
    return (torch.randn(n, 2048, device=device),)
