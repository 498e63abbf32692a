"""From a camera frame to a steady reading of the table: detect, place by seat, stabilise.

``TablePipeline`` does one frame at a time. ``LatestFrameWorker`` runs it on a thread for
live use (the web page, ``okgin watch``): a camera delivers frames faster than a CPU
detects, so the worker always takes the newest frame and drops the rest; a queue would
grow a lag of seconds. A table nobody touches is not read again frame after frame
(``StillTable``): its last reading stands, for up to a second.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable

import cv2
import numpy as np

from scorer.vision.layout import TableLayout
from scorer.vision.stabilise import Stabiliser
from scorer.vision.types import Detections, Detector, FrameNotRead, FrameReading, LiveDetector, StableReading

log = logging.getLogger(__name__)


STILL_SIDE = 96
"""The longer side of the grey thumbnail two frames are compared by (each cell about 13 px of a 1280 px frame; a
frame of any shape, a thin one too, makes at most 96 x 96 cells)."""
STILL_LEVELS = 16.0
"""The most a thumbnail cell may differ, in grey levels, between frames of a still table. ``python
benchmarks/bench_still.py``: two webcam-like frames of one rendered table (grain of 8 or 16 levels, dead pixels,
JPEG) differ by at most 9; a card taken away, or laid on another's place, by 17 or more where its index is 13 px tall,
and a card whose index alone shows swapped by 17 or more at 22 px (6 at least at 13 px)."""
STILL_SECONDS = 1.0
"""The longest a reading stands for frames of a still table before one is read again, whatever they show."""


class StillTable:
    """Whether a frame shows the table as the frame last read did, so that its reading stands.

    A webcam over a card table sends the same picture most of the time, and reading each costs a CPU without
    bfloat16 about a fifth of a second. Cards are laid, picked up and moved by hands, and a frame with a hand in it
    differs from the still one before (and is read); so does the first still frame after it from that read frame.
    Frames are compared with the frame last read, not the one before, so that a slow drift adds up, and a reading
    stands ``seconds`` at most: a change too small to see (an index a few pixels tall, swapped without a hand) waits
    that long. ``TablePipeline`` lets a reading stand only where the stabiliser already holds it, so a misread frame
    is never counted twice.
    """

    def __init__(self, seconds: float = STILL_SECONDS, levels: float = STILL_LEVELS, side: int = STILL_SIDE) -> None:
        self.seconds = seconds
        self.levels = levels
        self.side = side
        # the frame last read, where its reading may stand: its thumbnail, when it was taken, its reading
        self._read: tuple[np.ndarray, float, FrameReading] | None = None

    def thumbnail(self, frame_bgr: np.ndarray) -> np.ndarray:
        """The frame in grey, its longer side ``side`` cells, each the mean of its pixels (so grain averages out)."""
        grey = frame_bgr if frame_bgr.ndim == 2 else cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2GRAY)
        height, width = grey.shape
        scale = self.side / max(height, width)
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        return cv2.resize(grey, size, interpolation=cv2.INTER_AREA).astype(np.float32)

    def kept_reading(self, thumbnail: np.ndarray, when: float) -> FrameReading | None:
        """The reading a frame of this ``thumbnail``, taken at ``when``, keeps (the table as still as when that
        reading was read), or None: the frame must be read."""
        if self._read is None:
            return None
        read, read_at, reading = self._read
        fresh = 0 <= when - read_at < self.seconds
        still = read.shape == thumbnail.shape and float(np.abs(thumbnail - read).max()) <= self.levels
        return reading if fresh and still else None

    def remember(self, thumbnail: np.ndarray, when: float, reading: FrameReading) -> None:
        """A frame of this ``thumbnail`` taken at ``when`` was read as ``reading``: the next frames are compared with
        it, and keep its reading while they show the same."""
        self._read = (thumbnail, when, reading)

    def forget(self) -> None:
        """No reading stands: the next frame is read."""
        self._read = None


class TablePipeline:
    """Detect the cards of a frame, assign them to seats and stabilise over frames.

    ``stabiliser=None`` uses a fresh ``Stabiliser()``; ``max_cards`` reports hands
    holding more cards than a hand may (see ``TableLayout.assign``). Live frames of a still
    table keep the last reading for up to ``still_seconds`` (``StillTable``; 0: every frame
    is read).
    """

    def __init__(
        self,
        detector: Detector,
        layout: TableLayout,
        stabiliser: Stabiliser | None = None,
        max_cards: int | None = None,
        still_seconds: float = STILL_SECONDS,
    ) -> None:
        self.detector = detector
        self.layout = layout
        self.stabiliser = stabiliser if stabiliser is not None else Stabiliser()
        self.max_cards = max_cards
        self.still = StillTable(still_seconds) if still_seconds > 0 else None
        self.last_detections: Detections | None = None
        """The latest frame's raw detections, e.g. to draw boxes over the live picture."""
        self.frames_read = 0
        self.frames_kept = 0
        self.frames_declined = 0
        """Live frames read, those that kept the reading of a still table, and those the detector declined."""
        self._last: StableReading | None = None  # the last answer from a frame read or kept

    def read(self, frame_bgr: np.ndarray, live: bool = False) -> FrameReading:
        """One frame's reading, not stabilised (a single photo; with ``live``, a camera's frame, which a
        ``LiveDetector`` may decline).

        :raises FrameNotRead: for a live frame the detector declines.
        """
        detector = self.detector
        live_detector = detector if live and isinstance(detector, LiveDetector) else None
        detections = detector.detect(frame_bgr) if live_detector is None else live_detector.detect_live(frame_bgr)
        self.last_detections = detections
        return self.layout.assign(detections, max_cards=self.max_cards)

    def process(self, frame_bgr: np.ndarray, timestamp: float | None = None) -> StableReading:
        """Read a frame taken at ``timestamp`` (seconds; default: now) and return the stabilised reading.

        A frame of a still table keeps the reading of the frame last read (``StillTable``), only where that reading
        is what the stabiliser holds, stable: a reading kept is counted again at each frame, and a misread one
        would so outvote the frames read right. A frame the detector declines (``FrameNotRead``: a moving camera's)
        is not counted either: the answer is the stabilised reading as the frames before it left it, with why this
        one was not read (``StableReading.unread``).
        """
        when = time.monotonic() if timestamp is None else timestamp
        still = self.still
        thumbnail = still.thumbnail(frame_bgr) if still else None
        kept = still.kept_reading(thumbnail, when) if still and thumbnail is not None else None
        if kept is not None:
            self.frames_kept += 1
            self._last = self.stabiliser.update(kept, when)
            return self._last
        try:
            reading = self.read(frame_bgr, live=True)
        except FrameNotRead as declined:
            self.frames_declined += 1
            return self._declined(frame_bgr, when, str(declined))
        self.frames_read += 1
        self._last = stable = self.stabiliser.update(reading, when)
        if still and thumbnail is not None:
            if stable.stable and self.stabiliser.agrees(reading):
                still.remember(thumbnail, when, reading)
            else:
                still.forget()
        return stable

    def _declined(self, frame_bgr: np.ndarray, when: float, why: str) -> StableReading:
        """The answer for a frame not read: the last answer's reading, or before any an empty one of the frame's
        size, not stable, with ``why``."""
        if self._last is not None:
            return dataclasses.replace(self._last, unread=why)
        height, width = frame_bgr.shape[:2]
        nothing = self.layout.assign(Detections((), (), width, height), max_cards=self.max_cards)
        return StableReading(nothing, False, when, unread=why)


