"""Inductor's bytes for a graph compiled with dynamic shapes, at the sizes it ran at.

A graph compiled for symbolic sizes (torch.compile recompiles with dynamic shapes once a size
changes) runs at every size that passes its guards, but inductor counts its bytes once, at the
size it was compiled for (its size hints). kscope keeps inductor's graph and scheduler nodes
(GraphCapture.live) and has inductor count them again with the hints set to the sizes of the call:
the same count (`get_read_write_buffer_accesses`), not a re-derivation.

The sizes come from dynamo's shape environment: each symbol names where its value comes from
(`L['a'].size()[0]`, a local of the compiled frame), which is read off the call's arguments.
"""

from __future__ import annotations

import inspect
from typing import Any

from kscope.engine.inductor.bytes import node_bytes, size_hints
from kscope.engine.inductor.kernel_bytes import GraphBytes, assign_to_kernels
from kscope.engine.target.loading import Target, code_of


def frame_locals(target: Target) -> dict[str, Any] | None:
    """The compiled frame's locals for the target's arguments ("a", "b"; "self" for a module)."""
    fn = code_of(target.fn)
    try:
        bound = inspect.signature(fn).bind(*target.args)
    except TypeError:
        return None
    bound.apply_defaults()
    out = dict(bound.arguments)
    if fn is not target.fn:  # a module's forward: its frame has `self`
        out["self"] = target.fn
    return out


def symbol_values(graph, target: Target) -> dict | None:
    """Each size symbol of inductor's graph -> its value for the target's current arguments; None
    when one cannot be read (a source kscope cannot evaluate)."""
    env = graph.sizevars.shape_env
    scope = {"L": frame_locals(target), "G": vars(target.module)}
    if scope["L"] is None:
        return None
    out = {}
    for symbol in size_hints(env) or {}:
        value = None
        for source in env.var_to_sources.get(symbol) or []:
            name = source.name() if callable(source.name) else source.name
            try:
                value = int(eval(name, {"__builtins__": {}}, scope))  # dynamo's own source names
                break
            except Exception:  # noqa: BLE001 - another source of the same symbol may be readable
                continue
        if value is None:
            return None
        out[symbol] = value
    return out


def bytes_at(
    live: list[tuple], handles: list[tuple[str, str, frozenset[str]]], target: Target, unbacked: dict | None = None
) -> GraphBytes | None:
    """Per kernel handle, inductor's bytes counted at the sizes of the target's arguments (as
    assign_to_kernels gives them); None (unknown) when the sizes cannot be read or inductor's count
    fails. `live`: (inductor's graph, its scheduler nodes, the buffers saved for backward) for each
    part of the graph inductor logged. `unbacked`: data-dependent symbols -> the values they ran
    at (ran_sizes.solved), given to inductor as its hints for them; a node with one left out stays
    unknown (bytes.node_bytes)."""
    import sympy
    from torch._inductor.virtualized import V

    nodes = []
    for graph, snodes, saved in live:
        values = symbol_values(graph, target)
        hints = size_hints(graph.sizevars.shape_env)
        if values is None or hints is None:
            return None
        overrides = graph.sizevars.shape_env.var_to_hint_override  # inductor's sizevars hold this same dict
        before, overridden = dict(hints), dict(overrides)
        try:
            hints.update({symbol: sympy.Integer(value) for symbol, value in values.items()})
            overrides.update(unbacked or {})
            with V.set_graph_handler(graph):
                nodes += [node_bytes(n, saved) for n in snodes]
        except Exception:  # noqa: BLE001 - inductor's count at other sizes failed: unknown, never a guess
            return None
        finally:
            hints.clear()
            hints.update(before)
            overrides.clear()
            overrides.update(overridden)
    return assign_to_kernels(handles, nodes)
