"""Command line: `kscope FILE.py[:FUNCTION]` (the live app), `--once` / `--json` / `--markdown`, a
saved trace or a folder of rank traces, or `kscope serve`. A thin parser: each command is a module
of this package, and each imports what it needs only when it runs (the headless path never
imports textual, and this process never imports torch)."""

from __future__ import annotations

import os
import sys

from kscope.cli.args import (
    EXIT_USAGE,
    check_file,
    check_nproc,
    check_trace_dir,
    compile_options,
    parse_args,
    run_request,
    split_target,
    sweep_options,
)
from kscope.cli.once import run_once_cli
from kscope.cli.serve import serve_cli
from kscope.cli.traces import summarise_rank_traces, summarise_trace


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
        from kscope.trace.ranks import (
            trace_paths,  # no torch, no rich until they are needed
        )

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
    request = run_request(path, name, args, chosen)
    if args.once:
        return run_once_cli(request, args)
    from kscope.app.run_app import run_app  # textual is imported only for the live app

    return run_app(request, sweep=sweep_options(args), present=args.present, export_dir=args.export_dir)
