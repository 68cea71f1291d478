"""How long a process's own threads waited for a CPU: what other work took from a timing.

Linux keeps, for every thread, the time it ran and the time it waited on a run queue, ready to run
while another task had its CPU (/proc/<pid>/task/<tid>/schedstat: "run_ns wait_ns timeslices";
CONFIG_SCHED_INFO, on in the distributions' kernels). Summed over the threads of the process that
times the calls, the wait is the CPU time other tasks took from those calls, whoever they are.
/proc/pressure/cpu ("some") measures something else: the time in which any task on the machine
waited, so the live app's own processes (its UI repainting, the session's thread, the fork
server, a spare worker starting) waiting behind the timed calls counted as other work
(engine.measure.timing, docs/numbers.md).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

TASKS = "/proc/self/task"
PRESSURE = "/proc/pressure/cpu"


@dataclass(frozen=True)
class ThreadTimes:
    """Nanoseconds each thread of a process has run and waited for a CPU, by thread id."""

    run_ns: dict[int, int]
    wait_ns: dict[int, int]

    def since(self, before: ThreadTimes) -> tuple[int, int]:
        """(run, wait) in ns since `before`, summed over the threads: those started since count
        whole; those that ended since are lost (their last figures with them), never negative."""
        run = sum(max(0, ns - before.run_ns.get(tid, 0)) for tid, ns in self.run_ns.items())
        wait = sum(max(0, ns - before.wait_ns.get(tid, 0)) for tid, ns in self.wait_ns.items())
        return run, wait


def thread_times(tasks: str = TASKS) -> ThreadTimes | None:
    """Each thread's run and run-queue wait so far (ns); None where the kernel does not say
    (no /proc, or a kernel without schedstat): unknown, not nothing."""
    run: dict[int, int] = {}
    wait: dict[int, int] = {}
    try:
        tids = os.listdir(tasks)
    except OSError:
        return None
    for name in tids:
        try:
            with open(f"{tasks}/{name}/schedstat") as f:
                fields = f.read().split()
        except FileNotFoundError:
            continue  # the thread ended between the listing and the read
        except OSError:
            return None
        if len(fields) < 2 or not name.isdigit():
            return None
        run[int(name)], wait[int(name)] = int(fields[0]), int(fields[1])
    return ThreadTimes(run, wait) if run else None


def cpu_stall_us(pressure: str = PRESSURE) -> int | None:
    """Microseconds so far in which some task on the machine waited for a CPU
    (/proc/pressure/cpu, "some"); None where the kernel does not say."""
    try:
        with open(pressure) as f:
            first = f.readline()
    except OSError:
        return None
    for field in first.split():
        if field.startswith("total="):
            return int(field[len("total="):])
    return None


class WaitShare:
    """From its making until share(): how much of the CPU time this process's threads wanted they
    spent waiting for it, Σ wait ÷ Σ (run + wait) over the threads (schedstat). Where the kernel
    keeps no schedstat, the share of the wall time in which some task on the machine waited
    (/proc/pressure/cpu "some"), which counts every process's waiting, this one's neighbours' too,
    so it errs towards "busy"; where it keeps neither, None (unknown, not 0)."""

    def __init__(self, tasks: str = TASKS, pressure: str = PRESSURE) -> None:
        self.tasks, self.pressure = tasks, pressure
        self.threads = thread_times(tasks)
        self.stall_us = cpu_stall_us(pressure)
        self.started = time.perf_counter()

    def share(self) -> float | None:
        if self.threads is not None:
            now = thread_times(self.tasks)
            if now is not None:
                run, wait = now.since(self.threads)
                return wait / (run + wait) if run + wait > 0 else 0.0
        if self.stall_us is not None:
            stall_us, wall = cpu_stall_us(self.pressure), time.perf_counter() - self.started
            if stall_us is not None and wall > 0:
                return (stall_us - self.stall_us) / 1e6 / wall
        return None
