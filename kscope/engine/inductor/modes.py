"""torch.compile's modes and inductor options, applied to kscope's own backend.

kscope compiles through a backend of its own (to see each graph dynamo hands inductor), and
torch.compile takes `mode=` and `options=` only with its built-in inductor backend. So kscope does
what that backend does: the mode's config (inductor's own `list_mode_options`) plus the user's
options, handed to `compile_fx` as config patches. They are also applied around the whole
compiled half, because some are read outside compile_fx: dynamo reads `freezing` while it traces
(it lifts parameters as constants only then).

Run as `python -m kscope.engine.inductor.modes NAME=VALUE ...` it checks option names and types
the values, for the command line (which imports no torch): it prints them as JSON, or one line
naming an unknown option and the closest real names, with exit status 2.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import sys
import typing
from typing import Any

from kscope.report.compile import CompileOptions


class BadOption(ValueError):
    """An option name inductor does not have, or a value of the wrong kind; one line for the user."""


def inductor_patches(options: CompileOptions) -> dict[str, Any]:
    """The inductor config the mode and the options set, as torch.compile(mode=..., options=...)
    would (mode first, options over it)."""
    from torch._inductor import list_mode_options

    patches = dict(list_mode_options(options.mode, options.dynamic)) if options.mode != "default" else {}
    patches.update(options.options)
    return patches


@contextlib.contextmanager
def applied(options: CompileOptions):
    """Inductor's config patched for the block (dynamo's tracing, compile and the calls)."""
    import torch
    import torch._inductor.config as ic

    if options.cuda_graphs and torch.cuda.is_available():
        # torch's own inductor backend sets CUPTI up so that the profiler survives CUDA graphs
        # (its constructor sets two environment variables); do as it does.
        try:
            torch._TorchCompileInductorWrapper(options.mode, None, options.dynamic)
        except Exception:
            pass
    with ic.patch(inductor_patches(options)):
        yield


def check_options(pairs: list[str]) -> dict[str, Any]:
    """["freezing=True", "max_autotune_gemm_backends=CPP"] -> {name: typed value}; BadOption when a
    name is not inductor's or a value does not parse as the option's type."""
    import torch._inductor.config as ic

    known = ic.get_config_copy()
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name:
            raise BadOption(f"--option {pair!r}: give it as NAME=VALUE (e.g. --option freezing=True)")
        if name not in known:
            close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
            said = f"; did you mean {', '.join(close)}?" if close else " (see torch._inductor.config)"
            raise BadOption(f"--option {name}: inductor has no such option{said}")
        out[name] = _typed(name, text.strip(), known[name], _declared_type(ic, name))
    return out


def _declared_type(ic, name: str):
    try:
        return ic.get_type(name)
    except Exception:  # an older torch without get_type: go by the current value
        return None


def _typed(name: str, text: str, current: Any, declared) -> Any:
    """The value as the option's type: bool ("True", "false", "1"), int, float, str, or None
    where the option may be None."""
    optional = declared is not None and type(None) in typing.get_args(declared)
    if text in ("None", "none") and (optional or current is None):
        return None
    kinds = [t for t in typing.get_args(declared) if t is not type(None)] if declared is not None else []
    kind = declared if isinstance(declared, type) else (kinds[0] if len(kinds) == 1 else type(current))
    if kind is bool:
        lowered = text.lower()
        if lowered in ("true", "1", "yes", "on"):
            return True
        if lowered in ("false", "0", "no", "off"):
            return False
        raise BadOption(f"--option {name}={text}: {name} is True or False")
    if kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            raise BadOption(f"--option {name}={text}: {name} is a number ({kind.__name__})") from None
    if kind is str or current is None:
        return text
    raise BadOption(f"--option {name}: kscope cannot set an option of type {kind.__name__} from the command line")


def main(argv: list[str]) -> int:
    try:
        print(json.dumps(check_options(argv)))
    except BadOption as e:
        print(f"kscope: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


# --- what the mode did --------------------------------------------------------------------------


def cudagraph_skips() -> int:
    """Inductor's count of graphs it did not capture in a CUDA graph though asked to (it counts a
    CPU graph under reduce-overhead too, without logging why)."""
    from torch._dynamo.utils import counters

    return int(counters["inductor"]["cudagraph_skips"])


def cuda_graphs_of(options: CompileOptions, device, timed, calls: int, reasons: list[str], skipped: int):
    """report.compile.CudaGraphs for a mode that asks for CUDA graphs (None for one that does not):
    the graph launches and the kernels inside them per call, from the profile; or why none ran."""
    from kscope.report.compile import CudaGraphs

    if not options.cuda_graphs:
        return None
    if device.type != "cuda":
        counted = f" (inductor skipped {skipped} graph{'s' if skipped != 1 else ''})" if skipped else ""
        return CudaGraphs(skipped=f"CUDA graphs exist only on CUDA devices: on the CPU the mode changes nothing{counted}")
    launches = len(timed.graph_launches)
    if launches == 0:
        return CudaGraphs(launches=0, kernels=0, skipped="; ".join(dict.fromkeys(reasons)) or "no CUDA graph ran")
    inside = sum(1 for launch in timed.launches if launch.in_graph)
    return CudaGraphs(launches=launches / calls, kernels=inside / calls)


def autotune_of(facts) -> tuple:
    """max-autotune's choices in the graphs that ran (each graph's GraphFacts, from the compile or
    kscope's store on a cache hit; None: unknown), one per op and sizes."""
    from kscope.report.compile import Autotune

    seen: dict[tuple, Autotune] = {}
    for known in facts:
        for choice in known.autotune if known is not None else ():
            seen[choice.op, choice.sizes] = choice
    return tuple(seen.values())
