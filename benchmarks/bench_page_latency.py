"""Benchmark what players wait for: from a changed table in front of the webcam to the new proposal on the page.

Headless Chromium plays a .y4m video as its webcam (``--use-fake-device-for-media-stream
--use-file-for-fake-video-capture=FILE.y4m``): table A (Ann may knock) for a few seconds, then table B (Bob
may knock), looping. The page runs as players use it: frames posted to ``/live/frame``, the server's
stabilising pipeline, ``/api/arrange``, the automatic proposal through ``/api/score``. In the page, a
video-frame callback notes when the picture first shows the other table (a marker square in the frame's
corner), a mutation observer notes when the proposal for that table appears; the difference is printed
per change, then the median and range.

The detector is a stand-in that knows both tables (recognition itself is ``bench_detector.py``), so the
figure is the page, the network round trips and the stabiliser (whose settle time, 1 s by default, is most
of it).

    python benchmarks/bench_page_latency.py [--changes 6] [--hold 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from browser_support import draw_card, write_y4m  # noqa: E402  (the stand-in tables of the browser tests)

from scorer.cards import Card, parse_cards  # noqa: E402
from scorer.vision.detector import Detections  # noqa: E402
from scorer.vision.types import CardDetection  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
WIDTH, HEIGHT, FPS = 640, 360, 10
CARD_SIZE = (42, 64)
MARK = 24  # the marker square in the top-left corner: black on table A, white on table B
TABLES = {
    "A": ({"Ann": "8C 9C 10C JC 9H 10H JH 2S 2D AC", "Bob": "QS QC QH 10S JS 3D 5H 7S AD 7D"}, "KS", "Ann knocks"),
    "B": ({"Ann": "QS QC QH 10S JS 3D 5H 7S AD 7D", "Bob": "8C 9C 10C JC 9H 10H JH 2S 2D AC"}, "KS", "Bob knocks"),
}


def draw_table(name: str) -> tuple[np.ndarray, list[CardDetection]]:
    """A plain drawn table: Ann's cards along the bottom, Bob's along the top, the upcard right of centre."""
    hands, upcard, _ = TABLES[name]
    image = np.full((HEIGHT, WIDTH, 3), (40, 100, 35), np.uint8)
    image[:MARK, :MARK] = 0 if name == "A" else 255
    cards = []
    for text, top in ((hands["Ann"], 270), (hands["Bob"], 20)):
        for i, card in enumerate(parse_cards(text)):
            cards.append(draw_card(image, card, 30 + i * 48, top, CARD_SIZE))
    cards.append(draw_card(image, Card.parse(upcard), 440, 150, CARD_SIZE))
    return image, cards


class TwoTables:
    """A detector that knows both tables: it tells them apart by the marker square."""

    def __init__(self, tables: dict[str, list[CardDetection]]) -> None:
        self.tables = tables

    def detect(self, image_bgr: np.ndarray) -> Detections:
        height, width = image_bgr.shape[:2]
        corner = float(image_bgr[: MARK * height // HEIGHT // 2, : MARK * width // WIDTH // 2].mean())
        cards = self.tables["A" if corner < 128 else "B"]
        sx, sy = width / WIDTH, height / HEIGHT
        scaled = tuple(
            CardDetection(c.card, (c.box[0] * sx, c.box[1] * sy, c.box[2] * sx, c.box[3] * sy), 0.95) for c in cards
        )
        return Detections(scaled, (), width, height)


WATCH = """() => {
  const marks = [];
  const proposals = [];
  const video = document.getElementById('video');
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const pen = canvas.getContext('2d', { willReadFrequently: true });
  let last = null;
  const onFrame = (now) => {
    if (video.videoWidth) {
      pen.drawImage(video, 0, 0, video.videoWidth * %(mark)f / 2, video.videoHeight * %(mark_y)f / 2, 0, 0, 1, 1);
      const table = pen.getImageData(0, 0, 1, 1).data[0] < 128 ? 'A' : 'B';
      if (table !== last) { marks.push([table, performance.now()]); last = table; }
    }
    video.requestVideoFrameCallback(onFrame);
  };
  video.requestVideoFrameCallback(onFrame);
  const proposal = document.getElementById('proposal');
  new MutationObserver(() => {
    if (!proposal.hidden) proposals.push([proposal.querySelector('.outcome')?.textContent ?? '', performance.now()]);
  }).observe(proposal, { subtree: true, childList: true, characterData: true, attributes: true });
  window.__latency = { marks, proposals };
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=6, help="table changes to measure (default 6)")
    parser.add_argument("--hold", type=float, default=5.0, help="seconds each table stays in view (default 5)")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        sys.exit(f"needs Chromium at {CHROMIUM}")
    from playwright.sync_api import sync_playwright
    from werkzeug.serving import make_server

    from web import create_app

    with tempfile.TemporaryDirectory() as scratch:
        video = Path(scratch) / "tables.y4m"
        write_y4m(video, [(draw_table(name)[0], int(args.hold * FPS)) for name in TABLES], FPS)
        detector = TwoTables({name: draw_table(name)[1] for name in TABLES})
        app = create_app({"DATA_DIR": scratch, "DETECTOR": detector})
        http = make_server("127.0.0.1", 0, app, threaded=True)
        threading.Thread(target=http.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{http.server_port}"
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM,
                args=["--no-sandbox", "--disable-gpu", "--use-fake-ui-for-media-stream",
                      "--use-fake-device-for-media-stream", f"--use-file-for-fake-video-capture={video}"],
            )  # fmt: skip
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            created = page.request.post(f"{base}/api/matches", data={"players": ["Ann", "Bob"], "dealer": "Bob"})
            page.goto(f"{base}/matches/{created.json()['id']}")
            page.wait_for_selector("body[data-ready=true]")
            page.click("#camera-start")
            page.wait_for_function("() => document.getElementById('video').videoWidth > 0", timeout=20_000)
            page.evaluate(WATCH % {"mark": MARK / WIDTH, "mark_y": MARK / HEIGHT})
            time.sleep(args.hold * (args.changes + 2))
            log = page.evaluate("() => window.__latency")
            browser.close()
        http.shutdown()

    latencies = []
    # Each change but the first sighting of the camera, up to the next change (the last one may be cut short).
    for (table, shown_at), following in zip(log["marks"][1:], log["marks"][2:], strict=False):
        expected = TABLES[table][2]
        answered = [t for text, t in log["proposals"] if expected in text and shown_at <= t < following[1]]
        if answered:
            latencies.append(answered[0] - shown_at)
            print(f"table {table} in view -> '{expected}' proposed: {(answered[0] - shown_at) / 1000:5.2f} s")
        else:
            print(f"table {table} in view: no proposal before the next change")
    if latencies:
        median, low, high = (value / 1000 for value in (statistics.median(latencies), min(latencies), max(latencies)))
        print(
            f"changed table to new proposal over {len(latencies)} changes: median {median:.2f} s, min {low:.2f} s,"
            f" max {high:.2f} s ({WIDTH}x{HEIGHT} camera at {FPS} fps, stabiliser settle 1 s)"
        )


if __name__ == "__main__":
    main()
