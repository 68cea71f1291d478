"""The verdict in words: compiled against eager by call time (what the program pays), the
kernels' own ratio as its explanation, and what changed since the last save by the same noise
rule (report.model.Speedup)."""

from __future__ import annotations

from kscope.render.memory import PEAK_BRIEFS, peak_change
from kscope.render.text import fmt_bytes, fmt_count
from kscope.render.view import fmt_us
from kscope.report.model import ModeResult, Report
from kscope.report.speedup import NOISE_FLOOR

WRAPPER = "wrapper and guards dominate at this size"


def verdict_text(report: Report) -> str:
    """"1.9× faster", "same within noise": compiled against eager, by median call time."""
    return report.speedup.text() if report.speedup else ""


def verdict_line(report: Report) -> str:
    """"compiled 1.9× faster", "compiled and eager: same within noise", "can't tell: the CPU was busy
    (the timed calls waited 35% of the time they wanted a CPU)"; "" when the modes were not timed against
    each other."""
    s = report.speedup
    if not report.eager or not report.compiled or s is None:
        return ""
    if s.verdict in ("faster", "slower"):
        return f"compiled {s.text()}"
    if s.verdict == "busy":
        share = f"{s.cpu_waiting:.0%}" if s.cpu_waiting is not None else "much"
        return f"can't tell: the CPU was busy (the timed calls waited {share} of the time they wanted a CPU)"
    return "compiled and eager: same within noise"


def call_text(report: Report) -> str:
    """"call 417 µs → 353 µs": the wall time of one call, guards and wrapper included."""
    e, c = report.eager, report.compiled
    if not e or not c or e.call_time_us is None or c.call_time_us is None:
        return ""
    return f"call {fmt_us(e.call_time_us)} → {fmt_us(c.call_time_us)}"


def measure_text(report: Report) -> str:
    """Which measure the verdict uses, and why."""
    if report.device.startswith("cuda"):
        return (
            "the verdict goes by call time, synchronized after each call: what the program waits for "
            "(kernel times leave out launch overhead, the compiled wrapper and its guards)"
        )
    return (
        "the verdict goes by call time: what the program pays (on the CPU an eager op's profiled time holds the "
        "dispatcher, a compiled kernel's only its loop)"
    )


def explanation(report: Report, short: bool = False) -> str:
    """The kernels' own verdict beside the call's: "kernels 20.0× faster, but the compiled call costs
    17 µs more: wrapper and guards dominate at this size" (short: "kernels 20.0× faster; call slower");
    "" when the kernels were not timed or the CPU was busy."""
    s, e, c = report.speedup, report.eager, report.compiled
    if s is None or s.verdict == "busy" or not s.kernel_text():
        return ""
    kernels = f"kernels {s.kernel_text()}" if s.kernel_verdict != "same within noise" else "kernels: same within noise"
    costs_more = (
        s.kernel_verdict == "faster" and s.verdict != "faster" and e is not None and c is not None
        and e.call_time_us is not None and c.call_time_us is not None and c.call_time_us > e.call_time_us
    )
    if not costs_more:
        return kernels
    if short:
        return f"{kernels}; the wrapper costs more"
    return f"{kernels}, but the compiled call costs {fmt_us(c.call_time_us - e.call_time_us)} more: {WRAPPER}"


def time_change(before: ModeResult, now: ModeResult, busy: bool) -> str | None:
    """The call time then and now, or what keeps it from being told: None when it changed beyond
    noise (the caller prints both), "? (CPU busy)", or "≈ 41 µs" (within the noise floor)."""
    then, later = _paid(before), _paid(now)
    if then is None or later is None:
        return "?"
    if busy:
        return "? (CPU busy)"
    if max(then, later) <= min(then, later) * (1 + NOISE_FLOOR):
        return f"≈ {fmt_us(later)}"
    return None


def _paid(m: ModeResult) -> float | None:
    return m.call_time_us if m.call_time_us is not None else m.kernel_time_us


def change_line(label: str, before: ModeResult | None, now: ModeResult | None, compact: bool = False,
                busy: bool = False, width: int | None = None) -> str:
    """"compiled: launches 5 → 3, traffic 20.0 MB → 12.0 MB, call 41 µs → 23 µs" since the last save;
    compact: "Δ compiled: launches 5→3, 20.0 MB→12.0 MB, 41 µs→23 µs" (fits half of 120 columns).
    The time follows the verdict's rule: busy (either run's verdict) or within noise, it says so. A
    moved peak ends it: ", peak +4.0 MB: a new temporary at model.py:14" (render.memory); width:
    the columns the line has, which the peak's clause is shortened to fit (its delta always said)."""
    if before is None or now is None:
        return ""
    told = time_change(before, now, busy)
    arrow = "→" if compact else " → "
    time = told if told is not None else f"{fmt_us(_paid(before))}{arrow}{fmt_us(_paid(now))}"
    if compact:
        line = (
            f"Δ {label}: launches {fmt_count(before.launches)}→{fmt_count(now.launches)}, "
            f"{fmt_bytes(before.bytes_total)}→{fmt_bytes(now.bytes_total)}, {time}"
        )
    else:
        line = (
            f"{label}: launches {fmt_count(before.launches)} → {fmt_count(now.launches)}, "
            f"traffic {fmt_bytes(before.bytes_total)} → {fmt_bytes(now.bytes_total)}, call {time}"
        )
    for brief in range(PEAK_BRIEFS):
        peak = peak_change(before.memory, now.memory, brief=brief)
        told = f"{line}, {peak}" if peak else line
        if width is None or len(told) <= width:
            break
    return told


def busy(*reports: Report | None) -> bool:
    """Either run's verdict was "busy": a time difference between them says nothing."""
    return any(r is not None and r.speedup is not None and r.speedup.verdict == "busy" for r in reports)
