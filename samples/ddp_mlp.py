"""A small MLP wrapped in DistributedDataParallel: `kscope samples/ddp_mlp.py --nproc 2 --backward`.

kscope sets up the process group before it loads this file, so DDP can be made at module level.
Backward all-reduces the gradients, in buckets: these parameters (49,472 fp32, 197,888 B) fit in
DDP's first bucket (1 MiB), so each backward all-reduces them once.
"""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

torch.manual_seed(0)  # the same initial weights on every rank (DDP also broadcasts rank 0's)
model = DDP(torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.GELU(), torch.nn.Linear(256, 64)))


def inputs(device):
    torch.manual_seed(1 + dist.get_rank())  # each rank its own batch
    return (torch.randn(512, 128, device=device),)
