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
  A top-level op under which the dispatcher ran nothing (eval `dropout` returns its input) ran no
  kernel: no launch. Dispatch accounting's trace shows it (no `kscope::op#N` marker under the op,
  on a thread where the accounting ran); its names are handed on (`Dispatched.silent`) to the
  traces of the timed calls, which carry no markers.
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
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from kscope.trace.collectives import find_collectives
from kscope.trace.nest import OP_NAMESPACES, Node, build_cpu_forest

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
MARKER_PREFIX = "kscope::op#"
GRAPH_LAUNCH = "cudaGraphLaunch"
"""The runtime call that replays a CUDA graph: the kernels inside share its correlation id."""


TORCH_NAMESPACES = frozenset(
    ("aten", "prim", "prims", "profiler", "torch", "autograd", "inductor", "_dtensor")
    + ("c10d", "_c10d_functional", "_c10d_functional_autograd")
) | {ns.removesuffix("::") for ns in OP_NAMESPACES}
"""Namespaces of torch's own operators and profiler events. Any other is a custom op's
(`torch.library.custom_op`, an extension's TORCH_LIBRARY); collectives are counted apart
(trace.collectives)."""


def is_custom_op(name: str) -> bool:
    """A custom op ("mylib::add2"): an operator outside torch's own namespaces. The dispatcher
    runs its kernel (its Python body, or a C++ one) as one op that the user called: the ATen ops
    that body runs are its launches, shown under its name."""
    namespace, sep, _ = name.partition("::")
    return bool(sep) and namespace.isidentifier() and namespace not in TORCH_NAMESPACES


@dataclass(frozen=True)
class Dispatched:
    """What dispatch accounting saw: the ops the dispatcher ran (profiler names, "aten::_log_softmax"),
    and the top-level ops under which it ran none, at least once (TraceSummary.silent)."""

    ops: frozenset[str]
    silent: frozenset[str] = frozenset()


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
    args: dict | None = None
    """The op's recorded arguments ("Input Dims", "Input type", "Concrete Inputs"), where the
    profile recorded shapes; else None."""


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
    """trace.collectives.CollectiveEvent: the collectives that ran (never launches)."""
    silent: frozenset[str] = frozenset()
    """A dispatch-accounting trace: top-level ops under which the dispatcher ran nothing (they
    returned an input's storage, or nothing): no launch."""

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


def load_trace(path: str) -> list[dict]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        data = json.load(f)
    return data["traceEvents"] if isinstance(data, dict) else data


def summarize(
    events: list[dict],
    is_nonwork: Callable[[str], bool] | None = None,
    dispatched: Dispatched | None = None,
) -> TraceSummary:
    """Classify a trace's events into launches (see the module docstring for the rules)."""
    nonwork = is_nonwork or (lambda name: name in NONWORK_OPS)
    # A custom op the dispatcher recorded (a cpu_op event) is one though dispatch accounting never
    # saw it: compiled code may call one that eager code did not (a library's fallback when compiling).
    ran = {e.get("name", "") for e in events if e.get("cat") == "cpu_op"}
    custom = frozenset(op for op in set(dispatched.ops if dispatched else ()) | ran if is_custom_op(op))
    nodes = build_cpu_forest(events, custom)
    is_cuda = any(e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") for e in events)
    silent_nodes, silent_names = _silent_tops(nodes)
    summary = TraceSummary(device="cuda" if is_cuda else "cpu", silent=silent_names)
    rules = _OpRules(nonwork, dispatched, silent_nodes, custom)
    _read_markers(nodes, rules, summary)
    if is_cuda:
        _cuda_launches(events, nodes, rules, summary)
        summary.launches.sort(key=lambda launch: launch.owner if launch.owner is not None else -1)
    else:
        _cpu_launches(nodes, rules, summary)
    summary.collectives = find_collectives(nodes, summary.launches)
    return summary


def _read_markers(nodes: list[Node], rules: _OpRules, summary: TraceSummary) -> None:
    """The op each kscope::op#N marker is in, and the markers under the op that made each autograd node."""
    made_node: dict[int, Node] = {}
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


def _cuda_launches(events: list[dict], nodes: list[Node], rules: _OpRules, summary: TraceSummary) -> None:
    """CUDA: each device kernel a launch, owned by the op whose runtime call launched it (by
    correlation id); copies and memsets counted apart; a collective's own NCCL kernel is no launch."""
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
            summary.launches.append(_cuda_launch(e, launcher, rules))


def _cuda_launch(e: dict, launcher: Node | None, rules: _OpRules) -> Launch:
    op = rules.launch_op(launcher) if launcher else None
    top = launcher.top if launcher else None
    return Launch(
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


def _cpu_launches(nodes: list[Node], rules: _OpRules, summary: TraceSummary) -> None:
    """CPU: an inductor C++ kernel's own event, a library call or an op that does the work itself."""
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
                    args=n.ev.get("args") if "Input Dims" in n.ev.get("args", {}) else None,
                )
            )


