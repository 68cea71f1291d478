"""Soak test of the live app: 200 saves cycling through good and broken versions of a sample.

Drives the real app headlessly (Pilot, the default LiveSession, real worker processes on the CPU)
on a temp copy of samples/add_relu.py. Each save is written to disk like an editor does, then the
script waits for that save's final report on screen and checks the screen against what was
saved:

- a good version (one of four ops): no error banner, not STALE, the eager table shows the op's
  launch count at the line the op is on in *this* save (every save moves it), and the compiled
  table shows the fused kernel of that op;
- a broken one (syntax error, raise, failing import, endless loop past --timeout, os._exit,
  segfault): the banner names the stage, `target.py:LINE` where there is a line, and the cause,
  the status line says STALE, and the last good kernels are still on screen.

It reports crashes of the app (goal 0), saves whose screen did not match (goal 0), worker
restarts, RSS growth of the app and of the worker, the event loop's worst stall, and timings.

    python benchmarks/soak.py            # 200 saves (~4 min on 2 cores)
    python benchmarks/soak.py --quick    # 40 saves (~1 min)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "samples" / "add_relu.py"
OP = "return (a + b).relu()"


@dataclass(frozen=True)
class Variant:
    name: str
    code: str  # replaces OP
    imports: str = ""
    good: bool = False
    eager_launches: int = 0  # good: launches per call
    kernel: str = ""  # good: the fused kernel compiled
    banner: tuple[str, ...] = ()  # broken: texts the banner must show
    line_of: str | None = None  # broken: the banner names target.py:<line of this text>


GOOD = [
    Variant("relu", OP, good=True, eager_launches=2, kernel="cpp_fused_add_relu_0"),
    Variant("relu*2", OP + " * 2", good=True, eager_launches=3, kernel="cpp_fused_add_mul_relu_0"),
    Variant("sigmoid", "return (a - b).sigmoid()", good=True, eager_launches=2, kernel="cpp_fused_sigmoid_sub_0"),
    Variant("tanh", "return (a * b).tanh()", good=True, eager_launches=2, kernel="cpp_fused_mul_tanh_0"),
]
BROKEN = [
    Variant("syntax error", "return (a + b).relu( +", banner=("load", "SyntaxError"), line_of="relu( +"),
    Variant("raise", "y = a + b\n    raise ValueError('soak')", banner=("eager", "ValueError: soak"),
            line_of="raise ValueError"),
    Variant("endless loop", "while True:\n        a = a + 1", banner=("timeout", "stopped after")),
    Variant("import error", OP, imports="kscope_soak_missing", banner=("load", "ModuleNotFoundError"),
            line_of="import kscope_soak_missing"),
    Variant("os._exit", "os._exit(3)", imports="os", banner=("crash", "exited with status 3")),
    Variant("segfault", "ctypes.string_at(0)", imports="ctypes", banner=("crash", "SIGSEGV")),
]
CYCLE = [v for pair in zip(GOOD * 2, BROKEN) for v in pair]  # good, broken, good, broken, ...


def source(base: str, variant: Variant, shift: int) -> str:
    """The sample with `shift` blank lines above the target (every save moves the op's line)."""
    src = base.replace(OP, variant.code).replace("def add_relu", "\n" * shift + "def add_relu")
    if variant.imports:
        src = src.replace("import torch\n", f"import {variant.imports}\nimport torch\n")
    return src


def line_in(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024
    except (OSError, StopIteration):
        return None


class Soak:
    def __init__(self, args):
        self.args = args
        self.tmp = Path(tempfile.mkdtemp(prefix="kscope-soak-"))
        os.environ["KSCOPE_CACHE_DIR"] = str(self.tmp / "store")  # the workers inherit it
        self.folder = self.tmp / "work"
        self.folder.mkdir()
        self.path = self.folder / "add_relu.py"
        shutil.copy(SAMPLE, self.path)
        self.base = self.path.read_text()
        assert self.base.count(OP) == 1, f"{OP!r} not found once in {SAMPLE}"
        self.saves = 0
        self.crashes: list[str] = []
        self.mismatches: list[str] = []
        self.restarts = 0
        self.latency: dict[str, list[float]] = {}
        self.lags: list[float] = []
        self.rss: dict[str, list[tuple[int, float]]] = {"app": [], "worker": []}  # (save, MB)
        self.per_worker: dict[int, list[tuple[int, float]]] = {}  # pid -> (save, MB), each worker's life
        self.pids: set[int] = set()
        self.runs = 0

    # --- one app, as many saves as it lasts -------------------------------------------------------

    async def run_app(self) -> None:
        from kscope.app.app import KscopeApp
        from kscope.report.request import RunRequest

        self.path.write_text(self.base)
        app = KscopeApp(RunRequest(str(self.path), None, "cpu", timeout=self.args.timeout, calls=3))
        finished: dict[int, object] = {}
        finish = app._finish

        def _finish(report, at):  # the app's handler calls self._finish: the instance attribute wins
            finish(report, at)
            finished[app.latest_run] = report

        app._finish = _finish
        emit = app.session.emit

        def count(ev):
            self.runs += ev.kind == "running"
            emit(ev)

        app.session.emit = count

        async def until(cond, timeout):
            deadline = time.monotonic() + timeout
            while not cond():
                if not app.is_running:
                    raise RuntimeError("the app stopped")
                if time.monotonic() > deadline:
                    return False
                self.pids.update(app.session.worker_pids())
                await asyncio.sleep(0.02)
            return True

        async def lag_monitor():
            while True:
                start = time.perf_counter()
                await asyncio.sleep(0.01)
                self.lags.append(time.perf_counter() - start - 0.01)

        try:
            async with app.run_test(size=(120, 40)):
                if not await until(lambda: app.latest_run in finished, 180):
                    raise RuntimeError("no first report in 180 s")
                last_good = finished[app.latest_run]
                monitor = asyncio.create_task(lag_monitor())
                self.sample_rss(app)
                while self.saves < self.args.saves:
                    i = self.saves
                    variant = CYCLE[i % len(CYCLE)]
                    text = source(self.base, variant, shift=i % 7)
                    before = app.latest_run
                    started = time.monotonic()
                    self.path.write_text(text)
                    self.saves += 1
                    ok = await until(lambda: app.latest_run > before, 10) and await until(
                        lambda: app.latest_run in finished, self.args.timeout + 120
                    )
                    self.latency.setdefault(variant.name, []).append(time.monotonic() - started)
                    if not ok:
                        self.mismatches.append(f"save {i + 1} ({variant.name}): no report on screen")
                        continue
                    problem = self.check(app, variant, text, finished[app.latest_run], last_good)
                    if problem:
                        self.mismatches.append(f"save {i + 1} ({variant.name}): {problem}")
                    if variant.good and not problem:
                        last_good = finished[app.latest_run]
                        self.sample_worker(app)  # warm, and it has just run
                    if (i + 1) % 10 == 0:
                        self.sample_rss(app)
                        print(f"  {i + 1:4d} saves  {len(self.mismatches)} mismatches  "
                              f"{self.restarts + app.session.restarts} restarts", flush=True)
                monitor.cancel()
                self.pids.update(app.session.worker_pids())
        finally:
            self.restarts += app.session.restarts
            app.shutdown()

    def sample_rss(self, app) -> None:
        self.rss["app"].append((self.saves, rss_mb(os.getpid())))
        pids = app.session.worker_pids()
        if pids and (mb := rss_mb(pids[0])) is not None:
            self.rss["worker"].append((self.saves, mb))

    def sample_worker(self, app) -> None:
        for pid in app.session.worker_pids()[:1]:  # the current worker: the one that ran the save
            if (mb := rss_mb(pid)) is not None:
                self.per_worker.setdefault(pid, []).append((self.saves, mb))

    # --- the screen against the save ---------------------------------------------------------------

    def check(self, app, variant: Variant, text: str, report, last_good) -> str | None:
        from kscope.app.widgets.kernels import KernelTable

        banner_widget = app.query_one("#errors")
        banner = str(banner_widget.content) if banner_widget.display else ""
        status = str(app.query_one("#status").content)
        eager = app.query_one("#eager-kernels", KernelTable).mode
        compiled = app.query_one("#compiled-kernels", KernelTable).mode
        if variant.good:
            if report.errors or banner:
                return f"errors on a good save: {banner or report.errors}"
            if app.stale or "STALE" in status:
                return "STALE after a good save"
            line = line_in(text, variant.code)
            if eager is None or eager.launches != variant.eager_launches:
                return f"eager launches {eager and eager.launches}, saved code makes {variant.eager_launches}"
            lines = {k.lines for k in eager.kernels}
            if lines != {(line,)}:
                return f"eager kernels at lines {lines}, the op is on line {line}"
            names = [k.name for k in compiled.kernels] if compiled else []
            if variant.kernel not in names:
                return f"compiled kernels {names}, expected {variant.kernel}"
            return None
        want = list(variant.banner)
        if variant.line_of:
            want.append(f"{self.path.name}:{line_in(text, variant.line_of)}")
        missing = [w for w in want if w not in banner]
        if missing:
            return f"banner {banner!r} lacks {missing}"
        if not app.stale or "STALE" not in status:
            return f"not marked STALE: {status!r}"
        if eager != last_good.eager or compiled != last_good.compiled:
            return "the last good kernels are not on screen"
        return None

    # --- the whole soak -----------------------------------------------------------------------------

    def run(self) -> int:
        start = time.monotonic()
        while self.saves < self.args.saves:
            try:
                asyncio.run(self.run_app())
            except Exception:  # the app died: count it, start a new one, go on
                self.crashes.append(traceback.format_exc())
                print(f"APP CRASH after {self.saves} saves:\n{self.crashes[-1]}", flush=True)
                if len(self.crashes) > 5:
                    break
        took = time.monotonic() - start
        time.sleep(0.5)
        left = [pid for pid in self.pids if rss_mb(pid) is not None]
        beside = sorted(p.name for p in self.folder.iterdir())
        self.report(took, left, beside)
        shutil.rmtree(self.tmp, ignore_errors=True)
        return 0 if not self.crashes and not self.mismatches and not left and beside == ["add_relu.py"] else 1

    def report(self, took: float, left: list[int], beside: list[str]) -> None:
        def growth(series):
            if len(series) < 2:
                return "n/a"
            (s0, first), (s1, last) = series[0], series[-1]
            peak = max(mb for _, mb in series)
            return f"{first:.0f} → {last:.0f} MB ({last - first:+.0f} MB over saves {s0}–{s1}; peak {peak:.0f} MB)"

        lags = sorted(self.lags) or [0.0]
        print()
        print(f"kscope soak: {self.saves} saves cycling {len(CYCLE)} versions "
              f"({len(GOOD)} good, {len(BROKEN)} broken: {', '.join(v.name for v in BROKEN)}), "
              f"--timeout {self.args.timeout:g} s, {os.cpu_count()} CPUs")
        print(f"  app crashes                     {len(self.crashes)}  (goal 0)")
        print(f"  screen did not match the save   {len(self.mismatches)}  (goal 0)")
        for m in self.mismatches[:20]:
            print(f"      {m}")
        print(f"  runs started                    {self.runs}")
        print(f"  worker restarts                 {self.restarts}")
        print(f"  app RSS                         {growth(self.rss['app'])}")
        print(f"  worker RSS (current worker)     {growth(self.rss['worker'])}")
        lives = [series for series in self.per_worker.values() if len(series) > 1]
        if lives:
            longest = max(lives, key=lambda series: series[-1][0] - series[0][0])
            print(f"  longest-lived worker            {growth(longest)}")
        print(f"  app RSS every 50 saves          {', '.join(f'{mb:.0f}' for s, mb in self.rss['app'] if s % 50 == 0)} MB")
        print(f"  event loop worst stall          {lags[-1] * 1000:.0f} ms (p99 {lags[int(len(lags) * .99)] * 1000:.0f} ms)")
        print(f"  processes left after quitting   {len(left)}")
        print(f"  files beside the target         {[b for b in beside if b != 'add_relu.py'] or 'none'}")
        print(f"  total                           {took:.0f} s ({took / max(1, self.saves):.2f} s a save)")
        print("  save → report on screen, median (max) by version:")
        for name, xs in self.latency.items():
            print(f"      {name:14s} {statistics.median(xs):5.2f} s ({max(xs):5.2f} s)  n={len(xs)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="40 saves")
    parser.add_argument("--timeout", type=float, default=3.0, help="the app's --timeout (the endless loop waits this)")
    args = parser.parse_args()
    if args.quick:
        args.saves = 40
    sys.path.insert(0, str(REPO))
    return Soak(args).run()


if __name__ == "__main__":
    raise SystemExit(main())
