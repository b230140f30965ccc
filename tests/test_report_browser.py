"""The HTML report in a real browser: headless Chromium loads the page, every
embedded figure decodes (img.complete and naturalWidth > 0), and a
screenshot of it is not blank and shows the figures' colours.

Chromium is Debian's `chromium` package (.ci/run installs it when absent).
Without it this test fails where the CI variable is set, and elsewhere skips
with a message naming the package.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
from PIL import Image
from repo_files import unavailable
from report_run import MemoryReferences, make_run

from routesim_evolve.report.html import render_run_report
from routesim_evolve.report.plots import FIXED_COLOURS

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
#: Appended to a copy of the page: once it has loaded, count the images
#: that decoded into a marker element --dump-dom prints.
IMAGE_CHECK = """<script>
window.addEventListener("load", () => {
  const images = [...document.images];
  const marker = document.createElement("div");
  marker.id = "image-check";
  marker.dataset.total = images.length;
  marker.dataset.loaded = images.filter(i => i.complete && i.naturalWidth > 0).length;
  document.body.appendChild(marker);
});
</script>"""
WIDTH, HEIGHT = 1280, 6000


def _chromium() -> str:
    found = next((path for b in BROWSERS if (path := shutil.which(b))), None)
    if found is None:
        unavailable("headless Chromium not found (install Debian's package: "
                    "apt-get install -y chromium)")
    return found


def _run(browser: str, profile: Path, *args: str) -> str:
    out = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--no-first-run", f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=180, check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_report_renders_in_chromium_with_every_image(tiny_corpus: Path, tmp_path: Path):
    browser = _chromium()
    run_dir = make_run(tmp_path / "run", tiny_corpus)
    html = render_run_report(run_dir, references=MemoryReferences())
    page = tmp_path / "report.html"
    page.write_text(html.replace("</body>", IMAGE_CHECK + "\n</body>"))
    url = page.as_uri()

    dom = _run(browser, tmp_path / "profile-dom", "--virtual-time-budget=10000", "--dump-dom", url)
    marker = re.search(r'id="image-check" data-total="(\d+)" data-loaded="(\d+)"', dom)
    assert marker, "the page's load handler never ran:\n" + dom[-1000:]
    total, loaded = int(marker[1]), int(marker[2])
    assert total == html.count("<img") == 6
    assert loaded == total, f"only {loaded} of {total} images loaded"

    shot = tmp_path / "report.png"
    _run(browser, tmp_path / "profile-shot", f"--window-size={WIDTH},{HEIGHT}",
         f"--screenshot={shot}", url)
    pixels = np.asarray(Image.open(shot).convert("RGB"), dtype=int)
    assert pixels.shape == (HEIGHT, WIDTH, 3)
    ink = int((pixels.min(axis=2) < 200).sum())
    assert ink > 0.02 * WIDTH * HEIGHT, f"the page looks blank: {ink} dark pixels"
    # Orange and green are drawn only inside the figures (the seed's and
    # lnd-apriori's colour): seeing them means the figures were painted.
    for colour in (FIXED_COLOURS["seed"], FIXED_COLOURS["lnd-apriori"]):
        rgb = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])
        near = int((np.abs(pixels - rgb).max(axis=2) < 12).sum())
        assert near > 500, f"{colour} appears on {near} pixels only: figures not painted?"
