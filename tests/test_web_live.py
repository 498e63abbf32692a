"""Camera frames and detections: /api/detect, /live/frame, click-to-correct saving, upload limits."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import pytest
import web_fixtures
from flask import Flask
from flask.testing import FlaskClient
from web_fixtures import ANN, BOB, FakeDetector, jpeg

from scorer.cards import CLASS_NAMES, Card
from scorer.vision.types import Conflict, Detections

app, client, detector = web_fixtures.app, web_fixtures.client, web_fixtures.detector
SCRIPT = {"X-Requested-With": "test"}


def test_detect_a_multipart_image(client: FlaskClient, detector: FakeDetector) -> None:
    answer = client.post("/api/detect", data={"image": (jpeg_file(), "table.jpg")}, headers=SCRIPT)
    assert answer.status_code == 200, answer.json
    assert sorted(c["card"] for c in answer.json["cards"]) == sorted(ANN.split() + BOB.split())
    assert sorted(c["card"] for c in answer.json["zones"]["1"]) == sorted(ANN.split())
    assert sorted(c["card"] for c in answer.json["zones"]["2"]) == sorted(BOB.split())
    assert answer.json["conflicts"] == []
    assert set(answer.json["cards"][0]) == {"card", "confidence", "box"}
    assert detector.calls == 1


def test_detect_reports_each_detector_conflict_once(client: FlaskClient, detector: FakeDetector) -> None:
    detector.conflicts = (Conflict(Card.parse("QH"), "QH seen twice, far apart"),)
    answer = client.post("/api/detect", data={"image": (jpeg_file(), "table.jpg")}, headers=SCRIPT)
    assert answer.json["conflicts"] == [{"card": "QH", "reason": "QH seen twice, far apart"}]


def test_detect_a_raw_jpeg_body(client: FlaskClient) -> None:
    answer = client.post("/api/detect", data=jpeg(), content_type="image/jpeg")
    assert answer.status_code == 200 and len(answer.json["cards"]) == 20
    assert (answer.json["width"], answer.json["height"]) == (1280, 720)
    assert answer.json["notes"] == []


def test_detect_says_a_picture_of_several_is_read_by_its_first(client: FlaskClient) -> None:
    """A TIFF of several pages (an animated PNG or WebP alike) was read by its first page without a word."""
    import cv2

    pages = cv2.imencodemulti(".tiff", [np.full((72, 128, 3), 80, np.uint8)] * 3)[1].tobytes()
    answer = client.post("/api/detect", data=pages, content_type="image/tiff")
    assert answer.status_code == 200, answer.json
    assert answer.json["notes"] == ["a TIFF of 3 pages: only its first is read"]


@pytest.mark.parametrize(
    ("data", "content_type", "status", "message"),
    [
        (b"definitely not a picture", "image/jpeg", 400, "decode"),
        (b"", "image/jpeg", 400, "empty"),
        (
            b"{}",
            "application/json",
            415,
            "expected a body of application/octet-stream, image/bmp, image/jpeg, image/png",
        ),
        (b"GIF89a", "image/gif", 415, "expected a body of application/octet-stream, image/bmp, image/jpeg, image/png"),
    ],
)
def test_detect_refuses_what_is_not_an_image(
    client: FlaskClient, data: bytes, content_type: str, status: int, message: str
) -> None:
    answer = client.post("/api/detect", data=data, content_type=content_type)
    assert answer.status_code == status
    assert message in answer.json["error"]


def test_detect_without_the_image_field(client: FlaskClient) -> None:
    answer = client.post("/api/detect", data={"photo": (jpeg_file(), "x.jpg")}, headers=SCRIPT)
    assert answer.status_code == 400 and "'image'" in answer.json["error"]


def test_uploads_over_10_mb_answer_413_json(client: FlaskClient) -> None:
    answer = client.post("/api/detect", data=b"\xff" * (10 * 1024 * 1024 + 1), content_type="image/jpeg")
    assert answer.status_code == 413
    assert answer.json == {"error": "upload too large: the limit is 10 MB"}


def test_detect_without_a_model_is_503_naming_the_model(tmp_path: Path) -> None:
    from web import create_app

    app = create_app({"DATA_DIR": str(tmp_path), "MODEL_DIR": str(tmp_path / "no-model")})
    answer = app.test_client().post("/api/detect", data=jpeg(), content_type="image/jpeg")
    assert answer.status_code == 503
    assert "card recognition is unavailable" in answer.json["error"] and "no-model" in answer.json["error"]


def test_the_detector_service_raises_what_went_wrong_not_http(tmp_path: Path) -> None:
    from scorer.vision.manifest import ModelError
    from web.detection import DetectorBusy, DetectorService

    frame = np.zeros((72, 128, 3), np.uint8)
    with pytest.raises(ModelError, match="no-model"):  # no app, no request: a plain error the edge maps to 503
        DetectorService(None, str(tmp_path / "no-model"), queue_limit=0, wait_seconds=0.01).detect(frame)
    busy = DetectorService(FakeDetector([]), None, queue_limit=0, wait_seconds=0.01)
    busy._slots.acquire()  # one frame in inference, none may wait
    with pytest.raises(DetectorBusy, match="busy"):
        busy.detect(frame)


def test_network_runs_take_turns_in_the_order_asked() -> None:
    """The frame that just ran waits behind the runs asked for meanwhile; a wait that times out leaves the line."""
    import threading

    from web.detection import Turns

    turns, ran = Turns(), []
    assert turns.take(1)
    waiting = []
    for name in ("second", "third"):
        waiting.append(threading.Thread(target=lambda name=name: turns.take(5) and (ran.append(name), turns.give())))
        waiting[-1].start()
        time.sleep(0.05)  # asked in this order
    late = threading.Thread(target=lambda: ran.append("gave up") if not turns.take(0.01) else None)
    late.start()
    late.join()
    turns.give()
    assert turns.take(5)  # the first frame's next run: behind the two asked before it
    ran.append("first again")
    turns.give()
    for thread in waiting:
        thread.join(5)
    assert ran == ["gave up", "second", "third", "first again"]


def test_a_frame_that_costs_many_runs_holds_up_no_other(tmp_path: Path) -> None:
    """A sharp keyboard under the camera cost 7,992 classifier crops (10 s of two cores) and every other table
    waited for all of it: the frames now take turns run by run, so a plain table is read between the keyboard's."""
    import threading

    from conftest import shipped_model_or_skip

    from scorer.vision.boxes import FusedBoxes
    from scorer.vision.detector import CardDetector
    from web.detection import DetectorService

    runs: list[str] = []
    crops_read: dict[str, int] = {}

    class SlowUnsureClassifier:
        """Reads every crop as no card, unsurely (so every further reading is asked for), a run at a time."""

        def predict(self, crops: list[np.ndarray]) -> np.ndarray:
            runs.append(threading.current_thread().name)
            crops_read[runs[-1]] = crops_read.get(runs[-1], 0) + len(crops)
            time.sleep(0.0002 * len(crops))  # as a network takes longer the more it reads
            return np.full((len(crops), len(CLASS_NAMES) + 1), 1 / (len(CLASS_NAMES) + 1), np.float32)

    def boxes(count: int) -> FusedBoxes:
        xyxy = np.array([[10 + 20 * k, 10, 26 + 20 * k, 30] for k in range(count)], np.float32)
        return FusedBoxes.of((xyxy, np.full(count, 0.5, np.float32), np.zeros(count)))

    detector = CardDetector(shipped_model_or_skip(), backend="onnx")
    detector.find_boxes = lambda image: boxes(200 if image.mean() > 100 else 2)  # type: ignore[method-assign]
    detector.classifier = SlowUnsureClassifier()
    shared = DetectorService(detector, None, queue_limit=4, wait_seconds=30)
    keyboard, table = np.full((720, 1280, 3), 200, np.uint8), np.zeros((720, 1280, 3), np.uint8)
    heavy = threading.Thread(target=shared.detect, args=(keyboard,), name="keyboard")
    heavy.start()
    while "keyboard" not in runs:
        time.sleep(0.005)
    light = threading.Thread(target=shared.detect, args=(table,), name="table")
    light.start()
    light.join(30)
    heavy.join(30)
    assert crops_read["keyboard"] > 50 * crops_read["table"] > 0
    last = {name: max(index for index, ran in enumerate(runs) if ran == name) for name in crops_read}
    assert last["table"] < last["keyboard"] - 2, runs  # the table read between the keyboard's runs, not after them


