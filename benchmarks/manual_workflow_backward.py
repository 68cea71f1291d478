"""The article's manual workflow extended to a training step, as a user would write it by hand
(CPU variant): profile eager forward + `.sum().backward()`, compile, warm up, profile the compiled
forward + backward, print both tables. benchmarks/backward_latency.py times it, with a fresh
constant after the GELU each time (argv[1]): the edit a user just made, in no cache, as for kscope."""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
device = "cuda" if torch.cuda.is_available() else "cpu"


class MLP(nn.Module):  # samples/train_mlp.py
    def __init__(self, d=256, hidden=1024):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)) * SCALE)


SCALE = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0


mlp = MLP().to(device)
x = torch.randn(512, 256, device=device)

with profile(activities=activities) as prof:
    mlp(x).sum().backward()
print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))

compiled = torch.compile(mlp)
compiled(x).sum().backward()  # warm-up: compiles the forward, then the backward
with profile(activities=activities) as prof:
    compiled(x).sum().backward()
print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))
