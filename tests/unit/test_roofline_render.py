"""The roofline's views (render/roofline.py) on a hand-built Report: the article's seed with FLOPs
(support/roofline_reports.py says how each figure below is derived by hand)."""

from dataclasses import replace

import pytest
from rich.console import Console
from support.fixed_session import article_report
from support.roofline_reports import COPY, MATMUL, seed_with_flops

from kscope.render.markdown import report_markdown
from kscope.render.report import render_report
from kscope.render.roofline import left_out_text, peaks_line, plot_text, roofline_table, row
from kscope.report.codec import report_to_dict
from kscope.report.roofline import points


def rows(report):
    return {(p.mode, p.name): row(p) for p in points(report)}


def test_each_kernel_row_says_its_flops_bytes_intensity_rate_bound_and_share_of_the_roof():
    got = rows(seed_with_flops())
    assert got["eager", "aten::add"][2:] == ["1 M", "12.0 MB", "0.0833", "4.52", "memory", "56%"]
    assert got["compiled", "cpp_fused_add_relu_0"][2:] == ["2 M", "12.0 MB", "0.167", "13.3", "memory", "82%"]
    assert got["compiled", "aten::mm"][2:] == ["33.6 M", "786.4 kB", "42.7", "33.6", "compute", "34%"]
    # unknown FLOPs: every figure that needs them is "?", the bytes still known
    assert got["eager", "aten::relu"][2:] == ["?", "8.0 MB", "?", "?", "?", "?"]
    # a copy: 0 FLOPs is a count, not an unknown; it has no roof to reach
    assert got["compiled", "aten::copy_"][2:] == ["0", "800 B", "0", "0", "memory", "—"]


def test_without_peaks_the_bound_and_the_share_of_the_roof_are_unknown_not_zero():
    got = rows(replace(seed_with_flops(), peak_flops=None))
    assert got["compiled", "cpp_fused_add_relu_0"][2:] == ["2 M", "12.0 MB", "0.167", "13.3", "?", "?"]


def test_the_json_gives_each_rows_roofline_figures_from_the_reports_own_peaks_and_times():
    """intensity = FLOPs / bytes; achieved = FLOPs / time; memory-bound left of the ridge (peak
    FLOP/s / peak bandwidth); % of roof = achieved / min(peak FLOP/s, intensity × bandwidth): what
    the JSON says, derived here from the Report's own figures (swapping its two roofs fails)."""
    r = seed_with_flops()
    d = report_to_dict(r)
    ridge = r.peak_flops / (r.peak_gbps * 1e9)
    checked = 0
    for mode in ("eager", "compiled"):
        for k, j in zip(getattr(r, mode).kernels, d[mode]["kernels"], strict=True):
            assert j["name"] == k.name
            if k.flops is None:  # unknown FLOPs: every figure that needs them is unknown, never 0
                assert (j["intensity"], j["achieved_gflops"], j["bound"], j["roof_percent"]) == (None,) * 4
                continue
            at = k.flops / (k.bytes_read + k.bytes_written)
            done = k.flops / (k.time_us * 1e-6)
            roof = min(r.peak_flops, at * r.peak_gbps * 1e9)
            assert j["intensity"] == pytest.approx(at, rel=1e-3)
            assert j["achieved_gflops"] == pytest.approx(done / 1e9, abs=1e-3)
            assert j["bound"] == ("memory" if at < ridge else "compute")
            assert j["roof_percent"] == (None if roof == 0 else pytest.approx(100 * done / roof, abs=0.05))
            checked += 1
    assert checked == 4
    fused, mm, _ = d["compiled"]["kernels"]
    # the seed's kernel: 2 FLOPs an element over 12 bytes an element; the matmul right of the ridge
    assert (fused["intensity"], fused["bound"], mm["bound"]) == (pytest.approx(1 / 6, rel=1e-3), "memory", "compute")


def test_the_peaks_line_gives_both_peaks_their_sources_and_the_ridge():
    r = seed_with_flops()
    assert peaks_line(r) == f"peak 100 GFLOP/s ({MATMUL}), 97 GB/s ({COPY}); ridge 1.03 FLOP/byte"
    unknown = replace(r, peak_flops=None, peak_flops_source="")
    assert peaks_line(unknown) == f"peak ? FLOP/s, 97 GB/s ({COPY}); ridge ? FLOP/byte"
    assert peaks_line(unknown, "unknown") == f"peak unknown FLOP/s, 97 GB/s ({COPY}); ridge unknown FLOP/byte"


