"""`kscope serve`: the live app in a browser tab, after the app's own flags are checked."""

from __future__ import annotations

import argparse
import sys

from kscope.cli.args import (
    EXIT_USAGE,
    check_file,
    compile_options,
    parse_args,
    split_target,
)


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
