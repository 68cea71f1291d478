"""The article's seed with FLOPs and both peaks, for the roofline's views: every figure derived by hand."""

from dataclasses import replace

from kscope.report.lines import LineShare
from kscope.report.model import Kernel, Place
from support.fixed_session import article_report

MATMUL = "a 1024² fp32 matmul, measured once per worker"
COPY = "a 256 MB copy, measured once per worker"


def seed_with_flops():
    """The seed at 1M fp32 elements, peaks 100 GFLOP/s and 97 GB/s (ridge 1e11 / 97e9 = 1.03 FLOP/byte):
    - eager aten::add: 1 FLOP an element = 1 M FLOPs over 8 MB read + 4 MB written = 0.0833 FLOP/byte;
      in 221 µs 4.52 GFLOP/s; its roof 0.0833 × 97e9 = 8.08 GFLOP/s, so 56% (= 54.3 GB/s of 97);
    - eager aten::relu: FLOPs unknown (shown "?", never 0);
    - compiled cpp_fused_add_relu_0: an add and a relu = 2 M FLOPs over 12 MB = 0.167 FLOP/byte, memory-
      bound; in 150 µs 13.3 GFLOP/s against a roof of 0.167 × 97e9 = 16.2 GFLOP/s: 82% (= 80 GB/s of 97);
    - compiled aten::mm of 256×256 by 256×256: 2·256³ = 33.6 M FLOPs over 3 × 256² × 4 B = 786 kB = 42.7
      FLOP/byte, right of the ridge: compute-bound; in 1000 µs 33.6 GFLOP/s of 100: 34%;
    - compiled aten::copy_: 0 FLOPs (it only moves data): on no log-log plot, and no roof to reach."""
    r = article_report()
    add, relu = r.eager.kernels
    fused = replace(r.compiled.kernels[0], flops=2_000_000,
                    shares=(LineShare(Place("add_relu.py", 7), 8_000_000, 4_000_000, 1, 150.0),))
    mm = Kernel("aten::mm", 1, 1000.0, 2 * 256 * 256 * 4, 256 * 256 * 4, kind="extern", flops=2 * 256**3)
    copy = Kernel("aten::copy_", 1, 10.0, 400, 400, kind="op", flops=0)
    return replace(
        r, eager=replace(r.eager, kernels=(replace(add, flops=1_000_000), relu)),
        compiled=replace(r.compiled, kernels=(fused, mm, copy)),
        peak_flops=1e11, peak_flops_source=MATMUL, peak_source=COPY,
    )
