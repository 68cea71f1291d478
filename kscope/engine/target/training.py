"""Training steps: run the target, then backward from its outputs (--backward); or the target
under torch.no_grad() (--no-grad).

The loss is kscope's, not the user's, so it must add no kernel: instead of summing the outputs
and calling backward() on the sum, each floating output that requires grad is handed to
`torch.autograd.backward` with a gradient of ones, which is what the sum's backward would give it
(a 0-dim output is its own loss: ones(()) is what `loss.backward()` starts from). The ones are
made once, outside the profiled calls.

Gradients are taken for the leaves autograd reached (the tensors inputs() made require grad, a
module's parameters, anything else the target's graph used), found once by walking the autograd
graph from the outputs; their `.grad` is cleared before every call, so every call does the same
work (autograd steals a fresh gradient instead of adding into an old one). When no output requires
grad, the target's floating inputs are made to (said in the notes).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import torch

from kscope.engine.compat.pytree import tree_leaves
from kscope.engine.target.loading import Target, TargetError, code_of
from kscope.report.model import Backward

SECOND_BACKWARD = "backward through the graph a second time"


class BackwardStep:
    """target(*args), then backward from its outputs. Call it as `step(fn, target)`."""

    def __init__(self, target: Target):
        self.target = target
        self.leaves: list[torch.Tensor] | None = None
        self.seeds: dict[tuple, torch.Tensor] = {}
        self.loss = ""
        self.notes: list[str] = []

    def __call__(self, fn: Callable, target: Target):
        for t in self.leaves or ():
            t.grad = None
        out = fn(*target.args)
        outs = _needing_grad(out)
        if not outs and self.leaves is None:
            made = _make_inputs_require_grad(target)
            if made:
                self.notes.append(
                    f"--backward: no tensor the target used required grad; kscope made its floating inputs "
                    f"{', '.join(made)} require it"
                )
                out = fn(*target.args)
                outs = _needing_grad(out)
        if not outs:
            raise TargetError(
                "backward",
                f"--backward: no output of {target.name} depends on a tensor that requires grad "
                "(if it calls backward() itself, run it without --backward)",
            )
        if self.leaves is None:
            self.leaves = _leaves(outs)
            for t in self.leaves:
                t.grad = None
            self.loss = _describe_loss(outs)
        try:
            torch.autograd.backward(outs, [self._seed(t) for t in outs])
        except RuntimeError as e:
            if SECOND_BACKWARD in str(e):
                raise TargetError(
                    "backward", f"--backward: {target.name} already calls backward() itself; run it without --backward"
                ) from None
            raise
        return out

    def _seed(self, t: torch.Tensor) -> torch.Tensor:
        key = (tuple(t.shape), t.dtype, t.device)
        if key not in self.seeds:
            self.seeds[key] = torch.ones(t.shape, dtype=t.dtype, device=t.device)
        return self.seeds[key]

    def report(self) -> Backward:
        return Backward(self.loss, tuple(tensor_names(self.target, self.leaves or [])))


def no_grad_step(fn: Callable, target: Target):
    with torch.no_grad():
        return fn(*target.args)


def _needing_grad(out) -> list[torch.Tensor]:
    return [t for t in tree_leaves(out) if isinstance(t, torch.Tensor) and t.requires_grad]


def _make_inputs_require_grad(target: Target) -> list[str]:
    names = arg_names(target)
    args, made = [], []
    for i, a in enumerate(target.args):
        if isinstance(a, torch.Tensor) and a.is_floating_point() and not a.requires_grad:
            a = a.detach().requires_grad_()
            made.append(names[i] if i < len(names) else f"input {i}")
        args.append(a)
    target.args = tuple(args)
    return made


def _leaves(outs: list[torch.Tensor]) -> list[torch.Tensor]:
    """The tensors autograd accumulates gradients into, reached from the outputs' graph."""
    found: dict[int, torch.Tensor] = {}
    seen: set[int] = set()
    stack = [t.grad_fn for t in outs if t.grad_fn is not None]
    for t in outs:
        if t.grad_fn is None and t.requires_grad:  # an output that is itself a leaf
            found[id(t)] = t
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if isinstance(variable, torch.Tensor):
            found[id(variable)] = variable
        stack.extend(next_fn for next_fn, _ in node.next_functions)
    return list(found.values())


def _describe_loss(outs: list[torch.Tensor]) -> str:
    if len(outs) == 1 and outs[0].dim() == 0:
        return "the target's 0-dim output, as loss.backward() does"
    which = "the output" if len(outs) == 1 else f"each of the {len(outs)} outputs"
    return f"a gradient of ones for {which}, as for their sum (kscope's loss runs no kernel)"


def arg_names(target: Target) -> list[str]:
    try:
        return list(inspect.signature(code_of(target.fn)).parameters)
    except (TypeError, ValueError):
        return []


def tensor_names(target: Target, tensors: list[torch.Tensor]) -> list[str]:
    """The user's names for tensors: the target's parameters, or a module's parameters
    ("fc1.weight" of an nn.Module target, "model.fc1.weight" of a module-level one)."""
    known: dict[int, str] = {}  # in the order names are found: the target's parameters first
    for name, a in zip(arg_names(target), target.args):
        if isinstance(a, torch.Tensor):
            known.setdefault(id(a), name)
    modules = [("", target.fn)] if isinstance(target.fn, torch.nn.Module) else []
    modules += [(f"{n}.", v) for n, v in vars(target.module).items() if isinstance(v, torch.nn.Module)]
    for prefix, module in modules:
        for name, p in module.named_parameters():
            known.setdefault(id(p), prefix + name)
    for name, v in vars(target.module).items():
        if isinstance(v, torch.Tensor):
            known.setdefault(id(v), name)
    order = {key: i for i, key in enumerate(known)}
    ranked = sorted(tensors, key=lambda t: order.get(id(t), len(order)))
    return [known.get(id(t), f"a tensor of shape {tuple(t.shape)}") for t in ranked]


def step_for(backward: bool, no_grad: bool, target: Target):
    """The wrapper the target runs in, or None to run it as written."""
    if backward and no_grad:
        raise TargetError("target", "--backward and --no-grad exclude each other")
    if backward:
        return BackwardStep(target)
    if no_grad:
        return no_grad_step
    return None
