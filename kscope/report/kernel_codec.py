"""A kernel row, a place and a round trip as JSON: shared by the Report's codec and the plan's."""

from __future__ import annotations

import dataclasses
from typing import Any

from kscope.report.json_numbers import json_number
from kscope.report.json_numbers import rounded as _round
from kscope.report.lines import LineShare
from kscope.report.model import Kernel, RoundTrip
from kscope.report.place import Place
from kscope.report.roofline import Roofs, point


def kernel_to_dict(k: Kernel, roofs: Roofs = Roofs()) -> dict[str, Any]:
    p = point("", k, roofs.peak_flops, roofs.gbps)
    return {
        "name": k.name,
        "kind": k.kind,
        "phase": k.phase,
        "launches": None if k.launches is None else json_number(k.launches),  # None: a plan's row
        "time_us": _round(k.time_us),
        "bytes_read": k.bytes_read,
        "bytes_written": k.bytes_written,
        "bytes_saved_for_backward": k.bytes_saved,
        "achieved_gbps": _round(k.achieved_gbps),
        "fused": k.fused,
        "ops": list(k.ops),
        "what": k.what,
        "lines": [place_to_dict(p) for p in k.lines],
        "shares": [_share_to_dict(x) for x in k.shares],
        "flops": k.flops,
        "working_set_bytes": k.working_set_bytes,
        "intensity": None if p.intensity is None else float(f"{p.intensity:.4g}"),
        "achieved_gflops": _round(None if p.achieved is None else p.achieved / 1e9),
        "bound": p.bound,
        "roof_percent": None if p.roof_percent is None else round(p.roof_percent, 1),
        "roof_level": roofs.level,
        "roof_gbps": _round(roofs.gbps),
        "code": k.code,
    }


def _share_to_dict(s: LineShare) -> dict[str, Any]:
    return {"place": None if s.place is None else place_to_dict(s.place), "bytes_read": s.bytes_read,
            "bytes_written": s.bytes_written, "launches": json_number(s.launches), "time_us": round(s.time_us, 3),
            "estimated": s.estimated}


def _share_from_dict(d: dict[str, Any], home: str) -> LineShare:
    place = None if d.get("place") is None else place_from_dict(d["place"], home)
    return LineShare(place, d["bytes_read"], d["bytes_written"], d["launches"], d["time_us"], d.get("estimated", False))


def place_to_dict(p: Place) -> dict[str, Any]:
    return {"file": p.file, "line": p.line, "via": None if p.via is None else place_to_dict(p.via),
            "library": p.library}


def place_from_dict(d: dict[str, Any] | int, home: str = "") -> Place:
    """A place; a bare line number (a Report from before schema 9) is in the target's file."""
    if isinstance(d, int):
        return Place(home, d)
    return Place(d["file"], d["line"], None if d.get("via") is None else place_from_dict(d["via"]), d.get("library", False))


def _trip_to_dict(t: RoundTrip) -> dict[str, Any]:
    return {**dataclasses.asdict(t), "lines": [place_to_dict(p) for p in t.lines]}


def kernel_from_dict(k: dict[str, Any], home: str = "") -> Kernel:
    return Kernel(
        name=k["name"],
        kind=k.get("kind", "kernel"),
        launches=k["launches"],
        time_us=k["time_us"],
        bytes_read=k["bytes_read"],
        bytes_written=k["bytes_written"],
        fused=k.get("fused", False),
        ops=tuple(k.get("ops", ())),
        lines=tuple(place_from_dict(p, home) for p in k.get("lines", ())),
        code=k.get("code"),
        what=k.get("what"),
        phase=k.get("phase", "forward"),
        bytes_saved=k.get("bytes_saved_for_backward"),
        shares=tuple(_share_from_dict(x, home) for x in k.get("shares", ())),
        flops=k.get("flops"),
        working_set_bytes=k.get("working_set_bytes"),
    )


def trips_from_list(items: list[dict] | None, home: str = "") -> tuple[RoundTrip, ...] | None:
    if items is None:
        return None
    return tuple(RoundTrip(**{**t, "consumers": tuple(t["consumers"]),
                              "lines": tuple(place_from_dict(p, home) for p in t["lines"])}) for t in items)


def trips_to_list(trips: tuple[RoundTrip, ...] | None) -> list[dict] | None:
    return None if trips is None else [_trip_to_dict(t) for t in trips]
