"""The run's flags as docs/usage.md documents them, each through the command line as a user types it
(`kscope FILE --once --json`, `--markdown`) on real torch and a real worker, asserted on the JSON
docs/json.md documents (or the Markdown). The module's six runs are one fixture (two at a time), and
several tests read each run.

GRAD: `(a + b).relu()` on two fp32 vectors of N elements that require grad. Eager: add reads 2N·4 B and
writes N·4, relu reads and writes N·4: 20 B an element in 2 launches. As written, torch.compile builds
a training forward: one kernel that reads 8N B, writes the output and the 1-byte mask relu's backward
reads (docs/training.md: "1,000 B for 1,000 elements"); under --no-grad, the inference graph: 8N B
read, 4N written, nothing saved for backward."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from support.paths import SAMPLES, kscope_cmd, line_of

pytestmark = pytest.mark.slow

SEED = SAMPLES / "add_relu.py"
BREAKS = SAMPLES / "graph_break.py"
N = 1000
GRAD = f"""\
import torch


def add_relu(a, b):
    return (a + b).relu()


def inputs(device, n={N}):
    return torch.randn(n, device=device, requires_grad=True), torch.randn(n, device=device, requires_grad=True)
"""
FLUSH_BYTES = 256 << 20
"""docs/numbers.md: --cold writes a buffer of twice the largest cache, 256 MB at least, before each timed call: the least it writes."""
CALL_BUDGET_S = 0.3
"""docs/numbers.md: call times, "at most 200 rounds or 0.3 s"."""
CALLS = 3


def runs_of(folder: Path) -> dict[str, list[str]]:
    """Each run's command-line arguments (after `kscope`), by name."""
    grad, traces = folder / "grad.py", folder / "traces"
    cpu = ("--device", "cpu")
    return {  # the longest first
        # sweeps: a budget none of them reaches but the one that tests it
        "static": [SEED, "--once", "--json", *cpu, "--sizes", "100,1000", "--sweep-static", "--sweep-budget", "900"],
        "no_dynamic": [SEED, "--once", "--json", *cpu, "--sizes", "100,1000", "--no-dynamic", "--sweep-budget", "900"],
        # --cold and --no-grad, and how it compiles: a mode, dynamic shapes, an inductor option
        "cold": [grad, "--once", "--json", *cpu, "--cold", "--no-grad", "--mode", "reduce-overhead", "--dynamic",
                 "--option", "cpp.simdlen=1"],
        # the same target as written, warm, static, in another mode, 3 calls profiled and saved
        "warm": [grad, "--once", "--json", *cpu, "--calls", str(CALLS), "--trace-dir", traces, "--no-dynamic",
                 "--mode", "max-autotune-no-cudagraphs"],
        # a sweep its budget stops after the first size, as Markdown (a run of its own costs ~15 s)
        "markdown": [SEED, "--markdown", *cpu, "--sizes", "100,1000", "--sweep-budget", "0.01"],
        "fullgraph": [BREAKS, "--once", "--json", *cpu, "--fullgraph"],
    }


AT_ONCE = 2
"""Runs going at a time: one a core here. (All seven at once, beside other work loading both cores,
none of the workers had imported torch after the 180 s a worker gets to start.)"""


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """Every run of the module, AT_ONCE at a time, each one's exit status, stdout and stderr (and
    its JSON, when it printed JSON)."""
    folder = tmp_path_factory.mktemp("flags")
    (folder / "grad.py").write_text(GRAD)
    todo, running, done = list(runs_of(folder).items()), {}, {}
    started = time.monotonic()
    try:
        while todo or running:
            while todo and len(running) < AT_ONCE:
                name, args = todo.pop(0)
                out, err = open(folder / f"{name}.out", "w+"), open(folder / f"{name}.err", "w+")
                proc = subprocess.Popen([*kscope_cmd(), *map(str, args)], stdout=out, stderr=err, cwd=folder)
                running[name] = (proc, out, err, "--json" in args, time.monotonic())
            for name, (proc, out, err, as_json, began) in list(running.items()):
                if proc.poll() is None:
                    assert time.monotonic() - began < 600, f"kscope {name} still running after 600 s"
                    continue
                del running[name]
                out.seek(0)
                err.seek(0)
                stdout, stderr = out.read(), err.read()
                out.close()
                err.close()
                parsed = None
                if as_json:
                    try:
                        parsed = json.loads(stdout)
                    except ValueError:
                        pass
                done[name] = SimpleNamespace(code=proc.returncode, out=stdout, err=stderr, json=parsed,
                                             took=time.monotonic() - began)
            time.sleep(0.1)
    finally:
        for proc, out, err, _, _ in running.values():
            proc.kill()
            proc.wait()
            out.close()
            err.close()
    took = ", ".join(f"{name} {r.took:.1f} s" for name, r in done.items())
    print(f"the module's {len(done)} kscope runs, {AT_ONCE} at a time: {time.monotonic() - started:.1f} s ({took})")
    return SimpleNamespace(folder=folder, **done)


