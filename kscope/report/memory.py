"""Memory a call holds, not moves: its peak above what existed before it, what it still holds
when it returns, and the tensors that make the peak (engine.memory.peak measures it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kscope.report.place import Place

LIFETIME_CATEGORIES = ("temporary", "held")
"""kscope's own categories, by lifetime, for a tensor torch's memory profile gives none:
"temporary" freed before the call returns, "held" still held when it returns."""


@dataclass(frozen=True)
class HeldTensor:
    """A tensor alive at the call's peak."""

    bytes: int
    category: str
    """torch's memory profile's category (input, parameter, activation, temporary, gradient,
    autograd_detail, optimizer_state) where it gives one, else kscope's by lifetime
    (LIFETIME_CATEGORIES)."""
    allocated_by: str
    """The op that allocated it ("aten::add"), or, compiled, the graph's buffer ("buf0")."""
    place: Place | None = None
    """The line that allocated it (as kernels' places); compiled, the first line of the kernel that
    fills the buffer (`filled_by`); None where no line is known."""
    filled_by: str | None = None
    """Compiled: the kernel the graph's wrapper first hands the buffer to ("cpp_fused_add_relu_0",
    "extern_kernels.mm"); None in eager or where the wrapper does not say."""


@dataclass(frozen=True)
class CallMemory:
    """One call's memory, from the allocator's events (torch.profiler, profile_memory=True), on a
    call of its own: never one that is timed."""

    peak_bytes: int
    """The most bytes of the call's own allocations alive at once (0: it allocated nothing). What
    existed before the call is not in it, nor is its free during the call (a training step freeing
    the last step's gradients): that would make the figure hang on what ran before."""
    held_bytes: int
    """Of the call's own allocations, the bytes still alive when it returns (its outputs, what it
    keeps)."""
    allocations: int
    """Allocations during the call."""
    by_category: dict[str, int] = field(default_factory=dict)
    """Bytes alive at the peak, by HeldTensor.category."""
    top: tuple[HeldTensor, ...] = ()
    """The largest tensors alive at the peak, largest first (at most TOP)."""
    checked_peak_bytes: int | None = None
    """CUDA: the allocator's own peak over the call (torch.cuda.max_memory_allocated after
    reset_peak_memory_stats, less what was allocated before); None on the CPU."""
    saved_bytes: int | None = None
    """What the forward kept for backward that the call allocated (autograd's saved tensors,
    engine.memory.saved): with a backward in the call, freed by it; without one, held as long as
    the outputs are. 0: nothing kept (no_grad, or nothing requires grad); None: unknown (a
    Report from before schema 15)."""
    estimated_peak_bytes: tuple[int | None, ...] = ()
    """Compiled: inductor's own estimate of each graph's peak before it ran (torch._inductor.memory,
    the buffers live at each step of its schedule), the graphs in the order they ran; None: unknown."""


TOP = 8
"""Tensors listed at the peak."""

