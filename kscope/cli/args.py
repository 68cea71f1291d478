"""The command line's arguments: parsed, checked, and turned into the request a run is."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from kscope.report.compile import MODES, CompileOptions
from kscope.report.request import (
    DEFAULT_CALLS,
    DEFAULT_COMPILE_TIMEOUT_S,
    DEFAULT_SWEEP_BUDGET_S,
    DEFAULT_TIMEOUT_S,
    RunRequest,
    SweepOptions,
)

EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE = 0, 1, 2


def split_target(spec: str) -> tuple[str, str | None]:
    """"path/file.py:fn" -> ("path/file.py", "fn"); a plain path -> (path, None)."""
    path, sep, name = spec.rpartition(":")
    if sep and name.isidentifier() and path:
        return path, name
    return spec, None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="kscope",
        description="Live kernel inspector for PyTorch: eager vs torch.compile, on every save.",
    )
    parser.add_argument("target", help="FILE.py[:FUNCTION], or a profiler trace (.json / .json.gz) to summarise")
    _output_arguments(parser)
    _run_arguments(parser)
    _compile_arguments(parser.add_argument_group("torch.compile"))
    _sweep_arguments(parser.add_argument_group("size sweep"))
    args = parser.parse_args(argv)
    if args.sizes or args.sweep_static:
        args.sweep = True
    return args


def _output_arguments(parser: argparse.ArgumentParser) -> None:
    """How kscope shows a run: the app, --once's tables, JSON or Markdown, exports and traces."""
    parser.add_argument("--once", action="store_true", help="run once, print the report and exit")
    parser.add_argument("--json", action="store_true", help="with --once: print only the Report as JSON on stdout")
    parser.add_argument(
        "--present", action="store_true", help="the app in its presentation view: big figures for a talk (key p)"
    )
    parser.add_argument(
        "--export-dir", default="kscope-export", metavar="DIR",
        help="where the app's key e exports (a new folder per export; default ./kscope-export)",
    )
    parser.add_argument(
        "--markdown", action="store_true", help="with --once: print only the Report as GitHub-flavoured Markdown"
    )
    parser.add_argument(
        "--trace-dir", metavar="DIR",
        help="with --once: save the run's chrome traces here (FILE-TARGET-eager.json.gz, ...-compiled.json.gz)",
    )


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    """Where and how the target runs: device, clocks, calls, ranks, caches, grad."""
    parser.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto", help="default: cuda when available")
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
        help="stop a run whose own code runs this long (time in torch.compile not counted)",
    )
    parser.add_argument(
        "--compile-timeout", type=float, default=DEFAULT_COMPILE_TIMEOUT_S, metavar="SECONDS",
        help="stop a run whose compiles take this long together",
    )
    parser.add_argument("--calls", type=int, default=DEFAULT_CALLS, help="calls profiled in the eager half's first look")
    parser.add_argument(
        "--nproc", type=int, metavar="N",
        help="run the target in N rank processes with a process group (gloo on the CPU, nccl on CUDA), as torchrun",
    )
    parser.add_argument("--cold", action="store_true", help="flush the caches before each timed call")
    grad = parser.add_mutually_exclusive_group()
    grad.add_argument(
        "--backward", action="store_true", help="run backward after the target too: forward and backward kernels"
    )
    grad.add_argument("--no-grad", action="store_true", help="run the target under torch.no_grad(): the inference graph")


def _compile_arguments(compiling) -> None:
    """How torch.compile compiles."""
    compiling.add_argument(
        "--mode", choices=MODES, default="default", help="torch.compile's mode (the app's key m steps through them)"
    )
    dynamic = compiling.add_mutually_exclusive_group()
    dynamic.add_argument("--dynamic", dest="dynamic", action="store_const", const=True, help="torch.compile(dynamic=True)")
    dynamic.add_argument(
        "--no-dynamic", dest="dynamic", action="store_const", const=False, help="torch.compile(dynamic=False)"
    )
    compiling.add_argument("--fullgraph", action="store_true", help="torch.compile(fullgraph=True): a graph break is an error")
    compiling.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE",
        help="an inductor config option (torch._inductor.config), e.g. freezing=True; repeatable",
    )