def report(run) -> dict:
    assert run.json is not None, f"no JSON on stdout (exit {run.code}): {run.err[-2000:]}"
    return run.json


def good(run) -> dict:
    r = report(run)
    assert run.code == 0 and r["errors"] == [], (run.code, r["errors"], run.err[-2000:])
    return r


def only_kernel(mode: dict) -> dict:
    (kernel,) = mode["kernels"]
    return kernel


# --- --no-grad --------------------------------------------------------------------------------------


def test_no_grad_runs_the_inference_graph(ran):
    """--no-grad (docs/usage.md: "run the target under torch.no_grad(): the inference graph"):
    nothing written for a backward, no backward kernel; the same target as written writes relu's
    mask for backward, and kscope's note points at --no-grad."""
    no_grad, as_written = good(ran.cold), good(ran.warm)
    assert (no_grad["no_grad"], as_written["no_grad"]) == (True, False)
    kernel = only_kernel(no_grad["compiled"])
    assert kernel["name"] == "cpp_fused_add_relu_0"
    assert (kernel["bytes_read"], kernel["bytes_written"], kernel["bytes_saved_for_backward"]) == (8 * N, 4 * N, 0)
    assert no_grad["compiled"]["bytes_saved_for_backward"] == 0
    for r in (no_grad, as_written):
        assert set(r["eager"]["phases"]) == set(r["compiled"]["phases"]) == {"forward"}
        assert {k["phase"] for m in ("eager", "compiled") for k in r[m]["kernels"]} == {"forward"}
    assert not [n for n in no_grad["notes"] if "--no-grad" in n]
    training = only_kernel(as_written["compiled"])
    assert "threshold_backward" in training["name"]
    assert (training["bytes_written"], training["bytes_saved_for_backward"]) == (4 * N + N, N)
    (note,) = [n for n in as_written["notes"] if "--no-grad" in n]
    assert note.startswith(f"compiled: the forward writes {N:,} B only for backward to read")


# --- --cold -----------------------------------------------------------------------------------------


def test_cold_writes_a_cache_sized_buffer_between_timed_calls_outside_the_measurement(ran):
    """--cold (docs/numbers.md: a 256 MB buffer written before each timed call, outside the
    measurement). Two writes of 256 MB a round of call timing use up its 0.3 s budget in a few
    rounds, where the warm run of the same target times dozens; yet no median holds a flush (one
    write of 256 MB takes longer than any of them: the figures are the calls' own)."""
    cold, warm = good(ran.cold), good(ran.warm)
    # recorded, and the kernels judged against main memory, since every call starts from it
    assert (cold["cold"], warm["cold"]) == (True, False)
    assert cold["compiled"]["roof"]["level"] == "main memory" and "--cold" in cold["compiled"]["roof"]["why"]
    peak = cold["peak_gbps"] * 1e9  # bytes copied per second, as this worker measured (read + write)
    assert peak > 0
    # less than one flush can take: writing runs no faster than four times the copy's bytes (a copy
    # moves 2 B a byte copied; kept loose, the peak is measured once, maybe when the CPU was busier)
    flush_s = FLUSH_BYTES / (4 * peak)
    cold_rounds, warm_rounds = cold["eager"]["repetitions"]["call"], warm["eager"]["repetitions"]["call"]
    assert cold["compiled"]["repetitions"]["call"] == cold_rounds
    assert 3 <= cold_rounds <= 1 + CALL_BUDGET_S / (2 * flush_s), (cold_rounds, flush_s)
    assert warm_rounds > cold_rounds, (warm_rounds, cold_rounds)
    for mode in ("eager", "compiled"):
        for figure in ("kernel_time_us", "call_time_us"):
            assert 0 < cold[mode][figure] * 1e-6 < flush_s, (mode, figure, cold[mode][figure], flush_s)


# --- --calls ----------------------------------------------------------------------------------------


