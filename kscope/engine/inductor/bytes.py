"""Inductor's own bytes per scheduler node, and which kernel each node became.

Inductor counts the bytes of every scheduler node it schedules (`get_read_buffer_sizes` /
`get_write_buffer_sizes`, what its `inductor_metrics` log reports). kscope keeps those counts and
does two things inductor's log does not:

- It ties each node to the kernel it was generated into. Inductor's provenance lists, per kernel,
  the post-grad nodes it came from: for a library call (extern) the node's `origin_node`, for a
  generated kernel the origins of all the scheduler nodes in it. kscope computes the same key for
  each scheduler node and walks nodes and kernels in the order inductor generated them, so two
  `mm` calls, or an `mm` whose input came from a ReLU, each land on their own row. (On the CPU
  several scheduler nodes can share one C++ kernel: they add up.)
- It corrects three counts. Gathers: for an indirect load (`table[idx]`, an embedding) inside a
  fused node inductor counts the whole table; kscope counts the elements the loop loads, one per
  iteration of the node that loads it, and never more than the table holds (the rule the eager
  half uses: min(the elements gathered, the whole source), plus the indices, counted apart). Unused outputs: a library call writes all
  its outputs (attention's log-sum-exp, sort's indices) though inductor counts only the ones the
  graph uses. Constants: a parameter frozen into the graph (`freezing=True`) is a constant, which
  inductor leaves out of its count, though the kernel reads it at every call.
- It says what a kernel that only copies does (a load and a store per element, nothing else):
  which inputs it copies and into which layout, and why when inductor's graph tells (its layout
  optimisation for convolutions).

A node with a size no hint gives (data-dependent: a boolean mask's count) has unknown bytes, with
why, never inductor's count, which takes such a size as 0.

`node_bytes` runs while inductor's graph is current (inside the metrics log record); the rest is
plain data, kept in kscope's store for FX-graph-cache hits.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

import torch

from kscope.engine.inductor.node_flops import node_flops
from kscope.engine.inductor.sizes import hint, iterations
from kscope.engine.inductor.touched import corrected_touched, touched
from kscope.report.measures import sum_known

_TMP = re.compile(r"\btmp\d+\b")


@dataclass(frozen=True)
class Correction:
    """One of kscope's corrections to inductor's count for a node (see the module docstring)."""

    rule: str
    """"gather", "constant" or "unused output"."""
    buffer: str
    inductor: int
    """Inductor's count for it, in bytes."""
    kscope: int
    """kscope's, in bytes."""


@dataclass(frozen=True)
class NodeBytes:
    kind: str
    """"kernel", "extern" (a library call) or "nop"."""
    key: frozenset[str]
    """The post-grad node names inductor's provenance uses for this node's kernel."""
    read: int | None
    """None (unknown): a size the node reads or writes has no hint (`unknown` says why)."""
    written: int | None
    inductor_total: int
    """Inductor's own count for the node (`get_read_write_buffers_sizes`), before any correction."""
    corrections: tuple[Correction, ...] = ()
    copies: tuple[str, ...] = ()
    """What a node that only copies reads: graph inputs ("primals_2") or buffers ("buf3")."""
    layout: str | None = None
    """The layout such a copy writes ("channels-last")."""
    why: str | None = None
    """Why inductor added such a copy, where its graph says."""
    saved: int | None = 0
    """Of `written`, the bytes of buffers a training forward writes only for backward (None: the
    graph's saved tensors were not known)."""
    name: str = ""
    """Inductor's scheduler node name ("op1", "op0_op2" once fused): what its fusion log names."""
    outputs: dict[str, int | None] = field(default_factory=dict)
    """The buffers the node writes -> their bytes: what a later kernel may read back."""
    inputs: tuple[str, ...] = ()
    """The buffers and graph inputs the node reads, sorted."""
    reduction: bool = False
    unknown: str | None = None
    """Why read and written are None: a data-dependent size, which inductor's count (and any hint)
    could only guess at compile time."""
    flops: int | None = None
    """Inductor's FLOPs for the node (engine.inductor.node_flops); None: unknown."""
    traces: dict[str, str] = field(default_factory=dict)
    """Post-grad node -> its own stack trace: which line each of a fused kernel's ops is
    (engine.inductor.node_lines; the kernel's logged traces are a set, not per node)."""
    touched: dict[str, int] | None = None
    """Each buffer and graph input the node reads or writes -> the bytes it covers there, as
    corrected: what its kernel's working set is summed from (KernelBytes.working_set); None: unknown."""


