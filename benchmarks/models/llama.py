"""A transformers LLaMA from a small config (random weights, nothing downloaded): 2 layers of 256
(4 heads, 2 of them key/value heads: grouped-query attention), a SiLU-gated MLP of 688, 2 x 64
tokens (issue 37). Needs transformers (not a dependency of kscope)."""

import torch
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
model = LlamaForCausalLM(LlamaConfig(num_hidden_layers=2, hidden_size=256, intermediate_size=688,
                                     num_attention_heads=4, num_key_value_heads=2, vocab_size=1000,
                                     max_position_embeddings=128)).eval()


def logits(ids):
    return model(ids).logits


def inputs(device):
    model.to(device)
    return (torch.randint(0, 1000, (2, 64), device=device),)
