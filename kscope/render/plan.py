"""Inductor's plan of a compile still running (report.plan), as the compiled panes show it: the
planned kernels in the compiled kernel table, fused kernels and round trips, and a line that
says it is a plan and how far the compile is."""

from __future__ import annotations

from dataclasses import replace

from kscope.report.model import ModeResult, Report
from kscope.report.plan import Plan, PlanProgress


def plan_view(report: Report) -> Report:
    """The report as the compiled kernel table, fused kernels and round trips read it: with no
    compiled half yet, the plan's kernels in its place. Its mode's totals of launches and time are
    not known and no pane reads them (the launch counts, traffic and roofline panes are given the
    report itself, which has no compiled half)."""
    if report.compiled is not None or report.plan is None:
        return report
    plan = report.plan
    mode = ModeResult(launches=0, bytes_read=plan.bytes_read, bytes_written=plan.bytes_written, kernel_time_us=0.0,
                      kernels=plan.kernels, round_trips=plan.round_trips)
    return replace(report, compiled=mode)


def progress_text(p: PlanProgress) -> str:
    """"compiling 7/26 kernels · graph 2/3": what inductor says of the compile so far; "" once the
    compiled half's first call returned (what is left is timing)."""
    if p.ran:
        return ""
    parts = [f"compiling {p.kernels_compiled or 0}/{p.kernels_total} kernels" if p.kernels_total else "compiling"]
    if p.graphs_seen > 1 and p.graphs_done < p.graphs_seen:
        parts.append(f"graph {p.graphs_done + 1}/{p.graphs_seen}")
    return " · ".join(parts)


def plan_note(plan: Plan, progress: PlanProgress | None = None, stale: bool = False) -> str:
    """The compiled table's subtitle while it shows a plan: "plan: 26 kernels · compiling 7/26
    kernels…"; after a failed run, "plan (stale: the run failed)"."""
    n = len(plan.kernels)
    head = f"plan: {n} kernel{'s' if n != 1 else ''}"
    if stale:
        return f"{head} (stale: the run failed)"
    progress = progress_text(progress or plan.progress)
    return f"{head} · {progress}…" if progress else f"{head} · compiled, timing…"


def plan_title(stale: bool = False) -> str:
    """What the compiled table's title says of a plan: at 80×24 its subtitle is below the screen."""
    return "plan (run failed)" if stale else "plan (not run yet)"


def compile_state(p: PlanProgress | None, elapsed: float, compiling: str = "") -> str:
    """The status line's state once the compile has a plan: "compiling 7/26 kernels · 4.2 s", then
    "timing… 9.0 s"; before it, "compiling graph 0/1… 2.0 s" while the worker says a compile runs
    (`compiling`: dynamo and AOTAutograd at work), else "" (the app says "compiling…")."""
    if p is None:
        return f"compiling {compiling}… {elapsed:.1f} s" if compiling else ""
    progress = progress_text(p)
    return f"{progress} · {elapsed:.1f} s" if progress else f"timing… {elapsed:.1f} s"
