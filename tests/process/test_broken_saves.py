"""Broken saves in the live app, on a real worker: a syntax error, an exception, a bad target, a
bad input, each names its file and line, keeps the last figures on screen marked stale, and the
next good save recovers."""

from __future__ import annotations

import pytest
from support.live import GOOD, OP, Live, body, drive, line_in

pytestmark = pytest.mark.slow


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
        assert live.table("eager").mode == report.eager
        # inductor's plan of it, if this compile made one (a graph from inductor's cache has none),
        # stays on screen marked stale (docs/plan.md); else the compiled table is empty
        compiled = live.table("compiled")
        if report.plan is not None:
            assert compiled.mode.kernels == report.plan.kernels and "stale" in str(compiled.border_subtitle)
        else:
            assert compiled.mode is None
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
