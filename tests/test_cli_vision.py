"""The vision commands: detect, eval, score-image and watch, with fake and tiny models; clear errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import REAL_PHOTOS, FakeDetector, detection, row_of, seat_cards, shipped_model_or_skip

from scorer.cards import Card, parse_cards
from scorer.cli import main
from scorer.rules import Rules, score_round

ANN = "8C 9C 10C JC 9H 10H JH 2S 2D AC"  # knocks with 2S 2D AC = 5 under a KS upcard
BOB = "QS QC QH 10S JS 3D 5H 7S AD 7D"
TABLE = [*row_of(ANN, y=650, x0=80, step=110), *row_of(BOB, y=60, x0=80, step=110), detection("KS", (880, 360))]


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def photo(tmp_path: Path) -> Path:
    path = tmp_path / "table.jpg"
    cv2.imwrite(str(path), np.full((720, 1280, 3), 80, np.uint8))
    return path


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Make every command use a FakeDetector showing ``TABLE`` (tests may replace ``.frames``)."""
    detector = FakeDetector([TABLE])
    monkeypatch.setattr("scorer.cli.vision.load_detector", lambda *args: detector)
    return detector


def invoke(runner: CliRunner, *args: str) -> Any:
    return runner.invoke(main, [str(a) for a in args])


# --- detect ----------------------------------------------------------------------------------------------------


def test_detect_json_lines_name_each_card_once(runner: CliRunner, photo: Path, fake_model: Any) -> None:
    result = invoke(runner, "detect", photo, photo, "--json")
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert len(lines) == 2
    first = lines[0]
    assert first["image"] == str(photo) and (first["width"], first["height"]) == (1280, 720)
    assert [c["card"] for c in first["cards"]] == [str(d.card) for d in TABLE]
    assert set(first["cards"][0]) == {"card", "confidence", "box"} and len(first["cards"][0]["box"]) == 4
    assert first["conflicts"] == []


def test_detect_text_and_annotations(runner: CliRunner, photo: Path, fake_model: Any, tmp_path: Path) -> None:
    result = invoke(runner, "detect", photo, "--annotate", tmp_path / "drawn")
    assert result.exit_code == 0, result.output
    assert f"{photo}: 21 cards: 8C 0.90" in result.output
    drawn = cv2.imread(str(tmp_path / "drawn" / "table.jpg"))
    assert drawn is not None and drawn.shape == (720, 1280, 3)
    assert not np.array_equal(drawn, cv2.imread(str(photo))), "boxes were drawn"


def test_detect_reports_bad_images_and_goes_on(runner: CliRunner, photo: Path, fake_model: Any, tmp_path: Path) -> None:
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"\xff\xd8\xff\xe0 truncated")
    result = invoke(runner, "detect", tmp_path / "missing.png", broken, photo, "--json")
    assert result.exit_code == 2
    assert "okgin: image '" in result.stderr and "missing.png' does not exist" in result.stderr
    assert "broken.jpg': a damaged or truncated JPEG file" in result.stderr
    assert "Traceback" not in result.output
    assert json.loads(result.stdout.strip())["image"] == str(photo)


def test_detect_without_a_model_is_a_clear_error(runner: CliRunner, photo: Path, tmp_path: Path) -> None:
    result = invoke(runner, "detect", photo, "--model", tmp_path / "no-model")
    assert result.exit_code == 2
    assert result.stderr.startswith("okgin: model directory") and "does not exist" in result.stderr
    assert "Traceback" not in result.output


