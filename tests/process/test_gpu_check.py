"""benchmarks/gpu_check.sh, the script the first GPU lent to this work will run, run here on the CPU
(`--device cpu --smoke`: every step once, on the fewest runs) so that it cannot rot: its exit status,
its header, one Report a line for each run it says it made with the seed's figures derived by hand,
the --nproc and modes Reports, and the sweep's rows and plot. Also that it never masks an error as
something else: no CUDA device is said as such, a missing plotext is said, a broken input fails."""

from __future__ import annotations

import datetime
import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import REPO

SCRIPT = REPO / "benchmarks" / "gpu_check.sh"
REPORTER = REPO / "benchmarks" / "gpu_check_report.py"

pytestmark = pytest.mark.slow

N, F32 = 1_000_000, 4  # samples/add_relu.py's inputs: two vectors of 10⁶ floats


def script(*args, env=None, timeout=300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHON": sys.executable, **(env or {})}
    return subprocess.run(["bash", str(SCRIPT), *args], cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu-check")
    started = datetime.datetime.now(datetime.timezone.utc)
    proc = script("--device", "cpu", "--smoke", str(out))
    assert proc.returncode == 0, f"gpu_check.sh exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    (header,) = [p for p in out.glob("*.txt") if not p.name.endswith("-sweep-plot.txt")]
    return out, header.with_suffix(""), proc, started


def reports(path: Path) -> list[dict]:
    lines = path.read_text().splitlines()
    assert lines and all(line.startswith("{") for line in lines), lines[:1]
    return [json.loads(line) for line in lines]


def runs(stderr: str) -> list[list[str]]:
    """The kscope runs the script said it made ("== samples/x.py --nproc 1"), in order."""
    return [line[3:].split() for line in stderr.splitlines() if line.startswith("== samples/")]


def test_the_header_has_the_date_the_device_and_torch(smoke):
    out, base, _, started = smoke
    head = base.with_suffix(".txt").read_text().splitlines()
    date = datetime.datetime.strptime(head[0], "date %Y-%m-%d %H:%M UTC").replace(tzinfo=datetime.timezone.utc)
    assert started - datetime.timedelta(minutes=1) <= date <= datetime.datetime.now(datetime.timezone.utc), head[0]
    assert re.fullmatch(r"device cpu: \S.*", head[1]), head[1]
    assert head[2] == f"torch {importlib.metadata.version('torch')}"
    assert base.name.startswith(f"{date:%Y-%m-%d}-")


def test_one_report_a_line_for_each_sample_it_ran_with_the_seeds_figures(smoke):
    out, base, proc, _ = smoke
    said = [r[0] for r in runs(proc.stderr) if len(r) == 1]  # the samples step: a file and no flags
    assert said == ["samples/add_relu.py"]
    skipped = set(re.findall(r"^skipped: (samples/\S+) \(--smoke: the seed alone\)$", proc.stderr, re.M))
    everyone = {f"samples/{p.name}" for p in (REPO / "samples").glob("*.py") if "torch.distributed" not in p.read_text()}
    assert skipped | set(said) == everyone and not skipped & set(said)  # each sample run or said skipped
    (seed,) = reports(Path(f"{base}.jsonl"))
    assert seed["file"].endswith("samples/add_relu.py") and seed["device"] == "cpu" and seed["errors"] == []
    e, c = seed["eager"], seed["compiled"]
    # eager: add reads a and b, writes h; relu reads h, writes out: 2 launches, 5 arrays of n floats
    assert (e["launches"], e["bytes_read"] + e["bytes_written"]) == (2, 5 * N * F32)
    # compiled: one fused kernel reads a and b, writes out
    assert (c["launches"], [k["name"] for k in c["kernels"]]) == (1, ["cpp_fused_add_relu_0"])
    assert c["bytes_read"] + c["bytes_written"] == 3 * N * F32
    text = base.with_suffix(".txt").read_text()
    assert (f"add_relu.py: eager 2 launches {5 * N * F32} B; compiled 1 launches {3 * N * F32} B "
            "['cpp_fused_add_relu_0']; errors []") in text
    # the memory line: the seed's peaks (two arrays eagerly, one compiled); no allocator peak on the CPU
    assert f"  memory: peak {2 * N * F32} B saved 0 B -> peak {N * F32} B saved 0 B" in text
    # the roofs line: every level, main memory last; each mode judged by its working set (4n, 3n floats)
    (roofs,) = [line for line in text.splitlines() if line.startswith("  roofs: ")]
    levels = roofs.split("; judged: ")[0].removeprefix("  roofs: ").split(" | ")
    assert len(levels) == len(seed["roofs"]) and levels[-1].startswith("main memory "), levels
    assert f"eager {e['roof']['level']} (working set {4 * N * F32} B: " in roofs
    assert f"compiled {c['roof']['level']} (working set {3 * N * F32} B: " in roofs


def test_the_worker_start_the_ranks_and_the_modes_ran(smoke):
    out, base, proc, _ = smoke
    text = base.with_suffix(".txt").read_text()
    for step in ("1. fresh worker", "2. fork server's first worker", "3. each further forked worker",
                 "4. seed run on cpu in a fresh worker", "4. seed run on cpu in a forked worker"):
        assert step in text, text
    (ranks,) = reports(Path(f"{base}-nproc1.jsonl"))
    assert ranks["file"].endswith("samples/allreduce.py") and ranks["errors"] == []
    assert [r["rank"] for r in ranks["ranks"]] == [0]
    assert [c["count"] for c in ranks["ranks"][0]["eager"]["collectives"]] == [1]  # one all-reduce a call
    (mode,) = reports(Path(f"{base}-modes.jsonl"))
    assert mode["compile_options"]["mode"] == "max-autotune" and mode["errors"] == []
    assert "only on CUDA" in mode["compiled"]["cuda_graphs"]["skipped"]  # said, on the CPU
    assert "allreduce.py --nproc 1 rank 0 compiled: launches" in text
    assert "add_relu.py max-autotune: launches 1 " in text


def test_the_sweeps_rows_and_plot(smoke):
    out, base, proc, _ = smoke
    plot = Path(f"{base}-sweep-plot.txt").read_text()
    rows = [line for line in plot.splitlines() if line.startswith("n=")]
    assert [row.split()[0:2] for row in rows] == [["n=", "100"], ["n=", "1e4"]], plot
    for row in rows:  # the seed at every size: 2 launches -> 1, 20 -> 12 bytes an element
        assert "launches 2 -> 1" in row and "B/n 20 -> 12" in row and "cpp_fused_add_relu_0" in row, row
    assert "wall time per call" in plot and "no plot" not in plot  # plotext is kscope's dependency


def test_a_missing_plotext_is_said_and_the_rows_kept(smoke, monkeypatch, capsys):
    out, base, _, _ = smoke
    spec = importlib.util.spec_from_file_location("gpu_check_report", REPORTER)
    reporter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reporter)
    monkeypatch.setitem(sys.modules, "plotext", None)  # find_spec answers None, as where it is not installed
    reporter.sweep(f"{base}-sweep.json")
    said = capsys.readouterr()
    assert reporter.NO_PLOTEXT in said.out and reporter.NO_PLOTEXT in said.err
    assert len([line for line in said.out.splitlines() if line.startswith("n=")]) == 2


def test_a_broken_input_fails_with_its_traceback(smoke, tmp_path):
    out, base, _, _ = smoke
    broken = tmp_path / "sweep.json"
    broken.write_text(Path(f"{base}-sweep.json").read_text()[:-40])  # cut short, as a killed run leaves it
    proc = subprocess.run([sys.executable, str(REPORTER), "sweep", str(broken)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode != 0 and "Traceback" in proc.stderr and "JSONDecodeError" in proc.stderr, proc.stderr
    assert proc.stdout == ""


def test_no_cuda_device_is_said_and_stops_the_script(tmp_path):
    proc = script("--device", "cuda", str(tmp_path), env={"CUDA_VISIBLE_DEVICES": ""}, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "no CUDA device" in proc.stderr and "--device cpu" in proc.stderr, proc.stderr
    assert "== samples/" not in proc.stderr and list(tmp_path.iterdir()) == []


def test_a_wrong_argument_is_an_error(tmp_path):
    for args in (["--device", "tpu"], ["--frobnicate"], [str(tmp_path), str(tmp_path)]):
        proc = script(*args, timeout=30)
        assert proc.returncode == 2 and proc.stderr, (args, proc.stderr)
