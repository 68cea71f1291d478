"""The eager rows' figures line by line (report.lines): each launch belongs to the line whose op
issued it (a backward launch to the line of the forward op it differentiates), with the bytes
dispatch accounting gave that op, and its own measured time.

The accounted call and the profiled calls launch the same kernels in the same order, so the
k-th launch of a row in a profiled call is the k-th launch of that row in the accounted call:
that is how a measured launch finds its line. A row whose launch count differs in some profiled
call has that call's time shared by bytes instead, and says so (`estimated`).
"""

from __future__ import annotations

from kscope.engine.dispatch.accounting import Accounted, AccountedFigures, launch_label
from kscope.report.lines import LineShare, shared, split_int
from kscope.report.place import Place
from kscope.trace.kernels import Launch, TraceSummary


def _launch_places(done: Accounted) -> tuple[dict[tuple, list], dict[tuple, dict]]:
    """Per row (phase, name): the place of each accounted launch in order, and per place the
    (read, written) bytes its ops moved (an owner's ops counted at its first launch, as the row's
    bytes are: accounting.figures_per_name)."""
    place_of_marker = {op.marker: op.place for op in done.mode.ops}
    order: dict[tuple, list] = {}
    moved: dict[tuple, dict] = {}
    seen: set[int] = set()
    for launch in done.summary.launches:
        key = (launch.phase, launch_label(launch))
        ops = done.by_owner.get(launch.owner, ()) if launch.owner is not None else ()
        place = next((op.place for op in ops if op.place is not None), None)
        if place is None and launch.seq is not None:
            forward = done.summary.forward_seq.get(launch.seq, ())
            place = next((p for m in forward if (p := place_of_marker.get(m)) is not None), None)
        order.setdefault(key, []).append(place)
        per_place = moved.setdefault(key, {})
        per_place.setdefault(place, [0, 0])
        if launch.owner is None or launch.owner in seen:
            continue
        seen.add(launch.owner)
        for op in ops:
            entry = per_place.setdefault(op.place if op.place is not None else place, [0, 0])
            entry[0] += op.read
            entry[1] += op.written
    return order, moved


def _measured(timed: TraceSummary, order: dict[tuple, list], calls: int) -> tuple[dict, dict[tuple, float]]:
    """Per row, per place: the measured time per call; and per row some call of which could not
    be matched launch for launch, the time per call of those calls (to share by bytes)."""
    per_call: dict[str | None, dict[tuple, list[Launch]]] = {}
    for launch in timed.launches:
        per_call.setdefault(launch.segment, {}).setdefault((launch.phase, launch_label(launch)), []).append(launch)
    times: dict[tuple, dict] = {}
    unmatched: dict[tuple, float] = {}
    for rows in per_call.values():
        for key, launches in rows.items():
            mine = times.setdefault(key, {})
            places = order.get(key, [])
            if len(places) != len(launches):
                unmatched[key] = unmatched.get(key, 0.0) + sum(x.dur_us for x in launches) / calls
                continue
            for place, launch in zip(places, launches):
                mine[place] = mine.get(place, 0.0) + launch.dur_us / calls
    return times, unmatched


class LineShares:
    """Each eager row's LineShares (their bytes add up to the row's exactly, their time and
    launches to the row's: measured times are the row's own), from the accounted call `done`
    and the `calls` profiled calls `timed`."""

    def __init__(self, done: Accounted, timed: TraceSummary, calls: int):
        self.order, self.moved = _launch_places(done)
        self.times, self.unmatched = _measured(timed, self.order, calls)

    def of(self, key: tuple[str, str], figures: AccountedFigures | None, launches: float,
           time_us: float) -> tuple[LineShare, ...]:
        """The shares of row `key` (phase, name), which launches `launches` times and takes
        `time_us` per call; `figures`: what accounting gave it (None: unknown)."""
        read, written = (None, None) if figures is None else (figures.bytes_read, figures.bytes_written)
        if key not in self.order:  # launched by the profiled calls only: its bytes are unknown anyway
            return shared(read, written, launches, time_us, {p: (1.0, 1.0) for p in (figures.lines if figures else ())})
        order, bytes_at = self.order[key], self.moved[key]
        places: list[Place | None] = list(dict.fromkeys(list(bytes_at) + order))
        reads = _split(read, [bytes_at.get(p, [0, 0])[0] for p in places])
        writes = _split(written, [bytes_at.get(p, [0, 0])[1] for p in places])
        measured = self.times.get(key, {})
        rest = self.unmatched.get(key, 0.0)
        moved_at = [sum(bytes_at.get(p, [0, 0])) for p in places]
        shares = []
        for i, p in enumerate(places):
            by_bytes = rest * (moved_at[i] / sum(moved_at) if sum(moved_at) else 1 / len(places))
            launched = order.count(p) * (launches / len(order) if order else 0.0)
            shares.append(LineShare(p, reads[i], writes[i], launched, measured.get(p, 0.0) + by_bytes,
                                    key in self.unmatched and len(places) > 1))
        return tuple(shares)


def _split(total: int | None, weights: list[int]) -> list[int | None]:
    return [None] * len(weights) if total is None else split_int(total, [float(w) for w in weights])
