"""What the panes say, from Reports: pure functions, no app needed."""

from kscope.render.names import short_name
from kscope.render.verdict import change_line
from kscope.render.view import (
    kernel_rows,
    kernels_of_line,
    of_peak,
    vanished,
)
from kscope.report.model import Kernel, ModeResult, Place


def _mode(*kernels):
    return ModeResult(sum(k.launches for k in kernels), 0, 0, 0.0, tuple(kernels))


def test_change_since_previous_save():
    before = _mode(Kernel("aten::add", 1, 1.0, 8, 4), Kernel("aten::relu", 1, 1.0, 4, 4))
    after = _mode(Kernel("aten::add", 2, 1.0, 8, 4), Kernel("aten::mul", 1, 1.0, 4, 4))
    rows = {r.name: r.change for r in kernel_rows(after, before)}
    assert rows == {"aten::add": "1→2", "aten::mul": "new"}
    assert vanished(after, before) == ["aten::relu"]
    before_mode = ModeResult(5, 12_000_000, 8_000_000, 41.0)
    after_mode = ModeResult(3, 8_000_000, 4_000_000, 23.0)
    assert change_line("compiled", before_mode, after_mode) == (
        "compiled: launches 5 → 3, traffic 20.0 MB → 12.0 MB, call 41 µs → 23 µs"
    )
    assert change_line("compiled", None, after_mode) == ""
    assert change_line("compiled", before_mode, after_mode, compact=True) == (
        "Δ compiled: launches 5→3, 20.0 MB→12.0 MB, 41 µs→23 µs"
    )
    assert of_peak(48.5, 97.0) == "48.5 GB/s (50% of peak)" and of_peak(None, 97.0) == ""
    # above the measured peak: what was measured, not a guess at the cause
    assert of_peak(164.0, 104.0) == "164.0 GB/s (158% of the 104 GB/s measured peak: above it)"


def test_which_kernels_a_line_became():
    from kscope.report.model import Report

    eager = _mode(Kernel("aten::add", 1, 1.0, 8, 4, lines=(Place("f.py", 4),)), Kernel("aten::relu", 1, 1.0, 4, 4, lines=(Place("f.py", 5),)))
    compiled = _mode(Kernel("cpp_fused_add_relu_0", 1, 1.0, 8, 4, fused=True, lines=(Place("f.py", 4), Place("f.py", 5))))
    report = Report("f.py", "f", eager=eager, compiled=compiled)
    assert kernels_of_line(report, 5) == (["aten::relu"], ["cpp_fused_add_relu_0"])
    assert kernels_of_line(report, 9) == ([], [])


def test_long_cuda_template_names_are_shortened_readably():
    name = (
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
        "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"
    )
    assert short_name(name, 48) == "at::native::vectorized_elementwise_kernel<…>"
    assert short_name(name, 32) == "vectorized_elementwise_kernel<…>"
    assert len(short_name(name, 20)) == 20
    assert short_name("triton_poi_fused_add_relu_0") == "triton_poi_fused_add_relu_0"


def test_long_names_are_cut_in_the_middle_so_rows_stay_apart():
    names = [f"cpp_fused_add_native_layer_norm_native_layer_norm_backward_view_{i}" for i in (3, 7)]
    cut = [short_name(n, 28) for n in names]
    assert all(len(c) == 28 and "…" in c for c in cut)
    assert cut[0] != cut[1] and cut[0].startswith("add_native") and cut[0].endswith("view_3")
    # inductor's prefix goes first: two generated kernels that share their ends stay apart
    a, b = (short_name(n, 20) for n in ("cpp_fused_add_relu_threshold_backward_0", "cpp_fused_threshold_backward_0"))
    assert a != b and a.startswith("add_relu") and b.startswith("threshold")
    assert short_name("ReluBackward0 › threshold_backward", 20) == "threshold_backward"
    # a composite op keeps the op that ran whole: that is what the rows differ by
    assert short_name("aten::cross_entropy_loss › nll_loss_forward", 28).endswith(" › nll_loss_forward")
    assert short_name("aten::cross_entropy_loss › _log_softmax", 28).endswith(" › _log_softmax")
    assert short_name("aten::layer_norm › native_layer_norm", 24) == "native_layer_norm"


def test_the_change_line_follows_the_verdicts_noise_rule():
    before = ModeResult(2, 800, 400, 4.0, call_time_us=82.0, call_time_us_range=(80.0, 85.0))
    slower = ModeResult(2, 800, 400, 4.0, call_time_us=7476.0, call_time_us_range=(7000.0, 8000.0))
    close = ModeResult(2, 800, 400, 4.0, call_time_us=86.0, call_time_us_range=(84.0, 90.0))
    # a change beyond noise on a quiet machine is shown as one
    assert change_line("compiled", before, slower, compact=True).endswith("82 µs→7.5 ms")
    # under a "busy" verdict the two times say nothing about the code
    assert change_line("compiled", before, slower, compact=True, busy=True).endswith("? (CPU busy)")
    # 82 → 86 µs: within the 10% noise floor
    assert change_line("compiled", before, close).endswith("call ≈ 86 µs")


def test_a_target_with_weights_shows_no_array_sized_multiple():
    from dataclasses import replace

    from rich.console import Console
    from support.fixed_session import article_report

    from kscope.render.markdown import report_markdown
    from kscope.render.tables import mode_table

    plain = article_report()
    weighed = replace(plain, reads_parameters=True)

    def caption(report):
        console = Console(width=120, record=True)
        console.print(mode_table(report, "compiled", report.compiled))
        return console.export_text()

    assert "12.0 MB = 3.0× array-sized transfers" in caption(plain)
    assert "array-sized" not in caption(weighed) and "traffic 12.0 MB" in caption(weighed)
    assert "array-sized transfers" in report_markdown(plain)
    assert "array-sized transfers" not in report_markdown(weighed)


def test_a_total_with_unknown_rows_says_what_is_known_and_how_much_is_not():
    from kscope.render.text import traffic_text

    known = Kernel("aten::add", 1, 1.0, 8_000_000, 4_000_000)
    unknown = Kernel("AccumulateGrad › add_", 1, 1.0, None, None)
    partly = Kernel("aten::zeros", 1, 1.0, 0, None)
    mode = ModeResult(3, None, None, 3.0, (known, unknown, partly))
    assert traffic_text(mode) == "≥ 12.0 MB; 2 rows unknown"
    assert traffic_text(mode, short=True) == "≥ 12.0 MB (2 unknown)"
    # nothing known: unknown, never a floor of 0
    assert traffic_text(ModeResult(1, None, None, 1.0, (unknown,))) == "?"
    assert traffic_text(ModeResult(1, 12, 4, 1.0, (Kernel("aten::add", 1, 1.0, 12, 4),))) == "16 B"
