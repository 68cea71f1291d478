"""A transformers GPT-2 from a small config (random weights, nothing downloaded): 4 layers of 256,
2 x 64 tokens (issue 34). Needs transformers (not a dependency of kscope)."""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_layer=4, n_embd=256, n_head=4, vocab_size=1000, n_positions=128)).eval()


def logits(ids):
    return model(ids).logits


def inputs(device):
    model.to(device)
    return (torch.randint(0, 1000, (2, 64), device=device),)
