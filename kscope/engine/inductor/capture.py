"""What inductor tells about each graph it compiles: code, provenance, bytes per kernel.

Inductor logs, per compile, the generated module (`inductor_output_code`), which post-grad nodes
each kernel came from and their user stack traces (provenance, with
`config.trace.provenance_tracking_level = 1`), all on the structured-trace logger `torch.__trace`; and,
when the `inductor_metrics` logger is at INFO, its own bytes per scheduler node. We listen to
those loggers for the length of a compile and keep what they said, one GraphCapture per graph
inductor compiled: a training step compiles a forward and a backward graph under one compile id
("0/0", the id the profiler prints as "Torch-Compiled Region: 0/0"). Each graph's FX-graph-cache
key, logged with its cache hit or miss, is the KEY of the profiler's
"## Call CompiledFxGraph KEY ##": that is how launches find their graph.

An FX-graph-cache hit logs code and provenance again but no bytes, so bytes seen once are kept in
a small store keyed by the hash of the generated code (engine.inductor.store.TrafficStore).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
from dataclasses import dataclass, field, replace

import torch

from kscope.engine.inductor.autotune import autotune_timings
from kscope.engine.inductor.bytes import NodeBytes, current_graph, node_bytes, saved_for_backward, symbolic_sizes
from kscope.engine.inductor.kernel_bytes import GraphBytes, assign_to_kernels
from kscope.engine.inductor.plan_capture import (
    benchmarking,
    estimated_peak,
    kernel_progress,
    nodes_bytes,
    planned,
    scheduled_nodes,
)
from kscope.engine.inductor.provenance import profiler_name, stable_handles
from kscope.engine.inductor.vec_isa import trust_probed
from kscope.report.compile import Autotune

_HANDLE_NUMBER = re.compile(r"(\[Provenance debug handles\] [\w.]+):\d+")
_GRAPH_LABEL = re.compile(r"graph_\d+_")
_AOT_ID = re.compile(r"# AOT ID: .*")
METRICS_LOGGER = "torch._inductor.compile_fx.__inductor_metrics"
TRACE_LOGGER = "torch.__trace"
FUSION_LOGGER = "torch._inductor.scheduler.__fusion"
CUDAGRAPHS_LOGGER = "torch._inductor.cudagraph_utils.__cudagraphs"
"""Where inductor says why it skipped CUDA graphs for a graph (log_cudagraph_skip_and_bump_counter)."""
STORE_FORMAT = "kscope-traffic-13\n"
"""Part of the store's key: entries written by an older kscope (another format) are not read."""


