"""Card-level evaluation: matching by class and place, corner or whole-card labels, the real photo set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import REAL_PHOTOS, detection

from scorer.cards import Card
from scorer.vision.evaluate import (
    EvalError,
    EvalReport,
    LabelledCard,
    evaluate_dataset,
    format_report,
    match_image,
    read_classes,
    read_labels,
)
from scorer.vision.types import Detections

QH = Card.parse("QH")


def labelled(card: str, *boxes: tuple[float, float, float, float]) -> LabelledCard:
    return LabelledCard(Card.parse(card), tuple(boxes))


@pytest.mark.parametrize(
    ("predicted_centre", "found"),
    [
        ((150, 200), True),  # inside the whole-card label
        ((95, 200), True),  # just outside, within the generous margin
        ((400, 200), False),  # elsewhere: right class, wrong card
    ],
)
def test_a_prediction_must_lie_on_its_label(predicted_centre: tuple[float, float], found: bool) -> None:
    result = match_image(
        "x.jpg", [detection("QH", predicted_centre, size=(10, 20))], [labelled("QH", (100, 100, 200, 300))]
    )
    assert (result.found == (QH,)) is found
    assert (result.invented == (QH,)) is not found


def test_corner_labels_count_each_card_once() -> None:
    # a corner-labelled card has two boxes; a merged prediction box spans both
    label = labelled("QH", (100, 100, 110, 125), (150, 180, 160, 205))
    result = match_image("x.jpg", [detection("QH", (130, 150), size=(60, 105))], [label])
    assert result.expected == (QH,) and result.found == (QH,) and result.exact


def test_labels_without_boxes_match_by_class_only() -> None:
    result = match_image("x.jpg", [detection("QH", (999, 999))], [LabelledCard(QH, ())])
    assert result.exact


def test_totals() -> None:
    a = match_image(
        "a", [detection("QH", (150, 200)), detection("2C", (10, 10))], [labelled("QH", (100, 100, 200, 300))]
    )
    b = match_image("b", [], [labelled("AS", (0, 0, 10, 10))])
    report = EvalReport((a, b))
    assert (report.precision, report.recall, report.exact_images) == (0.5, 0.5, 0)
    assert report.f1 == pytest.approx(0.5)
    assert format_report(report).splitlines()[-1] == "precision 0.50 recall 0.50 F1 0.50 exact-images 0/2"
    assert EvalReport(()).summary_line() == "precision 0.00 recall 0.00 F1 0.00 exact-images 0/0"


def test_read_labels(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_text("1 0.5 0.5 0.5 0.25\n\n0 0.1 0.1 0.1 0.1\n1 0.9 0.9 0.1 0.1\n")
    cards = read_labels(path, [Card.parse("AS"), QH], 200, 400)
    by_card = {str(c.card): c.boxes for c in cards}
    assert by_card["QH"][0] == (50.0, 150.0, 150.0, 250.0)
    assert len(by_card["QH"]) == 2 and len(by_card["AS"]) == 1
    assert read_labels(tmp_path / "absent.txt", [QH], 10, 10) == []


@pytest.mark.parametrize(
    ("content", "message"),
    [("AS\nZZ\n", r"classes.txt:2: unknown card 'ZZ'"), ("\n\n", "lists no classes")],
)
def test_bad_classes_file(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "classes.txt").write_text(content)
    with pytest.raises(EvalError, match=message):
        read_classes(tmp_path / "classes.txt")


def test_missing_folders(tmp_path: Path) -> None:
    (tmp_path / "classes.txt").write_text("AS\n")
    with pytest.raises(EvalError, match=r"images folder .* does not exist"):
        evaluate_dataset(None, tmp_path / "images", tmp_path, tmp_path / "classes.txt")  # type: ignore[arg-type]
    with pytest.raises(EvalError, match=r"labels folder .* does not exist"):
        evaluate_dataset(None, tmp_path, tmp_path / "labels", tmp_path / "classes.txt")  # type: ignore[arg-type]


class LabelDetector:
    """A perfect detector for the real photo set: reads each photo's label file (found by its pixels)."""

    def __init__(self) -> None:
        from scorer.vision.images import load_image

        self.classes = read_classes(REAL_PHOTOS / "classes.txt")
        self.by_pixels = {}
        for photo in sorted((REAL_PHOTOS / "images").iterdir()):
            image = load_image(photo)
            self.by_pixels[image.tobytes()[:4096]] = photo.stem

    def detect(self, image: np.ndarray) -> Detections:
        height, width = image.shape[:2]
        stem = self.by_pixels[image.tobytes()[:4096]]
        cards = read_labels(REAL_PHOTOS / "labels" / f"{stem}.txt", self.classes, width, height)
        found = tuple(detection(str(c.card), ((c.boxes[0][0] + c.boxes[0][2]) / 2, c.boxes[0][1] + 5)) for c in cards)
        return Detections(found, (), width, height)


@pytest.mark.skipif(not REAL_PHOTOS.is_dir(), reason="the real photo set is not on this machine")
def test_real_photos_read_and_a_perfect_detector_scores_one() -> None:
    report = evaluate_dataset(
        LabelDetector(), REAL_PHOTOS / "images", REAL_PHOTOS / "labels", REAL_PHOTOS / "classes.txt"
    )
    assert report.errors == () and len(report.images) == 88
    assert (report.precision, report.recall, report.exact_images) == (1.0, 1.0, 88)
    assert sum(len(r.expected) for r in report.images) > 300


def test_plots_without_confusions(tmp_path: Path) -> None:
    from scorer.vision.evaluate import write_plots

    written: list[Any] = write_plots(EvalReport((match_image("a", [], []),)), tmp_path)
    assert [p.name for p in written] == ["confusions.png", "per-image.json"]
