"""The live table: the match page, frames posted by the browser's camera, and the optional server camera.

Browser camera: the page posts a JPEG a few times a second (one request in flight, newest frame wins);
each table (browser session, and the page's own ``?camera=`` id: two tabs of one browser share a session) has
its own stabilising pipeline, which reads that table's frames one at a time (``FrameTurn``). Server camera
(``okgin serve --camera``): a thread reads the camera, the vision ``LatestFrameWorker`` runs the pipeline on the
newest frame only, and the page shows ``/live/camera.mjpg`` with the reading polled from ``/live/camera/reading``.

A camera stream holds a server thread for as long as it is watched, so at most ``STREAM_LIMIT``
viewers stream at once (``okgin serve`` allows a quarter of its threads) and the next is answered
503: streams can never take every thread from the score sheet and the API. A stream ends when its
viewer leaves (the server reports the closed connection; elsewhere a frame is re-sent every few
seconds, and the write fails) and when the camera ends, after its last frame.
"""

from __future__ import annotations

import collections
import contextlib
import re
import secrets
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any, cast

from flask import Blueprint, Flask, Response, current_app, jsonify, render_template, request, session

from scorer.errors import shown
from scorer.vision.groups import group_reading, groups_json
from scorer.vision.layout import UPCARD, LayoutError, TableLayout
from scorer.vision.manifest import ModelError
from scorer.vision.types import FrameReading, StableReading
from web import matches
from web.api import decode, json_body, players_arg, uploaded_image
from web.detection import QUEUE_WAIT_SECONDS, detections_json, service, table_layout, unavailable
from web.errors import ApiError
from web.fields import MAX_ROW_ID
from web.laydown import name_seats
from web.request_json import pixel
from web.security import client_key

bp = Blueprint("live", __name__)

MJPEG_BOUNDARY = "okginframe"
MJPEG_INTERVAL_SECONDS = 0.1
MJPEG_RESEND_SECONDS = 2.0  # with no new frame, the last one again: a viewer that left is noticed on the write
FILE_FRAME_SECONDS = 1 / 15
TRACKED_FRAMES = 64
CAMERA_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A page's own camera id (``/live/frame?camera=``): a short token, as the table page makes one per page load."""


@bp.get("/matches/<int:match_id>")
def table(match_id: int) -> str:
    """The table page: camera or typed hands, the proposed result, and the score sheet beside it.

    The page is told which seat zone of the camera picture each player sits at (the layout's playing order).
    """
    record = matches.load_match(match_id)
    players = record.match.players
    seating = layout_for(len(players)).seating(players)
    with record.turn():
        return render_template(
            "table.html",
            match=record.to_dict(),
            seating=seating,
            actions=True,
            server_camera=current_app.extensions.get("okgin_camera") is not None,
        )


def layout_for(players: int) -> TableLayout:
    """The table layout for this many players; 400 when the configured layout has too few seats."""
    try:
        layout: TableLayout = table_layout(players)
        layout.seating(["?"] * players)
    except LayoutError as error:
        raise ApiError(400, str(error)) from error
    return layout


def match_players() -> list[str] | None:
    """The players of ``?match=ID`` (in playing order), or None without it.

    :raises ApiError: 400 for an id that is not a number.
    """
    value = request.args.get("match")
    if value is None:
        return None
    if not value.isascii() or not value.isdigit():
        raise ApiError(400, f"match must be a match id (a number), got {shown(value)}")
    digits = value.lstrip("0") or "0"
    if len(digits) > len(str(MAX_ROW_ID)):  # no match has it; int() refuses more than 4,300 digits (a 500)
        raise matches.NotFoundError(f"no match with id {shown(value)}")
    return list(matches.load_match(int(digits)).match.players)


