"""torch's pytree (torch.utils._pytree): the tensors inside nested args, as torch's own code walks them."""

from __future__ import annotations

from torch.utils._pytree import tree_leaves

__all__ = ["tree_leaves"]
