"""Save an SVG screenshot of kscope on a sample, with a real worker: docs/kscope-SIZE.svg.

    python scripts/screenshot.py [samples/add_relu.py] [--size 120x40]
"""

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

from kscope.app.app import KscopeApp
from kscope.report.request import RunRequest

REPO = Path(__file__).resolve().parent.parent


async def shoot(sample: Path, size: tuple[int, int], out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / sample.name
        shutil.copy(sample, target)
        app = KscopeApp(RunRequest(str(target), None, "cpu", timeout=60.0, calls=5))
        async with app.run_test(size=size) as pilot:
            deadline = time.monotonic() + 120
            while app.good is None and time.monotonic() < deadline:
                await pilot.pause(0.1)
            # Save once with a change, so the screen shows what changed since the last save.
            first = app.good
            target.write_text(target.read_text().replace("(a + b).relu()", "(a + b).relu() * 2"))
            while app.good is first and time.monotonic() < deadline:
                await pilot.pause(0.1)
            await pilot.pause(0.3)
            app.save_screenshot(str(out))
        app.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sample", nargs="?", default=str(REPO / "samples" / "add_relu.py"))
    parser.add_argument("--size", default="120x40")
    args = parser.parse_args()
    w, h = map(int, args.size.split("x"))
    out = REPO / "docs" / f"kscope-{w}x{h}.svg"
    asyncio.run(shoot(Path(args.sample), (w, h), out))
    print(out)


if __name__ == "__main__":
    main()
