"""Reliability of the live app (issue 4): broken saves and faults, each provoked for real.

Every test drives KscopeApp with its default LiveSession (a real worker process running torch on
the CPU) through Pilot, on a real file in a temp folder that the test writes the way an editor
does. Waits are on conditions (a run's report reached the panes, a worker was replaced), never
on fixed sleeps. What is checked is what the user sees: the error banner (file and line), the
STALE mark, the kernel tables, the status line, the output pane; and that kscope left the folder
as the test made it and no worker behind.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from pathlib import Path

import pytest
from conftest import SAMPLES
from textual.widgets import DataTable, TabbedContent, TabPane

from kscope.app.app import KscopeApp
from kscope.app.output_pump import LOG_FLOOD_FLUSH_S, LOG_MAX_BYTES
from kscope.app.widgets.kernels import KernelTable
from kscope.app.widgets.log import MAX_LINES, LogPane
from kscope.report.codec import report_to_dict
from kscope.report.request import RunRequest

pytestmark = pytest.mark.slow

GOOD = (SAMPLES / "add_relu.py").read_text()
OP = "return (a + b).relu()"
assert GOOD.count(OP) == 1 and GOOD.count("import torch\n") == 1


def body(code: str, imports: str = "") -> str:
    """The sample with the target's body replaced (and extra imports)."""
    src = GOOD.replace(OP, code)
    return src.replace("import torch\n", f"import {imports}\nimport torch\n") if imports else src


