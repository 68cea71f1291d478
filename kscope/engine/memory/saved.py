"""What a call's forward keeps for backward: the storages autograd saves (`ctx.save_for_backward`,
an op's saved inputs and outputs), seen by a pack hook (torch.autograd.graph.saved_tensors_hooks)
on the memory call alone, and counted where the call itself allocated them (an input or a
parameter saved is not the call's memory). Compiled, AOTAutograd's forward saves through the same
hooks (measured on torch 2.13: the hooks add no recompile, and a compiled MLP's saved bytes equal
inductor's own count of what its forward writes for backward).

The hook hands autograd a detached alias of a tensor that has a grad_fn: returning the tensor
itself would tie an output to its own grad_fn (saved -> node -> output), a cycle the collector
never frees (measured: the output outlives `del` and gc.collect()). A leaf is returned as is. The
one cost: a backward with create_graph=True inside the target would not differentiate through a
detached saved tensor on this call (its figures are memory's alone; no timed call has the hooks).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch


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


def refuses_hooks(error: RuntimeError) -> bool:
    """The call raised because a saved-tensors hook was set: torch.func's grad, vjp, jacrev and
    hessian refuse to run under one ("don't yet support saved tensor hooks", torch 2.13)."""
    return "saved tensor hooks" in str(error)


def kept_for_backward(saved: dict[int, int], allocated: set[int]) -> int:
    """Bytes of the saved storages the call allocated (`allocated`: their data pointers): alive
    from the forward until backward frees them, or for as long as the outputs are, with no backward."""
    return sum(size for ptr, size in saved.items() if ptr in allocated)