def test_calls_sets_the_calls_profiled_and_figures_stay_per_call(ran):
    """--calls 3: the eager half's first look profiles 3 calls (its `calls`), and each saved trace
    (--trace-dir) holds 3 calls, whose figures `kscope TRACE` gives per call: 2 launches eager, 1
    compiled, not 6 and 3."""
    warm = good(ran.warm)
    assert warm["eager"]["calls"] == CALLS and warm["eager"]["launches"] == 2
    for mode, launches in (("eager", 2), ("compiled", 1)):
        trace = ran.folder / "traces" / f"grad-add_relu-{mode}.json.gz"
        assert warm["traces"][mode] == str(trace)
        with gzip.open(trace, "rt") as f:
            events = json.load(f)["traceEvents"]
        marks = {e["name"] for e in events if e.get("name", "").startswith("kscope::call#")}
        assert marks == {f"kscope::call#{i}" for i in range(CALLS)}
        read = subprocess.run([*kscope_cmd(), str(trace), "--json"], capture_output=True, text=True, timeout=60)
        assert read.returncode == 0, read.stderr
        figures = json.loads(read.stdout)
        assert (figures["calls"], figures["launches"]) == (CALLS, launches), figures
        assert figures["launches"] == warm[mode]["launches"]


# --- --markdown -------------------------------------------------------------------------------------


def table_rows(markdown: str) -> list[list[str]]:
    """The cells of each GFM table row (split on unescaped |), header and alignment rows left out."""
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]] for line in markdown.splitlines()
            if line.startswith("| ") and not line.startswith(("| ---", "| n |"))]


def test_markdown_on_a_good_run_is_the_report_alone(ran):
    """--markdown (implies --once) on a run that succeeds, here a sweep: stdout is the Report as
    GitHub Markdown and nothing else (exit 0), with the seed's figures at n = 100 (2 → 1 launches,
    20 → 12 bytes an element, docs/sweep.md) and why it stopped."""
    md = ran.markdown
    assert md.code == 0, md.err[-2000:]
    assert md.out.startswith(f"### kscope: `{SEED}:add_relu`\n")  # the file as a path from here (the run's folder)
    assert "#### Size sweep" in md.out
    (row,) = table_rows(md.out)
    assert row[:3] == ["100", "2 → 1", "20 → 12"], row
    assert re.fullmatch(r"[\d.]+ (µs|ms) ±\d+%", row[3]) and re.fullmatch(r"[\d.]+ (µs|ms) ±\d+%", row[4]), row
    assert "Stopped early: n=1e3: would end past the 0.01 s budget" in md.out
    assert not md.out.lstrip().startswith("{") and "Traceback" not in md.out + md.err


# --- how it compiles: --mode, --dynamic / --no-dynamic, --option, --fullgraph ------------------------


def test_mode_is_recorded_and_cuda_graphs_are_said_to_do_nothing_on_the_cpu(ran):
    """--mode (docs/modes.md): the Report records it; reduce-overhead's CUDA graphs "exist only on
    CUDA devices: on the CPU the mode changes nothing", said as such (launches unknown, never 0);
    max-autotune-no-cudagraphs has none to speak of."""
    reduce, autotune = good(ran.cold), good(ran.warm)
    assert reduce["compile_options"]["mode"] == "reduce-overhead"
    graphs = reduce["compiled"]["cuda_graphs"]
    assert graphs["launches"] is None and graphs["kernels"] is None
    assert graphs["skipped"].startswith("CUDA graphs exist only on CUDA devices: on the CPU the mode changes nothing")
    assert any(n.startswith("compiled (reduce-overhead): CUDA graphs skipped") for n in reduce["notes"])
    assert autotune["compile_options"]["mode"] == "max-autotune-no-cudagraphs"
    assert autotune["compiled"]["cuda_graphs"] is None


def kernel_code(r: dict) -> str:
    code = only_kernel(r["compiled"])["code"]
    assert code and 'extern "C"' in code
    return code


def test_dynamic_compiles_for_any_size_and_no_dynamic_for_this_one(ran):
    """--dynamic: torch.compile(dynamic=True), the kernel takes the size as an argument (`ks0`,
    its loop bound); --no-dynamic: dynamic=False, the size written into the kernel."""
    dynamic, static = good(ran.cold), good(ran.warm)
    assert (dynamic["compile_options"]["dynamic"], static["compile_options"]["dynamic"]) == (True, False)
    code = kernel_code(dynamic)
    assert re.search(r"const int64_t ks0\)", code) and re.search(r"x0<static_cast<int64_t>\(ks0\)", code), code
    assert f"{N}L" not in code
    code = kernel_code(static)
    assert "ks0" not in code and f"x0<static_cast<int64_t>({N}L)" in code


