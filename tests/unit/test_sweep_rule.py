"""The sweep's crossover rule on hand-made points: the smallest size from which compiled is faster
at every larger measured size; a busy size claims nothing."""

from kscope.report.sweep import Sweep, SweepMode, SweepPoint

MODE = SweepMode(1, 8, 4, 1.0)


def sweep(*verdicts: str) -> Sweep:
    points = tuple(SweepPoint(10 ** (i + 2), MODE, MODE, v, 1.0) for i, v in enumerate(verdicts))
    return Sweep(points, tuple(p.n for p in points))


def test_the_crossover_is_where_compiled_stays_faster():
    # faster at 10^4, slower again at 10^5, then faster for good from 10^6
    s = sweep("slower", "same within noise", "faster", "slower", "faster", "faster")
    assert s.crossover_n == 10**6
    assert s.crossover_text() == "compiled is faster from n=1e6 on"


def test_a_busy_size_is_left_out_not_counted_as_slower():
    assert sweep("slower", "faster", "busy", "faster").crossover_n == 10**3
    assert sweep("busy", "busy").crossover_text() == "can't tell: the CPU was busy at every size"


def test_no_crossover_when_compiled_is_not_faster_at_the_largest_size():
    assert sweep("faster", "faster", "slower").crossover_n is None
    assert sweep("faster", "faster", "slower").crossover_text() == "compiled is not faster at the largest size (n=1e4)"
    assert sweep("slower", "same within noise").crossover_text() == "compiled is never faster here"
    assert sweep("faster", "faster").crossover_text() == "compiled is always faster here"