def line_in(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


class Live:
    """A KscopeApp on a real worker, with probes: the reports that reached the panes (by run id)
    and every SessionEvent the session emitted."""

    def __init__(self, folder: Path, *, target: str | None = None, timeout: float = 60.0, source: str = GOOD):
        self.folder = folder
        self.path = folder / "target.py"
        self.path.write_text(source)
        self.written: str | bytes = source  # what the test saved last
        self.app = KscopeApp(RunRequest(str(self.path), target, "cpu", timeout=timeout, calls=2))
        self.events = []
        self.finished: dict[int, object] = {}
        self.pids: set[int] = set()  # every worker process seen
        self.logged: list[str] = []  # every text the app wrote into the output pane
        emit, finish = self.app.session.emit, self.app._finish

        def record(ev):  # the session thread
            self.events.append(ev)
            emit(ev)

        def _finish(report, at):  # the app's handler calls self._finish: the instance attribute wins
            finish(report, at)
            self.finished[self.app.latest_run] = report

        self.app.session.emit, self.app._finish = record, _finish

    # --- waiting -----------------------------------------------------------------------------------

    async def until(self, condition, what: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert self.app.is_running, f"the app stopped while waiting for {what}"
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:g} s waiting for {what}\n{self.describe()}")
            self.pids.update(self.app.session.worker_pids())
            await asyncio.sleep(0.05)  # the app runs in this loop: this hands it the time

    async def report(self, what: str = "the report"):
        """The final report of the latest run, once it is on screen."""
        await self.until(lambda: self.app.latest_run in self.finished, what)
        self.pids.update(self.app.session.worker_pids())
        return self.finished[self.app.latest_run]

    async def save(self, content: str | bytes, *, how: str = "write", what: str = "the save's report"):
        """Save like an editor (`write` in place, or `atomic`: temp file renamed over the target),
        then wait for that save's report on screen."""
        before = self.app.latest_run
        self.write(content, how=how)
        await self.until(lambda: self.app.latest_run > before, "the watcher to notice the save", 10)
        return await self.report(what)

    def write(self, content: str | bytes, *, how: str = "write") -> None:
        data = content.encode() if isinstance(content, str) else content
        if how == "atomic":
            tmp = self.folder / ".target.py.tmp"
            tmp.write_bytes(data)
            os.replace(tmp, self.path)
        else:
            self.path.write_bytes(data)
        self.written = content

    # --- what is on screen -------------------------------------------------------------------------

    def banner(self) -> str:
        b = self.app.query_one("#errors")
        return str(b.content) if b.display else ""

    def status(self) -> str:
        return str(self.app.query_one("#status").content)

    def table(self, mode: str) -> KernelTable:
        return self.app.query_one(f"#{mode}-kernels", KernelTable)

    def hook_log(self) -> None:
        """Note what the app writes into the output pane, shown or not (it may sit in a tab)."""
        pane = self.app.query_one(LogPane)
        write = pane.write

        def recording_write(content, *args, **kwargs):
            self.logged.extend(str(content).splitlines())
            return write(content, *args, **kwargs)

        pane.write = recording_write

    def show_output(self) -> None:
        """Bring the output pane on screen, as a user would (it may sit in a tab)."""
        tabs = self.app.query(TabbedContent)
        if tabs:
            pane = self.app.query_one(LogPane)
            tab = next(a for a in pane.ancestors if isinstance(a, TabPane))
            tabs.first().active = tab.id

    def rendered_log(self) -> list[str]:
        return list(self.app.query_one(LogPane).lines)  # the rows on screen, wrapped to its width

    def kinds(self, since: int = 0) -> list[str]:
        return [e.kind for e in self.events[since:]]

    def describe(self) -> str:
        return f"status: {self.status()}\nbanner: {self.banner()}\nevents: {self.kinds()[-12:]}"

    def assert_stale(self, case: str, *, file_line: str | None, has: list[str], good) -> None:
        """A failed save: the banner names the file (and line), the last good results stay on
        screen marked STALE."""
        banner = self.banner()
        assert "target.py" in banner, f"{case}: banner does not name the file: {banner!r}"
        if file_line:
            assert file_line in banner, f"{case}: banner does not name {file_line}: {banner!r}"
        for text in has:
            assert text in banner, f"{case}: {text!r} not in banner {banner!r}"
        assert self.app.stale and "STALE" in self.status(), f"{case}: not marked stale: {self.status()!r}"
        assert self.table("eager").mode == good.eager, f"{case}: the last good eager results left the screen"
        assert self.table("compiled").mode == good.compiled, f"{case}: the last good compiled results left the screen"

    def assert_recovered(self, case: str, report) -> None:
        assert not report.errors, f"{case}: the good save after it failed: {report.errors}"
        assert not self.app.stale and "STALE" not in self.status(), f"{case}: still stale after a good save"
        assert self.banner() == "", f"{case}: banner still shown: {self.banner()!r}"
        assert self.table("eager").mode.launches == 2 and self.table("compiled").mode is not None

    def assert_folder_untouched(self) -> None:
        """kscope never writes the watched file or anything beside it."""
        assert sorted(os.listdir(self.folder)) == ["target.py"]
        data = self.written.encode() if isinstance(self.written, str) else self.written
        assert self.path.read_bytes() == data


def drive(live: Live, scenario, size=(120, 40)) -> None:
    """Run `scenario(live)` inside the app; afterwards no worker of it may be left."""

    async def main():
        try:
            async with live.app.run_test(size=size):
                live.hook_log()
                await scenario(live)
                live.pids.update(live.app.session.worker_pids())
        finally:
            live.app.shutdown()

    asyncio.run(main())
    live.assert_folder_untouched()
    deadline = time.monotonic() + 2
    left = set(live.pids)
    while left and time.monotonic() < deadline:
        left = {pid for pid in left if _alive(pid)}
        time.sleep(0.05)
    assert not left, f"workers still running after shutdown: {left}"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie holds nothing
    except OSError:
        return False


# --- bad input ---------------------------------------------------------------------------------------

CUSTOM_OP = '''import torch

@torch.library.custom_op("kscope_reliability::grow", mutates_args=())
def grow(x: torch.Tensor) -> torch.Tensor:
    return x * 2

@grow.register_fake
def _(x):
    return x.new_empty(x.shape[0] + 1)  # lies about the shape: compiled code checks it

def add_relu(x):
    return (grow(x) + 1).relu()

def inputs(device):
    return (torch.ones(8, device=device),)
'''

# (case, source, the line the banner must name (a needle in the source) or None, texts in the banner)
BROKEN = [
    ("syntax error", body("return (a + b).relu() +"), "relu() +", ["load", "SyntaxError"]),
    ("failing import", body(OP, "kscope_no_such_module"), "import kscope_no_such_module",
     ["ModuleNotFoundError", "kscope_no_such_module"]),
    ("no target", "import torch\n\nx = torch.ones(3)\n", None, ["no candidate function"]),
    ("several candidates", GOOD + "\n\ndef other(a, b):\n    return a - b\n", None,
     ["several candidates (add_relu, other)"]),
    ("target raises", body("y = a + b\n    raise ValueError('bad shape')"), "raise ValueError",
     ["eager", "ValueError: bad shape"]),
    ("inputs() missing", GOOD.split("def inputs")[0], None, ["inputs", "no inputs()", "a, b"]),
    ("inputs() raises", GOOD.replace("a = torch.randn(n, device=device)", "raise RuntimeError('no data')"),
     "raise RuntimeError", ["✗ inputs", "RuntimeError: no data"]),
    ("inputs() returns no tensors", GOOD.replace("return a, b", "return 1, 2"), None,
     ["inputs() returned no tensor (got int, int)"]),
    ("not UTF-8", b"import torch\n# caf\xe9\ndef f(a):\n    return a\n", None, ["not UTF-8"]),
    ("empty file", "", None, ["no candidate function"]),
]
if not __import__("torch").cuda.is_available():
    BROKEN += [
        ("CUDA tensors without a GPU (module level)",
         GOOD.split("def inputs")[0] + "a = torch.randn(10, device='cuda')\nb = torch.randn(10, device='cuda')\n",
         "a = torch.randn(10, device='cuda')", ["no CUDA device here", "inputs(device)"]),
        ("CUDA tensors without a GPU (inputs)",
         GOOD.replace("a = torch.randn(n, device=device)", "a = torch.randn(n, device='cuda')"),
         "device='cuda'", ["no CUDA device here"]),
    ]


def test_broken_saves_name_file_and_line_keep_results_stale_and_recover(tmp_path):
    async def scenario(live: Live):
        good = await live.report("the first report")
        assert not good.errors and good.eager.launches == 2
        for case, source, needle, has in BROKEN:
            bad = await live.save(source, what=case)
            assert bad.errors and bad.eager is None, f"{case}: {bad.errors}"
            text = source if isinstance(source, str) else ""
            where = f"target.py:{line_in(text, needle)}" if needle else None
            live.assert_stale(case, file_line=where, has=has, good=good)
            assert "kscope/" not in live.banner(), f"{case}: kscope's internals in the banner"
            good = await live.save(GOOD, what=f"the good save after: {case}")
            live.assert_recovered(case, good)

        # A result that is not a tensor is still profiled: a Python float, and None.
        for case, code in [("float result", "return (a + b).relu().sum().item()"),
                           ("None result", "(a + b).relu()\n    return None")]:
            report = await live.save(body(code), what=case)
            assert not report.errors, f"{case}: {report.errors}"
            assert report.eager.launches >= 2 and report.compiled is not None, case
            assert not live.app.stale and live.banner() == ""

        # An error inside torch.compile: the eager half is valid and on screen, the error shown.
        report = await live.save(CUSTOM_OP, what="compile error")
        assert report.eager is not None and report.compiled is None
        (err,) = report.errors
        assert err.stage == "compile"
        # The compiled code's shape check fails on entry to the frame: the line named is the
        # target's `def` (the call of the op would be better); either is in the user's function.
        lines = {line_in(CUSTOM_OP, "def add_relu"), line_in(CUSTOM_OP, "return (grow(x) + 1)")}
        assert err.line in lines and f"compile target.py:{err.line}" in live.banner(), live.banner()
        assert not live.app.stale  # fresh eager results, not old ones
        assert live.table("eager").mode == report.eager and live.table("compiled").mode is None
        live.assert_recovered("compile error", await live.save(GOOD))
        # The same custom op defined again by the next save (a long-lived worker): still fine.
        report = await live.save(CUSTOM_OP, what="compile error, again")
        assert [e.stage for e in report.errors] == ["compile"] and report.eager is not None
        live.assert_recovered("compile error, again", await live.save(GOOD))

    drive(Live(tmp_path), scenario)


def test_unknown_target_name_then_back(tmp_path):
    async def scenario(live: Live):
        good = await live.report("the first report")
        renamed = GOOD.replace("def add_relu", "def add_relu2")
        await live.save(renamed)
        live.assert_stale("unknown name", file_line=None, has=["no target named 'add_relu'", "add_relu2"], good=good)
        live.assert_recovered("unknown name", await live.save(GOOD))

    drive(Live(tmp_path, target="add_relu"), scenario)


# --- faults -------------------------------------------------------------------------------------------

TIMEOUT_S = 3.0


def test_hangs_crashes_and_kills_restart_the_worker_and_the_next_save_works(tmp_path):
    async def scenario(live: Live):
        good = await live.report("the first report")
        assert "timeout 3s" in live.status()  # the limit is on screen
        cases = [
            ("infinite loop", body("while True:\n        a = a + 1"), ["timeout", "stopped after 3 s"]),
            ("very slow target", body("time.sleep(600)\n    return a", "time"), ["timeout", "stopped after 3 s"]),
            ("os._exit", body("os._exit(3)", "os"), ["crash", "exited with status 3"]),
            ("os.abort()", body("os.abort()", "os"), ["crash", "SIGABRT"]),
            ("segfault", body("ctypes.string_at(0)", "ctypes"), ["crash", "SIGSEGV"]),
        ]
        for case, source, has in cases:
            restarts, before = live.app.session.restarts, set(live.app.session.worker_pids())
            started = time.monotonic()
            await live.save(source, what=case)
            took = time.monotonic() - started
            live.assert_stale(case, file_line=None, has=has, good=good)
            await live.until(lambda: live.app.session.restarts == restarts + 1, f"{case}: a worker restart")
            await live.until(lambda: any("worker restarted" in line for line in live.logged[-3:]),
                             f"{case}: 'worker restarted' in the output pane", 10)
            if has[0] == "timeout":
                assert TIMEOUT_S <= took < TIMEOUT_S + 10, f"{case}: reported after {took:.1f} s"
            dead = before - set(live.app.session.worker_pids())
            assert dead and not any(_alive(pid) for pid in dead), f"{case}: the stopped worker is still running"
            good = await live.save(GOOD, what=f"the good save after: {case}")
            live.assert_recovered(case, good)

        # Out of memory in the user's code: reported as such; the worker is not restarted.
        restarts = live.app.session.restarts
        for case, source, has in [
            ("MemoryError", body("x = bytearray(2**50)\n    return a"), ["eager", "MemoryError"]),
            ("torch allocation too big", body("return torch.empty(2**50) + a"), ["can't allocate memory"]),
        ]:
            await live.save(source, what=case)
            live.assert_stale(case, file_line=f"target.py:{line_in(source, '2**50')}", has=has, good=good)
            good = await live.save(GOOD, what=f"the good save after: {case}")
            live.assert_recovered(case, good)
        assert live.app.session.restarts == restarts

        # Killed from outside while idle: noticed, replaced and said in the output pane within
        # IDLE_NOTICE_S of the kill (the README's bound), and the next save works.
        noticed, said = await kill_idle_worker(live)
        assert said <= IDLE_NOTICE_S, f"the idle worker's death was said {said:.2f} s after the kill (noticed at {noticed:.2f} s)"
        live.assert_recovered("killed while idle", await live.save(GOOD, what="the save after the kill"))

    drive(Live(tmp_path, timeout=TIMEOUT_S), scenario)


IDLE_NOTICE_S = 1.0
"""README: a worker killed from outside while idle is noticed within 1 s. The session looks every
IDLE_CHECK_S (0.5 s); measured 0.2-0.6 s from the kill to the line in the output pane."""


async def kill_idle_worker(live: Live) -> tuple[float, float]:
    """SIGKILL the idle current worker; seconds from the kill until the session replaced it
    (its `restarted` event) and until the output pane said so."""
    (victim, *_) = live.app.session.worker_pids()
    n, shown = len(live.events), len(live.logged)
    killed = time.monotonic()
    os.kill(victim, signal.SIGKILL)
    await live.until(lambda: any("SIGKILL while idle" in line for line in live.logged[shown:]),
                     "the idle worker's death in the output pane", IDLE_NOTICE_S + 10)
    said = time.monotonic() - killed
    (restarted,) = [e for e in live.events[n:] if e.kind == "restarted"]
    assert victim not in live.app.session.worker_pids() and not _alive(victim)
    return restarted.at - killed, said


def test_a_worker_that_cannot_start_is_reported_and_retried_at_the_next_save(tmp_path, monkeypatch):
    """torch fails to import in the worker (a broken install, say): kscope says so on screen,
    does not respawn workers in a loop, and the save after the install is fixed works."""
    broken = tmp_path / "broken-site" / "torch"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('torch is broken in this test')\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(broken.parent), os.environ.get("PYTHONPATH")])))
    work = tmp_path / "work"
    work.mkdir()

    async def scenario(live: Live):
        report = await live.report("the failure report")
        assert report.eager is None and [e.stage for e in report.errors] == ["crash"]
        assert "no worker could start" in live.banner() and "target.py" in live.banner()
        # the dying worker's traceback comes through the output pipe, on its own thread
        await live.until(lambda: any("torch is broken in this test" in line for line in live.logged),
                         "the worker's ImportError in the output pane", timeout=10)
        failed = sum("worker failed to start" in line for line in live.logged)
        await asyncio.sleep(2)  # nothing happens meanwhile: no worker is started again and again
        assert sum("worker failed to start" in line for line in live.logged) == failed <= 4
        (broken / "__init__.py").unlink()  # the install is fixed
        report = await live.save(GOOD, what="the report after the fix")
        assert not report.errors and report.eager.launches == 2 and live.banner() == ""

    drive(Live(work), scenario)


