"""Eager memory traffic by dispatch accounting.

A TorchDispatchMode sees every ATen op the target runs (after autograd and composite ops are
decomposed). Each op reads each distinct input storage once and writes its outputs: `x + x`
reads x once, `(a + b).relu()` reads a, b, writes tmp, reads tmp, writes c.
- An op whose outputs all live in its inputs' storage and that mutates nothing moves no data:
  views, `detach`, `alias`, and `_unsafe_view` (which `matmul`/`linear` dispatch after `mm`,
  although torch does not flag it as a view). In-place ops (`add_`, `relu_`) mutate: they count;
  `copy_`, `fill_`, `zero_` and the random fills (`bernoulli_`, train dropout's mask) write `self`
  without reading it.
- An op under which the dispatcher runs nothing (eval `dropout` returns its input) is seen by no
  TorchDispatchMode: it moves nothing, and it is no launch either (trace.kernels).
- A gather (`index`, `embedding`, `gather`, `index_select`, `take`, NLL loss's pick of the target
  class) reads min(the elements it gathers, its whole source) plus its indices: a few rows of a
  table are not the table, and rows drawn twice are not read twice from memory once the whole
  table has been read.
- A custom op (`torch.library.custom_op`, an extension's op: kernels.is_custom_op) is one op to
  the mode, its kernel below it: kscope runs that kernel with the mode on, so the ATen ops its body
  runs are counted as they run (`a + 2 * b`: mul writes a temporary that add reads back), at the
  line that called the custom op. A kernel of its own (C++, Triton), whose ATen ops move nothing,
  counts the custom op's inputs and outputs.
Each op runs inside a profiler marker (`kscope::op#N`), so the chrome trace tells which launch it
belongs to.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import torch
from torch.profiler import record_function

from kscope.engine.compat.dispatch import TorchDispatchMode, keys_below_python
from kscope.engine.compat.pytree import tree_leaves
from kscope.engine.dispatch.flops import op_flops
from kscope.engine.target.project import frames_from, place_of
from kscope.report.place import Place
from kscope.trace.kernels import MARKER_PREFIX, is_custom_op


@dataclass
class OpTraffic:
    marker: int
    op: str
    read: int
    written: int
    place: Place | None
    """Where the op was issued (engine.target.project.place_of): the user's line, in its file."""
    reads: frozenset = frozenset()
    """The storages it read (round_trips: what an earlier op wrote and this one reads back)."""
    writes: dict = field(default_factory=dict)
    """The storages it wrote -> bytes written there."""
    flops: int | None = 0
    """Its floating-point operations (engine.dispatch.flops); None: unknown."""
    sizes: dict = field(default_factory=dict)
    """Every storage it read or wrote -> the distinct bytes its tensors cover there (the working set)."""


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
    return sum(storage_sizes(tensors).values())


