"""Times you can trust: eager and compiled timed in turn, median and spread, and a verdict.

Two times per mode, as benchmark harnesses take them (warm up, repeat, take the median):
- kernel time: the device work of one call, the sum of its kernels' durations as the profiler
  measures them (CPU: the op and kernel events; CUDA: the device's kernel events);
- call time: the wall time of one call without the profiler, Python, dynamo's guards and the
  compiled wrapper included (CUDA: synchronized after the call).

Eager and compiled calls alternate, round by round (in the order AB, BA, AB, ...), so that a
change in the machine's load hits both alike. The spread is the interquartile range (the 25th to
the 75th percentile). The verdict compares call times (what the program pays) round by round: each
round's eager ÷ compiled ratio (the load of that moment hits both of its calls); "faster" when the middle half of
those ratios lies above 1 + NOISE_FLOOR (compiled more than 10% faster in at least three rounds out
of four), "slower" when it lies below 1 / (1 + NOISE_FLOOR), else "same within noise". Kernel times
get the same rule, as the verdict's explanation (kernels 20× faster, the call slower: the wrapper
and guards cost more than the kernels save). Kernel rounds are bounded by time, whatever one call costs: at least
FLOOR_ROUNDS rounds; then up to MIN_ROUNDS, and past them more, doubling, only while the verdict is
unsettled (neither faster nor slower, and the middle half of the ratios not yet inside the noise
floor); never a block that would end past BUDGET_S seconds (measured from the rounds so far), and
never more than MAX_ROUNDS. Call times: MIN_ROUNDS rounds and until the slower mode has run
CALL_MIN_S and the verdict is settled, at most CALL_MAX_ROUNDS; past FLOOR_ROUNDS, never past
CALL_BUDGET_S.

Other work on the machine changes the answer itself, not only its noise (on 2 cores, a busy core
stalls every parallel kernel at its barriers: matmul + GELU measured the same speed compiled on a quiet
machine and up to 35% faster beside a busy loop). So the timing notes how long the timed calls'
own threads (this process's: torch's OpenMP threads, Python's) waited on a run queue for a CPU
that another task had (engine.measure.cpu_wait.WaitShare); a timing in which they waited more
than BUSY of the CPU time they wanted gets the verdict "busy": no faster or slower is claimed; the
ratio is still given. Only what delayed these threads counts: the live app's other processes
waiting behind them do not (the machine's CPU pressure, which decided "busy" before, counted the
UI's and the session's waits as well: "busy" for three saves of seven on a quiet machine, issue 36).
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace

import torch

from kscope.engine.measure.cache_sizes import beyond_caches
from kscope.engine.measure.cpu_wait import WaitShare
from kscope.engine.measure.profiling import is_nonwork, record_labelled, synchronize
from kscope.report.model import ModeResult
from kscope.report.speedup import NOISE_FLOOR, Speedup
from kscope.trace.kernels import Dispatched, TraceSummary, summarize

FLOOR_ROUNDS = 3
"""Rounds always timed, however slow a call is."""
MIN_ROUNDS = 7
"""Rounds timed before a verdict may end the timing, when the budget allows."""
MAX_ROUNDS = 160
BUDGET_S = 1.0
"""Seconds of kernel-time rounds past FLOOR_ROUNDS."""
CALL_MIN_S, CALL_BUDGET_S, CALL_MAX_ROUNDS = 0.005, 0.3, 200
BUSY = 0.25
"""Share of the CPU time the timed calls' threads wanted that they spent waiting for it, past which
the verdict is "busy". Measured on 2 cores (benchmarks/verdict_rate.py --probe, the live app on the
seed, 2026-12-03, docs/speed.md): with kscope's sessions ahead of the machine's other work (nice
-20; what the others still ran is in the figures) 0.02-0.22 in 49 timings of 50, medians 0.06-0.09,
and 0.42 in one while three other processes ran 116 ms of its 147 ms; beside one busy loop as far
ahead 0.54-0.57, two 0.68-0.77; in a test's process beside two (pinned or not, in sessions of their
own or its) 0.74-0.79. A busy loop sharing the cores evenly with two timed threads takes a third of
their time (each runs 2/3 of it), half where Linux groups each session's tasks: past BUSY either way."""
FLUSH_BYTES = 256 << 20
"""--cold: the least a buffer written between timed calls is (flush_bytes: larger than every cache)."""


_agreement: Callable[[int, str], int] | None = None


