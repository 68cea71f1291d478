"""The words for a Report's figures: bytes, counts, phases and the one-line summary, shared by
every view (the app, --once, --markdown). No torch."""

from __future__ import annotations

from kscope.report.model import PHASES, ModeResult, Report


def fmt_bytes(n: float | None, unknown: str = "?") -> str:
    """Decimal units, as the article counts: 20,000,000 B is 20.0 MB; `unknown` when unknown."""
    if n is None:
        return unknown
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


def traffic_text(mode: ModeResult, unknown: str = "?", short: bool = False) -> str:
    """A mode's bytes read + written: "20.0 MB"; where some rows are unknown, what is known and
    how much is not: "≥ 15.3 MB; 5 rows unknown" (short: "≥ 15.3 MB (5 unknown)"); `unknown` when
    no row is known."""
    if mode.bytes_total is not None:
        return fmt_bytes(mode.bytes_total)
    missing = mode.rows_unknown
    if not missing or missing == len(mode.kernels):
        return unknown
    if short:
        return f"≥ {fmt_bytes(mode.bytes_known)} ({missing} unknown)"
    return f"≥ {fmt_bytes(mode.bytes_known)}; {missing} row{'s' if missing != 1 else ''} unknown"


def fmt_count(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.2f}"


PHASE_TAGS = {"forward": "fwd", "backward": "bwd", "optimizer": "opt"}


def phases_ran(report: Report) -> list[str]:
    """The phases either mode ran, in PHASES order."""
    return [p for p in PHASES if any(m and m.phase(p) for m in (report.eager, report.compiled))]


def phase_launches(report: Report) -> str:
    """"fwd 4 → 2 · bwd 9 → 5" when more than the forward ran, else ""."""
    e, c = report.eager, report.compiled
    ran = phases_ran(report)
    if ran == ["forward"] or not ran or e is None:
        return ""

    def count(mode: ModeResult | None, phase: str) -> str:
        if mode is None:
            return "…"
        totals = mode.phase(phase)
        return fmt_count(totals.launches if totals else 0)

    return " · ".join(f"{PHASE_TAGS[p]} {count(e, p)} → {count(c, p)}" for p in ran)


def summary_line(report: Report, unknown: str = "?", peak: bool = True) -> str:
    """One line a speaker can point at: launches 2 → 1, traffic 20.0 MB → 12.0 MB, −40%, peak 8.0 MB →
    4.0 MB (the memory one call holds above what existed before it, where both are known and `peak`; launches per phase when backward ran: "fwd 2 → 1 · bwd 2 → 2, traffic …"); unknown bytes: `unknown`."""
    e, c = report.eager, report.compiled
    if e is None:
        return "no result"
    if c is None:
        return f"launches {fmt_count(e.launches)}, traffic {traffic_text(e, unknown, short=True)} (compiled: no result)"
    launches = phase_launches(report) or f"launches {fmt_count(e.launches)} → {fmt_count(c.launches)}"
    text = f"{launches}, traffic {traffic_text(e, unknown, short=True)} → {traffic_text(c, unknown, short=True)}"
    if e.bytes_total and c.bytes_total is not None:
        change = (c.bytes_total - e.bytes_total) / e.bytes_total * 100
        text += f", {'−' if change < 0 else '+'}{abs(change):.0f}%"
    if peak and peak_text(report):
        text += f", {peak_text(report)}"
    return text


def peak_text(report: Report) -> str:
    """"peak 8.0 MB → 4.0 MB": the memory one call holds at its peak, eager → compiled; "" unless both are known."""
    e, c = report.eager, report.compiled
    if e is None or c is None or e.memory is None or c.memory is None:
        return ""
    return f"peak {fmt_bytes(e.memory.peak_bytes)} → {fmt_bytes(c.memory.peak_bytes)}"


def per_element(nbytes: int | None, n: int) -> str:
    """Bytes per element of n, as a sweep's table says it ("20"; "?" when unknown)."""
    return "?" if nbytes is None else f"{nbytes / n:.3g}"
