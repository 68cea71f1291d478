"""max-autotune's choices, as inductor's autotuner timed them.

Inductor calls each "feedback saver" (torch._inductor.select_algorithm.add_feedback_saver) with the
timings of every candidate it benchmarked for an op (a matmul from the library, from a C++ or
Triton template, ...), whether it measured them now or read them from its autotune cache. kscope
keeps them with the graph being compiled: which candidate won, and by how much.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from kscope.report.compile import Autotune, sorted_choices


@contextlib.contextmanager
def autotune_timings(on_choice: Callable[[Autotune], None]):
    """Call on_choice(Autotune) for each op inductor autotunes in the block."""
    try:
        from torch._inductor import select_algorithm
    except ImportError:  # no inductor: nothing is autotuned
        yield
        return

    def saver(timings, name, input_nodes, *rest) -> None:
        try:
            names = {getattr(c, "name", str(c)): t for c, t in timings.items()}
            said = {getattr(c, "name", str(c)): str(getattr(c, "description", "") or "") for c in timings}
            on_choice(Autotune(op=str(name), sizes=_sizes(input_nodes), choices=sorted_choices(names, said)))
        except Exception:  # a listener must never break the user's compile
            pass

    cache = select_algorithm.get_algorithm_selector_cache()
    savers = getattr(cache, "feedback_saver_fns", None)
    if savers is None:  # a torch without feedback savers: autotune results stay unknown
        yield
        return
    savers.append(saver)
    try:
        yield
    finally:
        if saver in savers:
            savers.remove(saver)


def _sizes(input_nodes) -> str:
    """"256x512, 1024x512" (as inductor's AUTOTUNE log writes them); "?" for a size with symbols."""
    out = []
    for node in input_nodes:
        try:
            out.append("x".join(str(int(s)) if str(s).lstrip("-").isdigit() else "?" for s in node.get_size()))
        except Exception:
            out.append("?")
    return ", ".join(out)
