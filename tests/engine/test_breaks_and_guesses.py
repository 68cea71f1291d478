"""Graph breaks in dynamo's own words, and figures kscope can only guess shown as guesses or as
unknown (issue 22, items 6 and 7), on real torch (CPU); every number derived here from the shapes.

A break inside a module the target imports is placed in that module, at its line, with dynamo's
type, explanation and hints. A size only known as the kernel runs (a boolean mask's count) leaves
the kernels that read or write it unknown, with a note, never a hinted 0 B.
"""

from __future__ import annotations

import os
import textwrap

import pytest
from rich.console import Console
from support.paths import SAMPLES, line_of
from support.runs import run_ok

from kscope.engine.compiled.half import guessed_graphs
from kscope.engine.inductor.capture import Capture, GraphCapture
from kscope.engine.inductor.provenance import CompiledKernel
from kscope.render.report import render_report
from kscope.report.compile import CompileOptions
from kscope.report.place import Place
from kscope.trace.kernels import Launch, TraceSummary

F32, BOOL = 4, 1

BENCH = """\
import torch
from pkg.layers import scale

def run(x):
    return scale(x).relu()

def inputs(device):
    return (torch.ones(1000, device=device),)
"""


def project(tmp_path, body: str):
    """bench.py calls pkg/layers.py's scale(x), whose body is `body`."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    layers = tmp_path / "pkg" / "layers.py"
    layers.write_text("import torch\n\n\ndef scale(x):\n" + textwrap.indent(textwrap.dedent(body).strip(), "    ") + "\n")
    (tmp_path / "bench.py").write_text(BENCH)
    return tmp_path / "bench.py", layers




def text_of(report) -> str:
    console = Console(width=200, record=True)
    console.print(render_report(report))
    return console.export_text()


def test_a_graph_break_inside_an_imported_function_keeps_dynamos_explanation(tmp_path):
    bench, layers = project(
        tmp_path,
        """
        y = x * 2
        if y.sum() > 0:
            return y + 1
        return y - 1
        """,
    )
    r = run_ok(bench)
    (brk,) = r.compiled.graph_breaks
    line = line_of(layers, "if y.sum() > 0:")
    assert brk.place == Place("pkg/layers.py", line)  # the module's file and line, not bench.py's call
    assert os.path.realpath(brk.file) == os.path.realpath(layers) and brk.line == line
    # dynamo's words: the graph's own reason says only "generic_jump TensorVariable()"
    assert brk.type == "Data-dependent branching"
    assert "Dynamo does not support tracing dynamic control flow" in brk.explanation
    assert any("torch.cond" in h for h in brk.hints) and brk.hint == brk.hints[0]
    shown = text_of(r)
    assert f"pkg/layers.py:{line}: data-dependent branch" in shown
    assert "dynamo: Data-dependent branching: Detected data-dependent branching" in shown
    assert "hint: Use `torch.cond` to express dynamic control flow." in shown
    assert r.sources["pkg/layers.py"] == layers.read_text()  # the app's source pane can show it


def test_a_call_dynamo_cannot_trace_keeps_its_type_and_explanation(tmp_path):
    bench, layers = project(
        tmp_path,
        """
        y = x * 2
        torch._dynamo.graph_break()
        return y + 1
        """,
    )
    r = run_ok(bench)
    (brk,) = r.compiled.graph_breaks
    assert brk.place == Place("pkg/layers.py", line_of(layers, "graph_break()"))
    assert brk.type == brk.reason == "Call to `torch._dynamo.graph_break()`"
    assert brk.explanation.startswith("User-inserted graph break.")
    assert brk.hints == ("Remove the `torch._dynamo.graph_break()` call.",)


def test_a_kernel_of_data_dependent_size_is_unknown_with_a_note_never_zero(tmp_path):
    """`x[x > 0].cos()` on 1000 floats, -500 to 499: 499 are kept, a count inductor knows only as
    it runs (an unbacked size, which its hints would take as 0). The mask kernel's sizes are the
    input's: it reads 1000 floats and writes 1000 bools."""
    path = tmp_path / "masked.py"
    path.write_text(textwrap.dedent("""\
        import torch

        torch._dynamo.config.capture_dynamic_output_shape_ops = True

        def pick(x):
            return x[x > 0].cos()

        def inputs(device):
            return (torch.arange(-500, 500, dtype=torch.float32, device=device),)
        """))
    r = run_ok(path)
    rows = {k.name: k for k in r.compiled.kernels}
    mask = next(k for name, k in rows.items() if "gt" in name)
    assert (mask.bytes_read, mask.bytes_written) == (1000 * F32, 1000 * BOOL)
    cos = next(k for name, k in rows.items() if "cos" in name)
    gathered = rows["aten::index"]
    for k in (cos, gathered):
        assert (k.bytes_read, k.bytes_written) == (None, None), k
    assert r.compiled.bytes_total is None
    (note,) = [n for n in r.notes if "data-dependent" in n]
    assert cos.name in note and "aten::index" in note
    # on screen: "?" for those rows, never 0 B, and the total says what is known and what is not
    from kscope.render.text import fmt_bytes, traffic_text
    from kscope.render.view import kernel_rows

    shown = {row.name: row.traffic for row in kernel_rows(r.compiled)}
    assert shown[cos.name] == shown["aten::index"] == "?"
    unknown = sum(1 for k in r.compiled.kernels if k.bytes_read is None)
    known = sum(k.bytes_read + k.bytes_written for k in r.compiled.kernels if k.bytes_read is not None)
    assert traffic_text(r.compiled) == f"≥ {fmt_bytes(known)}; {unknown} rows unknown"


