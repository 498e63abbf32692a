"""The live table: the match page, frames posted by the browser's camera, and the optional server camera.

Browser camera: the page posts a JPEG a few times a second (one request in flight, newest frame wins);
each table (browser session) has its own stabilising pipeline. Server camera (``okgin serve --camera``):
a thread reads the camera, the vision ``LatestFrameWorker`` runs the pipeline on the newest frame only,
and the page shows ``/live/camera.mjpg`` with the reading polled from ``/live/camera/reading``.
"""

from __future__ import annotations

import collections
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, cast

from flask import Blueprint, Flask, Response, current_app, jsonify, render_template, session, stream_with_context

from scorer.vision.manifest import ModelError
from scorer.vision.types import FrameReading, StableReading
from web import store
from web.api import decode, players_arg, uploaded_image
from web.detection import service, table_layout, unavailable
from web.errors import ApiError

bp = Blueprint("live", __name__)

MJPEG_BOUNDARY = "okginframe"
MJPEG_INTERVAL_SECONDS = 0.1
FILE_FRAME_SECONDS = 1 / 15
TRACKED_FRAMES = 64


@bp.get("/matches/<int:match_id>")
def table(match_id: int) -> str:
    """The table page: camera or typed hands, the proposed result, and the score sheet beside it."""
    stored = store.load_match(match_id)
    return render_template(
        "table.html", match=stored.to_json(), server_camera=current_app.extensions.get("okgin_camera") is not None
    )


@bp.post("/live/frame")
def frame() -> Response:
    """One browser camera frame through this table's pipeline: cards per seat, stable or not, a frame id."""
    data = uploaded_image()
    image = decode(data)
    table_id = session.get("table")
    if not isinstance(table_id, str):
        table_id = session["table"] = secrets.token_hex(8)
    stable = service().pipeline(table_id, players_arg()).process(image, time.monotonic())
    height, width = image.shape[:2]
    frame_id = service().remember_frame(data, width, height)
    return jsonify(frame_id=frame_id, **stable.to_dict())


