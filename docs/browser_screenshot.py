"""The README's browser screenshots: `kscope serve` in Debian's chromium (Playwright), a save that
adds `* 2`, then a screenshot, with nothing else competing for the CPU (the browser test reads the
page with OCR while kscope times its calls, which its figures would show).

    python docs/browser_screenshot.py          # docs/kscope-browser.png, docs/kscope-serve-present.png
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

DOCS = Path(__file__).resolve().parent
SAMPLE = DOCS.parent / "samples" / "add_relu.py"
SETTLE_S = 30.0
"""Long enough for a run on 2 cores: the first (after the worker starts) and the save's."""


def shoot(out: str, flags: list[str], fontsize: int, viewport: tuple[int, int]) -> None:
    folder = Path(tempfile.mkdtemp(prefix="kscope-browser-"))
    path = folder / "add_relu.py"
    shutil.copy(SAMPLE, path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "kscope", "serve", str(path), "--port", str(port),
                               "--device", "cpu", *flags], cwd=folder, stdout=subprocess.DEVNULL)
    try:
        time.sleep(3)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
            page.goto(f"http://127.0.0.1:{port}/?fontsize={fontsize}")
            time.sleep(SETTLE_S)
            saved = folder / "add_relu.tmp"
            saved.write_text(path.read_text().replace("(a + b).relu()", "(a + b).relu() * 2"))
            os.replace(saved, path)
            time.sleep(SETTLE_S)
            page.screenshot(path=str(DOCS / out))
            browser.close()
    finally:
        server.terminate()
        server.wait(10)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    shoot("kscope-browser.png", [], 16, (1280, 800))
    shoot("kscope-serve-present.png", ["--present"], 20, (1280, 720))