@pytest.mark.skipif(not __import__("torch").backends.mkl.is_available(), reason="no MKL: no packed linear")
def test_a_frozen_linear_reads_its_packed_weight_never_the_original(tmp_path):
    """samples/linear_frozen.py with freezing: MKL's packed linear is handed x, the packed weight
    and the original (read only for another batch size), all but x constants inductor leaves out
    of its count. It reads x and the packed weight, and writes the 256x1024 output."""
    import torch

    r = run_ok(SAMPLES / "linear_frozen.py", no_grad=True, compile=CompileOptions(options={"freezing": True}))
    (mkl,) = [k for k in r.compiled.kernels if k.name == "mkl::_mkl_linear"]
    packed = torch.ops.mkl._mkl_reorder_linear_weight(torch.randn(1024, 512), 256).numel() * F32
    assert mkl.bytes_read == 256 * 512 * F32 + packed  # never + 1024 * 512 * F32 of the original
    assert mkl.bytes_written == 256 * 1024 * F32
    assert not any("mkl" in n for n in r.notes)


def _graph(cid: str, key: str | None) -> GraphCapture:
    g = GraphCapture(cid, fx_key=key, provenance={"cpp_fused_mul_0:1": ["mul"]})
    g.post_grad_graph = 'def forward(self, arg0_1: "f32[4]"):'
    return g


def _graphs(*graphs) -> Capture:
    out = Capture()
    out += graphs
    return out


def _kernels():
    return [CompiledKernel("cpp_fused_mul_0:1", "cpp_fused_mul_0", "kernel", None, ("aten.mul",), (), 16, 16)]


def test_a_graph_found_by_its_key_or_as_its_regions_only_one_is_no_guess():
    trace = TraceSummary("cpu", [Launch("cpp_fused_mul_0", 1.0, "kernel", "0/0", 1, None, "None")])
    assert guessed_graphs(trace, _graphs(_graph("0/0", None)), [_kernels()]) == []
    keyed = TraceSummary("cpu", [Launch("cpp_fused_mul_0", 1.0, "kernel", "0/0", 1, None, "KEY")])
    assert guessed_graphs(keyed, _graphs(_graph("0/0", "KEY"), _graph("0/0", "OTHER")), [_kernels()] * 2) == []


def test_a_graph_kscope_chose_without_its_key_is_said_to_be_a_guess():
    """No key matched (the cache was off: the profiler says "None") and the region has two forward
    graphs, or the launches ran in no region kscope knows: the graph taken is a guess, said."""
    trace = TraceSummary("cpu", [Launch("cpp_fused_mul_0", 1.0, "kernel", "0/0", 1, None, "None")])
    (note,) = guessed_graphs(trace, _graphs(_graph("0/0", None), _graph("0/0", None)), [_kernels()] * 2)
    assert "matched no graph by inductor's cache key" in note and "latest of the 2 forward graphs" in note
    elsewhere = TraceSummary("cpu", [Launch("cpp_fused_mul_0", 1.0, "kernel", "1/0", 1, None, "None")])
    (note,) = guessed_graphs(elsewhere, _graphs(_graph("0/0", None)), [_kernels()])
    assert "the most kernels of those names (1 of 1)" in note and "a guess" in note
