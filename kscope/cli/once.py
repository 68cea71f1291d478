"""`kscope FILE.py --once` (and --json, --markdown): one run, printed; the exit code says how it went."""

from __future__ import annotations

import argparse
import json
import sys

from kscope.cli.args import EXIT_OK, EXIT_RUN_FAILED, sweep_options
from kscope.report.codec import report_to_dict
from kscope.report.request import RunRequest
from kscope.worker.once import run_once


def run_once_cli(request: RunRequest, args: argparse.Namespace) -> int:
    """--once, --json, --markdown: one run in a fresh worker, printed."""
    # With --json or --markdown, stdout carries the Report alone: the user's prints and logs go to stderr.
    report = run_once(request, stdout=sys.stderr.fileno(), sweep=sweep_options(args))
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
