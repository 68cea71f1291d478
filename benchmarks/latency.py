"""Latency and stability of the live app on CPU with samples/add_relu.py (1M elements).

Drives the real app headlessly (Pilot, a real LiveSession and worker) on a temp copy of the
sample and prints figures, no assertions: 1. save -> eager half on screen; 2. save -> all on
screen after a graph-changing edit (a fresh constant each time: in no cache) vs the article's
manual workflow as a fresh process, and save -> inductor's plan on screen (issue 26) beside it; 3. `r` -> final report; 4. event-loop lag while runs are in
flight; 5. many saves in a row: worker RSS growth, first vs last run times; 6. a project of two
files: a save of the imported model.py against a save of the target bench.py, in turns, in one
app (re-importing the user's modules must not re-import torch or any library); 7. save -> plan
and save -> final on the largest sample, samples/train_step.py (forward, backward and AdamW
graphs), with inductor's caches off so that every save compiles every graph anew.

"On screen" = the app has drawn that run's report, its last stage too (app.staged_draw): the
script wraps KscopeApp._show/_finish on the instance and timestamps the drawing's end.

    python benchmarks/latency.py [--quick] [--project-only | --plan-only]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import math
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
READ_S = 0.6  # > kscope.app.session.STORM_WINDOW_S
OP = "(a + b).relu()"


def pct(xs: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    return sorted(xs)[max(0, math.ceil(p / 100 * len(xs)) - 1)]


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def manual_workflow_s() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "manual_workflow.py")], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    return time.perf_counter() - start


class Probe:
    """When each run's eager half and final report reached the panes, by run id."""

    def __init__(self, app):
        self.eager: dict[int, float] = {}
        self.plan: dict[int, float] = {}  # the first plan of the compiled half (issue 26)
        self.final: dict[int, float] = {}
        self.detail: dict[int, tuple[float | None, object]] = {}  # run id -> (run started, report)
        show, finish = app._show, app._finish

        def _show(report, *, partial, then=None):
            run = app.latest_run

            def drawn():  # the report's last stage is on screen (app.staged_draw): then it is shown
                now = time.monotonic()
                if partial:
                    self.eager.setdefault(run, now)
                    if report.plan is not None:
                        self.plan.setdefault(run, now)
                else:
                    self.final[run] = now
                if then is not None:
                    then()

            show(report, partial=partial, then=drawn)

        def _finish(report, at):
            started, run = app.run_started, app.latest_run  # the worker got the request (session's monotonic clock)
            finish(report, at)
            self.detail[run] = (started, report)
            if report.errors and report.eager is None:  # drawn in one stage, not through _show
                self.final[run] = time.monotonic()

        app._show, app._finish = _show, _finish  # the handler calls self._show: instance attrs win


