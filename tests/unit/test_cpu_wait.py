"""The reader of each thread's run and run-queue wait (engine.measure.cpu_wait) on this process's
own /proc/self/task, and what it makes of a kernel that says less: unknown (None), never 0."""

from __future__ import annotations

import os
import threading
import time

import pytest

from kscope.engine.measure.cpu_wait import TASKS, ThreadTimes, WaitShare, thread_times

schedstat = pytest.mark.skipif(not os.path.exists(f"{TASKS}/{os.getpid()}/schedstat"),
                               reason="this kernel keeps no schedstat (the fallbacks are tested below)")


def spin(seconds: float) -> float:
    """Run on the CPU for `seconds` of this thread's CPU time; that time, as Python measures it."""
    start = time.thread_time()
    while time.thread_time() - start < seconds:
        pass
    return time.thread_time() - start


@schedstat
def test_this_threads_run_time_is_its_cpu_time():
    me = threading.get_native_id()
    before = thread_times()
    used = spin(0.2)
    after = thread_times()
    assert before is not None and after is not None and me in before.run_ns and me in after.run_ns
    ran = (after.run_ns[me] - before.run_ns[me]) / 1e9
    # the kernel adds a running thread's time at each tick and switch: at most a tick or two behind
    assert used - 0.02 <= ran <= used + 0.02, (used, ran)
    assert after.wait_ns[me] >= before.wait_ns[me] >= 0
    run, wait = after.since(before)
    assert run >= after.run_ns[me] - before.run_ns[me] and wait >= 0


@schedstat
def test_every_thread_of_the_process_is_read_and_one_started_since_counts_whole():
    before = thread_times()
    done = threading.Event()
    ran: list[float] = []
    worker = threading.Thread(target=lambda: (ran.append(spin(0.05)), done.wait()))
    worker.start()
    try:
        while not ran:
            time.sleep(0.01)
        tid = worker.native_id
        after = thread_times()
        assert set(after.run_ns) == {int(t) for t in os.listdir(TASKS)} == set(after.wait_ns)
        assert tid not in before.run_ns and after.run_ns[tid] >= 0.04e9  # its whole life so far
        run, _ = after.since(before)
        assert run >= after.run_ns[tid]
    finally:
        done.set()
        worker.join()


def test_since_never_goes_back_for_a_thread_that_ended():
    before = ThreadTimes({1: 100, 2: 500}, {1: 10, 2: 50})
    after = ThreadTimes({1: 300, 3: 40}, {1: 15, 3: 4})  # 2 ended, 3 started
    assert after.since(before) == (200 + 40, 5 + 4)


def test_the_share_is_the_wait_over_the_cpu_time_wanted(tmp_path):
    tasks = tmp_path / "task"
    for tid, stat in ((11, "1000 0 5"), (12, "3000 1000 9")):
        (tasks / str(tid)).mkdir(parents=True)
        (tasks / str(tid) / "schedstat").write_text(stat + "\n")
    share = WaitShare(str(tasks), str(tmp_path / "no-pressure"))
    (tasks / "11" / "schedstat").write_text("4000 1000 8\n")  # ran 3000 ns more, waited 1000
    (tasks / "12" / "schedstat").write_text("4000 4000 12\n")  # ran 1000 more, waited 3000
    assert share.share() == pytest.approx(4000 / (4000 + 4000))


def test_without_schedstat_the_machines_pressure_and_without_either_unknown(tmp_path):
    assert thread_times(str(tmp_path / "no-such-dir")) is None
    (tmp_path / "task" / "7").mkdir(parents=True)
    (tmp_path / "task" / "7" / "schedstat").write_text("garbled\n")
    assert thread_times(str(tmp_path / "task")) is None  # not a figure: unknown, not 0
    pressure = tmp_path / "cpu"
    pressure.write_text("some avg10=0.00 avg60=0.00 avg300=0.00 total=1000\nfull avg10=0.00 total=0\n")
    share = WaitShare(str(tmp_path / "no-such-dir"), str(pressure))
    time.sleep(0.05)
    pressure.write_text("some avg10=0.00 avg60=0.00 avg300=0.00 total=21000\nfull avg10=0.00 total=0\n")
    assert 0 < share.share() <= 20_000 / 1e6 / 0.05  # 20 ms of stall over at least 50 ms
    assert WaitShare(str(tmp_path / "no-such-dir"), str(tmp_path / "no-pressure")).share() is None


@schedstat
def test_a_real_share_on_this_process_lies_between_0_and_1():
    share = WaitShare()
    spin(0.05)
    value = share.share()
    assert value is not None and 0 <= value < 1