class TrafficMode(TorchDispatchMode):
    """Records bytes read and written, and the place the op was issued from, for each ATen op dispatched."""

    def __init__(self):
        super().__init__()
        self.ops: list[OpTraffic] = []
        self.reads_parameters = False
        """Some op read an nn.Parameter: the target carries weights, so its traffic is no multiple
        of its inputs (Report.reads_parameters)."""
        self._inside: list[Place | None] = []
        """The places of the custom ops whose kernels are running (outermost first)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        marker = len(self.ops)
        if is_custom_op(str(func.overloadpacket).replace(".", "::", 1)):
            keys = keys_below_python(args, kwargs)
            if keys is not None:
                return self._custom(func, keys, args, kwargs)
        with record_function(f"{MARKER_PREFIX}{marker}"):
            out = func(*args, **kwargs)
        read, written = op_traffic(func, args, kwargs, out)
        if not self.reads_parameters:
            self.reads_parameters = any(isinstance(t, torch.nn.Parameter) for t in tree_leaves((args, kwargs)))
        reads, writes = op_storages(func, args, kwargs, out) if read or written else (frozenset(), {})
        self.ops.append(OpTraffic(marker, str(func.overloadpacket), read, written, self._place(), reads, writes,
                                  op_flops(func, args, kwargs, out),
                                  storage_sizes((args, kwargs, out)) if read or written else {}))
        return out

    def _custom(self, func, keys, args, kwargs):
        """Run a custom op's kernel with the mode on (see the module docstring): redispatched
        below the Python key, since calling the op again would come back here. Its own record
        comes first, so that every op keeps the marker of its index."""
        own = OpTraffic(len(self.ops), str(func.overloadpacket), 0, 0, self._place(3))
        self.ops.append(own)
        self._inside.append(own.place)
        try:
            with record_function(f"{MARKER_PREFIX}{own.marker}"), self:
                out = func.redispatch(keys, *args, **kwargs)
        finally:
            self._inside.pop()
        if not any(op.read or op.written for op in self.ops[own.marker + 1:]):
            own.flops = None  # a kernel of its own (C++, Triton): what it computes is not known
            own.read, own.written = op_traffic(func, args, kwargs, out)
            own.reads, own.writes = op_storages(func, args, kwargs, out)
            own.sizes = storage_sizes((args, kwargs, out))
        return out

    @property
    def dispatched(self) -> set[str]:
        """The ops the dispatcher ran, as the profiler names them ("aten::_log_softmax")."""
        return {op.op.replace(".", "::", 1) for op in self.ops}

    def _place(self, depth: int = 2) -> Place | None:
        if self._inside:
            return self._inside[0]  # an op a custom op's kernel ran: the line that called it
        return place_of(frames_from(sys._getframe(depth)))  # what called the op (0: here, 1: __torch_dispatch__)


def op_traffic(func, args, kwargs, out) -> tuple[int, int]:
    """(bytes read, bytes written) of one dispatched op (see the module docstring)."""
    if func.overloadpacket in _ALLOCATION or _only_aliases(func, args, kwargs, out):
        return 0, 0
    write_only = _write_only_args(func, args, kwargs)
    inputs = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor) and id(t) not in write_only]
    outputs = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
    gather = _GATHERS.get(func.overloadpacket)
    if gather is None or not inputs:
        return _distinct_bytes(inputs), _distinct_bytes(outputs)
    source_at, count_at = gather
    source = args[source_at] if len(args) > source_at else None
    counted = outputs if count_at is None else [args[count_at]] if len(args) > count_at else []
    if not isinstance(source, torch.Tensor) or not all(isinstance(t, torch.Tensor) for t in counted):
        return _distinct_bytes(inputs), _distinct_bytes(outputs)
    gathered = min(sum(t.numel() for t in counted) * source.element_size(), tensor_bytes(source))
    rest = [t for t in inputs if t is not source]
    return gathered + _distinct_bytes(rest), _distinct_bytes(outputs)


def op_storages(func, args, kwargs, out) -> tuple[frozenset, dict]:
    """(the storages an op read, {storage it wrote: bytes}), by the same rules as op_traffic."""
    write_only = _write_only_args(func, args, kwargs)
    leaves = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
    reads = {_storage_key(t) for t in leaves if id(t) not in write_only} - {None}
    writes: dict = {}
    for t in [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)] + [t for t in leaves if id(t) in write_only]:
        key = _storage_key(t)
        if key is not None:
            writes[key] = max(writes.get(key, 0), tensor_bytes(t))
    return frozenset(reads), writes


def storage_sizes(tensors) -> dict:
    """The storages of the tensors among `tensors` -> the distinct bytes their views cover there
    (at most the storage's size)."""
    views: dict = {}
    cap: dict = {}
    for t in tree_leaves(tensors):
        if isinstance(t, torch.Tensor) and (key := _storage_key(t)) is not None:
            views.setdefault(key, {})[(t.storage_offset(), tuple(t.shape), tuple(t.stride()), t.dtype)] = tensor_bytes(t)
            cap[key] = t.untyped_storage().nbytes()
    return {key: min(sum(v.values()), cap[key]) for key, v in views.items()}


def storages(tensors) -> set:
    """The storages of the tensors among `tensors` (a call's outputs)."""
    return {_storage_key(t) for t in tree_leaves(tensors) if isinstance(t, torch.Tensor)} - {None}


# Ops that only allocate: their output is new memory nobody has written yet.
_ALLOCATION = {
    torch.ops.aten.empty,
    torch.ops.aten.empty_strided,
    torch.ops.aten.empty_like,
    torch.ops.aten.new_empty,
    torch.ops.aten.new_empty_strided,
    torch.ops.aten._local_scalar_dense,
    torch.ops.aten.resize_,
}

# Gathers: op -> (position of the tensor gathered from, position of the tensor whose numel is the
# number of elements gathered, or None for the output's).
_GATHERS = {
    torch.ops.aten.index: (0, None),
    torch.ops.aten.embedding: (0, None),
    torch.ops.aten.gather: (0, None),
    torch.ops.aten.index_select: (0, None),
    torch.ops.aten.take: (0, None),
    torch.ops.aten.nll_loss_forward: (0, 1),
    torch.ops.aten.nll_loss2d_forward: (0, 1),
}


def _storage_key(t: torch.Tensor):
    try:
        storage = t.untyped_storage()
    except (RuntimeError, NotImplementedError):
        return None
    return storage.data_ptr() or id(storage)


def _only_aliases(func, args, kwargs, out) -> bool:
    """The op mutates nothing and every output is in an input's storage: it moved no data."""
    if any(a.alias_info is not None and a.alias_info.is_write for a in func._schema.arguments):
        return False
    outputs = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
    if not outputs:
        return False
    inputs = {_storage_key(t) for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)}
    return all(_storage_key(t) in inputs and _storage_key(t) is not None for t in outputs)


# In-place ops whose result does not depend on what `self` held: they write it without reading it
# (the random fills too: train-mode dropout draws its mask with bernoulli_ into new memory).
_OVERWRITES = {
    torch.ops.aten.copy_,
    torch.ops.aten.fill_,
    torch.ops.aten.zero_,
    torch.ops.aten.bernoulli_,
    torch.ops.aten.uniform_,
    torch.ops.aten.normal_,
    torch.ops.aten.random_,
    torch.ops.aten.exponential_,
}


def _write_only_args(func, args, kwargs) -> set[int]:
    """Ids of `out=` tensors, and of `self` of an op that overwrites it: written, not read."""
    ids = set()
    if func.overloadpacket in _OVERWRITES and args and isinstance(args[0], torch.Tensor):
        ids.add(id(args[0]))
    for arg in func._schema.arguments:
        if arg.kwarg_only and arg.alias_info is not None and arg.alias_info.is_write:
            t = kwargs.get(arg.name)
            for leaf in tree_leaves(t):
                if isinstance(leaf, torch.Tensor):
                    ids.add(id(leaf))
    return ids
