"""A whole training step as written: forward, loss, backward and an AdamW step (run it without
--backward: it calls backward() itself). torch.compile breaks the graph at `loss.backward()`;
autograd then runs the compiled backward graph, and the optimizer's step is compiled on its own
into one kernel per parameter group, where eager launches a dozen small ops per parameter."""

import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(128, 512), nn.GELU(), nn.Linear(512, 10))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


def train_step(x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


def inputs(device, n=256):
    model.to(device)
    return torch.randn(n, 128, device=device), torch.randint(0, 10, (n,), device=device)
