"""Key e (issue 13): the Report on screen, its two traces and a screenshot, into a new folder that
appears whole, never over an earlier export."""

import asyncio
import gzip
import json
import os
from dataclasses import replace

from support.fixed_session import FixedSession, article_report
from support.runs import run_ok

from kscope.app.app import KscopeApp
from kscope.app.export import export_report
from kscope.report.codec import report_from_dict
from kscope.report.request import RunRequest

NOW = 1_790_000_000.0


def fake_trace(path, launches: int) -> str:
    """A small gzipped chrome trace: export copies it byte for byte, whatever it holds."""
    events = [{"ph": "X", "name": f"kernel{i}", "ts": i, "dur": 1} for i in range(launches)]
    with gzip.open(path, "wt") as f:
        json.dump({"traceEvents": events}, f)
    return str(path)


def test_an_export_holds_the_report_its_traces_and_the_screenshot(tmp_path):
    runs = tmp_path / "app-traces"
    runs.mkdir()
    traces = {"eager": fake_trace(runs / "add_relu-add_relu-eager.json.gz", 2),
              "compiled": fake_trace(runs / "add_relu-add_relu-compiled.json.gz", 1)}
    report = replace(article_report(), traces=traces)
    folder = export_report(report, tmp_path / "exports", svg="<svg>kscope</svg>", now=NOW)
    assert folder.parent == tmp_path / "exports"
    assert sorted(os.listdir(folder)) == [
        "add_relu-add_relu-compiled.json.gz", "add_relu-add_relu-eager.json.gz",
        "report.json", "report.md", "screenshot.svg",
    ]
    for mode, path in traces.items():
        assert (folder / os.path.basename(path)).read_bytes() == open(path, "rb").read()
    exported = report_from_dict(json.loads((folder / "report.json").read_text()))
    # the exported Report names the copies beside it, not the app's private folder
    assert exported.traces == {m: os.path.basename(p) for m, p in traces.items()}
    assert exported.eager.launches == 2 and exported.compiled.launches == 1
    md = (folder / "report.md").read_text()
    assert "launches 2 → 1, traffic 20.0 MB → 12.0 MB" in md and "`cpp_fused_add_relu_0`" in md
    assert (folder / "screenshot.svg").read_text() == "<svg>kscope</svg>"
    assert [p for p in os.listdir(tmp_path / "exports") if p.startswith(".")] == []  # no staging left


def test_an_export_of_a_real_run_holds_traces_that_read_as_the_report_says(tmp_path):
    # what a worker writes under --trace-dir (the app's own trace folder), exported and read back
    # by kscope's trace reader: the seed's 2 launches eager and 1 compiled, per call
    from support.paths import SAMPLES

    from kscope.trace.file import trace_figures
    from kscope.trace.kernels import load_trace

    report = run_ok(SAMPLES / "add_relu.py", n=1000, trace_dir=str(tmp_path / "runs"))
    folder = export_report(report, tmp_path / "exports", now=NOW)
    exported = report_from_dict(json.loads((folder / "report.json").read_text()))
    for mode in ("eager", "compiled"):
        copy = folder / exported.traces[mode]
        assert copy.read_bytes() == open(report.traces[mode], "rb").read()
        figures = trace_figures(str(copy), load_trace(str(copy)))
        assert figures.launches == getattr(report, mode).launches == (2 if mode == "eager" else 1)
    assert [k.name for k in trace_figures(str(folder / exported.traces["compiled"]),
            load_trace(str(folder / exported.traces["compiled"]))).kernels] == ["cpp_fused_add_relu_0"]


def test_exports_never_replace_each_other_and_skip_traces_that_are_gone(tmp_path):
    gone = str(tmp_path / "gone-eager.json.gz")
    report = replace(article_report(), traces={"eager": gone})
    first = export_report(report, tmp_path, now=NOW)
    second = export_report(report, tmp_path, now=NOW)  # the same second
    assert first != second and second.name == first.name + "-2"
    assert sorted(os.listdir(second)) == ["report.json", "report.md"]
    assert json.loads((second / "report.json").read_text())["traces"] is None


def test_e_exports_what_is_on_screen_and_says_where(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = KscopeApp(RunRequest("/work/add_relu.py", None, "cpu", timeout=60.0, calls=5), session_factory=FixedSession(article_report()),
                    watch=False, export_dir="talk")

    async def scenario():
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.press("e")
            for _ in range(100):
                await pilot.pause(0.05)
                if app.state.startswith("exported"):
                    break
            return app.state

    state = asyncio.run(scenario())
    (folder,) = (tmp_path / "talk").iterdir()
    assert state == f"exported to talk{os.sep}{folder.name}{os.sep}"
    assert sorted(os.listdir(folder)) == ["report.json", "report.md", "screenshot.svg"]
    assert "cpp_fused_add_relu_0" in (folder / "screenshot.svg").read_text()
    assert json.loads((folder / "report.json").read_text())["compiled"]["launches"] == 1
