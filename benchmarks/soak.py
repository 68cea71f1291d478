"""Soak test of the live app: 200 saves cycling through good and broken versions of a sample.

Drives the real app headlessly (Pilot, the default LiveSession, real worker processes on the CPU)
on a temp copy of samples/add_relu.py. Each save is written to disk like an editor does, then the
script waits for that save's final report on screen and checks the screen against what was
saved:

- a good version (one of four ops): no error banner, not STALE, the eager table's cells add up to
  the op's launch count and the line under it names the line the op is on in *this* save (every
  save moves it; the Report's places must be that one Place too), and the compiled table shows
  the fused kernel of that op;
- a broken one (syntax error, raise, failing import, endless loop past --timeout, os._exit,
  segfault): the banner names the stage, `target.py:LINE` where there is a line, and the cause,
  the status line says STALE, and the kernel tables are, cell for cell, those of the last good save.

The screen is read as text (the widgets' cells and lines); the expected line is built as kscope's
own Place and written with its own helper, so a change of the Report's types is followed, or fails
loudly. Each check is also run against a screen known to be wrong for the save, and must fail it.
tests/process/test_soak.py runs a short soak in the suite.

It reports crashes of the app (goal 0), saves whose screen did not match (goal 0), worker
restarts, RSS growth of the app and of the worker, the event loop's worst stall, and timings.

    python benchmarks/soak.py            # 200 saves (~4 min on 2 cores)
    python benchmarks/soak.py --quick    # 40 saves (~1 min)
    python benchmarks/soak.py --saves 48 --stalls          # what the event loop runs when it is late
    python benchmarks/soak.py --saves 48 --tracemalloc 24,48   # what the app holds more, save 24 to 48

The app runs in this process (Pilot), so this script keeps nothing per save itself: the latest Report
only, and the loop's lateness as a histogram. --stalls and --tracemalloc slow the app: their stall
figures are not the soak's.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kscope.render.names import short_name  # noqa: E402  (no torch, no textual)
from kscope.render.view import places_text  # noqa: E402
from kscope.report.place import Place, place_key  # noqa: E402

SAMPLE = REPO / "samples" / "add_relu.py"
OP = "return (a + b).relu()"
STALL_S = 0.03


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


@dataclass(frozen=True)
class Table:
    """A kernel table as the screen shows it: each row's cells as text, the lines under it."""

    rows: tuple[tuple[str, ...], ...]
    detail: str
    name_width: int


def screen_table(app, selector: str) -> Table:
    from textual.widgets import DataTable, Static

    from kscope.app.widgets.kernels import KernelTable

    pane = app.query_one(selector, KernelTable)
    table = pane.query_one(DataTable)
    rows = tuple(tuple(getattr(c, "plain", str(c)) for c in table.get_row_at(i)) for i in range(table.row_count))
    return Table(rows, str(pane.query_one(".detail", Static).content), pane.name_width)


def screen_text(app, selector: str) -> str:
    widget = app.query_one(selector)
    return str(widget.content) if widget.display else ""


def launch_count(cell: str) -> int:
    """A launches cell: "2", or what changed since the last save, "1 new", "1→2" (now 2)."""
    return int(re.findall(r"\d+", cell)[-1])


@dataclass(frozen=True)
class Screen:
    """What a person sees of a save: the banner (empty when hidden), the status line, and the
    eager and compiled kernel tables."""

    banner: str
    status: str
    tables: tuple[Table, Table]

    @classmethod
    def of(cls, app) -> Screen:
        return cls(screen_text(app, "#errors"), screen_text(app, "#status"),
                   (screen_table(app, "#eager-kernels"), screen_table(app, "#compiled-kernels")))


