"""Round trips: buffers one kernel of the call writes and another reads back from memory.

The article's lesson: every intermediate one kernel writes and the next reads back is a trip
through memory, and fusion removes it. Eager, every intermediate is one (each op writes its result
and the next op reads it), found from the storages each dispatched op read and wrote
(engine.dispatch.traffic). What is left compiled: engine.compiled.round_trips. A buffer the call
returns is an output, not a round trip.
"""

from __future__ import annotations

from collections import defaultdict

from kscope.report.model import RoundTrip
from kscope.report.place import sorted_places

EAGER_REASON = "eager runs one op at a time: each writes its result to memory and the next reads it back"
EAGER_HINT = "torch.compile can fuse such ops into one kernel that keeps the value in registers"


def eager_round_trips(ops, returned: set, row_name=None) -> tuple[RoundTrip, ...]:
    """ops: traffic.OpTraffic in the order they ran, with the storages each read and wrote;
    returned: the storages of the call's outputs; row_name(op): the kernel row the op is part of
    ("aten::matmul › mm"), else the op's own name."""
    name = row_name or (lambda op: _op_name(op.op))
    writer: dict = {}  # storage -> index of the op that wrote it last
    consumers: dict[tuple[int, object], list[int]] = defaultdict(list)
    for i, op in enumerate(ops):
        for key in op.reads:
            if key in writer and writer[key] != i and i not in consumers[writer[key], key]:
                consumers[writer[key], key].append(i)
        for key in op.writes:
            writer[key] = i
    trips = []
    for (producer, key), readers in consumers.items():
        if key in returned and writer.get(key) == producer:
            continue  # the call hands it back: an output
        involved = [ops[producer], *(ops[i] for i in readers)]
        trips.append(
            RoundTrip(
                buffer="",
                bytes=ops[producer].writes[key],
                producer=name(ops[producer]),
                consumers=tuple(dict.fromkeys(name(ops[i]) for i in readers)),
                lines=sorted_places(op.place for op in involved if op.place is not None),
                reason=EAGER_REASON,
                hint=EAGER_HINT,
            )
        )
    return _named_largest_first(trips)


def _op_name(op: str) -> str:
    return op.replace(".", "::", 1)


def _named_largest_first(trips: list[RoundTrip]) -> tuple[RoundTrip, ...]:
    """tmp0, tmp1, ... in the order they were written; alike ones grouped; the largest first."""
    from dataclasses import replace

    return grouped([replace(t, buffer=f"tmp{i}") for i, t in enumerate(trips)])


def grouped(trips: list[RoundTrip]) -> tuple[RoundTrip, ...]:
    """One entry per producer, consumers, lines and reason (`count` of them, their bytes summed,
    named after the first), the largest first: a Report stays small whatever the loop."""
    from dataclasses import replace

    groups: dict[tuple, RoundTrip] = {}
    for t in trips:
        key = (t.producer, t.consumers, t.lines, t.reason)
        seen = groups.get(key)
        if seen is None:
            groups[key] = t
        else:
            both = None if seen.bytes is None or t.bytes is None else seen.bytes + t.bytes
            groups[key] = replace(seen, bytes=both, count=seen.count + t.count)
    return tuple(sorted(groups.values(), key=lambda t: -(t.bytes or 0)))
