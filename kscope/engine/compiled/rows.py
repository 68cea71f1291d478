"""A compiled run's kernel rows: the profiler's launches grouped by graph, phase and name, each
given its bytes (inductor's, or eager's accounting for what ran outside the graphs) and its
figures shared among its lines (report.lines)."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from kscope.engine.compiled.backend import RecordingBackend
from kscope.engine.compiled.graph_calls import launch_graphs
from kscope.engine.dispatch.accounting import AccountedFigures
from kscope.engine.eager.half import launch_label
from kscope.engine.inductor.capture import Capture, GraphCapture
from kscope.engine.inductor.provenance import CompiledKernel, compiled_kernels
from kscope.engine.inductor.ran_sizes import RanBytes
from kscope.report.lines import shared
from kscope.report.measures import sum_known
from kscope.report.model import Kernel
from kscope.report.place import Place, sorted_places
from kscope.trace.kernels import Launch, TraceSummary, is_custom_op


def kernel_rows(
    timed: TraceSummary,
    calls: int,
    graphs: Capture,
    kernels_of: list[list[CompiledKernel]],
    eager_per_launch: dict[tuple[str, str], AccountedFigures],
    graph_phases: list[str] | None = None,
    ran: dict[tuple, RanBytes] | None = None,
) -> tuple[list[Kernel], list[tuple[str, str | None]]]:
    """One row per (graph, phase, name), and the rows of unknown bytes (with why, where known). A
    launch's phase is its graph's (backward graph, optimizer step) when it ran in one, else what
    the trace says (see kernels). `eager_per_launch`: one launch's figures, as dispatch accounting
    gave them, of the ops eager ran and of those that ran outside the graphs. `ran`: the bytes of a
    library call or a custom op's body as one call with shapes recorded ran it (ran_sizes.row_bytes)."""
    graph_of = launch_graphs(timed, graphs, kernels_of)
    groups: dict[tuple, list[Launch]] = {}
    for launch in timed.launches:
        groups.setdefault(row_key(launch, graph_of, graph_phases), []).append(launch)
    labels = _labels(groups, graphs)
    rows, unknown = [], []
    for (graph, phase, name), launches in groups.items():
        kernels = kernels_of[graph] if graph is not None else []
        # On CUDA a library kernel (a cuBLAS gemm) is known by the ATen op that launched it.
        matches = [k for k in kernels if k.name == name] or [
            k for k in kernels if k.kind == "extern" and k.name == launches[0].owner_name
        ]
        figures = _row_figures(name, matches, launches, calls, eager_per_launch.get((phase, name)),
                               (ran or {}).get((graph, phase, name)))
        if figures.read is None:
            unknown.append((name, next((k.unknown for k in matches if k.unknown), None)))
        rows.append(_row(labels[graph, phase, name], phase, launches, calls, matches, figures))
    return rows, unknown


@dataclass(frozen=True)
class _RowFigures:
    """A compiled row's figures per call (None: unknown)."""

    read: int | None = None
    written: int | None = None
    saved: int | None = None
    flops: int | None = None
    accounted_lines: tuple[Place, ...] | None = None
    """The lines of the ops dispatch accounting gave the figures to, each weighing the same; None
    where the figures are inductor's or the recorded shapes': its kernels' weights share them."""
    working_set: int | None = None
    """The distinct bytes one launch touches (Kernel.working_set_bytes)."""


def _row_figures(name: str, matches: list[CompiledKernel], launches: list[Launch], calls: int,
                 accounted: AccountedFigures | None, recorded: RanBytes | None) -> _RowFigures:
    """Where a row's bytes come from, the first that applies: a custom op's body as accounted,
    the shapes recorded for a library call, inductor's count for its kernels, an op outside the
    graphs as accounted."""
    per_call = len(launches) / calls
    if accounted is not None and is_custom_op(name):
        # Inductor calls a custom op as a library call, whose kernel runs its body eagerly:
        # its bytes are what that body's ops move, as accounted (`a + 2 * b`: mul writes a
        # temporary that add reads back), not its inputs and outputs (inductor's).
        return _from_accounting(accounted, per_call)
    if recorded is not None and recorded.launches == per_call:
        # a library call, or the body of a custom op eager never ran: from the shapes recorded
        # for its calls, as many as ran in each timed call
        body = is_custom_op(launches[0].owner_name or "")  # a body op's match is its custom op's call
        saved = None if body else _saved(matches, _first_of_each_owner(launches) / calls)
        return _RowFigures(recorded.bytes_read, recorded.bytes_written, saved,
                           working_set=None if body else _largest_working_set(matches))
    if matches and all(k.bytes_read is not None for k in matches):
        return _from_inductor(matches, _first_of_each_owner(launches) / calls)
    if accounted is not None and not matches:  # outside the graphs: the same op accounted
        return _from_accounting(accounted, per_call)
    return _RowFigures()