def test_detect_bad_players_count(client: FlaskClient) -> None:
    answer = client.post("/api/detect?players=9", data=jpeg(), content_type="image/jpeg")
    assert answer.status_code == 400 and "players must be 2 to 4" in answer.json["error"]


def test_a_live_frame_is_read_per_seat_and_kept_for_corrections(client: FlaskClient) -> None:
    pytest.importorskip("scorer.vision.pipeline")
    answer = client.post("/live/frame?players=2", data=jpeg(), content_type="image/jpeg")
    assert answer.status_code == 200, answer.json
    reading = answer.json
    assert len(reading["frame_id"]) == 16 and reading["width"] == 1280
    assert reading["stable"] in (True, False)
    for _ in range(12):  # the stabiliser needs a run of agreeing frames
        reading = client.post("/live/frame?players=2", data=jpeg(), content_type="image/jpeg").json
    assert sorted(c["card"] for c in reading["zones"]["1"]) == sorted(ANN.split())


def test_a_blurred_live_frame_answers_the_reading_before_it_saying_why(tmp_path: Path) -> None:
    """A bumped camera's frame held the detector some 5 s, every other table waiting (session 44's live probe): the
    detector declines it, the page is told why in words with the reading as it stood, and no frame id, as no
    reading came from the frame. A photo sent to /api/detect is read however it looks."""
    import cv2

    from scorer.vision.sharpness import BLURRED
    from scorer.vision.types import FrameNotRead
    from web import create_app

    class ShakyCamera(FakeDetector):
        shaking = False

        def detect_live(self, image_bgr: np.ndarray) -> Detections:
            if self.shaking:
                raise FrameNotRead(BLURRED)
            return self.detect(image_bgr)

    detector = ShakyCamera(web_fixtures.table_detections())
    client = create_app({"TESTING": True, "DATA_DIR": str(tmp_path), "DETECTOR": detector}).test_client()
    for _ in range(12):
        before = client.post("/live/frame?players=2", data=jpeg(), content_type="image/jpeg").json
    assert "unread" not in before and len(before["zones"]["1"]) == 10
    detector.shaking = True
    smeared = cv2.imencode(".jpg", np.full((720, 1280, 3), (90, 90, 90), np.uint8))[1].tobytes()  # not the still table
    answer = client.post("/live/frame?players=2", data=smeared, content_type="image/jpeg")
    assert answer.status_code == 200, answer.json
    assert answer.json["unread"] == BLURRED == "the picture is blurred: hold the camera still"
    assert answer.json["frame_id"] is None
    assert {key: value for key, value in answer.json.items() if key not in ("unread", "frame_id")} == {
        key: value for key, value in before.items() if key != "frame_id"
    }
    calls = detector.calls
    photo = client.post("/api/detect", data=smeared, content_type="image/jpeg")
    assert len(photo.json["cards"]) == 20 and detector.calls == calls + 1


