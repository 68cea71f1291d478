"""Shared by every level of tests (unit/, engine/, app/, process/); their helpers are in support/."""

import os
from pathlib import Path

import pytest
from support import quiet, starts


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """kscope's traffic store in a folder of this test run's: tests never see a user's store.
    pytest-xdist's workers share it (the store's writes are atomic), as they share inductor's cache."""
    if os.environ.get("KSCOPE_TEST_CACHE_DIR"):  # tests/run.py: one for both phases (kscope's inductor cache too)
        folder = Path(os.environ["KSCOPE_TEST_CACHE_DIR"])
    elif os.environ.get("PYTEST_XDIST_WORKER"):  # each worker's base folder is in the run's
        folder = tmp_path_factory.getbasetemp().parent / "kscope-cache"
        folder.mkdir(exist_ok=True)
    else:
        folder = tmp_path_factory.mktemp("kscope-cache")
    os.environ["KSCOPE_CACHE_DIR"] = str(folder)
    yield


LONGEST_FIRST = ("test_kill_safe_cache.py", "test_flags.py", "test_gpu_check.py", "test_long_compiles.py",
                 "test_distributed.py", "test_exports.py", "test_vec_isa.py", "test_library_models.py",
                 "test_training_totals.py")
"""Modules with a test or a shared run of 45 s or more on a clean clone (2026-12-03: 85-115 s for the
first four), run first: pytest-xdist hands out work in the order collected, and one of these
begun last kept one worker busy while the others had nothing left."""


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the marks into the test ids
def pytest_collection_modifyitems(config, items):
    """The tests of a module that share a module-scoped fixture (one real run that several tests
    read) go to one pytest-xdist worker (tests/run.py: --dist loadgroup), so that run happens once:
    spread over two workers, test_distributed's 20 s run happened twice. LONGEST_FIRST's modules
    are put first, the longest first (a stable sort: the same order in every worker, as xdist requires)."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
    for item in items:
        defs = getattr(item, "_fixtureinfo", None)
        # (this file's own module-scoped fixture, _brief_timing, is every engine test's: not a run)
        if defs and any(d[-1].scope == "module" and d[-1].func.__module__ != __name__
                        for d in defs.name2fixturedefs.values()):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))


BRIEF_TIMING = (0.1, 0.03)
"""The engine tests' timing budgets (kernel rounds, calls; kscope's are 1.0 and 0.3 s): they check
bytes, lines and kernels, which no timing round changes; the tests of the timing itself
(KSCOPES_OWN, and every quiet test) keep kscope's. Measured: tests/engine 141 s -> 105 s, every
test passing either way."""


KSCOPES_OWN = {"test_timing.py", "test_sweep.py"}
"""Engine modules timed as kscope times: the timing's own tests, and the sweep's (its verdicts and
its budget stop)."""
_KSCOPE_TIMING: tuple[float, float] | None = None
"""kscope's own budgets, kept while an engine module runs with BRIEF_TIMING."""


@pytest.fixture(autouse=True, scope="module")
def _brief_timing(request):
    """Module-scoped and autouse, so it is in place before the module's own module-scoped runs."""
    global _KSCOPE_TIMING
    if request.path.parent.name != "engine" or request.path.name in KSCOPES_OWN:
        yield
        return
    import kscope.engine.measure.timing as timing

    _KSCOPE_TIMING = (timing.BUDGET_S, timing.CALL_BUDGET_S)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(timing, "BUDGET_S", BRIEF_TIMING[0])
        patch.setattr(timing, "CALL_BUDGET_S", BRIEF_TIMING[1])
        yield
    _KSCOPE_TIMING = None


@pytest.fixture(autouse=True)
def _quiet_tests_time_as_kscope_does(request, monkeypatch):
    """A quiet test (a verdict, a rate) in an engine module times with kscope's own budgets."""
    if _KSCOPE_TIMING is not None and request.node.get_closest_marker(quiet.MARK) is not None:
        import kscope.engine.measure.timing as timing

        monkeypatch.setattr(timing, "BUDGET_S", _KSCOPE_TIMING[0])
        monkeypatch.setattr(timing, "CALL_BUDGET_S", _KSCOPE_TIMING[1])
    yield


def pytest_configure(config):
    config.addinivalue_line("markers", f"{quiet.MARK}: times something against the clock: runs while no other test runs (support/quiet.py)")
    starts.install()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    starts.running(item)
    with quiet.held(item.get_closest_marker(quiet.MARK) is not None):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A test that started a kscope process, a browser or a terminal unmarked fails at its teardown
    (support/starts.py: the quick tier leaves out the `slow` tests, and only them)."""
    report = yield
    if call.when == "teardown":
        started = starts.unmarked_starts(item)
        if started and report.passed:
            report.outcome = "failed"
            report.longrepr = starts.message(item, started)
    return report
