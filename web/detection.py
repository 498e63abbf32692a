"""The detector as the web app shares it: built lazily, one network run at a time, a bounded queue.

The model is loaded on the first detection request (unless a test passes ``DETECTOR``), so the server
starts in a second and ``okgin serve`` without weights still serves the score sheet and typed hands.
The networks run one at a time (the backends already use every core), and the frames being read take turns
run by run (``Turns``), so a frame that costs many runs holds up no other; requests beyond ``DETECT_QUEUE``
waiting ones are refused instead of piling up. The service raises what went wrong (``ModelError``, ``DetectorBusy``,
``TablesFull``); ``init_app`` maps them to 503 answers at the edge.

Each table (browser session) has its own camera state: its pipelines and its most recent frames, bounded per
table, so a table posting fast pushes out only its own frames. At most ``TABLES_KEPT`` tables are followed; a new
table takes the place of one that has gone quiet (or never came back after its first frame), never of one that is
posting, and is refused (503) when there is none. One client address holds at most ``TABLES_PER_ADDRESS`` of the
places: its next new table takes the place of its own least recently posting one, so a client that makes a new table
with every cookie it drops cannot fill the places that other tables need.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from flask import Flask, current_app

from scorer.vision.backends import CROPS_PER_RUN, BoxModel, CropModel
from scorer.vision.detector import CardDetector
from scorer.vision.manifest import ModelError
from scorer.vision.types import CardDetection, Detector, FrameReading, LiveDetector
from web.errors import error_response

FRAME_CACHE_SIZE = 24
"""The most recent frames kept per table (and for the server camera), for corrections."""
FRAME_CACHE_BYTES = 24 * 1024 * 1024
"""The most bytes of frames kept per table; its newest frame is always kept (an upload is at most 10 MB)."""
TABLES_KEPT = 8
"""Tables whose camera state (pipelines, recent frames) the server keeps at once."""
TABLES_PER_ADDRESS = 2
"""The places one client address may hold. A phone or laptop at the table is one browser session, so one table; a
second browser on it (or a private window) makes two. A client that makes more (a new cookie, so a new table, for each
frame) only replaces its own: with 8 places, 6 stay for the other addresses. On a LAN each device has its own address;
the server's own machine (loopback) is not counted, as it needs no PIN either, so a proxy or tunnel on this machine,
which shows every table as 127.0.0.1, keeps all the places. An IPv6 device counts by its /64, as it may take any
address of it (``web.security.client_key``). The address is the connection's (``remote_addr``):
``X-Forwarded-For`` is not read, as any client could write one, so a proxy on another machine gets 2 places."""
TABLE_IDLE_SECONDS = 120.0
"""A table that has posted no frame for this long may give its place to a new table (its frames go with it)."""
QUEUE_WAIT_SECONDS = 20.0
FRAMES_READ_AT_ONCE = 3
"""Frames (and photos) being read at once, their network runs taking turns; the others wait for a place. Each holds
its crops while it waits for a turn, so memory stays bounded whatever the clients send."""
BUSY = "the card detector is busy; try again in a moment"


class Turns:
    """The network runs of the frames being read, one at a time and in the order asked for: a frame asking for its
    next run after its last one waits behind the runs already asked for. A sharp keyboard under the camera cost
    7,992 classifier crops (10 s of two cores), while a table of plain cards waiting behind it needs some 200;
    taking turns, that table is read between two of the keyboard's runs. (``threading.Lock`` wakes any waiter,
    and the frame that just ran may take it again at once.)"""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._asked: collections.deque[object] = collections.deque()
        self._running = False

    def take(self, timeout: float) -> bool:
        """Wait for this caller's turn, at most ``timeout`` seconds; whether it came."""
        mine = object()
        deadline = time.monotonic() + timeout
        with self._changed:
            self._asked.append(mine)
            try:
                while self._running or self._asked[0] is not mine:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._changed.wait(left)
            except BaseException:  # interrupted while waiting: its place goes, and the next runs
                self._leave(mine)
                raise
            if self._running or self._asked[0] is not mine:  # the wait ran out
                self._leave(mine)
                return False
            self._asked.popleft()
            self._running = True
            return True

    def _leave(self, mine: object) -> None:
        """Give up a place in the line (the condition's lock held), waking the next, who may be first now."""
        self._asked.remove(mine)
        self._changed.notify_all()

    def give(self) -> None:
        """End the turn taken."""
        with self._changed:
            self._running = False
            self._changed.notify_all()

    @contextlib.contextmanager
    def turn(self, timeout: float) -> Iterator[None]:
        """A turn held for the ``with`` block.

        :raises DetectorBusy: when none came within ``timeout`` seconds.
        """
        if not self.take(timeout):
            raise DetectorBusy(BUSY)
        try:
            yield
        finally:
            self.give()


