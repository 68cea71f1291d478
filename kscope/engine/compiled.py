"""The compiled half: torch.compile, then kernels from the profiler and bytes from inductor."""

from __future__ import annotations

import hashlib
import time
from collections import defaultdict

import torch
from torch._inductor.custom_graph_pass import CustomGraphPass

from kscope.engine.inductor_capture import GraphCapture, TrafficStore, capture_inductor
from kscope.engine.kernels import Launch, TraceSummary
from kscope.engine.profiling import profile_calls, synchronize
from kscope.engine.provenance import CompiledKernel, compiled_kernels, same_file
from kscope.engine.target import Target
from kscope.engine.breaks import plain_break
from kscope.report import GraphBreak, Kernel, ModeResult, Recompile

WARMUP_CALLS = 2


class CompileFailed(Exception):
    """torch.compile raised; the eager half stays valid."""


class _SourceKey(CustomGraphPass):
    """A pass that changes nothing and only adds, through its uuid, the user's stack traces of the
    graph's ops to inductor's cache key. Inductor caches a graph's provenance (file, line, code)
    with its code, and its key ignores where the ops came from: without this, a hit could point
    kernels at another file with the same graph, or at the lines of an earlier save."""

    def __init__(self, key: str):
        self.key = key

    def __call__(self, graph) -> None:
        return None

    def uuid(self) -> str:
        return self.key


def _source_key(gm) -> str:
    traces = "\n".join(node.meta.get("stack_trace") or "" for node in gm.graph.nodes)
    return hashlib.sha256(traces.encode()).hexdigest()


class _RecordingBackend:
    """Inductor, plus a note of each graph dynamo hands it and why the graph ended."""

    def __init__(self, user_file: str):
        self.user_file = user_file
        self.graphs = 0
        self.breaks: list[GraphBreak] = []


    def __call__(self, gm, example_inputs):
        from torch._inductor.compile_fx import compile_fx

        self.graphs += 1
        reason = getattr(gm, "compile_subgraph_reason", None)
        if reason is not None and reason.graph_break:
            frames = [f for f in reason.user_stack if same_file(f.filename, self.user_file)] or reason.user_stack
            last = frames[-1] if frames else None
            plain, explanation, hint = plain_break(reason.reason)
            self.breaks.append(
                GraphBreak(
                    reason=plain,
                    line=last.lineno if last else None,
                    file=last.filename if last else None,
                    explanation=explanation,
                    hint=hint,
                )
            )
        if torch._inductor.config.post_grad_custom_post_pass is not None:
            return compile_fx(gm, example_inputs)  # the user's own pass: leave it alone
        with torch._inductor.config.patch(post_grad_custom_post_pass=_SourceKey(_source_key(gm))):
            return compile_fx(gm, example_inputs)


def _function_name(target: Target) -> str:
    fn = target.fn.forward if isinstance(target.fn, torch.nn.Module) else target.fn
    return getattr(fn, "__name__", target.name)


def run_compiled(
    target: Target,
    device: torch.device,
    calls: int,
    user_file: str,
    store: TrafficStore,
    eager_per_launch: dict | None = None,
) -> ModeResult:
    """`eager_per_launch` gives bytes to launches that ran outside any compiled graph (code dynamo
    left to run eagerly): the same ops, accounted the eager way."""
    torch._dynamo.reset()  # a clean dynamo state: no guards or graphs from an earlier run
    backend = _RecordingBackend(user_file)
    compiled = torch.compile(target.fn, backend=backend)

    def call():
        return compiled(*target.args)

    # Listen for the whole compiled half: a call that fails a guard recompiles, and says why.
    with capture_inductor() as graphs:
        start = time.perf_counter()
        try:
            call()
            synchronize(device)
        except Exception as e:
            raise CompileFailed(e) from e
        compile_s = time.perf_counter() - start
        for _ in range(WARMUP_CALLS):
            call()
            synchronize(device)
        timed = profile_calls(call, device, calls)

    source = _fill_bytes(graphs, store, target, device)
    by_graph = {
        cid: compiled_kernels(
            provenance=g.provenance,
            stack_traces=g.stack_traces,
            output_code=g.code,
            post_grad_graph=g.post_grad_graph,
            kernel_bytes=store.get(g.code_hash),
            user_file=user_file,
        )
        for cid, g in graphs.items()
        if g.code
    }
    kernels = _kernel_rows(timed, calls, by_graph, eager_per_launch or {})
    return ModeResult(
        launches=len(timed.launches) / calls,
        bytes_read=sum(k.bytes_read for k in kernels),
        bytes_written=sum(k.bytes_written for k in kernels),
        kernel_time_us=sum(k.time_us for k in kernels),
        kernels=tuple(kernels),
        memcpy=round(timed.memcpy / calls),
        memset=round(timed.memset / calls),
        calls=calls,
        compile_s=compile_s,
        graphs=backend.graphs,
        graph_breaks=tuple(backend.breaks),
        recompiles=tuple(Recompile(reason, _function_name(target)) for _, reason in graphs.recompiles),
        traffic_source=source,
    )


