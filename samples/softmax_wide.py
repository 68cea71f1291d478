"""Softmax over rows of length n, 8 rows: sweep it (`kscope samples/softmax_wide.py --sweep`) to
watch inductor change the kernel as rows grow. On the CPU one C++ kernel runs serially for short
rows, in parallel over the 8 rows for longer ones, and for long rows splits each row's reductions
across threads; on CUDA a persistent reduction (a row in registers) becomes a looped one."""

import torch


def softmax_rows(x):
    return torch.softmax(x, dim=-1)


def inputs(device, n=4096):
    return (torch.randn(8, n, device=device),)
