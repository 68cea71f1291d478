"""Two ranks all-reduce between pointwise work: `kscope samples/allreduce.py --nproc 2`.

Eager runs mul, relu, the all_reduce, add, sigmoid; compiled fuses the work before the collective
into one kernel and the work after it into another, the all_reduce between them.
"""

import torch
import torch.distributed as dist


def scale_reduce(x):
    y = (x * 2).relu()
    dist.all_reduce(y)  # 1,000,000 fp32: 4,000,000 B per call per rank
    return (y + 1).sigmoid()


def inputs(device, n=1_000_000):
    torch.manual_seed(dist.get_rank())  # each rank its own data, as in data parallelism
    return (torch.randn(n, device=device),)
