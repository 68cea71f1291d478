from dataclasses import replace

from kscope.render.text import fmt_bytes, summary_line
from kscope.report.codec import report_from_dict, report_to_dict
from kscope.report.model import GraphBreak, Kernel, ModeResult, Place, Report, RunError


def _report():
    k = Kernel("cpp_fused_add_relu_0", 1, 12.5, 8_000_000, 4_000_000, True, ("aten.add",), (Place("f.py", 7),), "code",
               working_set_bytes=12_000_000)
    eager = ModeResult(2, 12_000_000, 8_000_000, 40.0, (Kernel("aten::add", 1, 20.0, 8_000_000, 4_000_000),))
    compiled = ModeResult(1, 8_000_000, 4_000_000, 12.5, (k,), compile_s=1.5, graphs=1,
                          graph_breaks=(GraphBreak("data-dependent branch", 5, "f.py"),))
    return Report("f.py", "add_relu", "cpu", "CPU", "2.13", 4_000_000, eager, compiled,
                  (RunError("compile", "X", "y", "f.py", 3),))


def test_json_round_trip_keeps_everything():
    r = _report()
    assert report_from_dict(report_to_dict(r)) == r


def test_json_has_the_documented_fields():
    d = report_to_dict(_report())
    for key in ("schema", "file", "target", "device", "device_name", "torch_version", "eager", "compiled", "errors"):
        assert key in d
    for key in ("launches", "bytes_read", "bytes_written", "kernel_time_us", "achieved_gbps", "kernels"):
        assert key in d["eager"] and key in d["compiled"]
    for key in ("compile_s", "graphs", "graph_breaks"):
        assert key in d["compiled"] and key not in d["eager"]
    kernel = d["compiled"]["kernels"][0]
    for key in ("name", "launches", "time_us", "bytes_read", "bytes_written", "fused", "ops", "lines", "code"):
        assert key in kernel
    assert d["compiled"]["graph_breaks"] == [
        {"reason": "data-dependent branch", "line": 5, "file": "f.py", "explanation": "", "hint": "",
         "type": "", "hints": [], "place": None}
    ]
    assert d["compiled"]["recompiles"] == [] and "recompiles" not in d["eager"]
    assert d["errors"][0] == {"stage": "compile", "type": "X", "message": "y", "file": "f.py", "line": 3}
    # 12 MB over 12.5 µs is 960 GB/s
    assert d["compiled"]["achieved_gbps"] == 960.0


def test_summary_line_in_the_article_units():
    assert summary_line(_report()) == "launches 2 → 1, traffic 20.0 MB → 12.0 MB, −40%"
    assert fmt_bytes(999) == "999 B" and fmt_bytes(1_500) == "1.5 kB"


def test_unknown_bytes_are_null_in_json_and_a_question_mark_on_screen():
    from rich.console import Console

    from kscope.render.report import render_report
    from kscope.render.view import kernel_detail, kernel_rows, saving

    known = Kernel("aten::mm", 1, 10.0, 4_000, 1_000, kind="extern")
    unknown = Kernel("cpp_fused_expand_threshold_backward_0", 1, 5.0, None, None, True)
    compiled = ModeResult(2, None, None, 15.0, (known, unknown))
    r = Report("f.py", "step", eager=ModeResult(1, 4_000, 1_000, 12.0, (known,)), compiled=compiled,
               largest_input_bytes=1_000, notes=("compiled: bytes unknown for cpp_fused_expand_threshold_backward_0",))
    d = report_to_dict(r)
    assert d["schema"] == 16
    assert d["compiled"]["bytes_read"] is None and d["compiled"]["bytes_written"] is None
    assert d["compiled"]["kernels"][1]["bytes_read"] is None and d["compiled"]["achieved_gbps"] is None
    assert report_from_dict(d) == r
    # one row of two unknown: the known floor and how much is not known, never a bare 0
    assert summary_line(r) == "launches 1 → 2, traffic 5.0 kB → ≥ 5.0 kB (1 unknown)"
    assert [row.traffic for row in kernel_rows(compiled)] == ["5.0 kB", "?"]
    assert "R ? · W ?" in kernel_detail(unknown)
    assert saving(r) == ""
    console = Console(width=120, record=True)
    console.print(render_report(r))
    text = console.export_text()
    assert "traffic ≥ 5.0 kB; 1 row unknown (see the notes)" in text and " 0 B " not in text


def test_a_kernel_without_ops_says_what_it_does():
    from kscope.render.view import kernel_detail

    copy = Kernel("cpp_fused_0", 1, 2.0, 800, 800, True, what="copies x, conv1.weight into channels-last layout")
    assert report_from_dict(report_to_dict(Report("f.py", "f", compiled=ModeResult(1, 800, 800, 2.0, (copy,))))).compiled.kernels == (copy,)
    assert "ops: copies x, conv1.weight into channels-last layout" in kernel_detail(copy)