def table_json(reading: FrameReading, layout: TableLayout, players: list[str]) -> dict[str, Any]:
    """A reading as the table page shows it: each player's cards, the upcard, and the cards out of play.

    The layout decides: its playing order gives seats to players, the surest card of the upcard zone is
    the upcard (the others are out of play, like the stock, discards and seats nobody sits at). ``groups``
    are each player's cards as they lie together (``scorer.vision.groups``): a laid meld is one group.
    """
    seating = layout.seating(players)
    by_zone = {int(seat["zone"]): seat["player"] for seat in seating}
    taken = set(by_zone)
    groups = groups_json(group_reading(reading))
    upcard, *extra = reading.upcard or (None,)
    out = [*extra, *reading.unassigned]
    out += [card for seat, cards in reading.by_player.items() if seat not in taken for card in cards]
    return {
        "hands": {seat["player"]: detections_json(reading.by_player.get(int(seat["zone"]), ())) for seat in seating},
        "upcard": None if upcard is None else upcard.to_dict(),
        "out": detections_json([card for card in out if card is not None]),
        "groups": {seat["player"]: groups.get(seat["zone"], []) for seat in seating},
        # the reading's conflicts as the players hear them: "Cat shows 11 cards", not "seat 3 shows 11 cards"
        "conflicts": [{**c.to_dict(), "reason": name_seats(c.reason, by_zone)} for c in reading.conflicts],
    }


def camera_arg() -> str | None:
    """The page's own camera id (``?camera=ID``), or None without it (a client that sends none: one per session).

    :raises ApiError: 400 for an id that is not a short token of letters, digits, ``_`` or ``-``.
    """
    camera_id = request.args.get("camera")
    if camera_id is not None and not CAMERA_ID.fullmatch(camera_id):
        raise ApiError(400, f"camera must be a short id (1 to 64 letters, digits, _ or -), got {shown(camera_id)}")
    return camera_id


def camera_key(camera_id: str | None) -> str:
    """The table a frame belongs to: the browser session's, and with a camera id that page's camera of it.

    Two tabs of one browser share the session cookie; each table page sends its own id, so two cameras (on two
    matches, or one match) never mix their readings. The places the server follows stay counted per client address
    (``web.detection.TABLES_PER_ADDRESS``), so new ids take no more of them than new cookies do.
    """
    table_id = session.get("table")
    if not isinstance(table_id, str):
        table_id = session["table"] = secrets.token_hex(8)
    return table_id if camera_id is None else f"{table_id}/{camera_id}"


@bp.post("/live/frame")
def frame() -> Response:
    """One browser camera frame through this table's pipeline: cards per seat, stable or not, a frame id.

    A frame the detector declines (blurred: a camera moving) answers the reading as the frames before it left it,
    ``"unread"`` saying why in the players' words, and no frame id.

    With ``?match=ID`` the answer also has ``"table"``: the cards given to that match's players (``table_json``).
    The query is checked before any work: a bad count, match or camera id is refused before decoding and inference.
    """
    camera_id = camera_arg()
    players = match_players()
    count = players_arg() if players is None else len(players)
    layout = layout_for(count)
    data = uploaded_image()
    image = decode(data)
    table_id = camera_key(camera_id)
    pipeline = service().pipeline(table_id, count, client_key(request.remote_addr))
    with frame_turn(pipeline).taken(float(current_app.config.get("DETECT_WAIT_SECONDS", QUEUE_WAIT_SECONDS))):
        stable = pipeline.process(image, time.monotonic())  # timed in its turn: the pipeline sees frames in order
    height, width = image.shape[:2]
    # kept as sent (a JPEG, PNG, WEBP, BMP or TIFF file); a frame not read is not: no reading came from it to correct
    frame_id = None if stable.unread else service().remember_frame(data, width, height, table_id)
    extra = {} if players is None else {"table": table_json(stable.reading, layout, players)}
    return jsonify(frame_id=frame_id, **stable.to_dict(), **extra)


class FrameTurn:
    """One table's frames read one at a time, in turn: a table's pipeline (its stabiliser, its still-table check)
    holds the state of one stream of frames, and two frames of one table read at once raced it (a client posting in
    parallel; the page posts one at a time). At most one frame waits for the one being read, so that a table's frames
    hold no more of the server's threads than two (a third is answered 503 at once); tables never wait for each
    other."""

    def __init__(self) -> None:
        self._reading = threading.Lock()
        self._waiting = threading.Lock()

    @contextlib.contextmanager
    def taken(self, timeout: float) -> Iterator[None]:
        """This frame's turn, held for the ``with`` block, waited for at most ``timeout`` seconds.

        :raises ApiError: 503 when another of the table's frames waits already, or the turn does not come in time.
        """
        if not self._waiting.acquire(blocking=False):
            raise ApiError(503, "this camera's frames are read one at a time: send the next when one is answered")
        try:
            taken = self._reading.acquire(timeout=timeout)
        finally:
            self._waiting.release()
        if not taken:
            raise ApiError(503, "this camera's last frame is still being read; try again in a moment")
        try:
            yield
        finally:
            self._reading.release()


