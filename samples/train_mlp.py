"""A two-layer MLP with GELU, forward and backward: run it with --backward (key g in the app).
Eager: 3 forward launches (two addmm, gelu) and 6 backward ones (three mm for the gradients, the
GELU derivative, two bias sums). Compiled: the matmuls stay library calls, and inductor fuses the
GELU derivative with a bias gradient's sum into one backward kernel."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d=256, hidden=1024):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x):
        # Backward runs these lines in reverse: fc2's gradients, GELU's derivative, fc1's.
        h = F.gelu(self.fc1(x))
        return self.fc2(h)


mlp = MLP()


def inputs(device, n=512):
    return (torch.randn(n, 256, device=device),)
