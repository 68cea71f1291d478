"""--trace-dir: keep the chrome traces a run profiled, one for eager and one for compiled.

Both hold `calls` calls of the target, each inside a `kscope::call#N` marker, so that
`kscope TRACE` reads figures per call from them; Perfetto (ui.perfetto.dev) and chrome://tracing
open them as they are.
- eager: the trace of the eager half's profiled calls (the calls its kernel rows are made of),
  gzipped as it is exported.
- compiled: the compiled half has no profile of its own (its rows come from the timing's
  interleaved eager/compiled rounds), so `calls` calls of the compiled function alone are profiled
  for the file, after its warm-up and timing: the run's figures do not depend on it.

Files are `<DIR>/<file stem>-<target>-eager.json.gz` and `...-compiled.json.gz`, written to a
temporary name in DIR and renamed over the old one, so a reader never sees half a file. A
folder that cannot be made or written costs the traces, never the run: a note says why.
"""

from __future__ import annotations

import gzip
import os
import shutil
import tempfile
from collections.abc import Callable

import torch

from kscope.engine.measure.profiling import record_events

MODES = ("eager", "compiled")


def trace_path(trace_dir: str, user_file: str, target: str, mode: str) -> str:
    """`<DIR>/<file stem>-<target>-<mode>.json.gz`, absolute."""
    stem = os.path.splitext(os.path.basename(user_file))[0]
    return os.path.join(os.path.abspath(trace_dir), f"{stem}-{target}-{mode}.json.gz")


def save_gzipped(source: str, dest: str) -> None:
    """Gzip `source` to `dest` atomically (a temporary file in dest's folder, then os.replace)."""
    folder = os.path.dirname(dest)
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".kscope-trace-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
            with open(source, "rb") as src:
                shutil.copyfileobj(src, out)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp's file is private; a saved trace is a plain file
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class TraceExport:
    """Where one run's traces go, and what became of them (`saved`: mode -> path; `notes`)."""

    def __init__(self, trace_dir: str, user_file: str, target: str):
        self.trace_dir, self.user_file, self.target = trace_dir, user_file, target
        self.saved: dict[str, str] = {}
        self.notes: list[str] = []

    def keeper(self, mode: str) -> Callable[[str], None]:
        """What profiling hands the exported trace to: it saves a gzipped copy for `mode`."""

        def keep(exported: str) -> None:
            dest = trace_path(self.trace_dir, self.user_file, self.target, mode)
            try:
                save_gzipped(exported, dest)
            except OSError as e:
                self.notes.append(f"--trace-dir: the {mode} trace was not saved: {e}")
                return
            self.saved[mode] = dest

        return keep

    def profile_compiled(self, call: Callable[[], object], device: torch.device, calls: int) -> None:
        """Profile `calls` calls of the compiled function alone, marked as the eager half's are,
        and keep the trace (see the module docstring)."""
        record_events(call, device, calls, keep=self.keeper("compiled"))

    def take_notes(self) -> tuple[str, ...]:
        """The notes not taken yet."""
        taken, self.notes = tuple(self.notes), []
        return taken

    def traces(self) -> dict[str, str]:
        """For the Report: the traces written so far, in MODES order ({} when none was)."""
        return {m: self.saved[m] for m in MODES if m in self.saved}
