"""Where kscope keeps what it learns between processes: $KSCOPE_CACHE_DIR, else ~/.cache/kscope
($XDG_CACHE_HOME/kscope). Read at each call: tests point it at a folder of their own."""

from __future__ import annotations

import json
import os
from pathlib import Path


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(os.environ.get("KSCOPE_CACHE_DIR", Path(base) / "kscope"))


def write_json(path: Path, data) -> None:
    """Atomically (a process reading meanwhile sees the old file or the new one); a failed write
    is no error: the caller keeps its figures for this process."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)
    except OSError:
        pass
