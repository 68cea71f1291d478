"""Driving the app as a person would, through Textual's Pilot: an app on a fixed Report, waiting
for what the screen shows, and the compiled kernels on it."""

from __future__ import annotations

import time

from kscope.app.app import KscopeApp
from kscope.app.widgets.kernels import KernelTable
from kscope.report.request import RunRequest
from support.fixed_session import FixedSession


def fixed_app(report, file="/work/add_relu.py", **switches):
    """The app on a session that replays `report` (no worker, no watcher)."""
    return KscopeApp(RunRequest(file, None, "cpu", timeout=60.0, calls=5, **switches), session_factory=FixedSession(report), watch=False)


async def wait_for(pilot, condition, timeout=90.0):
    """Until `condition()` holds and the app has drawn every pane of the report it shows (it
    draws a report a few panes a frame), as a person reads the screen once it is still."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition() and not drawing(pilot.app):
            return
        await pilot.pause(0.1)
    raise AssertionError("condition not met in time")


def drawing(app) -> bool:
    """Some panes of the report the app shows wait for their frame."""
    staged = getattr(app, "drawing", None)
    return staged is not None and staged.busy


def compiled_names(app):
    """The compiled kernels of a finished run on screen (not a plan's, whose rows have no time yet)."""
    table = app.query_one("#compiled-kernels", KernelTable)
    if table.mode is None or any(k.time_us is None for k in table.mode.kernels):
        return []
    return [k.name for k in table.mode.kernels]


def screen_text(app) -> str:
    """The screen as it was last drawn, as plain text: what a person sees (the modal on top
    included), drawn as App.export_screenshot draws it."""
    import io

    from rich.console import Console

    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, legacy_windows=False,
                      safe_box=False, color_system=None)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()
