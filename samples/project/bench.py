"""The target of a project of two files: the model comes from model.py beside it.

`kscope samples/project/bench.py`: a save of model.py re-runs this file with the new model, and
the status line says which file was saved. A file this run does not import never triggers a run.
"""

import torch
from model import make, residual_relu

block = make(128).eval().requires_grad_(False)  # inference: no training graph


def run(x, y):
    return residual_relu(block(x), y)


def inputs(device):
    return torch.randn(8, 64, 128, device=device), torch.randn(8, 64, 128, device=device)
