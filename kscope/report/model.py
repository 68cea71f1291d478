"""The Report: plain, frozen data that round-trips through JSON.

Everything kscope shows is read from a Report: the app's panes, `--once` tables, `--json`,
tests and exports. Nothing here imports torch, so the UI process can load it freely.
"""

from __future__ import annotations

import functools
import os.path
from dataclasses import dataclass, field

from kscope.report.compile import Autotune, CompileOptions, CudaGraphs
from kscope.report.kernel import Kernel, RoundTrip
from kscope.report.lines import LineCost, LineShare, line_costs
from kscope.report.measures import Traffic, sum_known
from kscope.report.memory import CallMemory
from kscope.report.phases import PHASES, PhaseTotals, phase_totals
from kscope.report.place import Place, place_key, sorted_places
from kscope.report.plan import Plan
from kscope.report.roofs import MAIN_MEMORY, Judged, Roof, judged
from kscope.report.speedup import Speedup
from kscope.report.sweep import Sweep

SCHEMA = 16
"""2: bytes may be null (unknown), kernels say `what` they do when they run no op; kernel time is a
median with its spread, beside the wall time of one call; the speedup carries a verdict.
3: each kernel has a phase (forward, backward, optimizer) and the bytes it writes only for backward
to read; each mode has per-phase totals; the Report says how backward was run (`backward`) and
whether grad mode was off (`no_grad`).
4: a size sweep (--sweep) is a Report with `sweep` set (and no eager or compiled half).
5: each mode lists its round trips (buffers one kernel writes and another reads back) and why
compiled ones were not fused.
6: the Report says how the target was compiled (`compile_options`: mode, dynamic, fullgraph,
inductor options); the compiled mode lists max-autotune's choices (`autotune`) and what CUDA
graphs did (`cuda_graphs`).
7: the Report says where --trace-dir saved the run's chrome traces (`traces`: mode -> path).
8: each mode lists its collectives (Collective); a run of N ranks (--nproc) has `ranks`
(RankResult each) and an error says its `rank`.
9: the Report lists the user's files the run imported (`files`), the target's first; a line is a
place in a file (Place: project files relative to `root`, library files inside their library, with
the library's line an op was issued from); `sources` has the text of every file holding one.
11: each kernel shares its figures among the lines it came from (`shares`, report.lines); the
Report's JSON has `line_costs`, each line's total in both modes (derived from the shares). Each
kernel has its `flops` and its place on the roofline; the Report has the device's `peak_flops`.
12: while the compiled half compiles, the worker's Report carries inductor's `plan` of it (report.plan),
whose rows have no launches or time yet (null).
13: the Report has a memory roof per level (`roofs`: each cache, then main memory) and says whether
calls were timed with --cold (`cold`); each mode has its call's `working_set_bytes` and the `roof` its
kernels are judged against (report.roofs); each kernel its `roof_level` and `roof_gbps`.
14: each mode has its call's `memory` (report.memory: the peak above what existed before the call,
what it holds when it returns, the tensors alive at the peak).
15: the `plan` has inductor's `estimated_peak_bytes` of each planned graph, before any is compiled;
each mode's `memory` has `saved_bytes`, what its forward kept for backward."""



@dataclass(frozen=True)
class Backward:
    """How kscope ran backward (--backward)."""

    loss: str
    """What backward started from, in words ("a gradient of ones for each of the 2 outputs, …")."""
    grads_of: tuple[str, ...]
    """The tensors gradients were taken for, in the user's names ("x", "fc1.weight")."""


@dataclass(frozen=True)
class GraphBreak:
    reason: str
    """In plain words (kscope's wording for common cases, else dynamo's type of break)."""
    line: int | None = None
    file: str | None = None
    """The file the break is in, as a path on the machine that ran it."""
    explanation: str = ""
    """Dynamo's explanation of the break, in its words."""
    hint: str = ""
    """The first of `hints` (kscope's own where dynamo gave none)."""
    type: str = ""
    """Dynamo's type of break (its gb_type: "Data-dependent branching"); "" where it said none."""
    hints: tuple[str, ...] = ()
    """Dynamo's hints, in its words."""
    place: Place | None = None
    """Where it is, as kernels' lines are: a project file, or a library's (library=True)."""


