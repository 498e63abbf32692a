"""Every command answers a user error with one line on stderr and exit status 2; 1 means a bug."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import FakeDetector, detection, in_a_child_process, not_utf8
from image_bombs import png_claiming

from scorer.cli import READER_GONE, USAGE_ERROR, main
from scorer.errors import OkginError


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch) -> FakeDetector:
    detector = FakeDetector([[detection("AS", (100, 100))]])
    monkeypatch.setattr("scorer.cli.vision.load_detector", lambda *args: detector)
    return detector


@pytest.fixture
def photo(tmp_path: Path) -> Path:
    path = tmp_path / "table.jpg"
    cv2.imwrite(str(path), np.full((64, 64, 3), 80, np.uint8))
    return path


@pytest.fixture
def bomb(tmp_path: Path) -> Path:
    path = tmp_path / "bomb.png"
    path.write_bytes(png_claiming(100000, 100000))
    return path


@pytest.fixture
def labelled(tmp_path: Path, photo: Path) -> Path:
    root = tmp_path / "set"
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    (root / "classes.txt").write_text("AS\n")
    cv2.imwrite(str(root / "images" / "a.jpg"), np.zeros((64, 64, 3), np.uint8))
    (root / "labels" / "a.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    return root


def one_line_error(result: Any, *expected: str) -> str:
    """The single stderr line of a failed command, checked for exit 2, no traceback and each expected part."""
    assert result.exit_code == USAGE_ERROR, result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, AssertionError)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    for part in expected:
        assert part in lines[0], lines[0]
    return str(lines[0])


def run(*args: object) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args])


def test_detect_on_a_decompression_bomb(bomb: Path, fake_model: FakeDetector) -> None:
    too_large = "bomb.png' is 100000x100000 (10000.0 MP): okgin reads images up to 40.0 MP"
    one_line_error(run("detect", bomb), "okgin: image ", too_large)
    assert fake_model.calls == 0


def test_score_image_on_a_decompression_bomb(bomb: Path, fake_model: FakeDetector) -> None:
    one_line_error(run("score-image", bomb, "--upcard", "KS", "--knocker", "1"), "is 100000x100000 (10000.0 MP)")


def test_detect_annotate_into_a_path_under_a_file(photo: Path, fake_model: FakeDetector) -> None:
    line = one_line_error(run("detect", photo, "--annotate", photo / "drawn"), "--annotate: cannot use", "table.jpg")
    assert "Not a directory" in line or "exists" in line
    assert fake_model.calls == 0  # refused before the model ran


def test_eval_with_a_binary_classes_file(labelled: Path, fake_model: FakeDetector) -> None:
    (labelled / "classes.txt").write_bytes(os.urandom(64) + b"\xff\xfe")
    result = run("eval", "--images", labelled / "images", "--labels", labelled / "labels", "--classes",
                 labelled / "classes.txt")  # fmt: skip
    one_line_error(result, "could not read classes file", "classes.txt': 'utf-8' codec can't decode")


def test_eval_with_a_binary_label_file(labelled: Path, fake_model: FakeDetector) -> None:
    (labelled / "labels" / "a.txt").write_bytes(b"\x80\x81\xfe\xff")
    result = run("eval", "--images", labelled / "images", "--labels", labelled / "labels", "--classes",
                 labelled / "classes.txt")  # fmt: skip
    one_line_error(result, "a.txt': 'utf-8' codec can't decode")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_eval_plots_into_an_unwritable_folder(labelled: Path, fake_model: FakeDetector, tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    result = run("eval", "--images", labelled / "images", "--labels", labelled / "labels", "--classes",
                 labelled / "classes.txt", "--plots", locked / "plots")  # fmt: skip
    one_line_error(result, "--plots: cannot use", "Permission denied")


def test_eval_plots_under_a_file(labelled: Path, fake_model: FakeDetector, photo: Path) -> None:
    result = run("eval", "--images", labelled / "images", "--labels", labelled / "labels", "--classes",
                 labelled / "classes.txt", "--plots", photo / "plots")  # fmt: skip
    one_line_error(result, "--plots: cannot use")
    assert fake_model.calls == 0


def test_eval_plots_that_cannot_be_written_after_the_run(
    labelled: Path, fake_model: FakeDetector, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object) -> None:
        raise PermissionError(13, "Permission denied", str(tmp_path / "plots" / "confusions.png"))

    monkeypatch.setattr("scorer.vision.evaluate.write_plots", refuse)
    result = run("eval", "--images", labelled / "images", "--labels", labelled / "labels", "--classes",
                 labelled / "classes.txt", "--plots", tmp_path / "plots")  # fmt: skip
    assert result.exit_code == USAGE_ERROR
    assert result.stderr.strip().splitlines()[-1].endswith("confusions.png': Permission denied")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["solve", "AS", "XX"], "okgin: unknown card 'XX'"),
        (["score", "--upcard", "KS", "--knocker", "AS 2S", "--opponent", "3S"], "okgin: "),
        (["init-db", "--db", "{photo}/x.db"], "okgin: cannot open the database"),
    ],
)
def test_user_errors_of_every_kind_exit_2_in_one_line(args: list[str], message: str, photo: Path) -> None:
    one_line_error(run(*[arg.replace("{photo}", str(photo)) for arg in args]), message)


def test_a_user_error_escaping_a_command_is_still_one_line(monkeypatch: pytest.MonkeyPatch, photo: Path) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise OkginError("the table has no cards")

    monkeypatch.setattr("scorer.cli.vision.load_detector", broken)
    one_line_error(run("detect", photo), "okgin: the table has no cards")


def test_a_bug_exits_1_with_its_traceback(monkeypatch: pytest.MonkeyPatch, photo: Path) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr("scorer.cli.vision.load_detector", broken)
    result = run("detect", photo)
    assert result.exit_code == 1 and isinstance(result.exception, KeyError)


# Found by probing the commands in session 40: each once lost data, hung, or printed a traceback.


def test_annotations_never_overwrite_a_photo_nor_each_other(tmp_path: Path, fake_model: FakeDetector) -> None:
    """``--annotate`` naming the photos' own folder wrote over ``table.jpg``; two photos of one stem kept one."""
    photos = tmp_path / "photos"
    (photos / "other").mkdir(parents=True)
    for path in (photos / "table.jpg", photos / "other" / "table.png"):
        cv2.imwrite(str(path), np.full((64, 64, 3), 80, np.uint8))
    before = (photos / "table.jpg").read_bytes()
    result = run("detect", photos / "table.jpg", photos / "other" / "table.png", "--annotate", photos)
    assert result.exit_code == 0, result.output
    assert (photos / "table.jpg").read_bytes() == before
    assert sorted(path.name for path in photos.glob("*.jpg")) == ["table-2.jpg", "table-3.jpg", "table.jpg"]


