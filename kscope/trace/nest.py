"""Host-side profiler events nested by time on each thread, each knowing what it inherits from
the events around it: the profiled call, the compiled graph and region, the phase (see
trace.kernels). Pure Python: no torch import here."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

_REGION = re.compile(r"^Torch-Compiled Region: (\d+/\d+)")
_CALL_KEY = re.compile(r"^## Call CompiledFxGraph (\S+) ##")
CALL_PREFIX = "kscope::call#"
"""record_function around each profiled call ("kscope::call#3"): launches say which call they were in."""
_SEGMENT = re.compile(re.escape(CALL_PREFIX) + r"(.*)$")
_BACKWARD = "autograd::engine::evaluate_function:"
OP_NAMESPACES = ("aten::", "mkl::", "mkldnn::", "onednn::", "quantized::")
"""Operators that do work: ATen's, and the CPU libraries' that inductor calls on frozen weights
(`mkl::_mkl_linear`, `mkldnn::_linear_pointwise`)."""
_OPTIMIZER = ("Optimizer.step#", "Optimizer.zero_grad#")


class Node:
    """A host event in its nest, with what it inherits from the events around it (worked out
    once, when the nest is built: traces of thousands of ops are common)."""

    __slots__ = (
        "idx", "ev", "name", "parent", "children", "top", "call", "segment", "region", "phase", "seq", "autograd"
    )

    def __init__(self, idx: int, ev: dict, parent: Node | None, custom: Collection[str] = ()):
        self.idx, self.ev, self.parent, self.children = idx, ev, parent, []
        self.name: str = ev.get("name", "")
        self.top: Node | None = parent.top if parent is not None else None
        """The outermost ATen (or custom) op at or above this event."""
        if self.top is None and (self.name.startswith(OP_NAMESPACES) or self.name in custom):
            self.top = self
        self.call = self.segment = self.region = self.seq = self.autograd = None
        self.phase = "forward"
        if parent is not None:
            self.call, self.segment, self.region = parent.call, parent.segment, parent.region
            self.phase, self.seq, self.autograd = parent.phase, parent.seq, parent.autograd
        if self.name[:1] in ("#", "k", "T"):  # "## Call…", "kscope::call#…", "Torch-Compiled Region…"
            self.call = match(_CALL_KEY, self.name) or self.call
            self.segment = match(_SEGMENT, self.name) or self.segment
            self.region = match(_REGION, self.name) or self.region
        elif self.name.startswith(_BACKWARD):
            self.phase, self.seq = "backward", ev.get("args", {}).get("Sequence number")
            self.autograd = self.name[len(_BACKWARD):].strip().removeprefix("torch::autograd::")
        elif self.name.startswith(_OPTIMIZER):
            self.phase = "optimizer"

    def ancestors(self) -> Iterable[Node]:
        p = self.parent
        while p is not None:
            yield p
            p = p.parent

    def walk(self) -> Iterable[Node]:
        yield self
        for c in self.children:
            yield from c.walk()


def match(pattern: re.Pattern, name: str) -> str | None:
    m = pattern.match(name)
    return m.group(1) if m else None


def build_cpu_forest(events: list[dict], custom: Collection[str] = ()) -> list[Node]:
    """Nest host-side complete events by time on each thread; return them in time order."""
    host = [
        e
        for e in events
        if e.get("ph") == "X"
        and e.get("cat") in ("cpu_op", "user_annotation", "cuda_runtime", "cuda_driver")
    ]
    host.sort(key=lambda e: (e.get("pid"), e.get("tid"), e.get("ts", 0), -e.get("dur", 0)))
    nodes: list[Node] = []
    stack: list[Node] = []
    ends: list[float] = []
    thread = None
    for i, e in enumerate(host):
        key = (e.get("pid"), e.get("tid"))
        if key != thread:
            stack, ends, thread = [], [], key
        start = float(e.get("ts", 0))
        while stack and start >= ends[-1]:
            stack.pop()
            ends.pop()
        node = Node(i, e, stack[-1] if stack else None, custom)
        if stack:
            stack[-1].children.append(node)
        stack.append(node)
        ends.append(_end(e))
        nodes.append(node)
    nodes.sort(key=lambda n: float(n.ev.get("ts", 0)))
    _adopt_other_threads(nodes)
    return nodes


def _adopt_other_threads(nodes: list[Node]) -> None:
    """An event outside any profiled call's marker on its own thread, but that starts inside one
    on another (autograd's engine threads), belongs to that call."""
    calls = [(float(n.ev.get("ts", 0)), _end(n.ev), n.segment) for n in nodes if n.segment and n.name.startswith(CALL_PREFIX)]
    if not calls:
        return
    for n in nodes:
        if n.parent is not None or n.segment is not None:
            continue
        start = float(n.ev.get("ts", 0))
        segment = next((seg for begin, end, seg in calls if begin <= start < end), None)
        if segment is not None:
            for d in n.walk():
                d.segment = d.segment or segment


def _end(e: dict) -> float:
    return float(e.get("ts", 0)) + float(e.get("dur", 0))