def corrected_cards(frame_id: str) -> dict:
    return {
        "frame_id": frame_id,
        "cards": [
            {"card": "QH", "box": [100, 50, 300, 250], "seat": "1", "detected": "QD"},
            {"card": "10S", "box": [-20, 400, 100, 800], "seat": "2"},
        ],
    }


def test_a_correction_is_saved_as_a_yolo_training_example(app: Flask, client: FlaskClient) -> None:
    from web.detection import service

    with app.app_context():
        frame_id = service().remember_frame(jpeg(1000, 500), 1000, 500)
    answer = client.post("/correct/examples", json=corrected_cards(frame_id))
    assert answer.status_code == 201, answer.json
    stem = answer.json["saved"]
    root = Path(app.config["CORRECTIONS_DIR"])
    assert (root / "images" / f"{stem}.jpg").read_bytes() == jpeg(1000, 500)
    lines = (root / "labels" / f"{stem}.txt").read_text().splitlines()
    assert lines[0] == f"{Card.parse('QH').class_id} 0.200000 0.300000 0.200000 0.400000"
    assert lines[1].split()[0] == str(Card.parse("10S").class_id)
    x_centre, y_centre, width, height = map(float, lines[1].split()[1:])  # clipped to the frame
    assert x_centre - width / 2 >= 0 and y_centre + height / 2 <= 1.0 + 1e-6
    meta = json.loads((root / "meta" / f"{stem}.json").read_text())
    assert meta["cards"][0] == {"card": "QH", "box": [100.0, 50.0, 300.0, 250.0], "seat": "1", "detected": "QD"}
    assert f"  51: {CLASS_NAMES[51]}" in (root / "data.yaml").read_text()


