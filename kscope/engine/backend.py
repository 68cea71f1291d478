"""kscope's torch.compile backend: inductor, plus a note of each graph dynamo hands it (its inputs
in the user's names, whether an optimizer's step made it, its cache key's source) and why the
graph before it ended (graph breaks)."""

from __future__ import annotations

import os

import torch

from kscope.engine.breaks import plain_break
from kscope.engine.inductor.provenance import same_file, user_name
from kscope.engine.inductor.source_key import SourceKeys
from kscope.engine.project import is_user_file
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
            plain, explanation, hint = plain_break(reason.reason)
            self.breaks.append(
                GraphBreak(
                    reason=plain,
                    line=last.lineno if last else None,
                    file=last.filename if last else None,
                    explanation=explanation,
                    hint=hint,
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


def _source_name(grapharg) -> str:
    source = getattr(grapharg, "source", None)
    name = getattr(source, "name", None)
    try:
        return (name() if callable(name) else name) or ""
    except Exception:  # a source kscope does not know how to name
        return ""
