"""The headless CLI as a user runs it: a real process, a real worker."""

import json
import subprocess
import time

import pytest
from support.moments import mark, moment
from support.paths import SAMPLES, kscope_cmd, line_of, write_target

pytestmark = pytest.mark.slow


F32 = 4


def kscope(*args, timeout=120):
    return subprocess.run([*kscope_cmd(), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def test_once_prints_tables_and_the_summary_line():
    out = kscope(SAMPLES / "add_relu.py", "--once", "--device", "cpu")
    assert out.returncode == 0, out.stderr
    assert "launches 2 → 1, traffic 20.0 MB → 12.0 MB, −40%" in out.stdout
    assert "cpp_fused_add_relu_0" in out.stdout


def test_user_prints_go_to_stderr_with_json(tmp_path):
    path = write_target(
        tmp_path,
        "import torch\ndef f(x):\n    print('hello from user code')\n    return x + 1\n"
        "def inputs(device):\n    return torch.ones(4, device=device)\n",
    )
    out = kscope(path, "--json", "--device", "cpu")
    assert out.returncode == 0
    json.loads(out.stdout)
    # stdout parsed as JSON above, so nothing else is on it; the print went to stderr
    assert "hello from user code" in out.stderr
    assert "USDT" not in out.stderr  # torch's profiler chatter is filtered


HANG = f"""
import time
from pathlib import Path

import torch

{mark(".loaded")}  # the worker loads the file


def f(x):
    while True:
        x = x + 1


def inputs(device):
    return torch.ones(4, device=device)
"""

TIMEOUT_S = 3.0
STARTUP_S = 15.0
"""From kscope's start to the target's file loaded: Python, kscope, a fresh worker's Python and torch
(docs/usage.md). Measured 5.8-9.4 s on 2026-12-03 (load 1.8-3.0 from other work; 83a9fdd, the
commit that wrote 5.5-6.6 s in all, took as long as today's code that day): 1.6x the slowest."""


@pytest.mark.quiet
def test_timeout_stops_a_hang_and_reports_it(tmp_path):
    """--timeout bounds the run from the moment the worker has it, kscope's own steps included, so
    the target's file is loaded a little (0.1-0.5 s here) into its 3 s: from the file's load to
    kscope's exit, 2.5-2.9 s measured (issue 38: only `< 10 s` in all was checked). Both sides
    bounded, one second each way; the start-up before it, by STARTUP_S."""
    path = write_target(tmp_path, HANG)
    start = time.monotonic()
    out = kscope(path, "--json", "--device", "cpu", "--timeout", str(TIMEOUT_S))
    took = time.monotonic() - start
    assert out.returncode == 1
    report = json.loads(out.stdout)
    assert report["errors"][0]["stage"] == "timeout"
    loaded = path.with_suffix(".loaded")
    assert loaded.exists(), f"stopped before the target's file was loaded: {report['errors'][0]['message']}"
    startup = moment(path, ".loaded") - start
    timed = took - startup
    print(f"--timeout 3: kscope exited after {took:.1f} s: {startup:.1f} s to the target's load, {timed:.2f} s after it")
    assert TIMEOUT_S - 1 <= timed <= TIMEOUT_S + 1, f"{timed:.2f} s from the target's load to the exit"
    assert startup <= STARTUP_S, f"{startup:.1f} s from kscope's start to the target's load"


def test_a_crashing_target_is_reported(tmp_path):
    path = write_target(
        tmp_path,
        "import os, torch\ndef f(x):\n    os._exit(7)\ndef inputs(device):\n    return torch.ones(4, device=device)\n",
    )
    out = kscope(path, "--json", "--device", "cpu")
    assert out.returncode == 1
    (err,) = json.loads(out.stdout)["errors"]
    assert err["stage"] == "crash" and "status 7" in err["message"]


def test_usage_errors_are_one_line_without_traceback(tmp_path):
    missing = kscope(tmp_path / "nope.py", "--once")
    assert missing.returncode == 2 and "no such file" in missing.stderr
    assert "Traceback" not in missing.stderr and len(missing.stderr.strip().splitlines()) == 1
    directory = kscope(tmp_path, "--once")
    assert directory.returncode == 2 and "is a directory" in directory.stderr
    assert len(directory.stderr.strip().splitlines()) == 1


def test_unknown_function_and_several_candidates(tmp_path):
    path = write_target(tmp_path, "def f(x):\n    return x\n\ndef g(x):\n    return x\n")
    several = kscope(path, "--once", "--device", "cpu")
    assert several.returncode == 1 and "several candidates (f, g)" in several.stderr
    assert len(several.stderr.strip().splitlines()) == 1 and "Traceback" not in several.stderr
    unknown = kscope(f"{path}:h", "--once", "--device", "cpu")
    assert unknown.returncode == 1 and "no target named 'h'" in unknown.stderr


def test_error_json_names_file_and_line(tmp_path):
    path = write_target(
        tmp_path,
        "import torch\ndef f(x):\n    return x.view(3, 3)\ndef inputs(device):\n    return torch.ones(4, device=device)\n",
    )
    out = kscope(path, "--json", "--device", "cpu")
    assert out.returncode == 1
    (err,) = json.loads(out.stdout)["errors"]
    assert err["stage"] == "eager" and err["type"] == "RuntimeError"
    assert err["file"] == str(path) and err["line"] == line_of(path, "x.view(3, 3)")


# --- --option and --sweep ---------------------------------------------------------------------


def test_an_unknown_option_is_a_usage_error_naming_the_closest():
    done = kscope(SAMPLES / "add_relu.py", "--once", "--option", "freezng=True")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "kscope: --option freezng: inductor has no such option; did you mean freezing?"
    ]


def test_once_prints_the_json_the_readme_documents():
    out = subprocess.run(
        kscope_cmd() + [str(SAMPLES / "add_relu.py"), "--once", "--json", "--sizes", "100,1e3"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    sweep = json.loads(out.stdout)["sweep"]
    assert {"points", "crossover_n", "recompiles", "stopped"} <= set(sweep)
    mode_keys = {"launches", "bytes_read", "bytes_written", "kernel_time_us", "kernel_time_us_range", "call_time_us",
                 "achieved_gbps"}
    for p in sweep["points"]:
        assert mode_keys <= set(p["eager"]) and mode_keys | {"kernels"} <= set(p["compiled"])
        assert p["compiled"]["bytes_read"] == 2 * F32 * p["n"]
    assert [p["n"] for p in sweep["points"]] == [100, 1000] and sweep["recompiles"] == 1


@pytest.mark.slow
def test_once_prints_a_table_and_the_plot():
    out = subprocess.run(
        kscope_cmd() + [str(SAMPLES / "add_relu.py"), "--once", "--sweep", "--sizes", "100,1e3"], capture_output=True, text=True, timeout=300,
        env={**__import__("os").environ, "COLUMNS": "100"},
    )
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "20 → 12" in text  # bytes per element, eager → compiled
    assert "wall time per call, log-log" in text and "achieved GB/s" in text
    assert "1 recompile" in text
