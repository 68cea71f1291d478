"""A size sweep (Report.sweep) as JSON: its points, each eager and compiled at one size."""

from __future__ import annotations

from typing import Any

from kscope.report.json_numbers import json_number, pair, rounded
from kscope.report.sweep import Sweep, SweepMode, SweepPoint


def sweep_to_dict(s: Sweep) -> dict[str, Any]:
    return {
        "points": [
            {
                "n": p.n,
                "eager": _mode_to_dict(p.eager, compiled=False),
                "compiled": _mode_to_dict(p.compiled, compiled=True),
                "verdict": p.verdict,
                "ratio": round(p.ratio, 3),
                "compares": "wall time per call, eager and compiled calls timed in pairs: median of eager ÷ compiled",
                "graph": p.graph,
                "recompiled": p.recompiled,
                "wall_s": round(p.wall_s, 3),
            }
            for p in s.points
        ],
        "sizes": list(s.sizes),
        "static": s.static,
        "crossover_n": s.crossover_n,
        "crossover": s.crossover_text(),
        "recompiles": s.recompiles,
        "stopped": s.stopped,
        "budget_s": s.budget_s,
    }


def sweep_from_dict(d: dict[str, Any] | None) -> Sweep | None:
    if d is None:
        return None
    return Sweep(
        points=tuple(
            SweepPoint(
                n=p["n"],
                eager=_mode_from_dict(p["eager"]),
                compiled=_mode_from_dict(p["compiled"]),
                verdict=p["verdict"],
                ratio=p["ratio"],
                graph=p.get("graph", ""),
                recompiled=p.get("recompiled"),
                wall_s=p.get("wall_s", 0.0),
            )
            for p in d.get("points", ())
        ),
        sizes=tuple(d.get("sizes", ())),
        static=d.get("static", False),
        stopped=d.get("stopped"),
        budget_s=d.get("budget_s", 60.0),
        recompiles=d.get("recompiles", 0),
    )


def _mode_to_dict(m: SweepMode, *, compiled: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "launches": json_number(m.launches),
        "bytes_read": m.bytes_read,
        "bytes_written": m.bytes_written,
        "kernel_time_us": round(m.kernel_time_us, 3),
        "kernel_time_us_range": pair(m.kernel_time_us_range),
        "call_time_us": rounded(m.call_time_us),
        "call_time_us_range": pair(m.call_time_us_range),
        "achieved_gbps": rounded(m.achieved_gbps),
        "working_set_bytes": m.working_set_bytes,
    }
    out["kernels"] = list(m.kernels)
    if compiled:
        out["variants"] = list(m.variants)
    return out


def _mode_from_dict(d: dict[str, Any]) -> SweepMode:
    return SweepMode(
        launches=d["launches"],
        bytes_read=d["bytes_read"],
        bytes_written=d["bytes_written"],
        kernel_time_us=d["kernel_time_us"],
        kernel_time_us_range=_tuple(d.get("kernel_time_us_range")),
        call_time_us=d.get("call_time_us"),
        call_time_us_range=_tuple(d.get("call_time_us_range")),
        kernels=tuple(d.get("kernels", ())),
        variants=tuple(d.get("variants", ())),
        working_set_bytes=d.get("working_set_bytes"),
    )


def _tuple(p) -> tuple[float, float] | None:
    return None if p is None else (p[0], p[1])
