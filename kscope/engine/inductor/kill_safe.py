"""Compiles that no kill can break: kscope's workers are killed by design (a save during a run,
--timeout, q or Ctrl-C mid-run, a closed terminal), often while inductor's C++ compiler writes a
kernel library.

Inductor builds a library in place (`g++ ... -o <cache>/xx/<key>.so`) and builds it only when that
path is missing (torch/_inductor/codecache.py, `_worker_compile_cpp`): a build killed half-way
leaves a file that is not a library, and every later compile of that graph, in any process sharing
the cache, fails to load it ("invalid ELF header"). So, in kscope's processes (docs/reliability.md):

1. **kscope compiles into a cache of its own** (`<kscope cache>/inductor`, see engine.machine.cache_dir):
   the user's inductor cache is never written by a process kscope may kill.
2. **Every C++ build is atomic**: the compiler writes a temporary name beside the library, which is
   renamed to the library's name once the compiler succeeded. A library at its name is whole.
3. **Leftovers are removed when a process starts using the cache**: temporary files of processes
   that are gone, build folders (`*_CxxBuild`) abandoned for STALE_BUILD_S, and any library or
   object whose ELF structure is cut short (an older kscope's, or a build that was not atomic).
   Inductor's precompiled headers, which it keeps in the default cache whatever the cache folder
   is set to, go to kscope's cache too.
4. **A library that fails to load is built again, once**, with a note in the Report, and where it
   still fails the error names its path.

Everything here reaches into torch's private C++ build code; tests/engine/test_torch_internals.py pins
what it relies on (the builder's `_target_file` and `_output`, `_worker_compile_cpp`'s arguments,
`CppCodeCache._load_library`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import struct
import threading
import time
from pathlib import Path

from kscope.engine.machine.cache_dir import cache_dir

STALE_BUILD_S = 600.0
"""A build folder untouched this long belongs to a build that will never finish (one C++ file
compiles in seconds); a younger one may be another kscope process's build in progress."""

_TMP = re.compile(r"\.kscope-(\d+)-\d+\.tmp$")
"""kscope's atomic builds' temporary outputs: `<library>.kscope-<pid>-<thread>.tmp`."""
_INDUCTOR_TMP = re.compile(r"^\.(\d+)\.\d+\.tmp$")
"""inductor's own atomic writes' temporary files (codecache.write_atomic): `.<pid>.<thread>.tmp`."""

_PCH = re.compile(r"-include (\S+\.h)\b")
"""A precompiled header in a build's command line: gcc reads `<header>.gch` in its place."""

_state = threading.Lock()
_installed: list[bool] = []
_notes: list[str] = []
_recipes: dict[str, tuple] = {}
"""A library's path -> the (lock path, builders) that build it, to build it again if it fails to load."""


def own_cache() -> Path:
    return cache_dir() / "inductor"


def point_at_own_cache() -> Path:
    """Point this process's inductor, and the processes it starts, at kscope's own cache. Before
    torch is imported: some of torch's modules create the cache folder as they load."""
    root = own_cache()
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(root)
    return root


def use_own_cache() -> None:
    """Point this process's inductor (and the compile processes it starts) at kscope's own cache,
    clear it of leftovers once per process, and make every C++ build in this process atomic. Call
    before the first compile."""
    root = point_at_own_cache()
    with _state:
        if _installed:
            return
        _installed.append(True)
    root.mkdir(parents=True, exist_ok=True)
    _notes.extend(sweep(root))
    _install()


def take_notes() -> tuple[str, ...]:
    """What was removed or built again since the last call (for the Report's notes)."""
    with _state:
        notes, _notes[:] = tuple(_notes), []
    return notes


