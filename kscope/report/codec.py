"""The Report as JSON (schema in the README): what `--json` prints, what the worker sends."""

from __future__ import annotations

import dataclasses
from typing import Any

from kscope.report.model import (
    SCHEMA,
    Backward,
    GraphBreak,
    Kernel,
    ModeResult,
    Recompile,
    Report,
    RoundTrip,
    RunError,
    Speedup,
)
from kscope.report.compile import Autotune, CompileOptions, CudaGraphs
from kscope.report.ranks import Collective, ranks_from_list, ranks_to_list
from kscope.report.sweep import sweep_from_dict, sweep_to_dict


def report_to_dict(r: Report) -> dict[str, Any]:
    return {
        "schema": r.schema,
        "file": r.file,
        "target": r.target,
        "device": r.device,
        "device_name": r.device_name,
        "torch_version": r.torch_version,
        "largest_input_bytes": r.largest_input_bytes,
        "eager": mode_to_dict(r.eager, compiled=False),
        "compiled": mode_to_dict(r.compiled, compiled=True),
        "errors": [error_to_dict(e) for e in r.errors],
        "notes": list(r.notes),
        "wall_s": round(r.wall_s, 3),
        "peak_gbps": _round(r.peak_gbps),
        "peak_source": r.peak_source,
        "speedup": None
        if r.speedup is None
        else {
            "ratio": round(r.speedup.ratio, 3),
            "ratio_range": _pair(r.speedup.ratio_range),
            "verdict": r.speedup.verdict,
            "compares": "kernel time, eager and compiled calls timed in pairs: median of eager ÷ compiled",
            "call_ratio": _round(r.speedup.call_ratio),
            "cpu_waiting": _round(r.speedup.cpu_waiting),
        },
        "backward": None
        if r.backward is None
        else {"loss": r.backward.loss, "grads_of": list(r.backward.grads_of)},
        "no_grad": r.no_grad,
        "target_lines": list(r.target_lines) if r.target_lines else None,
        "source": r.source,
        "sweep": None if r.sweep is None else sweep_to_dict(r.sweep),
        "compile_options": None if r.compile_options is None else r.compile_options.to_dict(),
        "traces": None if r.traces is None else dict(r.traces),
        "ranks": ranks_to_list(r.ranks),
    }


def report_from_dict(d: dict[str, Any]) -> Report:
    return Report(
        file=d["file"],
        target=d["target"],
        device=d.get("device", "cpu"),
        device_name=d.get("device_name", ""),
        torch_version=d.get("torch_version", ""),
        largest_input_bytes=d.get("largest_input_bytes", 0),
        eager=mode_from_dict(d.get("eager")),
        compiled=mode_from_dict(d.get("compiled")),
        errors=tuple(RunError(**e) for e in d.get("errors", ())),
        notes=tuple(d.get("notes", ())),
        wall_s=d.get("wall_s", 0.0),
        source=d.get("source", ""),
        target_lines=tuple(d["target_lines"]) if d.get("target_lines") else None,
        peak_gbps=d.get("peak_gbps"),
        peak_source=d.get("peak_source", ""),
        speedup=_speedup_from_dict(d.get("speedup")),
        backward=Backward(d["backward"]["loss"], tuple(d["backward"]["grads_of"])) if d.get("backward") else None,
        no_grad=d.get("no_grad", False),
        sweep=sweep_from_dict(d.get("sweep")),
        compile_options=None if d.get("compile_options") is None else CompileOptions.from_dict(d["compile_options"]),
        traces=None if d.get("traces") is None else dict(d["traces"]),
        ranks=ranks_from_list(d.get("ranks")),
        schema=d.get("schema", SCHEMA),
    )


def error_to_dict(e: RunError) -> dict[str, Any]:
    """An error; "rank" only in a run of several ranks (schema 8), so one process's stay as they were."""
    d = dataclasses.asdict(e)
    if d["rank"] is None:
        del d["rank"]
    return d


def json_number(x: float) -> float | int:
    """A count as JSON: 2, not 2.0; a fraction to 3 places."""
    return int(x) if float(x).is_integer() else round(x, 3)


