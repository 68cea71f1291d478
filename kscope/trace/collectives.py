"""Collectives in a profiler trace: each collective op once, with its bytes, time and wait.

What torch 2.13 records (measured with gloo, 2 ranks, on the CPU; tests/process/test_distributed.py
runs it, docs/distributed.md says it):
- eager `dist.all_reduce(y)`: a `c10d::allreduce_` op on the caller's thread (~0.1 ms: it hands
  the work over) and the backend's `gloo:all_reduce` on gloo's thread (the collective itself);
  the caller's wait inside `dist.all_reduce` has no event of its own;
- compiled: `_c10d_functional::all_reduce_` (with `c10d::allreduce_` inside it), later
  `_c10d_functional::wait_tensor`, and the same `gloo:all_reduce` beside them;
- with `record_shapes` each carries its tensors' dims and dtype ("float"); NCCL records
  `record_param_comms` with "In msg nelems" and "dtype" (not recorded by gloo here).

Rules: a collective is the outermost c10d / functional collective op (the program's call),
counted once; the ops inside it, its backend's event and its wait are parts of it, never another
collective nor a launch. Bytes: torch's record_param_comms when present, else the shapes the
profiler recorded on the op, else on its backend event (paired in order of time); else unknown.
Pure Python: no torch import here.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from kscope.report.measures import sum_known
from kscope.report.model import Collective

COLLECTIVE_NAMESPACES = ("c10d::", "_c10d_functional::", "c10d_functional::", "_dtensor::")
_WAIT = re.compile(r"(^|::)(wait_tensor|wait)$")
_BACKEND = re.compile(r"^(gloo|nccl|mpi|ucc|xccl):(\w+)$")
PARAM_COMMS = "record_param_comms"

ELEMENT_BYTES = {
    # as the profiler writes a tensor's dtype ("Input type") ...
    "float": 4, "double": 8, "c10::Half": 2, "c10::BFloat16": 2, "long int": 8, "int": 4, "short int": 2,
    "signed char": 1, "unsigned char": 1, "bool": 1, "c10::complex<float>": 8, "c10::complex<double>": 16,
    "c10::Float8_e4m3fn": 1, "c10::Float8_e5m2": 1,
    # ... and as record_param_comms writes it ("dtype")
    "Float": 4, "Double": 8, "Half": 2, "BFloat16": 2, "Long": 8, "Int": 4, "Short": 2, "Char": 1, "Byte": 1,
    "Bool": 1, "ComplexFloat": 8, "ComplexDouble": 16, "Float8_e4m3fn": 1, "Float8_e5m2": 1,
}


@dataclass
class CollectiveEvent:
    """One collective op as it ran, in one profiled call."""

    name: str
    segment: str | None
    phase: str
    start: float
    op_us: float
    """The op's own duration on the caller's thread."""
    backend_us: float | None = None
    """Its backend event's duration ("gloo:all_reduce"): the collective itself."""
    bytes: int | None = None
    wait_us: float | None = None
    after: Any = None
    """The launch (kernels.Launch) that ran just before it on its thread, if any."""
    before: Any = None

    @property
    def time_us(self) -> float:
        return self.backend_us if self.backend_us is not None else self.op_us


def kind(name: str) -> str:
    """"c10d::allreduce_", "_c10d_functional::all_reduce_", "gloo:all_reduce" -> "allreduce"."""
    return re.split(r"::?", name)[-1].replace("_", "").removesuffix("coalesced").removesuffix("base")


def is_collective_op(name: str) -> bool:
    return name.startswith(COLLECTIVE_NAMESPACES) and not _WAIT.search(name)


