"""Inductor's bytes per kernel: each scheduler node's bytes (engine.inductor.bytes) given to the
kernel it was generated into, nodes and kernels walked in the order inductor generated them: plain
data once inductor's graph is gone (kscope's store keeps it for FX-graph-cache hits)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kscope.engine.inductor.bytes import Correction, NodeBytes
from kscope.report.measures import sum_known


@dataclass(frozen=True)
class KernelBytes:
    """Inductor's bytes for one kernel: those of the scheduler nodes generated into it, summed
    (a sum is unknown, None, where one node's is)."""

    read: int | None = 0
    written: int | None = 0
    saved: int | None = 0
    """Of `written`, what a training forward writes only for backward (None: not known)."""
    flops: int | None = None
    """None: unknown, as for a kernel no node of inductor's was tied to (nothing is known, not 0)."""
    unknown: str | None = None
    """Why its bytes are unknown (a node's NodeBytes.unknown)."""
    corrections: tuple[Correction, ...] = ()
    copies: tuple[str, ...] = ()
    """What its nodes that only copy read (NodeBytes.copies)."""
    copy: bool = True
    """Every node of it only copies."""
    layout: str | None = None
    why: str | None = None
    outputs: dict[str, int | None] = field(default_factory=dict)
    """The buffers it writes -> their bytes: what a later kernel may read back (round trips)."""
    inputs: tuple[str, ...] = ()
    """The buffers and graph inputs it reads, sorted."""
    nodes: tuple[str, ...] = ()
    """Its scheduler nodes' names, in order: what inductor's fusion log names."""
    reduced: tuple[str, ...] = ()
    """Of `outputs`, those a reduction writes (complete only once it has run through)."""
    traces: dict[str, str] = field(default_factory=dict)
    """Post-grad node -> its own stack trace (NodeBytes.traces)."""
    touched: dict[str, int] | None = None
    """Each buffer and graph input its nodes read or write -> the most bytes one of them covers
    there (NodeBytes.touched); None: unknown."""
    post: tuple[str, ...] = ()
    """The post-grad nodes provenance lists for it (GraphCapture.kernel_bytes), kept for a backward
    graph, whose cache hit logs none (GraphCapture.restore_provenance)."""

    @property
    def working_set(self) -> int | None:
        """The distinct bytes one run of the kernel touches; None: unknown."""
        return None if self.touched is None else sum(self.touched.values())


@dataclass(frozen=True)
class GraphBytes:
    """Inductor's bytes for each kernel of a graph."""

    kernels: dict[str, KernelBytes]
    """Kernel handle -> its bytes: provenance's handle as assign_to_kernels gives them; the stable
    handle (provenance.stable_handles) from GraphCapture.kernel_bytes on."""
    stray: int = 0
    """The bytes of nodes that matched no kernel (normally none)."""


def assign_to_kernels(handles: list[tuple[str, str, frozenset[str]]], nodes: list[NodeBytes]) -> GraphBytes:
    """handles: (handle, kind, post-grad nodes) per kernel in the order inductor generated them.
    Each node goes to the kernel whose post-grad nodes hold its own (else share some), never a
    kernel before the last one given a node."""
    mine: dict[str, list[NodeBytes]] = {h: [] for h, _, _ in handles}
    stray, cursor = 0, 0
    for node in nodes:
        if node.kind == "nop":
            continue
        fits = [i for i, (_, kind, post) in enumerate(handles) if kind == node.kind and node.key <= post]
        if not fits:
            fits = [i for i, (_, kind, post) in enumerate(handles) if kind == node.kind and node.key & post]
        if not fits:
            stray += (node.read or 0) + (node.written or 0)  # one of data-dependent size adds no guess
            continue
        # Nodes and kernels come in the order inductor generated them: never step back.
        cursor = next((i for i in fits if i >= cursor), fits[0])
        mine[handles[cursor][0]].append(node)
    return GraphBytes({h: summed(of) for h, of in mine.items()}, stray)


def summed(nodes: list[NodeBytes]) -> KernelBytes:
    """One kernel's bytes from those of its nodes, in the order inductor generated them."""
    return KernelBytes(
        read=sum_known(n.read for n in nodes),
        written=sum_known(n.written for n in nodes),
        saved=sum_known(n.saved for n in nodes),
        flops=sum_known(n.flops for n in nodes) if nodes else None,
        unknown=next((n.unknown for n in nodes if n.unknown), None),
        corrections=tuple(c for n in nodes for c in n.corrections),
        copies=tuple(c for n in nodes for c in n.copies),
        copy=all(n.copies for n in nodes),
        layout=next((n.layout for n in nodes if n.layout), None),
        why=next((n.why for n in nodes if n.why), None),
        outputs={buf: nbytes for n in nodes for buf, nbytes in n.outputs.items()},
        inputs=tuple(sorted({buf for n in nodes for buf in n.inputs})),
        nodes=tuple(n.name for n in nodes),
        reduced=tuple(buf for n in nodes if n.reduction for buf in n.outputs),
        traces={node: trace for n in nodes for node, trace in n.traces.items()},
        touched=_touched(nodes),
    )


def _touched(nodes: list[NodeBytes]) -> dict[str, int] | None:
    """The buffers a kernel's nodes touch, each once: where one node writes a buffer another of
    the same kernel reads (several nodes in one C++ kernel), inductor counts it twice, memory
    holds it once."""
    if not nodes or any(n.touched is None for n in nodes):
        return None
    out: dict[str, int] = {}
    for n in nodes:
        for name, nbytes in n.touched.items():
            out[name] = max(out.get(name, 0), nbytes)
    return out

