"""The engine's one door: what the worker process, its fork server and its ranks call (and nothing
else outside engine/ imports: tests/unit/test_layers.py). Importing it imports no torch, so that
own_inductor_cache() can come first."""

from __future__ import annotations

from collections.abc import Callable


def own_inductor_cache() -> None:
    """Point inductor at kscope's own cache, before torch is imported (engine.inductor.kill_safe)."""
    from kscope.engine.inductor.kill_safe import point_at_own_cache

    point_at_own_cache()


def preload() -> None:
    """Import torch and the whole engine now (a fork server, once for every worker it forks)."""
    import kscope.engine.run  # noqa: F401
    import kscope.engine.sweep  # noqa: F401


def configure() -> None:
    """What a worker that runs many times sets up once: inductor's logs kscope reads."""
    from kscope.engine.inductor.capture import configure_inductor

    configure_inductor()


def for_one_run() -> None:
    """A worker that runs once (--once): no pool of compile processes for one run."""
    from kscope.engine.inductor.compile_threads import for_one_run as one_run

    one_run()


def warm() -> None:
    """Pay the process's first-compile cost now, before the user saves anything."""
    import torch

    from kscope.engine.compat.dynamo import reset
    from kscope.engine.inductor.vec_isa import remember_probe

    torch.compile(lambda x: (x + 1).relu())(torch.ones(8))
    reset()
    remember_probe()  # the next worker on this machine need not probe the CPU's vector ISAs again


def compile_threads() -> int:
    """Inductor's compile_threads (a fork server restores it in each worker)."""
    from kscope.engine.inductor.compile_threads import threads

    return threads()


def set_compile_threads(n: int) -> None:
    from kscope.engine.inductor.compile_threads import set_threads

    set_threads(n)


def watch_compiles(listener: Callable[[bool, str], None]) -> None:
    """listener(compiling, what) when a compile starts and ends (engine.inductor.compile_watch)."""
    from kscope.engine.inductor.compile_watch import watch_compiles as watch

    watch(listener)


def run(request, **hooks):
    """One run: the Report (engine.run)."""
    from kscope.engine.run import run as one_run

    return one_run(request, **hooks)


def run_sweep(request, on_point=None):
    """A size sweep: the Report (engine.sweep)."""
    from kscope.engine.sweep import run_sweep as sweep

    return sweep(request, on_point=on_point)


def device_for(choice: str):
    """(the torch.device for --device CHOICE, None) or (None, why there is none)."""
    from kscope.engine.stages import pick_device
    from kscope.engine.target.loading import TargetError

    try:
        return pick_device(choice), None
    except TargetError as e:
        return None, e.message


def as_rank(agree: Callable[[int, str], int]) -> None:
    """This process is one of N ranks: timing decisions agreed among them (engine.measure.timing),
    one compile thread each (N ranks compile at once), and no compile cache to race on."""
    from kscope.engine.inductor.caches import turn_caches_off
    from kscope.engine.inductor.compile_threads import set_threads
    from kscope.engine.measure.timing import agree_with

    agree_with(agree)
    set_threads(1)
    turn_caches_off()
