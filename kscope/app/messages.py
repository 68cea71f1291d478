"""The messages the app's threads post to its event loop: nothing else crosses into the UI."""

from __future__ import annotations

from textual.message import Message

from kscope.app.session import SessionEvent


class SessionUpdate(Message):
    """The session said something (a run started, a Report arrived, output)."""

    def __init__(self, event: SessionEvent):
        super().__init__()
        self.event = event


class FileSaved(Message):
    """A watched file was saved (the target, or a file of the user's the run imported)."""

    def __init__(self, path: str):
        super().__init__()
        self.path = path


class FileMissing(Message):
    """A watched file is gone (deleted, moved away): said, and waited for."""

    def __init__(self, path: str):
        super().__init__()
        self.path = path
