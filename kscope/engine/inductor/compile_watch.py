"""When torch.compile is compiling, as dynamo tells it: its compile callbacks fire when the first
compile of a nest starts and when the last ends, for a frame dynamo compiles, for AOTAutograd's
backward compiled lazily at the first backward, and for CUDA graphs' recording. The worker passes
them on ("phase" messages), so that its client counts a long compile against --compile-timeout,
not against --timeout (worker.clock)."""

from __future__ import annotations

from collections.abc import Callable

Listener = Callable[[bool, str], None]
"""listener(compiling, what): what is "graph 0/1", "the backward of graph 0/0", …"""

_listener: list[Listener | None] = [None]


def watch_compiles(listener: Listener | None) -> None:
    """Tell `listener` when compiles start and end in this process, from now on (None: nobody)."""
    _listener[0] = listener
    rewatch()


def rewatch() -> None:
    """Register the callbacks again where they are gone: torch._dynamo.reset() clears dynamo's
    callbacks (engine.inductor.numbering.fresh_compile_state calls it before every run)."""
    from torch._dynamo.callback import callback_handler

    if _started not in callback_handler.start_callbacks:
        callback_handler.register_start_callback(_started)
    if _ended not in callback_handler.end_callbacks:
        callback_handler.register_end_callback(_ended)


def _started(args) -> None:
    listener = _listener[0]
    if listener is not None:
        listener(True, describe(args))


def _ended(args) -> None:
    listener = _listener[0]
    if listener is not None:
        listener(False, describe(args))


def describe(args) -> str:
    """A compile in the user's words, from dynamo's CallbackArgs (trigger, compile id "0/1")."""
    trigger = getattr(getattr(args, "callback_trigger", None), "name", "")
    cid = getattr(args, "compile_id", "") or ""
    graph = f"graph {cid}" if cid else "a graph"
    if trigger == "LAZY_BACKWARD":
        return f"the backward of {graph}"
    if trigger == "CUDAGRAPH_RECORDING":
        return f"CUDA graphs for {graph}"
    return graph