def test_correcting_the_same_frame_again_overwrites_its_example(app: Flask, client: FlaskClient) -> None:
    from web.detection import service

    with app.app_context():
        frame_id = service().remember_frame(jpeg(1000, 500), 1000, 500)
    first = client.post("/correct/examples", json=corrected_cards(frame_id)).json["saved"]
    again = corrected_cards(frame_id)
    again["cards"] = again["cards"][:1]
    second = client.post("/correct/examples", json=again).json["saved"]
    assert first == second
    root = Path(app.config["CORRECTIONS_DIR"])
    assert len((root / "labels" / f"{first}.txt").read_text().splitlines()) == 1
    assert len(list((root / "images").iterdir())) == 1


def test_a_full_corrections_folder_refuses_new_examples_and_keeps_the_saved_ones(
    app: Flask, client: FlaskClient
) -> None:
    from web.detection import service

    app.config["MAX_CORRECTIONS"] = 2
    with app.app_context():
        frames = [service().remember_frame(jpeg(1000, 500), 1000, 500) for _ in range(4)]
    saved = [client.post("/correct/examples", json=corrected_cards(frame_id)).json["saved"] for frame_id in frames[:2]]
    root = Path(app.config["CORRECTIONS_DIR"])
    before = {path: path.read_bytes() for path in root.rglob("*") if path.is_file()}
    refused = client.post("/correct/examples", json=corrected_cards(frames[2]))
    assert refused.status_code == 507
    assert refused.json["error"].startswith("the corrections folder is full: it holds 2 examples (")
    assert "keeps at most 2 (2.0 GB); this correction was not saved" in refused.json["error"]
    assert refused.json["error"].endswith(f"Move examples out of {root} (to train on them, say) to save more")
    assert {path: path.read_bytes() for path in root.rglob("*") if path.is_file()} == before  # none deleted or added
    again = corrected_cards(frames[0])
    again["cards"] = again["cards"][:1]
    assert client.post("/correct/examples", json=again).status_code == 201  # correcting a saved frame replaces it
    for folder, suffix in (("images", ".jpg"), ("labels", ".txt"), ("meta", ".json")):  # moved out, to train on
        (root / folder / f"{saved[1]}{suffix}").rename(root.parent / f"{saved[1]}{suffix}")
    assert client.post("/correct/examples", json=corrected_cards(frames[3])).status_code == 201


def test_the_corrections_folder_is_bounded_in_bytes(app: Flask, client: FlaskClient) -> None:
    from web.detection import service

    frame = jpeg(1000, 500)
    with app.app_context():
        frames = [service().remember_frame(frame, 1000, 500) for _ in range(3)]
    assert client.post("/correct/examples", json=corrected_cards(frames[0])).status_code == 201
    app.config["MAX_CORRECTIONS_BYTES"] = 2 * len(frame) - 1  # the images of two frames, less one byte
    refused = client.post("/correct/examples", json=corrected_cards(frames[1]))
    assert refused.status_code == 507 and "keeps at most 5000 (" in refused.json["error"]
    app.config["MAX_CORRECTIONS_BYTES"] = 2 * len(frame)
    assert client.post("/correct/examples", json=corrected_cards(frames[2])).status_code == 201


@pytest.mark.parametrize(
    ("change", "status", "message"),
    [
        ({"frame_id": "../../etc/passwd"}, 404, "no longer kept"),
        ({"frame_id": 12}, 404, "no longer kept"),
        ({"cards": [{"card": "ZZ", "box": [0, 0, 10, 10]}]}, 400, "unknown card 'ZZ'"),
        ({"cards": [{"card": "QH", "box": [0, 0, 10]}]}, 400, "[x1, y1, x2, y2]"),
        ({"cards": [{"card": "QH", "box": [50, 50, 10, 10]}]}, 400, "empty or outside"),
        ({"cards": [{"card": "QH", "box": [0, 0, 9, 9]}, {"card": "QH", "box": [20, 20, 40, 40]}]}, 400, "QH"),
        ({"cards": "QH"}, 400, "cards must be a list"),
    ],
)
def test_bad_corrections_are_refused(app: Flask, client: FlaskClient, change: dict, status: int, message: str) -> None:
    from web.detection import service

    with app.app_context():
        frame_id = service().remember_frame(jpeg(100, 100), 100, 100)
    answer = client.post("/correct/examples", json=corrected_cards(frame_id) | change)
    assert answer.status_code == status
    assert message in answer.json["error"]
    assert not Path(app.config["CORRECTIONS_DIR"]).joinpath("images").exists()