@dataclass
class GraphCapture:
    """What inductor said about one compiled graph."""

    compile_id: str
    code: str = ""
    provenance: dict = field(default_factory=dict)
    """kernel handle ("cpp_fused_add_relu_0:1") -> post-grad node names."""
    stack_traces: dict = field(default_factory=dict)
    """kernel handle -> list of formatted user frames."""
    post_grad_graph: str = ""
    """The post-grad FX graph as inductor printed it (node name -> ATen op)."""
    nodes: list[NodeBytes] | None = None
    """Inductor's bytes per scheduler node; None when the compile was a cache hit."""
    inductor_total: int | None = None
    """The graph's bytes as inductor's metrics log says them (`num_bytes_accessed`)."""
    fx_key: str | None = None
    """Inductor's FX-graph-cache key (what the profiler's "## Call CompiledFxGraph KEY ##" says)."""
    cache: str | None = None
    """"hit", "miss" or "bypass" as inductor logged it; None when the cache was off."""
    outputs: list[str] = field(default_factory=list)
    """The graph's outputs: buffers handed back to the caller, never a round trip."""
    unfused: dict[str, str] = field(default_factory=dict)
    """"node1|node2" -> inductor's "cannot fuse node1 with node2: why" (its fusion log)."""
    autotune: list[Autotune] = field(default_factory=list)
    """max-autotune's choices while compiling it."""
    estimated_peak_bytes: int | None = None
    """Inductor's estimate of the graph's peak memory (plan_capture.estimated_peak); None: unknown."""
    live: list[tuple] | None = field(default=None, repr=False, compare=False)
    """(inductor's graph, its scheduler nodes, the buffers saved for backward) for each part of a
    graph compiled with dynamic shapes, kept while this process runs: its bytes depend on the sizes
    it runs at, and engine.inductor.dynamic_bytes counts them again at each (never serialized)."""

    @property
    def code_hash(self) -> str:
        """Hash of the code with what changes from compile to compile of one graph taken out:
        provenance handle numbers and the graph number in profiler labels."""
        code = _HANDLE_NUMBER.sub(r"\1", self.code)
        code = _GRAPH_LABEL.sub("graph_", code)
        code = _AOT_ID.sub("", code)
        return hashlib.sha256((STORE_FORMAT + code).encode()).hexdigest()

    @property
    def backward(self) -> bool:
        """A backward graph takes the gradients of the forward's outputs (`tangents_N`)."""
        signature = next((x for x in self.post_grad_graph.splitlines() if "def forward(" in x), "")
        return "tangents_" in signature

    def restore_provenance(self, stored: GraphBytes | None) -> None:
        """A backward graph's kernels are logged (with their stack traces) but not their post-grad
        nodes; kscope read those while inductor compiled it and kept them in its store."""
        if self.provenance or not self.stack_traces:
            return
        stable = stable_handles(self.stack_traces)
        kept = stored.kernels if stored is not None else {}
        self.provenance = {h: list(k.post) if (k := kept.get(stable[h])) else [] for h in self.stack_traces}

    def kernel_bytes(self) -> GraphBytes:
        """Per stable kernel handle, its bytes: each scheduler node given to the kernel it was
        generated into (engine.inductor.kernel_bytes), with the post-grad nodes provenance lists."""
        return self._stable(assign_to_kernels(self._handles(), self.nodes or []))

    def facts(self) -> GraphFacts:
        return GraphFacts(tuple(self.outputs), dict(self.unfused), tuple(self.autotune), self.estimated_peak_bytes)

    def kernel_bytes_at(self, target, unbacked: dict | None = None) -> GraphBytes | None:
        """kernel_bytes for the sizes of the target's current arguments (and `unbacked`, the values
        data-dependent sizes ran at): for a graph compiled with symbolic sizes, counted again
        (engine.inductor.dynamic_bytes); None for any other graph, or when the sizes cannot be read."""
        if self.live is None:
            return None
        from kscope.engine.inductor.dynamic_bytes import bytes_at

        counted = bytes_at(self.live, self._handles(), target, unbacked)
        return None if counted is None else self._stable(counted)

    def _handles(self) -> list[tuple[str, str, frozenset[str]]]:
        return [(h, profiler_name(h)[1], frozenset(post)) for h, post in self.provenance.items()]

    def _stable(self, counted: GraphBytes) -> GraphBytes:
        stable = stable_handles(self.provenance)
        kernels = {stable[h]: replace(k, post=tuple(self.provenance[h])) for h, k in counted.kernels.items()}
        return GraphBytes(kernels, counted.stray)


@dataclass(frozen=True)
class GraphFacts:
    """What a graph's round trips need beside its kernels' bytes (engine.compiled.round_trips),
    kept in kscope's store with them."""

    outputs: tuple[str, ...]
    """The buffers the graph hands back: never a round trip."""
    unfused: dict[str, str]
    """Inductor's reasons not to fuse two nodes (GraphCapture.unfused)."""
    autotune: tuple[Autotune, ...]
    estimated_peak_bytes: int | None = None
    """Inductor's estimate of the graph's peak memory (GraphCapture.estimated_peak_bytes)."""


_LIVE: dict[str, list[tuple]] = {}
"""code_hash -> GraphCapture.live, for graphs compiled with symbolic sizes in this process: a
later compile of the same code (the next save) is an FX-graph-cache hit, which logs no graph."""
LIVE_KEPT = 16


def keep_live(graphs) -> None:
    """Remember the live graphs of `graphs`; give the others (cache hits) those of their code."""
    for g in graphs:
        if g.live is not None and g.code:
            _LIVE.pop(g.code_hash, None)
            _LIVE[g.code_hash] = g.live
        elif g.code:
            g.live = _LIVE.get(g.code_hash)
    while len(_LIVE) > LIVE_KEPT:  # inductor's graphs are large: only the latest few
        _LIVE.pop(next(iter(_LIVE)))


class Capture(list):
    """The GraphCaptures of a block, in the order inductor compiled them, plus the recompiles
    dynamo reported meanwhile."""

    def __init__(self):
        super().__init__()
        self.recompiles: list[tuple[str, str]] = []
        """(compile id of the new compile, the guard failure that caused it)"""
        self.break_words: list[tuple[str, str]] = []
        """(compile id, dynamo's text of a graph break it logged: "Graph break in user code at
        FILE:LINE\nGraph Break Reason: ..."), in the order dynamo logged them."""
        self.cudagraph_skips: list[str] = []
        """Inductor's reasons for not using CUDA graphs (reduce-overhead on a graph it cannot capture)."""

    def current(self, compile_id: str, fills: str | None = None) -> GraphCapture:
        """The graph being compiled under compile_id; a new one when `fills` names a field the
        latest already has (each inductor compile logs its post-grad graph, code and provenance
        once)."""
        latest = next((g for g in reversed(self) if g.compile_id == compile_id), None)
        if latest is None or (fills is not None and getattr(latest, fills)):
            latest = GraphCapture(compile_id)
            self.append(latest)
        return latest


