"""A roof for each level of memory: every cache level the OS reports and main memory, each with
its capacity and its bandwidth, so that a kernel is judged against the level that holds its
call's working set (report.roofs), not always against main memory.

CPU: the data and unified caches sysfs lists for the first CPU (/sys/devices/system/cpu/cpu0/
cache/index*/: level, type, size, shared_cpu_list). A level private to a core holds `size` per
thread the worker runs (L2 of 2 MB on each of 2 threads: 4 MB); a shared one `size` for all. Each
is measured by copying a buffer into another, the two together half the level (so both stay in
it; a shared level at most SHARED_TIMES_INNER times the level inside it), on one thread for a
private level (times the threads, as peak_flops counts FLOP/s) and on the worker's threads for a
shared one; main memory by a copy of twice the largest cache, 256 MB at least (engine.machine.bandwidth).
A copy costs a torch call's overhead besides its bytes, which at an L1-sized copy is most of its
time: each rate is the bytes over (the copy's time - an empty copy's), the streaming rate of the
level. The best of every worker's measurement on this machine is kept (as peak_flops does):
a shared machine only ever runs slower than it can; workers measure until MEASUREMENTS of them
measured undisturbed (engine.machine.kept).

CUDA: main memory from the data sheet (engine.machine.bandwidth), and L2 with its size from the
device's properties and its bandwidth measured by a copy that fits in it.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
import torch

from kscope.engine.machine.bandwidth import cpu_copy_gbps, peak_bandwidth
from kscope.engine.machine.kept import disturbed, kept_source, machine_best, machine_known, measured_quietly
from kscope.engine.measure.cache_sizes import beyond_caches, cpu_levels
from kscope.report.roofs import MAIN_MEMORY, Roof

SHARED_TIMES_INNER = 4
"""A shared level is copied at most this many times the capacity of the level inside it: a VM's
share of a host's L3 is far less than its size (this machine's 105 MB L3, 2 threads: a 16 MB copy
ran at 25-31 GB/s, a 55 MB one at 5-18, main memory's 256 MB at 4-6, load 3 on 2 cores)."""
MEASUREMENTS = 5
"""Workers that measure the roofs on a machine; those after it read the best kept."""
ROOFS_FILE = "roofs.json"
"""In kscope's cache: the best of every worker's measurement of each level on this machine."""
BUDGET_S = 0.08
"""Each level's measurement: the best copy within this long."""


