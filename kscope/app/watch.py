"""watchdog events -> one debounced "changed" call per save of a watched file.

The app watches every file of the user's that the last runs imported (Report.files), not just the
target: a save of model.py re-runs bench.py. We watch each file's folder, not the file: editors'
atomic saves write a temp file and rename it over the target (FileMovedEvent tmp -> target), and
delete + recreate replaces the inode, both of which a watch on the file itself would lose. A
plain save arrives as several modify/close events; a burst within `debounce_s` becomes one call
per file. The callbacks run on timer threads: they must only post a message, never touch the UI.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

DEBOUNCE_S = 0.05


class FileWatcher(FileSystemEventHandler):
    def __init__(
        self,
        paths: str | Iterable[str],
        on_change: Callable[[str], None],
        on_missing: Callable[[str], None] | None = None,
        debounce_s: float = DEBOUNCE_S,
    ):
        super().__init__()
        self.on_change, self.on_missing, self.debounce_s = on_change, on_missing, debounce_s
        self.paths: frozenset[str] = frozenset()
        self._folders: set[str] = set()
        self._timers: dict[str, threading.Timer] = {}
        self._lock = threading.Lock()
        self._observer = Observer()
        self._started = False
        self.watch([paths] if isinstance(paths, str) else paths)

    def watch(self, paths: Iterable[str]) -> None:
        """Watch exactly these files from now on (their folders are watched as they appear)."""
        with self._lock:
            self.paths = frozenset(os.path.abspath(p) for p in paths)
            if self._started:
                self._schedule_folders()

    def start(self) -> None:
        with self._lock:
            self._started = True
            self._schedule_folders()
        self._observer.daemon = True
        self._observer.start()

    def stop(self) -> None:
        with self._lock:
            for timer in self._timers.values():
                timer.cancel()
        self._observer.stop()

    def pending(self) -> bool:
        """A save seen and not yet delivered (its debounce timer runs)."""
        with self._lock:
            return any(t.is_alive() for t in self._timers.values())

    def _schedule_folders(self) -> None:
        for folder in {os.path.dirname(p) for p in self.paths} - self._folders:
            if os.path.isdir(folder):
                self._observer.schedule(self, folder, recursive=False)
                self._folders.add(folder)

    def _touched(self, event: FileSystemEvent) -> list[str]:
        paths = [event.src_path, getattr(event, "dest_path", "")]
        return [a for p in paths if p and (a := os.path.abspath(os.fsdecode(p))) in self.paths]

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or event.event_type in ("opened", "closed_no_write"):
            return
        for path in self._touched(event):
            self._schedule(path)

    def _schedule(self, path: str) -> None:
        with self._lock:
            if path in self._timers:
                self._timers[path].cancel()
            timer = self._timers[path] = threading.Timer(self.debounce_s, self._fire, args=(path,))
            timer.daemon = True
            timer.start()

    def _fire(self, path: str) -> None:
        if os.path.exists(path):
            self.on_change(path)
        elif self.on_missing is not None:
            self.on_missing(path)
