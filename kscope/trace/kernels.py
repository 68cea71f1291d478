"""Profiler chrome-trace events -> launches.

One set of rules reads both a live profile (exported as a chrome trace) and a saved trace file,
so `kscope trace.json` and the live engine agree. Pure Python: no torch import here.

Rules:
- CUDA (the trace holds device events): a launch is a device event of category "kernel";
  "gpu_memcpy" and "gpu_memset" are counted apart. A kernel is tied to the CPU op that launched
  it through the runtime call that shares its "correlation" id.
- CPU: a launch is an inductor C++ kernel (`graph_N_cpp_fused_*`, recorded when
  `cpp.enable_kernel_profile` is on), or an ATen op that does work: itself or an op below it is
  not a view, metadata or allocation (`aten::relu` calling `aten::clamp_min` is one launch,
  `aten::reshape` calling only `aten::view` is none). Which ATen op: when the caller knows the
  ops the dispatcher ran after composite ops were decomposed (`dispatch_ops`, what a
  TorchDispatchMode saw), the outermost such ops under each top-level op are the launches
  (`aten::cross_entropy_loss` is two: `_log_softmax` and `nll_loss_forward`), and the top-level op
  is kept as the composite the user wrote; otherwise (a saved trace) the top-level op itself.
  A custom op the dispatcher ran ("mylib::add2", see is_custom_op) is a top-level op too: its
  launches are the ATen ops its kernel ran that do work, else the custom op itself.
- Compiled code runs under `## Call CompiledFxGraph KEY ##`, KEY being inductor's FX-graph-cache
  key: each launch keeps it, so it can be tied to the graph that made it (forward or backward).
- Phase: a launch under `autograd::engine::evaluate_function: XBackward0` is backward (it keeps
  that event's sequence number, the number of the forward op it differentiates); under an
  optimizer's `Optimizer.step#…` or `Optimizer.zero_grad#…` it is the optimizer's; else forward.
- Autograd's engine may run backward on threads of its own (CUDA): an event on another thread
  that starts inside a profiled call's marker belongs to that call.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field

from kscope.trace.collectives import find_collectives

# Views, metadata and allocation: ATen ops that move no data by themselves. Composite ops that
# may or may not copy (reshape, contiguous, to, ...) are listed too: their children decide.
NONWORK_OPS = frozenset(
    "aten::" + n
    for n in """
    alias as_strided broadcast_tensors chunk conj _conj detach detach_ diagonal dim empty
    empty_like empty_strided expand expand_as flatten imag is_nonzero item lift_fresh
    _local_scalar_dense movedim moveaxis narrow new_empty new_empty_strided numel permute real
    reshape _reshape_alias resize_ resolve_conj resolve_neg result_type select set_ size slice
    split split_with_sizes squeeze stride swapaxes t transpose type_as unbind unflatten unfold
    unsqueeze view view_as view_as_complex view_as_real _unsafe_view contiguous to
    _has_compatible_shallow_copy_type _nested_tensor_from_mask_left_aligned tensor_split
    """.split()
)

_CPP_KERNEL = re.compile(r"^(?:graph_\d+_)?(cpp_\w+)$")
_TEMPLATE_KERNEL = re.compile(r"^graph_\d+_(\w+_kernel)$")
"""A C++ template kernel's profiler label ("graph_0_gemm_m256n1024k512_kernel"): inductor's
max-autotune GEMM, labelled by the template rather than by its Python name (see provenance)."""
_REGION = re.compile(r"^Torch-Compiled Region: (\d+/\d+)")
_CALL_KEY = re.compile(r"^## Call CompiledFxGraph (\S+) ##")
MARKER_PREFIX = "kscope::op#"
CALL_PREFIX = "kscope::call#"
"""record_function around each profiled call ("kscope::call#3"): launches say which call they were in."""
_SEGMENT = re.compile(re.escape(CALL_PREFIX) + r"(.*)$")
_BACKWARD = "autograd::engine::evaluate_function:"
OP_NAMESPACES = ("aten::", "mkl::", "mkldnn::", "onednn::", "quantized::")
"""Operators that do work: ATen's, and the CPU libraries' that inductor calls on frozen weights
(`mkl::_mkl_linear`, `mkldnn::_linear_pointwise`)."""
TORCH_NAMESPACES = frozenset(
    ("aten", "prim", "prims", "profiler", "torch", "autograd", "inductor", "_dtensor")
    + ("c10d", "_c10d_functional", "_c10d_functional_autograd")
) | {ns.removesuffix("::") for ns in OP_NAMESPACES}
"""Namespaces of torch's own operators and profiler events. Any other is a custom op's
(`torch.library.custom_op`, an extension's TORCH_LIBRARY); collectives are counted apart
(trace.collectives)."""
GRAPH_LAUNCH = "cudaGraphLaunch"
"""The runtime call that replays a CUDA graph: the kernels inside share its correlation id."""
_OPTIMIZER = ("Optimizer.step#", "Optimizer.zero_grad#")


@dataclass
class Launch:
    name: str
    dur_us: float
    kind: str
    """"kernel" (device kernel or inductor kernel), "op" (eager ATen op), "extern" (ATen op run by compiled code)."""
    region: str | None = None
    """The torch.compile frame ("0/0") it ran under, if any."""
    owner: int | None = None
    """Index of the top-level CPU op it belongs to (for joining with dispatch accounting)."""
    owner_name: str | None = None
    call: str | None = None
    """The FX-graph-cache key of the compiled graph it ran in ("## Call CompiledFxGraph KEY ##")."""
    composite: str | None = None
    """The composite op the user called that decomposed into this launch ("aten::cross_entropy_loss");
    in backward, the autograd node that ran it ("ReluBackward0")."""
    segment: str | None = None
    """The profiled call it ran in: what follows CALL_PREFIX in the enclosing marker ("3")."""
    phase: str = "forward"
    """"forward", "backward" or "optimizer" (see the module docstring)."""
    seq: int | None = None
    """A backward launch: the autograd sequence number of the forward op it differentiates."""
    in_graph: bool = False
    """A device kernel that ran inside a CUDA graph replay (launched by cudaGraphLaunch)."""


@dataclass
class TraceSummary:
    device: str
    launches: list[Launch] = field(default_factory=list)
    memcpy: int = 0
    memset: int = 0
    markers: dict[int, int] = field(default_factory=dict)
    """kscope marker number -> index of the top-level op it ran under."""
    copies: list[tuple[str, str | None]] = field(default_factory=list)
    """("memcpy" | "memset", the profiled call it ran in) for each device copy."""
    graph_launches: list[str | None] = field(default_factory=list)
    """The profiled call each CUDA graph launch (cudaGraphLaunch) ran in: one launch, many kernels."""
    forward_seq: dict[int, list[int]] = field(default_factory=dict)
    """Autograd sequence number of a forward op -> the kscope markers that ran under it: with
    Launch.seq, what ties a backward launch to the forward op (and line) it came from."""
    collectives: list = field(default_factory=list)
    """engine.collectives.CollectiveEvent: the collectives that ran (never launches)."""

    def only(self, prefix: str) -> TraceSummary:
        """What ran in the profiled calls whose marker label starts with prefix ("c" of "c3")."""
        mine = [kind for kind, segment in self.copies if segment is not None and segment.startswith(prefix)]
        return TraceSummary(
            self.device,
            [x for x in self.launches if x.segment is not None and x.segment.startswith(prefix)],
            mine.count("memcpy"),
            mine.count("memset"),
            graph_launches=[s for s in self.graph_launches if s is not None and s.startswith(prefix)],
            collectives=[c for c in self.collectives if c.segment is not None and c.segment.startswith(prefix)],
        )


class _Node:
    """A host event in its nest, with what it inherits from the events around it (worked out
    once, when the nest is built: traces of thousands of ops are common)."""

    __slots__ = (
        "idx", "ev", "name", "parent", "children", "top", "call", "segment", "region", "phase", "seq", "autograd"
    )

    def __init__(self, idx: int, ev: dict, parent: _Node | None, custom: Collection[str] = ()):
        self.idx, self.ev, self.parent, self.children = idx, ev, parent, []
        self.name: str = ev.get("name", "")
        self.top: _Node | None = parent.top if parent is not None else None
        """The outermost ATen (or custom) op at or above this event."""
        if self.top is None and (self.name.startswith(OP_NAMESPACES) or self.name in custom):
            self.top = self
        self.call = self.segment = self.region = self.seq = self.autograd = None
        self.phase = "forward"
        if parent is not None:
            self.call, self.segment, self.region = parent.call, parent.segment, parent.region
            self.phase, self.seq, self.autograd = parent.phase, parent.seq, parent.autograd
        if self.name[:1] in ("#", "k", "T"):  # "## Call…", "kscope::call#…", "Torch-Compiled Region…"
            self.call = _match(_CALL_KEY, self.name) or self.call
            self.segment = _match(_SEGMENT, self.name) or self.segment
            self.region = _match(_REGION, self.name) or self.region
        elif self.name.startswith(_BACKWARD):
            self.phase, self.seq = "backward", ev.get("args", {}).get("Sequence number")
            self.autograd = self.name[len(_BACKWARD):].strip().removeprefix("torch::autograd::")
        elif self.name.startswith(_OPTIMIZER):
            self.phase = "optimizer"

    def ancestors(self) -> Iterable[_Node]:
        p = self.parent
        while p is not None:
            yield p
            p = p.parent

    def walk(self) -> Iterable[_Node]:
        yield self
        for c in self.children:
            yield from c.walk()


def is_custom_op(name: str) -> bool:
    """A custom op ("mylib::add2"): an operator outside torch's own namespaces. The dispatcher
    runs its kernel (its Python body, or a C++ one) as one op that the user called: the ATen ops
    that body runs are its launches, shown under its name."""
    namespace, sep, _ = name.partition("::")
    return bool(sep) and namespace.isidentifier() and namespace not in TORCH_NAMESPACES


def _match(pattern: re.Pattern, name: str) -> str | None:
    m = pattern.match(name)
    return m.group(1) if m else None


def load_trace(path: str) -> list[dict]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        data = json.load(f)
    return data["traceEvents"] if isinstance(data, dict) else data


def summarize(
    events: list[dict],
    is_nonwork: Callable[[str], bool] | None = None,
    dispatch_ops: Collection[str] | None = None,
) -> TraceSummary:
    """Classify a trace's events into launches (see the module docstring for the rules)."""
    nonwork = is_nonwork or (lambda name: name in NONWORK_OPS)
    custom = frozenset(op for op in dispatch_ops or () if is_custom_op(op))
    nodes = _build_cpu_forest(events, custom)
    is_cuda = any(e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") for e in events)
    summary = TraceSummary(device="cuda" if is_cuda else "cpu")
    rules = _OpRules(nonwork, dispatch_ops, custom)

    made_node: dict[int, _Node] = {}
    for n in nodes:
        if n.name.startswith(MARKER_PREFIX):
            op = rules.launch_op(n)
            summary.markers[int(n.name[len(MARKER_PREFIX):])] = op.idx if op else -1
        elif n.phase == "forward" and n.name.startswith("aten::"):
            # Every op records the number the next autograd node will get; the last op (in time)
            # that recorded it is the one that made the node (a comparison before it made none).
            seq = n.ev.get("args", {}).get("Sequence number")
            if seq is not None:
                made_node[seq] = n
    for seq, op in made_node.items():
        markers = [int(d.name[len(MARKER_PREFIX):]) for d in op.walk() if d.name.startswith(MARKER_PREFIX)]
        if markers:
            summary.forward_seq[seq] = markers

    if is_cuda:
        by_corr = {}
        for n in nodes:
            corr = n.ev.get("args", {}).get("correlation")
            if corr is not None and n.ev.get("cat") in ("cuda_runtime", "cuda_driver"):
                by_corr[corr] = n
                if n.name.startswith(GRAPH_LAUNCH):
                    summary.graph_launches.append(n.segment)
        for e in events:
            cat = e.get("cat")
            launcher = by_corr.get(e.get("args", {}).get("correlation"))
            if cat in ("gpu_memcpy", "gpu_memset"):
                kind = cat.removeprefix("gpu_")
                setattr(summary, kind, getattr(summary, kind) + 1)
                summary.copies.append((kind, launcher.segment if launcher else None))
            elif cat == "kernel" and not e.get("name", "").startswith("nccl"):  # a collective's own kernel
                op = rules.launch_op(launcher) if launcher else None
                top = launcher.top if launcher else None
                summary.launches.append(
                    Launch(
                        name=e.get("name", ""),
                        dur_us=float(e.get("dur", 0.0)),
                        kind="kernel",
                        region=launcher.region if launcher else None,
                        owner=op.idx if op else None,
                        owner_name=op.name if op else None,
                        call=launcher.call if launcher else None,
                        composite=top.name if top is not None and op is not None and top is not op else None,
                        segment=launcher.segment if launcher else None,
                        phase=launcher.phase if launcher else "forward",
                        seq=launcher.seq if launcher else None,
                        in_graph=launcher is not None and launcher.name.startswith(GRAPH_LAUNCH),
                    )
                )
        summary.launches.sort(key=lambda launch: launch.owner if launch.owner is not None else -1)
        summary.collectives = find_collectives(nodes, summary.launches)
        return summary

    for n in nodes:
        m = _CPP_KERNEL.match(n.name) or (_TEMPLATE_KERNEL.match(n.name) if n.call else None)
        if m and n.ev.get("cat") == "cpu_op":
            summary.launches.append(
                Launch(
                    m.group(1), float(n.ev.get("dur", 0.0)), "kernel", n.region, n.idx, n.name, n.call,
                    segment=n.segment, phase=n.phase, seq=n.seq,
                )
            )
        elif rules.is_launch(n):
            top = n.top
            summary.launches.append(
                Launch(
                    n.name,
                    float(n.ev.get("dur", 0.0)),
                    "extern" if n.call else "op",
                    n.region,
                    n.idx,
                    n.name,
                    n.call,
                    n.autograd if n.phase == "backward" and n.autograd else top.name if top is not n else None,
                    n.segment,
                    n.phase,
                    n.seq,
                )
            )
    summary.collectives = find_collectives(nodes, summary.launches)
    return summary


class _OpRules:
    """Which ATen op of a nest is the launch (see the module docstring)."""

    def __init__(self, nonwork: Callable[[str], bool], dispatch_ops: Collection[str] | None, custom: Collection[str] = ()):
        self.nonwork, self.dispatch_ops, self.custom = nonwork, dispatch_ops, custom
        self._launches: dict[int, list[_Node]] = {}

    def works(self, n: _Node) -> bool:
        """A custom op does work: its own kernel's, when none of the ATen ops it runs does."""
        return n.name in self.custom or not all(
            self.nonwork(d.name) for d in n.walk() if d.name.startswith(OP_NAMESPACES)
        )

    def launches_under(self, top: _Node) -> list[_Node]:
        """The launches of one top-level ATen op."""
        if top.idx not in self._launches:
            found = [d for d in self._outermost_dispatched(top) if self.works(d)] if self.dispatch_ops else []
            if not found and self.works(top):
                found = [top]
            self._launches[top.idx] = found
        return self._launches[top.idx]

    def _outermost_dispatched(self, n: _Node) -> list[_Node]:
        if n.name in self.custom:
            # the ATen ops its kernel ran that do work; else the custom op itself (a C++ kernel)
            inner = [x for c in n.children for x in self._outermost_dispatched(c) if self.works(x)]
            return inner or [n]
        if n.name in self.dispatch_ops:
            return [n]
        return [x for c in n.children for x in self._outermost_dispatched(c)]

    def is_launch(self, n: _Node) -> bool:
        top = n.top
        return top is not None and any(x is n for x in self.launches_under(top))

    def launch_op(self, n: _Node) -> _Node | None:
        """The launch at or above n, else the top-level ATen op above it (or None)."""
        top = n.top
        if top is None:
            return None
        for launch in self.launches_under(top):
            if launch is n or any(a is launch for a in n.ancestors()):
                return launch
        return top


def _build_cpu_forest(events: list[dict], custom: Collection[str] = ()) -> list[_Node]:
    """Nest host-side complete events by time on each thread; return them in time order."""
    host = [
        e
        for e in events
        if e.get("ph") == "X"
        and e.get("cat") in ("cpu_op", "user_annotation", "cuda_runtime", "cuda_driver")
    ]
    host.sort(key=lambda e: (e.get("pid"), e.get("tid"), e.get("ts", 0), -e.get("dur", 0)))
    nodes: list[_Node] = []
    stack: list[_Node] = []
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
        node = _Node(i, e, stack[-1] if stack else None, custom)
        if stack:
            stack[-1].children.append(node)
        stack.append(node)
        ends.append(_end(e))
        nodes.append(node)
    nodes.sort(key=lambda n: float(n.ev.get("ts", 0)))
    _adopt_other_threads(nodes)
    return nodes


def _adopt_other_threads(nodes: list[_Node]) -> None:
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
