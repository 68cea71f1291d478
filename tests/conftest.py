"""Shared by every level of tests (unit/, engine/, app/, process/); their helpers are in support/."""

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """kscope's traffic store in a per-session folder: tests never see a user's store."""
    os.environ["KSCOPE_CACHE_DIR"] = str(tmp_path_factory.mktemp("kscope-cache"))
    yield
