"""The Report: plain, frozen data that round-trips through JSON.

Everything kscope shows is read from a Report: the app's panes, `--once` tables, `--json`,
tests and exports. Nothing here imports torch, so the UI process can load it freely.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

SCHEMA = 2
"""2: bytes may be null (unknown), kernels say `what` they do when they run no op; kernel time is a
median with its spread, beside the wall time of one call; the speedup carries a verdict."""


@dataclass(frozen=True)
class Kernel:
    """One kernel name within a mode, aggregated over its launches in one call."""

    name: str
    launches: float
    """Launches per call of the target."""
    time_us: float
    """Time per call, all launches together: the kernel's share of the profiled calls, scaled so
    that the rows add up to the mode's median kernel time."""
    bytes_read: int | None
    """Per call; None when kscope does not know (never shown as 0)."""
    bytes_written: int | None
    fused: bool = False
    """True for a kernel inductor generated (it may fuse one op or many)."""
    ops: tuple[str, ...] = ()
    """The ATen ops this kernel runs (compiled: from inductor's metadata; eager: the op itself)."""
    lines: tuple[int, ...] = ()
    """Lines of the user's file this kernel came from."""
    code: str | None = None
    """Generated source of a compiled kernel."""
    kind: str = "kernel"
    """"kernel", or "extern" for a library call made by compiled code (aten::mm ...)."""
    what: str | None = None
    """What a kernel that runs none of the user's ops does ("copies x into channels-last layout")."""

    @property
    def bytes_total(self) -> int | None:
        return add_known(self.bytes_read, self.bytes_written)

    @property
    def achieved_gbps(self) -> float | None:
        return gbps(self.bytes_total, self.time_us)


@dataclass(frozen=True)
class GraphBreak:
    reason: str
    """In plain words (kscope's wording for common cases, else dynamo's first line)."""
    line: int | None = None
    file: str | None = None
    explanation: str = ""
    hint: str = ""


@dataclass(frozen=True)
class Recompile:
    reason: str
    """The guard that failed, as dynamo said it ("tensor 'x' size mismatch at index 0 ...")."""
    function: str = ""
    line: int | None = None


@dataclass(frozen=True)
class ModeResult:
    """Eager or compiled: per-call figures and the kernels behind them."""

    launches: float
    bytes_read: int | None
    """Per call, the sum of the kernels' bytes; None when any kernel's is unknown."""
    bytes_written: int | None
    kernel_time_us: float
    """Median over timed calls of the sum of one call's kernel durations."""
    kernels: tuple[Kernel, ...] = ()
    memcpy: int = 0
    """Device copies per call (CUDA), counted apart from kernels."""
    memset: int = 0
    calls: int = 1
    """How many calls were profiled to make the per-call figures."""
    compile_s: float | None = None
    graphs: int | None = None
    graph_breaks: tuple[GraphBreak, ...] = ()
    recompiles: tuple[Recompile, ...] = ()
    traffic_source: str = ""
    """Where the byte counts come from, in words (eager dispatch, inductor, inductor via kscope cache)."""
    kernel_time_us_range: tuple[float, float] | None = None
    """The spread of the kernel time: its 25th and 75th percentiles over the timed calls."""
    call_time_us: float | None = None
    """Median wall time of one call without the profiler (Python, guards and wrapper included)."""
    call_time_us_range: tuple[float, float] | None = None
    kernel_samples: int = 0
    """How many calls the kernel time is the median of."""
    call_samples: int = 0
    """How many calls the call time is the median of."""

    @property
    def bytes_total(self) -> int | None:
        return add_known(self.bytes_read, self.bytes_written)

    @property
    def achieved_gbps(self) -> float | None:
        return gbps(self.bytes_total, self.kernel_time_us)


@dataclass(frozen=True)
class Speedup:
    """Compiled against eager, by kernel time, from calls timed in pairs (eager, compiled)."""

    ratio: float
    """Median over the pairs of eager ÷ compiled kernel time: 1.9 is compiled 1.9× faster."""
    verdict: str
    """"faster", "slower" or "same within noise": the first two only when the middle half of the
    pairs' ratios lies wholly above (or below) 1; "busy" when other work competed for the CPU."""
    call_ratio: float | None = None
    """Median over the pairs of eager ÷ compiled wall time of one call."""
    ratio_range: tuple[float, float] | None = None
    """The middle half (25th and 75th percentiles) of the pairs' kernel-time ratios."""
    cpu_waiting: float | None = None
    """Share of the timing in which some task on the machine waited for a CPU (Linux PSI); None
    where unknown. Past BUSY, other work competed with the timed calls."""

    def text(self) -> str:
        """"1.9× faster", "2.0× slower", "same within noise" (kernel time)."""
        if self.verdict == "faster":
            return f"{self.ratio:.1f}× faster"
        if self.verdict == "slower":
            return f"{1 / self.ratio:.1f}× slower"
        if self.verdict == "busy":
            return "can't tell: CPU busy"
        return "same within noise"