FLOOD_STALL_S = 0.25
FLOOD_P99_S = 0.02
"""The event loop while a flood is on (pane hidden or shown): its worst stall, which is a report's
paint on a 2-core machine with the worker busy (measured 30-115 ms), and its 99th percentile
(measured 2-5 ms). With the RichLog the pane was before: worst 150-350 ms, p99 80-170 ms shown."""
OPEN_STALL_S = 0.15
"""Opening the output pane after a flood: measured 18-73 ms (the RichLog: 140-430 ms)."""


def test_a_flood_of_output_keeps_the_screen_responsive(tmp_path):
    """40,000 lines printed per call, hundreds of thousands in all: the output pane keeps the newest
    lines and says what it skipped, and the event loop never stalls for long, whether the pane
    is on screen during the flood or opened after it. The stall measured is the worst one
    (not the last) while the flood is on: from the save to its last line reaching the pane."""
    lags: list[tuple[float, float]] = []  # (when the sample ended, how late the loop woke)

    async def monitor():
        while True:
            start = time.perf_counter()
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            lags.append((now, now - start - 0.01))

    def during(since: float, until: float) -> list[float]:
        return sorted(lag for at, lag in lags if since <= at <= until)

    def worst(window: list[float]) -> str:
        return f"{window[-1] * 1000:.0f} ms (p99 {window[int(len(window) * .99)] * 1000:.0f} ms, {len(window)} samples)"

    async def scenario(live: Live):
        await live.report("the first report")
        task = asyncio.create_task(monitor())
        for flood, shown in [(1, False), (2, True)]:
            if shown:
                live.show_output()
            last = f"flood {flood} line 39999"
            source = body(f"for i in range(40_000):\n        print('flood {flood} line', i)\n    return (a + b).relu()")
            n = len(live.logged)
            saved = time.perf_counter()
            report = await live.save(source, what=f"flood {flood}'s report")
            await live.until(lambda: live.logged[-1:] == [last], f"flood {flood}'s last line", 10)
            window = during(saved, time.perf_counter())
            assert not report.errors and report.eager.launches == 2
            # What reaches the pane is a bounded rate of the newest lines (at most LOG_MAX_BYTES per
            # LOG_FLOOD_FLUSH_S; twice that allowed for the first batches, before the flood is seen),
            # and a note of the rest. A rate: how long the flood lasts depends on the calls timed.
            took = time.perf_counter() - saved
            reached = sum(len(line) + 1 for line in live.logged[n:])
            assert reached / took <= 2 * LOG_MAX_BYTES / LOG_FLOOD_FLUSH_S, (
                f"{reached:,} bytes ({len(live.logged) - n:,} lines) reached the output pane in {took:.1f} s")
            assert any("bytes of output not shown" in line for line in live.logged[n:])
            assert len(window) > 100, f"flood {flood}: only {len(window)} lag samples"
            p99 = window[int(len(window) * .99)]
            assert window[-1] < FLOOD_STALL_S and p99 < FLOOD_P99_S, f"flood {flood}: the event loop stalled {worst(window)}"
            print(f"flood {flood} (pane {'shown' if shown else 'hidden'}): {reached:,} bytes reached the pane"
                  f" in {took:.1f} s; worst stall {worst(window)}")
            if not shown:  # the pane comes on screen after the flood: it must not stall either
                opened = time.perf_counter()
                live.show_output()
                await live.until(lambda: live.rendered_log()[-1:] == [last], "the output pane on screen", 10)
                await asyncio.sleep(0.2)
                window = during(opened, time.perf_counter())
                # It wraps the newest MAX_LINES lines kept while hidden, and renders the rows on screen.
                assert window[-1] < OPEN_STALL_S, f"opening the output pane after a flood stalled the event loop {worst(window)}"
                print(f"opening the pane after flood {flood}: worst stall {worst(window)}")
        await live.until(lambda: live.rendered_log()[-1:] == [last], "the last line on screen", 10)
        assert len(live.rendered_log()) <= MAX_LINES
        task.cancel()

    drive(Live(tmp_path), scenario)


