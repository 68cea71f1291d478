"""The worker's protocol (worker.protocol): every request and message survives its line, typed."""

from __future__ import annotations

import json

from support.fixed_session import article_report

from kscope.report.codec import report_to_dict
from kscope.report.compile import CompileOptions
from kscope.report.request import RunRequest, SweepOptions, SweepRequest
from kscope.worker.protocol import (
    Shown,
    read_message,
    read_request,
    ready_line,
    report_line,
    request_line,
    shown_line,
    timing_line,
)


def test_a_run_request_comes_back_as_it_was_sent():
    request = RunRequest("/w/model.py", "step", "cpu", calls=3, n=1000, cold=True, backward=True,
                         compile=CompileOptions("max-autotune", False, True, {"freezing": True}),
                         trace_dir="/tmp/t", settle=True, nproc=2, timeout=8.0)
    line = request_line(request, 7)
    assert line.endswith("\n") and "\n" not in line[:-1]
    assert read_request(line) == (7, request)


def test_a_sweep_request_keeps_its_run_and_its_sizes():
    sweep = SweepRequest(RunRequest("/w/add_relu.py", no_grad=True), SweepOptions((100, 10_000), 12.5, True))
    rid, back = read_request(request_line(sweep, 3))
    assert (rid, back) == (3, sweep) and back.options.sizes == (100, 10_000)
    assert read_request(request_line(SweepRequest(RunRequest("f.py")), 4))[1].options.sizes is None


def test_shown_and_ready():
    assert read_request(shown_line(5)) == (None, Shown(5))
    assert read_message(ready_line()).type == "ready" and read_message(ready_line()).report is None
    timing = read_message(timing_line(7))
    assert (timing.type, timing.id, timing.report) == ("timing", 7, None)


def test_a_report_message_carries_the_report_typed():
    report = article_report()
    for kind in ("eager", "sweep", "report"):
        message = read_message(report_line(kind, 9, report).encode())
        assert (message.type, message.id) == (kind, 9)
        assert report_to_dict(message.report) == report_to_dict(report)  # what JSON holds of it, all of it
        assert message.report.eager.kernels[0].name == report.eager.kernels[0].name
    assert json.loads(report_line("report", 9, report))["report"]["schema"] == report.schema