def test_detect_with_a_corrupt_model_is_a_clear_error(runner: CliRunner, photo: Path, tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(json.dumps({"design": "one-stage", "detector_onnx": "d.onnx"}))
    (tmp_path / "d.onnx").write_bytes(b"not onnx")
    result = invoke(runner, "detect", photo, "--model", tmp_path)
    assert result.exit_code == 2
    assert "could not load ONNX model" in result.stderr and "Traceback" not in result.output


@pytest.mark.slow
def test_detect_with_a_tiny_model(runner: CliRunner, photo: Path, tiny_models: Path) -> None:
    for backend in ("onnx", "torch"):
        result = invoke(runner, "detect", photo, "--json", "--model", tiny_models / "two-stage", "--backend", backend)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["width"] == 1280


# --- eval --------------------------------------------------------------------------------------------------------


@pytest.fixture
def labelled_set(tmp_path: Path) -> Path:
    """Two 640x640 photos labelled like the real set (whole-card boxes, classes.txt in its own order)."""
    root = tmp_path / "set"
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    (root / "classes.txt").write_text("10C\nAS\nQH\nQD\n")
    for name in ("a", "b"):
        cv2.imwrite(str(root / "images" / f"{name}.jpg"), np.zeros((640, 640, 3), np.uint8))
    # a: AS at the left, QH at the right; b: 10C in the middle
    (root / "labels" / "a.txt").write_text("1 0.2 0.5 0.2 0.3\n2 0.8 0.5 0.2 0.3\n")
    (root / "labels" / "b.txt").write_text("0 0.5 0.5 0.2 0.3\n")
    return root


def test_eval_scores_cards_and_writes_plots(
    runner: CliRunner, labelled_set: Path, fake_model: Any, tmp_path: Path
) -> None:
    # the fake finds AS (right place) and QD where QH lies, on both photos
    fake_model.frames = [[detection("AS", (128, 320)), detection("QD", (512, 320))]]
    args = ["--images", labelled_set / "images", "--labels", labelled_set / "labels"]
    result = invoke(runner, "eval", *args, "--classes", labelled_set / "classes.txt", "--plots", tmp_path / "plots")
    assert result.exit_code == 0, result.output
    # a: AS found, QH missed, QD invented; b: 10C missed, AS and QD invented (AS is not on b)
    assert result.stdout.splitlines()[-1] == "precision 0.250 recall 0.333 F1 0.286 exact-images 0/2"
    assert "confused QH -> QD x1" in result.stdout
    per_image = json.loads((tmp_path / "plots" / "per-image.json").read_text())
    assert per_image["images"][0] == {
        "image": "a.jpg",
        "exact": False,
        "expected": ["QH", "AS"],
        "found": ["AS"],
        "missed": ["QH"],
        "invented": ["QD"],
        "confusions": [["QH", "QD"]],
        "on_non_cards": [],
    }
    assert (tmp_path / "plots" / "confusions.png").stat().st_size > 1000


def test_eval_json_and_a_perfect_score(runner: CliRunner, labelled_set: Path, fake_model: Any) -> None:
    fake_model.frames = [
        [detection("AS", (128, 320)), detection("QH", (512, 320))],
        [detection("10C", (320, 320))],
    ]
    args = ["--images", labelled_set / "images", "--labels", labelled_set / "labels"]
    result = invoke(runner, "eval", *args, "--classes", labelled_set / "classes.txt", "--json")
    assert result.exit_code == 0, result.output
    totals = json.loads(result.stdout)
    assert (totals["precision"], totals["recall"], totals["exact_images"]) == (1.0, 1.0, 2)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda root: (root / "classes.txt").write_text("10C\nQX\n"), "classes.txt: class 1: unknown card 'QX'"),
        (
            lambda root: (root / "labels" / "a.txt").write_text("7 0.5 0.5 0.1 0.1\n"),
            "a.txt:1: class 7 is not below the 4 classes named",
        ),
        (lambda root: (root / "images" / "a.jpg").write_bytes(b"junk"), "could not decode image"),
    ],
)
def test_eval_names_bad_data(runner: CliRunner, labelled_set: Path, fake_model: Any, damage: Any, message: str) -> None:
    damage(labelled_set)
    args = ["--images", labelled_set / "images", "--labels", labelled_set / "labels"]
    result = invoke(runner, "eval", *args, "--classes", labelled_set / "classes.txt")
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_eval_reports_unreadable_photos_on_stderr(runner: CliRunner, labelled_set: Path, fake_model: Any) -> None:
    """The ``unreadable:`` line went to stdout among the figures, with nothing on stderr; detect says it there."""
    junk = labelled_set / "images" / "a.jpg"
    junk.write_bytes(b"junk")
    args = ["--images", labelled_set / "images", "--labels", labelled_set / "labels"]
    result = invoke(runner, "eval", *args, "--classes", labelled_set / "classes.txt")
    assert result.exit_code == 2
    assert result.stderr == f"okgin: could not decode image {str(junk)!r}: not a JPEG, PNG, BMP, WEBP or TIFF image\n"
    assert "a.jpg" not in result.stdout and result.stdout.splitlines()[-1].endswith("exact-images 0/1")


