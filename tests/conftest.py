"""Shared by every level of tests (unit/, engine/, app/, process/); their helpers are in support/."""

import os

import pytest
from support import quiet


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """kscope's traffic store in a folder of this test run's: tests never see a user's store.
    pytest-xdist's workers share it (the store's writes are atomic), as they share inductor's cache."""
    if os.environ.get("PYTEST_XDIST_WORKER"):  # each worker's base folder is in the run's
        folder = tmp_path_factory.getbasetemp().parent / "kscope-cache"
        folder.mkdir(exist_ok=True)
    else:
        folder = tmp_path_factory.mktemp("kscope-cache")
    os.environ["KSCOPE_CACHE_DIR"] = str(folder)
    yield


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the marks into the test ids
def pytest_collection_modifyitems(config, items):
    """The tests of a module that share a module-scoped fixture (one real run that several tests
    read) go to one pytest-xdist worker (tests/run.py: --dist loadgroup), so that run happens once:
    spread over two workers, test_distributed's 20 s run happened twice."""
    for item in items:
        defs = getattr(item, "_fixtureinfo", None)
        if defs and any(d[-1].scope == "module" for d in defs.name2fixturedefs.values()):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))


BRIEF_TIMING = (0.1, 0.03)
"""The engine tests' timing budgets (kernel rounds, calls; kscope's are 1.0 and 0.3 s): they check
bytes, lines and kernels, which no timing round changes; the tests of the timing itself
(test_timing.py, and every quiet test) keep kscope's. Measured: tests/engine 141 s -> 105 s, every
test passing either way."""


@pytest.fixture(autouse=True)
def _brief_timing(request, monkeypatch):
    item = request.node
    if (item.path.parent.name == "engine" and item.path.name != "test_timing.py"
            and item.get_closest_marker(quiet.MARK) is None):
        import kscope.engine.timing as timing

        monkeypatch.setattr(timing, "BUDGET_S", BRIEF_TIMING[0])
        monkeypatch.setattr(timing, "CALL_BUDGET_S", BRIEF_TIMING[1])
    yield


def pytest_configure(config):
    config.addinivalue_line("markers", f"{quiet.MARK}: times something against the clock: runs while no other test runs (support/quiet.py)")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    with quiet.held(item.get_closest_marker(quiet.MARK) is not None):
        return (yield)
