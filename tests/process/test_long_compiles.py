"""A long compile is not a hang (issue 34): --timeout bounds the target's own code, --compile-timeout
the compiles. A real process, a real worker, real torch.

The slow compile is made by torch.compile itself, at no CPU cost: a custom op whose fake (meta)
implementation sleeps. Dynamo runs the fake to learn the output's shape while it traces (once for
this graph); the eager calls run the real op, which is fast. So the compile takes more than
COMPILE_SLEEP_S on any machine, and the target's own code milliseconds; what kscope itself spends
outside the compile (its eager profile, its timing, its accounting passes) counts against
--timeout: 3.2-5.5 s measured beside other tests, hence TIMEOUT_S.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from support.moments import mark, moment
from support.paths import kscope_cmd, write_target

pytestmark = pytest.mark.slow

COMPILE_SLEEP_S = 12.0
TIMEOUT_S = 10.0
SLOW_TO_COMPILE = f"""
import time
from pathlib import Path

import torch


@torch.library.custom_op("kscope_test::doubled", mutates_args=())
def doubled(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@doubled.register_fake
def _(x):
    {mark(".tracing")}  # dynamo is tracing: compiling
    time.sleep({COMPILE_SLEEP_S})  # only while torch.compile traces
    return torch.empty_like(x)


def f(x):
    return doubled(x + 1).relu()


def inputs(device):
    return (torch.randn(1000, device=device),)
"""


def kscope_json(path, *flags) -> tuple[dict, float, float]:
    """kscope's report, the seconds it took, and when it exited (time.monotonic)."""
    start = time.monotonic()
    out = subprocess.run([*kscope_cmd(), str(path), "--json", "--device", "cpu", *flags],
                         capture_output=True, text=True, timeout=300)
    end = time.monotonic()
    return json.loads(out.stdout), end - start, end


def test_a_compile_longer_than_the_timeout_runs_to_the_end(tmp_path):
    report, took, _ = kscope_json(write_target(tmp_path, SLOW_TO_COMPILE), "--timeout", str(TIMEOUT_S))
    assert report["errors"] == []
    compiled = report["compiled"]
    # the compile alone outlasted --timeout, and the run went on: the fused add, the op, the ReLU
    assert compiled["compile_s"] > COMPILE_SLEEP_S > TIMEOUT_S
    assert compiled["launches"] == 3 and report["eager"]["launches"] == 3
    print(f"compile {compiled['compile_s']:.1f} s under --timeout {TIMEOUT_S:g}: kscope took {took:.1f} s")


def test_a_compile_past_its_own_bound_is_stopped_and_says_what_was_compiling(tmp_path):
    bound = 3.0
    path = write_target(tmp_path, SLOW_TO_COMPILE)
    report, took, ended = kscope_json(path, "--compile-timeout", str(bound))
    (error,) = report["errors"]
    assert error["stage"] == "timeout" and error["type"] == "CompileTimeout"
    assert error["message"].startswith(f"stopped after {bound:g} s compiling (--compile-timeout)")
    assert "torch.compile was still compiling graph 0/0" in error["message"]
    assert report["eager"]["launches"] == 3 and report["compiled"] is None  # the eager half stays
    since = ended - moment(path, ".tracing")  # from the fake's first call (dynamo tracing) to kscope's exit
    print(f"--compile-timeout {bound:g}: kscope exited after {took:.1f} s (torch's start-up included), "
          f"{since:.2f} s after dynamo began tracing")
    # The compile clock starts as dynamo starts the frame, a moment before it calls the fake: from
    # the fake's first call to kscope's exit, 2.94-3.03 s measured; a second either way allowed
    # (issue 38: the stop's time was not checked at all; the 12 s sleep would end the compile anyway)
    assert bound - 1 <= since <= bound + 1, f"{since:.2f} s from the compile under way to the exit"
