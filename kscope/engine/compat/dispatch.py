"""The dispatcher from Python: the base class of a dispatch mode (torch.utils._python_dispatch) and
the keys an op would dispatch to after the Python key."""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["TorchDispatchMode", "keys_below_python"]


def keys_below_python(args, kwargs):
    """The dispatch keys that come after the Python key (where modes are called) for these
    arguments: the backend kernel, as the dispatcher would go on to (None: no tensor says one)."""
    after = torch._C._dispatch_keyset_full_after(torch._C.DispatchKey.BackendSelect)
    keys = torch._ops.key_extractor(torch._ops._get_tensors(args, kwargs), after)
    return keys if keys.raw_repr() else None
