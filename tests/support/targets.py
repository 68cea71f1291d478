"""Target files several test modules run."""

TWO_LINES = """
import torch

def two(a, b):
    h = a + b
    return h.relu()

def inputs(device):
    return torch.randn(1_000_000, device=device), torch.randn(1_000_000, device=device)
"""
"""Issue 25's two-line target: eager 12 MB at the first line and 8 MB at the second; compiled one
kernel whose loads are the first line's (8 MB) and whose store is the second's (4 MB)."""

STEPPER = """
import torch

step = 0

def stepper(x):
    global step
    step += 1
    return x * step

def inputs(device):
    return (torch.ones(100, device=device),)
"""
"""A global the target changes at every call: dynamo specialises on its value, so every call fails
its guard and compiles again (named in the recompile's reason: `step`)."""
