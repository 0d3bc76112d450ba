"""The model card as a reader sees it: rendered by headless Chromium, every image loaded, no horizontal scroll at
1200 px, every section present. Skipped where Chromium is absent (.ci/run installs it when it can).

``python tests/test_card_browser.py`` writes README's screenshot, docs/img/model_card.png, with the same code.
"""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpsparse.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
WIDTH = 1200
SECTIONS = ["Model details", "Intended use", "Training data", "Evaluation", "Quantitative analyses", "Privacy",
            "Caveats and recommendations"]
AUDIT = """<script>
window.addEventListener('load', () => {
  const images = [...document.images];
  const result = {images: images.length, loaded: images.filter(i => i.complete && i.naturalWidth > 0).length,
                  scroll: document.documentElement.scrollWidth, width: window.innerWidth,
                  sections: [...document.querySelectorAll('h2')].map(h => h.textContent)};
  const pre = document.createElement('pre');
  pre.id = 'audit';
  pre.textContent = JSON.stringify(result);
  document.body.appendChild(pre);
});
</script>"""


def _chromium(*args):
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args],
                          capture_output=True, text=True, timeout=120, check=True)


def write_card(folder):
    """A private sweep, then a default fit with a private score, its card (with the sweep's curve) as HTML."""
    folder = Path(folder)
    assert main(["sweep", "--private-score", "--epsilons", "0.5,1,2", "--repeats", "2",
                 "--out", str(folder / "sweep.json"), "--plot", str(folder / "sweep.png")]) == 0
    card = folder / "card.html"
    assert main(["fit", "--private-score", "--out", str(folder / "model.json"),
                 "--sweep", str(folder / "sweep.json"), "--report", str(card)]) == 0
    return card


def audit(card, folder):
    """What the browser measured once the card loaded (a copy of it with a measuring script)."""
    probe = Path(folder) / "probe.html"
    probe.write_text(card.read_text().replace("</body>", AUDIT + "</body>"))
    dom = _chromium(f"--window-size={WIDTH},900", "--virtual-time-budget=5000", "--dump-dom",
                    probe.as_uri()).stdout
    return json.loads(re.search(r"<pre id=\"audit\">(.*?)</pre>", dom, flags=re.S).group(1))


def screenshot(card, png, height=1500):
    _chromium(f"--window-size={WIDTH},{height}", f"--screenshot={png}", Path(card).as_uri())


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
def test_the_card_renders_in_a_browser_with_every_image_and_section_and_no_sideways_scroll(tmp_path, capsys):
    card = write_card(tmp_path)
    capsys.readouterr()
    seen = audit(card, tmp_path)
    assert seen["images"] == 2 and seen["loaded"] == seen["images"]  # the coefficients and the sweep's curve
    assert seen["scroll"] <= seen["width"] == WIDTH
    assert seen["sections"] == SECTIONS
    png = tmp_path / "card.png"
    screenshot(card, png)
    assert png.read_bytes()[:4] == b"\x89PNG"


if __name__ == "__main__":  # README's screenshot
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        screenshot(write_card(folder), Path(__file__).resolve().parents[1] / "docs" / "img" / "model_card.png")
    sys.exit(0)
