"""What a call's forward keeps for backward: the storages autograd saves (`ctx.save_for_backward`,
an op's saved inputs and outputs), seen by a pack hook (torch.autograd.graph.saved_tensors_hooks),
counted where the call itself allocated them (an input or a parameter saved is not the call's
memory). Compiled, AOTAutograd's forward saves through the same hooks (measured on torch 2.13: the
hooks add no recompile; an MLP's compiled forward saves the same two activations as its eager one,
tests/engine/test_backward.py).

On a call of its own, never the one whose memory is recorded: under the hook torch's memory
profile gave a compiled training step's gradients no category and its peak 704 B more (a step of
an MLP of 16 → 32 → 32, torch 2.13). The hook hands autograd a detached alias of a tensor that has
a grad_fn: returning the tensor itself would tie an output to its own grad_fn (saved -> node ->
output), a cycle the collector never frees (measured: the output outlives `del` and
gc.collect()). A leaf is returned as is. A backward with create_graph=True inside the target
would not differentiate through a detached saved tensor on this call: its figure is this one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import torch

from kscope.engine.compat.memory_profile import allocated_pointers


def saved_bytes(fn: Callable[[], object], device: torch.device) -> int | None:
    """Bytes the forward of one call of fn kept for backward that the call allocated: alive from
    the forward until backward frees them, or as long as the outputs are, with no backward. None
    where the call refuses the hook (torch.func's grad, vjp, jacrev and hessian: "don't yet
    support saved tensor hooks", torch 2.13)."""
    try:
        with saved_storages() as saved:
            allocated = allocated_pointers(fn, device)
    except RuntimeError as e:
        if "saved tensor hooks" in str(e):
            return None
        raise
    return sum(size for ptr, size in saved.items() if ptr in allocated)


@contextlib.contextmanager
def saved_storages() -> Iterator[dict[int, int]]:
    """Within the block: {data pointer: bytes} of each storage autograd saved for backward."""
    saved: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.nbytes():
            saved[storage.data_ptr()] = storage.nbytes()
        return t.detach() if t.grad_fn is not None else t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        yield saved