def _sweep_arguments(sweep) -> None:
    """--sweep: the target at n = 10², 10³, ..."""
    sweep.add_argument(
        "--sweep", action="store_true",
        help="run the target at sizes n = 10², 10³, ... (the file's inputs(device, n)): where compiled pulls away",
    )
    sweep.add_argument("--sizes", type=parse_sizes, metavar="N,N,...", help="the sizes to sweep (100,1e4,1e6)")
    sweep.add_argument(
        "--sweep-budget", type=float, default=DEFAULT_SWEEP_BUDGET_S, metavar="SECONDS",
        help="stop the sweep before a size that would end past this (default: 60)",
    )
    sweep.add_argument(
        "--sweep-static", action="store_true",
        help="compile each size on its own (default: one torch.compile for all sizes, as a program would)",
    )


def parse_sizes(text: str) -> tuple[int, ...]:
    """"100,1e4,1e6" -> (100, 10000, 1000000), ascending, each a whole number >= 1."""
    sizes = []
    for part in text.split(","):
        try:
            value = float(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a size: {part!r} (give sizes as 100,1e4,1e6)") from None
        if value < 1 or not value.is_integer():
            raise argparse.ArgumentTypeError(f"not a whole number of elements: {part!r}")
        sizes.append(int(value))
    return tuple(sorted(set(sizes)))


def sweep_options(args: argparse.Namespace) -> SweepOptions | None:
    """What --sweep asks for, or None without it."""
    if not args.sweep:
        return None
    return SweepOptions(args.sizes or None, args.sweep_budget, args.sweep_static)


def run_request(path: str, name: str | None, args: argparse.Namespace, compile: CompileOptions) -> RunRequest:
    """The run the flags ask for (`compile` from compile_options, checked)."""
    return RunRequest(
        path, name, args.device, args.calls, cold=args.cold, backward=args.backward, no_grad=args.no_grad,
        compile=compile, trace_dir=args.trace_dir, nproc=args.nproc, timeout=args.timeout,
        compile_timeout=args.compile_timeout,
    )


def compile_options(args: argparse.Namespace) -> CompileOptions | str:
    """How to compile, from the flags; or, for an option inductor does not have (or
    a value of the wrong type), the one line to print. Option names are checked by inductor's own
    config, in a short child process: this process imports no torch."""
    options: dict = {}
    if args.option:
        check = subprocess.run(
            [sys.executable, "-W", "ignore", "-m", "kscope.engine.inductor.modes", *args.option],
            capture_output=True, text=True,
        )
        if check.returncode != 0:
            lines = check.stderr.strip().splitlines()
            return next((x for x in lines if x.startswith("kscope: ")), lines[-1] if lines else "kscope: --option failed")
        options = json.loads(check.stdout)
    return CompileOptions(args.mode, args.dynamic, args.fullgraph, options)


def check_file(path: str) -> str | None:
    if not os.path.exists(path):
        return f"{path}: no such file"
    if os.path.isdir(path):
        return f"{path}: is a directory; give a Python file, e.g. {os.path.join(path, 'model.py')}"
    if not path.endswith(".py"):
        return f"{path}: not a .py file"
    return None


def check_nproc(args: argparse.Namespace) -> str | None:
    if args.nproc is None:
        return None
    if args.nproc < 1:
        return f"--nproc {args.nproc}: give the number of ranks, 1 or more"
    if args.sweep:
        return "--nproc runs one distributed run; a sweep makes many runs: drop --sweep or --nproc"
    return None


def check_trace_dir(args: argparse.Namespace) -> str | None:
    """--trace-dir: a folder kscope can write (made when missing), for a single --once run; its
    absolute path goes to the worker."""
    if not args.trace_dir:
        return None
    if args.sweep:
        return "--trace-dir saves the traces of one run; a sweep makes many runs: drop --sweep or --trace-dir"
    if not args.once:
        return "--trace-dir works with --once, --json or --markdown (in the app, key e exports the traces of the run on screen)"
    folder = os.path.abspath(args.trace_dir)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        return f"--trace-dir {args.trace_dir}: cannot make this folder ({e.strerror or e})"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"--trace-dir {args.trace_dir}: this folder is not writable"
    args.trace_dir = folder
    return None