def judge(variant: Variant, text: str, report, screen: Screen, good: tuple[Table, Table] | None,
          name: str) -> str | None:
    """What does not match between `screen` and the saved `text` (None: all does). `good`: the
    tables on screen after the last good save. Where a figure is kscope's own type (a Place), it
    is built with that type and shown with kscope's own helper, never parsed back from text."""
    eager, compiled = screen.tables
    if variant.good:
        if report.errors or screen.banner:
            return f"errors on a good save: {screen.banner or report.errors}"
        if "STALE" in screen.status:
            return "STALE after a good save"
        line = line_in(text, variant.code)
        op = Place(file=report.home, line=line)  # the op, where this save put it
        places = {p for k in report.eager.kernels for p in k.lines} if report.eager else set()
        if places != {op}:
            return f"the report puts the eager kernels at {sorted(places, key=place_key)}, the op is at {op}"
        launches = sum(launch_count(row[1]) for row in eager.rows)
        if launches != variant.eager_launches:
            return f"eager launches on screen {launches} ({eager.rows}), saved code makes {variant.eager_launches}"
        where = "lines: " + places_text((op,), report.home)
        if not any(shown == where or shown.startswith(where + " ·") for shown in eager.detail.splitlines()):
            return f"the eager kernel on screen says {eager.detail!r}, not {where!r} (the op is on line {line})"
        fused = "★ " + short_name(variant.kernel, compiled.name_width - 2)
        if fused not in [row[0] for row in compiled.rows]:
            return f"compiled kernels on screen {[row[0] for row in compiled.rows]}, expected {fused!r}"
        return None
    want = list(variant.banner)
    if variant.line_of:
        want.append(f"{name}:{line_in(text, variant.line_of)}")
    missing = [w for w in want if w not in screen.banner]
    if missing:
        return f"banner {screen.banner!r} lacks {missing}"
    if "STALE" not in screen.status:
        return f"not marked STALE: {screen.status!r}"
    if good is None:
        return "no good save was on screen before"
    if screen.tables != good or not any(t.rows for t in good):
        return f"the last good kernels are not on screen: {screen.tables} != {good}"
    return None


