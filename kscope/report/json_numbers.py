"""How figures are written in kscope's JSON: counts as integers where whole, fractions to 3 places."""

from __future__ import annotations


def json_number(x: float) -> float | int:
    """A count as JSON: 2, not 2.0; a fraction to 3 places."""
    return int(x) if float(x).is_integer() else round(x, 3)


def rounded(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def pair(x: tuple[float, float] | None) -> list[float] | None:
    return None if x is None else [round(x[0], 3), round(x[1], 3)]
