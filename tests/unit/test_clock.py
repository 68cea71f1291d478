"""A run's two clocks (worker.clock): the target's own time against --timeout, the compiles'
against --compile-timeout, on made-up instants (no process, no sleep)."""

from kscope.report.plan import PlanProgress
from kscope.worker.clock import RunClock


def test_time_inside_compiles_counts_against_the_compile_bound_only():
    clock = RunClock(timeout=10, compile_timeout=100, started=0.0)
    clock.phase(True, "graph 0/0", now=2.0)
    assert clock.own_s(now=50.0) == 2.0 and clock.compile_s(now=50.0) == 48.0
    assert clock.expired("t.py", now=50.0) is None  # 50 s in, 48 of them compiling: no timeout
    assert clock.left_s(now=50.0) == 52.0  # the compile's bound is the one that runs now
    clock.phase(False, now=60.0)
    assert clock.compiled_s == 58.0 and clock.left_s(now=60.0) == 8.0
    stopped = clock.expired("t.py", now=70.5)
    assert stopped.type == "Timeout" and stopped.stage == "timeout" and stopped.file == "t.py"
    assert stopped.message.startswith("stopped after 10 s (--timeout) (besides 58.0 s compiling)")


def test_the_compile_bound_says_what_was_compiling_and_how_far():
    clock = RunClock(timeout=10, compile_timeout=30, started=0.0)
    clock.phase(True, "graph 0/0", now=1.0)
    clock.phase(False, now=11.0)
    clock.phase(True, "the backward of graph 0/0", now=12.0)
    clock.progress = PlanProgress(graphs_seen=2, graphs_done=1, kernels_compiled=3, kernels_total=12)
    assert clock.expired(None, now=31.0) is None  # 10 + 19 s compiling
    stopped = clock.expired(None, now=32.5)
    assert stopped.type == "CompileTimeout"
    assert stopped.message == ("stopped after 30 s compiling (--compile-timeout): torch.compile was still compiling "
                               "the backward of graph 0/0 (2 compiles started; 3/12 kernels of its plan compiled)")
    assert clock.what == "the backward of graph 0/0" and clock.compile_s(now=20.0) == 18.0


def test_a_compile_that_ends_twice_or_starts_twice_is_counted_once():
    clock = RunClock(timeout=10, compile_timeout=30, started=0.0)
    clock.phase(False, now=1.0)  # an end with no start: nothing
    clock.phase(True, "graph 0/0", now=2.0)
    clock.phase(True, "graph 1/0", now=3.0)  # nested: dynamo says one start for the nest
    clock.phase(False, now=5.0)
    assert clock.compiles == 1 and clock.compile_s(now=9.0) == 3.0 and clock.compiling_since is None