class _Listener(logging.Handler):
    def __init__(self, graphs: Capture, planner=None):
        super().__init__(logging.DEBUG)
        self.graphs, self.planner = graphs, planner
        self._planned: tuple | None = None
        """(inductor's graph, its scheduler nodes, their bytes) of the graph last planned: its
        metrics log reuses them, so the plan's bytes are the final Report's."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if record.name == METRICS_LOGGER:
                self._on_metrics(record)
            elif record.name == FUSION_LOGGER:
                self._on_fusion(record)
            elif record.name == CUDAGRAPHS_LOGGER:
                self.graphs.cudagraph_skips.append(record.getMessage())
            else:
                self._on_trace(record)
        except Exception:  # a listener must never break the user's compile
            pass

    def _on_metrics(self, record: logging.LogRecord) -> None:
        args = record.args
        if not isinstance(args, dict) or "nodes_num_elem" not in args:
            return
        cid = torch._guards.CompileContext.current_compile_id()
        # Computed here, while inductor's graph is still the current one (V.graph).
        snodes = [node for node, _ in args["nodes_num_elem"]]
        saved = saved_for_backward(snodes)
        planned, self._planned = self._planned, None
        reused = planned is not None and planned[0] is current_graph() and len(planned[1]) == len(snodes) and all(
            a is b for a, b in zip(planned[1], snodes))
        nodes = planned[2] if reused else [node_bytes(node, saved) for node in snodes]  # reused: counted when planned
        g = self.graphs.current(_cid(cid))
        g.outputs = sorted(set(g.outputs) | set(current_graph().get_output_names()))
        live = scheduled_nodes()
        if live is not None and not reused:  # a planned graph's estimate was read when planned
            part = estimated_peak(*live)  # a graph compiled in parts: the largest part's
            g.estimated_peak_bytes = None if part is None else max(part, g.estimated_peak_bytes or 0)
        if symbolic_sizes():
            g.live = (g.live or []) + [(current_graph(), snodes, saved)]
        g.nodes = (g.nodes or []) + nodes
        g.inductor_total = (g.inductor_total or 0) + int(args.get("num_bytes_accessed", 0))
        if not g.provenance and g.stack_traces:
            # Inductor logs no post-grad node mapping for a graph compiled outside dynamo's
            # compile (a backward graph), though it built one: read it while it is current.
            built = getattr(torch._inductor.debug, "_inductor_triton_kernel_to_post_grad_node_info", {})
            g.provenance = {h: list(built.get(h, ())) for h in g.stack_traces}
        if reused and self.planner is not None:
            self.planner.done()  # last: what it tells the app cannot keep the graph's own figures

    def _plan(self, g: GraphCapture) -> None:
        """Inductor has generated g's code and not compiled it yet: tell the planner its plan (a
        graph from inductor's cache, which has nothing left to compile, is done at once)."""
        live = scheduled_nodes()
        if live is None:
            self.planner.cached()
            return
        graph, snodes = live
        nodes = nodes_bytes(snodes)
        g.estimated_peak_bytes = estimated_peak(graph, snodes)
        self._planned = (graph, snodes, nodes)
        self.planner.planned(g, planned(g, graph, nodes), self.graphs)

    def _on_fusion(self, record: logging.LogRecord) -> None:
        """Inductor's scheduler says why it did not fuse two nodes (WhyNoFuse, logged as itself)."""
        why = record.msg
        if hasattr(why, "name1") and hasattr(why, "reason"):
            cid = _cid(torch._guards.CompileContext.current_compile_id())
            self.graphs.current(cid).unfused[f"{why.name1}|{why.name2}"] = str(why)

    def _on_trace(self, record: logging.LogRecord) -> None:
        meta = getattr(record, "metadata", None)
        if not isinstance(meta, dict):
            return
        payload = getattr(record, "payload", None)
        cid = f"{meta.get('frame_id')}/{meta.get('frame_compile_id')}"
        if "inductor_output_code" in meta and payload:
            if benchmarking():
                return  # max-autotune timing a candidate subgraph under the graph's compile id
            g = self.graphs.current(cid, "code")
            g.code = payload
            if self.planner is not None:
                self._plan(g)
        elif "inductor_post_grad_graph" in meta and payload:  # a cache hit logs it on its own
            self.graphs.current(cid, "post_grad_graph").post_grad_graph = payload
        elif "artifact" in meta and payload:
            name = meta["artifact"].get("name")
            if name == "inductor_post_grad_graph":  # a fresh compile logs it as an artifact
                self.graphs.current(cid, "post_grad_graph").post_grad_graph = payload
            elif name == "inductor_provenance_tracking_node_mappings":
                self.graphs.current(cid, "provenance").provenance = json.loads(payload).get("cppCodeToPost", {})
            elif name == "inductor_provenance_tracking_kernel_stack_traces":
                self.graphs.current(cid, "stack_traces").stack_traces = json.loads(payload)
                if self.planner is not None and scheduled_nodes() is None:
                    self.planner.refresh(self.graphs)  # a cache hit's kernels are known from here
            elif name in ("fx_graph_cache_hit", "fx_graph_cache_miss", "fx_graph_cache_bypass"):
                g = self.graphs.current(cid)
                g.cache = name.rsplit("_", 1)[1]
                g.fx_key = json.loads(payload).get("key")
            elif name == "dynamo_graph_break_reason":  # logged before the graph it ends is compiled
                self.graphs.break_words.append((cid, payload))
            elif name == "recompile_reasons":
                reasons = json.loads(payload)
                for reason in reasons if isinstance(reasons, list) else [reasons]:
                    self.graphs.recompiles.append((cid, str(reason)))
        elif "compilation_metrics" in meta:
            # A recompile for a size that changed (automatic dynamic shapes) logs no
            # recompile_reasons artifact; the frame's metrics still say why.
            reason = (meta["compilation_metrics"] or {}).get("recompile_reason")
            if reason and not any(c == cid for c, _ in self.graphs.recompiles):
                self.graphs.recompiles.append((cid, str(reason)))


