"""The user's own code: every module of theirs a run imports is imported afresh, from its source.

"The user's own" is a rule, not a list: a Python source file outside the running interpreter's
installation (the stdlib and site-packages paths `sysconfig` and `site` name), outside kscope and
outside inductor's cache of generated code. So an editable install of the user's package is
theirs; torch and transformers are not, and stay imported (warm) from one run to the next.

Before each run the user's modules of the last run leave `sys.modules`, so the run imports what
is on disk now. They load through `FreshLoader`, which compiles the source it reads and never a
cached `.pyc`: a `.pyc` is trusted by its source's mtime in seconds and size, so an edit of the
same length within the same second would run the old code. The source read is what tracebacks,
inductor's stack traces and the Report quote (linecache), and `files()` lists every file of the
user's a run imported or tried to (a file with a syntax error too), for the app to watch.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import linecache
import os
import site
import sys
import sysconfig

from kscope.report.place import Place

_KSCOPE_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
"""kscope's own package folder (engine/target/project.py is two folders below it)."""
_attempted: dict[str, None] = {}  # realpath -> None, in the order the run first loaded them
_sources: dict[str, str] = {}  # realpath -> the text that ran
_loaded: set[str] = set()  # the names of the modules of the user's this run imported


@functools.cache
def library_roots() -> tuple[str, ...]:
    """Where the interpreter's installation keeps code: the stdlib and the site-packages folders."""
    paths = sysconfig.get_paths()
    stdlib = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib") if k in paths}
    return tuple(sorted(stdlib | set(_site_roots())))


def _generated_roots() -> tuple[str, ...]:
    """Code that torch writes and loads (inductor's and triton's caches), and kscope itself."""
    return _roots_for(os.environ.get("TORCHINDUCTOR_CACHE_DIR"), os.environ.get("TRITON_CACHE_DIR"))


@functools.cache
def _roots_for(inductor_cache: str | None, triton_cache: str | None) -> tuple[str, ...]:
    """By the cache folders in force (kscope's own inductor cache is set when the engine starts:
    engine.inductor.kill_safe), and the default ones, which code compiled before may come from."""
    import getpass
    import tempfile

    roots = [_KSCOPE_DIR, os.path.join(tempfile.gettempdir(), f"torchinductor_{getpass.getuser()}"),
             os.path.join(os.path.expanduser("~"), ".triton")]
    roots += [r for r in (inductor_cache, triton_cache) if r]
    return tuple(os.path.realpath(r) for r in roots)


def is_user_file(path: str | None) -> bool:
    if not path or not path.endswith(".py"):
        return False
    real = os.path.realpath(path)
    return not any(_inside(real, root) for root in library_roots() + _generated_roots())


def is_generated_file(path: str) -> bool:
    """Code torch wrote and loaded: a compiled graph's wrapper, a kernel (inductor's and triton's caches)."""
    real = os.path.realpath(path)
    return not is_kscope_file(path) and any(_inside(real, root) for root in _generated_roots())


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@functools.lru_cache(maxsize=8192)
def is_kscope_file(path: str) -> bool:
    return _inside(os.path.realpath(path), _KSCOPE_DIR)


def forget_user_modules() -> list[str]:
    """Take out of sys.modules the user's modules the last run imported (the next import of each
    reads its file again); their names. Only those: the modules of whoever runs kscope in its own
    process (a test runner, a notebook) are not the run's and stay."""
    gone = [name for name in list(sys.modules) if name in _loaded]
    for name in gone:
        del sys.modules[name]
    _loaded.clear()
    _attempted.clear()
    _sources.clear()
    importlib.invalidate_caches()  # a file made since (a recreated model.py) is found
    return gone


def files() -> tuple[str, ...]:
    """Every file of the user's the run imported or tried to, first loaded first."""
    return tuple(_attempted)


def source_of(path: str) -> str | None:
    """The text of a user's file as this run imported it; None when it did not."""
    return _sources.get(os.path.realpath(path))


def loaded(name: str) -> None:
    """A module of the user's this run made itself (the target's): forgotten before the next run."""
    _loaded.add(name)


def remember(path: str, source: str) -> None:
    """`path` ran with `source` (or failed to): tracebacks and stack traces quote it from now on."""
    real = os.path.realpath(path)
    _attempted.setdefault(real, None)
    _sources[real] = source
    linecache.cache[path] = (len(source), None, source.splitlines(keepends=True), path)
    if real != path:
        linecache.cache[real] = linecache.cache[path]


class FreshLoader(importlib.machinery.SourceFileLoader):
    """A user's module compiled from the source on disk now, never from a .pyc."""

    def get_code(self, fullname):
        _loaded.add(fullname)
        raw = self.get_data(self.path)
        source = importlib.util.decode_source(raw)
        remember(self.path, source)
        return compile(raw, self.path, "exec", dont_inherit=True)

    def set_data(self, *args, **kwargs) -> None:
        return None  # writes no .pyc


