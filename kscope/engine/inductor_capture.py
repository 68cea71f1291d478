"""What inductor tells about each graph it compiles: code, provenance, bytes per kernel.

Inductor logs, per compile, the generated module (`inductor_output_code`), which post-grad nodes
each kernel came from and their user stack traces (provenance, with
`trace.provenance_tracking_level = 1`), all on the structured-trace logger `torch.__trace`; and,
when the `inductor_metrics` logger is at INFO, its own bytes per scheduler node. We listen to
those loggers for the length of a compile and keep what they said, keyed by compile id ("0/0",
the same id the profiler prints as "Torch-Compiled Region: 0/0").

An FX-graph-cache hit logs code and provenance again but no bytes, so bytes seen once are kept in
a small store keyed by the hash of the generated code (`TrafficStore`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

import re

import torch

from kscope.engine.provenance import stable_handles

_HANDLE_NUMBER = re.compile(r"(\[Provenance debug handles\] [\w.]+):\d+")
_GRAPH_LABEL = re.compile(r"graph_\d+_")
_AOT_ID = re.compile(r"# AOT ID: .*")
METRICS_LOGGER = "torch._inductor.compile_fx.__inductor_metrics"
TRACE_LOGGER = "torch.__trace"


@dataclass
class NodeBytes:
    origins: frozenset[str]
    read: int
    written: int


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

    @property
    def code_hash(self) -> str:
        """Hash of the code with what changes from compile to compile of one graph taken out:
        provenance handle numbers and the graph number in profiler labels."""
        code = _HANDLE_NUMBER.sub(r"\1", self.code)
        code = _GRAPH_LABEL.sub("graph_", code)
        code = _AOT_ID.sub("", code)
        return hashlib.sha256(code.encode()).hexdigest()

    def kernel_bytes(self) -> dict[str, tuple[int, int]]:
        """Stable kernel handle -> (bytes read, bytes written), each scheduler node given to the
        kernel whose provenance holds its post-grad nodes (provenance is built from the same
        node origins, so the match is exact, not a guess by name)."""
        out: dict[str, list[int]] = {h: [0, 0] for h in self.provenance}
        for node in self.nodes or ():
            best, overlap = None, 0
            for handle, post in self.provenance.items():
                n = len(node.origins.intersection(post))
                if n > overlap:
                    best, overlap = handle, n
            if best is not None:
                out[best][0] += node.read
                out[best][1] += node.written
        stable = stable_handles(self.provenance)
        return {stable[h]: (r, w) for h, (r, w) in out.items()}


class Capture(dict):
    """{compile id: GraphCapture}, plus the recompiles dynamo reported meanwhile."""

    def __init__(self):
        super().__init__()
        self.recompiles: list[tuple[str, str]] = []
        """(compile id of the new compile, the guard failure that caused it)"""


class _Listener(logging.Handler):
    def __init__(self, graphs: Capture):
        super().__init__(logging.DEBUG)
        self.graphs = graphs

    def _graph(self, compile_id: str) -> GraphCapture:
        return self.graphs.setdefault(compile_id, GraphCapture(compile_id))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if record.name == METRICS_LOGGER:
                self._on_metrics(record)
            else:
                self._on_trace(record)
        except Exception:  # a listener must never break the user's compile
            pass

    def _on_metrics(self, record: logging.LogRecord) -> None:
        args = record.args
        if not isinstance(args, dict) or "nodes_num_elem" not in args:
            return
        cid = torch._guards.CompileContext.current_compile_id()
        nodes = []
        for node, _ in args["nodes_num_elem"]:
            origins = frozenset(
                o.name for sn in node.get_nodes() if sn.node is not None for o in sn.node.origins
            )
            # Computed here, while inductor's graph is still the current one (V.graph).
            nodes.append(NodeBytes(origins, node.get_read_buffer_sizes(), node.get_write_buffer_sizes()))
        g = self._graph(_cid(cid))
        g.nodes = (g.nodes or []) + nodes

    def _on_trace(self, record: logging.LogRecord) -> None:
        meta = getattr(record, "metadata", None)
        if not isinstance(meta, dict):
            return
        payload = getattr(record, "payload", None)
        cid = f"{meta.get('frame_id')}/{meta.get('frame_compile_id')}"
        if "inductor_output_code" in meta and payload:
            self._graph(cid).code = payload
        elif "inductor_post_grad_graph" in meta and payload:  # a cache hit logs it on its own
            self._graph(cid).post_grad_graph = payload
        elif "artifact" in meta and payload:
            name = meta["artifact"].get("name")
            if name == "inductor_post_grad_graph":  # a fresh compile logs it as an artifact
                self._graph(cid).post_grad_graph = payload
            elif name == "inductor_provenance_tracking_node_mappings":
                self._graph(cid).provenance = json.loads(payload).get("cppCodeToPost", {})
            elif name == "inductor_provenance_tracking_kernel_stack_traces":
                self._graph(cid).stack_traces = json.loads(payload)
            elif name == "recompile_reasons":
                reasons = json.loads(payload)
                for reason in reasons if isinstance(reasons, list) else [reasons]:
                    self.graphs.recompiles.append((cid, str(reason)))


def _cid(compile_id) -> str:
    if compile_id is None:
        return "?"
    return f"{compile_id.frame_id}/{compile_id.frame_compile_id}"


@contextlib.contextmanager
def capture_inductor():
    """Listen to inductor's and dynamo's loggers for the block; yields a Capture."""
    graphs = Capture()
    listener = _Listener(graphs)
    metrics = logging.getLogger(METRICS_LOGGER)
    trace = logging.getLogger(TRACE_LOGGER)
    saved = (metrics.level, metrics.propagate, trace.level)
    metrics.setLevel(logging.INFO)
    metrics.propagate = False  # keep inductor's metrics off the user's stderr
    trace.setLevel(logging.DEBUG)
    metrics.addHandler(listener)
    trace.addHandler(listener)
    try:
        yield graphs
    finally:
        metrics.removeHandler(listener)
        trace.removeHandler(listener)
        metrics.setLevel(saved[0])
        metrics.propagate = saved[1]
        trace.setLevel(saved[2])


def configure_inductor() -> None:
    """The inductor settings kscope needs; they are part of inductor's cache key, so set once."""
    import torch._inductor.config as ic

    ic.cpp.enable_kernel_profile = True
    ic.trace.provenance_tracking_level = 1


class TrafficStore:
    """Inductor's per-kernel bytes, kept by hash of the generated code, for cache hits."""

    def __init__(self, root: Path | None = None):
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        self.root = root or Path(os.environ.get("KSCOPE_CACHE_DIR", Path(base) / "kscope")) / "traffic"
        self.memory: dict[str, dict[str, tuple[int, int]]] = {}

    def get(self, code_hash: str) -> dict[str, tuple[int, int]] | None:
        if code_hash in self.memory:
            return self.memory[code_hash]
        path = self.root / f"{code_hash}.json"
        try:
            data = {k: tuple(v) for k, v in json.loads(path.read_text()).items()}
        except (OSError, ValueError):
            return None
        self.memory[code_hash] = data
        return data

    def put(self, code_hash: str, kernel_bytes: dict[str, tuple[int, int]]) -> None:
        self.memory[code_hash] = kernel_bytes
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = self.root / f".{code_hash}.{os.getpid()}.tmp"
            tmp.write_text(json.dumps(kernel_bytes))
            os.replace(tmp, self.root / f"{code_hash}.json")  # atomic: readers never see half a file
        except OSError:
            pass  # the in-memory copy still serves this process
