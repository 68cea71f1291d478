"""watchdog events -> one debounced "changed" call per save of one file.

We watch the file's folder, not the file: editors' atomic saves write a temp file and rename it
over the target (FileMovedEvent tmp -> target), and delete + recreate replaces the inode, both of
which a watch on the file itself would lose. A plain save arrives as several modify/close events;
a burst within `debounce_s` becomes one call. The callback runs on a timer thread: it must only
post a message, never touch the UI.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

DEBOUNCE_S = 0.05


class FileWatcher(FileSystemEventHandler):
    def __init__(
        self,
        path: str,
        on_change: Callable[[], None],
        on_missing: Callable[[], None] | None = None,
        debounce_s: float = DEBOUNCE_S,
    ):
        super().__init__()
        self.path = os.path.abspath(path)
        self.on_change, self.on_missing, self.debounce_s = on_change, on_missing, debounce_s
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._observer = Observer()

    def start(self) -> None:
        self._observer.schedule(self, os.path.dirname(self.path), recursive=False)
        self._observer.daemon = True
        self._observer.start()

    def stop(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
        self._observer.stop()

    def _touches_target(self, event: FileSystemEvent) -> bool:
        paths = [event.src_path, getattr(event, "dest_path", "")]
        return any(p and os.path.abspath(os.fsdecode(p)) == self.path for p in paths)

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or event.event_type in ("opened", "closed_no_write"):
            return
        if self._touches_target(event):
            self._schedule()

    def _schedule(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.debounce_s, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        if os.path.exists(self.path):
            self.on_change()
        elif self.on_missing is not None:
            self.on_missing()
