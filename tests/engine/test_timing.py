"""Times: median and spread, kernel time and call time, a verdict only outside the noise.

The rules are checked on fixed samples; the engine is checked on real torch for what must hold
whatever the machine's load, and for verdicts far past the noise: one op against the same op eight
times, either way round; the seed at 100 elements, compiled 4-5x slower per call; eight pointwise
ops over 2M floats, compiled several times faster. A verdict that read "busy" is timed again, never
skipped (support/answered.py). Beside a busy loop on every core the verdict is "busy"; beside
loops that only run when the timed calls leave a core free, it is not, though the machine's CPU
pressure (what decided "busy" before) says so. Verdicts near the noise floor are measured by
benchmarks/timing_stability.py, not asserted here.
"""

from collections import Counter

import pytest
import torch
from support.answered import answered, busy_loops, cpus
from support.paths import write_target

from kscope.engine.measure.cpu_wait import WaitShare
from kscope.engine.measure.timing import (
    BUSY,
    FLOOR_ROUNDS,
    NOISE_FLOOR,
    Samples,
    Timed,
    per_call_kernel_us,
    retimed,
    speedup,
    time_both,
    verdict,
)
from kscope.engine.run import run
from kscope.report.codec import report_from_dict, report_to_dict
from kscope.report.model import Kernel, ModeResult, Report
from kscope.report.request import RunRequest
from kscope.trace.kernels import TraceSummary


def test_spread_is_the_middle_half_and_the_median_its_centre():
    s = Samples((10.0, 1.0, 3.0, 2.0, 4.0))
    assert s.median == 3.0
    assert s.spread == (2.0, 4.0)
    assert Samples((5.0,)).spread == (5.0, 5.0)


def test_faster_or_slower_only_when_the_middle_half_of_the_paired_ratios_is_past_1():
    eager = Samples((100.0, 104.0, 98.0, 102.0, 101.0))
    assert verdict(eager, Samples((50.0, 52.0, 51.0, 49.0, 50.0))) == "faster"
    assert verdict(eager, Samples((200.0, 210.0, 190.0, 205.0, 199.0))) == "slower"
    # round by round 0.97, 1.03, 0.99, 1.02, 0.99: the middle half (0.99-1.02) holds 1
    assert verdict(eager, Samples((103.0, 101.0, 99.0, 100.0, 102.0))) == "same within noise"
    # compiled 5% faster in every round: consistent, but under the noise floor (10%)
    assert verdict(eager, Samples(tuple(x / 1.05 for x in eager.values))) == "same within noise"
    # one wild outlier moves neither the median nor the middle half
    assert verdict(Samples((100.0, 101.0, 99.0, 100.0, 5000.0)), Samples((50.0, 51.0, 49.0, 50.0, 52.0))) == "faster"


def test_load_that_changes_between_rounds_hits_both_calls_of_a_round():
    # the machine slows down 16x over the run; compiled is 25% faster in every round
    eager = Samples((100.0, 200.0, 400.0, 800.0, 1600.0))
    compiled = Samples(tuple(x / 1.25 for x in eager.values))
    low, high = compiled.spread
    assert eager.spread[0] < high  # the two modes' spreads overlap...
    assert verdict(eager, compiled) == "faster"  # ...but each pair says the same


def test_no_faster_or_slower_is_claimed_while_other_work_competed_for_the_cpu():
    e, c = Samples((100.0, 101.0, 99.0)), Samples((50.0, 51.0, 49.0))
    trace = TraceSummary("cpu")
    quiet = speedup(Timed(e, c, e, c, 0.01, trace, ()))
    busy = speedup(Timed(e, c, e, c, 0.6, trace, ()))
    unknown = speedup(Timed(e, c, e, c, None, trace, ()))  # no pressure information: the rule alone
    assert (quiet.verdict, unknown.verdict, busy.verdict) == ("faster", "faster", "busy")
    assert busy.ratio == quiet.ratio == 2.0 and busy.text() == "can't tell: CPU busy"
    assert quiet.text() == "2.0× faster"


def test_rows_are_scaled_to_add_up_to_the_median():
    mode = ModeResult(2, 10, 10, 300.0, (Kernel("aten::add", 1, 200.0, 8, 4), Kernel("aten::relu", 1, 100.0, 4, 4)))
    timed = retimed(mode, Samples((90.0, 150.0, 120.0)), Samples((170.0, 180.0, 160.0)))
    assert timed.kernel_time_us == 120.0 and timed.kernel_time_us_range == (105.0, 135.0)
    assert [k.time_us for k in timed.kernels] == [80.0, 40.0]  # 2:1, as profiled
    assert (timed.call_time_us, timed.kernel_samples, timed.call_samples) == (170.0, 3, 3)
    d = report_to_dict(Report("f.py", "f", eager=timed))["eager"]
    assert d["kernel_time_us_range"] == [105.0, 135.0] and d["call_time_us"] == 170.0
    assert d["repetitions"] == {"kernel": 3, "call": 3}