def _silent_tops(nodes: list[Node]) -> tuple[set[int], frozenset[str]]:
    """In a dispatch-accounting trace (it has kscope::op# markers): the top-level ops, on a thread
    the accounting ran on, with no marker under them, and their names. A name may run nothing
    once and work another time (eval and train dropout): where it works it decomposes into ops
    the profiler records under it, so a timed trace tells the two apart by children."""
    marked = {(n.ev.get("pid"), n.ev.get("tid")) for n in nodes if n.name.startswith(MARKER_PREFIX)}
    if not marked:
        return set(), frozenset()
    silent = {
        n.idx: n.name
        for n in nodes
        if n.top is n
        and (n.ev.get("pid"), n.ev.get("tid")) in marked
        and not any(d.name.startswith(MARKER_PREFIX) for d in n.walk())
    }
    return set(silent), frozenset(silent.values())


class _OpRules:
    """Which ATen op of a nest is the launch (see the module docstring)."""

    def __init__(
        self, nonwork: Callable[[str], bool], dispatched: Dispatched | None, silent_nodes: set[int],
        custom: Collection[str] = (),
    ):
        self.nonwork, self.custom = nonwork, custom
        self.dispatch_ops = dispatched.ops if dispatched is not None else None
        self.silent_names = dispatched.silent if dispatched is not None else frozenset()
        self.silent_nodes = silent_nodes
        self._launches: dict[int, list[Node]] = {}

    def works(self, n: Node) -> bool:
        """A custom op does work: its own kernel's, when none of the ATen ops it runs does."""
        return n.name in self.custom or not all(
            self.nonwork(d.name) for d in n.walk() if d.name.startswith(OP_NAMESPACES)
        )

    def launches_under(self, top: Node) -> list[Node]:
        """The launches of one top-level ATen op."""
        if top.idx not in self._launches:
            found = [d for d in self._outermost_dispatched(top) if self.works(d)] if self.dispatch_ops else []
            ran_nothing = top.idx in self.silent_nodes or (top.name in self.silent_names and not top.children)
            if not found and not ran_nothing and self.works(top):
                found = [top]
            self._launches[top.idx] = found
        return self._launches[top.idx]

    def _outermost_dispatched(self, n: Node) -> list[Node]:
        if n.name in self.custom:
            # the ATen ops its kernel ran that do work; else the custom op itself (a C++ kernel).
            # An op dispatch accounting never saw (in a custom op only compiled code called) is
            # one launch of its own.
            inner = [
                x
                for c in n.children
                for x in self._outermost_dispatched(c) or ([c] if c.name.startswith(OP_NAMESPACES) else [])
                if self.works(x)
            ]
            return inner or [n]
        if n.name in self.dispatch_ops:
            return [n]
        return [x for c in n.children for x in self._outermost_dispatched(c)]

    def is_launch(self, n: Node) -> bool:
        top = n.top
        return top is not None and any(x is n for x in self.launches_under(top))

    def launch_op(self, n: Node) -> Node | None:
        """The launch at or above n, else the top-level ATen op above it (or None)."""
        top = n.top
        if top is None:
            return None
        for launch in self.launches_under(top):
            if launch is n or any(a is launch for a in n.ancestors()):
                return launch
        return top


