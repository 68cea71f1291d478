"""What every run and every sweep does first and last: pick the device, load the target, end in the
error a stage failed with (placed at the user's line), and finish the Report with its files."""

from __future__ import annotations

import os
import platform
import re
import time
import traceback
from collections.abc import Callable
from dataclasses import replace

import torch

from kscope.engine.compiled.errors import compiler_message
from kscope.engine.inductor.kill_safe import take_notes
from kscope.engine.inductor.vec_isa import remember_probe
from kscope.engine.target import project
from kscope.engine.target.loading import InputsFailed, Target, TargetError, prepare
from kscope.engine.target.training import step_for
from kscope.report.model import Report, RunError
from kscope.report.request import RunRequest


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


def start(path: str, request: RunRequest, size: Callable[[torch.device], int | None],
          check: Callable[[Target], str | None] | None = None) -> tuple[Report, Target | None, torch.device | None]:
    """The device and the target, ready to run at `size(device)` (the file's `inputs(device, n)`);
    check(target) may say why it cannot run. On a problem, the finished Report with its error, and
    no target: the user's module raising while it loads is an error like any other (KeyboardInterrupt
    aside)."""
    began = time.perf_counter()
    report = Report(file=path, target=request.target or "", torch_version=torch.__version__)
    try:
        device = pick_device(request.device)
        report = replace(report, device=device.type, device_name=device_name(device))
        target = prepare(path, request.target, device, size(device))
        problem = check(target) if check is not None else None
        if problem:
            raise TargetError("inputs", problem)
        target.step = step_for(request.backward, request.no_grad, target)
    except TargetError as e:
        return finished(report, began, target_error(e, path)), None, None
    except InputsFailed as e:
        return finished(report, began, user_error("inputs", e.__cause__, path)), None, None
    except BaseException as e:  # the user's module raised while loading
        if isinstance(e, KeyboardInterrupt):
            raise
        return finished(report, began, user_error("load", e, path)), None, None
    return report, target, device


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
    """Report.files, root and sources as this run left them (engine.target.project). texts=False: the
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
    imports: engine.target.project), or its SyntaxError line."""
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