def agree_with(fn: Callable[[int, str], int] | None) -> None:
    """Ranks of a distributed run (worker.ranks) must run the same number of calls, or one waits
    forever in a collective the others never join: fn(value, "min" | "max") reduces a decision
    over all ranks. None: decide alone."""
    global _agreement
    _agreement = fn


def agreed(value: int, op: str) -> int:
    return value if _agreement is None else _agreement(value, op)


@dataclass(frozen=True)
class Samples:
    values: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def spread(self) -> tuple[float, float]:
        """The 25th and 75th percentiles."""
        if len(self.values) < 2:
            return (self.values[0], self.values[0])
        q = statistics.quantiles(self.values, n=4, method="inclusive")
        return (q[0], q[2])


def ratios(eager: Samples, compiled: Samples) -> Samples:
    """Round by round, eager ÷ compiled (rounds whose compiled time is 0 are left out)."""
    return Samples(tuple(e / c for e, c in zip(eager.values, compiled.values) if c > 0) or (1.0,))


def verdict(eager: Samples, compiled: Samples) -> str:
    """Compiled against eager, from calls timed in pairs: "faster", "slower" or "same within noise"."""
    low, high = ratios(eager, compiled).spread
    if low > 1 + NOISE_FLOOR:
        return "faster"
    if high < 1 / (1 + NOISE_FLOOR):
        return "slower"
    return "same within noise"


def _settled(eager: Samples, compiled: Samples) -> bool:
    """More rounds would not change the verdict: it is faster or slower, or the middle half of
    the ratios already lies inside the noise floor."""
    if verdict(eager, compiled) != "same within noise":
        return True
    low, high = ratios(eager, compiled).spread
    return low > 1 / (1 + NOISE_FLOOR) and high < 1 + NOISE_FLOOR


def per_call_kernel_us(summary: TraceSummary) -> dict[str, float]:
    """Marker label of each profiled call -> the sum of its launches' durations."""
    out: dict[str, float] = defaultdict(float)
    for launch in summary.launches:
        if launch.segment is not None:
            out[launch.segment] += launch.dur_us
    return out


def kernel_samples(summary: TraceSummary, calls: int) -> Samples:
    """Per-call kernel times of a profile_calls() summary (calls labelled "0", "1", ...)."""
    per_call = per_call_kernel_us(summary)
    return Samples(tuple(per_call.get(str(i), 0.0) for i in range(calls)))


def retimed(mode: ModeResult, kernel: Samples, call: Samples | None = None) -> ModeResult:
    """The mode with its kernel time the median of `kernel` (and its spread), its rows scaled to
    add up to it (each keeps its share of the profiled calls), and the call time if measured."""
    profiled = sum(k.time_us for k in mode.kernels)
    scale = kernel.median / profiled if profiled > 0 else 0.0
    return replace(
        mode,
        kernels=tuple(replace(k, time_us=k.time_us * scale, shares=tuple(replace(s, time_us=s.time_us * scale) for s in k.shares))
                      for k in mode.kernels),
        kernel_time_us=kernel.median,
        kernel_time_us_range=kernel.spread,
        kernel_samples=len(kernel.values),
        call_time_us=call.median if call else mode.call_time_us,
        call_time_us_range=call.spread if call else mode.call_time_us_range,
        call_samples=len(call.values) if call else mode.call_samples,
    )


def speedup(t: Timed) -> Speedup | None:
    """The verdict by call time; the kernels' own ratio beside it (see report.model.Speedup)."""
    if not any(t.compiled_call.values):
        return None
    call = ratios(t.eager_call, t.compiled_call)
    busy = t.waiting is not None and t.waiting > BUSY
    kernel = ratios(t.eager_kernel, t.compiled_kernel) if any(t.compiled_kernel.values) else None
    return Speedup(
        call.median,
        "busy" if busy else verdict(t.eager_call, t.compiled_call),
        kernel.median if kernel else None,
        call.spread,
        t.waiting,
        None if kernel is None else "busy" if busy else verdict(t.eager_kernel, t.compiled_kernel),
        kernel.spread if kernel else None,
    )


@dataclass(frozen=True)
class Timed:
    eager_kernel: Samples
    compiled_kernel: Samples
    eager_call: Samples
    compiled_call: Samples
    waiting: float | None
    """Share of the CPU time the timed calls' threads wanted that they spent waiting for a CPU
    another task had (engine.measure.cpu_wait.WaitShare: where Linux keeps no per-thread figures,
    the share of the wall time in which any task on the machine waited); None where the kernel
    says neither: unknown, and the verdict is the rule alone."""
    trace: TraceSummary
    """The first profile of rounds, its calls labelled "e0", "c0", "c1", "e1", ...: what the
    compiled rows are made of."""
    labels: tuple[str, ...]
    """The labels of the calls in `trace`."""


