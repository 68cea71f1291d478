from kscope.report import GraphBreak, Kernel, ModeResult, Report, RunError, fmt_bytes, summary_line


def _report():
    k = Kernel("cpp_fused_add_relu_0", 1, 12.5, 8_000_000, 4_000_000, True, ("aten.add",), (7,), "code")
    eager = ModeResult(2, 12_000_000, 8_000_000, 40.0, (Kernel("aten::add", 1, 20.0, 8_000_000, 4_000_000),))
    compiled = ModeResult(1, 8_000_000, 4_000_000, 12.5, (k,), compile_s=1.5, graphs=1,
                          graph_breaks=(GraphBreak("data-dependent branch", 5, "f.py"),))
    return Report("f.py", "add_relu", "cpu", "CPU", "2.13", 4_000_000, eager, compiled,
                  (RunError("compile", "X", "y", "f.py", 3),))


def test_json_round_trip_keeps_everything():
    r = _report()
    assert Report.from_dict(r.to_dict()) == r


def test_json_has_the_documented_fields():
    d = _report().to_dict()
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
        {"reason": "data-dependent branch", "line": 5, "file": "f.py", "explanation": "", "hint": ""}
    ]
    assert d["compiled"]["recompiles"] == [] and "recompiles" not in d["eager"]
    assert d["errors"][0] == {"stage": "compile", "type": "X", "message": "y", "file": "f.py", "line": 3}
    # 12 MB over 12.5 µs is 960 GB/s
    assert d["compiled"]["achieved_gbps"] == 960.0


def test_summary_line_in_the_article_units():
    assert summary_line(_report()) == "launches 2 → 1, traffic 20.0 MB → 12.0 MB, −40%"
    assert fmt_bytes(999) == "999 B" and fmt_bytes(1_500) == "1.5 kB"