def saved_for_backward(nodes) -> frozenset[str] | None:
    """Buffers a training forward writes only for backward to read: AOTAutograd's forward returns
    the user's outputs (after mutated inputs) first, then the tensors it saves (its metadata's
    `num_forward` tells where they start); of those saved, the ones no other node of the graph
    reads (an activation a later op reads anyway would be written for inference too).
    Call while inductor's graph is current, with its scheduler nodes."""
    import torch
    from torch._inductor.virtualized import V

    graph = V.graph
    if graph.is_inference or graph.is_backward:
        return frozenset()
    context = torch._guards.TracingContext.try_get()
    meta = getattr(context, "fw_metadata", None)
    if meta is None:
        return None  # a training forward whose saved tensors AOTAutograd did not say
    names = graph.get_output_names()
    returned = set(names[: meta.num_forward_returns])
    saved = {n for n in names[meta.num_forward :] if n not in returned}
    for node in nodes:
        mine = set(node.get_buffer_names())
        saved -= {dep.name for dep in node.read_writes.reads if dep.name not in mine}
    return frozenset(saved)


def node_bytes(node, saved: frozenset[str] | None = frozenset()) -> NodeBytes:
    """One scheduler node's bytes; call while inductor's graph (V.graph) is current. `saved`: the
    buffers the graph writes only for backward (saved_for_backward). Inductor's own count, then
    kscope's corrections to it, unless a size is data-dependent or a library call's inputs cannot
    be told apart (then unknown, with why)."""
    reads = node.get_read_write_buffer_accesses(include_reads=True, include_writes=False)
    counted = _inductor_count(node, reads)
    if _data_dependent(node):
        # inductor's own count hints such a size with 0: a guess, never shown as a count
        return replace(counted, read=None, written=None, saved=None, flops=None, touched=None, unknown=DATA_DEPENDENT)
    counted = replace(counted, saved=None if saved is None else _saved_bytes(node, saved))
    counted = _corrected(counted, _gather_corrections(node, reads))
    fallback, unsure = _fallback_only(node.node) if counted.kind == "extern" else (set(), None)
    if unsure:  # counting each frozen weight it is handed could count one it never reads
        return replace(counted, read=None, written=None, saved=None, touched=None, unknown=unsure)
    counted = _corrected(counted, _constant_corrections(counted.inputs, reads, fallback) + _unused_output(node, counted))
    return _with_copy(node, counted)


def _inductor_count(node, reads: dict) -> NodeBytes:
    """Inductor's count for the node (`reads`: its bytes read per buffer) before any correction,
    with what kscope reads off the node beside: its kernel's provenance key, its buffers, FLOPs
    and its post-grad nodes' stack traces."""
    kind = _kind(node)
    origins = [o for sn in node.get_nodes() if sn.node is not None for o in sn.node.origins]
    outputs = {buf.get_name(): _buffer_bytes(buf.node) for buf in node.get_outputs()}
    # the uncached form of get_write_buffer_sizes: a dynamic graph is counted again at each size
    writes = node.get_read_write_buffer_accesses(include_reads=False, include_writes=True)
    written = sum(writes.values())
    return NodeBytes(
        kind, _provenance_key(node, kind, origins), sum(reads.values()), written, node.get_read_write_buffers_sizes(),
        name=node.get_name(),
        outputs=outputs,
        inputs=tuple(sorted({dep.name for dep in node.read_writes.reads} - set(outputs))),
        reduction=bool(getattr(node, "is_reduction", lambda: False)()),
        flops=node_flops(node, kind),
        touched=touched(reads, writes, node),
        traces={o.name: o.meta["stack_trace"] for o in origins if o.meta.get("stack_trace")},
    )


def _kind(node) -> str:
    """"kernel", "extern" (a library call) or "nop"; a collective and its wait are "nop": shown
    apart (trace.collectives), never kernel traffic."""
    from torch._inductor import ir, scheduler

    if isinstance(node, scheduler.NopKernelSchedulerNode) or isinstance(node.node, (ir._CollectiveKernel, ir._WaitKernel)):
        return "nop"
    return "extern" if isinstance(node, scheduler.ExternKernelSchedulerNode) else "kernel"


def _provenance_key(node, kind: str, origins: list) -> frozenset[str]:
    """The post-grad nodes provenance names the node's kernel by: a library call's own node, a
    generated kernel's every origin."""
    origin = getattr(node.node, "origin_node", None) if node.node is not None else None
    if kind == "extern" and origin is not None:
        return frozenset({origin.name})
    return frozenset(o.name for o in origins)