@dataclass(frozen=True)
class Recompile:
    reason: str
    """The guard that failed, as dynamo said it ("tensor 'x' size mismatch at index 0 ...")."""
    function: str = ""
    line: int | None = None


@dataclass(frozen=True)
class Collective:
    """One collective op of a call (all figures per call of the target), counted once: the c10d
    or functional collective op the program called, never also the backend's own event."""

    name: str
    """The op as the profiler names it: "c10d::allreduce_" (eager), "_c10d_functional::all_reduce_"."""
    count: float
    """Times it ran per call."""
    bytes: int | None
    """Per call, all its runs: the size of the tensors handed to it (torch's record_param_comms
    "In msg nelems" × dtype where the backend records it, else the shapes the profiler recorded);
    None when unknown. Never counted as kernel memory traffic."""
    time_us: float
    """Per call: how long the backend's collective ran (its "gloo:all_reduce" event), else the op's."""
    wait_us: float | None = None
    """Per call: time spent in the wait for it (`_c10d_functional::wait_tensor`); None where the
    trace has no wait event (eager `dist.all_reduce` blocks inside the call, unrecorded)."""
    phase: str = "forward"
    after: str | None = None
    """The kernel row that ran just before it in the call (the work it waits on), if any."""
    before: str | None = None
    """The kernel row that ran just after it, if any."""


@dataclass(frozen=True)
class ModeResult(Traffic):
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
    round_trips: tuple[RoundTrip, ...] | None = None
    """Buffers one kernel writes and another reads back, largest first; None when unknown (a
    Report from before schema 5)."""
    autotune: tuple[Autotune, ...] = ()
    """Each op max-autotune timed candidates for, in the graphs that ran."""
    cuda_graphs: CudaGraphs | None = None
    """When the mode asks for CUDA graphs: what they did; None otherwise."""
    collectives: tuple[Collective, ...] = ()
    """The collectives a call ran (apart from kernels and their traffic)."""
    working_set_bytes: int | None = None
    """The distinct bytes one call touches (engine.dispatch.working_set); None: unknown."""
    memory: CallMemory | None = None
    """What one call holds (engine.memory.peak); None: not measured (a failed half, an old Report)."""

    @property
    def phases(self) -> tuple[PhaseTotals, ...]:
        return phase_totals(self.kernels)

    def phase(self, name: str) -> PhaseTotals | None:
        return next((p for p in self.phases if p.phase == name), None)

    @property
    def flops(self) -> int | None:
        """The kernels' FLOPs per call; None when any kernel's are unknown."""
        return sum_known(k.flops for k in self.kernels)

    @property
    def bytes_known(self) -> int:
        """The bytes of the rows whose bytes are known: a floor under the total when some are not."""
        return sum(k.bytes_read + k.bytes_written for k in self.kernels if k.bytes_read is not None and k.bytes_written is not None)

    @property
    def rows_unknown(self) -> int:
        """How many rows' bytes are unknown (each has a note saying why)."""
        return sum(1 for k in self.kernels if k.bytes_read is None or k.bytes_written is None)

    @property
    def bytes_saved(self) -> int | None:
        """Bytes the forward writes only for backward to read (see Kernel.bytes_saved); None when
        any kernel's is unknown."""
        return sum_known(k.bytes_saved for k in self.kernels)


@dataclass(frozen=True)
class RunError:
    stage: str
    """load | target | inputs | eager | compile | compiled | timeout | crash"""
    type: str
    message: str
    file: str | None = None
    line: int | None = None
    rank: int | None = None
    """The rank it happened on, in a run of several (--nproc)."""


