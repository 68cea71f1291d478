"""Pure functions from Reports to what the panes show. No textual, no torch: easy to test."""

from __future__ import annotations

import os
from dataclasses import dataclass

from kscope.render.columns import NO_WRAP, Column, Columns, or_unknown
from kscope.render.text import PHASE_TAGS, fmt_bytes, fmt_count
from kscope.report.measures import sum_known
from kscope.report.model import Kernel, ModeResult, Report, RunError
from kscope.report.roofs import MAIN_MEMORY, Judged
from kscope.report.speedup import ratio_text

PENDING = "…"
"""A plan's launches and time (report.plan): not known until the run, shown as pending, not 0."""

KERNELS = Columns("kernels", (
    Column("phase", "phase", lambda k, w: PHASE_TAGS.get(k.phase, k.phase), rich=NO_WRAP),
    Column("kernel", "kernel", lambda k, w: k.name, width=22, code=True,
           rich={"no_wrap": True, "overflow": "ellipsis", "ratio": 1, "min_width": 16}),
    Column("launches", "launches", lambda k, w: PENDING if k.launches is None else fmt_count(k.launches), "r",
           narrow="launch", width=6, rich=NO_WRAP),
    Column("time", "µs/call", lambda k, w: PENDING if k.time_us is None else f"{k.time_us:.1f}", "r", width=8,
           rich=NO_WRAP),
    Column("traffic", "traffic", lambda k, w: or_unknown(k.bytes_total, fmt_bytes), "r", width=8, rich=NO_WRAP),
    Column("read", "read", lambda k, w: or_unknown(k.bytes_read, fmt_bytes), "r", rich=NO_WRAP),
    Column("written", "written", lambda k, w: or_unknown(k.bytes_written, fmt_bytes), "r", rich=NO_WRAP),
    # a library model's places are long ("11 via transformers/models/gpt2/modeling_gpt2.py:569,576"):
    # --once folds them within a third of its width, never squeezing the kernel's name out
    Column("lines", "lines", lambda k, w: places_text(k.lines, w.home, sep=","), "r",
           rich={"overflow": "fold", "ratio": 1}),
))
"""A mode's kernels, a Kernel a row (a mode's totals too, as kernel-shaped rows with no lines)."""
KERNELS_APP = KERNELS.pick("kernel", "launches", "time", "traffic")
"""The app's kernel tables: what fits beside the other panes (narrow labels, fixed widths but the name's)."""
KERNELS_ONCE = KERNELS.pick("kernel", "launches", "time", "read", "written", "lines")
"""`--once`'s kernel tables, `phase` first when more than a forward ran."""


@dataclass(frozen=True)
class KernelRow:
    key: str
    name: str
    launches: str
    time: str
    traffic: str
    fused: bool
    change: str = ""
    tag: str = ""
    """"fwd", "bwd" or "opt" when the mode ran more than a forward; else ""."""
    kernel: Kernel | None = None
    """The row's kernel: its cells are KERNELS' fills of it."""


def row_key(k: Kernel) -> str:
    """A row's identity within a mode: its name, and its phase past the forward (an mm runs in both)."""
    return k.name if k.phase == "forward" else f"{k.phase}:{k.name}"


def kernel_rows(mode: ModeResult | None, previous: ModeResult | None = None) -> list[KernelRow]:
    if mode is None:
        return []
    before = {row_key(k): k for k in previous.kernels} if previous else {}
    tagged = any(k.phase != "forward" for k in mode.kernels)
    rows = []
    for k in mode.kernels:
        old = before.get(row_key(k))
        if previous is None:
            change = ""
        elif old is None:
            change = "new"
        elif k.launches is None or old.launches is None:  # a plan's row: launches not known yet
            change = ""
        elif old.launches != k.launches:
            change = f"{fmt_count(old.launches)}→{fmt_count(k.launches)}"
        else:
            change = ""
        rows.append(
            KernelRow(
                key=row_key(k),
                name=k.name,
                launches=KERNELS["launches"].text(k),
                time=KERNELS["time"].text(k),
                traffic=KERNELS["traffic"].text(k),
                fused=k.fused,
                change=change,
                tag=KERNELS["phase"].text(k) if tagged else "",
                kernel=k,
            )
        )
    return rows


def vanished(mode: ModeResult | None, previous: ModeResult | None) -> list[str]:
    """Kernel names the previous report had and this one has not."""
    if mode is None or previous is None:
        return []
    now = {row_key(k) for k in mode.kernels}
    return [k.name for k in previous.kernels if row_key(k) not in now]


