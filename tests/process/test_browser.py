"""`kscope serve` in a real browser (issue 13): Debian's chromium, driven by Playwright, loads the
page, the app runs the file, the file is saved with a change, and the new fused kernel's name is
on the page. textual-serve draws the terminal on a canvas (the page has no text layer), so the
page is read as a person reads it: a screenshot, read by tesseract."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from test_serve import Served

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium here (CI installs Debian's)"),
    pytest.mark.skipif(shutil.which("tesseract") is None, reason="no tesseract here (CI installs tesseract-ocr)"),
]
sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright

SHOT = os.environ.get("KSCOPE_BROWSER_SHOT")
"""Where to keep the last screenshot (docs/kscope-browser.png is made this way)."""


def squeezed(text: str) -> str:
    """What OCR makes of a name, made comparable: no case, no spaces or underscores, O as 0."""
    return re.sub(r"[\s_]", "", text.lower()).replace("o", "0")


def read_page(page, path: Path) -> str:
    page.screenshot(path=str(path))
    # One thread: tesseract's OpenMP threads spin on a core the other tests need (one read of the
    # page measured 5.4 s of CPU in 3.6 s with them, 1.8 s in 1.9 s without).
    return subprocess.run(["tesseract", str(path), "-"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "OMP_THREAD_LIMIT": "1"}).stdout


def wait_for_text(page, path: Path, name: str, timeout: float = 180.0) -> str:
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = read_page(page, path)
        if squeezed(name) in squeezed(text):
            return text
        time.sleep(1)
    raise AssertionError(f"{name} never appeared on the page; last read:\n{text}")


def test_the_page_shows_the_new_fused_kernel_after_a_save(tmp_path):
    s = Served(tmp_path)
    shot = tmp_path / "page.png"
    try:
        s.wait_serving()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(f"http://127.0.0.1:{s.port}/?fontsize=16")
                text = wait_for_text(page, shot, "cpp_fused_add_relu_0")
                assert "launches 2" in text, text
                # an editor's atomic save: write a new file, rename it over the old one
                source = s.path.read_text().replace("return (a + b).relu()", "return (a + b).relu() * 2")
                assert "* 2" in source
                saved = s.path.with_suffix(".tmp")
                saved.write_text(source)
                os.replace(saved, s.path)
                wait_for_text(page, shot, "cpp_fused_add_mul_relu_0")
                if SHOT:
                    shutil.copy(shot, SHOT)
            finally:
                browser.close()
        # the tab's kscope ended with the browser
        s.wait(lambda: not s.apps(), "the closed page's kscope to stop", 10)
    finally:
        s.cleanup()