def mode_to_dict(m: ModeResult | None, *, compiled: bool) -> dict[str, Any] | None:
    if m is None:
        return None
    out: dict[str, Any] = {
        "launches": json_number(m.launches),
        "bytes_read": m.bytes_read,
        "bytes_written": m.bytes_written,
        "kernel_time_us": round(m.kernel_time_us, 3),
        "kernel_time_us_range": _pair(m.kernel_time_us_range),
        "call_time_us": _round(m.call_time_us),
        "call_time_us_range": _pair(m.call_time_us_range),
        "repetitions": {"kernel": m.kernel_samples, "call": m.call_samples},
        "achieved_gbps": _round(m.achieved_gbps),
        "memcpy": m.memcpy,
        "memset": m.memset,
        "calls": m.calls,
        "traffic_source": m.traffic_source,
        "phases": {
            p.phase: {
                "launches": json_number(p.launches),
                "bytes_read": p.bytes_read,
                "bytes_written": p.bytes_written,
                "kernel_time_us": round(p.kernel_time_us, 3),
            }
            for p in m.phases
        },
        "bytes_saved_for_backward": m.bytes_saved,
        "round_trips": None if m.round_trips is None else [dataclasses.asdict(t) for t in m.round_trips],
        "kernels": [_kernel_to_dict(k) for k in m.kernels],
        "collectives": [c.to_dict() for c in m.collectives],
    }
    if compiled:
        out["compile_s"] = None if m.compile_s is None else round(m.compile_s, 3)
        out["graphs"] = m.graphs
        out["graph_breaks"] = [dataclasses.asdict(b) for b in m.graph_breaks]
        out["recompiles"] = [dataclasses.asdict(r) for r in m.recompiles]
        out["autotune"] = [a.to_dict() for a in m.autotune]
        out["cuda_graphs"] = None if m.cuda_graphs is None else m.cuda_graphs.to_dict()
    return out


def _kernel_to_dict(k: Kernel) -> dict[str, Any]:
    return {
        "name": k.name,
        "kind": k.kind,
        "phase": k.phase,
        "launches": json_number(k.launches),
        "time_us": round(k.time_us, 3),
        "bytes_read": k.bytes_read,
        "bytes_written": k.bytes_written,
        "bytes_saved_for_backward": k.bytes_saved,
        "achieved_gbps": _round(k.achieved_gbps),
        "fused": k.fused,
        "ops": list(k.ops),
        "what": k.what,
        "lines": list(k.lines),
        "code": k.code,
    }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def _speedup_from_dict(d: dict[str, Any] | None) -> Speedup | None:
    if not d:
        return None
    low_high = d.get("ratio_range")
    return Speedup(
        d["ratio"], d["verdict"], d.get("call_ratio"), tuple(low_high) if low_high else None, d.get("cpu_waiting")
    )


def _pair(x: tuple[float, float] | None) -> list[float] | None:
    return None if x is None else [round(x[0], 3), round(x[1], 3)]


def mode_from_dict(d: dict[str, Any] | None) -> ModeResult | None:
    if d is None:
        return None
    kernels = tuple(
        Kernel(
            name=k["name"],
            kind=k.get("kind", "kernel"),
            launches=k["launches"],
            time_us=k["time_us"],
            bytes_read=k["bytes_read"],
            bytes_written=k["bytes_written"],
            fused=k.get("fused", False),
            ops=tuple(k.get("ops", ())),
            lines=tuple(k.get("lines", ())),
            code=k.get("code"),
            what=k.get("what"),
            phase=k.get("phase", "forward"),
            bytes_saved=k.get("bytes_saved_for_backward"),
        )
        for k in d.get("kernels", ())
    )
    return ModeResult(
        launches=d["launches"],
        bytes_read=d["bytes_read"],
        bytes_written=d["bytes_written"],
        kernel_time_us=d["kernel_time_us"],
        kernels=kernels,
        memcpy=d.get("memcpy", 0),
        memset=d.get("memset", 0),
        calls=d.get("calls", 1),
        compile_s=d.get("compile_s"),
        graphs=d.get("graphs"),
        graph_breaks=tuple(GraphBreak(**b) for b in d.get("graph_breaks", ())),
        recompiles=tuple(Recompile(**r) for r in d.get("recompiles", ())),
        traffic_source=d.get("traffic_source", ""),
        kernel_time_us_range=tuple(d["kernel_time_us_range"]) if d.get("kernel_time_us_range") else None,
        call_time_us=d.get("call_time_us"),
        call_time_us_range=tuple(d["call_time_us_range"]) if d.get("call_time_us_range") else None,
        kernel_samples=(d.get("repetitions") or {}).get("kernel", 0),
        call_samples=(d.get("repetitions") or {}).get("call", 0),
        round_trips=None if d.get("round_trips") is None else tuple(
            RoundTrip(**{**t, "consumers": tuple(t["consumers"]), "lines": tuple(t["lines"])})
            for t in d.get("round_trips", ())
        ),
        autotune=tuple(Autotune.from_dict(a) for a in d.get("autotune", ())),
        cuda_graphs=CudaGraphs.from_dict(d.get("cuda_graphs")),
        collectives=tuple(Collective.from_dict(c) for c in d.get("collectives", ())),
    )