def test_thousands_of_small_ops_aggregate_into_few_rows(tmp_path):
    """A Python loop of 2,000 small ops: 2,000 eager launches per call in one row, one fused
    kernel compiled; the screen stays responsive and the Report stays small (2,000 rows of round
    trips made it 600 kB before they were grouped: the size checks below would fail)."""

    async def scenario(live: Live):
        await live.report("the first report")
        source = body("for _ in range(2000):\n        a = a + 1\n    return a").replace("n=1_000_000", "n=1024")
        report = await live.save(source, what="the 2,000-op report")
        assert not report.errors, report.errors
        assert [(k.name, k.launches) for k in report.eager.kernels] == [("aten::add", 2000)]
        assert len(report.compiled.kernels) <= 3
        for mode in ("eager", "compiled"):
            assert live.table(mode).query_one(DataTable).row_count <= 3
        data = report_to_dict(report)
        without_code = json.dumps({**data, "compiled": {**data["compiled"], "kernels": [
            {**k, "code": None} for k in data["compiled"]["kernels"]]}})
        assert len(without_code) < 16_384
        # generated code is capped per kernel, so the whole Report stays small too
        assert len(json.dumps(data)) < 256_000

    drive(Live(tmp_path, timeout=180.0), scenario)


# --- storms and editors ----------------------------------------------------------------------------


