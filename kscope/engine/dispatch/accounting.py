"""One call under dispatch accounting (traffic.TrafficMode), tied to the launches the profiler
timed: the profile of the accounted call, read with its `kscope::op#N` markers, says which launch
each op belongs to; its launches' names key the bytes the timed rows take.

Two ways the accounted call differs from a timed one, and what is done about each:
- With any Python dispatch mode on, ATen takes every tensor for a subclass
  (at::isTensorSubclassLike), so code that works in place when no mode is on works out of place:
  autograd's engine sums two gradients of one tensor with `add`, not `add_`; SDPA's math path adds
  its mask with `add`, not `add_`. Under traffic's rules both twins move the same bytes (read self
  and the other operand, write a result of self's shape), so an accounted launch whose timed
  counterpart is its in-place twin takes the twin's name (align_twins), and the twins of the ops
  the mode saw are ops the timed trace may launch (with_twins).
- torch.compile runs a frame eagerly when a dispatch mode is on, unless the mode ignores compile
  internals: CompiledTrafficMode does, so a compiled call runs its graphs as timed and the mode
  sees the ops that run outside them (AOTAutograd's zeros for the gradient of an output no loss
  uses), which eager never runs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher

import torch

from kscope.engine.dispatch.traffic import TrafficMode, storages
from kscope.engine.dispatch.working_set import touched_bytes
from kscope.engine.measure.profiling import is_nonwork, record_events
from kscope.report.place import Place, sorted_places
from kscope.trace.kernels import Dispatched, Launch, TraceSummary, is_custom_op, summarize


class CompiledTrafficMode(TrafficMode):
    """TrafficMode under which torch.compile still runs its compiled code (see the docstring)."""

    @classmethod
    def ignore_compile_internals(cls) -> bool:
        return True


@dataclass
class Accounted:
    mode: TrafficMode
    summary: TraceSummary
    """The profile of the accounted call, its launches named as the timed calls name them once
    align_twins has run."""
    by_owner: dict[int, list]
    """Index of a launch's top-level op (Launch.owner) -> the accounted ops that ran under it."""
    returned: set
    """The storages of what the call returned."""


def account(
    call: Callable[[], object], device: torch.device, mode: TrafficMode, dispatched: Dispatched | None = None
) -> Accounted:
    """Run call once under `mode` and the profiler. dispatched: the ops the trace's launches are
    chosen among (kernels.summarize); by default those the mode saw, and their in-place twins."""
    returned: set = set()

    def accounted():
        with mode:
            out = call()
        returned.update(storages(out))
        return out

    events = record_events(accounted, device, 1)
    ops = dispatched.ops if dispatched is not None else with_twins(mode.dispatched)
    summary = summarize(events, is_nonwork, Dispatched(ops))
    by_owner: dict[int, list] = defaultdict(list)
    for op in mode.ops:
        by_owner[summary.markers.get(op.marker, -1)].append(op)
    return Accounted(mode, summary, by_owner, returned)


def with_twins(dispatched) -> frozenset[str]:
    """The ops the mode saw and the in-place twin of each that does work ("aten::add_" of
    "aten::add"): with no mode on, the timed call may run the twin in its place."""
    ops = frozenset(dispatched)
    return ops | {f"{op}_" for op in ops if not op.endswith("_") and not is_nonwork(op)}


def align_twins(accounted: list[Launch], timed: list[Launch]) -> int:
    """Give each accounted launch whose counterpart in one timed call (the same place in the
    sequence of launches) is its in-place twin the twin's name; how many were renamed."""
    a = [(x.phase, launch_label(x).removesuffix("_")) for x in accounted]
    t = [(x.phase, launch_label(x).removesuffix("_")) for x in timed]
    renamed = 0
    for i, j, n in SequenceMatcher(None, a, t, autojunk=False).get_matching_blocks():
        for x, y in zip(accounted[i:i + n], timed[j:j + n]):
            if y.name == f"{x.name}_":
                x.owner_name = y.name if x.owner_name == x.name else x.owner_name
                x.name = y.name
                renamed += 1
    return renamed


def first_call(timed: TraceSummary, label: str) -> list[Launch]:
    """The launches of the profiled call labelled `label`."""
    return [x for x in timed.launches if x.segment == label]


def launch_label(launch: Launch) -> str:
    """A launch's row name: the op, after the composite the user called when there is one
    ("aten::cross_entropy_loss › _log_softmax"); the custom op the user called, for the ATen ops
    its kernel ran ("mylib::add2": one row, its launches and bytes those of its body)."""
    if launch.composite and launch.kind != "kernel":
        if is_custom_op(launch.composite):
            return launch.composite
        return f"{launch.composite} › {launch.name.removeprefix('aten::')}"
    return launch.name


@dataclass(frozen=True)
class AccountedFigures:
    """What dispatch accounting gave the launches of one row (phase, launch name): over the
    accounted call (figures_per_name), or one launch's share of that (figures_per_launch)."""

    bytes_read: int
    bytes_written: int
    lines: tuple[Place, ...]
    flops: int | None
    """None: unknown (some launch's op has no FLOP count, or no ATen op owns the launch)."""
    working_set_bytes: int | None = None
    """The most distinct bytes one launch's ops touch (engine.dispatch.working_set.touched_bytes);
    None: no launch of the row has ops."""