def test_phases_sum_tag_and_round_trip():
    from kscope.render.text import summary_line
    from kscope.render.view import kernel_rows, saving, vanished
    from kscope.report.model import Backward, Kernel, ModeResult, Report, phase_totals

    def mode(kernels):
        return ModeResult(sum(k.launches for k in kernels), sum(k.bytes_read for k in kernels),
                          sum(k.bytes_written for k in kernels), 10.0, tuple(kernels))

    eager = mode([Kernel("aten::mm", 1, 4.0, 100, 50), Kernel("aten::mm", 2, 6.0, 300, 80, phase="backward")])
    compiled = mode([
        Kernel("aten::mm", 1, 4.0, 100, 60, bytes_saved=10),
        Kernel("aten::mm", 2, 3.0, 300, 80, phase="backward"),
        Kernel("cpp_fused_lerp_0", 1, 1.0, 40, 20, True, phase="optimizer"),
    ])
    assert [(p.phase, p.launches, p.bytes_read, p.bytes_written) for p in compiled.phases] == [
        ("forward", 1, 100, 60), ("backward", 2, 300, 80), ("optimizer", 1, 40, 20)]
    # an unknown byte count makes its phase's total unknown, not the other phases'
    unknown = phase_totals([Kernel("a", 1, 1.0, None, 4), Kernel("b", 1, 1.0, 8, 8, phase="backward")])
    assert [(p.bytes_read, p.bytes_written) for p in unknown] == [(None, 4), (8, 8)]
    r = Report("f.py", "step", largest_input_bytes=100, eager=eager, compiled=compiled,
               backward=Backward("the target's 0-dim output", ("w",)))
    assert summary_line(r).startswith("fwd 1 → 1 · bwd 2 → 2 · opt 0 → 1, traffic")
    # the same name in two phases is two rows, each tagged; forward-only modes are not tagged
    rows = kernel_rows(compiled, eager)
    assert [(row.tag, row.name, row.change) for row in rows] == [
        ("fwd", "aten::mm", ""), ("bwd", "aten::mm", ""), ("opt", "cpp_fused_lerp_0", "new")]
    assert vanished(eager, compiled) == ["cpp_fused_lerp_0"]
    assert [row.tag for row in kernel_rows(mode([Kernel("aten::add", 1, 1.0, 8, 4)]))] == [""]
    assert saving(r).endswith("10 B of it only for backward")
    back = report_from_dict(report_to_dict(r))
    assert back == r
    d = report_to_dict(r)
    assert d["compiled"]["phases"]["optimizer"] == {"launches": 1, "bytes_read": 40, "bytes_written": 20,
                                                    "kernel_time_us": 1.0}
    assert d["compiled"]["bytes_saved_for_backward"] == 10 and d["backward"]["grads_of"] == ["w"]


def test_achieved_bandwidth_is_bytes_over_kernel_time_in_decimal_units():
    # 12,000,000 B in 150 µs: 12e6 / 150e-6 s = 80e9 B/s, 80 GB/s (decimal, as the article counts)
    k = Kernel("cpp_fused_add_relu_0", 1, 150.0, 8_000_000, 4_000_000, True)
    mode = ModeResult(1, 8_000_000, 4_000_000, 150.0, (k,))
    assert k.achieved_gbps == mode.achieved_gbps == 80.0
    # unknown bytes or no time: no rate, never 0 GB/s
    assert Kernel("x", 1, 150.0, None, 4).achieved_gbps is None
    assert ModeResult(1, 8, 4, 0.0).achieved_gbps is None


def test_a_report_from_before_schema_11_has_its_line_costs_unknown():
    """Before schema 11 no kernel shared its figures among lines: the codec marks what each line
    cost as unknown (None), so no view needs the schema number; a current Report with no shares
    has no costs (an empty tuple). Its JSON is as it was: `line_costs` empty."""
    from kscope.render.markdown import report_markdown

    d = report_to_dict(_report())
    now = report_from_dict(d)
    assert now.line_costs_known and now.line_costs == ()
    old = {k: v for k, v in d.items() if k != "line_costs"} | {"schema": 10}
    for mode in ("eager", "compiled"):
        old[mode] = {**old[mode], "kernels": [{k: v for k, v in x.items() if k != "shares"} for x in old[mode]["kernels"]]}
    before = report_from_dict(old)
    assert not before.line_costs_known and before.line_costs is None
    assert report_to_dict(before)["line_costs"] == [] and report_to_dict(before)["schema"] == 10
    assert report_from_dict(report_to_dict(before)).line_costs is None
    assert "Costliest lines" not in report_markdown(before)


def test_a_sum_with_an_unknown_part_is_unknown_never_smaller():
    from kscope.render.view import round_trips_text
    from kscope.report.measures import add_known, sum_known
    from kscope.report.model import RoundTrip

    assert sum_known([1, 2, 3]) == 6 and sum_known(x for x in (0.5, 0.25)) == 0.75 and sum_known([]) == 0
    assert sum_known([1, None, 3]) is None and sum_known(iter([None])) is None
    assert add_known(2, 3) == 5 and add_known(2, None) is None
    # what the figures built on it say: a mode's FLOPs, a line's bytes, round trips' bytes
    r = _report()
    assert r.compiled.flops is None  # its kernel's FLOPs are unknown
    trips = (RoundTrip("buf0", 4_000_000, "a", ("b",)), RoundTrip("buf1", None, "b", ("c",)))
    assert round_trips_text(replace(r.compiled, round_trips=trips[:1])) == "1 (4.0 MB)"
    assert round_trips_text(replace(r.compiled, round_trips=trips)) == "2 (?)"  # was "2 (4.0 MB)": the unknown taken as 0
