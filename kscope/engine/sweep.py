"""A size sweep: the target at n = 10², 10³, ... eagerly and compiled, each size a full run.

The size goes in through the file's `inputs(device, n)`. By default one torch.compile serves every
size, as it would in the user's program: the first size compiles for its static shapes, the next
fails a size guard and recompiles with dynamic shapes, and that graph runs at every later size
(inductor's bytes for it are counted again at each size: engine.inductor.dynamic_bytes). `static` compiles
each size on its own: the kernel a program with that one shape gets.

Each size is timed like a run (eager and compiled calls in pairs, engine.measure.timing) with a smaller
budget. The sweep stops early, and says where and why, before a size whose inputs and buffers
would take more than MEMORY_SHARE of the free memory (host or device), or that would end past the
time budget, or when a size fails (out of memory).

Inductor's FX-graph cache is off for the sweep: a graph from the cache comes without the graph
kscope counts a dynamic graph's bytes from (each sweep compiles afresh).
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable
from dataclasses import replace

import torch

from kscope.engine.compiled.half import CompileFailed, KeptCompile, run_compiled
from kscope.engine.dispatch.working_set import compiled_working_set
from kscope.engine.eager.half import run_eager
from kscope.engine.inductor.caches import caches_off
from kscope.engine.inductor.capture import configure_inductor
from kscope.engine.inductor.numbering import fresh_compile_state
from kscope.engine.inductor.store import TrafficStore
from kscope.engine.inductor.variants import variant
from kscope.engine.machine.memory_levels import roofs
from kscope.engine.measure.timing import BUSY, ratios, retimed, time_both, verdict
from kscope.engine.stages import finished, start, user_error
from kscope.engine.target.loading import Target, make_inputs
from kscope.engine.target.training import BackwardStep, step_for
from kscope.report.model import ModeResult, Report, RunError
from kscope.report.request import RunRequest, SweepRequest
from kscope.report.sweep import Sweep, SweepMode, SweepPoint, fmt_n

MEMORY_SHARE = 0.5
"""A size whose inputs and buffers would take more than this share of free memory is not run."""
TIMING_S = 0.3
"""Each size's timing budget (a single run's is engine.measure.timing.BUDGET_S)."""
CALLS = 3
"""Calls profiled in each size's eager look."""
CALLS_PER_SIZE = 30
"""About how many calls of each mode a size makes (warm-up, accounting, profiled, timed): what
the time budget check multiplies one call's time by."""


def default_sizes(device: torch.device) -> tuple[int, ...]:
    """Powers of ten from 10² to 10⁸ on CUDA, 10⁷ on the CPU."""
    top = 8 if device.type == "cuda" else 7
    return tuple(10**k for k in range(2, top + 1))


def needs_n(target: Target) -> str | None:
    """Why this file cannot be swept, or None: the size goes in through inputs(device, n)."""
    make = vars(target.module).get("inputs")
    how = "add `def inputs(device, n=1000):` returning tensors of size n, e.g. `torch.randn(n, device=device)`"
    if not callable(make):
        return f"a size sweep needs the size as a parameter: {how} (module-level tensors cannot be swept)"
    import inspect

    if "n" not in inspect.signature(make).parameters:
        return f"a size sweep needs inputs() to take the size n: {how}"
    return None


def run_sweep(request: SweepRequest, on_point: Callable[[Report], None] | None = None) -> Report:
    """Every size in turn; on_point gets the Report so far after each. Errors become RunErrors (a
    size that fails: the sizes before it stay, and `stopped` says where), never exceptions."""
    configure_inductor()
    store = TrafficStore()
    start_s = time.perf_counter()
    run, wanted = request.run, request.options
    path = os.path.abspath(run.file)

    def sizes_on(device: torch.device) -> tuple[int, ...]:
        return tuple(wanted.sizes or default_sizes(device))

    report, target, device = start(path, run, lambda device: sizes_on(device)[0], check=needs_n)
    if target is None:
        return report
    levels = roofs(device)
    peak, peak_source = levels[-1].gbps, levels[-1].source  # main memory's
    sweep = Sweep((), sizes_on(device), wanted.static, budget_s=wanted.budget_s, roofs=levels)
    report = replace(report, target=target.name, peak_gbps=peak, peak_source=peak_source, source=target.source,
                     target_lines=target.lines, notes=target.notes, no_grad=run.no_grad, sweep=sweep,
                     compile_options=run.compile, roofs=levels, cold=run.cold)
    if on_point is not None:
        on_point(_stamped(report, start_s))
    with caches_off():
        fresh_compile_state()
        report, error = _every_size(report, target, device, path, store, run, start_s, on_point)
        target.args = target.step = None
    return finished(report, start_s, error)


