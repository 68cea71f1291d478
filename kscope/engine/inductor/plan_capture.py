"""Inductor's plan of a graph, read the moment its code is generated, before the code is compiled.

Inductor logs a graph's output code (`inductor_output_code`) after its scheduler fused the nodes
and generated every kernel, and before it loads the module, which is when the kernels are
compiled (C++ or Triton; on a real model most of the compile). Everything kscope shows of a
graph but its times is decided by then: the kernels and the post-grad nodes in each (provenance),
their stack traces, the bytes of each scheduler node, the graph's outputs. Inductor logs those
only after the load (provenance, `inductor_metrics`); here they are read off the live graph and
inductor's provenance tables, the same objects the later logs are made from.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable

from kscope.engine.inductor.bytes import NodeBytes, current_graph, node_bytes, saved_for_backward


def scheduled_nodes() -> tuple[object, list] | None:
    """(inductor's graph, its scheduler nodes) while a graph is being compiled fresh; None when
    none is (a cache hit logs its output code too)."""
    graph = current_graph()
    scheduler = getattr(graph, "scheduler", None)
    if scheduler is None:
        return None
    return graph, list(scheduler.nodes)


def estimated_peak(graph, snodes: list) -> int | None:
    """Inductor's own estimate of the graph's peak memory, in the order its nodes run
    (torch._inductor.memory: the buffers live at each step, freed after their last use, the graph's
    inputs it may free among them): what reorder_for_peak_memory minimizes. None where it fails."""
    try:
        from torch._inductor.memory import prepare_planning_info
        from torch.utils._ordered_set import OrderedSet

        scheduler = graph.scheduler
        peak, _ = prepare_planning_info(snodes, scheduler.name_to_buf, scheduler.name_to_fused_node,
                                        OrderedSet(graph.graph_inputs.keys()), OrderedSet(graph.get_output_names()))
    except Exception:  # noqa: BLE001 - an estimate kscope cannot read is unknown, and the compile goes on
        return None
    return int(peak)


def benchmarking() -> bool:
    """Inductor is compiling one of max-autotune's candidate subgraphs to time it (a graph named
    `benchmark_…`, codegen/subgraph.py), not a graph of the user's: nothing of it is kscope's."""
    return str(getattr(current_graph(), "name", "") or "").startswith("benchmark_")


def nodes_bytes(snodes: list) -> list[NodeBytes]:
    """Inductor's bytes of each scheduler node (engine.inductor.bytes), the graph being current."""
    saved = saved_for_backward(snodes)
    return [node_bytes(node, saved) for node in snodes]


def planned(g, graph, nodes: list[NodeBytes]):
    """A copy of g, the GraphCapture whose code inductor has just generated, with what inductor
    logs about it only once it is compiled. `graph` is inductor's, `nodes` its bytes per node."""
    import torch._inductor.debug as debug

    built = getattr(debug, "_inductor_triton_kernel_to_post_grad_node_info", {})
    traces = getattr(debug, "_inductor_kernel_stack_trace", {})
    return dataclasses.replace(
        g,
        provenance={h: list(post) for h, post in built.items()},
        stack_traces={h: list(frames) for h, frames in traces.items()},
        nodes=list(nodes),
        outputs=sorted(set(g.outputs) | set(graph.get_output_names())),
        unfused=dict(g.unfused),
        autotune=list(g.autotune),
        live=None,
    )


@contextlib.contextmanager
def kernel_progress(tell: Callable[[int, int], None]):
    """Call tell(compiled, total) as inductor's compile workers finish a graph's kernels: inductor
    counts them on its progress bar (AsyncCompile._wait_futures), whose `update` this wraps for the
    block (the bar itself is inductor's: its own checks of what kind of bar it is still hold). With
    one compile thread inductor compiles in its own process and keeps no count: no calls."""
    try:
        import torch._inductor.async_compile as async_compile
    except ImportError:
        yield
        return
    real = getattr(async_compile, "tqdm", None)
    if real is None:
        yield
        return

    def counted(*args, **kwargs):
        bar = real(*args, **kwargs)
        total = kwargs.get("total")
        if not isinstance(total, int) or total <= 0:
            return bar
        update, done = bar.update, [0]

        def counting_update(n=1):
            result = update(n)
            done[0] += n
            _say(tell, done[0], total)
            return result

        try:
            bar.update = counting_update
        except AttributeError:  # a bar that takes no attributes: no count
            return bar
        _say(tell, 0, total)
        return bar

    async_compile.tqdm = counted
    try:
        yield
    finally:
        async_compile.tqdm = real


def _say(tell, done: int, total: int) -> None:
    try:
        tell(done, total)
    except Exception:  # kscope's count must never break the user's compile
        pass
