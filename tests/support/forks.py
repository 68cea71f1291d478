"""One warm fork server per environment for the live tests of a pytest process.

Each live test's app forks its workers from it instead of starting a server of its own (5 s of
torch import and inductor warm-up each). A worker inherits the environment and folder its server
started in, so a test that changes either (a broken torch on PYTHONPATH) gets a server of its own.
The app's own server, started and stopped with it, is what the process tests run (kscope as a
user runs it: tests/process/test_exits.py, test_serve.py, test_tmux_smoke.py, test_browser.py)."""

from __future__ import annotations

import functools
import os

from kscope.app.session import LiveSession
from kscope.worker.forks import ForkServer

_SERVERS: dict[tuple, ForkServer] = {}


def shared_forks() -> ForkServer:
    key = (os.getcwd(), tuple(sorted((k, v) for k, v in os.environ.items() if not k.startswith("PYTEST_"))))
    if key not in _SERVERS:
        _SERVERS[key] = ForkServer(os.dup(2))  # what the server itself prints: this process's stderr
    return _SERVERS[key]


def shared_session():
    """A session_factory for KscopeApp: LiveSession on the shared fork server."""
    return functools.partial(LiveSession, forks=shared_forks())
