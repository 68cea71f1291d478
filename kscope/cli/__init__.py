"""Command line: `kscope FILE.py[:FUNCTION]` (the live app), `--once` / `--json` / `--markdown`, or a
saved trace (`--json` too)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from kscope.report.codec import compile_options_to_dict, report_to_dict
from kscope.report.compile import MODES, CompileOptions

EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_SWEEP_BUDGET_S = 60.0


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
    parser.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto", help="default: cuda when available")
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS", help="stop a run after this long"
    )
    parser.add_argument("--calls", type=int, default=5, help="calls profiled in the eager half's first look")
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
    compiling = parser.add_argument_group("torch.compile")
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
    sweep = parser.add_argument_group("size sweep")
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
    args = parser.parse_args(argv)
    if args.sizes or args.sweep_static:
        args.sweep = True
    return args


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


def sweep_options(args: argparse.Namespace) -> dict | None:
    """The sweep's request fields (engine.sweep.SweepRequest), or None without --sweep."""
    if not args.sweep:
        return None
    return {"sizes": list(args.sizes) if args.sizes else None, "budget_s": args.sweep_budget, "static": args.sweep_static}


def switches(args: argparse.Namespace) -> dict:
    """The run's switches and compile options, as the worker's RunRequest names them."""
    return {
        "cold": args.cold, "backward": args.backward, "no_grad": args.no_grad, "compile": args.compile,
        "trace_dir": args.trace_dir, "nproc": args.nproc,
    }


def compile_options(args: argparse.Namespace) -> dict | str:
    """The Report's compile_options from the flags; or, for an option inductor does not have (or
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
    return compile_options_to_dict(CompileOptions(args.mode, args.dynamic, args.fullgraph, options))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve"]:
        return serve_cli(argv[1:])
    args = parse_args(argv)
    if args.json and args.markdown:
        print("kscope: --json and --markdown: give one of them (each prints the Report alone on stdout)", file=sys.stderr)
        return EXIT_USAGE
    if args.json or args.markdown:
        args.once = True
    if args.target.endswith((".json", ".json.gz")):
        if args.markdown or args.trace_dir:
            print(f"kscope: {'--markdown' if args.markdown else '--trace-dir'} is for a run of FILE.py; "
                  "a trace takes --json", file=sys.stderr)
            return EXIT_USAGE
        return summarise_trace(args.target, as_json=args.json)
    if os.path.isdir(args.target) and not args.markdown and not args.trace_dir:
        from kscope.trace.ranks import trace_paths

        if trace_paths(args.target):
            return summarise_rank_traces(args.target, as_json=args.json)
    path, name = split_target(args.target)
    problem = check_file(path) or check_nproc(args) or check_trace_dir(args)
    if problem:
        print(f"kscope: {problem}", file=sys.stderr)
        return EXIT_USAGE
    chosen = compile_options(args)
    if isinstance(chosen, str):
        print(chosen, file=sys.stderr)
        return EXIT_USAGE
    args.compile = chosen
    if args.once:
        return run_once_cli(path, name, args)
    from kscope.app.run_app import run_app  # textual is imported only for the live app

    return run_app(
        path, name, device=args.device, timeout=args.timeout, calls=args.calls, sweep=sweep_options(args),
        present=args.present, export_dir=args.export_dir, **switches(args),
    )


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


def run_once_cli(path: str, name: str | None, args: argparse.Namespace) -> int:
    from kscope.worker.once import run_once

    # With --json or --markdown, stdout carries the Report alone: the user's prints and logs go to stderr.
    report = run_once(
        path, name, args.device, args.timeout, args.calls, stdout=sys.stderr.fileno(), sweep=sweep_options(args),
        **switches(args),
    )
    code = EXIT_OK if report.ok else EXIT_RUN_FAILED
    if args.json:
        json.dump(report_to_dict(report), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return code
    if args.markdown:
        from kscope.render.markdown import report_markdown

        sys.stdout.write(report_markdown(report))
        return code
    if report.errors and report.eager is None and not (report.sweep and report.sweep.points):
        # Nothing ran: one clear line per error, no table.
        from kscope.render.view import error_detail, error_where

        for e in report.errors:
            where = f"{error_where(e)}: " if e.file and e.line else ""
            print(f"kscope: {where}{error_detail(e)}", file=sys.stderr)
        return code
    from rich.console import Console

    console = Console()
    if report.sweep is not None:
        from kscope.render.sweep import render_sweep

        console.print(render_sweep(report, console.width))
        return code
    from kscope.render.report import render_report

    console.print(render_report(report))
    return code


def summarise_trace(path: str, as_json: bool = False) -> int:
    if not os.path.isfile(path):
        print(f"kscope: {path}: no such file", file=sys.stderr)
        return EXIT_USAGE
    from kscope.trace.file import figures_to_dict, trace_figures
    from kscope.trace.kernels import load_trace

    try:
        figures = trace_figures(path, load_trace(path))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        print(f"kscope: {path}: not a profiler trace ({e})", file=sys.stderr)
        return EXIT_USAGE
    if as_json:
        json.dump(figures_to_dict(figures), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return EXIT_OK
    from rich.console import Console

    from kscope.render.trace import render_trace

    Console().print(render_trace(figures))
    return EXIT_OK


def summarise_rank_traces(folder: str, as_json: bool = False) -> int:
    """`kscope DIR`: a folder of per-rank chrome traces (trace_ranks)."""
    from kscope.trace.ranks import folder_dict, rank_traces

    try:
        ranks = rank_traces(folder)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        print(f"kscope: {folder}: not a folder of profiler traces ({e})", file=sys.stderr)
        return EXIT_USAGE
    if as_json:
        json.dump(folder_dict(folder, ranks), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return EXIT_OK
    from rich.console import Console

    from kscope.render.trace import render_rank_traces

    Console().print(render_rank_traces(folder, ranks))
    return EXIT_OK


def serve_cli(argv: list[str]) -> int:
    """`kscope serve FILE.py[:NAME] [--host H] [--port P] [the app's flags]`: the app in a browser."""
    parser = argparse.ArgumentParser(
        prog="kscope serve", description="The live app in a browser tab (textual-serve); the app's flags follow."
    )
    parser.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1; anything else is reachable "
                        "by others, and textual-serve has no authentication")
    parser.add_argument("--port", type=int, default=8000)
    served, app_argv = parser.parse_known_args(argv)
    args = parse_args(app_argv)  # the app's own flags, checked before anything is served
    if args.once or args.json or args.target.endswith((".json", ".json.gz")):
        print("kscope serve: serves the live app on a Python file (no --once, --json or trace)", file=sys.stderr)
        return EXIT_USAGE
    problem = check_file(split_target(args.target)[0])
    chosen = compile_options(args) if not problem else None
    if problem or isinstance(chosen, str):
        print(f"kscope: {problem}" if problem else chosen, file=sys.stderr)
        return EXIT_USAGE
    try:
        import textual_serve  # noqa: F401
    except ImportError:
        print("kscope serve needs textual-serve: pip install 'kscope[serve]'", file=sys.stderr)
        return EXIT_USAGE
    from kscope.app.serve import exposed_warning, is_loopback, serve

    if not is_loopback(served.host):
        print(exposed_warning(served.host, served.port), file=sys.stderr)
    return serve(app_argv, served.host, served.port, title=args.target)
