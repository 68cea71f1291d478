"""Drawing a report over several frames, a few panes a frame.

Showing a report changes most of the screen; drawn at once, its one paint re-rendered every pane
and held the event loop 37-65 ms on a 2-core CPU (issue 39, docs/reliability.md). In stages, each
frame paints only what its stage changed, and keys, resizes and the status clock run between them.
A newer report stops an older one's stages: its own redraw every pane anyway."""

from __future__ import annotations

from typing import Callable

from textual.css.query import NoMatches

Stage = Callable[[], "bool | None"]
"""Draws some panes; returns False when it changed nothing on screen (the next stage then follows
in the same frame: each frame waits for Textual's update timer, 1/60 s, and seven stages that each
waited made `r` -> final 0.12 -> 0.26 s, benchmarks/latency.py)."""


class StagedDraw:
    def __init__(self, app) -> None:
        self.app = app
        self.drawn = None
        """The last report whose every stage is drawn (None until the first is)."""
        self._token = self._done_token = 0
        self._then: list[Callable[[], None]] = []

    @property
    def busy(self) -> bool:
        """Stages of a report are still waiting for their frame."""
        return self._token != self._done_token

    def start(self, report, stages: list[Stage], then: Callable[[], None] | None = None) -> None:
        """Draw the first stage now and each next after the screen has painted the one before;
        `then` runs after the last stage has painted (or a newer report's last, if one takes over)."""
        self._token += 1
        if then is not None:
            self._then.append(then)
        self._next(self._token, report, list(stages))

    def _next(self, token: int, report, stages: list[Stage]) -> None:
        if token != self._token:
            return  # a newer report took over: its last stage runs what waits for this one
        try:
            while stages and stages.pop(0)() is False:  # it changed nothing: no paint to wait for
                pass
        except NoMatches:
            return  # the app is exiting and its panes are already gone
        if stages:
            self.app.call_after_refresh(self._next, token, report, stages)
            return
        self.drawn, self._done_token = report, token
        then, self._then = self._then, []
        for callback in then:
            self.app.call_after_refresh(callback)
