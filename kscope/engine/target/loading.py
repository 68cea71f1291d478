"""Load the user's file into a fresh module and find what to run and what to run it on.

`FILE.py:NAME` names the target; without NAME the file's only candidate is used: a function
defined in the file (not imported, not private, not `inputs`) or, when there is none, an
nn.Module instance made at module level. Inputs come from `inputs()` in the file (given `device`
and/or `n` when its signature asks for them), else from module-level tensors named like the
target's parameters.
"""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import os
import sys
import types
from dataclasses import dataclass
from typing import Any

import torch

from kscope.engine.target import project

_run_ids = itertools.count()


class TargetError(Exception):
    """A problem with the user's file or target, said in one line."""

    def __init__(self, stage: str, message: str, line: int | None = None):
        super().__init__(message)
        self.stage, self.message, self.line = stage, message, line


class InputsFailed(Exception):
    """The file's inputs() raised; its exception is the cause."""


@dataclass
class Target:
    name: str
    fn: Any
    module: types.ModuleType
    args: tuple
    notes: tuple[str, ...] = ()
    source: str = ""
    lines: tuple[int, int] | None = None
    """First and last line of the target's definition in the file."""
    step: Any = None
    """What each call runs in, given the function and this target (engine.target.training: a training
    step, or no_grad); None: the function as the user wrote it."""

    def runner(self, fn: Any = None):
        """One call of fn (the target's own function by default; its compiled form), with the
        step around it. Reads `args` at each call: a step may replace them."""
        fn = self.fn if fn is None else fn
        if self.step is None:
            return lambda: fn(*self.args)
        return lambda: self.step(fn, self)


def load_module(path: str) -> types.ModuleType:
    """Execute the file as a new module, never reusing one from an earlier run, nor any module of
    the user's it imports (engine.target.project): the code that runs is the code on disk now. A file
    inside a package runs as that package's module (its relative imports work); its folder, or
    its package's, comes first on sys.path, as for `python FILE.py`."""
    path = os.path.abspath(path)
    project.install()
    project.forget_user_modules()
    if not os.path.exists(path):
        raise TargetError("load", f"{path}: no such file")
    if os.path.isdir(path):
        raise TargetError("load", f"{path}: is a directory, not a Python file")
    with open(path, "rb") as f:
        raw = f.read()
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TargetError("load", f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    # Tracebacks and inductor's stack traces quote the source that ran, not a later save.
    project.remember(path, source)
    folder, dotted = project.package_of(path)
    project.put_on_path(folder)
    name = dotted or f"__kscope_target_{next(_run_ids)}__"
    module = types.ModuleType(name)
    module.__file__ = path
    module.__kscope_source__ = source
    if dotted:
        module.__package__ = dotted.rpartition(".")[0]
        module.__spec__ = importlib.util.spec_from_file_location(dotted, path)
    sys.modules[name] = module  # dataclasses, pickle and inspect look modules up here
    project.loaded(name)
    code = compile(source, path, "exec")  # SyntaxError carries file and line
    exec(code, module.__dict__)
    return module


def candidates(module: types.ModuleType) -> tuple[list[str], list[str]]:
    """(functions defined in the file, nn.Module instances made at module level)."""
    fns, mods = [], []
    for name, value in vars(module).items():
        if name.startswith("_") or name == "inputs":
            continue
        if inspect.isfunction(value) and value.__module__ == module.__name__:
            fns.append(name)
        elif isinstance(value, torch.nn.Module):
            mods.append(name)
    return fns, mods


def resolve(module: types.ModuleType, name: str | None) -> tuple[str, Any]:
    fns, mods = candidates(module)
    if name:
        if name not in vars(module):
            listed = ", ".join(fns + mods) or "none"
            raise TargetError("target", f"no target named '{name}' in {module.__file__} (candidates: {listed})")
        value = getattr(module, name)
        if not callable(value):
            raise TargetError("target", f"'{name}' in {module.__file__} is not a function or nn.Module")
        return name, value
    pool = fns or mods
    if len(pool) == 1:
        return pool[0], getattr(module, pool[0])
    what = "several candidates" if pool else "no candidate function"
    listed = ", ".join(fns + mods) or "none"
    raise TargetError(
        "target", f"{module.__file__}: {what} ({listed}); name one as {os.path.basename(module.__file__)}:NAME"
    )


def make_inputs(module: types.ModuleType, fn: Any, device: torch.device, n: int | None = None) -> tuple[tuple, list[str]]:
    notes: list[str] = []
    make = vars(module).get("inputs")
    if callable(make):
        params = inspect.signature(make).parameters
        kwargs: dict[str, Any] = {}
        if "device" in params:
            kwargs["device"] = device
        if "n" in params and n is not None:
            kwargs["n"] = n
        args = make(**kwargs)
        args = args if isinstance(args, tuple) else (args,)
        if not any(isinstance(a, torch.Tensor) for a in args):
            raise TargetError("inputs", f"inputs() returned no tensor (got {_types(args)})")
        if "device" not in params:
            args, moved = _to_device(args, device)
            if moved:
                notes.append(f"inputs() takes no device: moved its tensors to {device}")
        return args, notes
    signature = inspect.signature(code_of(fn))
    args, names, missing = [], [], []
    for p in signature.parameters.values():
        value = vars(module).get(p.name)
        if isinstance(value, torch.Tensor):
            args.append(value)
            names.append(p.name)
        elif p.default is not inspect.Parameter.empty:
            break
        else:
            missing.append(p.name)
    if missing:
        raise TargetError(
            "inputs",
            f"no inputs() and no module-level tensor for {', '.join(missing)}; "
            "add `def inputs(device): return (...)` to the file",
        )
    args, moved = _to_device(tuple(args), device)
    if moved:
        notes.append(f"moved module-level tensors {', '.join(names[i] for i in moved)} to {device}")
    return args, notes


def _to_device(args: tuple, device: torch.device) -> tuple[tuple, list[int]]:
    """The args on `device`, and the positions of those that had to move."""
    out, moved = [], []
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor) and a.device.type != device.type:
            moved.append(i)
            a = a.to(device)
        out.append(a)
    return tuple(out), moved


def _types(args: tuple) -> str:
    return ", ".join(type(a).__name__ for a in args) or "nothing"


def prepare(path: str, name: str | None, device: torch.device, n: int | None = None) -> Target:
    module = load_module(path)
    target_name, fn = resolve(module, name)
    if isinstance(fn, torch.nn.Module):
        fn = fn.to(device)
    try:
        args, notes = make_inputs(module, fn, device, n)
    except TargetError:
        raise
    except Exception as e:  # inputs() itself raised: the user's error, at the inputs stage
        raise InputsFailed(e) from e
    return Target(target_name, fn, module, args, tuple(notes), module.__kscope_source__, definition_lines(fn))


def code_of(fn: Any) -> Any:
    """The function that runs: a module's forward, or the function itself."""
    return fn.forward if isinstance(fn, torch.nn.Module) else fn


def definition_lines(fn: Any) -> tuple[int, int] | None:
    """Where the target is defined (a module's forward for an nn.Module)."""
    try:
        lines, start = inspect.getsourcelines(code_of(fn))
    except (OSError, TypeError):
        return None
    return start, start + len(lines) - 1