def _every_size(report: Report, target: Target, device: torch.device, path: str, store: TrafficStore, run: RunRequest,
                start_s: float, on_point: Callable[[Report], None] | None) -> tuple[Report, RunError | None]:
    """The Report after each size of its sweep in turn (told to on_point, but the last), and the
    error a size failed with. The sweep stops, saying where and why, before a size that would not
    fit or would end past the budget, and at a size that fails."""
    sweep = report.sweep
    kept = None if sweep.static else KeptCompile(target.fn, path, run.compile)
    for i, n in enumerate(sweep.sizes):
        if i:
            why, error = _inputs_for(target, device, run, path, sweep, n, start_s)
            if why:
                return replace(report, sweep=replace(sweep, stopped=why)), error
        try:
            point = _measure(target, device, path, store, n, kept, i == 0, run.cold, run.compile)
        except _SizeFailed as e:
            error = user_error(e.stage, e.__cause__, path)
            stopped = replace(sweep, stopped=f"n={fmt_n(n)}: the {e.stage} run failed") if sweep.points else sweep
            return replace(report, sweep=stopped), replace(error, message=f"at n={fmt_n(n)}: {error.message}")
        if i == 0 and isinstance(target.step, BackwardStep):  # what backward ran from, once it has run
            report = replace(report, backward=target.step.report(), notes=report.notes + tuple(target.step.notes))
        recompiles = sweep.recompiles + (1 if i and point.recompiled else 0)
        sweep = replace(sweep, points=sweep.points + (point,), recompiles=recompiles)
        report = replace(report, sweep=sweep)
        if on_point is not None and i + 1 < len(sweep.sizes):
            on_point(_stamped(report, start_s))
    return report, None


def _inputs_for(target: Target, device: torch.device, run: RunRequest, path: str, sweep: Sweep, n: int,
                start_s: float) -> tuple[str | None, RunError | None]:
    """Size n's inputs (and training step) in place of the last size's, whose tensors go first;
    else why the sweep stops before n (too big, too long, inputs() failed) and the error, if any."""
    before = _input_bytes(target.args)
    target.args = target.step = None  # the last size's tensors go before the next is planned
    _release(device)
    why = _too_big(target, device, n, sweep.points[-1], before) or _too_long(sweep, n, time.perf_counter() - start_s)
    if why:
        return why, None
    try:
        target.args, _ = make_inputs(target.module, target.fn, device, n)
        # a training step holds its leaves and gradient seeds: one per size
        target.step = step_for(run.backward, run.no_grad, target)
    except Exception as e:
        return f"n={fmt_n(n)}: inputs() failed", user_error("inputs", e, path)
    return None, None


class _SizeFailed(Exception):
    """A size's run raised (its cause) in the stage named."""

    def __init__(self, stage: str):
        super().__init__(stage)
        self.stage = stage


def _measure(target, device, path, store, n, kept, first: bool, cold: bool, options) -> SweepPoint:
    started = time.perf_counter()
    try:
        eager = run_eager(target, device, CALLS)
    except Exception as e:
        raise _SizeFailed("eager") from e

    def time_it(compiled_call, compiled_call_s: float):
        one_round = eager.result.kernel_time_us * 1e-6 + compiled_call_s
        return time_both(target.runner(), compiled_call, device, eager.dispatched, cold, one_round, TIMING_S)

    try:
        compiled = run_compiled(target, device, path, store, eager, time_it, reuse=kept, options=options)
    except CompileFailed as e:
        raise _SizeFailed("compile") from (e.__cause__ or e)
    except Exception as e:
        raise _SizeFailed("compiled") from e
    t = compiled.timing
    e_mode = retimed(eager.result, t.eager_kernel, t.eager_call)
    c_mode = retimed(compiled.result, t.compiled_kernel, t.compiled_call)
    busy = t.waiting is not None and t.waiting > BUSY
    ran = sorted({launch.region for launch in t.trace.only("c").launches if launch.region})
    dynamic = {g.compile_id for g in compiled.graphs if g.live is not None}
    graph = ", ".join(f"{cid} (dynamic)" if cid in dynamic else cid for cid in ran)
    if kept is None:
        recompiled = "compiled for this size (--sweep-static)"
    elif compiled.new_graphs and first:
        recompiled = "compiled for this size (static shapes)"
    elif compiled.new_graphs:
        reasons = [r.reason for r in compiled.result.recompiles]
        recompiled = "recompiled: " + (reasons[0] if reasons else "a guard failed")
    else:
        recompiled = None
    c_mode = replace(c_mode, working_set_bytes=compiled_working_set(eager.working_set, c_mode.round_trips))
    return SweepPoint(
        n=n,
        eager=_mode(e_mode, compiled=False),
        compiled=_mode(c_mode, compiled=True),
        verdict="busy" if busy else verdict(t.eager_call, t.compiled_call),
        ratio=ratios(t.eager_call, t.compiled_call).median,
        graph=graph,
        recompiled=recompiled,
        wall_s=time.perf_counter() - started,
    )