class Soak:
    def __init__(self, args):
        self.args = args
        self.tmp = Path(tempfile.mkdtemp(prefix="kscope-soak-"))
        # the workers inherit it; a cache of kscope's own, cold (its precompiled header and vector
        # ISA probes built first) unless given one (the suite's, warm: tests/process/test_soak.py)
        os.environ["KSCOPE_CACHE_DIR"] = getattr(args, "cache", None) or str(self.tmp / "store")
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
        self.tick = time.perf_counter()  # when the lag monitor last ran
        self.stall_stacks: Counter[tuple[str, ...]] = Counter()
        self.render_ms: dict[str, tuple[float, float, int]] = {}  # --stalls: widget -> total, worst ms, calls
        self.paint_ms: list[float] = []
        self.painting: list[tuple[str, float]] = []  # --stalls: the widgets rendered in the paint going on
        self.long_paints: Counter[str] = Counter()  # --stalls: ms each widget rendered in paints over STALL_S / 2
        self.layouts: Counter[str] = Counter()  # --stalls: widgets that asked for a new layout of the screen
        self.handler_ms: dict[str, tuple[float, float, int]] = {}  # --stalls: the app's handlers and panes' show  # --stalls: each paint of the screen
        self.gc_ms: dict[int, list[float]] = {}  # --stalls: generation -> each collection's time on the loop
        self.loop_thread, self.gc_started = 0, 0.0  # --stalls: what the loop ran, sampled
        self.loop_cpu: Counter[int] = Counter()  # the CPU the loop's thread ran between two of those wakeups, ms
        """(A busy machine stretches the lateness; this is what the loop itself ran. On a quiet machine a
        stall lies between it and it less 10 ms; less what waiting for the GIL on the session's thread adds.)"""
        self.lags: Counter[int] = Counter()  # the event loop's lateness, in ms: how many samples each
        """(A histogram: a list of every sample grew this process ~3 kB a save, counted as the app's.)"""
        self.rss: dict[str, list[tuple[int, float]]] = {"app": [], "worker": []}  # (save, MB)
        self.per_worker: dict[int, list[tuple[int, float]]] = {}  # pid -> (save, MB), each worker's life
        self.pids: set[int] = set()
        self.runs = 0
        self.good_screen: tuple[Table, Table] | None = None  # the kernel tables after the last good save

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
            finished.clear()  # the latest only: the app's process is this one, and its RSS is measured
            finished[app.latest_run] = report

        app._finish = _finish
        emit = app.session.emit

        def count(ev):
            self.runs += ev.kind == "running"
            emit(ev)

        app.session.emit = count

        def on_screen() -> bool:  # the latest run's report has arrived and all its panes are drawn
            report = finished.get(app.latest_run)
            return report is not None and app.drawn is report

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
                start, cpu = self.tick, _ = time.perf_counter(), time.thread_time()
                await asyncio.sleep(0.01)
                self.lags[round((time.perf_counter() - start - 0.01) * 1000)] += 1
                self.loop_cpu[round((time.thread_time() - cpu) * 1000)] += 1

        try:
            async with app.run_test(size=(120, 40)):
                if not await until(on_screen, 180):
                    raise RuntimeError("no first report in 180 s")
                self.good_screen = Screen.of(app).tables
                monitor = asyncio.create_task(lag_monitor())
                if getattr(self.args, "stalls", False):
                    import gc

                    self.time_renders()
                    self.loop_thread = threading.get_ident()
                    gc.callbacks.append(self.time_gc)
                    threading.Thread(target=self.sample_stalls, args=(threading.get_ident(), monitor),
                                     daemon=True).start()
                self.sample_rss(app)
                while self.saves < self.args.saves:
                    i = self.saves
                    variant = CYCLE[i % len(CYCLE)]
                    text = source(self.base, variant, shift=1 + i % 7)  # never the start's 0
                    before = app.latest_run
                    started = time.monotonic()
                    self.path.write_text(text)
                    self.saves += 1
                    ok = await until(lambda: app.latest_run > before, 10) and await until(
                        on_screen, self.args.timeout + 120
                    )
                    self.latency.setdefault(variant.name, []).append(time.monotonic() - started)
                    if not ok:
                        self.mismatches.append(f"save {i + 1} ({variant.name}): no report on screen")
                        continue
                    problem = self.check(app, variant, text, finished[app.latest_run])
                    if problem:
                        self.mismatches.append(f"save {i + 1} ({variant.name}): {problem}")
                    if variant.good and not problem:
                        self.sample_worker(app)  # warm, and it has just run
                    if self.saves in getattr(self.args, "tracemalloc", ()):
                        self.memory_snapshot()
                    if (i + 1) % 10 == 0:
                        self.sample_rss(app)
                        print(f"  {i + 1:4d} saves  {len(self.mismatches)} mismatches  "
                              f"{self.restarts + app.session.restarts} restarts", flush=True)
                if getattr(self.args, "stalls", False):
                    import gc
                    from collections import Counter as _Counter

                    old = gc.get_objects(2)
                    self.gen2 = (len(old), gc.get_freeze_count(),
                                 _Counter(type(o).__qualname__ for o in old).most_common(8))
                    del old
                monitor.cancel()
                self.pids.update(app.session.worker_pids())
        finally:
            self.restarts += app.session.restarts
            app.shutdown()

    def sample_stalls(self, loop_thread: int, monitor) -> None:
        """--stalls: while the event loop is more than STALL_S late, sample what it runs every
        2 ms (its stack, kscope's and textual's frames), to print the commonest."""
        import sys as _sys

        while not monitor.done():
            time.sleep(0.002)
            if time.perf_counter() - self.tick < 0.01 + STALL_S:
                continue
            frame = _sys._current_frames().get(loop_thread)
            stack = []
            while frame is not None:
                code = frame.f_code
                if "site-packages/textual" in code.co_filename or "/kscope/" in code.co_filename or "gc" == code.co_name:
                    where = code.co_filename.split("/kscope/", 1)
                    name = f"kscope/{where[1]}" if len(where) == 2 else Path(code.co_filename).name
                    stack.append(f"{name}:{frame.f_lineno} {code.co_name}")
                frame = frame.f_back
            stack.reverse()  # outermost first
            kscope = [f for f in stack if f.startswith("kscope/")]
            self.stall_stacks[("handler:",) + tuple(stack[:7])] += 1
            self.stall_stacks[("innermost kscope frame:", kscope[-1] if kscope else "none")] += 1

    def time_renders(self) -> None:
        """--stalls: the CPU time of each widget's render_lines and each paint of the screen."""
        from textual.screen import Screen as TextualScreen
        from textual.widget import Widget

        if getattr(Widget, "_soak_timed", False):
            return
        Widget._soak_timed = True
        render_lines, refresh = Widget.render_lines, TextualScreen._compositor_refresh

        def timed_render_lines(widget, crop):
            start = time.thread_time()
            try:
                return render_lines(widget, crop)
            finally:
                ms = (time.thread_time() - start) * 1000
                key = f"{type(widget).__name__}#{widget.id}" if widget.id else type(widget).__name__
                self.painting.append((key, ms))
                total, worst, n = self.render_ms.get(key, (0.0, 0.0, 0))
                self.render_ms[key] = (total + ms, max(worst, ms), n + 1)

        def timed_refresh(screen):
            start = time.thread_time()
            self.painting = []
            try:
                return refresh(screen)
            finally:
                ms = (time.thread_time() - start) * 1000
                self.paint_ms.append(ms)
                if ms > STALL_S * 1000 / 2:  # a long paint: which widgets it rendered, for how long
                    for key, spent in self.painting:
                        self.long_paints[key] += spent

        update = TextualScreen._on_timer_update

        def timed_update(screen):  # a paint with a new layout of the screen (a widget's size may change)
            layout, start = screen._layout_required, time.thread_time()
            try:
                return update(screen)
            finally:
                key = "screen update with a new layout" if layout else "screen update, no layout"
                ms = (time.thread_time() - start) * 1000
                total, worst, n = self.handler_ms.get(key, (0.0, 0.0, 0))
                self.handler_ms[key] = (total + ms, max(worst, ms), n + 1)

        TextualScreen._on_timer_update = timed_update
        layout_of = Widget.refresh

        def noted_refresh(widget, *regions, layout=False, **kwargs):
            if layout and self.stall_stacks is not None:
                self.layouts[f"{type(widget).__name__}#{widget.id}"] += 1
            return layout_of(widget, *regions, layout=layout, **kwargs)

        Widget.refresh = noted_refresh

        Widget.render_lines = timed_render_lines
        TextualScreen._compositor_refresh = timed_refresh

        import importlib
        import pkgutil

        import kscope.app.widgets as widgets
        from kscope.app.app import KscopeApp

        def timed(cls, name):
            method = getattr(cls, name)

            def run(*args, **kwargs):
                start = time.thread_time()
                try:
                    return method(*args, **kwargs)
                finally:
                    ms = (time.thread_time() - start) * 1000
                    key = f"{cls.__name__}.{name}" + (f"({args[1].kind})" if name == "_on_session_event" else "")
                    total, worst, n = self.handler_ms.get(key, (0.0, 0.0, 0))
                    self.handler_ms[key] = (total + ms, max(worst, ms), n + 1)

            setattr(cls, name, run)

        for info in pkgutil.iter_modules(widgets.__path__):
            module = importlib.import_module(f"kscope.app.widgets.{info.name}")
            for cls in vars(module).values():
                if isinstance(cls, type) and cls.__module__ == module.__name__ and "show" in vars(cls):
                    timed(cls, "show")
        timed(KscopeApp, "_on_session_event")

    def time_gc(self, phase: str, info: dict) -> None:
        """gc.callbacks, --stalls: how long each collection of the loop's thread took, by generation."""
        if threading.get_ident() != self.loop_thread:
            return
        if phase == "start":
            self.gc_started = time.thread_time()
        else:
            ms = (time.thread_time() - self.gc_started) * 1000
            self.gc_ms.setdefault(info["generation"], []).append(ms)

    def memory_snapshot(self) -> None:
        """--tracemalloc A,B: at save A, note what the app's process holds; at save B, print what
        it holds more, by line of the allocation (tracemalloc) and by type of object (gc)."""
        import gc
        import tracemalloc
        from collections import Counter

        gc.collect()
        if not tracemalloc.is_tracing():  # from save A on: the saves before it run at full speed
            tracemalloc.start(8)
        snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
        types = Counter(type(o).__qualname__ for o in gc.get_objects())
        if not hasattr(self, "_memory"):
            self._memory = (self.saves, snapshot, types)
            return
        saves, first, before = self._memory
        n = self.saves - saves
        print(f"\n  held more at save {self.saves} than at save {saves} ({n} saves), by line:")
        for stat in snapshot.compare_to(first, "lineno")[:25]:
            print(f"    {stat.size_diff / n:+9.0f} B/save {stat.count_diff / n:+7.1f} blocks/save  {stat.traceback[0]}")
        print("  the largest, by traceback:")
        for stat in snapshot.compare_to(first, "traceback")[:6]:
            print(f"    {stat.size_diff / n:+9.0f} B/save")
            for frame in stat.traceback.format()[-16:]:
                print(f"      {frame}")
        print("  objects by type (tracked by the GC):")
        for name, count in sorted(((t, types[t] - before[t]) for t in types | before), key=lambda x: -abs(x[1]))[:20]:
            print(f"    {count / n:+8.2f}/save  {name} ({types[name]})")
        print(flush=True)

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

    def check(self, app, variant: Variant, text: str, report) -> str | None:
        """The screen against what was saved; then the same check against a screen known to be
        wrong for this save (the last good save's tables, or none at all), which it must fail: a
        check that cannot fail would pass every save and say nothing (this script's checks rotted
        once that way, unseen)."""
        screen = Screen.of(app)
        problem = judge(variant, text, report, screen, self.good_screen, self.path.name)
        if self.good_screen is not None:
            wrong = replace(screen, tables=self.good_screen) if variant.good else replace(
                screen, tables=tuple(replace(t, rows=(), detail="") for t in screen.tables))
            if judge(variant, text, report, wrong, self.good_screen, self.path.name) is None:
                problem = (problem + "; " if problem else "") + "the check passed a wrong screen too"
        if variant.good and problem is None:
            self.good_screen = screen.tables
        return problem

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
        self.left = left = [pid for pid in self.pids if rss_mb(pid) is not None]
        self.beside = beside = sorted(p.name for p in self.folder.iterdir())
        self.report(took, left, beside)
        shutil.rmtree(self.tmp, ignore_errors=True)
        return 0 if not self.crashes and not self.mismatches and not left and beside == ["add_relu.py"] else 1

    def worst_stall_ms(self, of: Counter | None = None) -> int:
        return max(self.lags if of is None else of, default=0)

    def stall_p99_ms(self, of: Counter | None = None) -> int:
        of = self.lags if of is None else of
        seen, n = 0, of.total()
        for ms in sorted(of):
            seen += of[ms]
            if seen >= 0.99 * n:
                return ms
        return 0

    def report(self, took: float, left: list[int], beside: list[str]) -> None:
        def growth(series):
            if len(series) < 2:
                return "n/a"
            (s0, first), (s1, last) = series[0], series[-1]
            peak = max(mb for _, mb in series)
            return f"{first:.0f} → {last:.0f} MB ({last - first:+.0f} MB over saves {s0}–{s1}; peak {peak:.0f} MB)"

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
        print(f"  app RSS every 50 saves          {', '.join(f'{mb:.1f}' for s, mb in self.rss['app'] if s % 50 == 0)} MB")
        late = [(s, mb) for s, mb in self.rss["app"] if s >= 50] if self.saves >= 100 else self.rss["app"]
        if len(late) > 2:
            slope = statistics.linear_regression([s for s, _ in late], [mb for _, mb in late]).slope
            print(f"  app RSS slope                   {slope * 1024:+.1f} kB a save (least squares, saves {late[0][0]}–{late[-1][0]})")
        print(f"  event loop worst stall          {self.worst_stall_ms()} ms (p99 {self.stall_p99_ms()} ms, "
              f"{self.lags.total()} samples of 10 ms sleeps)")
        print(f"  the loop's CPU between wakeups  worst {self.worst_stall_ms(self.loop_cpu)} ms, "
              f"p99 {self.stall_p99_ms(self.loop_cpu)} ms (the work itself, however busy the machine)")
        print(f"  processes left after quitting   {len(left)}")
        print(f"  files beside the target         {[b for b in beside if b != 'add_relu.py'] or 'none'}")
        print(f"  total                           {took:.0f} s ({took / max(1, self.saves):.2f} s a save)")
        if self.stall_stacks:
            total = self.stall_stacks.total() // 2  # each sample is counted twice: by handler and by kscope frame
            print(f"  what the event loop ran while over {STALL_S * 1000:.0f} ms late ({total} samples of 2 ms):")
            paints = sorted(self.paint_ms)
            print(f"    paints of the screen: {len(paints)}, worst {paints[-1]:.0f} ms, "
                  f"{sum(m > STALL_S * 1000 for m in paints)} over {STALL_S * 1000:.0f} ms, {sum(paints) / 1000:.1f} s in all")
            for key, (spent, worst, n) in sorted(self.render_ms.items(), key=lambda x: -x[1][0])[:12]:
                print(f"      {key:32s} {spent / 1000:5.2f} s in {n:6d} renders, worst {worst:4.0f} ms")
            print("    the app's handlers, by event, and its panes' show (CPU):")
            for key, (spent, worst, n) in sorted(self.handler_ms.items(), key=lambda x: -x[1][0])[:16]:
                print(f"      {key:40s} {spent / 1000:5.2f} s in {n:6d} calls, worst {worst:4.0f} ms")
            print(f"    in paints over {STALL_S * 500:.0f} ms, ms rendering: "
                  f"{[(k, round(v)) for k, v in self.long_paints.most_common(10)]}")
            print(f"    widgets asking for a new layout: {self.layouts.most_common(14)}")
            if getattr(self, "gen2", None):
                print(f"    at the end: {self.gen2[0]} objects in the GC's oldest generation, {self.gen2[1]} frozen; "
                      f"most: {self.gen2[2]}")
            for gen, ms in sorted(self.gc_ms.items()):
                print(f"    GC generation {gen}: {len(ms)} collections, worst {max(ms):.0f} ms, "
                      f"{sum(m > STALL_S * 1000 for m in ms)} over {STALL_S * 1000:.0f} ms, {sum(ms) / 1000:.1f} s in all")
            for stack, n in self.stall_stacks.most_common(16):
                print(f"    {n / total:4.0%}  " + "\n          ".join(stack))
        print("  save → report on screen, median (max) by version:")
        for name, xs in self.latency.items():
            print(f"      {name:14s} {statistics.median(xs):5.2f} s ({max(xs):5.2f} s)  n={len(xs)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="40 saves")
    parser.add_argument("--timeout", type=float, default=3.0, help="the app's --timeout (the endless loop waits this)")
    parser.add_argument("--cache", metavar="DIR", help="kscope's cache folder (default: a new one, cold)")
    parser.add_argument("--stalls", action="store_true",
                        help=f"sample what the event loop runs while it is over {STALL_S * 1000:.0f} ms late")
    parser.add_argument("--tracemalloc", metavar="A,B", default="",
                        help="print what the app holds more at save B than at save A (slows the app)")
    args = parser.parse_args()
    args.tracemalloc = tuple(int(x) for x in args.tracemalloc.split(",") if x)
    if args.quick:
        args.saves = 40
    return Soak(args).run()


if __name__ == "__main__":
    raise SystemExit(main())