def test_no_dynamic_recompiles_for_static_shapes_in_a_sweep(ran):
    """--no-dynamic where it differs from dynamo's default: a size sweep's second size fails the size
    guard and recompiles, for static shapes again (by default: "0/1 (dynamic)", docs/sweep.md)."""
    r = good(ran.no_dynamic)
    assert r["compile_options"]["dynamic"] is False
    first, second = r["sweep"]["points"]
    assert (first["graph"], first["recompiled"]) == ("0/0", "compiled for this size (static shapes)")
    assert second["graph"] == "0/1"
    assert second["recompiled"] == "recompiled: 0/0: tensor 'a' size mismatch at index 0. expected 100, actual 1000"
    assert r["sweep"]["recompiles"] == 1


def test_an_inductor_option_changes_the_generated_kernel(ran):
    """--option cpp.simdlen=1 (an inductor config option, typed as inductor types it): no vector
    ISA, so the kernel is a scalar loop; without it, the same target's kernel loads 16 floats at a time."""
    scalar, vector = good(ran.cold), good(ran.warm)
    assert scalar["compile_options"]["options"] == {"cpp.simdlen": 1}
    assert vector["compile_options"]["options"] == {}
    assert "at::vec::Vectorized" not in kernel_code(scalar) and "x0+=static_cast<int64_t>(1L)" in kernel_code(scalar)
    assert "at::vec::Vectorized<float>::loadu" in kernel_code(vector)


def test_fullgraph_makes_a_graph_break_an_error_at_its_line(ran):
    """--fullgraph (docs/modes.md): "the compile fails with dynamo's error at the line of the break;
    the eager half is still shown"; exit 1."""
    run = ran.fullgraph
    r = report(run)
    assert run.code == 1
    assert r["compile_options"]["fullgraph"] is True
    (error,) = r["errors"]
    assert error["stage"] == "compile"
    assert (error["file"], error["line"]) == (str(BREAKS), line_of(BREAKS, "if y.sum() > 0:"))
    assert error["message"].startswith("Data-dependent branching")
    assert r["compiled"] is None
    assert r["eager"]["launches"] > 0 and r["eager"]["kernels"]


# --- sweeps: --sweep-static, --sweep-budget ---------------------------------------------------------


def test_sweep_static_compiles_each_size_on_its_own(ran):
    """--sweep-static (implies --sweep): each size compiled for its own shape, a fresh graph 0/0
    each time (docs/sweep.md: "the kernel a program with that one shape gets"), never the dynamic
    graph one torch.compile recompiles to."""
    r = good(ran.static)
    sweep = r["sweep"]
    assert sweep["static"] is True and sweep["stopped"] is None
    assert [p["n"] for p in sweep["points"]] == [100, 1000]
    for p in sweep["points"]:
        assert (p["graph"], p["recompiled"]) == ("0/0", "compiled for this size (--sweep-static)"), p
        assert p["compiled"]["kernels"] == ["cpp_fused_add_relu_0"]
        assert (p["compiled"]["bytes_read"], p["compiled"]["bytes_written"]) == (8 * p["n"], 4 * p["n"])
    assert sweep["recompiles"] == 1


def test_sweep_budget_stops_the_sweep_before_a_size_past_it(ran):
    """--sweep-budget 0.01 (docs/sweep.md: stop "before a size that would end past the time budget"):
    the first size always runs, the second is not started, and the Report says why (here the
    Markdown run's); what was measured stands (exit 0). The other sweeps, given 900 s, ran both."""
    md = ran.markdown
    assert md.code == 0, md.err[-2000:]
    assert [row[0] for row in table_rows(md.out)] == ["100"]
    (stopped,) = [line for line in md.out.splitlines() if line.startswith("Stopped early: ")]
    assert re.fullmatch(r"Stopped early: n=1e3: would end past the 0\.01 s budget \(\d+ s so far, about \d+ s more; "
                        r"--sweep-budget\)", stopped), stopped
    for run in (ran.static, ran.no_dynamic):
        sweep = good(run)["sweep"]
        assert sweep["budget_s"] == 900 and sweep["stopped"] is None and len(sweep["points"]) == 2