def test_annotate_into_no_folder_is_refused(photo: Path, fake_model: FakeDetector) -> None:
    one_line_error(run("detect", photo, "--annotate", ""), "--annotate: give a folder")
    assert fake_model.calls == 0


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_pipe_or_a_device_is_not_read_as_an_image(tmp_path: Path, fake_model: FakeDetector, kind: str) -> None:
    """``okgin detect`` on a named pipe waited for ever, and on /dev/zero read until the memory ran out."""
    if kind == "fifo":
        path = tmp_path / "pipe.jpg"
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    one_line_error(run("detect", path), "not a regular file (a pipe, socket or device)")
    one_line_error(run("score-image", path, "--upcard", "KS", "--knocker", "1"), "not a regular file")


def test_a_folder_named_as_a_photo_or_a_video_says_so(tmp_path: Path, fake_model: FakeDetector) -> None:
    one_line_error(run("detect", tmp_path), "is a folder, not a file")
    one_line_error(run("watch", "--camera", tmp_path), "is a folder, not a file")


@pytest.mark.parametrize("content", [b"not a picture at all\n" * 40, bytes(range(256)) * 16], ids=["text", "binary"])
def test_a_file_that_is_no_video_says_so(tmp_path: Path, fake_model: FakeDetector, content: bytes) -> None:
    """``okgin watch --camera notes.jpg`` exited 0 with no word of okgin's: OpenCV opened it and read no frame."""
    path = tmp_path / "notes.jpg"
    path.write_bytes(content)
    one_line_error(
        run("watch", "--camera", path), f"okgin: could not read a frame from video file {str(path)!r}: not a video"
    )
    assert fake_model.calls == 0


def test_names_that_are_not_utf8_are_written_or_refused_without_a_crash(
    tmp_path: Path, photo: Path, fake_model: FakeDetector
) -> None:
    """OpenCV takes a file name as UTF-8 text: ``okgin detect --annotate`` into a folder whose name has bytes that are
    no UTF-8, and ``okgin watch`` of such a file, died of a segmentation fault."""
    folder = not_utf8(tmp_path, "drawn")

    def annotate() -> None:
        result = run("detect", photo, "--annotate", folder)
        assert result.exit_code == 0, result.output
        assert cv2.imdecode(np.frombuffer((folder / "table.jpg").read_bytes(), np.uint8), cv2.IMREAD_COLOR) is not None

    def watch() -> None:
        video = not_utf8(tmp_path, "clip.avi")
        video.write_bytes(b"RIFF")
        one_line_error(run("watch", "--camera", video), "clip.avi': its name is not UTF-8 text, which OpenCV cannot")

    in_a_child_process(annotate)
    in_a_child_process(watch)


@pytest.mark.parametrize(
    ("camera", "message"),
    [
        ("", "no source given: name a camera index (0), a video file or an rtsp/http URL"),  # was "'' is a folder"
        ("99999999999999999999", "camera 99999999999999999999 does not exist: camera indices run from 0 to"),
        ("²", "video file '²' does not exist"),  # a digit to str.isdigit, but no number: a ValueError
    ],
)
def test_a_camera_that_cannot_be_is_named(fake_model: FakeDetector, camera: str, message: str) -> None:
    one_line_error(run("watch", "--camera", camera), message)


