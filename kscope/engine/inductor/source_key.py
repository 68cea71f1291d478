"""Where a graph's ops came from, in inductor's cache key.

Inductor caches a graph's provenance (file, line, code) with its code, and its key ignores where
the ops came from: a hit could point kernels at another file with the same graph, or at the lines
of an earlier save. A pass that changes nothing adds, through its uuid, the user's stack traces of
the graph's ops to the key.

A backward graph is compiled lazily, at the first backward, outside the compile of its forward:
its key gets the keys of the forwards compiled so far in the run (the same code compiles the same
forwards in the same order, so the same backward gets the same key).
"""

from __future__ import annotations

import contextlib
import hashlib

import torch
from torch._inductor.custom_graph_pass import CustomGraphPass


class SourceKey(CustomGraphPass):
    def __init__(self, key: str):
        self.key = key

    def __call__(self, graph) -> None:
        return None

    def uuid(self) -> str:
        return self.key


class _BackwardKey(SourceKey):
    def __init__(self, keys: SourceKeys):
        super().__init__("")
        self.keys = keys

    def uuid(self) -> str:
        return hashlib.sha256(("backward\n" + "\n".join(self.keys.keys)).encode()).hexdigest()


class SourceKeys:
    """The source keys of one run's graphs. A user's own post-grad pass is left alone (and then
    nothing is added: inductor's key has the user's pass instead)."""

    def __init__(self):
        self.keys: list[str] = []
        self.user_pass = torch._inductor.config.post_grad_custom_post_pass is not None

    def forward(self, gm) -> contextlib.AbstractContextManager:
        """Around the compile of a graph dynamo handed over."""
        if self.user_pass:
            return contextlib.nullcontext()
        traces = "\n".join(node.meta.get("stack_trace") or "" for node in gm.graph.nodes)
        self.keys.append(hashlib.sha256(traces.encode()).hexdigest())
        return torch._inductor.config.patch(post_grad_custom_post_pass=SourceKey(self.keys[-1]))

    def backward(self) -> contextlib.AbstractContextManager:
        """Around every call of the compiled target: a backward graph compiles inside one."""
        if self.user_pass:
            return contextlib.nullcontext()
        return torch._inductor.config.patch(post_grad_custom_post_pass=_BackwardKey(self))