class ServerCamera:
    """A camera attached to the server, read in a thread; the pipeline runs on the newest frame only."""

    def __init__(self, app: Flask, source: str, players: int = 2) -> None:
        self._app = app
        self._source = source
        self._players = players
        self._jpeg: bytes | None = None
        self._recent: collections.OrderedDict[float, tuple[bytes, int, int]] = collections.OrderedDict()
        self._processed_id: str | None = None
        self._error: str | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._worker: Any = None
        self._thread = threading.Thread(target=self._run, name="okgin-camera", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        import cv2

        from scorer.vision.pipeline import LatestFrameWorker, TablePipeline
        from scorer.vision.sources import CameraSource
        from scorer.vision.stabilise import Stabiliser

        with self._app.app_context():
            try:
                try:
                    detector = service(self._app).detector()
                except ModelError as error:  # no model: the picture still streams, readings say why they are missing
                    with self._lock:
                        self._error = unavailable(error)
                else:
                    pipeline = TablePipeline(detector, table_layout(self._players), Stabiliser())
                    self._worker = LatestFrameWorker(cast(Any, _TrackingPipeline(pipeline, self._processed))).start()
                source = CameraSource(self._source)
                for frame in source:
                    if self._stop.is_set():
                        break
                    ok, encoded = cv2.imencode(".jpg", frame.image, [cv2.IMWRITE_JPEG_QUALITY, 80])
                    if ok:
                        height, width = frame.image.shape[:2]
                        with self._lock:
                            self._jpeg = encoded.tobytes()
                            self._recent[frame.timestamp] = (self._jpeg, width, height)
                            while len(self._recent) > TRACKED_FRAMES:
                                self._recent.popitem(last=False)
                    if self._worker is not None:
                        self._worker.push(frame.image, frame.timestamp)
                    if not source.is_live:
                        time.sleep(FILE_FRAME_SECONDS)  # a video file plays at about its speed, not at CPU speed
                with self._lock:
                    self._error = self._error or f"camera {self._source} ended"
            except Exception as error:  # reported on the page instead of killing the server
                self._app.logger.exception("server camera %s stopped", self._source)
                with self._lock:
                    self._error = f"camera {self._source}: {error}"
            finally:
                if self._worker is not None:
                    self._worker.stop()

    def _processed(self, timestamp: float) -> None:
        """Keep the frame a reading came from (only those: the cache is not flooded at camera speed)."""
        with self._lock:
            recent = self._recent.get(timestamp)
        if recent is not None:
            frame_id = service(self._app).remember_frame(*recent)
            with self._lock:
                self._processed_id = frame_id

    def snapshot(self) -> bytes | None:
        with self._lock:
            return self._jpeg

    def reading(self) -> dict[str, Any]:
        """The newest stabilised reading and the id of the newest frame (for saving corrections)."""
        with self._lock:
            error, frame_id = self._error, self._processed_id
        if error:
            raise ApiError(503, error)
        latest = None if self._worker is None else self._worker.latest()
        if latest is None:  # nothing read yet: an empty, unsettled reading
            latest = StableReading(FrameReading(by_player={}), stable=False, changed_at=0.0)
        return {"frame_id": frame_id, **latest.to_dict()}


class _TrackingPipeline:
    """A pipeline that reports which frame (by timestamp) each reading came from."""

    def __init__(self, pipeline: Any, on_processed: Callable[[float], None]) -> None:
        self._pipeline = pipeline
        self._on_processed = on_processed

    def process(self, frame_bgr: Any, timestamp: float) -> Any:
        result = self._pipeline.process(frame_bgr, timestamp)
        self._on_processed(timestamp)
        return result


def camera() -> ServerCamera:
    attached: ServerCamera | None = current_app.extensions.get("okgin_camera")
    if attached is None:
        raise ApiError(404, "no server camera: start the server with okgin serve --camera INDEX_OR_URL")
    return attached


@bp.get("/live/camera.jpg")
def camera_snapshot() -> Response:
    jpeg = camera().snapshot()
    if jpeg is None:
        raise ApiError(503, "the server camera has no frame yet")
    return Response(jpeg, mimetype="image/jpeg", headers={"Cache-Control": "no-store"})


@bp.get("/live/camera.mjpg")
def camera_stream() -> Response:
    """The server camera as an MJPEG stream (multipart/x-mixed-replace), about 10 frames a second."""
    attached = camera()

    def frames() -> Iterator[bytes]:
        last = None
        while True:
            jpeg = attached.snapshot()
            if jpeg is not None and jpeg is not last:
                last = jpeg
                yield b"--" + MJPEG_BOUNDARY.encode() + b"\r\nContent-Type: image/jpeg\r\n\r\n" + jpeg + b"\r\n"
            time.sleep(MJPEG_INTERVAL_SECONDS)

    return Response(stream_with_context(frames()), mimetype=f"multipart/x-mixed-replace; boundary={MJPEG_BOUNDARY}")


@bp.get("/live/frames/<frame_id>.jpg")
def cached_frame(frame_id: str) -> Response:
    """A recent frame by its id (the picture a reading came from), to correct it over a still image."""
    frame = service().frame(frame_id)
    if frame is None:
        raise ApiError(404, "that frame is no longer kept")
    return Response(frame.jpeg, mimetype="image/jpeg", headers={"Cache-Control": "private, max-age=60"})


@bp.get("/live/camera/reading")
def camera_reading() -> Response:
    return jsonify(camera().reading())


def attach_camera(app: Flask, source: str, players: int = 2) -> ServerCamera:
    """Start reading a server-side camera for this app (``okgin serve --camera``)."""
    attached = ServerCamera(app, source, players)
    app.extensions["okgin_camera"] = attached
    attached.start()
    return attached
