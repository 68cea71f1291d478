"""A short soak of the live app (benchmarks/soak.py): every good and broken version of the sample
saved once, each screen checked against what was saved. It is here so that a change of the
Report (lines became Places in schema 9) that leaves the soak's checks behind fails the suite
instead of rotting them unseen, as it once did."""

from __future__ import annotations

import importlib.util
import os
import sys
from argparse import Namespace
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")]

SOAK = Path(__file__).resolve().parents[2] / "benchmarks" / "soak.py"


def _soak_module():
    spec = importlib.util.spec_from_file_location("kscope_soak", SOAK)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.quiet  # each save races --timeout: the good ones must finish inside it, the endless loop not
def test_a_short_soak_shows_every_save_as_saved(monkeypatch):
    soak = _soak_module()
    monkeypatch.setenv("KSCOPE_CACHE_DIR", os.environ.get("KSCOPE_CACHE_DIR", ""))  # the soak sets it: put back after
    # the suite's kscope cache, warm (a new one built its precompiled header first: ~25 s of CPU)
    run = soak.Soak(Namespace(saves=len(soak.CYCLE), timeout=5.0, cache=os.environ["KSCOPE_CACHE_DIR"]))
    status = run.run()
    assert run.crashes == []
    assert run.mismatches == []  # a good save's screen, or a broken one's, not as saved
    assert run.left == [] and run.beside == ["add_relu.py"]
    assert set(run.latency) == {v.name for v in soak.CYCLE} == {v.name for v in soak.GOOD + soak.BROKEN}
    assert run.restarts >= 3  # the endless loop, os._exit and the segfault each cost a worker
    assert status == 0
