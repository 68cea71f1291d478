"""A session that replays a fixed Report instead of running torch: for snapshots and screenshots."""

import os
from dataclasses import replace

from kscope.app.session import SessionEvent
from kscope.engine.eager.round_trips import EAGER_HINT, EAGER_REASON
from kscope.report.model import (
    Backward,
    GraphBreak,
    Kernel,
    ModeResult,
    Place,
    Report,
    RoundTrip,
)
from kscope.report.speedup import Speedup

F32 = 4
N = 1_000_000


ARTICLE_SOURCE = """\
\"\"\"The article's example.\"\"\"

import torch


def add_relu(a, b):
    return (a + b).relu()


def inputs(device, n=1_000_000):
    return torch.randn(n, device=device), torch.randn(n, device=device)
"""

CPP_CODE = """\
extern "C" void kernel(const float* in_ptr0, const float* in_ptr1, float* out_ptr0)
{
    #pragma omp parallel for
    for (int64_t x0 = 0; x0 < 1000000; x0 += 16) {
        auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + x0, 16);
        auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr1 + x0, 16);
        auto tmp2 = tmp0 + tmp1;
        auto tmp3 = at::vec::clamp_min(tmp2, decltype(tmp2)(0));
        tmp3.store(out_ptr0 + x0);
    }
}"""


def article_report(file: str = "/work/add_relu.py") -> Report:
    """The article's example with fixed, hand-made times: nothing changes from run to run."""
    n = N * F32
    eager = ModeResult(
        launches=2,
        bytes_read=3 * n,
        bytes_written=2 * n,
        kernel_time_us=412.0,
        kernel_time_us_range=(405.0, 430.0),
        call_time_us=440.0,
        call_time_us_range=(431.0, 452.0),
        kernel_samples=5,
        call_samples=120,
        kernels=(
            Kernel("aten::add", 1, 221.0, 2 * n, n, ops=("aten.add",), lines=(Place(os.path.basename(file), 7),), kind="op"),
            Kernel("aten::relu", 1, 191.0, n, n, ops=("aten.relu",), lines=(Place(os.path.basename(file), 7),), kind="op"),
        ),
        round_trips=(RoundTrip("tmp0", n, "aten::add", ("aten::relu",), (Place(os.path.basename(file), 7),), EAGER_REASON, EAGER_HINT),),
        calls=5,
    )
    compiled = ModeResult(
        launches=1,
        bytes_read=2 * n,
        bytes_written=n,
        kernel_time_us=150.0,
        kernel_time_us_range=(147.0, 156.0),
        call_time_us=171.0,
        call_time_us_range=(166.0, 180.0),
        kernel_samples=5,
        call_samples=120,
        round_trips=(),
        kernels=(
            Kernel(
                "cpp_fused_add_relu_0", 1, 150.0, 2 * n, n, True, ("aten.add", "aten.relu"), (Place(os.path.basename(file), 7),), CPP_CODE, "kernel"
            ),
        ),
        calls=5,
        compile_s=1.25,
        graphs=1,
        graph_breaks=(),
    )
    return Report(
        file, "add_relu", "cpu", "Test CPU", "2.13.0+cpu", n, eager, compiled, wall_s=1.5,
        source=ARTICLE_SOURCE, target_lines=(6, 7), peak_gbps=97.0, peak_source="a 256 MB copy, measured once per worker",
        speedup=Speedup(440.0 / 171.0, "faster", 412.0 / 150.0, kernel_verdict="faster"),
    )


def graph_break_report(file: str = "/work/branchy.py") -> Report:
    r = article_report(file)
    from dataclasses import replace

    compiled = replace(
        r.compiled,
        graphs=2,
        graph_breaks=(
            GraphBreak(
                "data-dependent branch: Python `if`/`while` on a tensor's value",
                6,
                file,
                explanation="Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`). "
                "Dynamo does not support tracing dynamic control flow.",
                hint="Use `torch.cond` to express dynamic control flow.",
                type="Data-dependent branching",
                hints=("Use `torch.cond` to express dynamic control flow.",),
                place=Place(os.path.basename(file), 6),
            ),
        ),
    )
    return replace(r, target="branchy", compiled=compiled)


