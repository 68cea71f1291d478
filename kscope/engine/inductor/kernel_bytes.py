"""Inductor's bytes per kernel: each scheduler node's bytes (engine.inductor.bytes) given to the
kernel it was generated into, nodes and kernels walked in the order inductor generated them: plain
data once inductor's graph is gone (kscope's store keeps it for FX-graph-cache hits)."""

from __future__ import annotations

from kscope.engine.inductor.bytes import NodeBytes


def assign_to_kernels(
    handles: list[tuple[str, str, frozenset[str]]], nodes: list[NodeBytes]
) -> tuple[dict[str, dict], int]:
    """handles: (handle, kind, post-grad nodes) per kernel in the order inductor generated them.
    Returns per handle {"read", "written", "corrections", "copies", "layout", "why", "copy",
    "unknown"} ("copy": every node of the kernel only copies; read and written None, and "unknown"
    why, when a node's are unknown), and the bytes of
    nodes that matched no kernel."""
    out = {
        h: {"read": 0, "written": 0, "saved": 0, "corrections": [], "copies": [], "layout": None, "why": None, "copy": True,
            "outputs": {}, "inputs": [], "nodes": [], "reduced": [], "unknown": None, "flops": 0,
            "traces": {}}
        for h, _, _ in handles
    }
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
        entry = out[handles[cursor][0]]
        entry["read"] = None if entry["read"] is None or node.read is None else entry["read"] + node.read
        entry["written"] = None if entry["written"] is None or node.written is None else entry["written"] + node.written
        entry["unknown"] = entry["unknown"] or node.unknown
        entry["flops"] = None if entry["flops"] is None or node.flops is None else entry["flops"] + node.flops
        entry["traces"].update(node.traces)
        entry["saved"] = None if entry["saved"] is None or node.saved is None else entry["saved"] + node.saved
        entry["corrections"] += node.corrections
        entry["copies"] += node.copies
        entry["copy"] = entry["copy"] and bool(node.copies)
        entry["layout"] = entry["layout"] or node.layout
        entry["why"] = entry["why"] or node.why
        entry["outputs"].update(node.outputs)  # round trips: what the kernel writes and reads
        entry["inputs"] = sorted(set(entry["inputs"]) | set(node.inputs))
        entry["nodes"].append(node.name)
        if node.reduction:  # what a reduction writes is complete only once it has run through
            entry["reduced"] += list(node.outputs)
    for entry in out.values():
        if not entry["nodes"]:
            entry["flops"] = None  # no node of inductor's was tied to it: nothing is known, not 0
    return out, stray