def test_no_server_camera_means_404_with_the_fix(client: FlaskClient) -> None:
    answer = client.get("/live/camera/reading")
    assert answer.status_code == 404 and "--camera" in answer.json["error"]
    assert client.get("/live/camera.jpg").status_code == 404


def jpeg_file():
    import io

    return io.BytesIO(jpeg())


def test_a_server_camera_streams_frames_and_readings(app: Flask, client: FlaskClient, tmp_path: Path) -> None:
    import cv2

    from web.live import attach_camera

    video = tmp_path / "table.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 15, (1280, 720))
    for shade in range(60):
        writer.write(np.full((720, 1280, 3), (30, 80 + shade, 30), np.uint8))
    writer.release()
    camera = attach_camera(app, str(video))
    try:
        deadline = time.monotonic() + 10
        reading: dict = {}
        answer = None
        while time.monotonic() < deadline:
            answer = client.get("/live/camera/reading")
            if answer.status_code == 200 and answer.json["zones"].get("1"):
                reading = answer.json
                break
            time.sleep(0.05)
        assert reading, answer.json if answer else None
        assert sorted(c["card"] for c in reading["zones"]["1"]) == sorted(ANN.split())
        still = client.get(f"/live/frames/{reading['frame_id']}.jpg")  # the very frame the reading came from
        assert still.status_code == 200 and still.data[:2] == b"\xff\xd8"
        assert client.get("/live/frames/0123456789abcdef.jpg").status_code == 404
        snapshot = client.get("/live/camera.jpg")
        assert snapshot.mimetype == "image/jpeg" and snapshot.data[:2] == b"\xff\xd8"
        stream = client.get("/live/camera.mjpg", buffered=False)
        assert stream.mimetype == "multipart/x-mixed-replace"
        first = next(iter(stream.response))
        assert first.startswith(b"--okginframe\r\nContent-Type: image/jpeg")
        stream.close()
    finally:
        camera.stop()


def test_detections_beyond_the_queue_answer_503_busy(tmp_path: Path) -> None:
    import threading

    from web import create_app

    release = threading.Event()

    class SlowDetector(FakeDetector):
        def detect(self, image_bgr: np.ndarray) -> Detections:
            release.wait(5)
            return super().detect(image_bgr)

    app = create_app(
        {"DATA_DIR": str(tmp_path), "DETECTOR": SlowDetector(), "DETECT_QUEUE": 0, "DETECT_WAIT_SECONDS": 0.05}
    )
    first: dict = {}
    worker = threading.Thread(
        target=lambda: first.update(
            status=app.test_client().post("/api/detect", data=jpeg(), content_type="image/jpeg").status_code
        )
    )
    worker.start()
    time.sleep(0.2)  # the first request now holds the only slot
    busy = app.test_client().post("/api/detect", data=jpeg(), content_type="image/jpeg")
    release.set()
    worker.join(5)
    assert (busy.status_code, busy.json) == (503, {"error": "the card detector is busy; try again in a moment"})
    assert first == {"status": 200}


def test_a_server_camera_without_a_model_still_streams(tmp_path: Path) -> None:
    import cv2

    from web import create_app
    from web.live import attach_camera

    video = tmp_path / "table.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 15, (320, 180))
    for _ in range(60):
        writer.write(np.full((180, 320, 3), 90, np.uint8))
    writer.release()
    app = create_app({"DATA_DIR": str(tmp_path), "MODEL_DIR": str(tmp_path / "no-model")})
    camera = attach_camera(app, str(video))
    client = app.test_client()
    try:
        deadline = time.monotonic() + 10
        while camera.snapshot() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.get("/live/camera.jpg").status_code == 200
        reading = client.get("/live/camera/reading")
        assert reading.status_code == 503 and "card recognition is unavailable" in reading.json["error"]
    finally:
        camera.stop()


