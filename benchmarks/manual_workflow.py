"""The article's manual workflow, as a user would run it by hand (CPU variant): profile eager,
compile, warm up, profile compiled, print both tables. benchmarks/once_vs_manual.py times it."""

import torch
from torch.profiler import ProfilerActivity, profile

activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
device = "cuda" if torch.cuda.is_available() else "cpu"


def add_relu(a, b):
    return (a + b).relu()


a = torch.randn(1_000_000, device=device)
b = torch.randn(1_000_000, device=device)

with profile(activities=activities) as prof:
    add_relu(a, b)
print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))

compiled = torch.compile(add_relu)
compiled(a, b)  # warm-up: this call compiles
with profile(activities=activities) as prof:
    compiled(a, b)
print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
