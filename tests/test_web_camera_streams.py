"""``/live/camera.mjpg`` behind the real server: a bounded number of viewers that can never starve the API,
streams that end with the camera, and slots freed when a viewer leaves (issue 11)."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
import web_fixtures
from flask import Flask

from web.live import ServerCamera, attach_camera
from web.server import ServerLimits, build_server

LIMITS = ServerLimits(threads=8, idle_timeout=5, stall_timeout=2.0)
STREAM_LIMIT = 2


def write_video(path: Path, frames: int) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 15, (160, 90))
    for shade in range(frames):
        writer.write(np.full((90, 160, 3), (30, 60 + shade % 150, 30), np.uint8))
    writer.release()
    return path


class Served:
    def __init__(self, app: Flask) -> None:
        self.server = build_server(app, "127.0.0.1", 0, LIMITS)
        self.port = self.server.addresses[0][1]
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()

    def get(self, path: str, timeout: float = 5) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request("GET", path)
            answer = connection.getresponse()
            return answer.status, answer.read()
        finally:
            connection.close()

    def open_stream(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        sock.sendall(b"GET /live/camera.mjpg HTTP/1.1\r\nHost: localhost\r\n\r\n")
        head = sock.recv(4096)
        assert head.startswith(b"HTTP/1.1 200"), head[:200]
        return sock

    def stop(self) -> None:
        self.server.close()
        self.thread.join(10)


def camera_app(tmp_path: Path, frames: int) -> tuple[Flask, ServerCamera]:
    from web import create_app

    app = create_app(
        {"DATA_DIR": str(tmp_path / "data"), "DETECTOR": web_fixtures.FakeDetector(), "STREAM_LIMIT": STREAM_LIMIT}
    )
    camera = attach_camera(app, str(write_video(tmp_path / "table.avi", frames)))
    deadline = time.monotonic() + 10
    while camera.snapshot() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert camera.snapshot() is not None
    return app, camera


@pytest.fixture
def long_camera(tmp_path: Path) -> Iterator[tuple[Served, ServerCamera]]:
    app, camera = camera_app(tmp_path, frames=600)  # 40 s at 15 fps: outlives the test
    served = Served(app)
    yield served, camera
    camera.stop()
    served.stop()


def test_viewers_beyond_the_limit_are_refused_and_the_api_stays_up(long_camera: tuple[Served, ServerCamera]) -> None:
    served, _ = long_camera
    viewers = [served.open_stream() for _ in range(STREAM_LIMIT)]
    status, body = served.get("/live/camera.mjpg")
    assert status == 503 and b"already streamed to 2 viewers" in body
    for _ in range(8):  # what once hung every route: the threads all held by streams
        started = time.perf_counter()
        assert served.get("/api/matches")[0] == 200
        assert served.get("/")[0] == 200
        assert time.perf_counter() - started < 3
    for viewer in viewers:
        viewer.close()


def test_a_viewer_that_leaves_frees_its_slot(long_camera: tuple[Served, ServerCamera]) -> None:
    served, camera = long_camera
    viewers = [served.open_stream() for _ in range(STREAM_LIMIT)]
    viewers.pop().close()
    deadline = time.monotonic() + 5
    while not camera.streams.acquire(blocking=False):  # the slot comes back once the server sees the close
        assert time.monotonic() < deadline, "the slot of a viewer that left was never freed"
        time.sleep(0.05)
    camera.streams.release()
    viewers.append(served.open_stream())
    for viewer in viewers:
        viewer.close()


def test_streams_end_when_the_camera_ends(tmp_path: Path) -> None:
    app, camera = camera_app(tmp_path, frames=20)  # about 1.3 s of video
    served = Served(app)
    try:
        viewer = served.open_stream()
        viewer.settimeout(10)
        received = b""
        started = time.monotonic()
        while chunk := viewer.recv(65536):  # the server ends the response (chunked) after the last frame
            received += chunk
            if received.endswith(b"0\r\n\r\n"):
                break
        assert received.count(b"--okginframe") >= 1 and time.monotonic() - started < 10
        assert camera.ended
        for _ in range(STREAM_LIMIT):  # every slot is free again
            assert camera.streams.acquire(blocking=False)
        for _ in range(STREAM_LIMIT):
            camera.streams.release()
        status, body = served.get("/live/camera.mjpg")  # the last frame, then the end
        assert status == 200 and body.count(b"--okginframe") == 1
        viewer.close()
    finally:
        camera.stop()
        served.stop()


def test_a_camera_that_ended_without_a_frame_says_why(tmp_path: Path) -> None:
    from web import create_app

    app = create_app({"DATA_DIR": str(tmp_path / "data"), "DETECTOR": web_fixtures.FakeDetector()})
    missing = attach_camera(app, str(tmp_path / "no-such-video.avi"))
    deadline = time.monotonic() + 10
    while not missing.ended and time.monotonic() < deadline:
        time.sleep(0.02)
    answer = app.test_client().get("/live/camera.mjpg")
    assert answer.status_code == 410 and "no-such-video.avi" in answer.json["error"]


def test_detections_beyond_the_queue_never_hold_threads(tmp_path: Path) -> None:
    """16 slow detections at once: the queue's worth wait, the rest are told 503 at once, the API stays up."""
    from concurrent.futures import ThreadPoolExecutor

    from web import create_app

    class SlowDetector(web_fixtures.FakeDetector):
        def detect(self, image_bgr: np.ndarray) -> object:
            time.sleep(0.3)
            return super().detect(image_bgr)

    app = create_app({"DATA_DIR": str(tmp_path / "data"), "DETECTOR": SlowDetector(), "DETECT_QUEUE": 2})
    served = Served(app)
    try:

        def detect() -> tuple[int, float]:
            started = time.perf_counter()
            connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
            connection.request(
                "POST", "/api/detect", body=web_fixtures.jpeg(64, 64), headers={"Content-Type": "image/jpeg"}
            )
            status = connection.getresponse().status
            connection.close()
            return status, time.perf_counter() - started

        with ThreadPoolExecutor(16) as pool:
            answers = [pool.submit(detect) for _ in range(16)]
            time.sleep(0.1)
            started = time.perf_counter()
            assert served.get("/api/matches")[0] == 200
            assert time.perf_counter() - started < 1  # not behind 16 detections
            results = [answer.result() for answer in answers]
        statuses = sorted(status for status, _ in results)
        assert statuses.count(200) >= 3 and statuses.count(503) >= 8
        assert max(elapsed for status, elapsed in results if status == 503) < 1  # refused at once
    finally:
        served.stop()
