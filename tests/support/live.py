"""The harness of the reliability tests (tests/process/test_saves_*.py, test_worker_faults.py,
test_floods.py): broken saves and faults, each provoked for real.

Every test drives KscopeApp with its default LiveSession (a real worker process running torch on
the CPU) through Pilot, on a real file in a temp folder that the test writes the way an editor
does. Waits are on conditions (a run's report reached the panes, a worker was replaced), never
on fixed sleeps. What is checked is what the user sees: the error banner (file and line), the
STALE mark, the kernel tables, the status line, the output pane; and that kscope left the folder
as the test made it and no worker behind.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from textual.widgets import TabbedContent, TabPane

from kscope.app.app import KscopeApp
from kscope.app.widgets.kernels import KernelTable
from kscope.app.widgets.log import LogPane
from kscope.report.request import RunRequest
from support.forks import shared_session
from support.paths import SAMPLES

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
    and every SessionEvent the session emitted. Its workers are forked from the tests' shared fork
    server (support/forks.py), or from the app's own with `own_forks`."""

    def __init__(self, folder: Path, *, target: str | None = None, timeout: float = 60.0, source: str = GOOD,
                 own_forks: bool = False):
        self.folder = folder
        self.path = folder / "target.py"
        self.path.write_text(source)
        self.written: str | bytes = source  # what the test saved last
        self.app = KscopeApp(RunRequest(str(self.path), target, "cpu", timeout=timeout, calls=2),
                             **({} if own_forks else {"session_factory": shared_session()}))
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
        await self.until(lambda: self.app.latest_run in self.finished and not self.app.drawing.busy, what)
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
        return (f"status: {self.status()}\nbanner: {self.banner()}\nevents: {self.kinds()[-12:]}\n"
                f"last lines logged: {self.logged[-3:]}")

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
        left = {pid for pid in left if alive(pid)}
        time.sleep(0.05)
    assert not left, f"workers still running after shutdown: {left}"


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie holds nothing
    except OSError:
        return False
