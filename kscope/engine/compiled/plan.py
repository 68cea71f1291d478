"""The plan of a compiled half while inductor compiles it (report.plan): its kernels as inductor's
scheduler made them, and how far the compile is, told to the app before the kernels are compiled."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from kscope.engine.compiled.backend import RecordingBackend
from kscope.engine.compiled.round_trips import compiled_round_trips
from kscope.engine.compiled.rows import graph_kernels, graph_phase, plan_rows
from kscope.engine.eager.round_trips import grouped
from kscope.engine.inductor.capture import Capture, GraphCapture
from kscope.engine.inductor.provenance import stable_handles
from kscope.engine.inductor.store import TrafficStore
from kscope.report.plan import Plan, PlanProgress


class Planner:
    """Told by capture_inductor of each graph inductor compiles in a run; says the plan so far
    through on_plan whenever a new graph is planned, and the compile's progress through
    on_progress (only once there is a plan to show: a run whose graphs all come from inductor's
    cache has nothing to wait for)."""

    def __init__(self, backend: RecordingBackend, store: TrafficStore, on_plan: Callable[[Plan], None],
                 on_progress: Callable[[PlanProgress], None] | None = None):
        self.backend, self.store = backend, store
        self.on_plan, self.on_progress = on_plan, on_progress
        self.progress = PlanProgress()
        self.plan: Plan | None = None
        """The latest plan told (None: none yet)."""
        self._plans: dict[int, GraphCapture] = {}  # id of a Capture's graph -> its plan
        self._ran = False  # the first compiled call returned
        self.spent_s = 0.0
        """Seconds spent making and telling plans and progress: not the compile's (compile_s)."""

    def planned(self, graph: GraphCapture, plan: GraphCapture, capture: Capture) -> None:
        """Inductor generated the code of `graph`, one of `capture`'s, and has not compiled it:
        `plan` is that graph as it will be once compiled (engine.inductor.plan_capture)."""
        self._plans[id(graph)] = plan
        # a graph compiled after the first call (a guard failed while timing) is compiling, not timing
        self._step(graphs_seen=self.progress.graphs_seen + 1, kernels_compiled=None, kernels_total=None, ran=False)
        self._tell(capture)

    def _tell(self, capture: Capture) -> None:
        started = time.perf_counter()
        self.plan = self._make(capture)
        self.on_plan(self.plan)
        self.spent_s += time.perf_counter() - started

    def refresh(self, capture: Capture) -> None:
        """A graph from inductor's cache has logged its kernels: once there is a plan, it joins it."""
        if self.plan is not None:
            self._tell(capture)

    def ran(self) -> None:
        """The compiled half's first call returned: every graph it needed is compiled."""
        self._ran = True
        self._step(ran=True)

    def cached(self) -> None:
        """A graph came from inductor's FX-graph cache: seen and done at once."""
        self._step(graphs_seen=self.progress.graphs_seen + 1, graphs_done=self.progress.graphs_done + 1)

    def done(self) -> None:
        """The graph planned last is compiled and loaded (a recompile's, after the first call: timing again)."""
        self._step(graphs_done=self.progress.graphs_done + 1, kernels_compiled=None, kernels_total=None, ran=self._ran)

    def kernels(self, compiled: int, total: int) -> None:
        """Inductor's compile workers finished `compiled` of the graph's `total` kernels."""
        self._step(kernels_compiled=compiled, kernels_total=total)

    def _step(self, **changes) -> None:
        started = time.perf_counter()
        self.progress = PlanProgress(**{**self.progress.__dict__, **changes})
        if self.plan is not None:
            self.plan = dataclasses.replace(self.plan, progress=self.progress)
            if self.on_progress is not None:
                self.on_progress(self.progress)
        self.spent_s += time.perf_counter() - started

    def _make(self, capture: Capture) -> Plan:
        """The plan of every graph of the run so far: those planned, and those inductor's cache
        gave (their bytes from kscope's store, as the final rows will have them)."""
        graphs, rows_of, facts_of = [], [], []
        for g in capture:
            plan = self._plans.get(id(g))
            if plan is not None:
                graphs.append(plan)
                rows_of.append(plan.kernel_bytes())
                facts_of.append(plan.facts())
            elif g.code and g.nodes is None and (stored := self.store.graph_bytes(g.code_hash)) is not None:
                g.restore_provenance(stored)
                graphs.append(g)
                rows_of.append(stored)
                facts_of.append(self.store.facts(g.code_hash))
        kernels_of = [graph_kernels(g, rows, self.backend) for g, rows in zip(graphs, rows_of)]
        rows = plan_rows(graphs, kernels_of, [graph_phase(g, self.backend) for g in graphs])
        trips = []
        for g, kernels, rows_, facts in zip(graphs, kernels_of, rows_of, facts_of):
            found = compiled_round_trips(kernels, rows_, stable_handles(g.provenance), facts)
            if found is None:
                trips = None
                break
            trips += found
        estimates = tuple(None if f is None else f.estimated_peak_bytes for f in facts_of)
        return Plan(tuple(rows), None if trips is None else grouped(trips), self.progress, estimates)