def _cid(compile_id) -> str:
    if compile_id is None:
        return "?"
    return f"{compile_id.frame_id}/{compile_id.frame_compile_id}"


@contextlib.contextmanager
def capture_inductor(planner=None):
    """Listen to inductor's and dynamo's loggers for the block; yields a Capture. `planner`
    (engine.compiled.plan.Planner) is told each graph's plan before inductor compiles its kernels,
    and how far the compile is."""
    graphs = Capture()
    listener = _Listener(graphs, planner)
    metrics = logging.getLogger(METRICS_LOGGER)
    trace = logging.getLogger(TRACE_LOGGER)
    fusion = logging.getLogger(FUSION_LOGGER)
    cudagraphs = logging.getLogger(CUDAGRAPHS_LOGGER)
    saved = (metrics.level, metrics.propagate, trace.level, fusion.level, fusion.propagate, cudagraphs.level)
    metrics.setLevel(logging.INFO)
    metrics.propagate = fusion.propagate = False  # keep inductor's logs off the user's stderr
    trace.setLevel(logging.DEBUG)
    fusion.setLevel(logging.DEBUG)
    cudagraphs.setLevel(logging.WARNING)
    for logger in (metrics, trace, fusion, cudagraphs):
        logger.addHandler(listener)
    # A backward graph compiles lazily, outside the compile of its forward, which is the only
    # place inductor clears its provenance globals: without this, the kernels of every earlier
    # backward compiled in this process would be logged with it (and their handles collide).
    import torch._inductor.debug

    fresh = getattr(torch._inductor.debug, "reset_provenance_globals", contextlib.nullcontext)

    def autotuned(choice) -> None:
        cid = _cid(torch._guards.CompileContext.current_compile_id())
        graphs.current(cid).autotune.append(choice)

    progress = kernel_progress(planner.kernels) if planner is not None else contextlib.nullcontext()
    try:
        with fresh(), autotune_timings(autotuned), progress:
            yield graphs
    finally:
        for logger in (metrics, trace, fusion, cudagraphs):
            logger.removeHandler(listener)
        metrics.setLevel(saved[0])
        metrics.propagate = saved[1]
        trace.setLevel(saved[2])
        fusion.setLevel(saved[3])
        fusion.propagate = saved[4]
        cudagraphs.setLevel(saved[5])


def configure_inductor() -> None:
    """The inductor settings kscope needs; they are part of inductor's cache key, so set once."""
    import torch._inductor.config as ic

    from kscope.engine.inductor.kill_safe import use_own_cache

    use_own_cache()  # before any compile: kscope's own cache, atomic builds (engine.inductor.kill_safe)
    ic.cpp.enable_kernel_profile = True
    ic.trace.provenance_tracking_level = 1
    trust_probed()  # this machine's vector ISAs, as inductor's probe found them once (engine.inductor.vec_isa)
