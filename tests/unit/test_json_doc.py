"""docs/json.md is the JSON schema, checked: each block marked `<!-- checked: NAME -->` is JSON once its
`//` comments are stripped, and its keys at every level are exactly the keys kscope writes for a
Report with every field filled (a field added or removed without the page fails here)."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
from support.fixed_session import article_report, graph_break_report, sweep_report
from support.paths import REPO

from kscope.report.codec import report_to_dict
from kscope.report.compile import Autotune, AutotuneChoice, CompileOptions, CudaGraphs
from kscope.report.lines import LineShare
from kscope.report.memory import CallMemory, HeldTensor
from kscope.report.model import (
    Backward,
    Collective,
    RankResult,
    Recompile,
    RunError,
)
from kscope.report.place import Place
from kscope.report.plan import Plan, PlanProgress
from kscope.report.speedup import Speedup
from kscope.trace.file import TraceFigures, TraceKernel, figures_to_dict
from kscope.trace.ranks import RankTrace, folder_dict

DOC = REPO / "docs" / "json.md"
BLOCK = re.compile(r"<!-- checked: ([\w ]+) -->\s*```jsonc\n(.*?)```", re.S)


def documented() -> dict[str, object]:
    blocks = {name: body for name, body in BLOCK.findall(DOC.read_text())}
    return {name: json.loads(_strip_comments(body)) for name, body in blocks.items()}


def _strip_comments(text: str) -> str:
    """`// …` to the end of a line, outside strings."""
    out = []
    for line in text.splitlines():
        in_string, cut = False, len(line)
        for i, ch in enumerate(line):
            if ch == '"' and (i == 0 or line[i - 1] != "\\"):
                in_string = not in_string
            elif not in_string and line.startswith("//", i):
                cut = i
                break
        out.append(line[:cut])
    return "\n".join(out)


def shape(x):
    """Keys at every level: a dict's keys and their shapes; a list by its first item; values ignored."""
    if isinstance(x, dict):
        return {k: shape(v) for k, v in x.items()}
    if isinstance(x, list):
        return [shape(x[0])] if x else []
    return None


OPEN = {".sources", ".compile_options.options"}
"""Objects whose keys are data (file names, option names), not fields."""


def differences(doc, real, where="") -> list[str]:
    """Where the documented shape and the real one differ (null or an empty list on either side is
    not compared deeper: the other block, or the other side, shows it)."""
    if where in OPEN:
        return []
    if isinstance(doc, dict) and isinstance(real, dict):
        out = [f"{where}.{k}: documented, not written" for k in doc.keys() - real.keys()]
        out += [f"{where}.{k}: written, not documented" for k in real.keys() - doc.keys()]
        for k in doc.keys() & real.keys():
            out += differences(doc[k], real[k], f"{where}.{k}")
        return out
    if isinstance(doc, list) and isinstance(real, list) and doc and real:
        return differences(doc[0], real[0], f"{where}[0]")
    return []


def full_report():
    """The article's Report with every field of the schema filled."""
    r = article_report()
    r = replace(r, eager=_shared(r.eager), compiled=_shared(r.compiled))
    breaks = graph_break_report().compiled.graph_breaks
    collective = Collective("c10d::allreduce_", 1, 4_000_000, 11443.3, None, after="aten::mul", before="aten::add")
    held = HeldTensor(4_000_000, "temporary", "aten::add", Place("add_relu.py", 7))
    memory = CallMemory(8_000_000, 4_000_000, 2, {"temporary": 4_000_000, "held": 4_000_000}, (held,), saved_bytes=0)
    eager = replace(r.eager, collectives=(collective,), memory=memory)
    compiled = replace(
        r.compiled, graph_breaks=breaks, recompiles=(Recompile("G['step'] == 1", "stepper"),),
        autotune=(Autotune("packed_linear", "256x512", (AutotuneChoice("_mkl_linear", 2.3),)),),
        cuda_graphs=CudaGraphs(1, 5), collectives=(collective,),
        memory=CallMemory(4_000_000, 4_000_000, 1, {"held": 4_000_000}, (HeldTensor(4_000_000, "held", "buf0", Place("add_relu.py", 7), "cpp_fused_add_relu_0"),),
                          saved_bytes=0, estimated_peak_bytes=(4_000_000,)),
    )
    return replace(
        r, eager=eager, compiled=compiled, errors=(RunError("eager", "ValueError", "…", r.file, 5, rank=1),),
        speedup=r.speedup or Speedup(2.5, "faster", 1.3, (2.0, 6.6), 0.07),
        backward=Backward("a gradient of ones", ("a", "b")), compile_options=CompileOptions(),
        traces={"eager": "/t/e.json.gz", "compiled": "/t/c.json.gz"},
        ranks=(RankResult(0, eager, compiled, (), (), 9.8, "done"),), files=(r.file, "/work/model.py"), root="/work",
        sources={"add_relu.py": r.source, "model.py": "x = 1\n"},
    )


def _shared(mode):
    """A mode whose kernels each carry one line's share: all of the row, at its first line."""
    return replace(mode, kernels=tuple(
        replace(k, shares=(LineShare(k.lines[0] if k.lines else None, k.bytes_read, k.bytes_written, k.launches, k.time_us),))
        for k in mode.kernels))


def test_every_checked_block_is_json():
    blocks = documented()
    assert {"report", "sweep", "rank", "trace", "trace folder", "plan"} <= set(blocks)


def test_the_report_block_has_every_field_kscope_writes_and_no_other():
    real = report_to_dict(full_report())
    assert all(real[k] is not None for k in ("eager", "compiled", "speedup", "backward", "traces", "ranks"))
    assert differences(shape(documented()["report"]), shape(real)) == []


def test_the_plan_block():
    r = full_report()
    planned = tuple(replace(k, launches=None, time_us=None, shares=()) for k in r.compiled.kernels)
    real = report_to_dict(replace(r, compiled=None, plan=Plan(planned, r.compiled.round_trips, PlanProgress(1, 0, 0, 1))))
    assert real["compiled"] is None and real["plan"]["kernels"][0]["time_us"] is None
    assert differences(shape(documented()["plan"]), shape(real["plan"])) == []
    assert "plan" not in report_to_dict(r)  # a finished run's Report has none


def test_the_sweep_block():
    real = report_to_dict(sweep_report())["sweep"]
    assert real["points"] and real["points"][0]["compiled"]["kernels"]
    assert differences(shape(documented()["sweep"]), shape(real)) == []


def test_the_rank_block():
    (real,) = report_to_dict(full_report())["ranks"]
    assert differences(shape(documented()["rank"]), shape(real)) == []


def test_the_trace_blocks():
    figures = TraceFigures("/t/r0.json", "cpu", 5, 4, 0, 0, (TraceKernel("aten::mul", 1, 820.0),))
    collective = full_report().eager.collectives[0]
    folder = folder_dict("/t", [RankTrace(0, "distributedInfo", figures, (collective,))])
    assert differences(shape(documented()["trace"]), shape(figures_to_dict(figures))) == []
    assert differences(shape(documented()["trace folder"]), shape(folder)) == []


@pytest.mark.parametrize("change", ["drop", "add"])
def test_the_check_catches_a_field_the_page_does_not_have(change):
    real = report_to_dict(full_report())
    if change == "drop":
        del real["compiled"]["kernels"][0]["lines"]
    else:
        real["compiled"]["kernels"][0]["gflops_per_watt"] = 2  # a field no page names
    assert differences(shape(documented()["report"]), shape(real))