def time_both(
    eager: Callable[[], object],
    compiled: Callable[[], object],
    device: torch.device,
    dispatched: Dispatched | None = None,
    cold: bool = False,
    round_s: float | None = None,
    budget_s: float | None = None,
) -> Timed:
    """Kernel and call times of both modes, in µs per call, and how long their threads waited for a CPU.
    round_s: what one round is expected to cost, if known: when MIN_ROUNDS of them fit in the
    budget they are taken in one profile, not FLOOR_ROUNDS first. budget_s: BUDGET_S (None), or
    less (a sweep times many sizes); the call times' budget shrinks with it."""
    budget_s = BUDGET_S if budget_s is None else budget_s
    flush = _flusher(device) if cold else None
    waits = WaitShare()
    e_kernel, c_kernel = [], []
    cheap = round_s is not None and round_s * MIN_ROUNDS < budget_s / 4
    started, rounds = time.perf_counter(), agreed(MIN_ROUNDS if cheap else FLOOR_ROUNDS, "min")
    first: tuple[TraceSummary, tuple[str, ...]] | None = None
    while rounds > 0:
        base = len(e_kernel)
        plan = []
        for i in range(base, base + rounds):
            pair = [(f"e{i}", eager), (f"c{i}", compiled)]
            plan += pair if i % 2 == 0 else pair[::-1]
        summary = summarize(record_labelled(plan, device, flush), is_nonwork, dispatched)
        first = first or (summary, tuple(label for label, _ in plan))
        per_call = per_call_kernel_us(summary)
        e_kernel += [per_call.get(f"e{i}", 0.0) for i in range(base, base + rounds)]
        c_kernel += [per_call.get(f"c{i}", 0.0) for i in range(base, base + rounds)]
        done = len(e_kernel)
        if done >= MIN_ROUNDS and _settled(Samples(tuple(e_kernel)), Samples(tuple(c_kernel))):
            rounds = 0
        else:
            spent = time.perf_counter() - started
            affordable = int((budget_s - spent) / (spent / done))
            rounds = min(MIN_ROUNDS - done if done < MIN_ROUNDS else done, MAX_ROUNDS - done, affordable)
        rounds = agreed(rounds, "min")
    e_call, c_call = _call_times(eager, compiled, device, flush, CALL_BUDGET_S * budget_s / BUDGET_S)
    return Timed(Samples(tuple(e_kernel)), Samples(tuple(c_kernel)), e_call, c_call, waits.share(), *first)


def _call_times(eager, compiled, device, flush, budget_s: float = CALL_BUDGET_S) -> tuple[Samples, Samples]:
    times: dict[str, list[float]] = {"e": [], "c": []}
    total = {"e": 0.0, "c": 0.0}
    started = time.perf_counter()
    for i in range(CALL_MAX_ROUNDS):
        order = (("e", eager), ("c", compiled)) if i % 2 == 0 else (("c", compiled), ("e", eager))
        for key, fn in order:
            if flush is not None:
                flush()
                synchronize(device)
            start = time.perf_counter()
            fn()
            synchronize(device)
            took = time.perf_counter() - start
            times[key].append(took * 1e6)
            total[key] += took
        spent = time.perf_counter() - started
        enough = (
            i + 1 >= MIN_ROUNDS
            and max(total.values()) >= CALL_MIN_S
            and _settled(Samples(tuple(times["e"])), Samples(tuple(times["c"])))
        )
        if agreed(int(enough or (i + 1 >= FLOOR_ROUNDS and spent + spent / (i + 1) > budget_s)), "max"):
            break
    return Samples(tuple(times["e"])), Samples(tuple(times["c"]))


def flush_bytes(device: torch.device) -> int:
    """What --cold writes between timed calls: twice the largest cache, FLUSH_BYTES at least (a
    CPU's caches from sysfs: this machine's L3 is 260 MB; a GPU's L2 from its properties)."""
    if device.type == "cuda":
        return max(FLUSH_BYTES, 2 * torch.cuda.get_device_properties(device).L2_cache_size)
    return max(FLUSH_BYTES, beyond_caches())


def _flusher(device: torch.device) -> Callable[[], None]:
    buffer = torch.empty(flush_bytes(device), dtype=torch.uint8, device=device)

    def flush() -> None:
        buffer.zero_()

    return flush
