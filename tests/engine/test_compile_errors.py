"""A failure inside torch.compile said in one line (engine.compiled.errors): the cause that dynamo's
BackendCompilerFailed and inductor's InductorError carry, and its last frames in torch, never
"backend='...' raised:" alone. Real torch: inductor told to compile with a C++ compiler that does
not work."""

from __future__ import annotations

import torch
import torch._inductor.config as ic

from kscope.engine.compiled.backend import RecordingBackend
from kscope.engine.inductor.capture import configure_inductor
from kscope.engine.run import user_error


def test_a_compiler_inductor_cannot_use_is_named_with_inductors_words_and_frames(tmp_path, monkeypatch):
    configure_inductor()
    broken = tmp_path / "cxx"
    broken.write_text("#!/bin/sh\necho 'cc1plus: error: this compiler is broken' >&2\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setattr(ic.cpp, "cxx", (None, str(broken)))
    torch._dynamo.reset()
    fn = torch.compile(lambda a: (a * 3).cos(), backend=RecordingBackend(__file__))
    try:
        fn(torch.randn(64))
    except Exception as e:
        raised, error = e, user_error("compile", e, __file__)
    else:
        raise AssertionError("inductor compiled with a compiler that exits 1")
    finally:
        torch._dynamo.reset()
    # what torch raises: a wrapper (inductor's InductorError is a BackendCompilerFailed) around the cause
    assert isinstance(raised, torch._dynamo.exc.BackendCompilerFailed) and raised.inner_exception is not None
    assert error.type == "InvalidCxxCompiler"
    assert error.message.startswith("inductor raised InvalidCxxCompiler: No working C++ compiler found")
    assert str(broken) in error.message and "(in torch: cpp_builder.py:" in error.message
    assert "RecordingBackend object" not in error.message