def copy_gbps(nbytes: int, threads: int, device: torch.device, budget_s: float = BUDGET_S) -> float | None:
    """Read + write bytes per second of copying nbytes // 2 into as many, on `threads` threads,
    less an empty copy's cost (None where the copy's time is no more than that)."""
    half = max(nbytes // 2 // 4, 1)
    src = torch.ones(half, device=device)
    dst, tiny_src = torch.empty_like(src), src[:1]
    tiny_dst = dst[:1]
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        full, empty = _best(lambda: dst.copy_(src), device, budget_s), _best(lambda: tiny_dst.copy_(tiny_src), device,
                                                                              budget_s / 4)
    finally:
        torch.set_num_threads(before)
    streaming = full - empty
    return None if streaming <= 0.1 * full else 2 * half * 4 / streaming / 1e9


def _best(copy, device: torch.device, budget_s: float) -> float:
    """The shortest time of one copy, timed in runs of copies long enough to time."""
    copy()
    runs, best, start = 1, float("inf"), time.perf_counter()
    while time.perf_counter() - start < budget_s:
        began = time.perf_counter()
        for _ in range(runs):
            copy()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        took = (time.perf_counter() - began) / runs
        best = min(best, took)
        if took * runs < 20e-6:
            runs *= 2
    return best


@functools.lru_cache(maxsize=None)
def roofs(device: torch.device) -> tuple[Roof, ...]:
    """Every level's roof, smallest first, main memory last; once per process."""
    if device.type == "cuda":
        return _cuda_roofs(device)
    threads = torch.get_num_threads()
    levels, inner = [], 0  # (name, capacity, how it is measured, the measurement)
    for name, size, private in cpu_levels():
        capacity = size * threads if private else size
        copied = size // 2 if private else min(size // 2, SHARED_TIMES_INNER * inner or size // 2)
        how = f"a copy of {_mb(copied)} on " + (f"one thread × {threads}" if private else f"{threads} threads")
        levels.append((name, capacity, how, functools.partial(_level_gbps, copied, private, threads, device)))
        inner = capacity
    levels.append((MAIN_MEMORY, None, f"a {_mb(beyond_caches())} copy on {threads} threads", cpu_copy_gbps))
    taken = [_taken(name, measure) for name, _, _, measure in levels]
    out = []
    for i, ((name, capacity, how, _), mine) in enumerate(zip(levels, taken)):
        gbps, source = _kept(name, how, mine, taken[i + 1].best if i + 1 < len(taken) else None)
        out.append(Roof(name, gbps, capacity, source, measured=gbps is not None))
    return ordered(tuple(out))


@dataclass(frozen=True)
class _Taken:
    """A level's figures in this worker: the best kept on the machine and how many undisturbed
    measurements made it, and this worker's own measurement where it took one."""

    kept: float
    times: int
    mine: float | None = None
    share: float | None = None
    measured: bool = False

    @property
    def best(self) -> float | None:
        return max(self.kept, self.mine or 0.0) or None


def _taken(level: str, measure) -> _Taken:
    """The machine's best of `level`, measured again while fewer than MEASUREMENTS undisturbed
    measurements made it (each worker need not pay the measurement)."""
    kept, times = machine_known(level, ROOFS_FILE)
    if times >= MEASUREMENTS:
        return _Taken(kept, times)
    mine, share = measured_quietly(measure)
    return _Taken(kept, times, mine, share, measured=True)


def _level_gbps(copied: int, private: bool, threads: int, device: torch.device) -> float | None:
    """A private level on one thread, times the threads; a shared one on all of them."""
    measured = copy_gbps(copied, 1 if private else threads, device)
    return None if measured is None else measured * (threads if private else 1)


def ordered(levels: tuple[Roof, ...]) -> tuple[Roof, ...]:
    """Each level at least as fast as the next one out: data a cache holds can always move at the
    slower level's rate, so a measurement below it was disturbed (another tenant, a busy moment),
    and the next level's rate is kept instead, saying so."""
    out = list(levels)
    for i in range(len(out) - 2, -1, -1):
        mine, outer = out[i], out[i + 1]
        if mine.gbps is not None and outer.gbps is not None and mine.gbps < outer.gbps:
            out[i] = Roof(mine.level, outer.gbps, mine.capacity_bytes,
                          f"{outer.level}'s rate: {mine.level} measured slower ({mine.gbps:.0f} GB/s), "
                          f"a disturbed measurement ({mine.source})", measured=False)
    return tuple(out)


def _kept(level: str, how: str, taken: _Taken, outer: float | None) -> tuple[float | None, str]:
    """The level's bandwidth, this worker's measurement kept with the machine's. It counts towards
    MEASUREMENTS only undisturbed: its threads did not wait past BUSY for a CPU (engine.machine.kept),
    and it is no slower than the next level out (`outer`), which a level that holds the data never is
    (L3 measured 6-33 GB/s from one worker to the next on this shared host, main memory 20-23, with
    no wait: other tenants of the host's L3 are invisible to the CPU wait)."""
    if not taken.measured:
        return taken.kept, f"measured: the best of {taken.times} undisturbed measurements on this machine, each {how}"
    if taken.mine is None:
        return None, f"unknown: {how} is no longer than an empty copy"
    slow = outer is not None and taken.mine < outer
    best, times = machine_best(taken.mine, level, ROOFS_FILE, counts=not (slow or disturbed(taken.share)))
    why = f", not counted: slower than the next level out ({outer:.0f} GB/s)" if slow and not disturbed(taken.share) else ""
    return best, f"measured: {kept_source(times, taken.share)}, each {how} (this worker's: {taken.mine:.0f} GB/s{why})"


def _cuda_roofs(device: torch.device) -> tuple[Roof, ...]:
    peak, source = peak_bandwidth(device)
    l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)
    out = []
    if l2:
        measured = copy_gbps(l2 // 2, 1, device)
        out.append(Roof("L2", measured, l2, f"measured: the best copy of {_mb(l2 // 2)} on the device, once per worker"
                        if measured else "unknown: a copy that fits it is no longer than an empty copy",
                        measured=measured is not None))
    out.append(Roof(MAIN_MEMORY, peak, None, source, measured=False))
    return tuple(out)


def _mb(nbytes: int) -> str:
    return f"{nbytes / 1e6:.3g} MB" if nbytes >= 1e6 else f"{nbytes / 1e3:.3g} kB"
