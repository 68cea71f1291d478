"""One run: load the file, run the target eagerly and compiled, and build the Report."""

from __future__ import annotations

import os
import platform
import re
import time
import traceback
from collections.abc import Callable
from dataclasses import replace

import torch

from kscope.engine import project
from kscope.engine.backward import BackwardStep, step_for
from kscope.engine.bandwidth import peak_bandwidth
from kscope.engine.compile_errors import compiler_message
from kscope.engine.compile_plan import Planner
from kscope.engine.compiled import CompileFailed, run_compiled
from kscope.engine.eager import run_eager
from kscope.engine.inductor.capture import TrafficStore, configure_inductor
from kscope.engine.inductor.kill_safe import take_notes
from kscope.engine.inductor.vec_isa import remember_probe
from kscope.engine.peak_flops import compute_dtype, peak_flops
from kscope.engine.target import InputsFailed, TargetError, prepare
from kscope.engine.timing import retimed, speedup, time_both
from kscope.engine.trace_export import TraceExport
from kscope.report.model import Report, RunError
from kscope.report.plan import PlanProgress
from kscope.report.request import RunRequest

_store: TrafficStore | None = None


def pick_device(choice: str) -> torch.device:
    if choice == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if choice == "cuda" and not torch.cuda.is_available():
        raise TargetError("device", "--device cuda: no CUDA device is available here (try --device cpu)")
    return torch.device(choice)


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


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
    on_progress how far its compile is (engine.compile_plan)."""
    global _store
    configure_inductor()
    _store = _store or TrafficStore()
    start = time.perf_counter()
    path = os.path.abspath(request.file)
    report = Report(file=path, target=request.target or "", torch_version=torch.__version__)
    try:
        device = pick_device(request.device)
        report = replace(report, device=device.type, device_name=device_name(device))
        target = prepare(path, request.target, device, request.n)
        target.step = step_for(request.backward, request.no_grad, target)
    except TargetError as e:
        return finished(report, start, target_error(e, path))
    except InputsFailed as e:
        return finished(report, start, user_error("inputs", e.__cause__, path))
    except BaseException as e:  # the user's module raised while loading
        if isinstance(e, KeyboardInterrupt):
            raise
        return finished(report, start, user_error("load", e, path))

    largest = max((a.nbytes for a in target.args if isinstance(a, torch.Tensor)), default=0)
    peak, peak_source = peak_bandwidth(device)
    flops_peak, flops_source = peak_flops(device, compute_dtype(target.args))
    report = replace(
        report,
        target=target.name,
        largest_input_bytes=largest,
        notes=target.notes,
        source=target.source,
        target_lines=target.lines,
        peak_gbps=peak,
        peak_source=peak_source,
        peak_flops=flops_peak,
        peak_flops_source=flops_source,
    )
    options = request.compile
    report = replace(report, no_grad=request.no_grad, compile_options=options)
    export = TraceExport(request.trace_dir, path, target.name) if request.trace_dir else None

    def traced(report: Report) -> Report:
        """The report with the traces saved so far, and why any was not."""
        if export is None:
            return report
        return replace(report, traces=export.traces(), notes=report.notes + export.take_notes())

    try:
        eager = run_eager(target, device, request.calls, keep=export.keeper("eager") if export else None)
    except TargetError as e:
        return finished(report, start, target_error(e, path))
    except Exception as e:
        return finished(traced(report), start, user_error("eager", e, path))
    report = traced(replace(report, eager=eager.result, notes=report.notes + eager.notes,
                            reads_parameters=eager.reads_parameters))
    if isinstance(target.step, BackwardStep):
        report = replace(report, backward=target.step.report(), notes=report.notes + tuple(target.step.notes))
    if on_eager is not None:
        on_eager(with_files(replace(report, wall_s=time.perf_counter() - start), texts=False))

    def time_it(compiled_call, compiled_call_s: float):
        # Both halves ran: time them against each other, in turn.
        if before_timing is not None:
            before_timing()
        one_round = eager.result.kernel_time_us * 1e-6 + compiled_call_s
        timed = time_both(target.runner(), compiled_call, device, eager.dispatched, request.cold, one_round)
        if export is not None:  # after the timing, still under the compile's mode and options
            export.profile_compiled(compiled_call, device, request.calls)
        return timed

    planners: list[Planner] = []

    def planner(backend) -> Planner:
        early = with_files(replace(report, wall_s=time.perf_counter() - start), texts=False)
        planners.append(Planner(backend, _store, lambda plan: on_plan(replace(early, plan=plan)), on_progress))
        return planners[-1]

    def planned(report: Report) -> Report:
        """A failed compiled half keeps the plan it had shown (stale, with the error)."""
        return replace(report, plan=planners[-1].plan) if planners else report

    try:
        compiled = run_compiled(target, device, path, _store, eager, time_it, options=options,
                                planner=planner if on_plan is not None else None)
        report = replace(report, compiled=compiled.result, notes=report.notes + compiled.notes)
        timed = compiled.timing
    except CompileFailed as e:
        return finished(planned(traced(report)), start, user_error("compile", e.__cause__ or e, path))
    except Exception as e:
        return finished(planned(traced(report)), start, user_error("compiled", e, path))
    report = traced(report)
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
    e_mode = retimed(report.eager, timed.eager_kernel, timed.eager_call)
    c_mode = retimed(report.compiled, timed.compiled_kernel, timed.compiled_call)
    report = replace(report, eager=e_mode, compiled=c_mode, speedup=speedup(timed))
    return finished(report, start)


def target_error(e: TargetError, path: str) -> RunError:
    """A problem with the file or target (or --backward on it), said in kscope's one line."""
    return RunError(e.stage, "TargetError", e.message, path, e.line)