def shifted(i: int, broken: bool = False) -> str:
    """The sample with i blank lines above the target: each save puts the op on its own line."""
    src = GOOD.replace("def add_relu", "\n" * i + "def add_relu")
    return src.replace(OP, OP + " +") if broken else src


def test_a_storm_of_saves_starts_at_most_two_runs_and_ends_on_the_last_content(tmp_path):
    async def scenario(live: Live):
        await live.report("the first report")
        for storm, last_broken in [(1, False), (2, True)]:
            n = len(live.events)
            start = time.monotonic()
            for i in range(1, 21):  # 20 saves in 2 s, good and broken mixed
                live.write(shifted(i, broken=(i % 3 == 0) or (i == 20 and last_broken)))
                await asyncio.sleep(max(0.0, start + i * 0.1 - time.monotonic()))
            watcher = live.app.watcher
            await live.until(lambda: not (watcher._timer and watcher._timer.is_alive()), "the watcher to deliver the saves")
            report = await live.report(f"storm {storm}: the final report")
            runs = live.kinds(n).count("running")
            assert 1 <= runs <= 2, f"storm {storm}: {runs} runs started for 20 saves"
            last = shifted(20, broken=last_broken)
            if last_broken:
                assert f"target.py:{line_in(last, OP)}" in live.banner() and live.app.stale
            else:
                assert not report.errors and not live.app.stale
                assert {k.lines for k in live.table("eager").mode.kernels} == {(line_in(last, OP),)}
        live.assert_recovered("after the storms", await live.save(GOOD))

    drive(Live(tmp_path), scenario)


