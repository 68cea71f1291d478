"""Eager memory traffic by dispatch accounting.

A TorchDispatchMode sees every ATen op the target runs (after autograd and composite ops are
decomposed). Each op reads each distinct input storage once and writes its outputs: `x + x`
reads x once, `(a + b).relu()` reads a, b, writes tmp, reads tmp, writes c. Views move nothing.
Each op runs inside a profiler marker (`kscope::op#N`), so the chrome trace tells which
top-level op (the launch) it belongs to.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import torch
from torch.profiler import record_function
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from kscope.engine.kernels import MARKER_PREFIX


@dataclass
class OpTraffic:
    marker: int
    op: str
    read: int
    written: int
    line: int | None


def tensor_bytes(t: torch.Tensor) -> int:
    """Bytes of distinct memory a tensor view covers (a broadcast dim of stride 0 counts once)."""
    n = 1
    for size, stride in zip(t.shape, t.stride()):
        if stride != 0:
            n *= size
    if t.numel() == 0:
        n = 0
    return n * t.element_size()


def _distinct_bytes(tensors: list[torch.Tensor]) -> int:
    per_storage: dict[int, dict[tuple, int]] = {}
    cap: dict[int, int] = {}
    for t in tensors:
        try:
            storage = t.untyped_storage()
        except (RuntimeError, NotImplementedError):
            continue
        key = storage.data_ptr() or id(storage)
        view = (t.storage_offset(), tuple(t.shape), tuple(t.stride()), t.dtype)
        per_storage.setdefault(key, {})[view] = tensor_bytes(t)
        cap[key] = storage.nbytes()
    return sum(min(sum(views.values()), cap[k]) for k, views in per_storage.items())


class TrafficMode(TorchDispatchMode):
    """Records bytes read and written, and the user's line, for each ATen op dispatched."""

    def __init__(self, user_file: str):
        super().__init__()
        self.user_file = os.path.realpath(user_file)
        self.ops: list[OpTraffic] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        marker = len(self.ops)
        with record_function(f"{MARKER_PREFIX}{marker}"):
            out = func(*args, **kwargs)
        if func.is_view or func.overloadpacket in _NO_TRAFFIC:
            read = written = 0
        else:
            write_only = _write_only_args(func, args, kwargs)
            inputs = [
                t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor) and id(t) not in write_only
            ]
            outputs = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
            read, written = _distinct_bytes(inputs), _distinct_bytes(outputs)
        self.ops.append(OpTraffic(marker, str(func.overloadpacket), read, written, self._user_line()))
        return out

    def _user_line(self) -> int | None:
        frame = sys._getframe(2)
        while frame is not None:
            if os.path.realpath(frame.f_code.co_filename) == self.user_file:
                return frame.f_lineno
            frame = frame.f_back
        return None


_NO_TRAFFIC = {
    torch.ops.aten.empty,
    torch.ops.aten.empty_strided,
    torch.ops.aten.empty_like,
    torch.ops.aten.new_empty,
    torch.ops.aten.new_empty_strided,
    torch.ops.aten._local_scalar_dense,
    torch.ops.aten.lift_fresh,
    torch.ops.aten.detach,
    torch.ops.aten.resize_,
}


def _write_only_args(func, args, kwargs) -> set[int]:
    """Ids of `out=` tensors: written by the op, not read."""
    ids = set()
    for arg in func._schema.arguments:
        if arg.kwarg_only and arg.alias_info is not None and arg.alias_info.is_write:
            t = kwargs.get(arg.name)
            for leaf in tree_leaves(t):
                if isinstance(leaf, torch.Tensor):
                    ids.add(id(leaf))
    return ids
