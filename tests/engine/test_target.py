"""Finding the target and its inputs, and errors that name the user's file and line."""

import pytest
import torch
from support.paths import line_of, write_target

from kscope.engine.run import run
from kscope.engine.target.loading import TargetError, load_module, make_inputs, resolve
from kscope.report.request import RunRequest


def _resolve(tmp_path, source, name=None):
    module = load_module(str(write_target(tmp_path, source)))
    return resolve(module, name)


def test_only_candidate_is_picked_imported_private_and_inputs_are_not_candidates(tmp_path):
    name, _ = _resolve(
        tmp_path,
        """
        import torch
        from torch.nn.functional import relu
        from math import sqrt

        def _helper(x):
            return x

        def target(x):
            return relu(_helper(x))

        def inputs():
            return torch.ones(3)
        """,
    )
    assert name == "target"


def test_several_candidates_lists_them(tmp_path):
    with pytest.raises(TargetError) as e:
        _resolve(tmp_path, "def f(x):\n    return x\n\ndef g(x):\n    return x\n")
    assert "several candidates" in e.value.message and "f, g" in e.value.message


def test_no_candidate_and_unknown_name(tmp_path):
    with pytest.raises(TargetError) as e:
        _resolve(tmp_path, "import torch\nx = 1\n")
    assert "no candidate" in e.value.message
    with pytest.raises(TargetError) as e:
        _resolve(tmp_path, "def f(x):\n    return x\n", name="nope")
    assert "no target named 'nope'" in e.value.message and "candidates: f" in e.value.message


def test_each_load_is_a_fresh_namespace(tmp_path):
    path = write_target(tmp_path, "import torch\nCOUNT = []\ndef f(x):\n    COUNT.append(1)\n    return x\n")
    first, second = load_module(str(path)), load_module(str(path))
    first.COUNT.append("leak")
    assert second.COUNT == [] and first is not second


def test_inputs_gets_device_and_n(tmp_path):
    module = load_module(
        str(write_target(tmp_path, "import torch\ndef f(x):\n    return x\ndef inputs(device, n=5):\n    return torch.ones(n, device=device)\n"))
    )
    (x,), _ = make_inputs(module, module.f, torch.device("cpu"), n=7)
    assert x.shape == (7,) and x.device.type == "cpu"


def test_inputs_returning_no_tensor_is_an_error(tmp_path):
    report = run(RunRequest(str(write_target(tmp_path, "def f(x):\n    return x\ndef inputs():\n    return (1, 'a')\n")), device="cpu"))
    (err,) = report.errors
    assert err.stage == "inputs" and "no tensor" in err.message and report.eager is None


def test_missing_module_level_tensor_suggests_inputs(tmp_path):
    report = run(RunRequest(str(write_target(tmp_path, "def f(a, b):\n    return a + b\n")), device="cpu"))
    (err,) = report.errors
    assert "def inputs(device)" in err.message and "a, b" in err.message


def test_syntax_error_names_file_and_line(tmp_path):
    path = write_target(tmp_path, "import torch\n\ndef f(x):\n    return x +\n")
    (err,) = run(RunRequest(str(path), device="cpu")).errors
    assert (err.stage, err.type, err.line) == ("load", "SyntaxError", 4)
    assert err.file == str(path)


def test_target_raising_shows_the_users_frame(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch

        def f(x):
            y = x * 2
            raise ValueError("bad shape")

        def inputs(device):
            return (torch.ones(4, device=device),)
        """,
    )
    report = run(RunRequest(str(path), device="cpu"))
    (err,) = report.errors
    assert (err.stage, err.type, err.message) == ("eager", "ValueError", "bad shape")
    assert err.line == line_of(path, "raise ValueError")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without a GPU")
def test_cuda_tensors_without_a_gpu_suggest_inputs_device(tmp_path):
    path = write_target(tmp_path, "import torch\ndef f(a):\n    return a + 1\na = torch.randn(10, device='cuda')\n")
    (err,) = run(RunRequest(str(path), device="cpu")).errors
    assert err.stage == "load" and "inputs(device)" in err.message and err.line == 4


def test_compile_error_keeps_eager_results(tmp_path):
    # A custom op whose fake (meta) implementation lies about its shape: eager is fine, but the
    # compiled code checks the shape it was promised and fails.
    path = write_target(
        tmp_path,
        """
        import torch

        @torch.library.custom_op("kscope_test::grow", mutates_args=())
        def grow(x: torch.Tensor) -> torch.Tensor:
            return x * 2

        @grow.register_fake
        def _(x):
            return x.new_empty(x.shape[0] + 1)

        def f(x):
            return grow(x) + 1

        def inputs(device):
            return (torch.ones(8, device=device),)
        """,
    )
    report = run(RunRequest(str(path), device="cpu"))
    assert report.eager is not None and report.eager.launches == 2
    assert report.compiled is None
    (err,) = report.errors
    assert err.stage == "compile" and err.message


def test_code_that_only_runs_eagerly_under_compile_keeps_its_bytes(tmp_path):
    # dynamo cannot trace the raise, so the frame runs eagerly even when compiled: no graph, but
    # the launches still move memory and must not read as 0 bytes.
    path = write_target(
        tmp_path,
        """
        import torch

        def f(x):
            return _double_unless_compiling(x)

        def _double_unless_compiling(x):
            if torch.compiler.is_compiling():
                raise RuntimeError("only under compile")
            return x * 2

        def inputs(device):
            return (torch.ones(8, device=device),)
        """,
    )
    report = run(RunRequest(str(path), device="cpu"))
    assert not report.errors
    assert report.compiled.graphs == 0 and report.compiled.launches == 1
    assert (report.compiled.bytes_read, report.compiled.bytes_written) == (8 * 4, 8 * 4)
