"""`kscope TRACE.json[.gz]` and `kscope DIR`: saved profiler traces summarised, no run."""

from __future__ import annotations

import json
import os
import sys

from kscope.cli.args import EXIT_OK, EXIT_USAGE


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
