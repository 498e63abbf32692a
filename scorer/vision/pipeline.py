"""From a camera frame to a steady reading of the table: detect, place by seat, stabilise.

``TablePipeline`` does one frame at a time. ``LatestFrameWorker`` runs it on a thread for
live use (the web page, ``okgin watch``): a camera delivers frames faster than a CPU
detects, so the worker always takes the newest frame and drops the rest; a queue would
grow a lag of seconds.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import numpy as np

from scorer.vision.layout import TableLayout
from scorer.vision.stabilise import Stabiliser
from scorer.vision.types import Detections, Detector, FrameReading, StableReading

log = logging.getLogger(__name__)


class TablePipeline:
    """Detect the cards of a frame, assign them to seats and stabilise over frames.

    ``stabiliser=None`` uses a fresh ``Stabiliser()``; ``max_cards`` reports hands
    holding more cards than a hand may (see ``TableLayout.assign``).
    """

    def __init__(
        self,
        detector: Detector,
        layout: TableLayout,
        stabiliser: Stabiliser | None = None,
        max_cards: int | None = None,
    ) -> None:
        self.detector = detector
        self.layout = layout
        self.stabiliser = stabiliser if stabiliser is not None else Stabiliser()
        self.max_cards = max_cards
        self.last_detections: Detections | None = None
        """The latest frame's raw detections, e.g. to draw boxes over the live picture."""

    def read(self, frame_bgr: np.ndarray) -> FrameReading:
        """One frame's reading, not stabilised (a single photo)."""
        detections = self.detector.detect(frame_bgr)
        self.last_detections = detections
        return self.layout.assign(detections, max_cards=self.max_cards)

    def process(self, frame_bgr: np.ndarray, timestamp: float | None = None) -> StableReading:
        """Read a frame taken at ``timestamp`` (seconds; default: now) and return the stabilised reading."""
        when = time.monotonic() if timestamp is None else timestamp
        return self.stabiliser.update(self.read(frame_bgr), when)


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