_FRAME_TURNS: weakref.WeakKeyDictionary[Any, FrameTurn] = weakref.WeakKeyDictionary()
"""Each table's turns, by its pipeline: they go with it when the table gives its place up."""
_FRAME_TURNS_LOCK = threading.Lock()


def frame_turn(pipeline: Any) -> FrameTurn:
    """The turns of the table whose pipeline is ``pipeline`` (``FrameTurn``)."""
    with _FRAME_TURNS_LOCK:
        turn = _FRAME_TURNS.get(pipeline)
        if turn is None:
            turn = _FRAME_TURNS[pipeline] = FrameTurn()
        return turn


@bp.post("/live/place")
def place() -> Response:
    """Where a box drawn on the picture lies: ``{"box": [x1, y1, x2, y2], "width", "height"}`` with ``?match=ID``.

    Answers ``{"player": NAME}``, ``{"upcard": true}`` or ``{"out": true}``, decided by the table layout.
    """
    players = match_players()
    if players is None:
        raise ApiError(400, "say which match the box is for: /live/place?match=ID")
    body = json_body()
    box, width, height = body.get("box"), body.get("width"), body.get("height")
    corners = [number for number in map(pixel, box) if number is not None] if isinstance(box, list) else []
    if len(corners) != 4 or not all(isinstance(v, int) and 0 < v <= 100_000 for v in (width, height)):
        raise ApiError(400, "send the box as [x1, y1, x2, y2] with the picture's width and height in pixels")
    assert isinstance(width, int) and isinstance(height, int)
    layout = layout_for(len(players))
    zone = layout.zone_of(((corners[0] + corners[2]) / 2 / width, (corners[1] + corners[3]) / 2 / height))
    if zone == UPCARD:
        return jsonify(upcard=True)
    for seat in layout.seating(players):
        if seat["zone"] == zone:
            return jsonify(player=seat["player"])
    return jsonify(out=True)


class ServerCamera:
    """A camera attached to the server, read in a thread; the pipeline runs on the newest frame only."""

    def __init__(self, app: Flask, source: str, players: int = 2) -> None:
        self._app = app
        self._source = source
        with app.app_context():
            self.layout: TableLayout = table_layout(players)
        self.stream_limit = int(app.config["STREAM_LIMIT"])
        self.streams = threading.BoundedSemaphore(self.stream_limit)
        self._finished = threading.Event()
        self._jpeg: bytes | None = None
        self._recent: collections.OrderedDict[float, tuple[bytes, int, int]] = collections.OrderedDict()
        self._processed_id: str | None = None
        self._error: str | None = None
        self._ended: str | None = None
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
                    pipeline = TablePipeline(detector, self.layout, Stabiliser())
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
                    self._ended = f"the table camera {self._source} has ended"
            except Exception as error:  # reported on the page instead of killing the server
                self._app.logger.exception("server camera %s stopped", self._source)
                with self._lock:
                    self._ended = f"the table camera {self._source} stopped: {error}"
            finally:
                if self._worker is not None:
                    self._worker.stop()
                self._finished.set()

    @property
    def ended(self) -> bool:
        """Whether the camera stopped for good (a file at its end, a camera that failed, or ``stop()``)."""
        return self._finished.is_set()

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

    def reading(self, players: list[str] | None = None) -> dict[str, Any]:
        """The newest stabilised reading and the id of the newest frame (for saving corrections).

        With ``players`` (a match's, in playing order) it also has ``"table"`` (``table_json``).
        A camera that has ended or failed answers 410 with ``"ended": true``, said once and for good.
        """
        with self._lock:
            error, ended, frame_id = self._error, self._ended, self._processed_id
        if ended:
            raise CameraEnded(ended)
        if error:
            raise ApiError(503, error)
        latest = None if self._worker is None else self._worker.latest()
        if latest is None:  # nothing read yet: an empty, unsettled reading
            return {"frame_id": frame_id, **StableReading(FrameReading(by_player={}), False, 0.0).to_dict()}
        extra = {} if players is None else {"table": table_json(latest.reading, self.layout, players)}
        return {"frame_id": frame_id, **latest.to_dict(), **extra}


