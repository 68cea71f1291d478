"""The Report as JSON (schema in docs/json.md): what `--json` prints, what the worker sends.

The only place that knows the JSON: the models in this package never import it
(`report_to_dict(r)`, not `r.to_dict()`)."""

from __future__ import annotations

import dataclasses
import os.path
from typing import Any

from kscope.report.compile import Autotune, AutotuneChoice, CompileOptions, CudaGraphs
from kscope.report.json_numbers import json_number
from kscope.report.json_numbers import pair as _pair
from kscope.report.json_numbers import rounded as _round
from kscope.report.kernel_codec import (
    kernel_from_dict,
    kernel_to_dict,
    place_from_dict,
    place_to_dict,
    trips_from_list,
    trips_to_list,
)
from kscope.report.lines import LineMode
from kscope.report.memory_codec import memory_from_dict, memory_to_dict
from kscope.report.model import (
    SCHEMA,
    Backward,
    Collective,
    GraphBreak,
    ModeResult,
    RankResult,
    Recompile,
    Report,
    RunError,
)
from kscope.report.plan_codec import plan_from_dict, plan_to_dict
from kscope.report.roofline import Roofs, mode_roofs
from kscope.report.roofs import Judged, Roof
from kscope.report.speedup import Speedup
from kscope.report.sweep_codec import sweep_from_dict, sweep_to_dict


def report_to_dict(r: Report) -> dict[str, Any]:
    return {
        "schema": r.schema,
        "file": r.file,
        "target": r.target,
        "device": r.device,
        "device_name": r.device_name,
        "torch_version": r.torch_version,
        "largest_input_bytes": r.largest_input_bytes,
        "reads_parameters": r.reads_parameters,
        "eager": mode_to_dict(r.eager, compiled=False, roofs=mode_roofs(r, r.eager), judged=r.judged(r.eager)),
        "compiled": mode_to_dict(r.compiled, compiled=True, roofs=mode_roofs(r, r.compiled),
                                 judged=r.judged(r.compiled)),
        "errors": [error_to_dict(e) for e in r.errors],
        "notes": list(r.notes),
        "wall_s": round(r.wall_s, 3),
        "peak_gbps": _round(r.peak_gbps),
        "peak_source": r.peak_source,
        "peak_flops": _round(r.peak_flops),
        "peak_flops_source": r.peak_flops_source,
        "roofs": [roof_to_dict(x) for x in r.roofs],
        "cold": r.cold,
        "speedup": None
        if r.speedup is None
        else {
            "ratio": round(r.speedup.ratio, 3),
            "ratio_range": _pair(r.speedup.ratio_range),
            "verdict": r.speedup.verdict,
            "compares": COMPARES,
            "kernel_ratio": _round(r.speedup.kernel_ratio),
            "kernel_ratio_range": _pair(r.speedup.kernel_ratio_range),
            "kernel_verdict": r.speedup.kernel_verdict,
            "cpu_waiting": _round(r.speedup.cpu_waiting),
        },
        "backward": None
        if r.backward is None
        else {"loss": r.backward.loss, "grads_of": list(r.backward.grads_of)},
        "no_grad": r.no_grad,
        "target_lines": list(r.target_lines) if r.target_lines else None,
        "source": r.source,
        "sweep": None if r.sweep is None else sweep_to_dict(r.sweep),
        "compile_options": None if r.compile_options is None else compile_options_to_dict(r.compile_options),
        "traces": None if r.traces is None else dict(r.traces),
        "ranks": ranks_to_list(r.ranks, r),
        "files": list(r.files),
        "root": r.root,
        "sources": dict(r.sources),
        "line_costs": line_costs_to_list(r),
        **({} if r.plan is None else {"plan": plan_to_dict(r.plan, mode_roofs(r, None))}),
    }


def report_from_dict(d: dict[str, Any]) -> Report:
    return Report(
        file=d["file"],
        target=d["target"],
        device=d.get("device", "cpu"),
        device_name=d.get("device_name", ""),
        torch_version=d.get("torch_version", ""),
        largest_input_bytes=d.get("largest_input_bytes", 0),
        reads_parameters=d.get("reads_parameters", False),
        eager=mode_from_dict(d.get("eager"), _home(d)),
        compiled=mode_from_dict(d.get("compiled"), _home(d)),
        errors=tuple(RunError(**e) for e in d.get("errors", ())),
        notes=tuple(d.get("notes", ())),
        wall_s=d.get("wall_s", 0.0),
        source=d.get("source", ""),
        target_lines=tuple(d["target_lines"]) if d.get("target_lines") else None,
        peak_gbps=d.get("peak_gbps"),
        peak_source=d.get("peak_source", ""),
        peak_flops=d.get("peak_flops"),
        peak_flops_source=d.get("peak_flops_source", ""),
        roofs=tuple(Roof(**x) for x in d.get("roofs") or ()),
        cold=d.get("cold", False),
        speedup=_speedup_from_dict(d.get("speedup")),
        backward=Backward(d["backward"]["loss"], tuple(d["backward"]["grads_of"])) if d.get("backward") else None,
        no_grad=d.get("no_grad", False),
        sweep=_with_roofs(sweep_from_dict(d.get("sweep")), d.get("roofs")),
        compile_options=None if d.get("compile_options") is None else compile_options_from_dict(d["compile_options"]),
        traces=None if d.get("traces") is None else dict(d["traces"]),
        ranks=ranks_from_list(d.get("ranks"), _home(d)),
        files=tuple(d.get("files", ())),
        root=d.get("root", ""),
        sources=dict(d.get("sources") or {}),
        plan=plan_from_dict(d.get("plan"), _home(d)),
        line_costs_known=d.get("schema", SCHEMA) >= 11,  # before 11 no kernel shared its figures among lines
        schema=d.get("schema", SCHEMA),
    )


