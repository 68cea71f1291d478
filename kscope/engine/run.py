"""One run: load the file, run the target eagerly and compiled, and build the Report."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import torch

from kscope.engine.compiled.half import CompiledRun, CompileFailed, run_compiled
from kscope.engine.compiled.plan import Planner
from kscope.engine.dispatch.working_set import compiled_working_set
from kscope.engine.eager.half import EagerRun, run_eager
from kscope.engine.inductor.capture import configure_inductor
from kscope.engine.inductor.store import TrafficStore
from kscope.engine.machine.memory_levels import roofs
from kscope.engine.machine.peak_flops import compute_dtype, peak_flops
from kscope.engine.measure.timing import retimed, speedup, time_both
from kscope.engine.measure.trace_export import TraceExport
from kscope.engine.memory.peak import call_memory, with_kernel_lines
from kscope.engine.stages import finished, start, target_error, user_error, with_files
from kscope.engine.target.loading import Target, TargetError
from kscope.engine.target.training import BackwardStep
from kscope.report.memory import CallMemory
from kscope.report.model import Report
from kscope.report.plan import PlanProgress
from kscope.report.request import RunRequest

_store: TrafficStore | None = None


def run(
    request: RunRequest,
    on_eager: Callable[[Report], None] | None = None,
    before_timing: Callable[[], None] | None = None,
    on_plan: Callable[[Report], None] | None = None,
    on_progress: Callable[[PlanProgress], None] | None = None,
) -> Report:
    """Run both modes; errors become RunErrors in the Report, never exceptions. before_timing is
    called once both modes ran, just before they are timed. on_plan: given the eager half's early
    report with the compiled half's plan (report.plan) each time inductor plans a new graph, and
    on_progress how far its compile is (engine.compiled.plan)."""
    global _store
    configure_inductor()
    _store = _store or TrafficStore()
    began = time.perf_counter()
    path = os.path.abspath(request.file)
    report, target, device = start(path, request, lambda device: request.n)
    if target is None:
        return report
    one = _Run(request, path, target, device, began, on_plan, on_progress, before_timing)
    report = one.eager(one.header(report))
    if report.errors:
        return report
    if on_eager is not None:
        on_eager(with_files(replace(report, wall_s=time.perf_counter() - began), texts=False))
    return one.compiled(report)


@dataclass
class _Run:
    """One run's steps after the target loaded, and what they share."""

    request: RunRequest
    path: str
    target: Target
    device: torch.device
    began: float
    on_plan: Callable[[Report], None] | None
    on_progress: Callable[[PlanProgress], None] | None
    before_timing: Callable[[], None] | None
    export: TraceExport | None = None
    eager_run: EagerRun | None = None
    planners: list[Planner] = field(default_factory=list)
    memory: tuple[CallMemory, CallMemory] | None = None
    """One call's memory, eager and compiled (engine.memory.peak), recorded before the timing."""

    def header(self, report: Report) -> Report:
        """What the run knows before it runs anything: the target, its inputs, the device's peaks."""
        target, device, request = self.target, self.device, self.request
        largest = max((a.nbytes for a in target.args if isinstance(a, torch.Tensor)), default=0)
        levels = roofs(device)
        peak, peak_source = levels[-1].gbps, levels[-1].source  # main memory's
        flops_peak, flops_source = peak_flops(device, compute_dtype(target.args))
        if request.trace_dir:
            self.export = TraceExport(request.trace_dir, self.path, target.name)
        return replace(report, target=target.name, largest_input_bytes=largest, notes=target.notes,
                       source=target.source, target_lines=target.lines, peak_gbps=peak, peak_source=peak_source,
                       peak_flops=flops_peak, peak_flops_source=flops_source, no_grad=request.no_grad,
                       compile_options=request.compile, roofs=levels, cold=request.cold)

    def traced(self, report: Report) -> Report:
        """The report with the traces saved so far, and why any was not."""
        if self.export is None:
            return report
        return replace(report, traces=self.export.traces(), notes=report.notes + self.export.take_notes())

    def eager(self, report: Report) -> Report:
        """The eager half; a finished Report with its error if it failed."""
        keep = self.export.keeper("eager") if self.export else None
        try:
            self.eager_run = run_eager(self.target, self.device, self.request.calls, keep=keep)
        except TargetError as e:
            return finished(report, self.began, target_error(e, self.path))
        except Exception as e:
            return finished(self.traced(report), self.began, user_error("eager", e, self.path))
        eager = self.eager_run
        report = self.traced(replace(report, eager=eager.result, notes=report.notes + eager.notes,
                                     reads_parameters=eager.reads_parameters))
        if isinstance(self.target.step, BackwardStep):
            step = self.target.step
            report = replace(report, backward=step.report(), notes=report.notes + tuple(step.notes))
        return report

    def time_it(self, compiled_call, compiled_call_s: float):
        """Both halves ran: record one call of each's memory, then time them against each other, in turn."""
        self.memory = (call_memory(self.target.runner(), self.device, eager=True),
                       call_memory(compiled_call, self.device, eager=False))
        if self.before_timing is not None:
            self.before_timing()
        eager = self.eager_run
        one_round = eager.result.kernel_time_us * 1e-6 + compiled_call_s
        timed = time_both(self.target.runner(), compiled_call, self.device, eager.dispatched, self.request.cold,
                          one_round)
        if self.export is not None:  # after the timing, still under the compile's mode and options
            self.export.profile_compiled(compiled_call, self.device, self.request.calls)
        return timed

    def planner(self, backend) -> Planner:
        """A Planner for each compile, telling the app the plan on top of the eager half's report."""
        early = with_files(replace(self.early, wall_s=time.perf_counter() - self.began), texts=False)
        self.planners.append(Planner(backend, _store, lambda plan: self.on_plan(replace(early, plan=plan)),
                                     self.on_progress))
        return self.planners[-1]

    def planned(self, report: Report) -> Report:
        """A failed compiled half keeps the plan it had shown (stale, with the error)."""
        return replace(report, plan=self.planners[-1].plan) if self.planners else report

    def compiled(self, report: Report) -> Report:
        """The compiled half, the timing of both, and the finished Report."""
        self.early = report
        try:
            compiled = run_compiled(self.target, self.device, self.path, _store, self.eager_run, self.time_it,
                                    options=self.request.compile,
                                    planner=self.planner if self.on_plan is not None else None)
        except CompileFailed as e:
            return finished(self.planned(self.traced(report)), self.began, user_error("compile", e.__cause__ or e,
                                                                                      self.path))
        except Exception as e:
            return finished(self.planned(self.traced(report)), self.began, user_error("compiled", e, self.path))
        ws = compiled_working_set(self.eager_run.working_set, compiled.result.round_trips)
        e_memory, c_memory = self.memory or (None, None)
        if c_memory is not None:
            c_memory = with_kernel_lines(replace(c_memory, estimated_peak_bytes=compiled.estimated_peaks),
                                         compiled.result.kernels)
        report = self.traced(replace(report, eager=replace(report.eager, memory=e_memory),
                                     compiled=replace(compiled.result, working_set_bytes=ws, memory=c_memory),
                                     notes=report.notes + compiled.notes))
        return finished(_concluded(report, compiled), self.began)


def _concluded(report: Report, compiled: CompiledRun) -> Report:
    """Notes on what the compiled half did, and both halves' times from the timing in turn."""
    if report.compiled.graphs == 0:  # e.g. a DDP-wrapped module: dynamo traces none of it (torch 2.13)
        report = replace(report, notes=report.notes + (
            "compiled: dynamo compiled no graph: the compiled half ran the same ops eagerly",))
    saved = report.compiled.bytes_saved
    if saved and report.backward is None and report.eager.phase("backward") is None:
        # a forward alone (a target that runs its own backward needs grad mode: no --no-grad hint)
        report = replace(report, notes=report.notes + (
            f"compiled: the forward writes {saved:,} B only for backward to read: the target's tensors require "
            "grad, so torch.compile built a training graph (--no-grad, key n, shows the inference graph)",
        ))
    timed = compiled.timing
    e_mode = retimed(report.eager, timed.eager_kernel, timed.eager_call)
    c_mode = retimed(report.compiled, timed.compiled_kernel, timed.compiled_call)
    return replace(report, eager=e_mode, compiled=c_mode, speedup=speedup(timed))