def text_of(renderable, width=80) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_once_prints_the_roofline_after_the_costliest_lines_at_80_columns():
    text = text_of(render_report(seed_with_flops()))
    assert text.index("costliest lines") < text.index("roofline: FLOPs, bytes and achieved FLOP/s per call")
    section = text[text.index("roofline:"):]
    assert max(len(line) for line in section.splitlines()) <= 80
    lines = {line.split("│")[2].strip(): [c.strip() for c in line.split("│")[1:-1]] for line in section.splitlines()
             if line.startswith("│")}
    assert lines["aten::relu"] == ["eager", "aten::relu", "?", "8.0 MB", "?", "?", "?", "?"]
    assert lines["aten::mm"] == ["compiled", "aten::mm", "33.6 M", "786.4 kB", "42.7", "33.6", "compute", "34%"]
    fused = next(cells for name, cells in lines.items() if name.endswith("add_relu_0"))  # cut to fit 80 columns
    assert fused[2:] == ["2 M", "12.0 MB", "0.167", "13.3", "memory", "82%"]
    assert "peak 100 GFLOP/s (a 1024² fp32 matmul" in section and "ridge 1.03 FLOP/byte" in " ".join(section.split())


def test_once_has_no_roofline_while_no_kernel_has_flops():
    assert roofline_table(article_report()) is None
    assert "roofline" not in text_of(render_report(article_report()), 120)


def test_markdown_has_the_roofline_table_with_unknown_for_none():
    md = report_markdown(seed_with_flops())
    section = md[md.index("#### Roofline (FLOP/byte and FLOP/s)"):]
    assert "| mode | kernel | FLOPs | bytes | FLOP/byte | GFLOP/s | bound | % of roof |" in section
    assert "| compiled | `cpp_fused_add_relu_0` | 2 M | 12.0 MB | 0.167 | 13.3 | memory | 82% |" in section
    assert "| eager | `aten::relu` | unknown | 8.0 MB | unknown | unknown | unknown | unknown |" in section
    assert f"peak 100 GFLOP/s ({MATMUL}), 97 GB/s ({COPY}); ridge 1.03 FLOP/byte" in section
    assert "Roofline" not in report_markdown(article_report())


def test_the_caption_counts_the_kernels_left_off_the_plot_and_why():
    assert left_out_text(points(seed_with_flops())) == "2 kernels not plotted: 1 with FLOPs unknown, 1 moving data only (0 FLOPs)"
    every_known = replace(seed_with_flops(), eager=None)
    assert left_out_text(points(replace(every_known, compiled=replace(every_known.compiled,
                                                                      kernels=every_known.compiled.kernels[:2])))) == ""


BRAILLE = {chr(c) for c in range(0x2801, 0x2900)}


def marks(drawn: str, marker: str) -> int:
    """How many points drawn with `marker`, the legend's two a label left out."""
    return drawn.count(marker) - 2 * drawn.count(marker * 2 + " ")


def plain(text: str) -> str:
    from rich.text import Text

    return Text.from_ansi(text).plain


@pytest.mark.parametrize("width", [80, 120])
def test_the_plot_has_its_axes_roofs_points_and_caption(width):
    drawn = plain(plot_text(seed_with_flops(), width=width, height=24))
    assert "FLOP/byte" in drawn and "FLOP/s" in drawn
    assert "ridge 1.03 FLOP/byte" in drawn.splitlines()[0]
    assert BRAILLE & set(drawn)  # the roofs
    assert "●● eager" in drawn and "●● compiled" in drawn
    assert marks(drawn, "●") == 3  # eager add; compiled fused and mm (relu and the copy left out)
    caption = drawn.splitlines()[-1]  # the x axis's label, as long as the width allows
    assert ("FLOP/byte · 2 kernels not plotted: 1 with FLOPs unknown, 1 moving data only (0 FLOPs)" if width >= 120
            else "FLOP/byte · 2 not plotted") in caption
    assert "◆" not in drawn


def test_the_plot_marks_the_selected_kernel_and_draws_no_roof_without_peaks():
    drawn = plain(plot_text(replace(seed_with_flops(), peak_flops=None), width=100, height=24, selected="aten::mm"))
    assert "no roofs: peak FLOP/s unknown" in drawn
    assert not BRAILLE & set(drawn)
    assert "◆◆ selected: aten::mm" in drawn
    assert (marks(drawn, "◆"), marks(drawn, "●")) == (1, 2)  # the mm's point is the mark
    # a kernel off the plot: the caption says so, in full where the width allows
    gone = plain(plot_text(seed_with_flops(), width=160, height=24, selected="aten::relu"))
    assert "selected aten::relu: not plotted (FLOPs unknown)" in gone and "◆" not in gone
    assert "selected: not plotted" in plain(plot_text(seed_with_flops(), width=80, height=24, selected="aten::relu"))
