"""A diffusers UNet2DModel from a tiny config (random weights, nothing downloaded): two down and
two up blocks of 32/64 channels, one pair with attention, a 16x16 input (issue 34). Needs diffusers
(not a dependency of kscope): `pip install diffusers`."""

import torch
from diffusers import UNet2DModel

torch.manual_seed(0)
model = UNet2DModel(
    sample_size=16, in_channels=3, out_channels=3, layers_per_block=1,
    block_out_channels=(32, 64), down_block_types=("DownBlock2D", "AttnDownBlock2D"),
    up_block_types=("AttnUpBlock2D", "UpBlock2D"), norm_num_groups=8,
).eval()


def denoise(x, t):
    return model(x, t).sample


def inputs(device):
    model.to(device)
    return torch.randn(1, 3, 16, 16, device=device), torch.tensor([10], device=device)