def test_each_rounds_kernel_time_is_the_launches_of_its_own_call_alone():
    """Eager and compiled calls alternate inside one profile: a mode's sample of a round is the sum
    of the launches inside that call's marker, never the other mode's (adding the compiled call's
    time to each eager sample fails here). Two plain functions, no compile: milliseconds."""
    a = torch.randn(1000)
    t = time_both(lambda: a + 1, lambda: (a * 2, a * 3, a * 4), torch.device("cpu"), budget_s=0.01)
    rounds = [int(label[1:]) for label in t.labels if label.startswith("e")]
    assert rounds == list(range(len(rounds))) and len(t.labels) == 2 * len(rounds) >= 2 * FLOOR_ROUNDS
    assert Counter((x.segment, x.name) for x in t.trace.launches) == Counter(
        {**{(f"e{i}", "aten::add"): 1 for i in rounds}, **{(f"c{i}", "aten::mul"): 3 for i in rounds}})
    per_call = per_call_kernel_us(t.trace)
    assert list(t.eager_kernel.values[:len(rounds)]) == [per_call[f"e{i}"] for i in rounds]
    assert list(t.compiled_kernel.values[:len(rounds)]) == [per_call[f"c{i}"] for i in rounds]
    assert all(v > 0 for v in t.eager_kernel.values + t.compiled_kernel.values)


@pytest.mark.quiet
def test_call_time_holds_what_the_call_does_and_kernel_time_only_its_kernels(tmp_path):
    # a cost kscope does not construct: 20 ms of sleep between two ops, in both modes (dynamo
    # leaves time.sleep to Python, between two graphs). Long enough that the compiled call's own
    # cost (two graphs and a resume frame: measured 0.45-0.55 ms a call here) stays inside the
    # noise floor: with 3 ms of sleep the ratios' upper quartile ran 0.95-1.0 here, and CI read "slower".
    path = write_target(
        tmp_path,
        """
        import time

        import torch

        def slow(x):
            y = x * 2
            time.sleep(0.02)
            return y + 1

        def inputs(device):
            return (torch.randn(1000, device=device),)
        """,
    )
    r = answered(lambda: run(RunRequest(str(path), device="cpu", calls=2)), _verdict_and_wait)
    assert not r.errors, r.errors
    for mode in (r.eager, r.compiled):
        low, high = mode.kernel_time_us_range
        assert 0 < low <= mode.kernel_time_us <= high
        assert mode.kernel_samples >= FLOOR_ROUNDS and mode.call_samples >= FLOOR_ROUNDS
        assert mode.call_time_us_range[0] <= mode.call_time_us <= mode.call_time_us_range[1]
        assert mode.call_time_us >= 20_000  # the sleep is in every call
        assert mode.kernel_time_us < 1000  # and in no kernel: two ops over 1000 floats
    s = r.speedup
    # the sleep is what both calls pay: no difference past the noise, whatever the kernels say
    assert s.verdict == "same within noise"
    assert 1 / (1 + NOISE_FLOOR) < s.ratio < 1 + NOISE_FLOOR
    d = report_to_dict(r)["speedup"]
    assert d["verdict"] == s.verdict and d["compares"].startswith("call time")
    again = report_to_dict(report_from_dict(report_to_dict(r)))
    for mode in ("eager", "compiled"):
        for key in ("kernel_time_us", "kernel_time_us_range", "call_time_us", "call_time_us_range", "repetitions"):
            assert again[mode][key] == report_to_dict(r)[mode][key]
    assert again["speedup"] == d


def test_the_verdict_is_what_a_call_costs_not_what_its_kernels_take():
    # kernels 20x faster compiled, but its call (guards, wrapper) costs 4x eager's: slower
    e_kernel, c_kernel = Samples((4.0, 4.2, 3.9)), Samples((0.2, 0.21, 0.19))
    e_call, c_call = Samples((4.6, 4.7, 4.5)), Samples((21.0, 20.0, 22.0))
    s = speedup(Timed(e_kernel, c_kernel, e_call, c_call, 0.0, TraceSummary("cpu"), ()))
    assert (s.verdict, s.kernel_verdict) == ("slower", "faster")
    assert s.ratio == 4.6 / 21.0 and s.kernel_ratio == 4.0 / 0.2