def _from_inductor(matches: list[CompiledKernel], firsts: float) -> _RowFigures:
    """Inductor's figures for a row's kernels, `firsts` of them a call. Several entries of one
    name in a graph (two aten::mm calls) are launched in turn; one library call may launch
    several kernels: its bytes go to its first."""
    def per_call(total: int) -> int:
        return round(total * firsts / len(matches))

    flops = sum_known(k.flops for k in matches)
    flops = None if flops is None else per_call(flops)
    return _RowFigures(per_call(sum(k.bytes_read for k in matches)), per_call(sum(k.bytes_written for k in matches)),
                       _saved(matches, firsts), flops, working_set=_largest_working_set(matches))


def _largest_working_set(matches: list[CompiledKernel]) -> int | None:
    """The most distinct bytes one of the kernels touches; None where one of them is unknown."""
    sets = [k.working_set_bytes for k in matches]
    return None if not sets or None in sets else max(sets)


def _from_accounting(accounted: AccountedFigures, per_call: float) -> _RowFigures:
    """One accounted launch's figures, as many times as the row launches per call."""
    flops = None if accounted.flops is None else round(accounted.flops * per_call)
    return _RowFigures(round(accounted.bytes_read * per_call), round(accounted.bytes_written * per_call), None, flops,
                       accounted.lines, accounted.working_set_bytes)


def _row(label: str, phase: str, launches: list[Launch], calls: int, matches: list[CompiledKernel],
         figures: _RowFigures) -> Kernel:
    """The row of `launches`, the profiled `calls`' launches of one (graph, phase, name)."""
    per_call, time_us = len(launches) / calls, sum(x.dur_us for x in launches) / calls
    lines = {line for k in matches for line in k.lines} | set(figures.accounted_lines or ())
    weights = match_weights(matches) if figures.accounted_lines is None else even(figures.accounted_lines)
    return Kernel(
        name=label,
        launches=per_call,
        time_us=time_us,
        bytes_read=figures.read,
        bytes_written=figures.written,
        lines=sorted_places(lines),
        kind=launches[0].kind,
        **generated(matches),
        phase=phase,
        # backward and the optimizer write nothing for a later backward
        bytes_saved=figures.saved if phase == "forward" else 0,
        flops=figures.flops,
        working_set_bytes=figures.working_set,
        shares=shared(figures.read, figures.written, per_call, time_us, weights or even(sorted_places(lines)),
                      *(measured_lines(launches, matches, calls) if weights else (None, None))),
    )


def _labels(keys, graphs) -> dict[tuple, str]:
    """Each row's name, by its key (graph, phase, name): the name, with its graph's compile id
    where graphs of one phase have rows of that name."""
    per_name = defaultdict(set)
    for graph, phase, name in keys:
        per_name[phase, name].add(graph)
    return {(graph, phase, name): name if len(per_name[phase, name]) == 1 or graph is None
            else f"{name} [{graphs[graph].compile_id}]" for graph, phase, name in keys}


def generated(matches: list[CompiledKernel]) -> dict:
    """What a row says of the kernels inductor generated for it, the same in a run's rows and a
    plan's: fused or not, the ops, the code, what it does."""
    return {
        "fused": bool(matches) and matches[0].kind == "kernel",
        "ops": tuple(dict.fromkeys(op for k in matches for op in k.ops)),
        "code": next((k.code for k in matches if k.code), None),
        "what": next((k.what for k in matches if k.what), None),
    }


def match_weights(matches: list[CompiledKernel]) -> dict[Place | None, tuple[float, float]]:
    """Per line, the (read, written) weights of a row's kernels: each kernel's own (node_lines),
    scaled to its bytes where they are known, so two kernels of one row count by their size."""
    out: dict[Place | None, list[float]] = {}
    for k in matches:
        total_r = sum(w.read for w in k.weights) or 1.0
        total_w = sum(w.written for w in k.weights) or 1.0
        for w in k.weights:
            entry = out.setdefault(w.place, [0.0, 0.0])
            entry[0] += w.read / total_r * (k.bytes_read if k.bytes_read is not None else 1.0)
            entry[1] += w.written / total_w * (k.bytes_written if k.bytes_written is not None else 1.0)
    return {p: (r, w) for p, (r, w) in out.items()}


