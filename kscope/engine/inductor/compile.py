"""Inductor as a backend: compile one graph dynamo hands over, and free what reduce-overhead's CUDA
graphs hold (torch._inductor.compile_fx, torch._inductor.cudagraph_trees)."""

from __future__ import annotations


def compile_with_inductor(gm, example_inputs):
    """What torch.compile's own inductor backend does with a graph, with the options in force."""
    from torch._inductor.compile_fx import compile_fx

    return compile_fx(gm, example_inputs)


def reset_cuda_graphs() -> None:
    """Free the CUDA graphs reduce-overhead recorded, as inductor's backend does on dynamo's reset."""
    import torch

    if torch.cuda.is_available() and torch.cuda.is_initialized():
        from torch._inductor.cudagraph_trees import reset_cudagraph_trees

        reset_cudagraph_trees()