def _verdict_of(tmp_path, body: str, n: int):
    path = write_target(tmp_path, f"""
        import torch

        def f(a, b):
            return {body}

        def inputs(device):
            return torch.randn({n}, device=device), torch.randn({n}, device=device)
        """)
    r = answered(lambda: run(RunRequest(str(path), device="cpu", calls=2)), _verdict_and_wait)
    assert not r.errors, r.errors
    return r


def _verdict_and_wait(r) -> tuple[str, float | None]:
    assert not r.errors, r.errors
    return r.speedup.verdict, r.speedup.cpu_waiting


@pytest.mark.quiet
def test_at_100_elements_the_compiled_call_costs_more_though_its_kernel_is_faster(tmp_path):
    # the article's seed at n = 100: the fused kernel takes a fraction of eager's two ops, but
    # dynamo's guards and the wrapper cost more than both
    r = _verdict_of(tmp_path, "(a + b).relu()", 100)
    assert r.compiled.call_time_us > r.eager.call_time_us * (1 + NOISE_FLOOR)
    assert r.compiled.kernel_time_us < r.eager.kernel_time_us
    assert r.speedup.kernel_verdict == "faster"
    assert r.speedup.verdict == "slower"  # kernel times deciding would say "faster"


@pytest.mark.quiet
def test_where_the_compiled_call_costs_less_the_verdict_says_faster(tmp_path):
    # eight passes over 2M floats eager, one fused pass compiled
    r = _verdict_of(tmp_path, "((((a * b + a).sin() * b).cos() + a).exp() - b).abs()", 2_000_000)
    assert r.compiled.call_time_us * (1 + NOISE_FLOOR) < r.eager.call_time_us
    assert r.speedup.verdict == "faster"


def _sin(times: int, n: int = 2_000_000):
    """A call that computes sin over n floats `times` times (on all the cores torch uses)."""
    a = torch.randn(n)
    out = torch.empty_like(a)

    def call():
        for _ in range(times):
            torch.sin(a, out=out)

    return call


def _timed_verdict(t) -> tuple[str, float | None]:
    return speedup(t).verdict, t.waiting


@pytest.mark.quiet
def test_one_op_against_the_same_op_eight_times_reads_the_right_way_round():
    # time_both(eager, compiled): the second function doing 8x the work is "slower", and "faster"
    # the other way round; no compile, so a busy timing costs a second to take again
    once, eight = _sin(1), _sin(8)
    cpu = torch.device("cpu")
    for first, second, word in ((once, eight, "slower"), (eight, once, "faster")):
        t = answered(lambda: time_both(first, second, cpu), _timed_verdict)
        s = speedup(t)
        assert (s.verdict, s.kernel_verdict) == (word, word), (s, t.waiting)
        assert t.waiting is not None and t.waiting <= BUSY
        # 8x the kernels: the ratio is near 8 (caches and the call's own cost move it: 5.4-6.1 seen)
        for ratio in (s.ratio, s.kernel_ratio):
            assert 3 < (ratio if word == "faster" else 1 / ratio) < 16, s


@pytest.mark.slow
@pytest.mark.quiet
def test_beside_a_busy_loop_on_every_core_the_verdict_is_busy():
    # one `python -c 'while True: pass'` per core, each in a session of its own (as if started from
    # another terminal): the timed calls' threads share every core with one, and wait past BUSY
    once, eight = _sin(1), _sin(8)
    with busy_loops(cpus()):
        t = time_both(once, eight, torch.device("cpu"))
    s = speedup(t)
    assert t.waiting is not None and t.waiting > BUSY, t.waiting
    assert (s.verdict, s.kernel_verdict, s.text()) == ("busy", "busy", "can't tell: CPU busy")
    assert s.cpu_waiting == t.waiting and s.ratio < 1  # the ratio is still given


@pytest.mark.slow
@pytest.mark.quiet
def test_work_that_only_waits_behind_the_timed_calls_does_not_make_them_busy():
    # Two busy loops at nice 19 in this process's own session (Linux schedules a session's tasks
    # as a group, and by nice inside it): they run when the timed calls leave a core free and
    # wait the rest of the time, as the live app's UI and session threads wait behind a worker.
    # The machine's CPU pressure counts that waiting (it decided "busy" before: some task waited
    # nearly all the time); the timed calls' own wait does not.
    once, eight = _sin(1), _sin(8)
    pressure: list[float] = []

    def timed():
        machine = WaitShare(tasks="/nonexistent")  # schedstat left out: the machine's CPU pressure
        t = time_both(once, eight, torch.device("cpu"))
        pressure.append(machine.share())
        return t

    with busy_loops(2, nice=19, own_sessions=False):
        t = answered(timed, _timed_verdict)
    assert pressure[-1] is not None and pressure[-1] > BUSY, pressure  # the old measure: "busy"
    assert speedup(t).verdict == "slower" and t.waiting <= BUSY