def finished(report: Report, start: float, error: RunError | None = None) -> Report:
    """The report with its error, its time, the user's files the run imported (or tried to), and
    the text of every file that holds a place."""
    errors = report.errors + ((error,) if error else ())
    report = replace(report, notes=report.notes + take_notes())  # a broken cache entry kscope removed
    remember_probe()  # a --once worker's compile probed the CPU's vector ISAs: the next need not
    return with_files(replace(report, errors=errors, wall_s=time.perf_counter() - start))


def with_files(report: Report, texts: bool = True) -> Report:
    """Report.files, root and sources as this run left them (engine.project). texts=False: the
    eager half's early report, which the app shows at once, carries no file's text (a library
    model's files are most of a Report: GPT-2's 205 kB of 322 kB); the final report does."""
    sources = {}
    if texts:
        places = [p for m in (report.eager, report.compiled) if m is not None
                  for rows in (m.kernels, m.round_trips or ()) for row in rows for p in row.lines]
        places += [b.place for b in report.compiled.graph_breaks if b.place] if report.compiled else []
        sources = project.sources(places)
        if report.source:
            sources.setdefault(project.display(report.file), report.source)
    return replace(report, files=project.files() or (report.file,), root=project.root(), sources=sources)


def user_error(stage: str, exc: BaseException, user_file: str) -> RunError:
    """The exception, placed at the deepest frame of the user's own files (the target's or one it
    imports: engine.project), or its SyntaxError line."""
    file = line = None
    if isinstance(exc, SyntaxError) and exc.filename:
        file, line = exc.filename, exc.lineno
    else:
        for frame in traceback.extract_tb(exc.__traceback__):
            if _theirs(frame.filename, user_file):
                file, line = frame.filename, frame.lineno
    if line is None:
        # dynamo and inductor name the user's frame in the message ("from user code: File ..., line N")
        for m in re.finditer(r'File "([^"]+)", line (\d+)', str(exc)):
            if _theirs(m.group(1), user_file):
                file, line = m.group(1), int(m.group(2))
    lines = [x.strip() for x in str(exc).strip().splitlines()]
    message = lines[0] if lines else ""
    kind = type(exc).__name__
    if (inside := compiler_message(exc)) is not None:  # not "backend='...' raised:" and nothing more
        kind, message = inside
    if isinstance(exc, MemoryError) or "can't allocate memory" in message or "out of memory" in message.lower():
        message = "out of memory" + (f": {message}" if message else "")
    explanation = next((x for x in lines if x.startswith("Explanation:")), None)
    if explanation:  # dynamo's errors put the useful part on their "Explanation:" line
        message += " — " + explanation.removeprefix("Explanation:").strip()
    if stage in ("load", "inputs") and "CUDA" in str(exc) and not torch.cuda.is_available():
        message += " (no CUDA device here: create tensors in `def inputs(device):` so kscope can choose)"
    return RunError(stage=stage, type=kind, message=message[:500], file=file, line=line)


def _theirs(path: str, user_file: str) -> bool:
    return os.path.realpath(path) == os.path.realpath(user_file) or project.is_user_file(path)