def _mode(m: ModeResult, *, compiled: bool) -> SweepMode:
    return SweepMode(
        launches=m.launches,
        bytes_read=m.bytes_read,
        bytes_written=m.bytes_written,
        kernel_time_us=m.kernel_time_us,
        kernel_time_us_range=m.kernel_time_us_range,
        call_time_us=m.call_time_us,
        call_time_us_range=m.call_time_us_range,
        kernels=tuple(k.name for k in m.kernels),
        variants=tuple(variant(k.name, k.code) for k in m.kernels) if compiled else (),
        working_set_bytes=m.working_set_bytes,
    )


def _input_bytes(args) -> int:
    return sum(a.nbytes for a in args if isinstance(a, torch.Tensor))


def _planned_input_bytes(target: Target, n: int, measured_before: int, n_before: int) -> int:
    """Bytes of inputs(n), from the file's inputs() on the meta device (shapes, no memory: also
    the default device, for tensors made without `device=`); when inputs() takes no device or cannot
    make meta tensors, scaled from the last size as if linear in n."""
    import inspect

    if "device" in inspect.signature(vars(target.module)["inputs"]).parameters:
        try:
            with torch.device("meta"):
                args, _ = make_inputs(target.module, target.fn, torch.device("meta"), n)
            return _input_bytes(args)
        except Exception:
            pass
    return measured_before * n // n_before


def _too_big(target: Target, device: torch.device, n: int, last: SweepPoint, before: int) -> str | None:
    """Why size n would not fit: its inputs, plus what one call writes (outputs and buffers,
    scaled from the last size, whose inputs took `before` bytes), past MEMORY_SHARE of the memory
    free once the last size's tensors are gone."""
    planned = _planned_input_bytes(target, n, before, last.n)
    written = max(last.eager.bytes_written or 0, last.compiled.bytes_written or 0)
    scale = planned / before if before else n / last.n
    need = planned + written * scale
    free, where = _free_memory(device)
    if free is not None and need > MEMORY_SHARE * free:
        return (
            f"n={fmt_n(n)}: would need about {need / 1e9:.1f} GB, more than {MEMORY_SHARE:.0%} of the "
            f"{free / 1e9:.1f} GB of {where} memory free"
        )
    return None


def _release(device: torch.device) -> None:
    """Free what the last size left: Python's cycles, and the CUDA caching allocator's blocks (which
    mem_get_info counts as used)."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def _free_memory(device: torch.device) -> tuple[int | None, str]:
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return free, "device"
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024, "host"
    except OSError:
        pass
    return None, "host"


def _too_long(sweep: Sweep, n: int, elapsed: float) -> str | None:
    """Why size n would end past the time budget: the last size's time, plus CALLS_PER_SIZE calls
    of each mode grown in proportion to n."""
    last = sweep.points[-1]
    per_call = ((last.eager.call_time_us or 0) + (last.compiled.call_time_us or 0)) * 1e-6
    estimate = last.wall_s + CALLS_PER_SIZE * per_call * (n / last.n - 1)
    if elapsed + estimate > sweep.budget_s:
        return (
            f"n={fmt_n(n)}: would end past the {sweep.budget_s:g} s budget "
            f"({elapsed:.0f} s so far, about {estimate:.0f} s more; --sweep-budget)"
        )
    return None


def _stamped(report: Report, start: float) -> Report:
    return replace(report, wall_s=time.perf_counter() - start)
