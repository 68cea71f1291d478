"""Which line allocated each tensor of an eager call: a dispatch mode, on the call whose memory is
recorded, notes the place of each op whose output has a storage none of its inputs had (a new
allocation, not a view or an in-place write), in order. The profiler's own stacks cannot say it:
an op run from an operator (`a + b`) has no call event, only its function's caller's line.
Never on a compiled call: a dispatch mode changes what dynamo guards on."""

from __future__ import annotations

import sys
from collections import defaultdict, deque

import torch
from kscope.engine.compat.pytree import tree_leaves

from kscope.engine.compat.dispatch import TorchDispatchMode
from kscope.engine.compat.pytree import tree_leaves
from kscope.engine.target.project import place_of
from kscope.report.place import Place


class OutputPlaces(TorchDispatchMode):
    """ptr of a new output storage -> the places of the ops that allocated it, in order (a freed
    pointer is reused by a later allocation)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_ptr: dict[int, deque[Place | None]] = defaultdict(deque)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        inputs = {_ptr(t) for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)}
        fresh = {_ptr(t) for t in tree_leaves(out) if isinstance(t, torch.Tensor)} - inputs - {0}
        if fresh:
            place = place_of(_frames(sys._getframe(1)))
            for ptr in fresh:
                self.by_ptr[ptr].append(place)
        return out

    def take(self, ptr: int) -> Place | None:
        """The place of the next allocation at ptr (None: no op of the call made it)."""
        queue = self.by_ptr.get(ptr)
        return queue.popleft() if queue else None


def _ptr(t: torch.Tensor) -> int:
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):  # a tensor without storage (a fake, a sparse one)
        return 0


def _frames(frame):
    while frame is not None:
        yield frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
