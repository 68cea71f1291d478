"""torch.compile's modes and inductor options: the Report, and what a mode
changes, on real torch (CPU). Sizes are derived by hand from the shapes (fp32: 4 bytes)."""

from __future__ import annotations

import pytest
from support.paths import SAMPLES, line_of

from kscope.engine.inductor.modes import BadOption, check_options, inductor_patches
from kscope.engine.run import run
from kscope.report.codec import (
    autotune_from_dict,
    autotune_to_dict,
    report_from_dict,
    report_to_dict,
)
from kscope.report.compile import (
    MODES,
    Autotune,
    CompileOptions,
    CudaGraphs,
    sorted_choices,
)
from kscope.report.model import Report
from kscope.report.request import RunRequest
from kscope.trace.kernels import summarize

F32 = 4
X, K, N = 256, 512, 1024  # samples/linear_frozen.py: x 256x512, Linear(512, 1024)
FROZEN = SAMPLES / "linear_frozen.py"


def test_option_values_take_the_options_type():
    assert check_options(["freezing=true", "cpp.simdlen=None", "max_autotune_gemm_backends=CPP", "cpp.threads=2"]) == {
        "freezing": True, "cpp.simdlen": None, "max_autotune_gemm_backends": "CPP", "cpp.threads": 2,
    }
    with pytest.raises(BadOption, match="freezing is True or False"):
        check_options(["freezing=maybe"])
    with pytest.raises(BadOption, match="NAME=VALUE"):
        check_options(["freezing"])


def test_a_mode_is_inductors_own_config_and_options_go_over_it():
    chosen = CompileOptions("max-autotune", options={"coordinate_descent_tuning": False})
    assert inductor_patches(chosen) == {"max_autotune": True, "triton.cudagraphs": True, "coordinate_descent_tuning": False}
    assert inductor_patches(CompileOptions()) == {}
    assert chosen.cuda_graphs and not CompileOptions("max-autotune-no-cudagraphs").cuda_graphs
    assert [CompileOptions(m).next_mode().mode for m in MODES] == [*MODES[1:], MODES[0]]


def test_compile_options_and_mode_effects_round_trip_through_json():
    tuned = Autotune("mm", "8x8, 8x8", sorted_choices({"triton_mm_1": 0.02, "mm": 0.01, "bad": float("inf")}))
    assert [c.name for c in tuned.choices] == ["mm", "triton_mm_1", "bad"] and tuned.choices[2].ms is None
    r = Report(file="f.py", target="t", compile_options=CompileOptions("reduce-overhead", True, True, {"freezing": True}))
    back = report_from_dict(report_to_dict(r))
    assert back.compile_options == r.compile_options
    assert CudaGraphs(launches=1, kernels=5).line() == "5 kernels in 1 CUDA graph launch"
    assert autotune_from_dict(autotune_to_dict(tuned)) == tuned


def test_a_cuda_graph_replay_is_one_launch_of_many_kernels():
    """The profiler's shape of a CUDA graph replay: one cudaGraphLaunch runtime call, and each
    kernel inside the graph with that call's correlation id."""
    def ev(name, cat, ts, dur, **args):
        return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": 1, "tid": 1, "args": args}

    events = [
        ev("kscope::call#c0", "user_annotation", 0, 100),
        ev("## Call CompiledFxGraph abc ##", "cpu_op", 1, 90),
        ev("cudaGraphLaunch", "cuda_runtime", 2, 5, correlation=7),
        *[ev(f"triton_poi_fused_{i}", "kernel", 10 + i, 1, correlation=7) | {"pid": 0, "tid": 7} for i in range(3)],
    ]
    s = summarize(events).only("c")
    assert len(s.graph_launches) == 1
    assert [launch.in_graph for launch in s.launches] == [True, True, True]


def frozen(mode="default", **options):
    request = RunRequest(str(FROZEN), None, "cpu", calls=2, no_grad=True,
                         compile=CompileOptions(mode, options={"freezing": True, **options}))
    report = run(request)
    assert not report.errors, report.errors
    return report


def test_a_cpp_template_gemm_fuses_the_epilogue_and_the_round_trip_goes():
    """max-autotune on the CPU, left only the C++ template: the GEMM, bias and GELU in one kernel,
    which reads x, the weight and the bias (constants inductor leaves out of its count) and
    writes the output: no round trip. The default mode keeps the matmul's output in memory."""
    default = frozen()
    (trip,) = default.compiled.round_trips
    assert (trip.producer, trip.bytes) == ("mkl::_mkl_linear", X * N * F32)

    tuned = frozen("max-autotune", max_autotune_gemm_backends="CPP")
    assert tuned.compile_options.mode == "max-autotune"
    assert tuned.compiled.round_trips == ()
    (kernel,) = tuned.compiled.kernels
    assert kernel.kind == "kernel" and kernel.launches == 1
    assert kernel.bytes_read == (X * K + N * K + N) * F32
    assert kernel.bytes_written == X * N * F32
    # CUDA graphs are part of max-autotune: on the CPU they do nothing, and kscope says so
    assert "on the CPU" in tuned.compiled.cuda_graphs.skipped
    assert any("CUDA graphs" in note for note in tuned.notes)


def test_max_autotune_says_which_candidate_won_and_the_round_trips_follow():
    r = frozen("max-autotune")
    (tuned,) = r.compiled.autotune
    names = [c.name for c in tuned.choices]
    assert tuned.op == "packed_linear" and "_mkl_linear" in names and any(n.startswith("cpp_") for n in names)
    # the winner kscope names is the candidate inductor generated code for: the library call ran,
    # or the C++ template kernel did
    ran_library = any(k.name == "mkl::_mkl_linear" for k in r.compiled.kernels)
    # the template's kernel runs the GEMM itself (its row takes the generated kernel's name,
    # cpp_fused_addmm_gelu_0, as the library's GELU kernel does): its code has the micro-GEMM
    ran_template = any(k.kind == "kernel" and "gemm" in (k.code or "").lower() for k in r.compiled.kernels)
    assert ran_library != ran_template, [k.name for k in r.compiled.kernels]
    assert (tuned.winner.name == "_mkl_linear") == ran_library
    if ran_library:  # the library won: the epilogue stays apart, and why
        (trip,) = r.compiled.round_trips
        assert "max-autotune timed 2 candidates" in trip.hint
    else:  # the template won: it fused the epilogue
        assert r.compiled.round_trips == ()


def test_fullgraph_makes_a_graph_break_an_error_at_its_line():
    r = run(RunRequest(str(SAMPLES / "graph_break.py"), None, "cpu", calls=2, compile=CompileOptions(fullgraph=True)))
    assert r.eager is not None and r.compiled is None
    (error,) = r.errors
    # at the break's line, in the sample's file (the README's claim)
    assert error.stage == "compile" and error.line == line_of(SAMPLES / "graph_break.py", "if y.sum() > 0:")
    assert error.file == str(SAMPLES / "graph_break.py")


def test_dynamic_compiles_for_any_size_from_the_first_call():
    """--dynamic: the first compile already has symbolic sizes (the kernel's loop bound is a
    symbol, not the seed's 1,000,000), and its bytes are still counted at the call's size."""
    r = run(RunRequest(str(SAMPLES / "add_relu.py"), None, "cpu", calls=2, compile=CompileOptions(dynamic=True)))
    assert not r.errors, r.errors
    assert r.compile_options.dynamic is True
    (kernel,) = r.compiled.kernels
    assert "1000000" not in kernel.code and "ks0" in kernel.code
    assert (kernel.bytes_read, kernel.bytes_written) == (2 * 1_000_000 * F32, 1_000_000 * F32)
