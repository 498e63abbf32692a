"""What the browser tests share: a live server in a thread, Chromium, and checks every page must pass.

Screenshots go to ``$OKGIN_SCREENSHOT_DIR`` when it is set (to look at them), else to the test's tmp dir.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from scorer.cards import Card
from scorer.vision.detector import Detections
from scorer.vision.types import CardDetection

CHROMIUM = "/usr/bin/chromium"
BROWSER_TESTS = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian chromium at /usr/bin/chromium"),
]
"""A browser test module's marks (``pytestmark = BROWSER_TESTS``): run in CI, skipped without Debian's Chromium."""
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1366, "height": 768}
MIN_TAP_PX = 32
FAKE_CAMERA = ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream"]


class ScaledDetector:
    """Returns the same cards for every frame, their boxes (given in a ``width`` x ``height`` picture)
    scaled to the frame's own size, so Chromium's built-in fake camera (any size) shows them."""

    def __init__(self, cards: Sequence[CardDetection] = (), width: int = 1280, height: int = 720) -> None:
        self.cards = tuple(cards)
        self.size = (width, height)

    def detect(self, image_bgr: np.ndarray) -> Detections:
        height, width = image_bgr.shape[:2]
        sx, sy = width / self.size[0], height / self.size[1]
        scaled = tuple(
            CardDetection(c.card, (c.box[0] * sx, c.box[1] * sy, c.box[2] * sx, c.box[3] * sy), c.confidence)
            for c in self.cards
        )
        return Detections(scaled, (), width, height)


def draw_card(image: np.ndarray, card: Card, x: int, y: int, size: tuple[int, int] = (85, 120)) -> CardDetection:
    """A plain stand-in card (white, its index in text) drawn at ``x, y``; returns its detection."""
    width, height = size
    cv2.rectangle(image, (x, y), (x + width, y + height), (250, 250, 250), -1)
    colour = (30, 30, 200) if card.suit in "DH" else (20, 20, 20)
    cv2.putText(
        image, str(card), (x + 6 * width // 85, y + height // 3), cv2.FONT_HERSHEY_SIMPLEX, width / 85, colour, 2
    )
    return CardDetection(card, (x, y, x + width, y + height), 0.95)


def write_y4m(path: Path, scenes: Sequence[tuple[np.ndarray, int]], fps: int = 15) -> None:
    """A .y4m video (the format Chromium's fake camera plays, looping) of each picture for its frame count."""
    height, width = scenes[0][0].shape[:2]
    with path.open("wb") as video:
        video.write(f"YUV4MPEG2 W{width} H{height} F{fps}:1 Ip A1:1 C420jpeg XYSCSS=420JPEG\n".encode())
        for image, frames in scenes:
            i420 = cv2.cvtColor(image, cv2.COLOR_BGR2YUV_I420).tobytes()
            for _ in range(frames):
                video.write(b"FRAME\n" + i420)


@contextmanager
def live_server(app: Any) -> Iterator[str]:
    """Serve ``app`` on a free loopback port in a thread; yields its base URL."""
    from werkzeug.serving import make_server

    http = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{http.server_port}"
    finally:
        http.shutdown()
        thread.join(5)


def launch(playwright: Any, extra_args: Sequence[str] = ()) -> Any:
    return playwright.chromium.launch(
        executable_path=CHROMIUM,
        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
              "--no-first-run", *extra_args],
    )  # fmt: skip


