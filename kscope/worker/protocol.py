"""The worker's protocol: every message that crosses the process boundary, one JSON object a line.

Requests and results travel on pipes of their own (never the worker's stdout and stderr, which
carry the user's prints), so nothing the user's code writes can corrupt them.

    client -> worker  {"type": "run", "id": N, "request": RunRequest}
                      {"type": "sweep", "id": N, "request": SweepRequest}
                      {"type": "shown", "of": N}    the eager half of run N is on screen
    worker -> client  {"type": "ready"}             torch imported, inductor warm
                      {"type": "eager", "id": N, "report": Report}    the eager half of run N
                      {"type": "plan", "id": N, "report": Report}     the eager half and inductor's
                                                  plan of the compiled half (report.plan), before it is compiled
                      {"type": "progress", "id": N, "progress": PlanProgress}   how far that compile is
                      {"type": "phase", "id": N, "compiling": true, "what": "graph 0/1"}   a compile
                                                  started (false: it ended): worker.clock's two clocks
                      {"type": "timing", "id": N}     both halves ran: the worker times them against each
                                                  other now (the app keeps its clock still meanwhile)
                      {"type": "sweep", "id": N, "report": Report}    a sweep, the sizes so far
                      {"type": "report", "id": N, "report": Report}   the end of request N

The rank processes of --nproc send the same Reports to the worker over multiprocessing pipes.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from kscope.report.codec import (
    compile_options_from_dict,
    compile_options_to_dict,
    report_from_dict,
    report_to_dict,
)
from kscope.report.model import Report
from kscope.report.plan import PlanProgress
from kscope.report.plan_codec import progress_from_dict, progress_to_dict
from kscope.report.request import RunRequest, SweepOptions, SweepRequest

REPORT_KINDS = ("eager", "plan", "sweep", "report")


@dataclass(frozen=True)
class Message:
    """What the worker said: "ready", a Report ("eager", "plan", "sweep", "report") or a compile's
    progress ("progress") for request `id`."""

    type: str
    id: int | None = None
    report: Report | None = None
    progress: PlanProgress | None = None
    compiling: bool | None = None
    """A "phase": whether torch.compile is compiling from now on."""
    what: str = ""
    """A "phase": the compile, in words ("graph 0/1")."""


@dataclass(frozen=True)
class Shown:
    """The client has drawn the eager half of request `of` (see RunRequest.settle)."""

    of: int


def run_request_to_dict(r: RunRequest) -> dict[str, Any]:
    return {**dataclasses.asdict(r), "compile": compile_options_to_dict(r.compile)}


def run_request_from_dict(d: dict[str, Any]) -> RunRequest:
    return RunRequest(**{**d, "compile": compile_options_from_dict(d.get("compile"))})


def request_line(request: RunRequest | SweepRequest, request_id: int) -> str:
    if isinstance(request, SweepRequest):
        body = {"run": run_request_to_dict(request.run), "options": dataclasses.asdict(request.options)}
        return _line({"type": "sweep", "id": request_id, "request": body})
    return _line({"type": "run", "id": request_id, "request": run_request_to_dict(request)})


def shown_line(of: int) -> str:
    return _line({"type": "shown", "of": of})


def read_request(line: str) -> tuple[int | None, RunRequest | SweepRequest | Shown]:
    """(id, request) from a line the client sent."""
    d = json.loads(line)
    if d["type"] == "shown":
        return None, Shown(d["of"])
    body = d["request"]
    if d["type"] == "sweep":
        options = dict(body.get("options") or {})
        if options.get("sizes") is not None:
            options["sizes"] = tuple(options["sizes"])
        return d["id"], SweepRequest(run_request_from_dict(body["run"]), SweepOptions(**options))
    return d["id"], run_request_from_dict(body)


def ready_line() -> str:
    return _line({"type": "ready"})


def report_line(kind: str, request_id: int | None, report: Report) -> str:
    assert kind in REPORT_KINDS, kind
    return _line({"type": kind, "id": request_id, "report": report_to_dict(report)})


def progress_line(request_id: int | None, progress: PlanProgress) -> str:
    return _line({"type": "progress", "id": request_id, "progress": progress_to_dict(progress)})


def phase_line(request_id: int | None, compiling: bool, what: str) -> str:
    return _line({"type": "phase", "id": request_id, "compiling": compiling, "what": what})


def timing_line(request_id: int | None) -> str:
    return _line({"type": "timing", "id": request_id})


def read_message(line: bytes | str) -> Message:
    d = json.loads(line)
    report, progress = d.get("report"), d.get("progress")
    return Message(d["type"], d.get("id"), None if report is None else report_from_dict(report),
                   None if progress is None else progress_from_dict(progress), d.get("compiling"), d.get("what", ""))


def _line(d: dict[str, Any]) -> str:
    return json.dumps(d) + "\n"
