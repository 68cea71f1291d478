"""kscope's torch.compile backend: inductor, plus a note of each graph dynamo hands it (its inputs
in the user's names, whether an optimizer's step made it, its cache key's source) and why the
graph before it ended (graph breaks)."""

from __future__ import annotations

import os
import sys

from kscope.engine.compat.dynamo import compile_id, user_words
from kscope.engine.compiled.breaks import plain_break
from kscope.engine.inductor.compile import compile_with_inductor, reset_cuda_graphs
from kscope.engine.inductor.provenance import same_file
from kscope.engine.inductor.source_key import SourceKeys
from kscope.engine.target.project import frame_kind, is_kscope_file, is_user_file, place_of
from kscope.report.model import GraphBreak


class RecordingBackend:
    """Inductor, plus a note of each graph dynamo hands it and why the graph ended."""

    def __init__(self, user_file: str):
        self.__name__ = "inductor"  # what dynamo's errors call the backend (its repr otherwise)
        self.user_file = user_file
        self.keys = SourceKeys()
        self.graphs = 0
        self.breaks: list[GraphBreak] = []
        self.inputs: dict[str, list[str]] = {}
        """compile id -> the graph's inputs in order, in the user's names ("x", "conv1.weight")."""
        self.optimizer: set[str] = set()
        """Compile ids of graphs traced from an optimizer's step (their ops' stack traces run
        through torch/optim): under torch.compile the step's profiler marker is dropped."""
        self.callers: dict[str, tuple[tuple[str, int], ...]] = {}
        """compile id -> the (file, line) frames that called the frame dynamo compiled, innermost
        first: a graph traced from a frame outside the user's files (a library's forward after a
        graph break, an optimizer's step) was issued from the user's line among them."""
        self.words: list[tuple[str, str]] = []
        """Dynamo's logged words for its graph breaks (Capture.break_words): the graph's own
        reason is terse for a data-dependent branch ("generic_jump TensorVariable()")."""

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        cid = compile_id()
        if cid is not None and any(_OPTIM in (n.meta.get("stack_trace") or "") for n in gm.graph.nodes):
            self.optimizer.add(cid)
        if cid is not None:
            self.callers[cid] = caller_frames(sys._getframe(1))
            self.inputs[cid] = [
                _input_name(getattr(n.meta.get("grapharg"), "source", None)) or n.name
                for n in gm.graph.nodes
                if n.op == "placeholder"
            ]
        reason = getattr(gm, "compile_subgraph_reason", None)
        if reason is not None and reason.graph_break:
            # the innermost frame in the user's own files: model.py's line, not bench.py's call of it
            frames = [f for f in reason.user_stack if same_file(f.filename, self.user_file) or is_user_file(f.filename)]
            frames = frames or reason.user_stack
            last = frames[-1] if frames else None
            cid = cid if cid is not None else "?"
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
            return compile_with_inductor(gm, example_inputs)

    def reset(self) -> None:
        """torch._dynamo.reset() calls this: free what reduce-overhead's CUDA graphs hold, as
        torch's own inductor backend does."""
        reset_cuda_graphs()


_OPTIM = f"{os.sep}torch{os.sep}optim{os.sep}"


def caller_frames(frame) -> tuple[tuple[str, int], ...]:
    """(file, line) of `frame` and those that called it, innermost first, the user's and the
    libraries' alone (project.frame_kind: what place_of reads), up to kscope's own frame (the one
    that called the user's code). The backend runs inside dynamo, whose callers, while it compiles
    a frame, are the frames that called that one (the frame itself is not among them)."""
    out = []
    while frame is not None:
        file = frame.f_code.co_filename
        if is_kscope_file(file):
            break
        if frame_kind(file) is not None:
            out.append((file, frame.f_lineno))
        frame = frame.f_back
    return tuple(out)


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


def _input_name(source) -> str:
    """A graph input in the user's words, from dynamo's source for it: "model.conv.weight" for
    G['model']._modules['conv']._parameters['weight'], "conv1.weight" for L['self']._modules
    ['conv1']... (self: the module the user compiled), "x" for L['x']; dynamo's own name for a
    source of another kind."""
    words = user_words(source)
    if words is not None:
        return words.removeprefix("self.")
    name = getattr(source, "name", None)
    try:
        return (name() if callable(name) else name) or ""
    except Exception:  # a source kscope does not know how to name
        return ""