class LatestFrameWorker:
    """Run a pipeline on a background thread, always on the newest frame pushed.

    ``push`` never blocks: a frame arriving while another is processed replaces any frame
    still waiting (counted in ``dropped``). ``on_result`` is called on the worker thread
    with each new reading. A frame that fails is logged and kept in ``error``; the worker
    goes on with the next frame.

    Use: ``worker = LatestFrameWorker(pipeline)``, then ``worker.push(frame)`` per camera
    frame and ``worker.latest()`` whenever the page asks; ``worker.stop()`` at the end.
    """

    def __init__(
        self,
        pipeline: TablePipeline,
        on_result: Callable[[StableReading], None] | None = None,
        name: str = "okgin-vision",
    ) -> None:
        self.pipeline = pipeline
        self.on_result = on_result
        self.name = name
        self.processed = 0
        self.dropped = 0
        self.error: Exception | None = None
        self._pending: tuple[np.ndarray, float] | None = None
        self._latest: StableReading | None = None
        self._condition = threading.Condition()
        self._stopping = False
        self._busy = False
        self._thread: threading.Thread | None = None

    def start(self) -> LatestFrameWorker:
        """Start the thread (``push`` also starts it); a stopped worker may be started again."""
        with self._condition:
            if self._thread is None or not self._thread.is_alive():
                self._stopping = False
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
        return self

    def stop(self, timeout: float | None = 5.0) -> None:
        """Stop after the frame in progress; a frame still waiting is dropped."""
        with self._condition:
            self._stopping = True
            self._condition.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> LatestFrameWorker:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def push(self, frame_bgr: np.ndarray, timestamp: float | None = None) -> None:
        """Offer a frame (taken at ``timestamp``, default now); replaces any frame not yet started."""
        when = time.monotonic() if timestamp is None else timestamp
        if self._thread is None or not self._thread.is_alive():
            self.start()
        with self._condition:
            if self._pending is not None:
                self.dropped += 1
            self._pending = (frame_bgr, when)
            self._condition.notify_all()

    def latest(self) -> StableReading | None:
        """The newest reading, or None before the first frame is processed."""
        with self._condition:
            return self._latest

    def wait(self, processed: int, timeout: float | None = None) -> bool:
        """Block until at least ``processed`` frames have been processed; False on timeout."""
        with self._condition:
            return self._condition.wait_for(lambda: self.processed >= processed, timeout)

    def idle(self, timeout: float | None = None) -> bool:
        """Block until no frame is waiting or in progress; False on timeout."""
        with self._condition:
            return self._condition.wait_for(lambda: self._pending is None and not self._busy, timeout)

    def _run(self) -> None:
        while True:
            with self._condition:
                self._condition.wait_for(lambda: self._pending is not None or self._stopping)
                if self._stopping:
                    return
                assert self._pending is not None
                frame, when = self._pending
                self._pending = None
                self._busy = True
            try:
                result: StableReading | None = self.pipeline.process(frame, when)
            except Exception as error:  # one bad frame must not end the live view
                log.warning("frame skipped: %s", error)
                result = None
                with self._condition:
                    self.error = error
            with self._condition:
                self._busy = False
                self.processed += 1
                if result is not None:
                    self._latest = result
                self._condition.notify_all()
            if result is not None and self.on_result is not None:
                try:
                    self.on_result(result)
                except Exception as error:
                    log.warning("result callback failed: %s", error)
                    self.error = error