def find_collectives(nodes: list, launches: list) -> list[CollectiveEvent]:
    """The collectives among a forest's nodes (nest.Node, in time order), each tied to the
    launches (kernels.Launch, their `owner` a node index) just before and after it."""
    found: list[tuple[Any, CollectiveEvent]] = []
    waits, backends = [], []
    for n in nodes:
        if _WAIT.search(n.name) and n.name.startswith(COLLECTIVE_NAMESPACES):
            waits.append(n)
        elif _BACKEND.match(n.name):
            backends.append(n)
        elif (is_collective_op(n.name) or (n.name == PARAM_COMMS and n.ev.get("cat") == "cpu_op")) and not any(
            is_collective_op(a.name) or a.name == PARAM_COMMS for a in n.ancestors()
        ):
            name = n.name if n.name != PARAM_COMMS else n.ev.get("args", {}).get("Collective name", PARAM_COMMS)
            event = CollectiveEvent(name, n.segment, n.phase, _start(n), float(n.ev.get("dur", 0.0)))
            event.bytes = _param_comms_bytes(n) if n.name == PARAM_COMMS else None
            if event.bytes is None:
                event.bytes = next((b for d in n.walk() if d.name == PARAM_COMMS and (b := _param_comms_bytes(d))), None)
            if event.bytes is None:
                event.bytes = _shape_bytes(n.ev)
            found.append((n, event))
    _pair_backends(found, backends)
    _add_waits(found, waits)
    _neighbours(found, nodes, launches)
    return [e for _, e in found]


def _pair_backends(found: list, backends: list) -> None:
    """Each backend event goes to the earliest collective of its kind that started before it and
    has none yet (the backend runs them in the order they were called)."""
    for b in sorted(backends, key=_start):
        want = kind(b.name)
        for _, e in found:
            if e.backend_us is None and kind(e.name) == want and e.start <= _start(b):
                e.backend_us = float(b.ev.get("dur", 0.0))
                if e.bytes is None:
                    e.bytes = _shape_bytes(b.ev)
                break


def _add_waits(found: list, waits: list) -> None:
    """A wait belongs to the latest collective on its thread that started before it."""
    for w in waits:
        mine = [e for n, e in found if _thread(n) == _thread(w) and e.start <= _start(w)]
        if mine:
            e = mine[-1]
            e.wait_us = (e.wait_us or 0.0) + float(w.ev.get("dur", 0.0))


def _neighbours(found: list, nodes: list, launches: list) -> None:
    by_owner = {launch.owner: launch for launch in launches if launch.owner is not None}
    timeline = [(n, by_owner[n.idx]) for n in nodes if n.idx in by_owner]
    for n, e in found:
        same = [(m, launch) for m, launch in timeline if _thread(m) == _thread(n) and m.segment == n.segment]
        earlier = [launch for m, launch in same if _start(m) < e.start]
        later = [launch for m, launch in same if _start(m) > e.start]
        e.after = earlier[-1] if earlier else None
        e.before = later[0] if later else None


def _param_comms_bytes(n) -> int | None:
    args = n.ev.get("args", {})
    nelems, size = args.get("In msg nelems"), ELEMENT_BYTES.get(str(args.get("dtype")))
    return int(nelems) * size if isinstance(nelems, int) and size else None


def _shape_bytes(ev: dict) -> int | None:
    """The bytes of the tensors an event was handed, from record_shapes' dims and dtypes; None
    when no argument is a tensor of a known dtype (a TensorList carries no dtype)."""
    args = ev.get("args", {})
    types, dims = args.get("Input type") or [], args.get("Input Dims") or []
    total, seen = 0, False
    for t, d in zip(types, dims):
        size = ELEMENT_BYTES.get(t)
        if size is None or not isinstance(d, list) or any(not isinstance(x, int) for x in d):
            continue
        total += math.prod(d) * size
        seen = True
    return total if seen else None


def _start(n) -> float:
    return float(n.ev.get("ts", 0))


def _thread(n) -> tuple:
    return (n.ev.get("pid"), n.ev.get("tid"))


def per_call(events: list[CollectiveEvent], calls: int, label) -> tuple:
    """Collective rows, figures per call: one row per collective of the same name,
    phase, size and neighbours, in the order they first ran; `label(launch)` names a kernel row."""
    groups: dict[tuple, list[CollectiveEvent]] = {}
    for e in sorted(events, key=lambda e: e.start):
        after = label(e.after) if e.after is not None else None
        before = label(e.before) if e.before is not None else None
        groups.setdefault((e.phase, e.name, e.bytes, after, before), []).append(e)
    calls = max(1, calls)
    rows = []
    for (phase, name, _, after, before), mine in groups.items():
        size = sum_known(e.bytes for e in mine)
        waits = [e.wait_us for e in mine if e.wait_us is not None]
        rows.append(Collective(
            name=name, count=len(mine) / calls, bytes=None if size is None else round(size / calls),
            time_us=sum(e.time_us for e in mine) / calls, wait_us=sum(waits) / calls if waits else None,
            phase=phase, after=after, before=before,
        ))
    return tuple(rows)
