"""The detector as the web app shares it: built lazily, one inference at a time, a bounded queue.

The model is loaded on the first detection request (unless a test passes ``DETECTOR``), so the server
starts in a second and ``okgin serve`` without weights still serves the score sheet and typed hands.
Inference is serialised (the backends already use every core); requests beyond ``DETECT_QUEUE`` waiting
ones are refused instead of piling up. The service raises what went wrong (``ModelError``, ``DetectorBusy``);
``init_app`` maps both to 503 answers at the edge.
"""

from __future__ import annotations

import collections
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from flask import Flask, current_app

from scorer.vision.manifest import ModelError
from scorer.vision.types import CardDetection, Detector, FrameReading
from web.errors import error_response

FRAME_CACHE_SIZE = 24
QUEUE_WAIT_SECONDS = 20.0


class DetectorBusy(RuntimeError):
    """More frames wait for the detector than the queue holds, or one waited too long."""


def unavailable(error: ModelError) -> str:
    """What a user is told when there is no card recognition (the model is missing or broken)."""
    return f"card recognition is unavailable: {error}"


@dataclass(frozen=True)
class CachedFrame:
    """A frame the page saw, kept briefly so a correction can be saved with the exact image.

    ``encoded`` is a JPEG, PNG, WEBP, BMP or TIFF file (see ``scorer.vision.images.file_type``).
    """

    encoded: bytes
    width: int
    height: int

    @property
    def suffix(self) -> str:
        return self._type[0]

    @property
    def mimetype(self) -> str:
        return self._type[1]

    @property
    def _type(self) -> tuple[str, str]:
        from scorer.vision.images import file_type

        return file_type(self.encoded) or (".jpg", "image/jpeg")


class DetectorService:
    """Owns the detector, the per-table pipelines and the recent-frame cache for one app."""

    def __init__(self, detector: Detector | None, model_dir: str | None, queue_limit: int, wait_seconds: float) -> None:
        self._detector = detector
        self._wait_seconds = wait_seconds
        self._model_dir = model_dir
        self._build_lock = threading.Lock()
        self._inference_lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(queue_limit + 1)
        self._frames: collections.OrderedDict[str, CachedFrame] = collections.OrderedDict()
        self._stems: dict[str, str] = {}
        self._frames_lock = threading.Lock()
        self._pipelines: collections.OrderedDict[tuple[str, int], Any] = collections.OrderedDict()
        self._pipelines_lock = threading.Lock()

    def detector(self) -> Detector:
        """The detector, loading the model on first use.

        :raises ModelError: naming the missing or broken model.
        """
        with self._build_lock:
            if self._detector is None:
                from scorer.vision.detector import CardDetector

                self._detector = CardDetector(self._model_dir)
            return self._detector

    def detect(self, image_bgr: np.ndarray) -> Any:
        """Run one inference, queueing behind others.

        A request that finds the queue full is answered at once rather than waiting for a place: each
        waiting request holds a server thread, so the queue bounds how many threads detection can take.

        :raises DetectorBusy: when the queue is full or the wait too long.
        :raises ModelError: when there is no usable model.
        """
        detector = self.detector()
        if not self._slots.acquire(blocking=False):
            raise DetectorBusy("the card detector is busy; try again in a moment")
        try:
            if not self._inference_lock.acquire(timeout=self._wait_seconds):
                raise DetectorBusy("the card detector is busy; try again in a moment")
            try:
                return detector.detect(image_bgr)
            finally:
                self._inference_lock.release()
        finally:
            self._slots.release()

    def pipeline(self, table: str, players: int) -> Any:
        """The stabilising pipeline of one table (browser session) and player count; a few are kept."""
        key = (table, players)
        with self._pipelines_lock:
            if key in self._pipelines:
                self._pipelines.move_to_end(key)
                return self._pipelines[key]
        from scorer.vision.pipeline import TablePipeline
        from scorer.vision.stabilise import Stabiliser

        pipeline = TablePipeline(_GatedDetector(self), table_layout(players), Stabiliser())
        with self._pipelines_lock:
            self._pipelines[key] = pipeline
            while len(self._pipelines) > 8:
                self._pipelines.popitem(last=False)
        return pipeline

    def remember_frame(self, encoded: bytes, width: int, height: int) -> str:
        """Keep a frame for a later correction; return its server-generated id."""
        frame_id = secrets.token_hex(8)
        with self._frames_lock:
            self._frames[frame_id] = CachedFrame(encoded, width, height)
            while len(self._frames) > FRAME_CACHE_SIZE:
                dropped, _ = self._frames.popitem(last=False)
                self._stems.pop(dropped, None)
        return frame_id

    def frame(self, frame_id: str) -> CachedFrame | None:
        with self._frames_lock:
            return self._frames.get(frame_id)

    def example_stem(self, frame_id: str, make: Callable[[], str]) -> str:
        """The file stem of a frame's training example: made once, so later corrections overwrite it."""
        with self._frames_lock:
            stem = self._stems.get(frame_id)
            if stem is None:
                stem = self._stems[frame_id] = make()
            return stem


class _GatedDetector:
    """The shared detector seen through the service's queue, for pipelines."""

    def __init__(self, service: DetectorService) -> None:
        self._service = service

    def detect(self, image_bgr: np.ndarray) -> Any:
        return self._service.detect(image_bgr)


def service(app: Flask | None = None) -> DetectorService:
    """The app's detector service."""
    target = app if app is not None else current_app
    detector_service: DetectorService = target.extensions["okgin_detector"]
    return detector_service


def init_app(app: Flask) -> None:
    """Give the app its detector service, and answer its errors 503 (the server is fine, recognition is not)."""
    app.register_error_handler(ModelError, lambda error: error_response(503, unavailable(error)))
    app.register_error_handler(DetectorBusy, lambda error: error_response(503, str(error)))
    app.extensions["okgin_detector"] = DetectorService(
        app.config.get("DETECTOR"),
        app.config.get("MODEL_DIR"),
        int(app.config["DETECT_QUEUE"]),
        float(app.config.get("DETECT_WAIT_SECONDS", QUEUE_WAIT_SECONDS)),
    )


def table_layout(players: int) -> Any:
    """The seat zones: the layout given to ``okgin serve --players-layout``, else the default for the count."""
    from scorer.vision.layout import TableLayout

    configured = current_app.config.get("LAYOUT")
    if configured:
        layout = TableLayout.from_dict(configured)
        if len(layout.seats) >= players:
            return layout
    return TableLayout.default(players)


def detections_json(cards: tuple[CardDetection, ...] | list[CardDetection]) -> list[dict[str, object]]:
    """The cards' JSON forms (``CardDetection.to_dict``), as ``/api/detect`` lists them."""
    return [card.to_dict() for card in cards]


def reading_json(reading: FrameReading) -> dict[str, Any]:
    """The reading's one JSON form, ``FrameReading.to_dict`` (the CLI prints the same)."""
    return reading.to_dict()