def transfers_text(report: Report, nbytes: int | None) -> str:
    """"5.0×": bytes in array-sized transfers (÷ the largest input), the article's unit."""
    t = report.transfers(nbytes)
    return "" if t is None else f"{t:.1f}×"


def saving(report: Report) -> str:
    e, c = report.eager, report.compiled
    if not e or not c or not e.bytes_total or c.bytes_total is None:
        return ""
    change = (c.bytes_total - e.bytes_total) / e.bytes_total * 100
    text = (
        f"compiled: {abs(change):.0f}% {'less' if change < 0 else 'more'} traffic"
        if round(change) != 0
        else "compiled: the same traffic"
    )
    if c.bytes_saved:  # a training forward: what it writes only for backward, which eager never writes
        text += f", {fmt_bytes(c.bytes_saved)} of it only for backward"
    return text


def places_text(places, home: str = "", sep: str = ", ") -> str:
    """"7, 9" in the target's file (`home`), "model.py:14,22" in another, "13 via
    transformers/models/gpt2/modeling_gpt2.py:569,576": lines grouped by file, a library's lines
    grouped under the user's line they came through, in order."""
    groups: dict[tuple, list[int]] = {}  # (file, line or None, via file) -> lines
    for p in places:
        if p.via is None:
            groups.setdefault((p.file, None, None), []).append(p.line)
        else:
            groups.setdefault((p.file, p.line, p.via.file), []).append(p.via.line)
    parts = []
    for (file, line, via), lines in groups.items():
        shown = ",".join(map(str, lines))
        if via is None:
            parts.append((sep.join(map(str, lines))) if file == home else f"{file}:{shown}")
        else:
            parts.append(f"{line if file == home else f'{file}:{line}'} via {via}:{shown}")
    return sep.join(parts)


def kernel_detail(k: Kernel, peak: Judged | float | None = None, home: str = "") -> str:
    """Four short lines for a selected kernel: full name, ops (or what it does), lines and
    bandwidth, figures. home: the target's file (its lines need no file name)."""
    where = "lines: " + (places_text(k.lines, home) if k.lines else "no line")
    bandwidth = of_peak(k.achieved_gbps, peak)
    saved = f" · {fmt_bytes(k.bytes_saved)} for bwd" if k.bytes_saved else ""
    # the distinct memory a launch touches: below R + W where it reads a buffer twice or updates in place
    touches = f" · touches {fmt_bytes(k.working_set_bytes)}" if k.working_set_bytes is not None else ""
    return "\n".join(
        [
            k.name,
            "ops: " + (", ".join(k.ops) if k.ops else k.what or "—"),
            where + (f" · {bandwidth}" if bandwidth else ""),
            ("planned, not run yet" if k.time_us is None else f"{fmt_count(k.launches)}/call · {fmt_us(k.time_us)}")
            + f" · R {fmt_bytes(k.bytes_read)}"
            f" · W {fmt_bytes(k.bytes_written)}{saved}{touches}",
        ]
    )


def kernels_of_line(report: Report, line: int, file: str | None = None) -> tuple[list[str], list[str]]:
    """Which kernels a line of a file (the target's by default) ended up in, eager and compiled
    (one eager op may be split across, or merged into, several compiled kernels). A line a library
    issued the op from counts too (`via`)."""
    file = report.home if file is None else file

    def here(k: Kernel) -> bool:
        return any((p.file, p.line) == (file, line) or (p.via and (p.via.file, p.via.line) == (file, line))
                   for p in k.lines)

    def names(mode: ModeResult | None) -> list[str]:
        return [k.name for k in mode.kernels if here(k)] if mode else []

    return names(report.eager), names(report.compiled)


def of_peak(gbps: float | None, peak: Judged | float | None) -> str:
    """"48.5 GB/s (52% of the L3's 93 GB/s)"; "" when nothing was timed. peak: the roof the
    kernel's mode is judged against (report.roofs), or a bare bandwidth (a Report before schema 13)."""
    if gbps is None:
        return ""
    if not isinstance(peak, Judged):
        if not peak:
            return f"{gbps:.1f} GB/s"
        if gbps > peak:  # what was measured, not a guess at why
            return f"{gbps:.1f} GB/s ({gbps / peak * 100:.0f}% of the {peak:.0f} GB/s measured peak: above it)"
        return f"{gbps:.1f} GB/s ({gbps / peak * 100:.0f}% of peak)"
    rate = peak.roof.gbps
    if not rate:
        return f"{gbps:.1f} GB/s"
    text = f"{gbps:.1f} GB/s ({gbps / rate * 100:.0f}% of the {peak.roof.level}'s {rate:.0f} GB/s"
    if gbps > rate:  # never a figure above 100% without the roof it exceeds and why it can
        text += f": above it, {peak.above()}"
    return text + ")"