def test_atomic_saves_delete_recreate_and_moving_the_file_away(tmp_path):
    async def scenario(live: Live):
        await live.report("the first report")
        edited = GOOD.replace(OP, OP + " * 2")

        report = await live.save(edited, how="atomic", what="an atomic save")
        assert "cpp_fused_add_mul_relu_0" in [k.name for k in report.compiled.kernels]
        assert live.table("eager").mode.launches == 3

        # Delete + recreate at once (some editors), then with a pause between.
        before = live.app.latest_run
        live.path.unlink()
        live.write(GOOD)
        await live.until(lambda: live.app.latest_run > before, "the recreated file to be noticed", 10)
        live.assert_recovered("delete + recreate", await live.report())
        live.path.unlink()
        await live.until(lambda: "file missing" in live.status(), "'file missing' on the status line", 10)
        report = await live.save(edited, what="the file recreated")
        assert live.table("eager").mode.launches == 3 and not report.errors

        # Moved away: say so and keep waiting; moved back: run again.
        away = tmp_path.parent / f"{tmp_path.name}-away.py"
        os.rename(live.path, away)
        await live.until(lambda: "file missing" in live.status(), "'file missing' after a move", 10)
        assert live.app.is_running and not live.banner()
        before = live.app.latest_run
        os.rename(away, live.path)
        await live.until(lambda: live.app.latest_run > before, "the file moved back to be noticed", 10)
        report = await live.report()
        assert not report.errors and live.table("eager").mode.launches == 3
        live.written = edited

    drive(Live(tmp_path), scenario)