def test_eval_uses_the_classes_file_in_the_labels_folder(
    runner: CliRunner, labelled_set: Path, fake_model: Any
) -> None:
    """Without --classes, labels in labelImg's layout were scored in okgin's class order (P/R 0.250 here)."""
    fake_model.frames = [[detection("AS", (128, 320)), detection("QH", (512, 320))], [detection("10C", (320, 320))]]
    (labelled_set / "classes.txt").rename(labelled_set / "labels" / "classes.txt")
    result = invoke(runner, "eval", "--images", labelled_set / "images", "--labels", labelled_set / "labels")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[-1] == "precision 1.000 recall 1.000 F1 1.000 exact-images 2/2"
    classes = labelled_set / "labels" / "classes.txt"
    assert [line for line in lines if line.startswith("note: classes read from")] == [
        f"note: classes read from {str(classes)!r}, the classes file in the labels folder"
    ]


def test_eval_against_another_model(runner: CliRunner, labelled_set: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the candidate reads both photos right; the reference (models "old") misses the 10C of b.jpg
    right = [[detection("AS", (128, 320)), detection("QH", (512, 320))], [detection("10C", (320, 320))]]
    models = {"new": FakeDetector(right), "old": FakeDetector([right[0], []])}
    loaded: list[tuple[str, str, float | None]] = []

    def load(model_dir: Path | None, backend: str, conf: float | None, option: str | None = None) -> FakeDetector:
        loaded.append((str(model_dir), backend, conf))
        return models[str(model_dir)]

    monkeypatch.setattr("scorer.cli.vision.load_detector", load)
    args = ["--images", labelled_set / "images", "--labels", labelled_set / "labels", "--classes"]
    args += [labelled_set / "classes.txt", "--model", "new", "--backend", "onnx", "--conf", "0.3", "--against", "old"]
    result = invoke(runner, "eval", *args)
    assert result.exit_code == 0, result.output
    assert loaded == [("new", "onnx", 0.3), ("old", "onnx", None)]  # one engine; the reference keeps its threshold
    lines = result.stdout.splitlines()
    summary = lines.index("precision 1.000 recall 1.000 F1 1.000 exact-images 2/2")
    assert lines[summary + 1].startswith("against old: F1 0.8000 -> 1.0000 (+0.2000); cards 2 found / 0 invented")
    assert "with fewer errors 1, with more 0, of 2; sign test p 1.000" in lines[summary + 2]
    assert lines[-1] == "  b.jpg: found +1, invented +0"
    models["new"].calls = models["old"].calls = 0
    data = json.loads(invoke(runner, "eval", *args, "--json").stdout)
    assert data["f1"] == 1.0 and data["against"]["reference_f1"] == 0.8
    assert data["against"]["changed"] == [{"image": "b.jpg", "found": 1, "invented": 0}]


def test_eval_against_another_engine(runner: CliRunner, labelled_set: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loaded: list[tuple[str, str]] = []

    def load(model_dir: Path | None, backend: str, conf: float | None, option: str | None = None) -> FakeDetector:
        loaded.append((str(model_dir), backend))
        return FakeDetector([[detection("AS", (128, 320))]])

    monkeypatch.setattr("scorer.cli.vision.load_detector", load)
    args = ["--images", labelled_set / "images", "--labels", labelled_set / "labels", "--classes"]
    args += [labelled_set / "classes.txt", "--model", "m", "--backend", "onnx"]
    result = invoke(runner, "eval", *args, "--against", "m", "--against-backend", "openvino")
    assert result.exit_code == 0, result.output
    assert loaded == [("m", "onnx"), ("m", "openvino")]
    assert "against m on openvino: F1 " in result.stdout and "with fewer errors 0, with more 0" in result.stdout
    alone = invoke(runner, "eval", *args, "--against-backend", "openvino")
    assert alone.exit_code == 2 and "--against-backend needs --against MODEL_DIR" in alone.output


def test_eval_against_a_missing_model(runner: CliRunner, labelled_set: Path, tmp_path: Path) -> None:
    args = ["--images", labelled_set / "images", "--labels", labelled_set / "labels"]
    result = invoke(runner, "eval", *args, "--against", tmp_path / "nowhere")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr == f"okgin: --against: model directory {str(tmp_path / 'nowhere')!r} does not exist\n"
    (tmp_path / "a-file").write_text("")
    result = invoke(runner, "eval", *args, "--against", tmp_path / "a-file")
    assert result.exit_code == 2 and "a-file' is a file, not a folder" in result.stderr


def test_eval_stages_need_corner_labels(runner: CliRunner, labelled_set: Path, fake_model: Any) -> None:
    args = ["--images", labelled_set / "images", "--labels", labelled_set / "labels"]
    result = invoke(runner, "eval", *args, "--classes", labelled_set / "classes.txt", "--stages")
    assert result.exit_code == 2
    assert "box whole cards (no photo labels a card twice); per-stage figures need corner-index boxes" in result.stderr


@pytest.mark.slow
def test_eval_stages_with_a_tiny_model(runner: CliRunner, tiny_models: Path, tmp_path: Path) -> None:
    # generated-scene style: labels in okgin's class order (no --classes), a card labelled at two corners
    for folder in ("images", "labels"):
        (tmp_path / folder).mkdir()
    cv2.imwrite(str(tmp_path / "images" / "s.jpg"), np.random.default_rng(1).integers(0, 255, (480, 640, 3), np.uint8))
    (tmp_path / "labels" / "s.txt").write_text("37 0.1 0.1 0.03 0.025\n37 0.6 0.7 0.03 0.04\n0 0.3 0.3 0.05 0.1\n")
    args = ["--images", tmp_path / "images", "--labels", tmp_path / "labels", "--json"]
    result = invoke(runner, "eval", *args, "--model", tiny_models / "two-stage", "--backend", "onnx")
    assert result.exit_code == 0, result.output
    stages = json.loads(result.stdout)["stages"]
    assert stages["indices"] == 3 and stages["by_height"][-1]["labelled"] == 3
    assert [row["height"] for row in stages["by_height"]] == ["<16 px", "16-25 px", "25-60 px", "all"]
    assert sum(stages["by_height"][-1][key] for key in ("right", "other_card", "none", "club_as_spade",
               "spade_as_club", "heart_as_diamond", "diamond_as_heart")) == 3  # fmt: skip
    text = invoke(runner, "eval", *args[:-1], "--model", tiny_models / "two-stage", "--no-stages")
    assert text.exit_code == 0 and "detector recall" not in text.stdout


# --- score-image ---------------------------------------------------------------------------------------------------


def test_score_image_json_is_the_result_plus_the_reading(runner: CliRunner, photo: Path, fake_model: Any) -> None:
    result = invoke(runner, "score-image", photo, "--upcard", "KS", "--knocker", "1", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    expected = score_round(
        Rules(), Card.parse("KS"), {"1": parse_cards(ANN), "2": parse_cards(BOB)}, knocker="1"
    ).to_dict()
    assert data == {**expected, "reading": data["reading"]}
    assert seat_cards(data["reading"]) == {"1": ANN.split(), "2": BOB.split()}
    assert data["outcome"] == "knock" and data["points"]["1"] > 0


def test_score_image_text(runner: CliRunner, photo: Path, fake_model: Any) -> None:
    result = invoke(runner, "score-image", photo, "--upcard", "KS", "--knocker", "1")
    assert result.exit_code == 0, result.output
    assert "seat 1 (10 cards): 8C 9C 10C JC 9H 10H JH 2S 2D AC" in result.stdout
    assert "knock: seat 1 wins" in result.stdout


def test_score_image_with_a_missing_card_says_what_it_saw(runner: CliRunner, photo: Path, fake_model: Any) -> None:
    fake_model.frames = [TABLE[1:]]
    result = invoke(runner, "score-image", photo, "--upcard", "KS", "--knocker", "1")
    assert result.exit_code == 2
    assert "cannot score" in result.stderr and "seat 1 (9 cards): 9C 10C" in result.stderr


def test_score_image_with_a_conflict_exits_2(runner: CliRunner, photo: Path, fake_model: Any) -> None:
    fake_model.frames = [[*TABLE, detection("AC", (100, 60), conf=0.5)]]  # AC also in seat 2
    result = invoke(runner, "score-image", photo, "--upcard", "KS", "--knocker", "1")
    assert result.exit_code == 2
    assert "conflict: AC is seen in seat 1 and in seat 2" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--upcard", "XX", "--knocker", "1"], "--upcard: unknown card 'XX'"),
        (["--upcard", "KS", "--knocker", "3"], "--knocker must be a seat number from 1 to 2"),
    ],
)
def test_score_image_bad_options(
    runner: CliRunner, photo: Path, fake_model: Any, args: list[str], message: str
) -> None:
    result = invoke(runner, "score-image", photo, *args)
    assert result.exit_code == 2 and message in result.stderr


def test_score_image_missing_photo(runner: CliRunner, tmp_path: Path, fake_model: Any) -> None:
    result = invoke(runner, "score-image", tmp_path / "none.jpg", "--upcard", "KS", "--knocker", "1")
    assert result.exit_code == 2 and "does not exist" in result.stderr


# --- watch ------------------------------------------------------------------------------------------------------


def test_watch_a_video_prints_changes_and_the_score(runner: CliRunner, fake_model: Any, write_video: Any) -> None:
    video = write_video(15, fps=10)
    # the first frames are empty, then the table appears with a flickering ghost card
    fake_model.frames = [[]] * 3 + [TABLE, [*TABLE, detection("5C", (500, 650))]] * 6
    result = invoke(runner, "watch", "--camera", video, "--json", "--window", "3", "--settle", "0.3")
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    readings = [e for e in events if e["event"] == "reading"]
    assert readings[0]["zones"] == {"1": [], "2": [], "upcard": [], "unassigned": []}
    assert all("5C" not in json.dumps(e) for e in readings), "the ghost card never shows"
    scores = [e for e in events if e["event"] == "score"]
    assert len(scores) == 1, "scored once, when stable"
    assert scores[0]["knocker"] == "1" and scores[0]["upcard"] == "KS"
    assert seat_cards(scores[0]["reading"]) == {"1": ANN.split(), "2": BOB.split()}


def test_watch_uses_the_given_upcard_and_knocker(runner: CliRunner, fake_model: Any, write_video: Any) -> None:
    fake_model.frames = [TABLE[:-1]]  # no upcard in the picture
    video = write_video(8)
    result = invoke(
        runner, "watch", "--camera", video, "--upcard", "QD", "--knocker", "2", "--window", "3", "--settle", "0.2"
    )
    assert result.exit_code == 0, result.output
    assert "cannot score: seat 2 knocking: illegal knock" in result.stdout


def test_watch_proposes_no_knock_when_two_seats_may_knock(runner: CliRunner, fake_model: Any, write_video: Any) -> None:
    """The policy the web page follows too (scorer.proposal): with two who may knock, the players say who."""
    both = "3S 4S 5S 4D 4H 4C 7H 7D 7S KD"  # deadwood 10: may knock under the KS upcard too
    fake_model.frames = [[*row_of(ANN, y=650, x0=80, step=110), *row_of(both, y=60, x0=80, step=110), TABLE[-1]]]
    result = invoke(runner, "watch", "--camera", write_video(8), "--window", "3", "--settle", "0.2", "--json")
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [e for e in events if e["event"] == "score"] == []
    reason = "seat 1 and seat 2 may each knock: say who knocked (--knocker SEAT scores a given seat's knock)"
    assert {"event": "cannot-score", "reason": reason} in events


def test_watch_a_video_that_ends_before_the_reading_settled(
    runner: CliRunner, fake_model: Any, write_video: Any, photo: Path
) -> None:
    """It ended in silence: nothing scored, and nothing said why."""
    result = invoke(runner, "watch", "--camera", write_video(3, fps=10), "--settle", "5")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("[settling] ")
    assert result.stderr.startswith("okgin: video file '") and len(result.stderr.splitlines()) == 1
    assert result.stderr.endswith("clip.avi' ended after 3 frames, before the reading settled (--settle 5 s)\n")
    one = invoke(runner, "watch", "--camera", photo)
    assert one.exit_code == 0, one.output
    photo_ended = "table.jpg' ended after 1 frame, before the reading settled (--settle 1 s); to score a photo, use"
    assert one.stderr.endswith(f"{photo_ended} 'okgin score-image'\n")


def test_watch_a_missing_file(runner: CliRunner, fake_model: Any, tmp_path: Path) -> None:
    result = invoke(runner, "watch", "--camera", tmp_path / "none.mp4")
    assert result.exit_code == 2
    assert "video file" in result.stderr and "does not exist" in result.stderr


def test_a_video_opencv_cannot_read_is_one_message(
    runner: CliRunner, fake_model: Any, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """FFmpeg printed "[mov,mp4,m4a,3gp,3g2,mj2 @ 0x55...] moov atom not found" on stderr beside okgin's message."""
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"x" * 1000)
    result = invoke(runner, "watch", "--camera", junk)
    assert result.exit_code == 2
    assert result.stderr.endswith("not a video OpenCV can read (moov atom not found)\n")
    assert capfd.readouterr().err == ""  # nothing printed beside it, past click's own stderr


def test_a_file_that_is_no_video_is_one_message(
    runner: CliRunner, fake_model: Any, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """FFmpeg printed "[mjpeg @ 0x55...] No JPEG data found in image" on stderr, when it read the first frame of a
    text file named ``.jpg``, beside okgin's message that gave the same reason."""
    text = tmp_path / "table.jpg"
    text.write_text("hello, this is not a picture\n")
    result = invoke(runner, "watch", "--camera", text)
    assert result.exit_code == 2
    assert result.stderr.endswith("table.jpg': not a video OpenCV can read (No JPEG data found in image)\n")
    assert capfd.readouterr().err == ""


def test_an_empty_video_file_is_said_to_be_empty(runner: CliRunner, fake_model: Any, tmp_path: Path) -> None:
    """It was "not a video OpenCV can read", as if its bytes were of some other kind."""
    empty = tmp_path / "clip.mp4"
    empty.touch()
    result = invoke(runner, "watch", "--camera", empty)
    assert result.exit_code == 2
    assert result.stderr == f"okgin: video file {str(empty)!r} is empty (0 bytes)\n"


PHOTO_COMMANDS = [["score-image", "--upcard", "KS", "--knocker", "1"], ["detect"]]


@pytest.mark.parametrize("command", PHOTO_COMMANDS)
def test_a_picture_of_several_says_which_is_read(
    runner: CliRunner, fake_model: Any, tmp_path: Path, command: list[str]
) -> None:
    """A TIFF of several pages (an animated PNG or WebP alike) was read by its first without a word."""
    pages = tmp_path / "pages.tif"
    pages.write_bytes(cv2.imencodemulti(".tiff", [np.full((72, 128, 3), 80, np.uint8)] * 3)[1].tobytes())
    result = invoke(runner, command[0], pages, *command[1:])
    assert result.exit_code == 0, result.output
    assert result.stderr == f"okgin: {pages}: a TIFF of 3 pages: only its first is read\n"


@pytest.mark.parametrize("command", PHOTO_COMMANDS)
def test_a_damaged_photo_is_one_message(
    runner: CliRunner, fake_model: Any, tmp_path: Path, capfd: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """libpng printed "libpng error: IDAT: CRC error" on stderr beside okgin's "a damaged or truncated PNG file"."""
    data = bytearray(cv2.imencode(".png", np.random.default_rng(1).integers(0, 255, (60, 80, 3), np.uint8))[1])
    data[100:140] = b"\x01" * 40
    damaged = tmp_path / "damaged.png"
    damaged.write_bytes(bytes(data))
    result = invoke(runner, command[0], damaged, *command[1:])
    assert result.exit_code == 2
    assert result.stderr == "okgin: could not decode image '" + str(damaged) + "': a damaged or truncated PNG file\n"
    assert capfd.readouterr().err == ""


# --- the shipped model on the real photos ---------------------------------------------------------------------


@pytest.mark.model
@pytest.mark.slow
@pytest.mark.skipif(not REAL_PHOTOS.is_dir(), reason="the real photo set is not on this machine")
def test_real_photos_are_read_without_errors(runner: CliRunner) -> None:
    model = shipped_model_or_skip()
    args = ["--images", REAL_PHOTOS / "images", "--labels", REAL_PHOTOS / "labels"]
    result = invoke(runner, "eval", *args, "--classes", REAL_PHOTOS / "classes.txt", "--model", model, "--json")
    assert result.exit_code == 0, result.output
    totals = json.loads(result.stdout)
    assert totals["images"] == 88 and totals["errors"] == []


def test_watch_a_live_camera_until_it_is_lost(
    runner: CliRunner, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    import scorer.vision.sources as sources

    class Camera:
        def __init__(self, frames: int) -> None:
            self.left = frames

        def isOpened(self) -> bool:
            return self.left > 0

        def read(self) -> tuple[bool, Any]:
            time.sleep(0.02)  # a camera's pace, so the worker keeps up
            self.left -= 1
            return (self.left >= 0), np.zeros((72, 128, 3), np.uint8)

        def get(self, prop: int) -> float:
            return 0.0

        def set(self, prop: int, value: float) -> bool:
            return True

        def release(self) -> None:
            pass

    class FlakyCamera(sources.CameraSource):
        def __init__(self, source: Any, **options: Any) -> None:
            cameras = iter([Camera(12)])  # then unplugged: every reopen fails
            options.update(capture_factory=lambda _: next(cameras, Camera(0)), sleep=lambda _: None, max_reconnects=1)
            super().__init__(source, **options)

    monkeypatch.setattr(sources, "CameraSource", FlakyCamera)
    result = invoke(runner, "watch", "--camera", "0", "--window", "2", "--settle", "0", "--json")
    assert result.exit_code == 2
    assert "camera 0: no frame, reconnecting in 0.5 s" in result.stderr
    assert "camera 0 stopped delivering frames" in result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert any(e["event"] == "score" and e["knocker"] == "1" for e in events), events


def test_score_image_for_three_players(runner: CliRunner, photo: Path, fake_model: Any) -> None:
    left_hand = "2C 3C 4C 8D 9D 10D KD"
    left = [detection(str(card), (128, 150 + 60 * i)) for i, card in enumerate(parse_cards(left_hand))]
    fake_model.frames = [
        [
            *row_of("AS 2S 3S 4H 5H 6H 7C", y=650, x0=200, step=110),
            *row_of("QS QC QH 10S JS 3D 5D", y=60, x0=200, step=110),
            *left,
            detection("KH", (900, 360)),
        ]
    ]
    result = invoke(runner, "score-image", photo, "--upcard", "KH", "--knocker", "1", "--players", "3", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert seat_cards(data["reading"])["3"] == left_hand.split(" ")
    assert list(data["players"]) == ["1", "3", "2"], "hands go to the engine in seating order"
    assert data["knocker"] == "1" and data["outcome"] in ("knock", "undercut")