# Polls use asyncio.sleep, not pilot.pause: the app runs in this same loop either way, and
# pilot.pause walks every widget and forces a screen update on each call (~50% more main-thread
# CPU over this benchmark), which item 4 would then count as the app's own lag.
async def wait_for(cond, timeout=180.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met in time")
        await asyncio.sleep(0.01)


async def settle_workers(app) -> None:
    """Wait until no worker (the spare warming up, say) burns CPU, so runs don't compete."""
    while True:
        pids = app.session.worker_pids()
        before = {p: cpu_s(p) for p in pids}
        await asyncio.sleep(0.3)
        if all(cpu_s(p) - before[p] < 0.03 for p in pids if p in app.session.worker_pids()):
            return


class LagMonitor:
    """A task in the app's event loop that sleeps 10 ms over and over and notes how late it wakes."""

    def __init__(self):
        self.phase: str | None = None
        self.samples: dict[str, list[float]] = {}

    async def loop(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(0.01)
            late = time.perf_counter() - start - 0.01
            if self.phase:
                self.samples.setdefault(self.phase, []).append(late)


async def main(args) -> tuple[str, list[tuple[str, str, str, str]]]:
    from kscope.app.app import KscopeApp
    from kscope.report.request import RunRequest

    tmp = Path(tempfile.mkdtemp(prefix="kscope-bench-"))
    os.environ["KSCOPE_CACHE_DIR"] = str(tmp / "store")  # the worker inherits it: user's store untouched
    path = tmp / "add_relu.py"
    shutil.copy(REPO / "samples" / "add_relu.py", path)
    base = path.read_text()
    assert base.count(OP) == 1, f"{OP!r} not found once in the sample"
    with_const = lambda c: base.replace(OP, f"{OP} * {c}")  # noqa: E731
    commented = lambda i: base + f"# kscope bench edit {i}\n"  # noqa: E731

    app = KscopeApp(RunRequest(str(path), None, "cpu", timeout=60.0, calls=5))
    probe, lag = Probe(app), LagMonitor()
    parts: list[tuple] = []  # per save: (save -> run start, worker wall, first compiled call, fresh compile?)
    extra_runs = 0  # runs beyond one per save or key press (a watcher firing twice would show here)
    last_final = [float("-inf")]  # when the last final report reached the screen
    planned: list[float | None] = []  # per save: save -> plan on screen (None: no plan, a cache hit)

    async def settle():
        await settle_workers(app)

    async def trigger(act) -> tuple[int, float]:
        """Do `act` (a save or a key press); wait for the final report of the run it started.
        Saves come at least READ_S apart, as when a person reads the result before the next one:
        saves closer together than the session's storm window are coalesced by design."""
        nonlocal extra_runs
        await asyncio.sleep(max(0.0, READ_S - (time.monotonic() - last_final[0])))
        before = app.latest_run
        t0 = await act()
        await wait_for(lambda: app.latest_run > before and app.latest_run in probe.final)
        extra_runs += app.latest_run - before - 1
        last_final[0] = time.monotonic()
        return app.latest_run, t0

    async def save(text) -> tuple[float, float]:
        """(save -> eager on screen, save -> final on screen) in seconds; save -> plan on screen
        goes in `planned`."""
        async def write():
            path.write_text(text)
            return time.monotonic()  # the write is complete: the clock starts here

        rid, t0 = await trigger(write)
        started, rep = probe.detail[rid]
        c = rep.compiled
        parts.append((started - t0 if started else float("nan"), rep.wall_s,
                      c.compile_s if c else float("nan"), bool(c) and c.traffic_source == "inductor"))
        await asyncio.sleep(0.05)  # a short settle between saves
        planned.append(probe.plan[rid] - t0 if rid in probe.plan else None)
        return probe.eager.get(rid, float("nan")) - t0, probe.final[rid] - t0

    manual = [manual_workflow_s() for _ in range(args.manual_runs)]  # first: nothing of ours running
    async with app.run_test(size=(120, 40)) as pilot:
        lag_task = asyncio.get_running_loop().create_task(lag.loop())
        await wait_for(lambda: 1 in probe.final)  # startup: torch import, warm-up, first run
        await settle()  # the spare worker, spawned after the first report, warms up
        first_pid = app.session.worker_pids()[0]  # the current worker
        first_rss = rss_mb(first_pid)
        report = probe.detail[1][1]
        header = (f"{datetime.datetime.now():%Y-%m-%d %H:%M} | torch {report.torch_version} | "
                  f"CPU: {report.device_name} ({os.cpu_count()} cores) | load {os.getloadavg()[0]:.2f}")
        for i in range(2):  # warm-up saves, not counted
            await save(commented(i))

        # 1. Saves that keep the graph: alternate a trailing comment.
        lag.phase = "same graph"
        same = [await save(commented(i % 2)) for i in range(args.same)]
        # 1b, 2, 4. Graph-changing saves: a fresh random constant each time, in no cache anywhere.
        lag.phase, fresh = "new graph", []
        del parts[:], planned[:]
        for _ in range(args.fresh):
            fresh.append(await save(with_const(f"1.{secrets.randbelow(10**9):09d}")))
        fresh_parts, fresh_plans, lag.phase = parts[:], planned[:], None
        # 3. `r` with nothing changed.
        await settle()

        async def press():
            t0 = time.monotonic()
            await pilot.press("r")
            return t0

        rerun = []
        for _ in range(args.reruns):
            rid, t0 = await trigger(press)
            rerun.append(probe.final[rid] - t0)
            await asyncio.sleep(0.05)
        # 5. Many saves in a row over a small pool (same graph, new graph, back): caches warm.
        pool = [base, with_const(2), commented(0)]
        lag.phase, many = "many saves", []
        for i in range(args.saves):
            many.append((await save(pool[i % len(pool)]))[1])
            if i == 0:
                pid0 = app.session.worker_pids()[0]  # the current worker
                rss0 = rss_mb(pid0)
        pid1, runs = app.session.worker_pids()[0], app.latest_run
        rss1 = rss_mb(pid1)
        lag.phase = None
        lag_task.cancel()
    app.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)

    # --- the table -------------------------------------------------------------------------------
    rows = []

    def row(name, value, goal="-", ok=None):
        rows.append((name, value, goal, "" if ok is None else ("PASS" if ok else "MISS")))

    def p50_90(xs, digits=2):
        return f"p50 {pct(xs, 50):.{digits}f} s  p90 {pct(xs, 90):.{digits}f} s"

    s_eager, f_eager, f_final = [e for e, _ in same], [e for e, _ in fresh], [f for _, f in fresh]
    row(f"1  save->eager, same graph (n={len(same)})", p50_90(s_eager))
    row(f"1  save->eager, new graph (n={len(fresh)})", p50_90(f_eager))
    row(f"   save->final, same graph (n={len(same)})", p50_90([f for _, f in same]))
    row(f"2  save->final, new graph (n={len(fresh)})", p50_90(f_final))
    plan_row(row, fresh_plans, f_final, "new graph")
    mm = statistics.median(manual)
    row(f"   manual workflow, fresh process (n={len(manual)})",
        f"median {mm:.2f} s  runs {' '.join(f'{x:.2f}' for x in manual)}")
    ratio = pct(f_final, 50) / mm
    row("2  new-graph p50 / manual median", f"{ratio:.2f}", "<= 0.35", ratio <= 0.35)
    row(f"3  r, nothing changed -> final (n={len(rerun)})", p50_90(rerun, 3), "p50 <= 0.25 s",
        pct(rerun, 50) <= 0.25)
    for phase, samples in lag.samples.items():  # the goal is for graph-changing runs; others for info
        ms, goal = [x * 1000 for x in samples], phase == "new graph"
        row(f"4  event-loop lag, {phase} runs", f"max {max(ms):.1f} ms  p99 {pct(ms, 99):.1f} ms",
            "max <= 50 ms" if goal else "-", max(ms) <= 50 if goal else None)
    row(f"5  worker RSS over the {len(many)} saves", f"{rss0:.0f} -> {rss1:.0f} MB (+{rss1 - rss0:.0f})"
        + ("" if pid0 == pid1 else " [worker replaced]"), "<= +150 MB", rss1 - rss0 <= 150)
    # The same since the app's first run: the earlier phases grow the worker too.
    row(f"5  worker RSS since the first run ({runs} runs)", f"{first_rss:.0f} -> {rss1:.0f} MB "
        f"(+{rss1 - first_rss:.0f})" + ("" if first_pid == pid1 else " [worker replaced]"), "<= +150 MB",
        rss1 - first_rss <= 150)
    first, last = statistics.median(many[:10]), statistics.median(many[-10:])
    row("5  save->final, first 10 vs last 10, medians", f"{first:.2f} s -> {last:.2f} s ({last / first - 1:+.0%})",
        "<= +10%", last <= first * 1.10)
    # Where a new-graph run's time goes (medians): save -> worker asked (watcher debounce, message
    # hops, session thread), the worker's own wall time, and its first compiled call (the compile).
    med = [statistics.median(p[k] for p in fresh_parts) for k in range(3)]
    row("   new graph: save->run start / worker wall / compile", f"{med[0]:.2f} / {med[1]:.2f} / {med[2]:.2f} s")
    row("   new graph: fresh compiles (not cache hits)", f"{sum(p[3] for p in fresh_parts)}/{len(fresh_parts)}")
    row("   extra runs / worker restarts (all phases)", f"{extra_runs} / {app.session.restarts}")
    return header, rows


def plan_row(row, plans: list[float | None], finals: list[float], what: str) -> None:
    """2 and 7: save -> plan on screen beside save -> final, and their ratio (issue 26's goal)."""
    got = [p for p in plans if p is not None]
    if not got:
        row(f"   save->plan, {what}", "no plan reached the screen", "<= 0.5 of final", False)
        return
    row(f"   save->plan, {what} (n={len(got)} of {len(plans)})", f"p50 {pct(got, 50):.2f} s  p90 {pct(got, 90):.2f} s")
    ratio = pct(got, 50) / pct(finals, 50)
    row(f"   save->plan / save->final, {what}, p50s", f"{ratio:.2f}", "<= 0.5", ratio <= 0.5)


async def plan_on_largest_sample(saves: int) -> list[tuple[str, str, str, str]]:
    """7. save -> plan and save -> final on samples/train_step.py, inductor's caches off (the
    worker inherits the environment): every save (a trailing comment) compiles every graph anew."""
    from kscope.app.app import KscopeApp
    from kscope.report.request import RunRequest

    tmp = Path(tempfile.mkdtemp(prefix="kscope-bench-plan-"))
    saved_env = {k: os.environ.get(k) for k in ("KSCOPE_CACHE_DIR", "TORCHINDUCTOR_FX_GRAPH_CACHE",
                                                "TORCHINDUCTOR_AUTOGRAD_CACHE")}
    os.environ.update(KSCOPE_CACHE_DIR=str(tmp / "store"), TORCHINDUCTOR_FX_GRAPH_CACHE="0",
                      TORCHINDUCTOR_AUTOGRAD_CACHE="0")
    path = tmp / "train_step.py"
    shutil.copy(REPO / "samples" / "train_step.py", path)
    base = path.read_text()
    app = KscopeApp(RunRequest(str(path), None, "cpu", timeout=120.0, calls=5))
    probe, plans, finals = Probe(app), [], []
    try:
        async with app.run_test(size=(120, 40)):
            await wait_for(lambda: 1 in probe.final)
            await settle_workers(app)
            for i in range(saves + 1):  # the first warms up, not counted
                await asyncio.sleep(READ_S)
                before = app.latest_run
                path.write_text(base + f"# kscope bench edit {i}\n")
                t0 = time.monotonic()
                await wait_for(lambda: app.latest_run > before and app.latest_run in probe.final)
                rid = app.latest_run
                if i:
                    plans.append(probe.plan[rid] - t0 if rid in probe.plan else None)
                    finals.append(probe.final[rid] - t0)
                await settle_workers(app)
        app.shutdown()
    finally:
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(tmp, ignore_errors=True)
    rows: list[tuple[str, str, str, str]] = []

    def row(name, value, goal="-", ok=None):
        rows.append((name, value, goal, "" if ok is None else ("PASS" if ok else "MISS")))

    row(f"7  save->final, train_step.py, caches off (n={len(finals)})",
        f"p50 {pct(finals, 50):.2f} s  p90 {pct(finals, 90):.2f} s")
    plan_row(row, plans, finals, "train_step.py")
    return rows


PROJECT_BENCH = """\
import torch
from model import block

def run(a, b):
    return block(a, b)

def inputs(device, n=1_000_000):
    return torch.randn(n, device=device), torch.randn(n, device=device)
"""
PROJECT_MODEL = "import torch\n\n\ndef block(a, b):\n    return (a + b).relu()\n"


async def imported_vs_target(saves: int) -> list[tuple[str, str, str, str]]:
    """6. save -> final on screen for a save of model.py (imported) and of bench.py (the target),
    in turns, each a trailing comment (the same graph), in one app on one worker."""
    from kscope.app.app import KscopeApp
    from kscope.report.request import RunRequest

    tmp = Path(tempfile.mkdtemp(prefix="kscope-bench-project-"))
    os.environ["KSCOPE_CACHE_DIR"] = str(tmp / "store")
    files = {"bench.py": PROJECT_BENCH, "model.py": PROJECT_MODEL}
    for name, text in files.items():
        (tmp / name).write_text(text)
    app = KscopeApp(RunRequest(str(tmp / "bench.py"), None, "cpu", timeout=60.0, calls=5))
    probe = Probe(app)
    times: dict[str, list[float]] = {"bench.py": [], "model.py": []}
    async with app.run_test(size=(120, 40)):
        await wait_for(lambda: 1 in probe.final)
        await settle_workers(app)
        for i in range(2 * saves + 2):  # the first two (one of each) warm up, not counted
            name = ("bench.py", "model.py")[i % 2]
            await asyncio.sleep(READ_S)
            before = app.latest_run
            (tmp / name).write_text(files[name] + f"# kscope bench edit {i}\n")
            t0 = time.monotonic()
            await wait_for(lambda: app.latest_run > before and app.latest_run in probe.final)
            if i >= 2:
                times[name].append(probe.final[app.latest_run] - t0)
    app.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)
    target, imported = (statistics.median(times[n]) for n in ("bench.py", "model.py"))
    return [
        (f"6  save->final, the target bench.py (n={saves})", f"median {target:.3f} s", "-", ""),
        (f"6  save->final, the imported model.py (n={saves})", f"median {imported:.3f} s", "-", ""),
        ("6  imported / target", f"{imported / target:.2f}", "<= 1.10", "PASS" if imported <= 1.10 * target else "MISS"),
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer saves: about 30 s instead of 1 min")
    parser.add_argument("--project-only", action="store_true", help="only item 6 (a project of two files)")
    parser.add_argument("--plan-only", action="store_true", help="only item 7 (the plan on the largest sample)")
    args = parser.parse_args()
    q = args.quick
    args.same, args.fresh, args.reruns = (8, 4, 5) if q else (15, 8, 10)
    args.saves, args.manual_runs = (20, 1) if q else (100, 3)
    started = time.monotonic()
    if args.project_only or args.plan_only:
        header = f"{datetime.datetime.now():%Y-%m-%d %H:%M} | {os.cpu_count()} cores | load {os.getloadavg()[0]:.2f}"
        rows = asyncio.run(imported_vs_target(6 if q else 12) if args.project_only else plan_on_largest_sample(3 if q else 6))
    else:
        header, rows = asyncio.run(main(args))
        rows += asyncio.run(imported_vs_target(6 if q else 12))
        rows += asyncio.run(plan_on_largest_sample(3 if q else 6))
    print(f"kscope live app, CPU, samples/add_relu.py (1M elements){' [--quick]' if q else ''}")
    print(header)
    width = max(len(r[0]) for r in rows), max(len(r[1]) for r in rows), max(len(r[2]) for r in rows)
    for name, value, goal, verdict in rows:
        print(f"{name:<{width[0]}}  {value:<{width[1]}}  {goal:<{width[2]}}  {verdict}".rstrip())
    print(f"(benchmark took {time.monotonic() - started:.0f} s)")
