"""A Plan as JSON: the "plan" of a Report a worker sends while it compiles (docs/json.md)."""

from __future__ import annotations

import dataclasses
from typing import Any

from kscope.report.kernel_codec import (
    kernel_from_dict,
    kernel_to_dict,
    trips_from_list,
    trips_to_list,
)
from kscope.report.plan import Plan, PlanProgress
from kscope.report.roofline import Roofs


def plan_to_dict(p: Plan, roofs: Roofs = Roofs()) -> dict[str, Any]:
    return {
        "bytes_read": p.bytes_read,
        "bytes_written": p.bytes_written,
        "kernels": [kernel_to_dict(k, roofs) for k in p.kernels],
        "round_trips": trips_to_list(p.round_trips),
        "progress": progress_to_dict(p.progress),
        "estimated_peak_bytes": list(p.estimated_peak_bytes),
    }


def plan_from_dict(d: dict[str, Any] | None, home: str = "") -> Plan | None:
    if d is None:
        return None
    return Plan(
        kernels=tuple(kernel_from_dict(k, home) for k in d.get("kernels", ())),
        round_trips=trips_from_list(d.get("round_trips"), home),
        progress=progress_from_dict(d.get("progress") or {}),
        estimated_peak_bytes=tuple(d.get("estimated_peak_bytes") or ()),
    )


def progress_to_dict(p: PlanProgress) -> dict[str, Any]:
    return dataclasses.asdict(p)


def progress_from_dict(d: dict[str, Any]) -> PlanProgress:
    return PlanProgress(**{f.name: d[f.name] for f in dataclasses.fields(PlanProgress) if f.name in d})
