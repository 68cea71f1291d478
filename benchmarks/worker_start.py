"""How long a live-app worker takes to be ready, forked from the warm fork server against a fresh
process, and that a run times the same in both (the seed sample, 1M elements).

Prints figures, no assertions:
1. a fresh `python -m kscope.worker.child --warm` (what every live-app worker was before the fork
   server, and what --once still starts): start -> ready, wall and CPU seconds;
2. the fork server's first worker (the server imports torch and warms inductor first): start -> ready;
3. each further worker from the same server (the spare, a replacement after a crash): start -> ready;
4. the seed's run in a fresh worker and in a forked one, in turns: eager and compiled call medians.

    python benchmarks/worker_start.py [--repeat N] [--device cuda]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kscope.report.request import RunRequest  # noqa: E402
from kscope.worker.client import Worker  # noqa: E402
from kscope.worker.forks import ForkServer  # noqa: E402

SEED = str(REPO / "samples" / "add_relu.py")


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def ready_in(worker: Worker) -> float:
    started = time.perf_counter()
    worker.start()
    worker.wait_ready()
    return time.perf_counter() - started


def call_medians(worker: Worker, device: str) -> tuple[float, float]:
    worker.send(RunRequest(SEED, None, device, timeout=120))
    while (message := worker.read(180)) is not None and message.type != "report":
        pass
    report = message.report
    return report.eager.call_time_us, report.compiled.call_time_us


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--device", default="cpu", help="cuda: also that a forked worker can use the GPU")
    args = parser.parse_args()
    devnull = os.open(os.devnull, os.O_WRONLY)

    fresh_s, fresh_cpu = [], []
    for _ in range(args.repeat):
        before = children_cpu()
        worker = Worker(stdout=devnull, stderr=devnull, warm=True)
        fresh_s.append(ready_in(worker))
        worker.kill()
        fresh_cpu.append(children_cpu() - before)
    print(f"1. fresh worker, start -> ready: {statistics.median(fresh_s):.2f} s wall (of {args.repeat}: "
          f"{', '.join(f'{s:.2f}' for s in fresh_s)}), {statistics.median(fresh_cpu):.2f} s CPU")

    server = ForkServer(os.dup(devnull))
    first = Worker(stdout=devnull, warm=True, forks=server)
    print(f"2. fork server's first worker, start -> ready: {ready_in(first):.2f} s wall")
    forked_s = []
    for _ in range(args.repeat):
        worker = Worker(stdout=devnull, warm=True, forks=server)
        forked_s.append(ready_in(worker))
        worker.kill()
    print(f"3. each further forked worker, start -> ready: {statistics.median(forked_s):.3f} s wall (of {args.repeat}: "
          f"{', '.join(f'{s:.3f}' for s in forked_s)})")

    fresh = Worker(stdout=devnull, stderr=devnull, warm=True)
    fresh.start()
    fresh.wait_ready()
    rows = {"fresh": [], "forked": []}
    for _ in range(args.repeat):
        rows["fresh"].append(call_medians(fresh, args.device))
        rows["forked"].append(call_medians(first, args.device))
    for name, runs in rows.items():
        eager, compiled = (statistics.median(r[i] for r in runs) for i in (0, 1))
        print(f"4. seed run on {args.device} in a {name} worker: eager call {eager:.0f} µs, compiled call {compiled:.0f} µs "
              f"(medians of {len(runs)} runs)")
    fresh.kill()
    first.kill()
    server.close()


if __name__ == "__main__":
    main()
