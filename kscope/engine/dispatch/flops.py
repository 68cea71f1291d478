"""FLOPs of one dispatched ATen op, for the eager half (report.roofline says the rules).

A matmul, convolution or attention op: `torch.utils.flop_counter`'s formula at its shapes (the
registry FlopCounterMode uses: 2·M·N·K for mm). An op tagged pointwise by ATen (add, mul, relu,
exp, where, ...): one FLOP per output element. A reduction: one per input element. An op that only
moves or views data: 0. Any other op (a layer norm's fused kernel, a sort): unknown, None.
"""

from __future__ import annotations

import torch

from kscope.engine.compat.pytree import tree_leaves

_aten = torch.ops.aten

REDUCTIONS = frozenset({
    _aten.sum, _aten.mean, _aten.amax, _aten.amin, _aten.max, _aten.min, _aten.prod, _aten.var, _aten.std,
    _aten.var_mean, _aten.std_mean, _aten.linalg_vector_norm, _aten.norm, _aten.logsumexp, _aten.argmax,
    _aten.argmin, _aten.any, _aten.all, _aten.cumsum, _aten.cumprod,
})
"""One FLOP per element of the input: each is combined once."""

MOVES = frozenset({
    _aten.copy_, _aten.clone, _aten._to_copy, _aten.cat, _aten.stack, _aten.index, _aten.index_select,
    _aten.embedding, _aten.gather, _aten.take, _aten.fill_, _aten.zero_, _aten.zeros_like, _aten.ones_like,
    _aten.full_like, _aten.empty, _aten.empty_like, _aten.empty_strided, _aten.new_empty, _aten.new_empty_strided,
    _aten.new_zeros, _aten.new_ones, _aten.zeros, _aten.ones, _aten.full, _aten.constant_pad_nd, _aten.repeat,
    _aten.expand, _aten.permute, _aten.transpose, _aten.t, _aten.view, _aten._unsafe_view, _aten.reshape,
    _aten.as_strided, _aten.slice, _aten.select, _aten.unsqueeze, _aten.squeeze, _aten.detach, _aten.alias,
    _aten.split, _aten.split_with_sizes, _aten.chunk, _aten.narrow, _aten.contiguous, _aten.unbind, _aten.lift_fresh,
    _aten.scalar_tensor, _aten.arange, _aten.bernoulli_, _aten.uniform_, _aten.normal_, _aten.random_,
    _aten._local_scalar_dense, _aten.resize_, _aten.set_,
})
"""Ops that copy, fill, view or draw random numbers: no floating-point arithmetic."""


def op_flops(func, args, kwargs, out) -> int | None:
    packet = func.overloadpacket
    from torch.utils.flop_counter import flop_registry

    if packet in flop_registry:
        try:
            return int(flop_registry[packet](*args, **kwargs, out_val=out))
        except Exception:  # a formula that cannot read these arguments
            return None
    if packet in MOVES:
        return 0
    if torch.Tag.pointwise in func.tags:
        return sum(t.numel() for t in tree_leaves(out) if isinstance(t, torch.Tensor))
    if packet in REDUCTIONS:
        first = next((t for t in tree_leaves(args) if isinstance(t, torch.Tensor)), None)
        return None if first is None else first.numel()
    return None