def measured_lines(launches: list[Launch], matches: list[CompiledKernel], calls: int) -> tuple[dict | None, dict | None]:
    """Per line, the measured time and the launches per call of a row whose kernels each came
    from one line (two `mm` calls from two lines): the k-th launch of the row in each profiled
    call is its k-th kernel, in the order inductor generated them. (None, None) where that does
    not hold."""
    if len(matches) < 2 or any(len(k.weights) != 1 for k in matches):
        return None, None
    per_call: dict[str | None, list[Launch]] = {}
    for launch in launches:
        per_call.setdefault(launch.segment, []).append(launch)
    if any(len(x) != len(matches) for x in per_call.values()):
        return None, None
    times: dict = {}
    counts: dict = {}
    for ran in per_call.values():
        for k, launch in zip(matches, ran):
            place = k.weights[0].place
            times[place] = times.get(place, 0.0) + launch.dur_us / calls
            counts[place] = counts.get(place, 0) + 1
    return times, {place: n / calls for place, n in counts.items()}


def even(places) -> dict[Place | None, tuple[float, float]]:
    """Equal weights for each of `places`: the lines of an op accounted the eager way."""
    return {p: (1.0, 1.0) for p in places}


def row_key(launch: Launch, graph_of: dict, graph_phases: list[str] | None) -> tuple:
    """(graph, phase, name) of a launch's row."""
    # the ATen ops a custom op's kernel ran are its row, in a graph as outside one
    inside_custom = launch.kind != "kernel" and is_custom_op(launch.composite or "")
    name = launch_label(launch) if launch.call is None or inside_custom else launch.name
    graph = graph_of[launch.call, launch.region]
    return graph, graph_phases[graph] if graph is not None and graph_phases else launch.phase, name



def _saved(matches: list[CompiledKernel], firsts: float) -> int | None:
    """What a row's kernels write only for backward, `firsts` times a call (None: not known).
    Which outputs are saved does not depend on the sizes a library call ran at (their bytes do:
    the count is inductor's, at the sizes it compiled for)."""
    saved = sum_known(k.bytes_saved for k in matches) if matches else None
    return None if saved is None else round(saved * firsts / len(matches))


def _first_of_each_owner(launches: list[Launch]) -> int:
    seen, firsts = set(), 0
    for launch in launches:
        if launch.owner is None or launch.owner not in seen:
            firsts += 1
        seen.add(launch.owner)
    return firsts


def graph_phase(g: GraphCapture, backend: RecordingBackend) -> str:
    if g.backward:
        return "backward"
    return "optimizer" if g.compile_id in backend.optimizer else "forward"


def graph_kernels(g: GraphCapture, rows: dict | None, backend: RecordingBackend) -> list[CompiledKernel]:
    """A graph's kernels as inductor generated them, with `rows`, its bytes per kernel (kernel_bytes)."""
    return compiled_kernels(
        provenance=g.provenance,
        stack_traces=g.stack_traces,
        output_code=g.code,
        post_grad_graph=g.post_grad_graph,
        kernel_bytes=rows,
        input_names=input_names(g, backend.inputs.get(g.compile_id, [])),
        caller=backend.callers.get(g.compile_id, ()),
    )


def input_names(g: GraphCapture, names: list[str]) -> dict[str, str]:
    """A forward graph's placeholders, in order, are the graph's inputs dynamo handed inductor."""
    if g.backward:
        return {}
    placeholders = _PLACEHOLDER.findall(next((x for x in g.post_grad_graph.splitlines() if "def forward(" in x), ""))
    return dict(zip(placeholders, names))


_PLACEHOLDER = re.compile(r"(\w+): \"")


def plan_rows(graphs: list[GraphCapture], kernels_of: list[list[CompiledKernel]], phases: list[str]) -> list[Kernel]:
    """The rows kernel_rows will make of these graphs, before any of them ran (report.plan): one
    per (graph, phase, name), each kernel of the row launched once a call as inductor's code calls
    it, so its bytes are its kernels' sum (the profiler may later say otherwise: the final rows are
    what stays). Launches and time are unknown: None."""
    groups: dict[tuple, list[CompiledKernel]] = {}
    for i, kernels in enumerate(kernels_of):
        for k in kernels:
            groups.setdefault((i, phases[i], k.name), []).append(k)
    labels = _labels(groups, graphs)
    rows = []
    for (graph, phase, name), matches in groups.items():
        known = all(k.bytes_read is not None and k.bytes_written is not None for k in matches)
        lines = sorted_places({line for k in matches for line in k.lines})
        saved = _saved(matches, len(matches))
        rows.append(
            Kernel(
                name=labels[graph, phase, name],
                launches=None,
                time_us=None,
                bytes_read=sum(k.bytes_read for k in matches) if known else None,
                bytes_written=sum(k.bytes_written for k in matches) if known else None,
                lines=lines,
                kind=matches[0].kind,
                **generated(matches),
                phase=phase,
                bytes_saved=saved if phase == "forward" else 0,
                flops=sum_known(k.flops for k in matches),
                working_set_bytes=_largest_working_set(matches),
            )
        )
    return rows