class _TakingTurns:
    """One of the detector's networks, each run of it taking a turn (``Turns``); crops are run ``CROPS_PER_RUN``
    at a time, so a frame's long batch is many turns, not one."""

    def __init__(self, network: Any, turns: Turns, wait_seconds: float, crops: bool) -> None:
        self._network, self._turns, self._wait_seconds, self._crops = network, turns, wait_seconds, crops

    def predict(self, *args: Any, **kwargs: Any) -> Any:
        if not self._crops or not args or len(args[0]) <= CROPS_PER_RUN:
            return self._run(*args, **kwargs)
        crops = args[0]
        parts = [self._run(crops[start : start + CROPS_PER_RUN]) for start in range(0, len(crops), CROPS_PER_RUN)]
        return np.concatenate(parts)

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        with self._turns.turn(self._wait_seconds):
            return self._network.predict(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # the network's other methods (input_size, ...)
        return getattr(self._network, name)


class DetectorBusy(RuntimeError):
    """More frames wait for the detector than the queue holds, or one waited too long."""


class TablesFull(RuntimeError):
    """A new table's frame, while ``TABLES_KEPT`` tables are all posting: none of them is pushed out for it."""


@dataclass
class _Table:
    """One table's camera state: its pipelines by player count and the ids of its recent frames (oldest first)."""

    last_seen: float
    address: str | None = None
    frames_posted: int = 0
    pipelines: dict[int, Any] = field(default_factory=dict)
    frames: collections.OrderedDict[str, int] = field(default_factory=collections.OrderedDict)
    frame_bytes: int = 0


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
    """Owns the detector, and each table's pipelines and recent frames, for one app."""

    def __init__(self, detector: Detector | None, model_dir: str | None, queue_limit: int, wait_seconds: float) -> None:
        self._wait_seconds = wait_seconds
        self._model_dir = model_dir
        self._build_lock = threading.Lock()
        self._turns = Turns()
        self._reading = threading.BoundedSemaphore(FRAMES_READ_AT_ONCE)
        self._detector = self._share_networks(detector) if isinstance(detector, CardDetector) else detector
        self._slots = threading.BoundedSemaphore(queue_limit + 1)
        self._tables: collections.OrderedDict[str, _Table] = collections.OrderedDict()  # least recently posting first
        self._server_frames = _Table(last_seen=0.0)  # the server camera's (and frames kept for no table)
        self._frames: dict[str, CachedFrame] = {}
        self._stems: dict[str, str] = {}
        self._tables_lock = threading.Lock()

    def detector(self) -> Detector:
        """The detector, loading the model on first use.

        :raises ModelError: naming the missing or broken model.
        """
        with self._build_lock:
            if self._detector is None:
                self._detector = self._share_networks(CardDetector(self._model_dir))
            return self._detector

    def _share_networks(self, detector: CardDetector) -> CardDetector:
        """A copy of ``detector`` (the caller's is left as it was) with each of its networks' runs taking a turn
        (``Turns``) with the other frames'."""
        detector = copy.copy(detector)
        wait = self._wait_seconds
        detector.boxes = cast(BoxModel, _TakingTurns(detector.boxes, self._turns, wait, crops=False))
        if detector.classifier is not None:
            detector.classifier = cast(CropModel, _TakingTurns(detector.classifier, self._turns, wait, crops=True))
        detector.veto_classifiers = [
            cast(CropModel, _TakingTurns(veto, self._turns, wait, crops=True)) for veto in detector.veto_classifiers
        ]
        return detector

    def detect(self, image_bgr: np.ndarray, live: bool = False) -> Any:
        """Run one inference, queueing behind others; with ``live``, for a camera's frame, which the detector may
        decline (``LiveDetector``): session 44's blurred probe frame cost it 21 times a sharp one's time, and every
        other table waited for that (``scorer.vision.sharpness``).

        A request that finds the queue full is answered at once rather than waiting for a place: each
        waiting request holds a server thread, so the queue bounds how many threads detection can take.

        :raises DetectorBusy: when the queue is full or the wait too long.
        :raises ModelError: when there is no usable model.
        :raises FrameNotRead: for a live frame the detector declines.
        """
        detector = self.detector()
        read = detector.detect_live if live and isinstance(detector, LiveDetector) else detector.detect
        if not self._slots.acquire(blocking=False):
            raise DetectorBusy(BUSY)
        try:
            if not self._reading.acquire(timeout=self._wait_seconds):
                raise DetectorBusy(BUSY)
            try:
                if isinstance(detector, CardDetector):  # its networks take turns (``_share_networks``)
                    return read(image_bgr)
                with self._turns.turn(self._wait_seconds):  # a detector given whole (a test's): one turn a read
                    return read(image_bgr)
            finally:
                self._reading.release()
        finally:
            self._slots.release()

    def pipeline(self, table: str, players: int, address: str | None = None) -> Any:
        """The stabilising pipeline of one table (browser session) and player count, for its next frame.

        ``address`` is the client's (None: not counted, the server's own machine): it holds at most
        ``TABLES_PER_ADDRESS`` places.

        :raises TablesFull: for a new table while ``TABLES_KEPT`` others are all posting.
        """
        with self._tables_lock:
            state = self._admit(table, address)
            state.frames_posted += 1
            pipeline = state.pipelines.get(players)
        if pipeline is None:
            from scorer.vision.pipeline import TablePipeline
            from scorer.vision.stabilise import Stabiliser

            built = TablePipeline(_GatedDetector(self), table_layout(players), Stabiliser())
            with self._tables_lock:
                pipeline = state.pipelines.setdefault(players, built)
        return pipeline

    def _admit(self, table: str, address: str | None) -> _Table:
        """The table's state, made now for a new table in the place of its address's own least recently posting
        table when that address holds ``TABLES_PER_ADDRESS``, else of one that went quiet or never came back."""
        now = time.monotonic()
        state = self._tables.get(table)
        if state is None:
            own = [key for key, other in self._tables.items() if other.address == address] if address else []
            if len(own) >= TABLES_PER_ADDRESS:  # least recently posting first: its quietest give way
                for quietest in own[: len(own) - TABLES_PER_ADDRESS + 1]:
                    self._forget_table(quietest)
            elif len(self._tables) >= TABLES_KEPT:
                leaving = next(
                    (
                        key
                        for key, other in self._tables.items()  # least recently posting first
                        if other.frames_posted <= 1 or now - other.last_seen > TABLE_IDLE_SECONDS
                    ),
                    None,
                )
                if leaving is None:
                    raise TablesFull(
                        f"the server follows the cameras of {TABLES_KEPT} tables at once, and all are in use;"
                        " try again in a minute or two, or type the cards"
                    )
                self._forget_table(leaving)
            state = self._tables[table] = _Table(last_seen=now)
        state.last_seen, state.address = now, address  # a table keeps its place when its device's address changes
        self._tables.move_to_end(table)
        return state

    def _forget_table(self, table: str) -> None:
        for frame_id in self._tables.pop(table).frames:
            self._frames.pop(frame_id, None)
            self._stems.pop(frame_id, None)

    def remember_frame(self, encoded: bytes, width: int, height: int, table: str | None = None) -> str:
        """Keep a frame of ``table`` (None: the server camera's) for a later correction; return its new id.

        The table keeps its ``FRAME_CACHE_SIZE`` most recent frames, within ``FRAME_CACHE_BYTES``. A table that
        lost its place since its frame was read keeps nothing (a correction of that frame answers 404).
        """
        frame_id = secrets.token_hex(8)
        with self._tables_lock:
            state = self._server_frames if table is None else self._tables.get(table)
            if state is None:
                return frame_id
            self._frames[frame_id] = CachedFrame(encoded, width, height)
            state.frames[frame_id] = len(encoded)
            state.frame_bytes += len(encoded)
            while len(state.frames) > FRAME_CACHE_SIZE or (
                state.frame_bytes > FRAME_CACHE_BYTES and len(state.frames) > 1
            ):
                dropped, size = state.frames.popitem(last=False)
                state.frame_bytes -= size
                self._frames.pop(dropped, None)
                self._stems.pop(dropped, None)
        return frame_id

    def frame(self, frame_id: str) -> CachedFrame | None:
        with self._tables_lock:
            return self._frames.get(frame_id)

    def example_stem(self, frame_id: str, make: Callable[[], str]) -> str:
        """The file stem of a frame's training example: made once, so later corrections overwrite it."""
        with self._tables_lock:
            stem = self._stems.get(frame_id)
            if stem is None:
                stem = make()
                if frame_id in self._frames:  # kept while the frame is
                    self._stems[frame_id] = stem
            return stem


class _GatedDetector:
    """The shared detector seen through the service's queue, for pipelines: their frames are a camera's."""

    def __init__(self, service: DetectorService) -> None:
        self._service = service

    def detect(self, image_bgr: np.ndarray) -> Any:
        return self._service.detect(image_bgr)

    def detect_live(self, image_bgr: np.ndarray) -> Any:
        return self._service.detect(image_bgr, live=True)


def service(app: Flask | None = None) -> DetectorService:
    """The app's detector service."""
    target = app if app is not None else current_app
    detector_service: DetectorService = target.extensions["okgin_detector"]
    return detector_service


def init_app(app: Flask) -> None:
    """Give the app its detector service, and answer its errors 503 (the server is fine, recognition is not)."""
    app.register_error_handler(ModelError, lambda error: error_response(503, unavailable(error)))
    app.register_error_handler(DetectorBusy, lambda error: error_response(503, str(error)))
    app.register_error_handler(TablesFull, lambda error: error_response(503, str(error)))
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
