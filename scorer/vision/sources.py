"""Frames from a webcam, a video file or a network stream, with reconnection for live sources.

A USB camera unplugged for a second or a Wi-Fi stream that stalls should not end a game
night: a live source that stops delivering is reopened with growing pauses. A video file
simply ends. A source that cannot be opened at all is a clear ``SourceError``.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from scorer.errors import OkginError
from scorer.files import is_utf8, why_not_a_file

log = logging.getLogger(__name__)

MAX_CAMERA_INDEX = 2**31 - 1
"""The largest camera index OpenCV takes (a C int): a larger one stopped ``cv2.VideoCapture`` with a TypeError."""

RECONNECT_DELAYS: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0)
"""Pauses before successive reopen attempts of a live source; the last one repeats."""
STREAM_TIMEOUT_SECONDS = 5.0
"""The longest a stream (an rtsp/http URL) is waited for, to open or for its next frame. FFmpeg's own limit is 30 s:
``okgin watch`` to a server that took the connection and never answered said nothing for 91 s (three attempts)."""


class SourceError(OkginError, RuntimeError):
    """A camera, file or stream that cannot be opened or read."""


class Capture(Protocol):
    """The part of ``cv2.VideoCapture`` used here (tests pass fakes)."""

    def isOpened(self) -> bool: ...
    def read(self) -> tuple[bool, Any]: ...
    def get(self, prop: int) -> float: ...
    def set(self, prop: int, value: float) -> bool: ...
    def release(self) -> None: ...


@dataclasses.dataclass(frozen=True)
class Frame:
    """One picture from a source: BGR pixels, when it was taken (seconds) and its number from 0."""

    image: np.ndarray
    timestamp: float
    index: int


def parse_source(source: int | str) -> int | str:
    """A camera index for a number (``"0"`` -> 0), else the file path or URL unchanged.

    >>> parse_source("0"), parse_source(" 1 "), parse_source("rtsp://cam/stream"), parse_source("clip.mp4")
    (0, 1, 'rtsp://cam/stream', 'clip.mp4')

    Only decimal digits make an index: ``"²"`` is a digit to ``str.isdigit`` but no number to ``int`` (it stopped
    ``okgin watch`` with a ValueError), so it is a file name.

    >>> parse_source("²")
    '²'
    """
    if isinstance(source, int):
        return source
    text = source.strip()
    return int(text) if text.isdecimal() else text


def describe_source(source: int | str) -> str:
    """How a source is named in messages: "camera 0", "stream 'rtsp://…'", "video file 'clip.mp4'"."""
    if isinstance(source, int):
        return f"camera {source}"
    return f"stream {source!r}" if "://" in source else f"video file {source!r}"


def _is_empty(path: Path) -> bool:
    """Whether a file holds no byte (one that cannot be measured is left for OpenCV to try)."""
    try:
        return path.stat().st_size == 0
    except OSError:
        return False


def _open_cv2(source: int | str) -> Capture:
    import cv2

    # OpenCV's own log would print dozens of lines about each camera backend it tried; a source that will not
    # open is reported once, by CameraSource.open
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    if isinstance(source, str) and "://" in source:
        wait = round(STREAM_TIMEOUT_SECONDS * 1000)
        limits = [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, wait, cv2.CAP_PROP_READ_TIMEOUT_MSEC, wait]
        stream: Capture = cv2.VideoCapture(source, cv2.CAP_ANY, limits)
        return stream
    capture: Capture = cv2.VideoCapture(source)
    return capture


class CameraSource:
    """Iterate over the frames of a camera index, a video file or an rtsp/http URL.

    Live sources (cameras, URLs) are stamped with the clock; on a failed read they report
    it (log and ``on_event``) and reopen after ``reconnect_delays``, forever unless
    ``max_reconnects`` is given. A file is stamped with its own time and ends at its end.
    ``width``/``height`` ask a camera for a resolution (it may pick the nearest it has).

    :raises SourceError: from ``open`` (or the first iteration) when the source cannot be opened.
    """

    def __init__(
        self,
        source: int | str,
        *,
        width: int | None = None,
        height: int | None = None,
        open_attempts: int = 3,
        reconnect_delays: Sequence[float] = RECONNECT_DELAYS,
        max_reconnects: int | None = None,
        on_event: Callable[[str], None] | None = None,
        capture_factory: Callable[[int | str], Capture] = _open_cv2,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.source = parse_source(source)
        self.name = describe_source(self.source)
        self.is_live = isinstance(self.source, int) or "://" in self.source
        self.size = (width, height)
        self.open_attempts = max(1, open_attempts)
        self.reconnect_delays = tuple(reconnect_delays) or (0.0,)
        self.max_reconnects = max_reconnects
        self.on_event = on_event
        self._factory = capture_factory
        self._sleep = sleep
        self._clock = clock
        self._capture: Capture | None = None

    def _report(self, message: str) -> None:
        log.warning(message)
        if self.on_event is not None:
            self.on_event(message)

    def _try_open(self) -> Capture | None:
        import cv2

        capture = self._factory(self.source)
        if not capture.isOpened():
            capture.release()
            return None
        width, height = self.size
        if width and height and self.is_live:
            capture.set(cv2.CAP_PROP_FRAME_WIDTH, width)
            capture.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        return capture

    def open(self) -> None:
        """Open the source now, retrying a live one ``open_attempts`` times.

        :raises SourceError: naming the source and why.
        """
        if self._capture is not None:
            return
        if self.source == "":  # Path("") is ".", which would be called a folder
            raise SourceError("no source given: name a camera index (0), a video file or an rtsp/http URL")
        if isinstance(self.source, int) and self.source > MAX_CAMERA_INDEX:
            raise SourceError(f"{self.name} does not exist: camera indices run from 0 to {MAX_CAMERA_INDEX}")
        if isinstance(self.source, str) and not is_utf8(self.source):
            # OpenCV takes the name as UTF-8 text; one that is none crashed the process (a segmentation fault)
            raise SourceError(f"could not open {self.name}: its name is not UTF-8 text, which OpenCV cannot open")
        path = Path(str(self.source))
        if not self.is_live and not path.is_file():
            raise SourceError(f"{self.name} {why_not_a_file(path)}")
        if not self.is_live and _is_empty(path):  # OpenCV's word for it was "not a video OpenCV can read"
            raise SourceError(f"{self.name} is empty (0 bytes)")
        for attempt in range(self.open_attempts if self.is_live else 1):
            if attempt:
                self._sleep(self._delay(attempt - 1))
            self._capture = self._try_open()
            if self._capture is not None:
                return
        if not self.is_live:
            raise SourceError(f"could not open {self.name}: not a video OpenCV can read")
        tries = f"after {self.open_attempts} attempts" if self.open_attempts > 1 else ""
        if isinstance(self.source, str):  # a stream: how long it was waited for is said
            given = f"({'each ' if self.open_attempts > 1 else ''}given {STREAM_TIMEOUT_SECONDS:g} s)"
            raise SourceError(f"could not open {self.name} {tries} {given}".replace("  ", " ") + "; is it reachable?")
        raise SourceError(f"could not open {self.name} {tries}".rstrip() + "; is it connected and free?")

    def _delay(self, failures: int) -> float:
        return self.reconnect_delays[min(failures, len(self.reconnect_delays) - 1)]

    def close(self) -> None:
        """Release the device or file."""
        if self._capture is not None:
            self._capture.release()
            self._capture = None

    def __enter__(self) -> CameraSource:
        self.open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Frame]:
        import cv2

        self.open()
        index = 0
        failures = 0
        try:
            while True:
                capture = self._capture
                ok, image = capture.read() if capture is not None else (False, None)
                if ok and image is not None:
                    failures = 0
                    if self.is_live:
                        timestamp = self._clock()
                    else:
                        assert capture is not None
                        timestamp = capture.get(cv2.CAP_PROP_POS_MSEC) / 1000
                    yield Frame(image, timestamp, index)
                    index += 1
                    continue
                if not self.is_live:
                    return  # a file's end
                if self.max_reconnects is not None and failures >= self.max_reconnects:
                    raise SourceError(f"{self.name} stopped delivering frames; gave up after {failures} reconnects")
                delay = self._delay(failures)
                self._report(f"{self.name}: no frame, reconnecting in {delay:g} s")
                self.close()
                self._sleep(delay)
                failures += 1
                self._capture = self._try_open()
        finally:
            self.close()
