"""How many threads inductor compiles on: in a worker that runs once (--once), in a fork server, in ranks.

Inductor compiles C++ kernels on a pool of threads, each running gcc (codecache.CppCodeCache,
AsyncCompile.pool), which costs nothing to start; Triton kernels go to a pool of processes that
each import torch (AsyncCompile.process_pool), seconds of CPU that a one-run worker would pay while
its run is timed. `compile_threads = 1` turns both pools off. So a one-run worker keeps inductor's
threads where no Triton is installed (a CPU build of torch: gcc builds two kernels at once on two
cores instead of one after the other) and compiles in its own process where Triton would start its
pool."""

from __future__ import annotations


def for_one_run() -> int:
    """Set inductor's compile_threads for a worker that runs once; the number set."""
    from torch.utils._triton import has_triton_package

    if has_triton_package():
        set_threads(1)
    return threads()


def threads() -> int:
    """Inductor's compile_threads now."""
    import torch._inductor.config as ic

    return ic.compile_threads


def set_threads(n: int) -> None:
    """1: no pool of compile threads or processes (a fork server about to fork, N ranks compiling at
    once); else the pool's size."""
    import torch._inductor.config as ic

    ic.compile_threads = n
