"""A fresh compile state: dynamo's reset, and inductor's graph numbers from 0 again.

Inductor numbers the graphs a process compiles (compile_fx's `_graph_counter`) and writes the
number into each C++ kernel's source, as its profiler label (`graph_3_cpp_fused_add_relu_0`).
Its cache of compiled C++ is keyed by the source, so in a process that runs targets one after
another (a sweep, kscope's own engine tests) the same kernel compiled as graph 7 instead of graph 3
is compiled by the C++ compiler again: a third of the C++ compiles of the test suite, measured.
A worker forked fresh for each run already numbers from the same place. kscope never reads the
number (engine.inductor.capture and trace.kernels take it out); dynamo's reset drops every graph
compiled earlier, so no two live graphs share a number.
"""

from __future__ import annotations

import itertools

import torch

from kscope.engine.inductor.compile_watch import rewatch


def fresh_compile_state() -> None:
    torch._dynamo.reset()
    rewatch()  # reset() dropped dynamo's compile callbacks, kscope's among them
    import torch._inductor.compile_fx as compile_fx

    if hasattr(compile_fx, "_graph_counter"):  # private: a torch without it keeps its own numbering
        compile_fx._graph_counter = itertools.count(0)