def test_a_label_of_no_finite_coordinates_is_named(labelled: Path, fake_model: FakeDetector) -> None:
    (labelled / "labels" / "a.txt").write_text("0 nan -5 inf -0.2\n")
    args = ("--images", labelled / "images", "--labels", labelled / "labels", "--classes", labelled / "classes.txt")
    one_line_error(run("eval", *args), "a.txt:1: coordinates must be finite numbers, got nan -5 inf -0.2")


def test_a_classes_file_beside_the_labels_is_not_a_label_file(labelled: Path, fake_model: FakeDetector) -> None:
    """labelImg keeps classes.txt in the labels folder; it was read as a photo's labels."""
    (labelled / "classes.txt").rename(labelled / "labels" / "classes.txt")
    args = ("--images", labelled / "images", "--labels", labelled / "labels")
    result = run("eval", *args, "--classes", labelled / "labels" / "classes.txt", "--json")
    assert result.exit_code == 0, result.output


def test_an_images_folder_that_is_a_file_says_so(labelled: Path, photo: Path, fake_model: FakeDetector) -> None:
    one_line_error(run("eval", "--images", photo, "--labels", labelled / "labels"), "is a file, not a folder")


@pytest.mark.parametrize("settle", ["nan", "inf", "1e999"])
def test_watch_refuses_a_settling_time_that_is_no_number(settle: str) -> None:
    """``--settle nan`` passed every range check and left the reading waiting for ever."""
    result = run("watch", "--camera", "table.avi", "--settle", settle)
    assert result.exit_code == USAGE_ERROR and "Invalid value for '--settle'" in result.output


def test_ctrl_c_is_an_interruption_not_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("scorer.cli.engine.parse_cards", interrupted)
    result = run("solve", "AS", "2S", "3S")
    assert (result.exit_code, result.stderr.strip()) == (130, "okgin: interrupted")


@pytest.mark.parametrize(
    ("label", "named"),
    [("0 nan 0.5 0.2 0.2", "coordinates must be finite numbers"), ("AS 0.5 0.5 0.2 0.2", "got 'AS'")],
    ids=["nan", "a-name-for-a-class"],
)
def test_preview_names_a_bad_label_line(labelled: Path, label: str, named: str) -> None:
    """``okgin data preview`` printed a traceback for each of these."""
    (labelled / "images" / "val").mkdir()
    (labelled / "labels" / "val").mkdir()
    (labelled / "images" / "a.jpg").rename(labelled / "images" / "val" / "a.jpg")
    (labelled / "labels" / "val" / "a.txt").write_text(label + "\n")
    one_line_error(run("data", "preview", labelled), "a.txt:1: ", named)
    one_line_error(run("data", "preview", labelled, "--out", labelled / "sheet.txt"), "must end in .jpg or .png")
    (labelled / "images" / "val" / "a.jpg").write_bytes(b"")
    one_line_error(run("data", "preview", labelled), "none of the images under")


def test_the_console_command_stops_when_its_output_is_closed_and_escapes_what_it_cannot_encode() -> None:
    """``okgin solve AS 2S 3S >&-`` lost its answer and exited 0; a player's name the terminal cannot encode
    was a UnicodeEncodeError traceback."""
    import subprocess
    import sys

    command = [sys.executable, "-c", "from scorer.cli import run; run()"]
    closed = subprocess.run(
        [*command, "solve", "AS", "2S", "3S"], stderr=subprocess.PIPE, text=True, preexec_fn=lambda: os.close(1)
    )
    assert (closed.returncode, closed.stderr.strip()) == (
        USAGE_ERROR,
        "okgin: standard output is closed: there is nowhere to write the answer",
    )
    hands = [
        "--upcard",
        "KS",
        "--knocker",
        "Zoë♠: AS 2S 3S 4H 5H 6H 7C 8C 9C KD",
        "--opponent",
        "QS QC QH 10S JS 3D 5S 7S AD 7D",
    ]
    cp1252 = subprocess.run(
        [*command, "score", *hands], capture_output=True, env={**os.environ, "PYTHONIOENCODING": "cp1252"}
    )
    assert cp1252.returncode == 0, cp1252.stderr
    assert "Zo\xeb\\u2660:" in cp1252.stdout.decode("cp1252") and b"Traceback" not in cp1252.stderr


def test_a_command_whose_reader_went_away_stops_quietly() -> None:
    """``okgin watch --json | head -1``: once head had its line, okgin said "okgin: Broken pipe" and exited 2, as if
    the user had made a mistake. It stops as a program stopped by SIGPIPE does: nothing said, status 141."""
    import subprocess
    import sys

    solving = subprocess.Popen(
        [sys.executable, "-c", "from scorer.cli import run; run()", "solve", "AS 2S 3S 4D 5D 6D 7C 7H 7S KD"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert solving.stdout is not None and solving.stderr is not None
    solving.stdout.close()  # the reader gone before the answer is written
    said = solving.stderr.read()
    assert (solving.wait(timeout=60), said) == (READER_GONE, b"")