def _with_roofs(sweep, roofs):
    """The sweep's crossover names the memory level its arrays left: it reads the Report's roofs."""
    return sweep if sweep is None else dataclasses.replace(sweep, roofs=tuple(Roof(**x) for x in roofs or ()))


def _home(d: dict[str, Any]) -> str:
    """The target's file as a place names it (for a Report from before schema 9, which had none)."""
    return os.path.relpath(d["file"], d["root"]) if d.get("root") else os.path.basename(d["file"])


def error_to_dict(e: RunError) -> dict[str, Any]:
    """An error; "rank" only in a run of several ranks (schema 8), so one process's stay as they were."""
    d = dataclasses.asdict(e)
    if d["rank"] is None:
        del d["rank"]
    return d


def roof_to_dict(x: Roof) -> dict[str, Any]:
    return {"level": x.level, "gbps": _round(x.gbps), "capacity_bytes": x.capacity_bytes, "source": x.source,
            "measured": x.measured}


def mode_to_dict(m: ModeResult | None, *, compiled: bool, roofs: Roofs = Roofs(),
                 judged: Judged | None = None) -> dict[str, Any] | None:
    """roofs: the device's peak FLOP/s and the GB/s of the level judged (report.roofs), to place
    each kernel on the roofline."""
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
        "round_trips": trips_to_list(m.round_trips),
        "flops": m.flops,
        "working_set_bytes": m.working_set_bytes,
        "memory": memory_to_dict(m.memory),
        "roof": None if judged is None else {"level": judged.roof.level, "gbps": _round(judged.roof.gbps),
                                             "why": judged.why},
        "kernels": [kernel_to_dict(k, roofs) for k in m.kernels],
        "collectives": [collective_to_dict(c) for c in m.collectives],
    }
    if compiled:
        out["compile_s"] = None if m.compile_s is None else round(m.compile_s, 3)
        out["graphs"] = m.graphs
        out["graph_breaks"] = [_break_to_dict(b) for b in m.graph_breaks]
        out["recompiles"] = [dataclasses.asdict(r) for r in m.recompiles]
        out["autotune"] = [autotune_to_dict(a) for a in m.autotune]
        out["cuda_graphs"] = None if m.cuda_graphs is None else dataclasses.asdict(m.cuda_graphs)
    return out


def line_costs_to_list(r: Report) -> list[dict[str, Any]]:
    """The Report's `line_costs`: each line's total in both modes, costliest first (report.lines)."""
    def mode(m: LineMode | None, prefix: str) -> dict[str, Any]:
        if m is None:
            return {f"{prefix}_{k}": None for k in ("bytes", "bytes_read", "bytes_written", "time_us", "launches")} | {
                f"{prefix}_kernels": [], f"{prefix}_time_estimated": False}
        return {f"{prefix}_bytes": m.bytes_total, f"{prefix}_bytes_read": m.bytes_read,
                f"{prefix}_bytes_written": m.bytes_written, f"{prefix}_time_us": round(m.time_us, 3),
                f"{prefix}_launches": json_number(m.launches), f"{prefix}_kernels": list(m.kernels),
                f"{prefix}_time_estimated": m.estimated}

    out = []
    for c in r.line_costs or ():  # unknown (a Report from before schema 11): none listed, as that schema had none
        where = {"file": None, "line": None, "via": None, "library": False} if c.place is None else place_to_dict(c.place)
        kernels = [{"mode": name, "name": k} for name, m in (("eager", c.eager), ("compiled", c.compiled)) if m
                   for k in m.kernels]
        out.append({**where, **mode(c.eager, "eager"), **mode(c.compiled, "compiled"), "kernels": kernels})
    return out


def _break_to_dict(b: GraphBreak) -> dict[str, Any]:
    return {**dataclasses.asdict(b), "hints": list(b.hints), "place": None if b.place is None else place_to_dict(b.place)}


def _break_from_dict(d: dict[str, Any], home: str = "") -> GraphBreak:
    place = d.get("place")
    return GraphBreak(**{**d, "hints": tuple(d.get("hints", ())),
                         "place": None if place is None else place_from_dict(place, home)})


