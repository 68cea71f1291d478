"""tests/run.py's exit status: the suite fails when either phase fails, a phase killed by a signal
(a negative status: a segfault) included; a phase that selected nothing does not fail it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import run


@pytest.mark.parametrize("statuses, status", [
    ((0, 0), 0),
    ((0, -11), 1),  # the quiet phase crashed: the suite failed
    ((1, 0), 1),
    ((0, 2), 2),
    ((5, 0), 0),  # a path with no test of one phase
    ((5, 5), 5),
])
def test_the_suite_fails_when_a_phase_fails(monkeypatch, statuses, status):
    phases = iter(statuses)
    commands = []
    monkeypatch.setattr(run.subprocess, "call", lambda argv, env: commands.append(argv) or next(phases))
    assert run.main(["tests/unit"]) == status
    assert [c[-3:] for c in commands] == [["-m", "not quiet", "tests/unit"], ["-m", "quiet", "tests/unit"]]
    assert commands[0][-9:-5] == ["-n", str(run.workers()), "--dist", "loadgroup"] and commands[0][-5] == "--testrunuid"
    assert run.workers() == len(os.sched_getaffinity(0)) + 1  # one more than the cores it may use


def test_a_users_marks_narrow_each_phase(monkeypatch):
    commands = []
    monkeypatch.setattr(run.subprocess, "call", lambda argv, env: commands.append(argv) or 0)
    assert run.main(["-m", "slow", "tests/process"]) == 0
    assert [c[-3:] for c in commands] == [["-m", "not quiet and (slow)", "tests/process"],
                                          ["-m", "quiet and (slow)", "tests/process"]]


@pytest.mark.parametrize("users", [None, "ACTIVE"])
def test_the_parallel_phase_lets_openmp_sleep_and_the_quiet_phase_runs_as_kscope_does(monkeypatch, users):
    if users is None:
        monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    else:
        monkeypatch.setenv("OMP_WAIT_POLICY", users)
    envs = []
    monkeypatch.setattr(run.subprocess, "call", lambda argv, env: envs.append(env) or 0)
    assert run.main(["tests/unit"]) == 0
    parallel, quiet = envs
    assert parallel["OMP_WAIT_POLICY"] == (users or "PASSIVE")  # a user's own setting wins
    assert parallel["PATH"] == os.environ["PATH"]  # the rest of the environment is the user's
    assert quiet is None  # the user's environment, untouched


def test_tests_sharing_a_module_fixture_go_to_one_xdist_worker():
    """conftest's xdist_group marks, read by pytest-xdist under tests/run.py's --dist loadgroup: a
    module-scoped run that several tests read happens once, not once on each worker. The ids xdist
    schedules (no test run: --setup-plan) carry the group; tests of one group go to one worker."""
    module = Path(__file__).parent.parent / "process" / "test_distributed.py"
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "--setup-plan", "-v", "-p", "no:cacheprovider",
         str(module)], capture_output=True, text=True, timeout=120,
    )
    assert out.returncode in (0, 5), out.stdout + out.stderr
    ids = {line.split("::")[1].strip() for line in out.stdout.splitlines() if "test_distributed.py::" in line}
    for name in ("test_allreduce_top_level_is_rank_0", "test_folder_of_rank_traces",
                 "test_the_ddp_sample_does_what_its_docstring_says_on_each_rank",
                 "test_ddp_backward_all_reduces_the_gradients_in_one_bucket"):
        assert f"{name}@test_distributed" in ids, ids
    assert "test_a_rank_that_raises" in ids  # a run of its own: free to go to any worker


@pytest.mark.parametrize("argv, within", [
    (["--quick"], " and (not slow)"),
    (["--quick", "-m", "not browser", "tests/app"], " and (not slow) and (not browser)"),
    (["tests/app", "--quick", "-mapp"], " and (not slow) and (app)"),
])
def test_the_quick_tier_leaves_out_the_slow_tests_in_each_phase(monkeypatch, argv, within):
    commands = []
    monkeypatch.setattr(run.subprocess, "call", lambda argv, env: commands.append(argv) or 0)
    assert run.main(argv) == 0
    paths = [a for a in argv if a.startswith("tests/")]
    assert [_from_marks(c) for c in commands] == [["-m", f"not quiet{within}", *paths],
                                                  ["-m", f"quiet{within}", *paths]]
    assert not any("--quick" in c for c in commands)  # no pytest option of that name


def test_without_quick_no_test_is_left_out(monkeypatch):
    commands = []
    monkeypatch.setattr(run.subprocess, "call", lambda argv, env: commands.append(argv) or 0)
    assert run.main([]) == 0
    assert [_from_marks(c) for c in commands] == [["-m", "not quiet"], ["-m", "quiet"]]


def _from_marks(command: list[str]) -> list[str]:
    """A phase's pytest command from its (last) -m on: the marks, then the user's arguments."""
    return command[len(command) - 1 - command[::-1].index("-m"):]


def test_the_quick_tier_keeps_its_cache_and_the_whole_suite_starts_from_a_new_one(monkeypatch):
    seen = []
    monkeypatch.setattr(run.subprocess, "call",
                        lambda argv, env: seen.append(os.environ["KSCOPE_TEST_CACHE_DIR"]) or 0)
    for argv in (["--quick"], ["--quick", "tests/unit"], [], []):
        monkeypatch.delenv("KSCOPE_TEST_CACHE_DIR", raising=False)  # restored after the test
        assert run.main(argv) == 0
    quick, whole = seen[:4], seen[4:]
    assert quick == [str(run.KEPT_CACHE)] * 4  # both phases of both quick runs: one kept folder
    assert whole[0] == whole[1] != whole[2] == whole[3]  # each whole run: a new folder for its phases
    assert not {whole[0], whole[2]} & {str(run.KEPT_CACHE)}
    assert not any(os.path.exists(folder) for folder in whole)  # removed after the run (/tmp filled up before)
    assert run.KEPT_CACHE.is_dir()  # the quick tier's is kept
    ignored = subprocess.run(["git", "check-ignore", "-q", str(run.KEPT_CACHE / "x")], cwd=run.KEPT_CACHE.parent)
    assert ignored.returncode == 0  # never committed, never carried as the project's files
    monkeypatch.setenv("KSCOPE_TEST_CACHE_DIR", "/somewhere/of/mine")
    seen.clear()
    assert run.main(["--quick"]) == 0 and seen == ["/somewhere/of/mine"] * 2  # the user's folder wins
