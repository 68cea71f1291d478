"""Compiled round trips: buffers one of inductor's kernels writes and another reads back from
memory, from its scheduler nodes' buffers; with why they were not fused: inductor's own reason
where its fusion log gives one, else what inductor's graph says (a library call, a reduction
before a consumer of another shape). A buffer the call returns is an output, not a round trip.
"""

from __future__ import annotations

from collections import defaultdict

from kscope.engine.inductor.capture import GraphFacts
from kscope.engine.inductor.kernel_bytes import GraphBytes, KernelBytes
from kscope.report.compile import Autotune
from kscope.report.model import RoundTrip
from kscope.report.place import sorted_places


def compiled_round_trips(kernels: list, rows: GraphBytes | None, stable: dict, facts: GraphFacts | None
                         ) -> list[RoundTrip] | None:
    """One graph's round trips. kernels: provenance.CompiledKernel; rows: its kernel_bytes (per
    stable handle: the buffers each kernel writes and reads); facts: GraphCapture.facts(). None
    when the rows are unknown. A buffer one loop of a C++ kernel writes and a later loop of the
    same kernel reads (inductor put two unfused nodes in one kernel) is a round trip too."""
    if rows is None or facts is None:
        return None
    # a kernel kscope has no bytes for writes and reads no buffer it knows of
    entry = {k.handle: rows.kernels.get(stable[k.handle]) or KernelBytes() for k in kernels}
    producer: dict[str, tuple] = {}
    for k in kernels:
        for buf, nbytes in entry[k.handle].outputs.items():
            producer[buf] = (k, nbytes)
    readers: dict[str, list] = defaultdict(list)
    for k in kernels:
        for buf in entry[k.handle].inputs:
            if buf in producer and k not in readers[buf]:
                readers[buf].append(k)
    outputs = set(facts.outputs)
    trips = []
    for buf, consumers in readers.items():
        if buf in outputs:
            continue
        made_by, nbytes = producer[buf]
        reason, hint, detail = why_not_fused(buf, made_by, consumers, entry, facts.unfused)
        hint = _autotuned(made_by, facts.autotune) or hint
        trips.append(
            RoundTrip(
                buffer=buf,
                bytes=nbytes,
                producer=made_by.name,
                consumers=tuple(k.name for k in consumers),
                lines=sorted_places(place for k in (made_by, *consumers) for place in k.lines),
                reason=reason,
                hint=hint,
                detail=detail,
            )
        )
    return trips


TEMPLATE_HINT = (
    "inductor fuses an epilogue into a matmul only when it generates the matmul itself from a template "
    "(torch.compile(mode=\"max-autotune\"))"
)


def why_not_fused(buf: str, made_by, consumers: list, entry: dict[str, KernelBytes], unfused: dict[str, str]
                  ) -> tuple[str, str, str]:
    """(reason, hint, inductor's own words) for `buf`, which `made_by` writes and `consumers` read."""
    mine = entry[made_by.handle]
    detail = _inductor_says(mine.nodes, [n for k in consumers for n in entry[k.handle].nodes], unfused)
    if made_by.kind == "extern":
        return (f"{made_by.name} is a library call: it runs as its own kernel and writes its whole result "
                "before anything can use it", TEMPLATE_HINT, detail)
    library = next((k for k in consumers if k.kind == "extern"), None)
    if library is not None:
        return (f"{library.name} is a library call: it reads its inputs from memory, so what feeds it "
                "cannot be fused into it", "", detail)
    within = "inside one C++ kernel, between two of its loops: " if made_by in consumers else ""
    if buf in mine.reduced:
        return (within + "a reduction must finish before a consumer that iterates over another shape can use "
                "its result", "", detail)
    if detail:
        return within + detail.split(": ", 1)[-1], "", detail
    return within + "inductor did not fuse them and logged no reason", "", ""


def _autotuned(made_by, autotune: tuple[Autotune, ...]) -> str:
    """When max-autotune timed the library call that made the buffer against generated candidates
    and the library won: say so, with inductor's times (the template would have fused)."""
    for tuned in autotune:
        choices = tuned.choices
        if len(choices) < 2 or choices[0].ms is None or choices[0].name.lstrip("_") not in made_by.name:
            continue
        won, rest = choices[0], [c for c in choices[1:] if c.ms is not None]
        if rest:
            return (f"max-autotune timed {len(choices)} candidates for {tuned.op} and the library's "
                    f"{won.name} ({won.ms:.3f} ms) beat {rest[0].name} ({rest[0].ms:.3f} ms), a template "
                    "that can fuse this epilogue; --option max_autotune_gemm_backends=CPP (TRITON on CUDA) "
                    "leaves it only the templates")
    return ""


def _inductor_says(producer_nodes, consumer_nodes, unfused: dict[str, str]) -> str:
    """Inductor's "cannot fuse X with Y: why" for a pair of the two kernels' scheduler nodes (a
    fused node is named after its parts: "op0_op1")."""
    for pair, text in unfused.items():
        first, _, second = pair.partition("|")
        if _names(first) & _names_of(producer_nodes) and _names(second) & _names_of(consumer_nodes):
            return text
    return ""


def _names(node_name: str) -> set[str]:
    return set(node_name.split("_"))


def _names_of(nodes) -> set[str]:
    return {part for n in nodes for part in n.split("_")}