class CameraEnded(ApiError):
    """The server camera stopped (a video file ended, a device failed): nothing more will come."""

    def __init__(self, message: str) -> None:
        super().__init__(410, message)


class _TrackingPipeline:
    """A pipeline that reports which frame (by timestamp) each reading came from (none for a frame not read)."""

    def __init__(self, pipeline: Any, on_processed: Callable[[float], None]) -> None:
        self._pipeline = pipeline
        self._on_processed = on_processed

    def process(self, frame_bgr: Any, timestamp: float) -> Any:
        result = self._pipeline.process(frame_bgr, timestamp)
        if result.unread is None:  # a frame not read: the reading, and so its frame, is an earlier one's
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
    """The server camera as an MJPEG stream (multipart/x-mixed-replace), about 10 frames a second.

    :raises ApiError: 410 when the camera has ended without a frame, 503 when ``STREAM_LIMIT`` viewers already watch.
    """
    attached = camera()
    if attached.ended and attached.snapshot() is None:
        attached.reading()  # raises the camera's error
    if not attached.streams.acquire(blocking=False):
        raise ApiError(
            503,
            f"the camera is already streamed to {attached.stream_limit} viewers, the most this server allows; "
            "close one of them (or use /live/camera.jpg)",
        )
    gone: Callable[[], bool] = request.environ.get("waitress.client_disconnected", lambda: False)
    stream = MjpegStream(attached, gone, attached.streams.release)
    return Response(stream, mimetype=f"multipart/x-mixed-replace; boundary={MJPEG_BOUNDARY}")


class MjpegStream:
    """The frames of one viewer's stream; ``close()`` (called by the server when the response ends) frees its slot."""

    def __init__(self, source: ServerCamera, gone: Callable[[], bool], release: Callable[[], None]) -> None:
        self._source = source
        self._gone = gone
        self._release: Callable[[], None] | None = release

    def __iter__(self) -> Iterator[bytes]:
        last: bytes | None = None
        sent_at = 0.0
        while self._release is not None and not self._gone():
            ended = self._source.ended  # read before the snapshot: a frame taken after it is the last one
            jpeg = self._source.snapshot()
            if jpeg is not None and (
                jpeg is not last or (not ended and time.monotonic() - sent_at > MJPEG_RESEND_SECONDS)
            ):
                last, sent_at = jpeg, time.monotonic()
                yield b"--" + MJPEG_BOUNDARY.encode() + b"\r\nContent-Type: image/jpeg\r\n\r\n" + jpeg + b"\r\n"
            elif ended:
                return  # the camera is over and its last frame was sent
            time.sleep(MJPEG_INTERVAL_SECONDS)

    def close(self) -> None:
        release, self._release = self._release, None
        if release is not None:
            release()


@bp.get("/live/frames/<frame_id>.jpg")
def cached_frame(frame_id: str) -> Response:
    """A recent frame by its id (the picture a reading came from), to correct it over a still image."""
    frame = service().frame(frame_id)
    if frame is None:
        raise ApiError(404, "that frame is no longer kept")
    return Response(frame.encoded, mimetype=frame.mimetype, headers={"Cache-Control": "private, max-age=60"})


@bp.get("/live/camera/reading")
def camera_reading() -> Response:
    """The server camera's newest reading; ``?match=ID`` adds the cards given to that match's players."""
    players = match_players()
    attached = camera()
    seats = len(attached.layout.seats)
    if players is not None and len(players) > seats:
        raise ApiError(409, f"the table camera was started for {seats} players, not {len(players)}")
    return jsonify(attached.reading(players))


def attach_camera(app: Flask, source: str, players: int = 2) -> ServerCamera:
    """Start reading a server-side camera for this app (``okgin serve --camera``)."""
    attached = ServerCamera(app, source, players)
    app.extensions["okgin_camera"] = attached
    attached.start()
    return attached
