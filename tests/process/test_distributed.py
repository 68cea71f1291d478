"""--nproc (issue 14): real torch, 2 ranks, gloo on the CPU, no mocks. Each kscope run happens once
per module (fixtures) and its JSON is checked against figures derived by hand from the shapes.

samples/allreduce.py: x is 1,000,000 fp32 (4,000,000 B); `y = (x * 2).relu(); all_reduce(y);
(y + 1).sigmoid()`. Per rank per call: one all_reduce of 4,000,000 B; eager mul, relu, add,
sigmoid each read 4 MB and write 4 MB (16 MB + 16 MB); compiled two generated kernels, the work
before the collective and the work after it, each reading 4 MB and writing 4 MB.

samples/ddp_mlp.py: Linear(128, 256) + Linear(256, 64) under DDP: 128·256 + 256 + 256·64 + 64 =
49,472 fp32 parameters = 197,888 B, under DDP's first bucket (1 MiB, `_DEFAULT_FIRST_BUCKET_BYTES`),
so each backward all-reduces every gradient in one bucket: one all_reduce of 197,888 B.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from support.moments import mark, moment
from support.paths import REPO
from support.rank_claims import RANK_CLAIMS

from kscope.report.codec import report_from_dict, report_to_dict

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
]

ROOT = REPO
MB4 = 4_000_000
DDP_PARAM_BYTES = (128 * 256 + 256 + 256 * 64 + 64) * 4

RAISES = '''
import torch
import torch.distributed as dist


def step(x):
    y = x * 2
    if dist.get_rank() == 1:
        raise ValueError("rank 1 cannot go on")
    dist.all_reduce(y)
    return y


def inputs(device):
    return (torch.ones(1000, device=device),)
'''.lstrip()
HANGS = RAISES.replace(
    '''    if dist.get_rank() == 1:
        raise ValueError("rank 1 cannot go on")
    dist.all_reduce(y)''',
    '''    if dist.get_rank() == 0:
        dist.all_reduce(y)  # rank 1 never joins''',
).replace("import torch\n", (
    "import os\nimport time\nfrom pathlib import Path\n\nimport torch\n\n"
    "if os.environ['RANK'] == '0':  # rank 0 loads the file: its run is under way\n"
    f"    {mark('.loaded')}\n"
), 1)


class Run:
    def __init__(self, args: list[str], timeout: float = 240):
        self.marker = uuid.uuid4().hex
        env = {**os.environ, "KSCOPE_DIST_TEST": self.marker, "PYTHONPATH": str(ROOT)}
        started = time.monotonic()
        self.proc = subprocess.run([sys.executable, "-m", "kscope", *args, "--device", "cpu", "--json"],
                                   capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout)
        self.ended = time.monotonic()
        self.seconds = self.ended - started
        self.data = json.loads(self.proc.stdout)
        self.report = report_from_dict(self.data)


def left_behind(marker: str, within: float = 3.0) -> list[int]:
    """Processes whose environment carries the marker, after waiting `within` s for them to go."""
    deadline = time.monotonic() + within
    while True:
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if f"KSCOPE_DIST_TEST={marker}".encode() in f.read():
                        found.append(int(pid))
            except OSError:
                pass
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


@pytest.fixture(scope="module")
def allreduce(tmp_path_factory) -> Run:
    traces = tmp_path_factory.mktemp("traces")
    run = Run(["samples/allreduce.py", "--nproc", "2", "--trace-dir", str(traces)])
    run.traces = traces
    return run


@pytest.fixture(scope="module")
def ddp() -> Run:
    return Run(["samples/ddp_mlp.py", "--nproc", "2", "--backward"])


def test_allreduce_each_rank_runs_one_all_reduce_of_the_tensor(allreduce):
    assert allreduce.proc.returncode == 0, allreduce.proc.stderr[-3000:]
    ranks = allreduce.data["ranks"]
    assert [r["rank"] for r in ranks] == [0, 1]
    for r in ranks:
        (eager,) = r["eager"]["collectives"]
        (compiled,) = r["compiled"]["collectives"]
        assert (eager["name"], eager["count"], eager["bytes"]) == ("c10d::allreduce_", 1, MB4)
        assert (compiled["name"], compiled["count"], compiled["bytes"]) == ("_c10d_functional::all_reduce_", 1, MB4)
        assert eager["time_us"] > 0 and compiled["time_us"] > 0
        assert eager["wait_us"] is None  # eager's blocking all_reduce waits without an event
        assert compiled["wait_us"] > 0  # _c10d_functional::wait_tensor


def test_allreduce_kernels_and_traffic_leave_the_collective_out(allreduce):
    for r in allreduce.data["ranks"]:
        eager, compiled = r["eager"], r["compiled"]
        assert [k["name"] for k in eager["kernels"]] == ["aten::mul", "aten::relu", "aten::add", "aten::sigmoid"]
        assert (eager["launches"], eager["bytes_read"], eager["bytes_written"]) == (4, 4 * MB4, 4 * MB4)
        names = [k["name"] for k in compiled["kernels"]]
        assert len(names) == 2 and all(n.startswith("cpp_fused_") for n in names), names
        assert (compiled["launches"], compiled["bytes_read"], compiled["bytes_written"]) == (2, 2 * MB4, 2 * MB4)
        assert [(k["bytes_read"], k["bytes_written"]) for k in compiled["kernels"]] == [(MB4, MB4)] * 2
        (c,) = compiled["collectives"]
        assert (c["after"], c["before"]) == (names[0], names[1])  # the fused work before and after it
        assert "mul" in names[0] and "sigmoid" in names[1]
    assert not [n for n in allreduce.data["notes"] if "could not tie" in n]  # the collective's bytes are apart


def test_allreduce_top_level_is_rank_0(allreduce):
    d = allreduce.data
    assert d["schema"] == 16
    assert d["eager"] == d["ranks"][0]["eager"] and d["compiled"] == d["ranks"][0]["compiled"]
    assert d["errors"] == [] and allreduce.report.ok


def test_ranks_round_trip_through_json(allreduce):
    assert json.loads(json.dumps(report_to_dict(report_from_dict(allreduce.data)))) == allreduce.data


def test_folder_of_rank_traces(allreduce, tmp_path):
    # one trace a rank, as a torchrun job writes them: the eager traces each rank saved
    for rank in (0, 1):
        (found,) = (allreduce.traces / f"rank{rank}").glob("*-eager.json.gz")
        shutil.copy(found, tmp_path / f"trace-{1 - rank}.json.gz")  # file order opposite to the ranks
    with gzip.open(tmp_path / "trace-0.json.gz", "rt") as f:
        assert json.load(f)["distributedInfo"]["rank"] == 1
    out = subprocess.run([sys.executable, "-m", "kscope", str(tmp_path), "--json"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    ranks = json.loads(out.stdout)["ranks"]
    assert [(r["rank"], r["rank_from"], Path(r["file"]).name) for r in ranks] == [
        (0, "distributedInfo", "trace-1.json.gz"), (1, "distributedInfo", "trace-0.json.gz")]
    for r in ranks:
        assert r["calls"] == 5 and r["launches"] == 4
        assert [(c["name"], c["count"], c["bytes"]) for c in r["collectives"]] == [("c10d::allreduce_", 1, MB4)]
    table = subprocess.run([sys.executable, "-m", "kscope", str(tmp_path)], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}, cwd=ROOT, timeout=60)
    assert "c10d::allreduce_" in table.stdout and "4.0 MB" in table.stdout


def _claim_holds_on_each_rank(run: Run, sample: str) -> None:
    assert run.proc.returncode == 0 and not run.report.errors, run.proc.stderr[-3000:]
    assert [r.rank for r in run.report.ranks] == [0, 1]
    for rank in run.report.ranks:
        RANK_CLAIMS[sample](rank)


def test_the_allreduce_sample_does_what_its_docstring_says_on_each_rank(allreduce):
    _claim_holds_on_each_rank(allreduce, "allreduce.py")


def test_the_ddp_sample_does_what_its_docstring_says_on_each_rank(ddp):  # its fixture named: one run (conftest)
    _claim_holds_on_each_rank(ddp, "ddp_mlp.py")


def test_ddp_backward_all_reduces_the_gradients_in_one_bucket(ddp):
    assert ddp.proc.returncode == 0, ddp.proc.stderr[-3000:]
    for r in ddp.data["ranks"]:
        for mode in ("eager", "compiled"):
            (c,) = r[mode]["collectives"]
            assert (c["name"], c["count"], c["bytes"], c["phase"]) == ("c10d::allreduce_", 1, DDP_PARAM_BYTES,
                                                                        "backward")
    # torch 2.13 traces nothing of a DDP-wrapped module (docs/distributed.md): kscope says so rather than invent a graph
    assert ddp.data["compiled"]["graphs"] == 0
    assert any("dynamo compiled no graph" in n for n in ddp.data["notes"])


def test_a_rank_that_raises(tmp_path):
    target = tmp_path / "raises.py"
    target.write_text(RAISES)
    run = Run([str(target), "--nproc", "2"])
    assert run.proc.returncode == 1
    first = run.data["errors"][0]  # the rank that failed first leads
    assert (first["rank"], first["type"], first["line"]) == (1, "ValueError", 8)
    assert first["message"] == "rank 1: rank 1 cannot go on" and first["file"] == str(target)
    assert {e["rank"] for e in run.data["errors"]} == {0, 1}
    assert not left_behind(run.marker)


STARTUP_S = 25.0
"""kscope, its worker and two ranks starting before the timeout counts, and their stop: measured
8.3-15.6 s on 2 cores beside other work when the ranks were spawned (docs/distributed.md), less
since they are forked; 25 s for a slower machine."""


def test_a_rank_that_hangs_is_stopped_by_the_timeout(tmp_path):
    # In the parallel phase: both ranks wait in gloo (no CPU) for most of it, and its bound holds
    # beside other work (measured below); one at a time it held the quiet phase ~10 s.
    target = tmp_path / "hangs.py"
    target.write_text(HANGS)
    run = Run([str(target), "--nproc", "2", "--timeout", "8"])
    assert run.proc.returncode == 1
    stopped = {e["rank"]: e for e in run.data["errors"]}
    assert stopped[0]["stage"] == "timeout" and "eager half" in stopped[0]["message"]
    assert stopped[1]["stage"] == "timeout" and "compiled half" in stopped[1]["message"]  # it waits for rank 0
    assert "within 8 s" in stopped[0]["message"]
    assert run.data["ranks"][0]["wall_s"] is None  # rank 0 sent no report: its time is unknown, not 0
    # the timeout counts once every rank has imported torch (docs/distributed.md): 8 s plus the
    # start-up of kscope and two ranks (measured: 16.3-23.6 s in all beside other work, printed)
    since = run.ended - moment(target, ".loaded")
    print(f"--timeout 8 with 2 ranks: kscope exited after {run.seconds:.1f} s, {since:.2f} s after rank 0 loaded the file")
    assert run.seconds < 8 + STARTUP_S
    # The 8 s themselves, from rank 0's side (issue 38: only the total's upper bound was checked): they
    # start as the last rank begins its run, a moment before rank 0 loads the file, and kscope exits
    # at their end: 7.21-7.55 s from the load to the exit measured alone; 2 s either way allowed
    assert 8 - 2 <= since <= 8 + 2, f"{since:.2f} s from rank 0's load of the file to kscope's exit"
    assert not left_behind(run.marker)
