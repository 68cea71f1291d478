"""What each line of code costs: a kernel's figures shared among the lines it came from, and the
lines' totals over a run (`line_costs`, the Report's top-level `line_costs` in JSON).

A kernel row carries one LineShare per place its work was issued from (Kernel.shares); the
shares of a row add up to the row: its bytes exactly, its launches and its time to rounding.
- Eager: each launch belongs to the line whose op issued it, with that op's bytes (dispatch
  accounting) and the launch's own measured time; `estimated` only where kscope could not tell
  the profiled launches of one row apart by line (their time is then shared by bytes).
- Compiled: a fused kernel's loads go to the ops that load them and its stores to the op that
  stores them (an intermediate fused away costs its line nothing), scaled to inductor's count of
  the kernel; its time is shared by those bytes: an estimate wherever a kernel came from several lines.
A line none of a kernel's work could be tied to is the place None ("no line"), so that the lines
of a mode add up to its totals.
"""

from __future__ import annotations

from dataclasses import dataclass

from kscope.report.measures import add_known, sum_known
from kscope.report.place import Place, place_key


@dataclass(frozen=True)
class LineShare:
    """One line's part of one kernel row, per call."""

    place: Place | None
    bytes_read: int | None
    bytes_written: int | None
    launches: float
    """Eager: the row's launches this line issued. Compiled: the row's launches, once per line it
    fused (a fused kernel's launch is every one of its lines')."""
    time_us: float
    estimated: bool = False
    """The time is apportioned by bytes, not measured per line."""

    @property
    def bytes_total(self) -> int | None:
        return add_known(self.bytes_read, self.bytes_written)


@dataclass(frozen=True)
class LineMode:
    """One line's cost in one mode: the sum of its shares."""

    bytes_read: int | None
    bytes_written: int | None
    time_us: float
    launches: float
    kernels: tuple[str, ...]
    """The rows it has a share of, largest share of time first."""
    estimated: bool = False

    @property
    def bytes_total(self) -> int | None:
        return add_known(self.bytes_read, self.bytes_written)


@dataclass(frozen=True)
class LineCost:
    place: Place | None
    eager: LineMode | None
    compiled: LineMode | None

    @property
    def hottest_us(self) -> float:
        """What the lines are sorted by: the compiled time (what runs once compiled), else the eager one."""
        return self.compiled.time_us if self.compiled is not None else self.eager.time_us if self.eager else 0.0


def _sum_mode(shares: list[tuple[str, LineShare]]) -> LineMode | None:
    if not shares:
        return None
    by_row: dict[str, float] = {}
    for name, s in shares:
        by_row[name] = by_row.get(name, 0.0) + s.time_us
    return LineMode(
        bytes_read=sum_known(s.bytes_read for _, s in shares),
        bytes_written=sum_known(s.bytes_written for _, s in shares),
        time_us=sum(s.time_us for _, s in shares),
        launches=sum(s.launches for _, s in shares),
        kernels=tuple(sorted(by_row, key=lambda n: -by_row[n])),
        estimated=any(s.estimated for _, s in shares),
    )


def line_costs(eager, compiled) -> tuple[LineCost, ...]:
    """Each line that issued work in either mode (ModeResult or None), costliest first
    (LineCost.hottest_us); the line None (work tied to no line) among them by its cost."""
    found: dict[tuple, Place | None] = {}
    per_mode: list[dict[tuple, list]] = []
    for mode in (eager, compiled):
        mine: dict[tuple, list] = {}
        for k in mode.kernels if mode is not None else ():
            for s in k.shares:
                key = place_key(s.place) if s.place is not None else ()
                found[key] = s.place
                mine.setdefault(key, []).append((k.name, s))
        per_mode.append(mine)
    costs = [LineCost(place, _sum_mode(per_mode[0].get(key, [])), _sum_mode(per_mode[1].get(key, [])))
             for key, place in found.items()]
    return tuple(sorted(costs, key=lambda c: (-c.hottest_us, -(c.eager.time_us if c.eager else 0.0), c.place is None,
                                              place_key(c.place) if c.place else ())))


def split_int(total: int, weights: list[float]) -> list[int]:
    """`total` shared by `weights`, in whole bytes that add up to it exactly (largest remainders
    get the leftover bytes); equal shares where every weight is 0."""
    if not weights:
        return []
    if sum(weights) <= 0:
        weights = [1.0] * len(weights)
    whole = sum(weights)
    exact = [total * w / whole for w in weights]
    parts = [int(x) for x in exact]
    leftover = total - sum(parts)
    for i in sorted(range(len(exact)), key=lambda i: parts[i] - exact[i])[:leftover]:
        parts[i] += 1
    return parts


def shared(read: int | None, written: int | None, launches: float, time_us: float,
           weights: dict[Place | None, tuple[float, float]], timed: dict[Place | None, float] | None = None,
           launches_at: dict[Place | None, float] | None = None) -> tuple[LineShare, ...]:
    """A row's figures shared among its lines by (read, written) weights: bytes in whole bytes
    that add up to the row's (unknown stays unknown), the time by each line's bytes (by its
    weights where the bytes are unknown or none; by `timed`, each line's measured time, where
    kscope measured it), the row's launches for every line (or each line's own, `launches_at`)."""
    if not weights:
        weights = {None: (1.0, 1.0)}
    places = list(weights)
    if timed is not None and sum(timed.values()) > 0 and set(timed) == set(places):
        whole = sum(timed.values())
        return tuple(LineShare(p, r, w, (launches_at or {}).get(p, launches), time_us * timed[p] / whole)
                     for p, r, w in zip(places, *_bytes(read, written, weights, places)))
    reads, writes = _bytes(read, written, weights, places)
    moved = [(r or 0) + (w or 0) for r, w in zip(reads, writes)]
    if read is None or written is None or not sum(moved):
        moved = [sum(weights[p]) for p in places]
    if not sum(moved):
        moved = [1.0] * len(places)
    whole = sum(moved)
    return tuple(
        LineShare(p, r, w, launches, time_us * m / whole, len(places) > 1)
        for p, r, w, m in zip(places, reads, writes, moved)
    )


def _bytes(read, written, weights, places) -> tuple[list, list]:
    reads = split_int(read, [weights[p][0] for p in places]) if read is not None else [None] * len(places)
    writes = split_int(written, [weights[p][1] for p in places]) if written is not None else [None] * len(places)
    return reads, writes


def _merged_mode(modes: list[LineMode | None]) -> LineMode | None:
    mine = [m for m in modes if m is not None]
    if not mine:
        return None
    return LineMode(sum_known(m.bytes_read for m in mine), sum_known(m.bytes_written for m in mine),
                    sum(m.time_us for m in mine), sum(m.launches for m in mine),
                    tuple(dict.fromkeys(k for m in mine for k in m.kernels)), any(m.estimated for m in mine))


def in_file(costs: tuple[LineCost, ...], file: str) -> dict[int, LineCost]:
    """Line number -> what that line of `file` cost: every place at it, directly or as the
    library line a user's line came through (`via`), added up."""
    found: dict[int, list[LineCost]] = {}
    for c in costs:
        if c.place is None:
            continue
        for p in (c.place, c.place.via):
            if p is not None and p.file == file:
                found.setdefault(p.line, []).append(c)
    return {line: cs[0] if len(cs) == 1 else LineCost(Place(file, line), _merged_mode([c.eager for c in cs]),
                                                     _merged_mode([c.compiled for c in cs]))
            for line, cs in found.items()}
