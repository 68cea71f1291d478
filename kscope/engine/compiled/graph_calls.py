"""Which compiled graph a profiled launch ran in: the graph call ("## Call CompiledFxGraph KEY ##")
it ran under, tied to one of the graphs inductor compiled, and the calls where that was a guess."""

from __future__ import annotations

from collections import defaultdict

from kscope.engine.inductor.capture import Capture
from kscope.trace.kernels import TraceSummary


def graph_of_call(
    call: str | None, region: str | None, names: set[str], graphs: Capture, kernels_of: list
) -> tuple[int | None, str | None]:
    """The graph a "## Call CompiledFxGraph KEY ##" ran, and None or how it was guessed: by
    inductor's cache key; else (cache off: KEY is "None") the forward graph of the compiled region
    it ran in, when the region has one; else a guess: the latest of the region's forward graphs,
    or the graph whose kernels best cover the names launched under it."""
    if call is None:
        return None, None
    for i, g in enumerate(graphs):
        if g.fx_key and g.fx_key == call:
            return i, None
    in_region = [i for i, g in enumerate(graphs) if g.compile_id == region and not g.backward]
    if len(in_region) == 1:
        return in_region[0], None
    if in_region:
        return in_region[-1], f"the latest of the {len(in_region)} forward graphs of region {region}"
    best, score = None, 0
    for i, kernels in enumerate(kernels_of):
        overlap = len(names & {k.name for k in kernels})
        if overlap and overlap >= score:  # on a tie the latest graph: a recompile's replaces the earlier
            best, score = i, overlap
    if best is None:
        return None, None
    return best, f"the graph with the most kernels of those names ({score} of {len(names)})"


def guessed_graphs(timed: TraceSummary, graphs: Capture, kernels_of: list) -> list[str]:
    """Notes for the graph calls whose graph kscope guessed: the bytes of their rows are those of
    a graph that may not be the one that ran (its kernels' names matched; its sizes may not)."""
    notes = []
    for (call, region), names in names_under(timed).items():
        index, how = graph_of_call(call, region, names, graphs, kernels_of)
        if how is not None:
            notes.append(
                f"compiled: a call of {call!r} matched no graph by inductor's cache key; its rows' bytes are those of "
                f"graph {graphs[index].compile_id}, {how}: a guess"
            )
    return notes


def launch_graphs(timed: TraceSummary, graphs: Capture, kernels_of: list) -> dict[tuple, int | None]:
    """(compiled graph call, region) of the launches -> the graph it ran (see _graph_of_call)."""
    return {where: graph_of_call(*where, names, graphs, kernels_of)[0] for where, names in names_under(timed).items()}


def names_under(timed: TraceSummary) -> dict[tuple, set[str]]:
    """(compiled graph call, region) -> the names launched under it (and their owners')."""
    names_under: dict[tuple, set[str]] = defaultdict(set)
    for launch in timed.launches:
        names_under[launch.call, launch.region].add(launch.name)
        if launch.owner_name:
            names_under[launch.call, launch.region].add(launch.owner_name)
    return names_under
