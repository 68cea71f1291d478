"""The README's screenshots, from the real app (a real worker, CPU) on the bundled samples.

    python docs/screenshots.py

kscope-120x40.svg: samples/add_relu.py after a save that added `* 2`; kscope-80x24.svg: the same
at 80×24; kscope-backward-120x40.svg: samples/train_mlp.py with `g` pressed (forward + backward);
kscope-sweep-120x40.svg: samples/add_relu.py with `z` pressed (a size sweep, 10² to 10⁷);
kscope-round-trips-120x40.svg: samples/matmul_gelu.py with the round trips tab (`t`);
kscope-modes-120x40.svg: samples/linear_frozen.py frozen, reduce-overhead then `m` (max-autotune);
kscope-present-100x30.svg: the presentation view (--present) after the `* 2` save;
kscope-ranks-120x40.svg: samples/allreduce.py with --nproc 2, the ranks tab (`k`);
kscope-lines-120x40.svg and kscope-roofline-120x40.svg: samples/project/bench.py with `h` (the
costliest lines), with `l` (the roofline tab); kscope-plan-120x40.svg: samples/train_step.py after a
save that widens its hidden layer, while the new graphs compile (inductor's plan on screen).
kscope-browser.png and kscope-serve-present.png (`kscope serve` in chromium) are made by
docs/browser_screenshot.py.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
sys.path.insert(0, str(REPO))


async def shoot(
    sample: str, size: tuple[int, int], out: str, edit=None, keys: str = "", sweep: bool = False, then="",
    spec: dict | None = None, present: bool = False, edit_file: str | None = None, planned: bool = False,
) -> None:
    """keys: keys that start a run each (g, n, m); then: keys pressed once the runs are done (tabs;
    a list for named keys); spec: RunRequest fields as on the command line (no_grad, compile);
    planned: shoot as soon as the edit's plan is on screen, while its kernels compile.
    sample "project/bench.py": the whole folder is copied; edit_file: the file `edit` changes."""
    from kscope.app.app import KscopeApp
    from kscope.report.compile import CompileOptions
    from kscope.report.request import RunRequest

    tmp = Path(tempfile.mkdtemp(prefix="kscope-shot-"))
    path = tmp / sample
    if "/" in sample:
        shutil.copytree(REPO / "samples" / Path(sample).parent, path.parent)
    else:
        shutil.copy(REPO / "samples" / sample, path)
    edited = path.parent / edit_file if edit_file else path
    spec = dict(spec or {})
    if "compile" in spec:
        spec["compile"] = CompileOptions(**spec["compile"])
    app = KscopeApp(RunRequest(str(path), None, "cpu", timeout=120.0, calls=5, **spec), present=present)

    async def settled(pilot, runs: int) -> None:
        deadline = time.monotonic() + 300
        while not (app.latest_run >= runs and app.run_started is None and app.shown and app.shown.compiled):
            if time.monotonic() > deadline:
                raise TimeoutError(out)
            await pilot.pause(0.1)
        await pilot.pause(0.5)

    async with app.run_test(size=size) as pilot:
        await settled(pilot, 1)
        runs = 1
        if edit is not None:
            edited.write_text(edit(edited.read_text()))
            await pilot.pause(0.5)
            runs += 1
        for key in keys:
            await pilot.press(key)
            runs += 1
        if planned:
            deadline = time.monotonic() + 300
            while not (app.latest_run >= runs and app.shown and app.shown.plan and app.shown.compiled is None):
                if time.monotonic() > deadline:
                    raise TimeoutError(out)
                await pilot.pause(0.05)
            await pilot.pause(0.2)
        elif sweep:
            from kscope.app.widgets.sweep import SweepPane

            pane = app.query_one(SweepPane)
            await pilot.press("z")
            deadline = time.monotonic() + 300
            while pane.complete is None:
                if time.monotonic() > deadline:
                    raise TimeoutError(out)
                await pilot.pause(0.2)
            await pilot.pause(0.5)
        else:
            await settled(pilot, runs)
        for key in then:
            await pilot.press(key)
        await pilot.pause(0.3)
        app.save_screenshot(out, str(DOCS))
    app.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)


def times_two(text: str) -> str:
    return text.replace("(a + b).relu()", "(a + b).relu() * 2")


SHOTS = {
    "kscope-120x40.svg": dict(sample="add_relu.py", size=(120, 40), edit=times_two),
    "kscope-80x24.svg": dict(sample="add_relu.py", size=(80, 24), edit=times_two),
    # --nproc 2 (gloo), the ranks tab (k)
    "kscope-ranks-120x40.svg": dict(sample="allreduce.py", size=(120, 40), then="k", spec=dict(nproc=2)),
    # --present at a projector's 100×30, after the same save
    "kscope-present-100x30.svg": dict(sample="add_relu.py", size=(100, 30), edit=times_two, present=True),
    "kscope-backward-120x40.svg": dict(sample="train_mlp.py", size=(120, 40), keys="g"),
    "kscope-sweep-120x40.svg": dict(sample="add_relu.py", size=(120, 40), sweep=True),
    "kscope-round-trips-120x40.svg": dict(sample="matmul_gelu.py", size=(120, 40), then="t"),
    # --no-grad --mode reduce-overhead --option freezing=True --option max_autotune_gemm_backends=CPP, then m
    # a project of two files: model.py saved (GELU -> SiLU), the compiled table, then the source tab
    "kscope-project-120x40.svg": dict(
        sample="project/bench.py", size=(120, 40), edit_file="model.py", spec=dict(no_grad=True),
        edit=lambda text: text.replace("F.gelu(", "F.silu("), then=["tab", "tab", "down", "down", "s"],
    ),
    # the same project: the costliest lines of the run (h), then its roofline (l)
    "kscope-lines-120x40.svg": dict(sample="project/bench.py", size=(120, 40), then="h"),
    "kscope-roofline-120x40.svg": dict(sample="project/bench.py", size=(120, 40), then="l"),
    # a new training step's graphs compiling: inductor's plan of the first on screen (issue 26)
    "kscope-plan-120x40.svg": dict(sample="train_step.py", size=(120, 40), planned=True,
                                   edit=lambda text: text.replace("512", "768")),
    "kscope-modes-120x40.svg": dict(
        sample="linear_frozen.py", size=(120, 40), keys="m", then="t",
        spec=dict(no_grad=True, compile={"mode": "reduce-overhead",
                                         "options": {"freezing": True, "max_autotune_gemm_backends": "CPP"}}),
    ),
}


async def main(names: list[str]) -> None:
    """Every screenshot, or those named (`python docs/screenshots.py kscope-sweep-120x40.svg`)."""
    os.environ.setdefault("KSCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="kscope-shot-store-"))
    for out, how in SHOTS.items():
        if not names or out in names:
            await shoot(out=out, **how)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
