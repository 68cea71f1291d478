"""A mode's `memory` as JSON (report.memory, docs/json.md)."""

from __future__ import annotations

from typing import Any

from kscope.report.kernel_codec import place_from_dict, place_to_dict
from kscope.report.memory import CallMemory, HeldTensor


def memory_to_dict(m: CallMemory | None) -> dict[str, Any] | None:
    if m is None:
        return None
    return {
        "peak_bytes": m.peak_bytes,
        "held_bytes": m.held_bytes,
        "allocations": m.allocations,
        "by_category": dict(m.by_category),
        "top": [{"bytes": t.bytes, "category": t.category, "allocated_by": t.allocated_by,
                 "place": None if t.place is None else place_to_dict(t.place), "filled_by": t.filled_by}
                for t in m.top],
        "checked_peak_bytes": m.checked_peak_bytes,
        "saved_bytes": m.saved_bytes,
        "estimated_peak_bytes": list(m.estimated_peak_bytes),
    }


def memory_from_dict(d: dict[str, Any] | None) -> CallMemory | None:
    if d is None:
        return None
    top = tuple(HeldTensor(t["bytes"], t["category"], t["allocated_by"],
                           None if t.get("place") is None else place_from_dict(t["place"]), t.get("filled_by"))
                for t in d.get("top", ()))
    return CallMemory(d["peak_bytes"], d["held_bytes"], d.get("allocations", 0), dict(d.get("by_category") or {}),
                      top, d.get("checked_peak_bytes"), saved_bytes=d.get("saved_bytes"),
                      estimated_peak_bytes=tuple(d.get("estimated_peak_bytes") or ()))