def elf_complete(path: str | os.PathLike) -> bool:
    """Whether the file is an ELF object whose program and section header tables fit inside it:
    a build killed before the linker finished leaves no header or a file cut short."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            size = os.fstat(f.fileno()).st_size
    except OSError:
        return False
    if len(head) < 52 or head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
        return False
    order = "<" if head[5] == 1 else ">"
    if head[4] == 2:  # 64-bit
        if len(head) < 64:
            return False
        phoff, shoff = struct.unpack_from(order + "QQ", head, 0x20)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(order + "HHHH", head, 0x36)
    else:
        phoff, shoff = struct.unpack_from(order + "II", head, 0x1C)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(order + "HHHH", head, 0x2A)
    ends = [phoff + phentsize * phnum if phnum else 0, shoff + shentsize * shnum if shoff else 0]
    return max(ends) <= size and size > 0


def whole(path: str) -> bool:
    """False for a library, object or precompiled header that a build left unfinished; True for
    any other file (kscope judges only what the C++ compiler writes)."""
    if path.endswith((".so", ".o")):
        return elf_complete(path)
    if path.endswith(".gch"):  # gcc's precompiled header: "gpch" then its version
        try:
            with open(path, "rb") as f:
                return f.read(4) == b"gpch"
        except OSError:
            return False
    return True


def sweep(root: Path) -> list[str]:
    """Remove what interrupted builds left under root; one note per broken library removed."""
    notes, now = [], time.time()
    for folder, dirs, files in os.walk(root):
        for name in [d for d in dirs if d.endswith("_CxxBuild")]:
            dirs.remove(name)
            path = os.path.join(folder, name)
            with contextlib.suppress(OSError):
                if now - os.stat(path).st_mtime > STALE_BUILD_S:
                    shutil.rmtree(path, ignore_errors=True)
        for name in files:
            path = os.path.join(folder, name)
            leftover = _TMP.search(name) or _INDUCTOR_TMP.match(name)
            if leftover:
                if not _alive(int(leftover.group(1))):
                    _remove(path)
            elif not whole(path):
                _remove(path)
                notes.append(f"compiled: removed {path} from kscope's inductor cache: a build that did not "
                             "finish left it, and it is not a whole library (it is built again when needed)")
    return notes


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _install() -> None:
    """Wrap torch's C++ build, its compile worker and its library loader (the module docstring's
    2. and 4.), and have precompiled headers go to kscope's own cache."""
    from torch._inductor import codecache
    from torch._inductor.cpp_builder import CppBuilder

    checked_compile_cpp = _checked(codecache._worker_compile_cpp)
    load_or_rebuild = _rebuilding(codecache.CppCodeCache._load_library.__func__, checked_compile_cpp)
    # Precompiled headers go to the default cache whatever TORCHINDUCTOR_CACHE_DIR says (set at
    # import, "global, rather than ignored by fresh_cache"): kscope's go to its own.
    codecache._HEADER_DIR = str(own_cache() / "precompiled_headers")
    codecache._HEADER_LOCK_DIR = os.path.join(codecache._HEADER_DIR, "locks")
    CppBuilder.build = _atomic(CppBuilder.build)
    codecache._worker_compile_cpp = checked_compile_cpp
    codecache.CppCodeCache._load_library = classmethod(load_or_rebuild)


def _atomic(build):
    """CppBuilder.build, the compiler writing a temporary name beside the library, renamed to the
    library's name once the compiler succeeded: a library at its name is whole."""

    def atomic_build(self) -> None:
        final = self._target_file
        if getattr(self, "_use_relative_path", False) or not final or not self._output.endswith(final):
            return build(self)  # a layout kscope does not know: torch's own build
        tmp = f"{final}.kscope-{os.getpid()}-{threading.get_ident()}.tmp"
        output = self._output
        self._target_file, self._output = tmp, output[: -len(final)] + tmp
        try:
            build(self)
            os.replace(tmp, final)
        finally:
            self._target_file, self._output = final, output
            _remove(tmp)

    return atomic_build


def _checked(compile_cpp):
    """_worker_compile_cpp that first removes a library a build left unfinished, remembers how each
    library is built (to build it again if it fails to load), and compiles again without a
    precompiled header gcc could not read."""

    def checked_compile_cpp(lock_path, cpp_builders) -> None:
        for builder in cpp_builders:
            path = builder.get_target_file_path()
            if os.path.exists(path) and not whole(path):
                _remove(path)
                _note(f"compiled: removed {path} from kscope's inductor cache: it was not a whole library "
                      "(a build that did not finish); built it again")
        if cpp_builders:
            _recipes[cpp_builders[-1].get_target_file_path()] = (lock_path, cpp_builders)
        try:
            return compile_cpp(lock_path, cpp_builders)
        except Exception as e:
            # A precompiled header cut short stops every compile that includes it ("cannot read
            # PCH file"); without it gcc reads the header itself, and the next process builds it anew.
            headers = [h + ".gch" for b in cpp_builders for h in _PCH.findall(b.get_command_line())]
            broken = [h for h in headers if os.path.exists(h)] if "PCH file" in str(e) else []
            if not broken:
                raise
            for header in broken:
                _remove(header)
                _note(f"compiled: removed {header}, a precompiled header gcc could not read (a build that did "
                      "not finish); compiled without it")
            return compile_cpp(lock_path, cpp_builders)

    return checked_compile_cpp


def _rebuilding(load, checked_compile_cpp):
    """CppCodeCache._load_library that builds a library that fails to load again, once (with
    checked_compile_cpp, as _recipes says), and names its path where it still fails."""

    def load_or_rebuild(cls, path, key):
        try:
            return load(cls, path, key)
        except (ImportError, OSError) as e:
            recipe = _recipes.get(path)
            if recipe is None or not os.path.exists(path):
                raise
            why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            _remove(path)
            _note(f"compiled: {path} failed to load ({why}); kscope removed it and built it again")
            checked_compile_cpp(*recipe)
            try:
                return load(cls, path, key)
            except (ImportError, OSError) as again:
                raise ImportError(f"{path}, a kernel library in kscope's inductor cache, failed to load twice, "
                                  f"built again in between: {again}") from again

    return load_or_rebuild


def _note(text: str) -> None:
    with _state:
        _notes.append(text)