def _fill_bytes(graphs: dict[str, GraphCapture], store: TrafficStore, target: Target, device) -> str:
    """Make sure the store holds inductor's bytes for every graph's code. A fresh compile logged
    them; a cache hit did not, so fall back to kscope's store, and if that has none either,
    compile once more with inductor's caches off to have inductor count them."""
    missing = False
    for g in graphs.values():
        if not g.code:
            continue
        if g.nodes is not None:
            store.put(g.code_hash, g.kernel_bytes())
        elif store.get(g.code_hash) is None:
            missing = True
    if not missing:
        hits = sum(1 for g in graphs.values() if g.code and g.nodes is None)
        return "inductor" + (f" ({hits} graph(s) from inductor's cache, bytes from kscope's store)" if hits else "")
    torch._dynamo.reset()
    with torch._inductor.config.patch(fx_graph_cache=False), torch._functorch.config.patch(
        enable_autograd_cache=False
    ), capture_inductor() as fresh:
        torch.compile(target.fn, backend=_RecordingBackend(""))(*target.args)
        synchronize(device)
    for g in fresh.values():
        if g.code and g.nodes is not None:
            store.put(g.code_hash, g.kernel_bytes())
    return "inductor (recompiled without inductor's cache to count bytes)"


def _kernel_rows(
    timed: TraceSummary, calls: int, by_graph: dict[str, list[CompiledKernel]], eager_per_launch: dict
) -> list[Kernel]:
    groups: dict[tuple, list[Launch]] = {}
    for launch in timed.launches:
        groups.setdefault((launch.region, launch.name), []).append(launch)
    names = defaultdict(set)
    for region, name in groups:
        names[name].add(region)
    rows = []
    for (region, name), launches in groups.items():
        graph = by_graph.get(region or "", [])
        # On CUDA a library kernel (a cuBLAS gemm) is known by the ATen op that launched it.
        matches = [k for k in graph if k.name == name] or [
            k for k in graph if k.kind == "extern" and k.name == launches[0].owner_name
        ]
        per_call = len(launches) / calls
        # Several entries of one name in a graph (two aten::mm calls) are launched in turn.
        repeat = per_call / len(matches) if matches else 0
        known = [k for k in matches if k.bytes_read is not None]
        read = round(sum(k.bytes_read for k in known) * repeat)
        written = round(sum(k.bytes_written for k in known) * repeat)
        lines = {line for k in matches for line in k.lines}
        if not matches and name in eager_per_launch:
            one_read, one_written, eager_lines = eager_per_launch[name]
            read, written = round(one_read * per_call), round(one_written * per_call)
            lines.update(eager_lines)
        rows.append(
            Kernel(
                name=name if len(names[name]) == 1 else f"{name} [{region}]",
                launches=per_call,
                time_us=sum(x.dur_us for x in launches) / calls,
                bytes_read=read,
                bytes_written=written,
                fused=bool(matches) and matches[0].kind == "kernel",
                ops=tuple(dict.fromkeys(op for k in matches for op in k.ops)),
                lines=tuple(sorted(lines)),
                code=next((k.code for k in matches if k.code), None),
                kind=launches[0].kind,
            )
        )
    return rows
