"""Round trips: buffers one kernel writes and another reads back, on real torch (CPU), against
sizes derived by hand from the shapes (fp32: 4 bytes an element)."""

from __future__ import annotations

import json

from support.paths import SAMPLES, at, write_target
from support.runs import run_ok

from kscope.report.codec import report_from_dict, report_to_dict

F32 = 4




def test_the_seed_has_one_eager_round_trip_and_none_compiled():
    path = SAMPLES / "add_relu.py"
    r = run_ok(path)
    (trip,) = r.eager.round_trips
    # a + b is written by add and read back by relu: 1,000,000 fp32 elements
    assert (trip.buffer, trip.bytes, trip.producer, trip.consumers) == ("tmp0", 1_000_000 * F32, "aten::add",
                                                                          ("aten::relu",))
    assert trip.lines == (at(path, "return (a + b).relu()"),)
    assert "one op at a time" in trip.reason
    assert r.compiled.round_trips == ()


def test_a_library_matmul_leaves_a_round_trip_into_its_epilogue():
    path = SAMPLES / "matmul_gelu.py"  # gelu(x @ w + b), x 256x512, w 512x1024
    r = run_ok(path)
    out = 256 * 1024 * F32
    assert [(t.producer, t.consumers, t.bytes) for t in r.eager.round_trips] == [
        ("aten::matmul › mm", ("aten::add",), out),
        ("aten::add", ("aten::gelu",), out),
    ]
    (trip,) = r.compiled.round_trips  # addmm (bias inside) writes x @ w + b; the GELU kernel reads it back
    assert (trip.producer, trip.consumers, trip.bytes) == ("aten::addmm", ("cpp_fused_gelu_0",), out)
    assert "library call" in trip.reason and "max-autotune" in trip.hint
    assert trip.lines == (at(path, "return F.gelu(x @ w + b)"),)


def test_a_reduction_before_a_consumer_of_another_shape(tmp_path):
    path = write_target(tmp_path, """
        import torch

        def norm_cols(x):
            return x / x.sum(dim=0)

        def inputs(device):
            return (torch.randn(512, 256, device=device),)
        """)
    r = run_ok(path)
    (eager,) = r.eager.round_trips
    assert (eager.producer, eager.consumers, eager.bytes) == ("aten::sum", ("aten::div",), 256 * F32)
    # on the CPU inductor puts both loops in one C++ kernel: the column sums still go through memory
    (trip,) = r.compiled.round_trips
    assert trip.bytes == 256 * F32 and trip.producer == trip.consumers[0] == r.compiled.kernels[0].name
    assert "inside one C++ kernel" in trip.reason and "reduction must finish" in trip.reason
    assert trip.detail.startswith("cannot fuse ")  # inductor's own words, kept


def test_what_the_call_returns_is_an_output_not_a_round_trip(tmp_path):
    path = write_target(tmp_path, """
        import torch

        def both(a, b):
            s = a + b
            return s, s.relu()

        def inputs(device):
            return torch.randn(1000, device=device), torch.randn(1000, device=device)
        """)
    r = run_ok(path)
    assert r.eager.round_trips == () and r.compiled.round_trips == ()


def test_round_trips_survive_the_json_round_trip():
    r = run_ok(SAMPLES / "matmul_gelu.py")
    again = report_from_dict(json.loads(json.dumps(report_to_dict(r))))
    assert again.eager.round_trips == r.eager.round_trips
    assert again.compiled.round_trips == r.compiled.round_trips
    assert report_to_dict(r)["compiled"]["round_trips"][0]["buffer"] == "buf0"


def test_choosing_a_round_trip_lights_its_rows_and_lines():
    import asyncio

    from support.fixed_session import article_report
    from support.pilot import fixed_app, wait_for

    from kscope.app.widgets.kernels import KernelTable
    from kscope.app.widgets.round_trips import RoundTripsPane
    from kscope.app.widgets.source import SourcePane

    app = fixed_app(article_report())

    async def scenario():
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.good is not None, timeout=10)
            await pilot.press("t")
            pane = app.query_one(RoundTripsPane)
            pane.focus()
            await pilot.pause()
            # compiled: none; eager: the seed's tmp0, add -> relu
            assert "compiled: no round trip" in str(pane.get_option_at_index(0).prompt)
            pane.highlighted = 2  # the eager heading is 1, its round trip 2
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.query_one("#eager-kernels", KernelTable).lit == {"aten::add", "aten::relu"},
                            timeout=5)
            assert app.query_one("#compiled-kernels", KernelTable).lit == set()
            assert app.query_one(SourcePane).lit == (7,)

    asyncio.run(scenario())


def test_alike_round_trips_are_one_entry_with_a_count(tmp_path):
    path = write_target(tmp_path, """
        import torch

        def chain(a):
            for _ in range(100):
                a = a + 1
            return a

        def inputs(device):
            return (torch.randn(1000, device=device),)
        """)
    r = run_ok(path)
    (trip,) = r.eager.round_trips  # 99 intermediates, each written by one add and read by the next
    assert (trip.count, trip.bytes, trip.buffer) == (99, 99 * 1000 * F32, "tmp0")
    assert r.compiled.round_trips == ()
