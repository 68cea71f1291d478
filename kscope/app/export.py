"""Key e: the Report on screen, exported into a new folder: report.json, report.md, the two
chrome traces the run saved, and an SVG screenshot of the app.

The folder appears whole or not at all: everything is written into a hidden folder beside it,
which is then renamed. It is always new (never over an earlier export) and is never the watched
file's own folder unless the user asked for exactly that (--export-dir). No torch, no textual:
the app calls this on a thread, off its event loop.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from kscope.render.markdown import report_markdown
from kscope.report.codec import report_to_dict
from kscope.report.model import Report

DEFAULT_ROOT = "kscope-export"


def export_folder_name(now: float | None = None) -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.localtime(now))


def export_report(report: Report, root: str | os.PathLike, svg: str | None = None, now: float | None = None) -> Path:
    """Write the export under root (created if missing) and return the new folder."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".kscope-export-", dir=root))
    try:
        copied = {}
        for mode, path in (report.traces or {}).items():
            if os.path.isfile(path):  # the app keeps the traces of its last few runs only
                shutil.copyfile(path, staging / os.path.basename(path))
                copied[mode] = os.path.basename(path)
        # the exported Report names the copies beside it, not the app's private folder
        report = replace(report, traces=copied or None)
        (staging / "report.json").write_text(json.dumps(report_to_dict(report), indent=2) + "\n")
        (staging / "report.md").write_text(report_markdown(report))
        if svg is not None:
            (staging / "screenshot.svg").write_text(svg)
        os.chmod(staging, 0o755)  # mkdtemp makes it private
        return _rename_to_new(staging, root, export_folder_name(now))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _rename_to_new(staging: Path, root: Path, name: str) -> Path:
    """Rename staging to root/name, or name-2, name-3, ... : never over an earlier export."""
    for i in range(1, 1000):
        target = root / (name if i == 1 else f"{name}-{i}")
        if target.exists():
            continue
        try:
            os.rename(staging, target)  # (over an empty folder made in between, Linux would succeed)
        except OSError:
            continue
        return target
    raise FileExistsError(f"{root}: no free export folder for {name}")