def backward_report(file: str = "/work/add_relu.py") -> Report:
    """The article's example with --backward, figures as tests/engine/test_backward.py derives them
    (1M elements: the mask relu's backward reads is 1 byte each), times hand-made."""
    from dataclasses import replace

    r, n, mask = article_report(file), N * F32, N

    def mode(kernels, launches, time_us, call_us):
        return replace(
            r.eager if kernels[0].kind == "op" else r.compiled, launches=launches, kernel_time_us=time_us,
            call_time_us=call_us, call_time_us_range=(call_us * 0.97, call_us * 1.04),
            bytes_read=sum(k.bytes_read for k in kernels), bytes_written=sum(k.bytes_written for k in kernels),
            kernels=tuple(kernels), round_trips=None,  # not made up here: shown as unknown
        )

    eager = mode([
        Kernel("aten::add", 1, 221.0, 2 * n, n, ops=("aten.add",), lines=(Place(os.path.basename(file), 7),), kind="op"),
        Kernel("aten::relu", 1, 191.0, n, n, ops=("aten.relu",), lines=(Place(os.path.basename(file), 7),), kind="op"),
        Kernel("ReluBackward0 › threshold_backward", 1, 240.0, 2 * n, n, ops=("aten.threshold_backward",),
               lines=(Place(os.path.basename(file), 7),), kind="op", phase="backward"),
        Kernel("AccumulateGrad › copy_", 1, 160.0, n, n, ops=("aten.copy_",), kind="op", phase="backward"),
    ], 4, 812.0, 905.0)
    compiled = mode([
        Kernel("cpp_fused_add_relu_threshold_backward_0", 1, 170.0, 2 * n, n + mask, True,
               ("aten.add", "aten.relu", "aten.le"), (Place(os.path.basename(file), 7),), CPP_CODE, "kernel", bytes_saved=mask),
        Kernel("cpp_fused_threshold_backward_0", 1, 150.0, n + mask, n, True, ("aten.where",), (Place(os.path.basename(file), 7),), CPP_CODE,
               "kernel", phase="backward"),
        Kernel("AccumulateGrad › copy_", 1, 160.0, n, n, kind="op", phase="backward"),
    ], 3, 480.0, 560.0)
    return replace(r, eager=eager, compiled=compiled, speedup=Speedup(905.0 / 560.0, "faster", 812.0 / 480.0, kernel_verdict="faster"),
                   backward=Backward("a gradient of ones for the output, as for their sum", ("a", "b")))


def sweep_report(file: str = "/work/add_relu.py") -> Report:
    """A sweep of the seed, 10² to 10⁷, with hand-made times: compiled pulls away from 10⁶."""
    from kscope.report.sweep import Sweep, SweepMode, SweepPoint

    times = {100: (9.0, 41.0), 10**3: (10.5, 44.0), 10**4: (21.0, 63.0), 10**5: (66.0, 80.0),
             10**6: (520.0, 330.0), 10**7: (9100.0, 5400.0)}
    points = []
    for i, (n, (e_us, c_us)) in enumerate(times.items()):
        eager = SweepMode(2, 12 * n, 8 * n, e_us * 0.9, (e_us * 0.85, e_us * 0.95), e_us, (e_us * 0.95, e_us * 1.05),
                          ("aten::add", "aten::relu"))
        compiled = SweepMode(1, 8 * n, 4 * n, c_us * 0.8, (c_us * 0.75, c_us * 0.85), c_us, (c_us * 0.96, c_us * 1.04),
                             ("cpp_fused_add_relu_0",), ("serial" if n < 10**4 else "parallel",))
        ratio = e_us / c_us
        verdict = "faster" if ratio > 1.1 else "slower" if ratio < 0.9 else "same within noise"
        recompiled = ("compiled for this size (static shapes)" if i == 0 else
                      "recompiled: 0/0: tensor 'a' size mismatch at index 0. expected 100, actual 1000" if i == 1
                      else None)
        points.append(SweepPoint(n, eager, compiled, verdict, ratio, "0/0" if i == 0 else "0/1 (dynamic)", recompiled,
                                 1.0))
    sweep = Sweep(tuple(points), tuple(times), recompiles=1)
    return Report(file, "add_relu", "cpu", "AMD EPYC", "2.13.0+cpu", peak_gbps=25.0, sweep=sweep, source=ARTICLE_SOURCE)


def ranks_report() -> Report:
    """The article's report run as 2 ranks, rank 1 all-reducing a different size in compiled code."""
    from kscope.report.model import Collective, RankResult

    mb4 = 4_000_000
    base = article_report()
    ar = Collective("c10d::allreduce_", 1, mb4, 900.0, None, after="aten::add", before="aten::relu")
    fn = Collective("_c10d_functional::all_reduce_", 1, mb4, 800.0, 850.0, after="cpp_fused_add_0",
                    before="cpp_fused_relu_1")
    eager, compiled = replace(base.eager, collectives=(ar,)), replace(base.compiled, collectives=(fn,))
    ranks = (RankResult(0, eager, compiled, stage="done"),
             RankResult(1, eager, replace(compiled, collectives=(replace(fn, bytes=mb4 // 2),)), stage="done"))
    return replace(base, eager=eager, compiled=compiled, ranks=ranks)


class FixedSession:
    """Same interface as LiveSession; each run replays `report` with fixed timestamps."""

    def __init__(self, report: Report):
        self.report = report
        self.emit = None
        self.runs = 0
        self.shown_runs: list[int] = []

    def __call__(self, request, emit, trace_root=None):
        self.emit = emit
        return self

    def start(self):
        self.emit(SessionEvent("starting", at=0.0))
        self.emit(SessionEvent("ready", at=0.0))

    def request_run(self, coalesce=True):
        self.runs += 1
        self.emit(SessionEvent("running", self.runs, at=100.0))
        eager_only = replace(self.report, compiled=None)
        self.emit(SessionEvent("eager", self.runs, eager_only, at=100.2))
        self.emit(SessionEvent("report", self.runs, self.report, at=101.5))
        return self.runs

    def request_sweep(self, options):
        self.runs += 1
        self.emit(SessionEvent("sweeping", self.runs, at=200.0))
        self.emit(SessionEvent("report", self.runs, sweep_report(self.report.file), at=224.0))
        return self.runs

    def shown(self, run_id):
        self.shown_runs.append(run_id)  # a live session would let the worker time the modes now

    def stop(self):
        pass