def _saved_bytes(node, saved: frozenset[str]) -> int:
    """The bytes of the node's outputs the graph writes only for backward."""
    return sum(_buffer_bytes(buf.node) for buf in node.get_outputs() if buf.get_name() in saved)


def _corrected(counted: NodeBytes, corrections: list[Correction]) -> NodeBytes:
    """`counted` with kscope's corrections: an unused output's to what the node writes, the
    others' to what it reads (and to the bytes it touches in that buffer)."""
    read = counted.read + sum(c.kscope - c.inductor for c in corrections if c.rule != UNUSED_OUTPUT)
    written = counted.written + sum(c.kscope - c.inductor for c in corrections if c.rule == UNUSED_OUTPUT)
    mended = corrected_touched(counted.touched, corrections, UNUSED_OUTPUT)
    return replace(counted, read=read, written=written, touched=mended,
                   corrections=counted.corrections + tuple(corrections))


def _gather_corrections(node, reads: dict) -> list[Correction]:
    """Inductor counts a whole buffer the node loads through indirect indices: kscope, the
    elements loaded (_gathered_bytes)."""
    out = []
    for name, inductor_count in reads.items():
        gathered = _gathered_bytes(node, name)
        if gathered is not None and gathered != inductor_count:
            out.append(Correction("gather", name, inductor_count, gathered))
    return out


def _constant_corrections(inputs: tuple[str, ...], reads: dict, fallback: set[str]) -> list[Correction]:
    """Inductor counts no bytes for a constant (a parameter frozen by freezing=True), though the
    kernel reads it at every call: kscope counts it (not one a library call reads only on a path
    not taken: `fallback`)."""
    from torch._inductor.virtualized import V

    out = []
    for name in inputs:
        const = getattr(V.graph, "constants", {}).get(name)
        if name not in reads and name not in fallback and isinstance(const, torch.Tensor):
            out.append(Correction("constant", name, 0, const.numel() * const.element_size()))
    return out


def _unused_output(node, counted: NodeBytes) -> list[Correction]:
    """A library call writes all its outputs, though inductor counts only those the graph uses."""
    from torch._inductor import ir

    if counted.kind != "extern" or not isinstance(node.node, ir.FallbackKernel):
        return []
    every = sum_known(_buffer_bytes(b) for b in _flat(getattr(node.node, "outputs", None)))
    if every is None or every <= counted.written:
        return []
    return [Correction(UNUSED_OUTPUT, node.get_name(), counted.written, every)]


def _with_copy(node, counted: NodeBytes) -> NodeBytes:
    """For a generated kernel that only copies: what it copies, into which layout, and why where
    inductor's graph says."""
    from torch._inductor import ir
    from torch._inductor.virtualized import V

    if counted.kind != "kernel" or not all(_only_copies(sn) for sn in node.get_nodes()):
        return counted
    layouts = {_layout(buf.node) for buf in node.get_outputs() if isinstance(buf.node, ir.Buffer)}
    layout = layouts.pop() if len(layouts) == 1 else None
    why = None
    if layout == "channels-last" and getattr(V.graph, "layout_opt", False):
        why = "inductor's layout optimisation: convolutions run faster channels-last"
    return replace(counted, copies=tuple(sorted({dep.name for dep in node.read_writes.reads})), layout=layout, why=why)


UNUSED_OUTPUT = "unused output"


DATA_DEPENDENT = "its sizes are data-dependent (nonzero's count, a boolean mask's): known only as it runs"


def _data_dependent(node) -> bool:
    """A size the node reads, writes or loops over has no hint (an unbacked symbol)."""
    from torch._inductor.dependencies import WeakDep

    deps = [d for d in node.read_writes.reads | node.read_writes.writes if not isinstance(d, WeakDep)]
    sizes = [d.get_numel() for d in deps]
    sizes += [s for sn in node.get_nodes() for group in getattr(sn, "_sizes", None) or () for s in group]
    return any(hint(s) is None for s in sizes) or any(_buffer_bytes(b.node) is None for b in node.get_outputs())


def _fallback_only(extern) -> tuple[set[str], str | None]:
    """Inputs a library call is handed but reads only on a path not taken: mkl's packed linear gets
    the original weight too (inputs[2], as MKLPackedLinear.create puts it), for a batch size other
    than the one inductor packed for. And why kscope cannot tell them, when it cannot: a call that
    names _mkl_linear but is not inductor's MKLPackedLinear."""
    try:
        from torch._inductor.mkldnn_ir import MKLPackedLinear
    except ImportError:  # an inductor without mkldnn_ir: only the name is left to go by
        MKLPackedLinear = ()
    if isinstance(extern, MKLPackedLinear) and len(extern.inputs) >= 3 and hasattr(extern.inputs[2], "get_name"):
        return {extern.inputs[2].get_name()}, None
    if "_mkl_linear" in str(getattr(extern, "python_kernel_name", "")):
        return set(), "mkl's packed linear, whose original weight (read only for another batch size) kscope cannot find"
    return set(), None


