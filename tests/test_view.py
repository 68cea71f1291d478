"""What the panes say, from Reports: pure functions, no app needed."""

from kscope.render import short_name
from kscope.report import Kernel, ModeResult
from kscope.view import kernel_rows, launch_change, vanished


def _mode(*kernels):
    return ModeResult(sum(k.launches for k in kernels), 0, 0, 0.0, tuple(kernels))


def test_change_since_previous_save():
    before = _mode(Kernel("aten::add", 1, 1.0, 8, 4), Kernel("aten::relu", 1, 1.0, 4, 4))
    after = _mode(Kernel("aten::add", 2, 1.0, 8, 4), Kernel("aten::mul", 1, 1.0, 4, 4))
    rows = {r.name: r.change for r in kernel_rows(after, before)}
    assert rows == {"aten::add": "1→2", "aten::mul": "new"}
    assert vanished(after, before) == ["aten::relu"]
    assert launch_change(3, 5) == "5 → 3, −2"
    assert launch_change(2, 2) == "2 → 2, ±0"
    assert launch_change(3, None) == ""


def test_long_cuda_template_names_are_shortened_readably():
    name = (
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
        "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"
    )
    assert short_name(name, 48) == "at::native::vectorized_elementwise_kernel<…>"
    assert short_name(name, 32) == "vectorized_elementwise_kernel<…>"
    assert len(short_name(name, 20)) == 20
    assert short_name("triton_poi_fused_add_relu_0") == "triton_poi_fused_add_relu_0"