@dataclass(frozen=True)
class RankResult:
    """One rank of a distributed run."""

    rank: int
    eager: ModeResult | None = None
    """None when that mode did not run on this rank."""
    compiled: ModeResult | None = None
    errors: tuple[RunError, ...] = ()
    """This rank's errors (each also in the Report's errors, with its rank)."""
    notes: tuple[str, ...] = ()
    wall_s: float | None = None
    """Seconds the rank's run took; None when the rank sent no report (it died, hung or was stopped)."""
    stage: str = ""
    """Where the rank got to: "done", or the last progress it reported ("eager done", …)."""


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
    peak_flops: float | None = None
    """The device's peak FLOP/s for the dtype that ran (report.roofline); None: unknown."""
    peak_flops_source: str = ""
    speedup: Speedup | None = None
    backward: Backward | None = None
    """Set when kscope ran backward after the target (--backward)."""
    no_grad: bool = False
    """The target ran under torch.no_grad() (--no-grad): the inference graph."""
    sweep: Sweep | None = None
    """A size sweep, for a --sweep run; None otherwise."""
    compile_options: CompileOptions | None = None
    """How the compiled half was compiled; None in a Report from before schema 6."""
    traces: dict[str, str] | None = field(default=None, hash=False)
    """--trace-dir: the traces saved, {"eager": abs path, "compiled": …}; None without it."""
    ranks: tuple[RankResult, ...] | None = None
    """--nproc: each rank's result (the fields above are rank 0's); None otherwise."""
    files: tuple[str, ...] = ()
    """The user's own files the run imported or tried to (engine.target.project), absolute, the target's
    first: what the app watches. Empty in a Report from before schema 9."""
    root: str = ""
    """The project's root, absolute: the folder places' project files are relative to."""
    sources: dict[str, str] = field(default_factory=dict, hash=False)
    """Place file -> its text as it ran, for every file that holds a place of this run (the
    target's among them): what the source tab shows. Empty in the eager half's early report."""
    reads_parameters: bool = False
    """The target read an nn.Parameter (a module's weights): its traffic is no multiple of its
    inputs, so no array-sized transfers are shown (a model's token ids are 1 kB)."""
    roofs: tuple[Roof, ...] = ()
    """A memory roof per level, smallest first, main memory last (report.roofs); empty before schema 13."""
    cold: bool = False
    """The calls were timed with the caches flushed between them (--cold)."""
    plan: Plan | None = None
    """While the compiled half compiles: inductor's plan of it (report.plan), with no compiled
    half yet; kept, marked stale, when the run fails after it. None in a finished run's Report."""
    line_costs_known: bool = True
    """False where the kernels carry no shares because the kscope that made the Report did not
    share figures among lines (the codec says so of a Report from before schema 11): what each
    line cost is unknown (line_costs is None), not nothing."""
    schema: int = SCHEMA

    @property
    def home(self) -> str:
        """The target's file as places name it (relative to the root)."""
        return os.path.relpath(self.file, self.root) if self.root else os.path.basename(self.file)

    def judged(self, mode: ModeResult | None) -> Judged | None:
        """The memory roof a mode's kernels are judged against, and why (report.roofs)."""
        old = Roof(MAIN_MEMORY, self.peak_gbps, None, self.peak_source, measured=False)
        return judged(self.roofs, None if mode is None else mode.working_set_bytes, self.cold, old)

    def memory_gbps(self, mode: ModeResult | None) -> float | None:
        """The bandwidth of that roof (main memory's peak_gbps where no level holds the mode)."""
        j = self.judged(mode)
        return self.peak_gbps if j is None else j.roof.gbps

    @property
    def ok(self) -> bool:
        if self.sweep is not None:
            return bool(self.sweep.points) and not self.errors
        return self.eager is not None and self.compiled is not None and not self.errors

    @functools.cached_property
    def line_costs(self) -> tuple[LineCost, ...] | None:
        """Each line's cost in both modes, costliest first (report.lines); None where unknown
        (line_costs_known). Computed once, as a Report never changes (the source tab reads it for
        every line it draws)."""
        return line_costs(self.eager, self.compiled) if self.line_costs_known else None

    def transfers(self, nbytes: int | None) -> float | None:
        """Bytes in array-sized transfers (÷ the largest input), the article's measure for arrays in,
        array out; None where unknown or where it means nothing (the target reads parameters)."""
        if not self.largest_input_bytes or nbytes is None or self.reads_parameters:
            return None
        return nbytes / self.largest_input_bytes


__all__ = [
    "PHASES",
    "SCHEMA",
    "Backward",
    "Collective",
    "GraphBreak",
    "Kernel",
    "LineCost",
    "LineShare",
    "ModeResult",
    "PhaseTotals",
    "Place",
    "RankResult",
    "RoundTrip",
    "Recompile",
    "Report",
    "RunError",
    "phase_totals",
    "place_key",
    "sorted_places",
]