def fmt_us(us: float | None) -> str:
    if us is None:
        return "?"
    if us >= 10_000:
        return f"{us / 1000:.0f} ms"
    if us >= 1000:
        return f"{us / 1000:.1f} ms"
    return f"{us:.0f} µs" if us >= 10 else f"{us:.1f} µs"


def graph_signature(report: Report | None) -> tuple | None:
    """What a save must change for a sweep to be stale: the kernels each mode ran, and their ops."""
    if report is None:
        return None
    return tuple(
        (mode_name, k.phase, k.name, k.ops)
        for mode_name, mode in (("eager", report.eager), ("compiled", report.compiled))
        if mode is not None
        for k in mode.kernels
    )


def round_trips_text(mode: ModeResult | None, unknown: str = "?") -> str:
    """"1 (4.0 MB)", "0", "?" (unknown), "…" (not run yet); "1 (?)" when a trip's bytes are unknown."""
    if mode is None:
        return "…"
    if mode.round_trips is None:
        return unknown
    if not mode.round_trips:
        return "0"
    total = sum_known(t.bytes for t in mode.round_trips)  # a trip's bytes unknown: the total is, not smaller
    return f"{sum(t.count for t in mode.round_trips)} ({fmt_bytes(total)})"


def round_trips_line(report: Report | None) -> str:
    """"round trips: eager 1 (4.0 MB) → compiled 0": buffers one kernel writes and another reads back."""
    if report is None or report.eager is None:
        return ""
    return f"round trips: eager {round_trips_text(report.eager)} → compiled {round_trips_text(report.compiled)}"


def mode_label(report: Report | None) -> str:
    """"max-autotune · freezing=True": how the compiled half was compiled; "" for torch.compile's
    defaults (or a Report that does not say)."""
    options = report.compile_options if report is not None else None
    if options is None:
        return ""
    label = options.label()
    return "" if label == "default" else label


def autotune_lines(mode: ModeResult | None) -> list[str]:
    """"autotune packed_linear (256x512, …): _mkl_linear 2.327 ms, over cpp_CppMicroGemmFP32Vec_0
    3.092 ms": each op max-autotune chose for, with inductor's own timings."""
    lines = []
    for tuned in mode.autotune if mode is not None else ():
        won = tuned.winner
        if won is None:
            continue
        timed = lambda c: f"{c.name} {c.ms:.3f} ms" if c.ms is not None else f"{c.name} (failed)"  # noqa: E731
        others = ", ".join(timed(c) for c in tuned.choices[1:4]) + (", …" if len(tuned.choices) > 4 else "")
        lines.append(f"autotune {tuned.op} ({tuned.sizes}): chose {timed(won)}" + (f" over {others}" if others else ""))
    return lines


def mode_change(before: Report, now: Report | None) -> str:
    """"default→max-autotune" when the two runs were compiled in different modes; "" otherwise."""
    a, b = before.compile_options, now.compile_options if now is not None else None
    if a is None or b is None or a.mode == b.mode:
        return ""
    return f"{a.mode}→{b.mode}"


def shown_path(path: str) -> str:
    """A path relative to here when it is below here ("samples/add_relu.py"), else absolute."""
    relative = os.path.relpath(path)
    return os.path.abspath(path) if relative.startswith("..") else relative


def where_text(report: Report) -> str:
    """"samples/add_relu.py:add_relu": the file (see shown_path) and the target."""
    path = shown_path(report.file)
    return f"{path}:{report.target}" if report.target else path


def device_text(report: Report) -> str:
    """"cpu (AMD EPYC 7B13)"."""
    return report.device + (f" ({report.device_name})" if report.device_name else "")


def grad_text(report: Report) -> tuple[str, str]:
    """How the target ran, when not as a plain forward: ("forward + backward", "backward from …;
    gradients of a, b"), ("under torch.no_grad()", ""); else ("", "")."""
    if report.backward is not None:
        b = report.backward
        return "forward + backward", f"backward from {b.loss}; gradients of {', '.join(b.grads_of)}"
    return ("under torch.no_grad()", "") if report.no_grad else ("", "")