@dataclass(frozen=True)
class RunError:
    stage: str
    """load | target | inputs | eager | compile | compiled | timeout | crash"""
    type: str
    message: str
    file: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class Report:
    file: str
    target: str
    device: str = "cpu"
    device_name: str = ""
    torch_version: str = ""
    largest_input_bytes: int = 0
    """The unit of "array-sized transfers": bytes of the largest input tensor."""
    eager: ModeResult | None = None
    compiled: ModeResult | None = None
    errors: tuple[RunError, ...] = ()
    notes: tuple[str, ...] = ()
    wall_s: float = 0.0
    source: str = ""
    """The file's text as it ran (the panes never read the file themselves)."""
    target_lines: tuple[int, int] | None = None
    """First and last line of the target's definition."""
    peak_gbps: float | None = None
    """The device's memory bandwidth, to judge achieved GB/s against."""
    peak_source: str = ""
    speedup: Speedup | None = None
    schema: int = SCHEMA

    @property
    def ok(self) -> bool:
        return self.eager is not None and self.compiled is not None and not self.errors

    def transfers(self, nbytes: int | None) -> float | None:
        if not self.largest_input_bytes or nbytes is None:
            return None
        return nbytes / self.largest_input_bytes

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "file": self.file,
            "target": self.target,
            "device": self.device,
            "device_name": self.device_name,
            "torch_version": self.torch_version,
            "largest_input_bytes": self.largest_input_bytes,
            "eager": _mode_to_dict(self.eager, compiled=False),
            "compiled": _mode_to_dict(self.compiled, compiled=True),
            "errors": [dataclasses.asdict(e) for e in self.errors],
            "notes": list(self.notes),
            "wall_s": round(self.wall_s, 3),
            "peak_gbps": _round(self.peak_gbps),
            "peak_source": self.peak_source,
            "speedup": None
            if self.speedup is None
            else {
                "ratio": round(self.speedup.ratio, 3),
                "ratio_range": _pair(self.speedup.ratio_range),
                "verdict": self.speedup.verdict,
                "compares": "kernel time, eager and compiled calls timed in pairs: median of eager ÷ compiled",
                "call_ratio": _round(self.speedup.call_ratio),
                "cpu_waiting": _round(self.speedup.cpu_waiting),
            },
            "target_lines": list(self.target_lines) if self.target_lines else None,
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Report:
        return cls(
            file=d["file"],
            target=d["target"],
            device=d.get("device", "cpu"),
            device_name=d.get("device_name", ""),
            torch_version=d.get("torch_version", ""),
            largest_input_bytes=d.get("largest_input_bytes", 0),
            eager=_mode_from_dict(d.get("eager")),
            compiled=_mode_from_dict(d.get("compiled")),
            errors=tuple(RunError(**e) for e in d.get("errors", ())),
            notes=tuple(d.get("notes", ())),
            wall_s=d.get("wall_s", 0.0),
            source=d.get("source", ""),
            target_lines=tuple(d["target_lines"]) if d.get("target_lines") else None,
            peak_gbps=d.get("peak_gbps"),
            peak_source=d.get("peak_source", ""),
            speedup=_speedup_from_dict(d.get("speedup")),
            schema=d.get("schema", SCHEMA),
        )


