"""Save -> all panes for --backward on samples/train_mlp.py, against the same work done by hand.

Drives the real app headlessly (Pilot, a real LiveSession and worker, backward on) on a temp copy
of the sample. Each save changes the graph (a fresh constant after the GELU: in no cache), so the
forward and the backward graph are compiled anew, as after a real edit. The manual workflow
(benchmarks/manual_workflow_backward.py: profile eager forward + backward, compile, warm up,
profile compiled) runs as a fresh process with a fresh constant too, as a user would run it after
each edit. Also printed: the same forward + backward compiled by plain torch in a warm process (no
kscope), the floor any tool that compiles pays. Goal: the
p50 save -> final report at most 0.35 of the manual workflow's median, as for forward.

    python benchmarks/backward_latency.py [--saves N] [--manual-runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency import Probe, pct, settle_workers, wait_for  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
OP = "h = F.gelu(self.fc1(x))"


def fresh_constant() -> str:
    return f"1.{secrets.randbelow(10**9):09d}"


def manual_s() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "manual_workflow_backward.py"), fresh_constant()],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    return time.perf_counter() - start


FLOOR = """
import secrets, statistics, sys, time
import torch
sys.argv = ["x"]
sys.path.insert(0, {bench!r})
import manual_workflow_backward as m  # noqa: the module runs the workflow once: a warm process
times = []
for _ in range({n}):
    m.SCALE = float(f"1.{{secrets.randbelow(10**9):09d}}")
    torch._dynamo.reset()
    start = time.perf_counter()
    torch.compile(m.mlp)(m.x).sum().backward()
    times.append(time.perf_counter() - start)
print(statistics.median(times))
"""


def compile_floor_s(n: int) -> float:
    """Median seconds plain torch takes, in a warm process, to compile and run the forward and
    backward after an edit: no kscope, no profiler."""
    code = FLOOR.format(bench=str(REPO / "benchmarks"), n=n)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=REPO)
    return float(out.stdout.strip().splitlines()[-1])


async def main(args) -> None:
    from kscope.app.app import KscopeApp
    from kscope.report.request import RunRequest

    tmp = Path(tempfile.mkdtemp(prefix="kscope-bench-"))
    os.environ["KSCOPE_CACHE_DIR"] = str(tmp / "store")
    path = tmp / "train_mlp.py"
    shutil.copy(REPO / "samples" / "train_mlp.py", path)
    base = path.read_text()
    assert base.count(OP) == 1, f"{OP!r} not found once in the sample"

    manual = [manual_s() for _ in range(args.manual_runs)]  # first: nothing of ours running
    floor = compile_floor_s(3)
    app = KscopeApp(RunRequest(str(path), None, "cpu", timeout=120.0, calls=5, backward=True))
    probe = Probe(app)

    async def settle():
        await settle_workers(app)

    finals, eagers, walls = [], [], []
    async with app.run_test(size=(120, 40)):
        await wait_for(lambda: 1 in probe.final, 300)
        await settle()
        report = probe.detail[1][1]
        assert report.backward is not None and not report.errors, report.errors
        header = (f"{datetime.datetime.now():%Y-%m-%d %H:%M} | torch {report.torch_version} | "
                  f"CPU: {report.device_name} ({os.cpu_count()} cores) | load {os.getloadavg()[0]:.2f}")
        for i in range(args.saves + 1):  # the first save warms up, not counted
            before = app.latest_run
            path.write_text(base.replace(OP, f"{OP} * {fresh_constant()}"))
            t0 = time.monotonic()
            await wait_for(lambda: app.latest_run > before and app.latest_run in probe.final, 300)
            rid = app.latest_run
            rep = probe.detail[rid][1]
            assert rep.backward is not None and rep.compiled and rep.compiled.phase("backward"), rep.errors
            if i:
                finals.append(probe.final[rid] - t0)
                eagers.append(probe.eager.get(rid, float("nan")) - t0)
                walls.append(rep.wall_s)
            await settle()
    app.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)

    mm = statistics.median(manual)
    ratio = pct(finals, 50) / mm
    print("kscope live app, CPU, samples/train_mlp.py with --backward (graph-changing saves)")
    print(header)
    print(f"save->eager on screen   p50 {pct(eagers, 50):.2f} s  p90 {pct(eagers, 90):.2f} s  (n={len(eagers)})")
    print(f"save->all panes         p50 {pct(finals, 50):.2f} s  p90 {pct(finals, 90):.2f} s  (n={len(finals)})")
    print(f"  of which worker wall  median {statistics.median(walls):.2f} s")
    print(f"manual workflow, fresh process  median {mm:.2f} s  runs {' '.join(f'{x:.2f}' for x in manual)}")
    print(f"plain torch, warm process: compile + run forward and backward  median {floor:.2f} s"
          f" = {floor / mm:.2f} of the manual workflow")
    print(f"ratio p50 / manual median  {ratio:.2f}  (goal <= 0.35: {'PASS' if ratio <= 0.35 else 'MISS'})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--saves", type=int, default=6)
    parser.add_argument("--manual-runs", type=int, default=3)
    started = time.monotonic()
    asyncio.run(main(parser.parse_args()))
    print(f"(benchmark took {time.monotonic() - started:.0f} s)")
