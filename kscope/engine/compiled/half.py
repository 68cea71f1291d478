"""The compiled half: torch.compile, then kernels from the profiler and bytes from inductor."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import torch

from kscope.engine.compiled.backend import RecordingBackend
from kscope.engine.compiled.graph_calls import guessed_graphs, launch_graphs
from kscope.engine.compiled.plan import Planner
from kscope.engine.compiled.round_trips import compiled_round_trips
from kscope.engine.compiled.rows import graph_kernels, graph_phase, kernel_rows, row_key
from kscope.engine.dispatch.accounting import AccountedFigures, outside_graphs
from kscope.engine.eager.half import EagerRun, launch_label
from kscope.engine.eager.round_trips import grouped
from kscope.engine.inductor.bytes import DATA_DEPENDENT
from kscope.engine.inductor.caches import caches_off
from kscope.engine.inductor.capture import Capture, GraphCapture, GraphFacts, capture_inductor, keep_live
from kscope.engine.inductor.kernel_bytes import GraphBytes
from kscope.engine.inductor.modes import (
    applied,
    autotune_of,
    cuda_graphs_of,
    cudagraph_skips,
)
from kscope.engine.inductor.numbering import fresh_compile_state
from kscope.engine.inductor.provenance import CompiledKernel, stable_handles, template_labels
from kscope.engine.inductor.ran_sizes import RanBytes, has_unbacked, row_bytes, shape_call, solved
from kscope.engine.inductor.store import TrafficStore
from kscope.engine.measure.profiling import synchronize
from kscope.engine.measure.timing import Timed
from kscope.engine.target.loading import Target, code_of
from kscope.report.compile import CompileOptions
from kscope.report.measures import sum_known
from kscope.report.model import ModeResult, Recompile
from kscope.trace.collectives import per_call
from kscope.trace.kernels import TraceSummary, is_custom_op

WARMUP_CALLS = 2


class CompileFailed(Exception):
    """torch.compile raised; the eager half stays valid."""


def _function_name(target: Target) -> str:
    return getattr(code_of(target.fn), "__name__", target.name)


def run_compiled(
    target: Target,
    device: torch.device,
    user_file: str,
    store: TrafficStore,
    eager: EagerRun,
    time_it: Callable[[Callable[[], object], float], Timed],
    reuse: KeptCompile | None = None,
    options: CompileOptions | None = None,
    planner: Callable[[RecordingBackend], Planner] | None = None,
) -> CompiledRun:
    """The compiled ModeResult, notes about it, and the timing of both modes. `eager` gives bytes
    to launches that ran outside any compiled graph (code dynamo left to run eagerly): the same
    ops, accounted the eager way; and the ops the dispatcher ran, so composite ops count the same
    in both modes. time_it(call, seconds one call took) times eager against compiled: its first
    profiled rounds are also what the compiled rows are made of (no profile of its own). `reuse`:
    a torch.compile kept from an earlier run (a sweep's previous size), which recompiles only when
    its guards fail, as the user's own would; by default, a fresh one. `options`: torch.compile's
    mode and options (a kept compile has its own). `planner(backend)`: the Planner told each new
    graph's plan before inductor compiles it (engine.compiled.plan)."""
    if reuse is None:
        fresh_compile_state()  # no guards or graphs from an earlier run, graphs numbered from 0
        reuse = KeptCompile(target.fn, user_file, options or CompileOptions())
    backend, options = reuse.backend, reuse.options
    skips_before = cudagraph_skips()
    ran = _listened_calls(target.runner(reuse.compiled), device, store, eager, time_it, reuse,
                          planner(backend) if planner is not None else None)
    _name_templates(ran.timed, reuse.graphs + list(ran.fresh))
    calls = sum(1 for label in ran.timing.labels if label.startswith("c"))
    source, notes = _fill_bytes(ran.fresh, store, target, device, options)
    graphs = _every_graph(reuse, ran.fresh, store)
    counted = _counted(graphs, target, store, backend, ran.shapes)
    kernels, unknown = kernel_rows(ran.timed, calls, graphs, counted.kernels_of, {**eager.per_launch, **ran.outside},
                                   counted.phases, counted.ran_rows)
    facts = _ran_facts(graphs, ran.timed, counted.kernels_of, store)
    notes += ran.outside_notes + _unknown_notes(unknown) + guessed_graphs(ran.timed, graphs, counted.kernels_of)
    graphed = cuda_graphs_of(options, device, ran.timed, calls, ran.fresh.cudagraph_skips, cudagraph_skips() - skips_before)
    if graphed is not None and graphed.skipped:
        notes.append(f"compiled ({options.mode}): {graphed.line()}")
    result = ModeResult(
        launches=len(ran.timed.launches) / calls,
        bytes_read=sum_known(k.bytes_read for k in kernels),
        bytes_written=sum_known(k.bytes_written for k in kernels),
        kernel_time_us=sum(k.time_us for k in kernels),
        kernels=tuple(kernels),
        memcpy=round(ran.timed.memcpy / calls),
        memset=round(ran.timed.memset / calls),
        calls=calls,
        compile_s=ran.compile_s,
        graphs=backend.graphs,
        graph_breaks=tuple(backend.breaks),
        recompiles=tuple(Recompile(reason, _function_name(target)) for _, reason in graphs.recompiles),
        traffic_source=source,
        round_trips=_round_trips(graphs, counted.kernels_of, counted.bytes_of, facts),
        autotune=autotune_of(facts.values()),
        cuda_graphs=graphed,
        collectives=per_call(ran.timed.collectives, calls, lambda x: x.name if x.call else launch_label(x)),
    )
    estimates = tuple(None if f is None else f.estimated_peak_bytes for f in facts.values())
    return CompiledRun(result, tuple(notes), ran.timing, tuple(graphs), len(ran.fresh), estimates)


@dataclass(frozen=True)
class _Calls:
    """What the compiled half's calls gave while kscope listened to inductor and dynamo."""

    fresh: Capture
    """The graphs inductor compiled during the calls."""
    compile_s: float
    timing: Timed
    timed: TraceSummary
    """The compiled calls' profile (timing's rounds labelled "c")."""
    shapes: TraceSummary | None
    """One more call's profile with shapes recorded, where needed (ran_sizes.shape_call)."""
    outside: dict[tuple[str, str], AccountedFigures]
    """One launch's figures of the ops that ran outside the graphs (accounting.outside_graphs)."""
    outside_notes: list[str]


def _listened_calls(call: Callable[[], object], device: torch.device, store: TrafficStore, eager: EagerRun,
                    time_it: Callable[[Callable[[], object], float], Timed], reuse: KeptCompile,
                    plan: Planner | None) -> _Calls:
    """Every call of the compiled half, listened to from first to last: a call that fails a
    guard recompiles, and says why. The first call compiles; then the warm-up, the timed rounds,
    and the calls that read what the timed ones cannot (recorded shapes, what runs outside the
    graphs)."""
    backend, options = reuse.backend, reuse.options
    with applied(options), capture_inductor(plan) as fresh, backend.keys.backward():
        backend.words = fresh.break_words  # dynamo logs a break's words before the backend sees its graph
        compile_s = _first_call(call, device, plan)
        warm = time.perf_counter()
        for _ in range(WARMUP_CALLS):
            call()
            synchronize(device)
        timing = time_it(call, (time.perf_counter() - warm) / WARMUP_CALLS)
        # data-dependent sizes, and custom ops eager never ran: read off one call's recorded shapes
        keep_live(fresh)  # a cache hit of a graph with symbolic sizes counted again in this process
        # (a cache hit kscope's store has no bytes for may have some: it is compiled again below)
        dependent = any(_data_dependent(g, store) or (g.code and g.nodes is None and store.graph_bytes(g.code_hash) is None)
                        for g in reuse.graphs + list(fresh))
        timed = timing.trace.only("c")
        shapes = shape_call(call, device, dependent, timed, eager.per_launch, eager.dispatched)
        outside, outside_notes = outside_graphs(call, device, eager.dispatched, timed, timing.labels, backend, options)
    return _Calls(fresh, compile_s, timing, timed, shapes, outside, outside_notes)


def _first_call(call: Callable[[], object], device: torch.device, plan: Planner | None) -> float:
    """The first call, which compiles: its seconds, less those kscope spent on plans (not the
    compile's). torch.compile's error is CompileFailed: the eager half stays valid."""
    start = time.perf_counter()
    try:
        call()
        synchronize(device)
    except Exception as e:
        raise CompileFailed(e) from e
    compile_s = time.perf_counter() - start - (plan.spent_s if plan else 0.0)
    if plan is not None:
        plan.ran()
    return compile_s


def _name_templates(timed: TraceSummary, graphs: list[GraphCapture]) -> None:
    """A C++ template's kernel is known by its Python name: the launches the profiler named by
    the template's label take it."""
    labels = {k: v for g in graphs for k, v in template_labels(g.code).items()}
    for launch in timed.launches:
        launch.name = labels.get(launch.name, launch.name)


def _every_graph(reuse: KeptCompile, fresh: Capture, store: TrafficStore) -> Capture:
    """The kept compile's graphs, this run's after the earlier runs' (kept for the next run); a
    cache hit's backward given its post-grad nodes from the store."""
    for g in fresh:
        g.restore_provenance(store.graph_bytes(g.code_hash))
    graphs = Capture()
    graphs += reuse.graphs + list(fresh)
    graphs.recompiles = fresh.recompiles
    reuse.graphs = list(graphs)
    return graphs


@dataclass(frozen=True)
class _Counted:
    """The figures of each graph, by its index in the run's graphs."""

    bytes_of: list[GraphBytes | None]
    kernels_of: list[list[CompiledKernel]]
    phases: list[str]
    ran_rows: dict[tuple, RanBytes]
    """The rows whose bytes are the recorded shapes' (ran_sizes.row_bytes)."""


def _counted(graphs: Capture, target: Target, store: TrafficStore, backend: RecordingBackend,
             shapes: TraceSummary | None) -> _Counted:
    """Each graph's bytes and kernels: a graph compiled for dynamic shapes counted at the sizes of
    this call, and at the values its data-dependent sizes ran at where `shapes` recorded them."""
    bytes_of = [g.kernel_bytes_at(target) if g.live is not None else store.graph_bytes(g.code_hash) for g in graphs]
    kernels_of = [graph_kernels(g, rows, backend) for g, rows in zip(graphs, bytes_of)]
    phases = [graph_phase(g, backend) for g in graphs]
    if shapes is None:
        return _Counted(bytes_of, kernels_of, phases, {})
    shape_graph = launch_graphs(shapes, graphs, kernels_of)
    for i, g in enumerate(graphs):  # counted again at the values its data-dependent sizes ran at
        externs = [x for x in shapes.launches if x.kind == "extern" and shape_graph[x.call, x.region] == i]
        values = solved(g.live, externs) if has_unbacked(g) else {}
        if values:
            bytes_of[i] = g.kernel_bytes_at(target, values)
            kernels_of[i] = graph_kernels(g, bytes_of[i], backend)
    # Only where inductor's count is not the call's: a graph whose sizes are data-dependent, a
    # custom op's body. Elsewhere inductor's count stands (after _fill_bytes, a cache hit's too):
    # the recorded shapes cannot tell one tensor passed twice (addmm(g, g, w)) from two.
    at_ran = {i for i, g in enumerate(graphs) if _data_dependent(g, store)}
    ran_rows = row_bytes(shapes, lambda x: row_key(x, shape_graph, phases),
                         lambda x: is_custom_op(x.composite or "") or shape_graph.get((x.call, x.region)) in at_ran)
    return _Counted(bytes_of, kernels_of, phases, ran_rows)


def _unknown_notes(unknown: list[tuple[str, str | None]]) -> list[str]:
    """One note per reason a row's bytes are unknown, naming the rows."""
    why: dict[str, list[str]] = defaultdict(list)
    for name, reason in unknown:
        why[reason or "not a kernel of a graph inductor logged, nor an op kscope accounted outside the graphs or eagerly"].append(name)
    return [f"compiled: bytes unknown for {', '.join(names)}: {reason}" for reason, names in why.items()]


class KeptCompile:
    """One torch.compile of the target and the graphs it compiled so far, kept across runs."""

    def __init__(self, fn, user_file: str, options: CompileOptions | None = None):
        self.options = options or CompileOptions()
        self.backend = RecordingBackend(user_file)
        self.compiled = torch.compile(
            fn, backend=self.backend, dynamic=self.options.dynamic, fullgraph=self.options.fullgraph
        )
        self.graphs: list[GraphCapture] = []


@dataclass(frozen=True)
class CompiledRun:
    result: ModeResult
    """Its times are those of its profiled rounds, until retimed with `timing`."""
    notes: tuple[str, ...]
    timing: Timed
    graphs: tuple[GraphCapture, ...] = ()
    """Every graph the compiled function has, this run's and those it kept from earlier runs."""
    new_graphs: int = 0
    """How many of them were compiled during this run."""
    estimated_peaks: tuple[int | None, ...] = ()
    """Inductor's estimate of the peak memory of each graph that ran, in order (None: unknown)."""


def _fill_bytes(graphs: Capture, store: TrafficStore, target: Target, device, options) -> tuple[str, list[str]]:
    """Make sure the store holds kscope's per-kernel bytes for every graph's code. A fresh
    compile logged inductor's; a cache hit did not, so fall back to kscope's store, and if that has
    none either, compile once more with inductor's caches off to have inductor count them. So too
    for a graph with data-dependent sizes: counting it at the sizes that ran needs inductor's graph
    (GraphCapture.live), which a cache hit has not."""
    missing = False
    for g in graphs:
        if not g.code:
            continue
        if g.nodes is not None:
            store.put_graph_bytes(g.code_hash, g.kernel_bytes())
            store.put_facts(g.code_hash, g.facts())
        elif store.graph_bytes(g.code_hash) is None or (_data_dependent(g, store) and g.live is None):
            missing = True
    source = (
        "inductor's bytes per scheduler node, tied to kernels by provenance; "
        "a gather counts the elements gathered, a library call all the outputs it writes"
    )
    if not missing:
        hits = sum(1 for g in graphs if g.code and g.nodes is None)
        source += f" ({hits} graph(s) from inductor's cache, bytes from kscope's store)" if hits else ""
    else:
        fresh_compile_state()  # numbered as the first compile was: the same C++ sources, compiled once
        again = RecordingBackend("")
        with applied(options), caches_off(), capture_inductor() as fresh, again.keys.backward():  # the same mode and options: the same code
            target.runner(torch.compile(target.fn, backend=again, dynamic=options.dynamic))()
            synchronize(device)
        for g in fresh:
            if g.code and g.nodes is not None:
                store.put_graph_bytes(g.code_hash, g.kernel_bytes())
                store.put_facts(g.code_hash, g.facts())
        keep_live(list(fresh) + list(graphs))  # the same code: the same graph, to count again at other sizes
        source += " (recompiled without inductor's cache to count bytes)"
    notes = []
    for g in graphs:
        stored = store.graph_bytes(g.code_hash)
        stray = stored.stray if stored is not None else 0
        if stray:
            notes.append(f"compiled: inductor counted {stray:,} B in graph {g.compile_id} that kscope could not tie to a kernel")
    return source, notes


def _data_dependent(g: GraphCapture, store: TrafficStore) -> bool:
    """A graph with data-dependent sizes: its live graph has some, or its stored bytes say so."""
    stored = store.graph_bytes(g.code_hash) if g.code else None
    return has_unbacked(g) or any(k.unknown == DATA_DEPENDENT for k in (stored.kernels.values() if stored else ()))


def _ran_facts(graphs: Capture, timed: TraceSummary, kernels_of: list[list[CompiledKernel]], store: TrafficStore
               ) -> dict[int, GraphFacts | None]:
    """The facts of the graphs that ran, by index: the compile's, or kscope's store's for a cache hit."""
    ran = launch_graphs(timed, graphs, kernels_of)
    return {i: graphs[i].facts() if graphs[i].nodes is not None else store.facts(graphs[i].code_hash)
            for i in sorted({g for g in ran.values() if g is not None})}


def _round_trips(graphs: Capture, kernels_of: list, bytes_of: list, facts: dict[int, GraphFacts | None]):
    """The round trips of the graphs that ran (their indexes: `facts`' keys), largest first; None
    when one graph's are unknown."""
    trips = []
    for i, known in facts.items():
        found = compiled_round_trips(kernels_of[i], bytes_of[i], stable_handles(graphs[i].provenance), known)
        if found is None:
            return None
        trips += found
    return grouped(trips)