def error_where(e: RunError) -> str:
    """"samples/x.py:5" (see shown_path), "samples/x.py", or ""."""
    where = shown_path(e.file) if e.file else ""
    return where + (f":{e.line}" if e.line else "")


def error_detail(e: RunError) -> str:
    """"ValueError: bad" ; kscope's own one-liners (a TargetError) without the type."""
    return e.message if e.type == "TargetError" else f"{e.type}: {e.message}"


def spread_text(m) -> str:
    """"412 µs ±6%": a sweep mode's median wall time per call, and half its interquartile range."""
    return spread(m.call_time_us, m.call_time_us_range)


def spread(median: float | None, quartiles: tuple[float, float] | None) -> str:
    if median is None:
        return "?"
    text = fmt_us(median)
    if quartiles and median > 0:
        text += f" ±{(quartiles[1] - quartiles[0]) / 2 / median * 100:.0f}%"
    return text


def sweep_verdict(p) -> str:
    """"1.4× faster", "5.6× slower", "same", "busy": a sweep point's compiled against eager."""
    return {"same within noise": "same", "busy": "busy"}.get(p.verdict) or ratio_text(p.ratio, p.verdict)


SWEEP_COLUMNS = (
    "eager → compiled: launches, bytes per element (B/n); wall time per call, median ± half its interquartile "
    "range; compiled against eager, calls timed in pairs"
)
"""What the sweep table's columns say."""


def sweep_how(sweep) -> str:
    """"one torch.compile for all sizes, 1 recompile"."""
    how = "each size compiled on its own (--sweep-static)" if sweep.static else "one torch.compile for all sizes"
    return f"{how}, {sweep.recompiles} recompile{'s' if sweep.recompiles != 1 else ''}"


def break_where(b, home: str = "") -> str:
    """Where a graph break is: "line 11" in the target's file, "pkg/layers.py:6" in another of the
    project's, "transformers/models/gpt2/modeling_gpt2.py:703 (library)" in a library's."""
    if b.place is not None:
        here = f"line {b.place.line}" if b.place.file == home and not b.place.library else b.place.text(home)
        return here + (" (library)" if b.place.library else "")
    if b.file and b.line:  # a Report from before breaks had places
        return f"{os.path.basename(b.file)}:{b.line}" if os.path.basename(b.file) != os.path.basename(home) else f"line {b.line}"
    return f"line {b.line}" if b.line else "unknown line"


def break_words(b) -> list[str]:
    """Dynamo's words for a break, a line each: its type and explanation, then its hints."""
    lines = []
    kind = b.type if b.type != b.reason else ""  # a type with no plain wording is the reason itself
    if kind or b.explanation:
        lines.append("dynamo: " + ": ".join(x for x in (kind, b.explanation) if x))
    hints = b.hints or ((b.hint,) if b.hint else ())
    lines += [f"hint: {h}" for h in hints]
    return lines


def short_level(level: str) -> str:
    """A level as a narrow pane names it: "L3", "mem"."""
    return "mem" if level == MAIN_MEMORY else level


def roofs_note(report: Report) -> str:
    """"  (roof L3 13 GB/s: working set 16 MB → 12 MB of 110 MB)": the roof the modes are judged
    against, and why a mode above it can be; "" with no roof."""
    judged = [(m, report.judged(m)) for m in (report.eager, report.compiled) if m is not None]
    judged = [(m, j) for m, j in judged if j is not None and j.roof.gbps]
    if not judged:
        return ""
    roofs = {j.roof for _, j in judged}
    if not report.roofs:  # a Report before schema 13: main memory's bandwidth alone
        note = f"main memory {judged[0][1].roof.gbps:.0f} GB/s, the only roof known"
    elif len(roofs) == 1:
        roof = judged[0][1].roof
        sizes = [fmt_bytes(m.working_set_bytes) for m, _ in judged if m.working_set_bytes is not None]
        held = (f"working set {' → '.join(sizes)} of {fmt_bytes(roof.capacity_bytes)}" if roof.capacity_bytes
                and sizes else judged[-1][1].why)
        note = f"roof {roof.level} {roof.gbps:.0f} GB/s: {held}"
    else:
        note = "roofs " + ", ".join(f"{name} {j.roof.level} {j.roof.gbps:.0f} GB/s"
                                    for name, (_, j) in zip(("eager", "compiled"), judged))
    over = next((j for m, j in judged if (m.achieved_gbps or 0) > j.roof.gbps), None)
    if over is not None:
        note += f"; above it: {over.above()}"
    return f"  ({note})"