def _speedup_from_dict(d: dict[str, Any] | None) -> Speedup | None:
    if not d:
        return None
    low_high, kernel_range = d.get("ratio_range"), d.get("kernel_ratio_range")
    return Speedup(
        d["ratio"], d["verdict"], d.get("kernel_ratio"), tuple(low_high) if low_high else None, d.get("cpu_waiting"),
        d.get("kernel_verdict"), tuple(kernel_range) if kernel_range else None,
    )


COMPARES = "call time (wall time of one call), eager and compiled calls timed in pairs: median of eager ÷ compiled"



def mode_from_dict(d: dict[str, Any] | None, home: str = "") -> ModeResult | None:
    """home: the target's file, for the bare line numbers of a Report from before schema 9."""
    if d is None:
        return None
    kernels = tuple(kernel_from_dict(k, home) for k in d.get("kernels", ()))
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
        graph_breaks=tuple(_break_from_dict(b, home) for b in d.get("graph_breaks", ())),
        recompiles=tuple(Recompile(**r) for r in d.get("recompiles", ())),
        traffic_source=d.get("traffic_source", ""),
        kernel_time_us_range=tuple(d["kernel_time_us_range"]) if d.get("kernel_time_us_range") else None,
        call_time_us=d.get("call_time_us"),
        call_time_us_range=tuple(d["call_time_us_range"]) if d.get("call_time_us_range") else None,
        kernel_samples=(d.get("repetitions") or {}).get("kernel", 0),
        call_samples=(d.get("repetitions") or {}).get("call", 0),
        round_trips=trips_from_list(d.get("round_trips"), home),
        autotune=tuple(autotune_from_dict(a) for a in d.get("autotune", ())),
        cuda_graphs=_cuda_graphs_from_dict(d.get("cuda_graphs")),
        collectives=tuple(collective_from_dict(c) for c in d.get("collectives", ())),
        working_set_bytes=d.get("working_set_bytes"),
        memory=memory_from_dict(d.get("memory")),
    )


def compile_options_to_dict(o: CompileOptions) -> dict[str, Any]:
    return {"mode": o.mode, "dynamic": o.dynamic, "fullgraph": o.fullgraph, "options": dict(o.options)}


def compile_options_from_dict(d: dict[str, Any] | None) -> CompileOptions:
    d = d or {}
    return CompileOptions(d.get("mode", "default"), d.get("dynamic"), bool(d.get("fullgraph")), dict(d.get("options") or {}))


def autotune_to_dict(a: Autotune) -> dict[str, Any]:
    return {"op": a.op, "sizes": a.sizes, "choices": [dataclasses.asdict(c) for c in a.choices]}


def autotune_from_dict(d: dict[str, Any]) -> Autotune:
    return Autotune(d["op"], d.get("sizes", ""), tuple(AutotuneChoice(**c) for c in d.get("choices", ())))


def _cuda_graphs_from_dict(d: dict[str, Any] | None) -> CudaGraphs | None:
    return None if d is None else CudaGraphs(d.get("launches"), d.get("kernels"), d.get("skipped", ""))


def collective_to_dict(c: Collective) -> dict[str, Any]:
    return {
        "name": c.name, "count": json_number(c.count), "bytes": c.bytes,
        "time_us": round(c.time_us, 3), "wait_us": _round(c.wait_us),
        "phase": c.phase, "after": c.after, "before": c.before,
    }


def collective_from_dict(d: dict[str, Any]) -> Collective:
    return Collective(d["name"], d["count"], d.get("bytes"), d.get("time_us", 0.0), d.get("wait_us"),
                      d.get("phase", "forward"), d.get("after"), d.get("before"))


def ranks_to_list(ranks: tuple[RankResult, ...] | None, report: Report) -> list[dict] | None:
    """Each rank's modes judged as the Report's own are (its roofs: report.roofs)."""
    if ranks is None:
        return None
    return [
        {
            "rank": r.rank, "stage": r.stage, "wall_s": _round(r.wall_s),
            "eager": mode_to_dict(r.eager, compiled=False, roofs=mode_roofs(report, r.eager),
                                  judged=report.judged(r.eager)),
            "compiled": mode_to_dict(r.compiled, compiled=True, roofs=mode_roofs(report, r.compiled),
                                     judged=report.judged(r.compiled)),
            "errors": [error_to_dict(e) for e in r.errors], "notes": list(r.notes),
        }
        for r in ranks
    ]


def ranks_from_list(items: list[dict] | None, home: str = "") -> tuple[RankResult, ...] | None:
    if items is None:
        return None
    return tuple(
        RankResult(
            d["rank"], mode_from_dict(d.get("eager"), home), mode_from_dict(d.get("compiled"), home),
            tuple(RunError(**e) for e in d.get("errors", ())), tuple(d.get("notes", ())), d.get("wall_s"),
            d.get("stage", ""),
        )
        for d in items
    )
