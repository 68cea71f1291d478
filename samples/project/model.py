"""A model in a file of its own, as real code has it: bench.py beside it imports it.

Run `kscope samples/project/bench.py` and edit this file: every save re-runs bench.py with the
code as it is now (kscope imports the user's own modules afresh for each run; torch stays warm).
A nanoGPT-style block without attention: pre-norm MLP with its residual.
"""

import torch
import torch.nn.functional as F
from torch import nn


class MLP(nn.Module):
    """Widen 4×, GELU, project back (nanoGPT's MLP)."""

    def __init__(self, d: int):
        super().__init__()
        self.fc = nn.Linear(d, 4 * d)
        self.proj = nn.Linear(4 * d, d)

    def forward(self, x):
        h = F.gelu(self.fc(x))
        return self.proj(h)


class Block(nn.Module):
    def __init__(self, d: int = 128):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.mlp = MLP(d)

    def forward(self, x):
        return x + self.mlp(self.ln(x))


def residual_relu(x, y):
    return (x + y).relu()


def make(d: int = 128) -> Block:
    torch.manual_seed(0)
    return Block(d)
