"""The whole suite, as CI and the README run it: `python tests/run.py [--quick] [pytest arguments]`.

--quick: the quick tier, for the edit-test loop: the tests not marked `slow`, which start no kscope
process, no browser and no terminal (tests/support/starts.py fails any test that starts one
unmarked, in the whole suite too, so the mark stays true), on a kscope cache kept between quick
runs (KEPT_CACHE). CI runs the whole suite, on a new cache.

Two phases. First every test that times nothing against the clock, on one pytest-xdist worker
more than there are cores (workers()); then the tests marked `quiet` (a verdict by time, a bound in seconds,
the event loop's stalls) one at a time, on a machine no other test is loading. Each phase prints
its slowest tests. A plain `python -m pytest` still runs everything in one process, and
`pytest -n auto` alone keeps the quiet tests alone too (tests/support/quiet.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from support.quiet import lock_files


def workers() -> int:
    """One more than the cores: a process test spends much of its time waiting on other processes
    (a worker starting, a quit, a browser), which leaves a core idle (docs/tests.md)."""
    return cores() + 1


def cores() -> int:
    """The cores this process may use, as pytest-xdist's `-n auto` counts them (its
    PYTEST_XDIST_AUTO_NUM_WORKERS first; then the CPU affinity, which taskset or a container limits)."""
    told = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if told:
        return int(told)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


PARALLEL_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}
"""The parallel phase's environment, unless the user set these: three test processes share two
cores, and OpenMP's threads (torch's, inductor's C++ kernels') spin between parallel regions on a
core another test needs; passive, they sleep. Nothing any of these tests checks depends on it;
the quiet phase runs with OpenMP's default, as kscope runs for a user. Measured: three runs of
four engine test modules at once, 54 s -> 46 s, 18% less CPU."""


QUICK = "not slow"
"""--quick's selection, within each phase (support/starts.py)."""


KEPT_CACHE = Path(__file__).resolve().parent.parent / ".kscope-test-cache"
"""--quick's kscope cache (traffic store, inductor's kernels and precompiled header), kept between
runs in the checkout (git ignores it): the engine tests' in-process compiles are most of the quick
tier's CPU, and a rerun of an edit-test loop finds them compiled. The whole suite, as CI and the
README run it, starts from a new cache each time, as a clean clone does. Measured 2026-12-04 on
2 cores, 431 tests: 188-213 s from a new cache, 110 s from the kept one (docs/tests.md)."""


def suite_cache(quick: bool) -> str:
    """The kscope cache both phases share: the user's KSCOPE_TEST_CACHE_DIR, else --quick's kept
    one, else a new folder."""
    told = os.environ.get("KSCOPE_TEST_CACHE_DIR")
    if told:
        return told
    if quick:
        KEPT_CACHE.mkdir(exist_ok=True)
        return str(KEPT_CACHE)
    return tempfile.mkdtemp(prefix="kscope-tests-")  # removed by main() after both phases


NO_TESTS = 5
"""pytest's exit status when a phase selected nothing (a path given holds no quiet test, say)."""


def _split_marks(argv: list[str]) -> tuple[str | None, list[str]]:
    """The user's `-m EXPR` (or `-mEXPR`), if any, and the other arguments."""
    rest, marks, args = [], None, iter(argv)
    for arg in args:
        if arg == "-m":
            marks = next(args, "")
        elif arg.startswith("-m") and not arg.startswith("--"):
            marks = arg[2:]
        else:
            rest.append(arg)
    return marks, rest


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    marks, argv = _split_marks([a for a in argv if a != "--quick"])
    narrowed = [m for m in (QUICK if quick else None, marks) if m]
    within = "".join(f" and ({m})" for m in narrowed)  # a user's -m narrows each phase, not replaces it
    run = uuid.uuid4().hex  # pytest-xdist's id of the parallel phase: its lock files are removed after it
    # one kscope cache for both phases: its inductor cache (precompiled header, kernels) is built once
    told = bool(os.environ.get("KSCOPE_TEST_CACHE_DIR"))  # as suite_cache reads it: an empty one is not a folder
    os.environ["KSCOPE_TEST_CACHE_DIR"] = cache = suite_cache(quick)
    phases = [
        ("tests that time nothing, in parallel",
         ["-n", str(workers()), "--dist", "loadgroup", "--testrunuid", run, "-m", f"not quiet{within}"],
         {**os.environ, **{k: v for k, v in PARALLEL_ENV.items() if k not in os.environ}}),
        ("tests that time something, one at a time", ["-m", f"quiet{within}"], None),
    ]
    statuses, started = [], time.perf_counter()
    for title, flags, env in phases:
        print(f"=== tests/run.py: {title} ===", flush=True)
        statuses.append(subprocess.call([sys.executable, "-m", "pytest", *flags, *argv], env=env))
        for path in lock_files(run):
            path.unlink(missing_ok=True)
    if not told and not quick:  # a new cache of this run's (its compiled kernels: hundreds of MB a run, left in /tmp before)
        shutil.rmtree(cache, ignore_errors=True)
    tier = "the quick tier, " if quick else ""
    print(f"=== tests/run.py: {tier}both phases in {time.perf_counter() - started:.0f} s; exit statuses {statuses} ===")
    ran = [s for s in statuses if s != NO_TESTS]
    failed = [s for s in ran if s != 0]  # a phase killed by a signal has a negative status
    return (failed[0] if failed[0] > 0 else 1) if failed else 0 if ran else NO_TESTS


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