class FreshFinder:
    """First on sys.meta_path: the spec the other finders give (the path finder, an editable
    install's finder, ...), loaded by FreshLoader when its file is the user's."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        spec = None
        for finder in sys.meta_path:
            if finder is not cls and hasattr(finder, "find_spec"):
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec
        if not is_user_file(spec.origin):
            return spec
        spec.loader = FreshLoader(spec.loader.name, spec.loader.path)
        return spec

    @classmethod
    def invalidate_caches(cls) -> None:
        return None


def install() -> None:
    """Once per process: the user's modules load through FreshFinder."""
    if FreshFinder not in sys.meta_path:
        sys.meta_path.insert(0, FreshFinder)


def package_of(path: str) -> tuple[str, str | None]:
    """(the folder to import from, the file's dotted module name when it is inside a package).

    samples/shop/bench.py beside samples/shop/__init__.py: ("samples", "shop.bench"), so that
    `from .model import block` in it works; a file outside any package: (its folder, None)."""
    folder = os.path.dirname(os.path.abspath(path))
    parts = [os.path.splitext(os.path.basename(path))[0]]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    return folder, (".".join(parts) if len(parts) > 1 else None)


_on_path: list[str] = []
_root = [""]  # this run's project root: the folder put on sys.path


def put_on_path(folder: str) -> None:
    """`folder` first on sys.path, as `python FILE.py` puts the file's folder (the one an earlier
    run put there is taken off). It is the project's root: places name its files relative to it."""
    _root[0] = os.path.realpath(folder)
    while _on_path:
        old = _on_path.pop()
        if old in sys.path:
            sys.path.remove(old)
    if folder not in sys.path:
        sys.path.insert(0, folder)
        _on_path.append(folder)


def root() -> str:
    return _root[0]


@functools.cache
def _torch_dir() -> str:
    import torch

    return os.path.dirname(os.path.realpath(torch.__file__))


@functools.cache
def _site_roots() -> tuple[str, ...]:
    """Where installed libraries live (site-packages), longest first: not the stdlib."""
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("purelib", "platlib") if k in paths}
    roots |= set(site.getsitepackages()) | {site.getusersitepackages()}
    return tuple(sorted({os.path.realpath(r) for r in roots if r}, key=len, reverse=True))


@functools.lru_cache(maxsize=8192)
def frame_kind(path: str) -> str | None:
    """"user" for a file of the user's own, "library" for an installed library's (transformers),
    None for the stdlib, torch itself, kscope and generated code: how an op is issued, not where a
    model is written."""
    if is_user_file(path):
        return "user"
    real = os.path.realpath(path)
    if real.endswith(".py") and any(_inside(real, r) for r in _site_roots()) and not _inside(real, _torch_dir()):
        return "library"
    return None


_shown: dict[str, str] = {}  # a place's file -> its real path


def display(path: str) -> str:
    """A file as places name it: a project file relative to the root (a file of the user's outside
    it, relative to the sys.path entry it is imported from); a library's file inside its library."""
    real = os.path.realpath(path)
    if frame_kind(path) == "library":
        base = next(r for r in _site_roots() if _inside(real, r))
    elif _inside(real, root()):
        base = root()
    else:
        entries = [os.path.realpath(e) for e in sys.path if e and _inside(real, os.path.realpath(e))]
        base = max(entries, key=len, default=os.path.dirname(real))
    shown = os.path.relpath(real, base)
    _shown[shown] = real
    return shown


def frames_from(frame):
    """(file, line) of `frame` and each frame that called it, innermost first: what place_of reads."""
    while frame is not None:
        yield frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back


def place_of(frames) -> Place | None:
    """The place of an op issued with these (file, line) frames, innermost first: the innermost
    frame of the user's, via the innermost library frame inside it; else that library frame. The
    walk ends at kscope's own frame, the one that called the user's code: what called kscope (the
    worker, a test runner) issued nothing."""
    library = None
    for file, line in frames:
        if _inside(os.path.realpath(file), _KSCOPE_DIR):
            break
        kind = frame_kind(file)
        if kind == "user":
            return Place(display(file), line, via=library)
        if kind == "library" and library is None:
            library = Place(display(file), line)
    return None if library is None else Place(library.file, library.line, library=True)


def sources(places) -> dict[str, str]:
    """The text of each file the places name (and their `via`), as it ran."""
    out = {}
    for p in places:
        for q in (p, p.via):
            if q is None or q.file in out or q.file not in _shown:
                continue
            real = _shown[q.file]
            text = source_of(real)
            if text is None:
                text = "".join(linecache.getlines(real))
            out[q.file] = text
    return out
