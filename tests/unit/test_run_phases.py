"""tests/run.py's exit status: the suite fails when either phase fails, a phase killed by a signal
(a negative status: a segfault) included; a phase that selected nothing does not fail it."""

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
    monkeypatch.setattr(run.subprocess, "call", lambda argv: commands.append(argv) or next(phases))
    assert run.main(["tests/unit"]) == status
    assert [c[-3:] for c in commands] == [["-m", "not quiet", "tests/unit"], ["-m", "quiet", "tests/unit"]]


def test_a_users_marks_narrow_each_phase(monkeypatch):
    commands = []
    monkeypatch.setattr(run.subprocess, "call", lambda argv: commands.append(argv) or 0)
    assert run.main(["-m", "slow", "tests/process"]) == 0
    assert [c[-3:] for c in commands] == [["-m", "not quiet and (slow)", "tests/process"],
                                          ["-m", "quiet and (slow)", "tests/process"]]
