"""Running the live app in a terminal: the signals that end it (a dropped SSH session, SIGTERM)
and its exit status. The app itself is kscope.app.app."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
from dataclasses import replace

from kscope.app.app import KscopeApp
from kscope.app.export import DEFAULT_ROOT
from kscope.report.request import RunRequest, SweepOptions


def run_app(request: RunRequest, sweep: SweepOptions | None = None, present: bool = False,
            export_dir: str = DEFAULT_ROOT) -> int:
    # Each run's traces, for key e to export with its Report; gone with the app. (--trace-dir is
    # for --once.)
    traces = tempfile.mkdtemp(prefix="kscope-traces-")
    request = replace(request, file=os.path.abspath(request.file), trace_dir=None)
    app = KscopeApp(request, sweep=sweep, sweep_at_start=sweep is not None, present=present, export_dir=export_dir,
                    trace_root=traces)

    def on_hangup(signum, frame):
        # The terminal is gone (an SSH session dropped): stop the workers and leave at once.
        app.shutdown()
        shutil.rmtree(traces, ignore_errors=True)
        os._exit(128 + signum)

    def on_terminate(signum, frame):
        app.shutdown()
        app.exit(return_code=128 + signum)  # restores the terminal
        # If the event loop cannot get to it, leave anyway: nothing of kscope's may linger. A daemon
        # thread: the interpreter waited for this one at every exit, so SIGTERM always took 1.5 s.
        timer = threading.Timer(1.5, os._exit, args=(128 + signum,))
        timer.daemon = True
        timer.start()

    signal.signal(signal.SIGHUP, on_hangup)
    signal.signal(signal.SIGTERM, on_terminate)
    try:
        app.run()
    finally:
        app.shutdown()
        shutil.rmtree(traces, ignore_errors=True)
    return app.return_code or 0