@contextmanager
def chromium(extra_args: Sequence[str] = ()) -> Iterator[Any]:
    """Debian's Chromium (``launch``) for the length of a test, closed after it."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright, extra_args)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def camera_table(tmp_path: Path, detector: Any) -> Iterator[tuple[str, Any]]:
    """The app served with ``detector`` for its camera (a database in ``tmp_path``), and Chromium whose camera is
    its fake one: (the base URL, the browser)."""
    from web import create_app

    with (
        live_server(create_app({"DATA_DIR": str(tmp_path / "data"), "DETECTOR": detector})) as base,
        chromium(FAKE_CAMERA) as browser,
    ):
        yield base, browser


def phone_page(browser: Any, errors: list[str], accept_dialogs: bool = True) -> Any:
    """A page in its own browser context (another device: its own cookies and storage) at a phone's size; its
    page errors go to ``errors``; with ``accept_dialogs``, "Add it again as round N?" and the like are answered yes."""
    page = browser.new_context(viewport=PHONE).new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    if accept_dialogs:
        page.on("dialog", lambda dialog: dialog.accept())
    return page


KNOCK_HANDS = {"Ann": "8C 9C 10C JC 9H 10H JH 2S 2D AC", "Bob": "QS QC QH 10S JS 3D 5H 7S AD 7D"}
"""The engine's worked example as typed at the table: Ann knocks with 5 under K♠, Bob lays off QC and QH and keeps
23, so Ann scores 18."""


def full_page_shot(page: Any, path: Path) -> None:
    """A full-page screenshot kept for a look; taken once more where Chromium could not capture it the first time
    (headless Chromium's "Unable to capture screenshot", seen once in CI right after a page loaded)."""
    from playwright.sync_api import Error

    try:
        page.screenshot(path=str(path), full_page=True)
    except Error:
        page.wait_for_timeout(500)
        page.screenshot(path=str(path), full_page=True)


def screenshot_dir(tmp_path: Path) -> Path:
    target = Path(os.environ.get("OKGIN_SCREENSHOT_DIR") or tmp_path / "screenshots")
    target.mkdir(parents=True, exist_ok=True)
    return target


def no_sideways_scroll(page: Any, what: str) -> None:
    """The page is no wider than the window (nothing to scroll sideways).

    Measured once the page has loaded: a page a form's reply has just put up can be measured before its
    stylesheet applies (a CI run found the setup page 408 px wide, and nothing in it too wide, a moment later).
    The width and the elements past the window's edge are read in one go, so the two agree.
    """
    page.wait_for_load_state("load")
    width, window, wide = page.evaluate(
        """() => [document.documentElement.scrollWidth, window.innerWidth,
            [...document.querySelectorAll('body *')]
                .filter((node) => node.getBoundingClientRect().right > window.innerWidth + 0.5)
                .slice(0, 8).map((node) => `${node.tagName}#${node.id}.${node.className}`)]"""
    )
    if width > window:
        raise AssertionError(f"{what}: the page is {width} px wide in a {window} px window; too wide: {wide}")


def small_tap_targets(page: Any, scope: str = "body") -> list[str]:
    """Visible buttons, links, inputs, selects and fold-out summaries under ``scope`` smaller than 32 x 32 CSS
    pixels."""
    found: list[str] = page.evaluate(
        """([scope, minimum]) => [...document.querySelectorAll(
                ['button', 'a', 'input', 'select', 'summary'].map((tag) => `${scope} ${tag}`).join(', '))]
            .filter((node) => node.offsetParent !== null && !node.closest('.visually-hidden, .skip-link'))
            .map((node) => [node, (node.type === 'checkbox' && node.closest('label') || node).getBoundingClientRect()])
            .filter(([, r]) => r.width > 0 && (r.height < minimum || r.width < minimum))
            .map(([node, r]) => [node.tagName, node.id || node.textContent.trim().slice(0, 20),
                                 `${Math.round(r.width)}x${Math.round(r.height)}`].join(' '))""",
        [scope, MIN_TAP_PX],
    )
    return found


def set_page_hidden(page: Any, hidden: bool) -> None:
    """Hide or show ``page`` as another tab or a locked phone does (headless Chromium hides no page)."""
    page.evaluate(
        """hidden => { Object.defineProperty(document, 'hidden', {value: hidden, configurable: true});
            const state = hidden ? 'hidden' : 'visible';
            Object.defineProperty(document, 'visibilityState', {value: state, configurable: true});
            document.dispatchEvent(new Event('visibilitychange')); }""",
        hidden,
    )