def test_a_live_frame_that_is_not_an_image_is_400(client: FlaskClient) -> None:
    answer = client.post("/live/frame", data=b"GIF89a broken", content_type="image/jpeg")
    assert answer.status_code == 400 and "decode" in answer.json["error"]
    assert client.post("/live/frame?players=1", data=jpeg(), content_type="image/jpeg").status_code == 400


def post_frame(client: FlaskClient) -> dict:
    answer = client.post("/live/frame?players=2", data=jpeg(), content_type="image/jpeg")
    assert answer.status_code == 200, answer.json
    reading: dict = answer.json
    return reading


def seen_by_ann(reading: dict) -> int:
    return len(reading["zones"]["1"])


def test_a_table_posting_fast_pushes_out_only_its_own_frames(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    from scorer.vision import stabilise
    from web.detection import FRAME_CACHE_SIZE

    monkeypatch.setattr(stabilise, "PAUSE_SECONDS", math.inf)  # the flood takes seconds: no pause of ours meant
    ours, flooding = app.test_client(), app.test_client()
    kept = [post_frame(ours)["frame_id"] for _ in range(3)]  # a fourth agreeing frame shows Ann's cards
    theirs = [post_frame(flooding)["frame_id"] for _ in range(FRAME_CACHE_SIZE + 16)]
    assert all(ours.get(f"/live/frames/{frame_id}.jpg").status_code == 200 for frame_id in kept)
    assert ours.post("/correct/examples", json=corrected_cards(kept[0])).status_code == 201
    assert flooding.get(f"/live/frames/{theirs[0]}.jpg").status_code == 404  # its own oldest went
    assert flooding.get(f"/live/frames/{theirs[-1]}.jpg").status_code == 200
    assert seen_by_ann(post_frame(ours)) == 10  # our camera's reading went on from where it was, not reset


def test_new_tables_never_push_out_tables_that_are_posting(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    from scorer.vision import stabilise
    from web import detection

    monkeypatch.setattr(stabilise, "PAUSE_SECONDS", math.inf)  # as above
    ours = app.test_client()
    kept = [post_frame(ours)["frame_id"] for _ in range(3)]
    no_cookies = app.test_client(use_cookies=False)  # a new table each time
    for _ in range(40):
        post_frame(no_cookies)  # they take each other's places, never ours
    assert all(ours.get(f"/live/frames/{frame_id}.jpg").status_code == 200 for frame_id in kept)
    assert seen_by_ann(post_frame(ours)) == 10
    for _ in range(detection.TABLES_KEPT - 1):  # every other place taken by a table that is posting
        other = app.test_client()
        post_frame(other)
        post_frame(other)
    refused = no_cookies.post("/live/frame?players=2", data=jpeg(), content_type="image/jpeg")
    assert refused.status_code == 503
    assert refused.json["error"].startswith("the server follows the cameras of 8 tables at once, and all are in use")
    assert ours.get(f"/live/frames/{kept[0]}.jpg").status_code == 200
    monkeypatch.setattr(detection, "TABLE_IDLE_SECONDS", 0.0)  # now every table has been quiet too long
    post_frame(no_cookies)  # takes the place of the table that posted least recently: ours
    assert ours.get(f"/live/frames/{kept[0]}.jpg").status_code == 404


@pytest.mark.parametrize(
    "flooder",
    ["192.168.1.66", "::ffff:192.168.1.66", "2001:db8:0:1::{n:x}"],
    ids=["ipv4", "ipv4-mapped", "ipv6-addresses-of-one-64"],
)
def test_one_address_holds_only_its_share_of_the_tables(app: Flask, flooder: str) -> None:
    """A client that drops its cookie after every second frame (a new table each time, posting) once took all 8
    places, and every new table of other players was refused; now it only ever replaces its own, whichever address of
    its IPv6 /64 it posts from."""
    from web import detection

    def table_at(address: str) -> FlaskClient:
        client = app.test_client()
        client.environ_base["REMOTE_ADDR"] = address
        return client

    ours = table_at("192.168.1.20")
    kept = [post_frame(ours)["frame_id"] for _ in range(2)]
    flooded = []
    for n in range(3 * detection.TABLES_KEPT):
        flooding = table_at(flooder.format(n=n + 1))
        post_frame(flooding)
        flooded.append(post_frame(flooding)["frame_id"])
    assert [ours.get(f"/live/frames/{frame_id}.jpg").status_code for frame_id in flooded[-3:]] == [404, 200, 200]
    others = [table_at(f"192.168.1.{30 + n}") for n in range(detection.TABLES_KEPT - detection.TABLES_PER_ADDRESS - 1)]
    for other in others:  # every new table at the table is followed
        post_frame(other)
        post_frame(other)
    flooding = table_at(flooder.format(n=999))  # still served: in the place of its own least recently posting table
    post_frame(flooding)
    post_frame(flooding)
    refused = table_at("192.168.1.99").post("/live/frame?players=2", data=jpeg(), content_type="image/jpeg")
    assert refused.status_code == 503 and "all are in use" in refused.json["error"]  # 8 tables posting: full
    assert all(ours.get(f"/live/frames/{frame_id}.jpg").status_code == 200 for frame_id in kept)


def test_frames_kept_for_a_table_are_bounded_in_bytes(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    from web import detection

    frame = jpeg()
    monkeypatch.setattr(detection, "FRAME_CACHE_BYTES", 3 * len(frame))
    ours = app.test_client()
    sent = [post_frame(ours)["frame_id"] for _ in range(5)]
    assert [ours.get(f"/live/frames/{frame_id}.jpg").status_code for frame_id in sent] == [404, 404, 200, 200, 200]


def test_each_page_of_one_browser_has_its_own_camera_reading(app: Flask) -> None:
    """Two tabs of one browser share the session: their cameras mixed their readings into one table (a probe saw 24
    of 30 readings "stable" mixtures). Each page now sends its own ``?camera=`` id and has its own reading."""
    browser = app.test_client()

    def post(camera: str) -> dict:
        answer = browser.post(f"/live/frame?players=2&camera={camera}", data=jpeg(), content_type="image/jpeg")
        assert answer.status_code == 200, answer.json
        reading: dict = answer.json
        return reading

    for _ in range(3):
        post("tab-1")
    assert seen_by_ann(post("tab-1")) == 10  # a fourth agreeing frame shows Ann's cards
    assert seen_by_ann(post("tab_2")) == 0  # the other tab's first frame: its own reading, not yet settled
    assert seen_by_ann(post("tab-1")) == 10


@pytest.mark.parametrize("camera", ["", "a b", "x" * 65, "tab/1", "ä"])
def test_a_camera_id_that_is_not_a_short_token_is_400_naming_it(client: FlaskClient, camera: str) -> None:
    query = {"players": 2, "camera": camera}
    answer = client.post("/live/frame", query_string=query, data=jpeg(), content_type="image/jpeg")
    assert answer.status_code == 400 and answer.json["error"].startswith("camera must be a short id")


def test_new_camera_ids_take_no_more_places_than_new_cookies(app: Flask) -> None:
    """A client sending a new camera id with every second frame only ever replaces its own places
    (``TABLES_PER_ADDRESS``), as one dropping its cookie does: the other addresses' tables are still followed."""
    from web import detection

    def at(address: str) -> FlaskClient:
        client = app.test_client()
        client.environ_base["REMOTE_ADDR"] = address
        return client

    flooder = at("192.168.1.66")
    for n in range(3 * detection.TABLES_KEPT):
        for _ in range(2):
            answer = flooder.post(f"/live/frame?players=2&camera=c{n}", data=jpeg(), content_type="image/jpeg")
            assert answer.status_code == 200, answer.json
    for n in range(detection.TABLES_KEPT - detection.TABLES_PER_ADDRESS):  # every other place is still free
        other = at(f"192.168.1.{30 + n}")
        post_frame(other)
        post_frame(other)
    refused = at("192.168.1.99").post("/live/frame?players=2", data=jpeg(), content_type="image/jpeg")
    assert refused.status_code == 503 and "all are in use" in refused.json["error"]


def test_a_page_switching_to_another_camera_is_read_afresh(
    app: Flask, detector: FakeDetector, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page keeps its camera id when another camera is picked: the old camera's cards stood for four more frames,
    called stable, their boxes in the old picture's pixels (1280 wide) over the new picture (640 wide)."""
    import itertools
    import types

    from web_fixtures import seated

    ticks = itertools.count()
    monkeypatch.setattr("web.live.time", types.SimpleNamespace(monotonic=lambda: next(ticks) / 5))  # 5 frames a second
    browser = app.test_client()
    for _ in range(12):
        before = post_frame(browser)
    assert before["stable"] and seen_by_ann(before) == 10
    detector.cards = tuple(seated("KH QH JH", 400, width=640))
    after = []
    for _ in range(8):
        answer = browser.post("/live/frame?players=2", data=jpeg(640, 480), content_type="image/jpeg")
        assert answer.status_code == 200, answer.json
        after.append(answer.json)
    assert not any(reading["stable"] for reading in after)
    assert all({c["card"] for c in reading["zones"]["1"]} <= {"KH", "QH", "JH"} for reading in after)
    assert sorted(c["card"] for c in after[-1]["zones"]["1"]) == ["JH", "KH", "QH"]


def one_table(app: Flask, count: int) -> list[FlaskClient]:
    """``count`` clients of one browser session: one table, its frames posted at once as a client may."""
    first = app.test_client()
    post_frame(first)
    cookie = first.get_cookie("session")
    assert cookie is not None
    others = [app.test_client() for _ in range(count - 1)]
    for other in others:
        other.set_cookie("session", cookie.value)
    return [first, *others]


def posted_at_once(clients: list[FlaskClient]) -> list[tuple[int, dict]]:
    """Each client's frame, posted from a thread of its own; the answers in the order they came."""
    import threading

    answers: list[tuple[int, dict]] = []

    def post(client: FlaskClient) -> None:
        answer = client.post("/live/frame?players=2", data=jpeg(), content_type="image/jpeg")
        answers.append((answer.status_code, answer.json))

    threads = [threading.Thread(target=post, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    return answers


def test_a_tables_frames_are_read_one_at_a_time_and_tables_at_once(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two frames of one table posted at once were read at once, racing the table's pipeline (its stabiliser's cards
    forgotten by one frame while the other voted: a 500). A table's frames take turns; two tables' frames are read
    at once. A frame waits up to 0.5 s for a second one to be read with it: only two tables' frames meet."""
    import threading

    from scorer.vision.pipeline import TablePipeline

    meetings: list[bool] = []
    meeting = threading.Barrier(2, timeout=0.5)
    process = TablePipeline.process

    def met(pipeline: TablePipeline, *args: object) -> object:
        if threading.current_thread() is not threading.main_thread():
            try:
                meeting.wait()
                meetings.append(True)
            except threading.BrokenBarrierError:
                meetings.append(False)
        return process(pipeline, *args)

    monkeypatch.setattr(TablePipeline, "process", met)
    answers = posted_at_once(one_table(app, 2))
    assert [status for status, _ in answers] == [200, 200] and meetings == [False, False]
    meeting.reset()
    meetings.clear()
    answers = posted_at_once([one_table(app, 1)[0], one_table(app, 1)[0]])
    assert [status for status, _ in answers] == [200, 200] and meetings == [True, True]


def test_a_third_frame_of_a_table_posted_at_once_is_503_at_once(tmp_path: Path) -> None:
    """One frame of a table waits for the one being read; a third posted meanwhile would hold another of the
    server's threads, and is answered 503 at once, saying why."""
    import threading

    from web import create_app

    reading, release = threading.Event(), threading.Event()

    class HeldDetector(FakeDetector):
        def detect(self, image_bgr: np.ndarray) -> Detections:
            if threading.current_thread() is not threading.main_thread():
                reading.set()
                release.wait(5)
            return super().detect(image_bgr)

    app = create_app({"DATA_DIR": str(tmp_path), "DETECTOR": HeldDetector(web_fixtures.table_detections())})
    first, *others = one_table(app, 3)
    held = threading.Thread(target=lambda: answers.extend(posted_at_once([first])))
    answers: list[tuple[int, dict]] = []
    held.start()
    assert reading.wait(5)
    waiting = threading.Thread(target=lambda: answers.extend(posted_at_once(others)))
    waiting.start()
    deadline = time.monotonic() + 5
    while not answers and time.monotonic() < deadline:  # the 503 comes at once; the other waits its turn
        time.sleep(0.01)
    release.set()
    held.join(10)
    waiting.join(10)
    statuses = sorted(status for status, _ in answers)
    assert statuses == [200, 200, 503], answers
    refused = next(body for status, body in answers if status == 503)
    assert refused == {"error": "this camera's frames are read one at a time: send the next when one is answered"}
