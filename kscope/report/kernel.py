"""A kernel row of a mode, and a round trip between two kernels: the rows every pane and table
shows, in a Report's modes and in a compile's plan (report.plan)."""

from __future__ import annotations

from dataclasses import dataclass

from kscope.report.lines import LineShare
from kscope.report.measures import add_known, gbps
from kscope.report.place import Place


@dataclass(frozen=True)
class Kernel:
    """One kernel name within a mode, aggregated over its launches in one call."""

    name: str
    launches: float | None
    """Launches per call of the target; None only in a plan's rows (report.plan): not yet run."""
    time_us: float | None
    """Time per call, all launches together: the kernel's share of the profiled calls, scaled so
    that the rows add up to the mode's median kernel time; None only in a plan's rows."""
    bytes_read: int | None
    """Per call; None when kscope does not know (never shown as 0)."""
    bytes_written: int | None
    fused: bool = False
    """True for a kernel inductor generated (it may fuse one op or many)."""
    ops: tuple[str, ...] = ()
    """The ATen ops this kernel runs (compiled: from inductor's metadata; eager: the op itself)."""
    lines: tuple[Place, ...] = ()
    """The places in the user's files (and libraries) this kernel's ops came from."""
    code: str | None = None
    """Generated source of a compiled kernel."""
    kind: str = "kernel"
    """"kernel", or "extern" for a library call made by compiled code (aten::mm ...)."""
    what: str | None = None
    """What a kernel that runs none of the user's ops does ("copies x into channels-last layout")."""
    phase: str = "forward"
    """"forward", "backward" (run by autograd's engine) or "optimizer" (an optimizer's step)."""
    bytes_saved: int | None = 0
    """Of bytes_written, what a training forward writes only for backward to read: tensors
    AOTAutograd saves that no other kernel of the forward reads (a ReLU's mask). None where kscope
    does not know (an eager op: max-pool's indices are written for backward only too)."""
    shares: tuple[LineShare, ...] = ()
    """Its figures shared among the lines it came from (report.lines); they add up to the row's."""
    flops: int | None = None
    """Floating-point operations per call (report.roofline says how they are counted); None: unknown."""
    working_set_bytes: int | None = None
    """The distinct bytes one launch touches (its largest, where launches differ): each buffer it
    reads or writes once, however often it reads it (eager: dispatch accounting's storages;
    compiled: inductor's buffers). None: unknown."""

    @property
    def bytes_total(self) -> int | None:
        return add_known(self.bytes_read, self.bytes_written)

    @property
    def achieved_gbps(self) -> float | None:
        return gbps(self.bytes_total, self.time_us)


@dataclass(frozen=True)
class RoundTrip:
    """A buffer one kernel of the call writes and another reads back: a trip through memory that
    a fused kernel would not make (the call's outputs are not round trips)."""

    buffer: str
    """Inductor's buffer name ("buf0"); eager: "tmp0", "tmp1", ... in the order they were written."""
    bytes: int | None
    producer: str
    """The kernel that writes it, named as its row is."""
    consumers: tuple[str, ...]
    lines: tuple[Place, ...] = ()
    """The places of the producer and the consumers."""
    reason: str = ""
    """Why it was not fused, in plain words."""
    hint: str = ""
    detail: str = ""
    """Inductor's own words, where its scheduler gave a reason ("cannot fuse op0 with op2: ...")."""
    count: int = 1
    """How many such buffers (same producer, consumers, lines and reason): a loop of 5,000 adds is
    one entry of 4,999; `bytes` is all of them, `buffer` the first."""
