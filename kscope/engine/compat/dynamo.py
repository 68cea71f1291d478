"""Dynamo from the outside: the id of the graph being compiled, its sources in the user's words,
its reset. torch._guards, torch._dynamo."""

from __future__ import annotations


def compile_id() -> str | None:
    """The compile id of the graph dynamo is compiling now, "frame/compile" ("0/1"), as
    torch's logs and kscope's capture key graphs (None outside a compile)."""
    import torch._guards

    cid = torch._guards.CompileContext.current_compile_id()
    return None if cid is None else f"{cid.frame_id}/{cid.frame_compile_id}"


def reset() -> None:
    """Forget every compiled frame and its guards (torch._dynamo.reset): the next call compiles afresh."""
    import torch._dynamo

    torch._dynamo.reset()


_MODULE_DICTS = ("_modules", "_parameters", "_buffers")
"""An nn.Module's children, parameters and buffers: `model.conv.weight` to its user."""


def user_words(source) -> str | None:
    """Dynamo's source chain as the user would write the expression (None: a link kscope does
    not know)."""
    from torch._dynamo import source as s

    if isinstance(source, s.LocalSource):
        return source.local_name
    if isinstance(source, s.GlobalSource):
        return source.global_name
    if isinstance(source, s.NNModuleSource):  # a module as dynamo traces it: the same object
        return user_words(source.base)
    if not isinstance(source, (s.AttrSource, s.GetItemSource, s.DictGetItemSource)):
        return None
    base = user_words(source.base)
    if base is None:
        return None
    if isinstance(source, s.AttrSource):
        return base if source.member in _MODULE_DICTS else f"{base}.{source.member}"
    index = source.index
    if not isinstance(index, (str, int)) or getattr(source, "index_is_slice", False):
        return None
    if isinstance(source.base, s.AttrSource) and source.base.member in _MODULE_DICTS:
        return f"{base}.{index}"
    return f"{base}[{index!r}]"
