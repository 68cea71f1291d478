"""Pure functions from Reports to what the panes show. No textual, no torch: easy to test."""

from __future__ import annotations

from dataclasses import dataclass

from kscope.report import Kernel, ModeResult, Report, fmt_bytes, fmt_count

@dataclass(frozen=True)
class KernelRow:
    key: str
    name: str
    launches: str
    time: str
    traffic: str
    fused: bool
    change: str = ""


def kernel_rows(mode: ModeResult | None, previous: ModeResult | None = None) -> list[KernelRow]:
    if mode is None:
        return []
    before = {k.name: k for k in previous.kernels} if previous else {}
    rows = []
    for k in mode.kernels:
        old = before.get(k.name)
        if previous is None:
            change = ""
        elif old is None:
            change = "new"
        elif old.launches != k.launches:
            change = f"{fmt_count(old.launches)}→{fmt_count(k.launches)}"
        else:
            change = ""
        rows.append(
            KernelRow(
                key=k.name,
                name=k.name,
                launches=fmt_count(k.launches),
                time=f"{k.time_us:.1f}",
                traffic=fmt_bytes(k.bytes_total),
                fused=k.fused,
                change=change,
            )
        )
    return rows


def vanished(mode: ModeResult | None, previous: ModeResult | None) -> list[str]:
    """Kernel names the previous report had and this one has not."""
    if mode is None or previous is None:
        return []
    now = {k.name for k in mode.kernels}
    return [k.name for k in previous.kernels if k.name not in now]


def launch_change(now: float | None, before: float | None) -> str:
    """"5 → 3, −2" since the previous save; "" when there is nothing to compare."""
    if now is None or before is None:
        return ""
    delta = now - before
    if delta == 0:
        return f"{fmt_count(before)} → {fmt_count(now)}, ±0"
    sign = "+" if delta > 0 else "−"
    return f"{fmt_count(before)} → {fmt_count(now)}, {sign}{fmt_count(abs(delta))}"


def transfers_text(report: Report, nbytes: int) -> str:
    """"5.0×": bytes in array-sized transfers (÷ the largest input), the article's unit."""
    t = report.transfers(nbytes)
    return "" if t is None else f"{t:.1f}×"


def saving(report: Report) -> str:
    e, c = report.eager, report.compiled
    if not e or not c or not e.bytes_total:
        return ""
    change = (c.bytes_total - e.bytes_total) / e.bytes_total * 100
    return f"compiled: {abs(change):.0f}% {'less' if change < 0 else 'more'} traffic"


def kernel_detail(k: Kernel) -> str:
    """The full text for a selected kernel: name untruncated, ops, lines, traffic."""
    parts = [k.name]
    if k.ops:
        parts.append("ops: " + ", ".join(k.ops))
    if k.lines:
        parts.append("lines: " + ", ".join(map(str, k.lines)))
    parts.append(
        f"{fmt_count(k.launches)}/call · {k.time_us:.1f} µs · R {fmt_bytes(k.bytes_read)} · W {fmt_bytes(k.bytes_written)}"
    )
    return "\n".join(parts)