def figures_per_name(
    done: Accounted, keep: Callable[[Launch], bool] = lambda launch: True
) -> dict[tuple[str, str], AccountedFigures]:
    """(phase, launch name) -> its figures over the call, of the launches `keep` keeps. On CUDA an
    op that launches several kernels has its bytes given to the first of them. A backward op has no
    line of its own (autograd's engine runs it): it gets the lines of the forward op it
    differentiates, tied by autograd's sequence number."""
    accounting = done.summary
    place_of_marker: dict[int, Place | None] = {op.marker: op.place for op in done.mode.ops}
    read: dict[tuple[str, str], int] = {}
    written: dict[tuple[str, str], int] = {}
    places: dict[tuple[str, str], set] = {}
    touched: dict[tuple[str, str], int] = {}
    seen_owner: set[int] = set()
    for launch in accounting.launches:
        if not keep(launch):
            continue
        key = (launch.phase, launch_label(launch))
        read.setdefault(key, 0)
        written.setdefault(key, 0)
        mine = places.setdefault(key, set())
        if launch.seq is not None:
            mine.update(
                place for m in accounting.forward_seq.get(launch.seq, ()) if (place := place_of_marker.get(m)) is not None
            )
        if launch.owner is None or launch.owner in seen_owner:
            continue
        seen_owner.add(launch.owner)
        if done.by_owner.get(launch.owner):
            touched[key] = max(touched.get(key, 0), touched_bytes(done.by_owner[launch.owner]))
        for op in done.by_owner.get(launch.owner, ()):
            read[key] += op.read
            written[key] += op.written
            if op.place is not None:
                mine.add(op.place)
    flops = _flops_per_name(done, keep)
    return {key: AccountedFigures(read[key], written[key], sorted_places(places[key]), flops.get(key), touched.get(key))
            for key in places}


def _flops_per_name(done: Accounted, keep: Callable[[Launch], bool]) -> dict[tuple[str, str], int | None]:
    """(phase, launch name) -> the FLOPs of its launches' ops over the call (engine.dispatch.flops), an
    owner's ops counted at its first launch as figures_per_name counts their bytes; None where one
    of them is unknown."""
    out: dict[tuple[str, str], int | None] = {}
    seen: set[int] = set()
    for launch in done.summary.launches:
        if not keep(launch):
            continue
        key = (launch.phase, launch_label(launch))
        out.setdefault(key, 0)
        if launch.owner is None:  # a kernel no ATen op of the call owns (a user's Triton kernel): unknown
            out[key] = None
            continue
        if launch.owner in seen:
            continue
        seen.add(launch.owner)
        for op in done.by_owner.get(launch.owner, ()):
            out[key] = None if out[key] is None or op.flops is None else out[key] + op.flops
    return out


def figures_per_launch(
    done: Accounted, per_name: dict[tuple[str, str], AccountedFigures], keep: Callable[[Launch], bool] = lambda launch: True
) -> dict[tuple[str, str], AccountedFigures]:
    """figures_per_name's figures (`per_name`, of the launches `keep` keeps) divided by the launches
    of each name: those of one launch, for compiled rows of the same ops."""
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for launch in done.summary.launches:
        if keep(launch):
            counts[launch.phase, launch_label(launch)] += 1

    def one(name: tuple[str, str], total: int | None) -> int | None:
        return None if total is None else total // max(1, counts[name])

    return {
        name: AccountedFigures(one(name, f.bytes_read), one(name, f.bytes_written), f.lines, one(name, f.flops),
                               f.working_set_bytes)  # already one launch's
        for name, f in per_name.items()
    }


def outside_graphs(
    call, device, dispatched: Dispatched, timed: TraceSummary, labels, backend, options
) -> tuple[dict[tuple[str, str], AccountedFigures], list[str]]:
    """(phase, name) -> the figures of one launch outside any compiled graph, by dispatch
    accounting of one more compiled call (CompiledTrafficMode); and notes on why there are none.
    `backend`: the recording backend, whose graph count tells a recompile."""
    first = next((label for label in labels if label.startswith("c")), None)
    if first is None or all(launch.call is not None for launch in timed.launches):
        return {}, []
    if options.cuda_graphs and device.type == "cuda":  # a replay under a dispatch mode: not tried
        return {}, []
    before = backend.graphs
    done = account(call, device, CompiledTrafficMode(), dispatched)  # synchronized after the call
    if backend.graphs != before:  # guards failed under the mode: not the code that was timed
        return {}, ["compiled: the accounted call recompiled: launches outside the graphs take eager's bytes"]

    def outside(launch: Launch) -> bool:
        return launch.call is None  # the graphs' bytes are inductor's

    align_twins([x for x in done.summary.launches if outside(x)], [x for x in first_call(timed, first) if outside(x)])
    return figures_per_launch(done, figures_per_name(done, outside), outside), []
