"""kscope's torch.compile backend: inductor, plus a note of each graph dynamo hands it (its inputs
in the user's names, whether an optimizer's step made it, its cache key's source) and why the
graph before it ended (graph breaks)."""

from __future__ import annotations

import os

import torch

from kscope.engine.breaks import plain_break
from kscope.engine.inductor.provenance import same_file, user_name
from kscope.engine.inductor.source_key import SourceKeys
from kscope.engine.project import is_user_file, place_of
from kscope.report.model import GraphBreak


class RecordingBackend:
    """Inductor, plus a note of each graph dynamo hands it and why the graph ended."""

    def __init__(self, user_file: str):
        self.user_file = user_file
        self.keys = SourceKeys()
        self.graphs = 0
        self.breaks: list[GraphBreak] = []
        self.inputs: dict[str, list[str]] = {}
        """compile id -> the graph's inputs in order, in the user's names ("x", "conv1.weight")."""
        self.optimizer: set[str] = set()
        """Compile ids of graphs traced from an optimizer's step (their ops' stack traces run
        through torch/optim): under torch.compile the step's profiler marker is dropped."""
        self.words: list[tuple[str, str]] = []
        """Dynamo's logged words for its graph breaks (Capture.break_words): the graph's own
        reason is terse for a data-dependent branch ("generic_jump TensorVariable()")."""

    def __call__(self, gm, example_inputs):
        from torch._inductor.compile_fx import compile_fx

        self.graphs += 1
        cid = torch._guards.CompileContext.current_compile_id()
        if cid is not None and any(_OPTIM in (n.meta.get("stack_trace") or "") for n in gm.graph.nodes):
            self.optimizer.add(f"{cid.frame_id}/{cid.frame_compile_id}")
        if cid is not None:
            self.inputs[f"{cid.frame_id}/{cid.frame_compile_id}"] = [
                user_name(_source_name(n.meta.get("grapharg"))) or n.name
                for n in gm.graph.nodes
                if n.op == "placeholder"
            ]
        reason = getattr(gm, "compile_subgraph_reason", None)
        if reason is not None and reason.graph_break:
            # the innermost frame in the user's own files: model.py's line, not bench.py's call of it
            frames = [f for f in reason.user_stack if same_file(f.filename, self.user_file) or is_user_file(f.filename)]
            frames = frames or reason.user_stack
            last = frames[-1] if frames else None
            cid = f"{cid.frame_id}/{cid.frame_compile_id}" if cid is not None else "?"
            plain, kind, explanation, hints = plain_break(_words(reason, cid, self.words))
            self.breaks.append(
                GraphBreak(
                    reason=plain,
                    line=last.lineno if last else None,
                    file=last.filename if last else None,
                    explanation=explanation,
                    hint=hints[0] if hints else "",
                    type=kind,
                    hints=hints,
                    place=place_of((f.filename, f.lineno) for f in reversed(reason.user_stack)),
                )
            )
        with self.keys.forward(gm):
            return compile_fx(gm, example_inputs)

    def reset(self) -> None:
        """torch._dynamo.reset() calls this: free what reduce-overhead's CUDA graphs hold, as
        torch's own inductor backend does."""
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            from torch._inductor.cudagraph_trees import reset_cudagraph_trees

            reset_cudagraph_trees()


_OPTIM = f"{os.sep}torch{os.sep}optim{os.sep}"


def _words(reason, cid: str, logged: list[tuple[str, str]]) -> str:
    """Dynamo's full words for the break that ended this graph: the graph's reason when it has
    them (a call dynamo could not trace), else what dynamo logged for this compile, at the break's
    line if it logged one there (a break it could not resume from is logged where it happened and
    ends the graph at the last line it could resume from), else its latest."""
    if "Explanation:" in reason.reason:
        return reason.reason
    mine = [text for c, text in logged if c == cid]
    frame = reason.user_stack[-1] if reason.user_stack else None
    here = [t for t in mine if frame and t.startswith(f"Graph break in user code at {frame.filename}:{frame.lineno}\n")]
    text = (here or mine or [reason.reason])[-1]
    # "Graph break in user code at F:L\nGraph Break Reason: <dynamo's words>\n\nUser code traceback: ..."
    return text.split("\nUser code traceback:", 1)[0].split("Graph Break Reason: ", 1)[-1]


def _source_name(grapharg) -> str:
    source = getattr(grapharg, "source", None)
    name = getattr(source, "name", None)
    try:
        return (name() if callable(name) else name) or ""
    except Exception:  # a source kscope does not know how to name
        return ""