def add_known(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def gbps(nbytes: int | None, time_us: float) -> float | None:
    """Bytes over microseconds as GB/s (1 GB = 1e9 B); None when nothing was timed or the bytes
    are unknown."""
    if nbytes is None or time_us <= 0 or nbytes <= 0:
        return None
    return nbytes / (time_us * 1e3)


def _num(x: float) -> float | int:
    return int(x) if float(x).is_integer() else round(x, 3)


def _mode_to_dict(m: ModeResult | None, *, compiled: bool) -> dict[str, Any] | None:
    if m is None:
        return None
    out: dict[str, Any] = {
        "launches": _num(m.launches),
        "bytes_read": m.bytes_read,
        "bytes_written": m.bytes_written,
        "kernel_time_us": round(m.kernel_time_us, 3),
        "kernel_time_us_range": _pair(m.kernel_time_us_range),
        "call_time_us": _round(m.call_time_us),
        "call_time_us_range": _pair(m.call_time_us_range),
        "repetitions": {"kernel": m.kernel_samples, "call": m.call_samples},
        "achieved_gbps": _round(m.achieved_gbps),
        "memcpy": m.memcpy,
        "memset": m.memset,
        "calls": m.calls,
        "traffic_source": m.traffic_source,
        "kernels": [_kernel_to_dict(k) for k in m.kernels],
    }
    if compiled:
        out["compile_s"] = None if m.compile_s is None else round(m.compile_s, 3)
        out["graphs"] = m.graphs
        out["graph_breaks"] = [dataclasses.asdict(b) for b in m.graph_breaks]
        out["recompiles"] = [dataclasses.asdict(r) for r in m.recompiles]
    return out


def _kernel_to_dict(k: Kernel) -> dict[str, Any]:
    return {
        "name": k.name,
        "kind": k.kind,
        "launches": _num(k.launches),
        "time_us": round(k.time_us, 3),
        "bytes_read": k.bytes_read,
        "bytes_written": k.bytes_written,
        "achieved_gbps": _round(k.achieved_gbps),
        "fused": k.fused,
        "ops": list(k.ops),
        "what": k.what,
        "lines": list(k.lines),
        "code": k.code,
    }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def _speedup_from_dict(d: dict[str, Any] | None) -> Speedup | None:
    if not d:
        return None
    low_high = d.get("ratio_range")
    return Speedup(
        d["ratio"], d["verdict"], d.get("call_ratio"), tuple(low_high) if low_high else None, d.get("cpu_waiting")
    )


def _pair(x: tuple[float, float] | None) -> list[float] | None:
    return None if x is None else [round(x[0], 3), round(x[1], 3)]


def _mode_from_dict(d: dict[str, Any] | None) -> ModeResult | None:
    if d is None:
        return None
    kernels = tuple(
        Kernel(
            name=k["name"],
            kind=k.get("kind", "kernel"),
            launches=k["launches"],
            time_us=k["time_us"],
            bytes_read=k["bytes_read"],
            bytes_written=k["bytes_written"],
            fused=k.get("fused", False),
            ops=tuple(k.get("ops", ())),
            lines=tuple(k.get("lines", ())),
            code=k.get("code"),
            what=k.get("what"),
        )
        for k in d.get("kernels", ())
    )
    return ModeResult(
        launches=d["launches"],
        bytes_read=d["bytes_read"],
        bytes_written=d["bytes_written"],
        kernel_time_us=d["kernel_time_us"],
        kernels=kernels,
        memcpy=d.get("memcpy", 0),
        memset=d.get("memset", 0),
        calls=d.get("calls", 1),
        compile_s=d.get("compile_s"),
        graphs=d.get("graphs"),
        graph_breaks=tuple(GraphBreak(**b) for b in d.get("graph_breaks", ())),
        recompiles=tuple(Recompile(**r) for r in d.get("recompiles", ())),
        traffic_source=d.get("traffic_source", ""),
        kernel_time_us_range=tuple(d["kernel_time_us_range"]) if d.get("kernel_time_us_range") else None,
        call_time_us=d.get("call_time_us"),
        call_time_us_range=tuple(d["call_time_us_range"]) if d.get("call_time_us_range") else None,
        kernel_samples=(d.get("repetitions") or {}).get("kernel", 0),
        call_samples=(d.get("repetitions") or {}).get("call", 0),
    )


def fmt_bytes(n: float | None) -> str:
    """Decimal units, as the article counts: 20,000,000 B is 20.0 MB; "?" when unknown."""
    if n is None:
        return "?"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


def fmt_count(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.2f}"


def summary_line(report: Report) -> str:
    """One line a speaker can point at: launches 2 → 1, traffic 20.0 MB → 12.0 MB, −40%."""
    e, c = report.eager, report.compiled
    if e is None:
        return "no result"
    if c is None:
        return f"launches {fmt_count(e.launches)}, traffic {fmt_bytes(e.bytes_total)} (compiled: no result)"
    text = (
        f"launches {fmt_count(e.launches)} → {fmt_count(c.launches)}, "
        f"traffic {fmt_bytes(e.bytes_total)} → {fmt_bytes(c.bytes_total)}"
    )
    if e.bytes_total and c.bytes_total is not None:
        change = (c.bytes_total - e.bytes_total) / e.bytes_total * 100
        text += f", {'−' if change < 0 else '+'}{abs(change):.0f}%"
    return text


__all__ = [
    "SCHEMA",
    "GraphBreak",
    "add_known",
    "Kernel",
    "ModeResult",
    "Report",
    "Recompile",
    "RunError",
    "Speedup",
    "fmt_bytes",
    "fmt_count",
    "gbps",
    "summary_line",
]
