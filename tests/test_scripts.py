"""The measuring scripts in scripts/ that write data: they must write what their yardsticks assume."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def _photo_set(root: Path) -> Path:
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    for number in range(2):
        picture = np.full((64, 80, 3), 200, np.uint8)
        picture[10:30, 20:30] = 20
        cv2.imwrite(str(root / "images" / f"photo{number}.png"), picture)
        (root / "labels" / f"photo{number}.txt").write_text("3 0.31 0.31 0.125 0.31\n")
    (root / "classes.txt").write_text("AC\nAD\nAH\nAS\n")
    return root


def _webcam_like(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(SCRIPTS / "webcam-like.py"), *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_webcam_like_narrows_each_photo_keeps_its_labels_and_writes_the_same_set_twice(tmp_path: Path) -> None:
    source = _photo_set(tmp_path / "source")
    for out in ("a", "b"):
        result = _webcam_like(source, tmp_path / out, "--narrow", "0.5")
        assert result.returncode == 0, result.stderr
        assert "wrote 2 photos" in result.stdout
    picture = cv2.imread(str(tmp_path / "a" / "images" / "photo0.jpg"))
    assert picture.shape == (64, 40, 3)
    assert 0 < np.abs(picture.astype(int) - 200).mean() < 30  # noisy, still the photo
    assert (tmp_path / "a" / "labels" / "photo1.txt").read_text() == "3 0.31 0.31 0.125 0.31\n"
    assert (tmp_path / "a" / "classes.txt").read_text().split() == ["AC", "AD", "AH", "AS"]
    for number in range(2):
        name = f"images/photo{number}.jpg"
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_webcam_like_squares_each_photo_as_a_set_exported_square_is(tmp_path: Path) -> None:
    source = _photo_set(tmp_path / "source")
    result = _webcam_like(source, tmp_path / "out", "--square", "--noise", "0", "--specks", "0", "--quality", "100")
    assert result.returncode == 0, result.stderr
    picture = cv2.imread(str(tmp_path / "out" / "images" / "photo0.jpg"))
    assert picture.shape == (64, 64, 3)  # 80 x 64 squeezed to its shorter side
    dark = picture.mean(axis=2) < 100
    assert dark.any(axis=1).sum() == 20 and 7 <= dark.any(axis=0).sum() <= 9  # the glyph as tall, 0.8 as wide
    assert (tmp_path / "out" / "labels" / "photo1.txt").read_text() == "3 0.31 0.31 0.125 0.31\n"
    both = _webcam_like(source, tmp_path / "both", "--square", "--narrow", "0.5")
    assert both.returncode != 0 and "not allowed with argument" in both.stderr


def test_webcam_like_names_a_folder_that_is_not_a_photo_set(tmp_path: Path) -> None:
    result = _webcam_like(tmp_path, tmp_path / "out")
    assert result.returncode == 2
    assert "has no images/ and labels/ folders" in result.stderr


def _errata(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(SCRIPTS / "real-photo-errata.py"), *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_errata_relabel_and_add_labels_in_a_copy_and_leave_the_yardstick_alone(tmp_path: Path) -> None:
    source = _photo_set(tmp_path / "set")
    errata = tmp_path / "errata.csv"
    errata.write_text(
        "set,photo,change,card,labelled,box\n"
        "set,photo0,relabel,AC,AS,\n"
        "set,photo1,add,AH,,40 16 56 48\n"
        "another-set,photo1,relabel,AD,AS,\n"
    )
    result = _errata(source, tmp_path / "fixed", "--errata", errata)
    assert result.returncode == 0, result.stderr
    assert "with 2 errata applied" in result.stdout
    assert (tmp_path / "fixed" / "labels" / "photo0.txt").read_text() == "0 0.31 0.31 0.125 0.31\n"
    added = (tmp_path / "fixed" / "labels" / "photo1.txt").read_text().splitlines()
    assert added == ["3 0.31 0.31 0.125 0.31", "2 0.600000 0.500000 0.200000 0.500000"]
    assert (source / "labels" / "photo0.txt").read_text() == "3 0.31 0.31 0.125 0.31\n"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("set,photo0,relabel,AC,AD,", "has no label 'AD' to correct"),
        ("set,photo,relabel,AC,AS,", "2 photos start with 'photo'"),
        ("set,photo0,relabel,ZZ,AS,", "'ZZ' is not a class"),
        ("set,photo0,swap,AC,AS,", "unknown change 'swap'"),
    ],
)
def test_errata_that_no_longer_fit_their_set_are_named(tmp_path: Path, row: str, message: str) -> None:
    source = _photo_set(tmp_path / "set")
    errata = tmp_path / "errata.csv"
    errata.write_text(f"set,photo,change,card,labelled,box\n{row}\n")
    result = _errata(source, tmp_path / "fixed", "--errata", errata)
    assert result.returncode == 2
    assert message in result.stderr


@pytest.mark.skipif(not (SCRIPTS.parent.parent / "shared" / "real-photos").is_dir(), reason="no real photos beside")
@pytest.mark.parametrize("name", ["poker-cards-fmjio", "rf-zk7wu-phone"])
def test_the_checkouts_errata_fit_the_real_photos(tmp_path: Path, name: str) -> None:
    result = _errata(SCRIPTS.parent.parent / "shared" / "real-photos" / name, tmp_path / name)
    assert result.returncode == 0, result.stderr


def test_suit_shapes_reads_the_shipped_models_clubs_and_spades_per_pip_shape() -> None:
    """The pips drawn before session 20 are read right (0.99 with six styles, models/HISTORY.md, Session 20);
    the round clubs are printed beside them, each row a share of 26 indices."""
    from scorer.synth import procedural
    from scorer.synth.faces import FacesUnavailableError

    try:
        procedural.rank_fonts("train")
    except FacesUnavailableError as error:
        pytest.skip(str(error))
    command = [sys.executable, str(SCRIPTS / "suit-shapes.py"), "--styles", "1"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    rows = result.stdout.splitlines()[1:]
    assert [row.split(" blur")[0].strip() for row in rows] == ["pips as drawn before session 20"] * 2 + [
        "round clubs, trumpet feet"
    ] * 2
    shares = [[float(cell.split(" px ")[1].split()[0]) for cell in row.split(": ")[1].split(", ")] for row in rows]
    assert all(len(row) == 3 and all(0 <= share <= 1 for share in row) for row in shares)
    assert min(shares[0] + shares[1]) >= 0.9