def _only_copies(snode) -> bool:
    body = getattr(snode, "_body", None)
    counts = getattr(body, "op_counts", None)
    return bool(counts) and set(counts) <= {"load", "store", "output"}


def _flat(outputs):
    if isinstance(outputs, (list, tuple)):
        for o in outputs:
            yield from _flat(o)
    elif outputs is not None:
        yield outputs


def _buffer_bytes(buf) -> int | None:
    from torch._inductor import ir
    from torch._inductor.utils import get_dtype_size

    # `layout`, not get_layout(): a multi-output call's buffer raises on get_layout()
    if not isinstance(buf, ir.Buffer) or isinstance(getattr(buf, "layout", None), (ir.NoneLayout, ir.MultiOutputLayout)):
        return 0
    numel = hint(buf.get_numel())
    return None if numel is None else numel * get_dtype_size(buf.get_dtype())


def _gathered_bytes(node, name: str) -> int | None:
    """Bytes of `name` a node loads through indirect indices, or None if it loads it directly.
    Each distinct indirect load reads one element per iteration of the node doing it (its index
    is a loaded value: `a[b]` indexes by `tmp0` alone, whose own ranges are empty), at most the
    whole buffer."""
    from torch._inductor.dependencies import MemoryDep
    from torch._inductor.utils import get_dtype_size
    from torch._inductor.virtualized import V

    indirect, direct = {}, 0
    for sn in node.get_nodes():
        for dep in sn.read_writes.reads:
            if not isinstance(dep, MemoryDep) or dep.name != name:
                continue
            if dep.is_indirect():
                # the same load in two sub-nodes names its index temporaries differently
                indirect[(_TMP.sub("tmp", str(dep.index)), tuple(dep.size))] = dep
            else:
                direct += hint(dep.get_numel())
    if not indirect:
        return None
    buffer = V.graph.get_buffer(name)
    if buffer is None:
        return None
    loaded = {key: iterations(sn) for sn in node.get_nodes() for key in _indirect_keys(sn, name)}
    elements = sum(max(math.prod(hint(s) for s in dep.size), loaded.get(key, 0)) for key, dep in indirect.items())
    if direct:
        elements += direct
    return min(elements, hint(V.graph.get_numel(name))) * get_dtype_size(buffer.get_dtype())


def _indirect_keys(sn, name: str) -> list[tuple]:
    from torch._inductor.dependencies import MemoryDep

    return [
        (_TMP.sub("tmp", str(dep.index)), tuple(dep.size))
        for dep in sn.read_writes.reads
        if isinstance(dep, MemoryDep) and dep.name == name and dep.is_indirect()
    ]


def _layout(buf) -> str:
    size = [hint(s) for s in buf.get_size()]
    stride = [hint(s) for s in buf.get_stride()]
    if len(size) == 4:
        n, c, h, w = size
        if stride == [h * w * c, 1, w * c, c]:
            return "channels-last"
    expected, running = [], 1
    for s in reversed(size):
        expected.insert(0, running)
        running *= s
    return "contiguous" if stride == expected else f"strides {tuple(stride)}"


def current_graph():
    """Inductor's graph being compiled (V.graph)."""
    from torch._inductor.virtualized import V

    return V.graph


def symbolic_sizes() -> bool:
    """The graph being compiled has sizes that are symbols (dynamic shapes, or data-dependent
    ones): its bytes depend on the sizes it runs at."""
    from torch._inductor.virtualized import V

    env = getattr(V.graph.sizevars, "shape_env", None)
    return bool(size_hints(env)) or bool(unbacked_symbols(env))


def unbacked_symbols(shape_env) -> set:
    """The shape environment's data-dependent size symbols (u0, u1: nonzero's count)."""
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

    return set(free_unbacked_symbols(list(getattr(shape_env, "var_to_range", None) or ())))


def size_hints(shape_env) -> dict | None:
    """The shape environment's value of each size symbol, which inductor's hints read: torch 2.13
    calls it `backed_var_to_val`, earlier versions `var_to_val`."""
    hints = getattr(shape_env, "backed_var_to_val", None)
    return hints if hints is not None else getattr(shape_env, "var_to_val", None)
