"""Sizes as inductor compiled them: a size's hint, a loop body's iterations (bytes and FLOPs count
with them). Call while inductor's graph is current."""

from __future__ import annotations

import math


def iterations(sn) -> int:
    """How many times a scheduler node's loop body runs (its pointwise ranges by its reduction's)."""
    ranges = getattr(sn, "_sizes", None) or ()
    return math.prod(hint(s) for group in ranges for s in group)


def hint(expr) -> int | None:
    """A size's value as compiled; None for one with no hint: a data-dependent size (an unbacked
    symbol no user hint names), whose every hint is a guess."""
    import sympy
    from torch._inductor.virtualized import V
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

    sizevars = V.graph.sizevars
    expr = sizevars.simplify(sympy.sympify(expr))
    if free_unbacked_symbols(expr) - set(getattr(sizevars, "var_to_hint_override", None) or ()):
        return None
    return int(sizevars.optimization_hint(expr))
