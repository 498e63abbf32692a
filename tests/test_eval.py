"""Card-level evaluation: matching by class and place, corner or whole-card labels, the real photo set."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import REAL_PHOTOS, FakeDetector, detection, in_a_child_process, not_utf8

from scorer.cards import Card
from scorer.vision.boxes import box_from_row
from scorer.vision.evaluate import (
    HEIGHT_BUCKETS,
    ClassList,
    EvalError,
    EvalReport,
    ImageLabels,
    IndexReading,
    LabelledCard,
    StageReport,
    dataset_images,
    evaluate_dataset,
    format_report,
    labels_are_corners,
    match_image,
    read_indices,
    read_labels,
)
from scorer.vision.types import Box, Detections

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
    assert format_report(report).splitlines()[-1] == "precision 0.500 recall 0.500 F1 0.500 exact-images 0/2"
    assert EvalReport(()).summary_line() == "precision 0.000 recall 0.000 F1 0.000 exact-images 0/0"


def test_read_labels(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_text("1 0.5 0.5 0.5 0.25\n\n0 0.1 0.1 0.1 0.1\n1 0.9 0.9 0.1 0.1\n")
    labels = read_labels(path, [Card.parse("AS"), QH], 200, 400)
    by_card = {str(c.card): c.boxes for c in labels.cards}
    assert by_card["QH"][0] == (50.0, 150.0, 150.0, 250.0)
    assert len(by_card["QH"]) == 2 and len(by_card["AS"]) == 1 and labels.non_cards == ()
    assert read_labels(tmp_path / "absent.txt", [QH], 10, 10) == ImageLabels(())


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("AS\nQX\n", r"classes.txt: class 1: unknown card 'QX'"),  # shaped like a card code: a typo, not a joker
        ("\n\n", "lists no classes"),
        ("joker\nback\n", r"the classes \(joker, back\) name no card"),
        # code-like names are all taken for typos, "0C" as "JK": a class that is not a card is named by a word
        ("AS\n0C\n", r"class 1: unknown card '0C'.* needs a name that is no card code, such as 'joker' or 'back'"),
        ("AS\nJK\n", r"class 1: unknown card 'JK'.* such as 'joker' or 'back'"),
    ],
)
def test_bad_classes_file(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "classes.txt").write_text(content)
    with pytest.raises(EvalError, match=message):
        ClassList.read(tmp_path / "classes.txt")


def test_classes_that_are_not_cards_are_kept_apart(tmp_path: Path) -> None:
    (tmp_path / "classes.txt").write_text("AS\njoker\nQH\nback\nJOKER\nten of hearts\n")
    classes = ClassList.read(tmp_path / "classes.txt")
    assert classes.non_cards == ("joker", "back", "JOKER")
    assert [str(c) for c in classes.cards if c] == ["AS", "QH", "10H"]
    assert ClassList.okgin().cards[37] == QH and ClassList.okgin().non_cards == ()


def test_a_byte_order_mark_is_not_part_of_the_first_name(tmp_path: Path) -> None:
    """Windows Notepad starts a UTF-8 file with a byte-order mark: class 0 ("10C") was read as no card."""
    (tmp_path / "classes.txt").write_text("10C\nAS\n", encoding="utf-8-sig")
    classes = ClassList.read(tmp_path / "classes.txt")
    assert classes.names == ("10C", "AS") and classes.non_cards == ()
    (tmp_path / "p.txt").write_text("0 0.5 0.5 0.5 0.5\n", encoding="utf-8-sig")
    assert [c.card for c in read_labels(tmp_path / "p.txt", classes.cards, 100, 100).cards] == [Card.parse("10C")]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("0 0.5 0.5 -0.3 -0.3", "the box has no area: width -0.3, height -0.3"),
        ("0 0.5 0.5 0 0.2", "the box has no area: width 0, height 0.2"),
        ("0 0.2 0.2 0.2 0.4 0.2 0.6", "the box has no area: width 0, height 0.4"),  # a polygon on one line
        ("0 1.5 1.5 0.1 0.1", "the box lies wholly outside the image: it spans x 1.45 to 1.55, y 1.45 to 1.55"),
        ("0 0.5 -0.1 0.2 0.2", "the box lies wholly outside the image"),  # touching the top edge from above
    ],
)
def test_a_box_of_no_area_or_outside_the_image_is_refused(tmp_path: Path, line: str, message: str) -> None:
    """Each of these was read without a word, turning a right reading into a miss and an invented card."""
    (tmp_path / "p.txt").write_text(f"0 0.5 0.5 0.2 0.2\n{line}\n")
    with pytest.raises(EvalError, match=rf"p.txt:2: {re.escape(message)}"):
        read_labels(tmp_path / "p.txt", [QH], 100, 100)


def test_a_box_partly_outside_the_image_is_read(tmp_path: Path) -> None:
    (tmp_path / "p.txt").write_text("0 0.98 0.5 0.1 0.2\n")
    (label,) = read_labels(tmp_path / "p.txt", [QH], 100, 100).cards
    assert label.boxes == (pytest.approx((93.0, 40.0, 103.0, 60.0)),)


def one_photo_set(root: Path, classes: str, labels: str, size: int) -> Path:
    """A dataset of one black ``size`` x ``size`` photo ``a.png`` with the given classes.txt and label lines."""
    import cv2

    for folder in ("images", "labels"):
        (root / folder).mkdir(parents=True)
    (root / "classes.txt").write_text(classes)
    cv2.imwrite(str(root / "images" / "a.png"), np.zeros((size, size, 3), np.uint8))
    (root / "labels" / "a.txt").write_text(labels)
    return root


def test_a_card_read_on_a_joker_is_invented(tmp_path: Path) -> None:
    # a: QH labelled, and a joker labelled; the detector reads QH right and a 2C on the joker
    root = one_photo_set(tmp_path / "set", "joker\nQH\n", "1 0.25 0.5 0.25 0.5\n0 0.75 0.5 0.25 0.5\n", 400)
    detector = FakeDetector([[detection("QH", (100, 200)), detection("2C", (300, 200))]], 400, 400)
    report = evaluate_dataset(detector, root / "images", root / "labels", root / "classes.txt")
    (result,) = report.images
    assert result.expected == (QH,) and result.found == (QH,)
    assert result.invented == result.on_non_cards == (Card.parse("2C"),)
    assert (report.precision, report.recall) == (0.5, 1.0)
    summary = report.to_dict()
    assert summary["non_card_classes"] == ["joker"] and summary["cards_read_on_non_cards"] == 1
    assert "not cards: joker (1 cards read on them, counted as invented)" in format_report(report)


def test_only_scores_the_photos_whose_names_match(tmp_path: Path) -> None:
    root = one_photo_set(tmp_path / "set", "QH\n", "0 0.25 0.5 0.25 0.5\n", 400)
    (root / "images" / "a.png").rename(root / "images" / "deck1_a.png")
    (root / "labels" / "a.txt").rename(root / "labels" / "deck1_a.txt")
    assert [p.name for p in dataset_images(root / "images", ["deck1_*"])] == ["deck1_a.png"]
    with pytest.raises(EvalError, match=r"no photo in .* matches 'deck2_\*'"):
        dataset_images(root / "images", ["deck2_*"])
    detector = FakeDetector([[detection("QH", (100, 200))]], 400, 400)
    report = evaluate_dataset(detector, root / "images", root / "labels", root / "classes.txt", only=["*_a.png"])
    assert len(report.images) == 1 and report.recall == 1.0


def test_label_files_without_a_photo_and_cards_named_twice_are_said(tmp_path: Path) -> None:
    # the labels of b.png, whose photo is missing, cannot be scored; "as" and "AS" are one card
    root = one_photo_set(tmp_path / "set", "QH\nAS\nas\n", "0 0.25 0.5 0.25 0.5\n", 400)
    (root / "labels" / "b.txt").write_text("1 0.5 0.5 0.2 0.2\n")
    (root / "labels" / "classes.txt").write_text("QH\nAS\nas\n")  # labelImg's copy beside the labels: no photo's
    report = evaluate_dataset(FakeDetector([[detection("QH", (100, 200))]], 400, 400), *dataset_paths(root))
    assert report.notes == (
        "1 label file(s) have no photo of their name and are not scored ('b.txt')",
        "classes 'AS', 'as' all name AS: scored as one card",
    )
    assert report.to_dict()["notes"] == list(report.notes)
    assert "note: 1 label file(s) have no photo" in format_report(report)
    (root / "labels" / "b.txt").unlink()
    (root / "classes.txt").write_text("QH\nAS\n")
    assert evaluate_dataset(FakeDetector([[]], 400, 400), *dataset_paths(root)).notes == ()


def test_the_classes_file_beside_the_labels_is_used_when_none_is_given(tmp_path: Path) -> None:
    """labelImg keeps classes.txt in the labels folder; without --classes the labels were read in okgin's order."""
    root = one_photo_set(tmp_path / "set", "joker\nQH\n", "1 0.25 0.5 0.25 0.5\n", 400)
    (root / "classes.txt").rename(root / "labels" / "classes.txt")
    report = evaluate_dataset(FakeDetector([[detection("QH", (100, 200))]], 400, 400), root / "images", root / "labels")
    assert (report.precision, report.recall, report.non_card_classes) == (1.0, 1.0, ("joker",))
    assert report.notes == (
        f"classes read from {str(root / 'labels' / 'classes.txt')!r}, the classes file in the labels folder",
    )
    assert "note: classes read from" in format_report(report)


def test_a_classes_file_beside_the_labels_folder_is_read_and_named(tmp_path: Path) -> None:
    """The real photos keep classes.txt beside ``labels/`` (Roboflow's layout): without --classes their labels were
    read in okgin's order, and the photos scored F1 0.105 without a word of why."""
    root = one_photo_set(tmp_path / "set", "joker\nQH\n", "1 0.25 0.5 0.25 0.5\n", 400)
    report = evaluate_dataset(FakeDetector([[detection("QH", (100, 200))]], 400, 400), root / "images", root / "labels")
    assert report.recall == 1.0  # class 1 is QH in the set's order (2C in okgin's)
    assert report.notes == (
        f"classes read from {str(root / 'classes.txt')!r}, the classes file beside the labels folder",
    )


def dataset_paths(root: Path) -> tuple[Path, Path, Path]:
    return root / "images", root / "labels", root / "classes.txt"


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

        self.classes = ClassList.read(REAL_PHOTOS / "classes.txt").cards
        self.by_pixels = {}
        for photo in sorted((REAL_PHOTOS / "images").iterdir()):
            image = load_image(photo)
            self.by_pixels[image.tobytes()[:4096]] = photo.stem

    def detect(self, image: np.ndarray) -> Detections:
        height, width = image.shape[:2]
        stem = self.by_pixels[image.tobytes()[:4096]]
        cards = read_labels(REAL_PHOTOS / "labels" / f"{stem}.txt", self.classes, width, height).cards
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


# --- per stage ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("card", "named", "outcome"),
    [
        ("JC", "JC", "right"),
        ("JC", "JS", "club_as_spade"),
        ("10S", "10C", "spade_as_club"),
        ("4H", "4D", "heart_as_diamond"),
        ("KD", "KH", "diamond_as_heart"),
        ("JC", "QS", "other_card"),  # rank wrong as well: not the look-alike suit
        ("JC", "JH", "other_card"),  # a suit of the other colour
        ("JC", None, "none"),
    ],
)
def test_what_the_classifier_made_of_an_index(card: str, named: str | None, outcome: str) -> None:
    reading = IndexReading(Card.parse(card), 20.0, True, None if named is None else Card.parse(named))
    assert reading.outcome == outcome


@pytest.mark.parametrize(("height", "bucket"), [(8, "<16 px"), (15.9, "<16 px"), (16, "16-25 px"), (25, "25-60 px")])
def test_index_height_buckets(height: float, bucket: str) -> None:
    assert IndexReading(QH, height, True, QH).bucket == bucket
    assert [name for name, _ in HEIGHT_BUCKETS][-1] == ">60 px"


def test_per_stage_figures_by_height() -> None:
    jc, js, qh = Card.parse("JC"), Card.parse("JS"), QH
    labels = ImageLabels(
        (
            LabelledCard(jc, ((0, 0, 10, 12), (100, 100, 110, 120))),  # 12 px and 20 px tall
            LabelledCard(qh, ((200, 0, 230, 70),)),  # 70 px tall
        )
    )
    # the detector finds the 12 px index and, tighter than its label (IoU 0.38), the 70 px one;
    # it misses the 20 px one
    found = [(0, 0, 10, 12), (205, 15, 225, 55), (300, 300, 310, 320)]
    readings = read_indices(labels, found, [js, jc, None])
    report = StageReport(tuple(readings), non_card_boxes=2, non_card_boxes_named=1)
    assert report.detector_recall == pytest.approx(2 / 3) and report.classifier_accuracy == pytest.approx(1 / 3)
    assert report.detector_recall_iou == pytest.approx(1 / 3)
    rows = {row["height"]: row for row in report.rows()}
    assert list(rows) == ["<16 px", "16-25 px", ">60 px", "all"]
    assert (rows["<16 px"]["detected"], rows["<16 px"]["club_as_spade"]) == (1, 1)
    assert (rows["16-25 px"]["detected"], rows["16-25 px"]["right"]) == (0, 1)
    assert (rows[">60 px"]["detected"], rows[">60 px"]["none"]) == (1, 1)
    assert rows["all"]["labelled"] == 3
    data = report.to_dict()
    assert data["confusions"] == [{"labelled": "JC", "predicted": "JS", "count": 1}]
    assert (data["non_card_boxes"], data["non_card_boxes_named"], data["match_iou"]) == (2, 1, 0.5)
    with pytest.raises(ValueError, match="2 classifier readings for 3 labelled boxes"):
        read_indices(labels, found, [js, jc])


def test_corner_labels_are_told_from_whole_card_labels(tmp_path: Path) -> None:
    classes = ClassList.from_names(["AS", "QH", "joker"])
    (tmp_path / "a.txt").write_text("0 0.5 0.5 0.1 0.1\n1 0.2 0.2 0.1 0.1\n2 0.1 0.1 0.1 0.1\n2 0.3 0.3 0.1 0.1\n")
    assert not labels_are_corners(tmp_path, classes)  # two jokers are two things, not two corners
    (tmp_path / "b.txt").write_text("1 0.5 0.5 0.05 0.1\n1 0.7 0.9 0.05 0.1\n")
    assert labels_are_corners(tmp_path, classes)


class StagedFake:
    """A two-stage detector with canned stages: the detector finds ``found``; the classifier names a box
    by its left edge (``names``), and any box it does not know as the no-card class."""

    classifier = object()

    def __init__(self, found: list[Box], names: dict[float, str]) -> None:
        from scorer.vision.manifest import ModelManifest

        self.manifest = ModelManifest(Path("fake"), detector_onnx="d.onnx", classifier_onnx="c.onnx")
        self.found = found
        self.names = names

    def find_boxes(self, image: np.ndarray) -> Any:
        from scorer.vision.boxes import FusedBoxes

        boxes = np.array(self.found, np.float32).reshape(-1, 4)
        return FusedBoxes.of((boxes, np.full(len(self.found), 0.9), np.zeros(len(self.found))))

    def name_boxes(self, image: np.ndarray, boxes: Any) -> list[tuple[Card | None, float]]:
        return [(Card.parse(self.names[b[0]]), 0.9) if b[0] in self.names else (None, 0.9) for b in boxes]

    def name_frame_boxes(self, image: np.ndarray, boxes: Any) -> tuple[list[tuple[Card | None, float]], Any]:
        return self.name_boxes(image, boxes), (1.0, 1.0)

    def read_corners(self, image: np.ndarray, found: Any = None) -> list[Any]:
        from scorer.vision.types import CornerEvidence

        rows = (found if found is not None else self.find_boxes(image)).xyxy
        boxes = [box_from_row(row) for row in rows]
        named = self.name_boxes(image, boxes)
        return [CornerEvidence(card, box, 0.9, p) for box, (card, p) in zip(boxes, named, strict=True) if card]

    def cards_from(self, corners: Any, width: int, height: int) -> Detections:
        from scorer.vision.merge import merge_corners

        cards, conflicts = merge_corners([corner.detection(1.0) for corner in corners])
        return Detections(tuple(cards), tuple(conflicts), width, height)

    def detect(self, image: np.ndarray) -> Detections:
        return self.cards_from(self.read_corners(image), *image.shape[1::-1])


@pytest.fixture
def corner_set(tmp_path: Path) -> Path:
    """One 200x200 photo: JC labelled at two corners (20 px tall), a joker labelled at one."""
    # JC at (10,10)-(20,30) and (150,150)-(160,170); the joker's index at (80,10)-(90,30)
    labels = "0 0.075 0.1 0.05 0.1\n0 0.775 0.8 0.05 0.1\n2 0.425 0.1 0.05 0.1\n"
    return one_photo_set(tmp_path / "corners", "JC\nJS\nJOKER\n", labels, 200)


def test_a_dataset_through_both_stages(corner_set: Path) -> None:
    # found: JC's first index and the joker; named: the first JC index as JS, the joker's box as JC
    detector = StagedFake([(10, 10, 20, 30), (80, 10, 90, 30)], {10.0: "JS", 80.0: "JC"})
    report = evaluate_dataset(detector, corner_set / "images", corner_set / "labels", corner_set / "classes.txt",
                              stages=None)  # fmt: skip
    assert report.stages is not None, "corner labels: per-stage figures come by themselves"
    stages = report.stages
    assert [(r.detected, r.outcome) for r in stages.indices] == [(True, "club_as_spade"), (False, "none")]
    assert (stages.non_card_boxes, stages.non_card_boxes_named) == (1, 1)
    # the cards are those detect() reads: JS (invented) and JC read on the joker (invented there too)
    (result,) = report.images
    assert result.missed == (Card.parse("JC"),) and result.invented == (Card.parse("JC"), Card.parse("JS"))
    assert result.on_non_cards == (Card.parse("JC"),)
    text = format_report(report)
    assert "classifier read JC as JS x1" in text and "non-card boxes read as a card: 1/1" in text
    assert "detector recall 0.50 (0.50 at IoU >= 0.5), classifier accuracy 0.00 on 2 labelled indices" in text
    assert report.to_dict()["stages"]["by_height"][0]["height"] == "16-25 px"


def test_plots_draw_the_indices_a_stage_got_wrong(corner_set: Path, tmp_path: Path) -> None:
    from scorer.vision.evaluate import SHEET_TILE, write_plots

    args = (corner_set / "images", corner_set / "labels", corner_set / "classes.txt")
    # JC's first index read as JS, its second never found: two tiles, the missed one first
    report = evaluate_dataset(StagedFake([(10, 10, 20, 30)], {10.0: "JS"}), *args, stages=True)
    written = write_plots(report, tmp_path / "plots")
    assert [path.name for path in written] == ["confusions.png", "per-image.json", "indices.png"]
    import cv2

    sheet = cv2.imread(str(written[2]))
    assert sheet.shape[1] == 2 * SHEET_TILE and sheet.shape[0] > SHEET_TILE
    # each tile is the black photo around a labelled box drawn in red
    for tile in (sheet[-SHEET_TILE:, :SHEET_TILE], sheet[-SHEET_TILE:, SHEET_TILE:]):
        red = (tile[..., 2] > 200) & (tile[..., 1] < 60)
        assert red.any() and (tile.max(axis=2) < 30).mean() > 0.5
    # every index right: nothing to draw
    right = StagedFake([(10, 10, 20, 30), (150, 150, 160, 170)], {10.0: "JC", 150.0: "JC"})
    report = evaluate_dataset(right, *args, stages=True)
    assert [path.name for path in write_plots(report, tmp_path / "none")] == ["confusions.png", "per-image.json"]


def test_plots_are_written_into_a_folder_whose_name_is_not_utf8(corner_set: Path, tmp_path: Path) -> None:
    """The sheet of indices was written by ``cv2.imwrite``, which died of a segmentation fault on such a name."""
    from scorer.vision.evaluate import write_plots

    args = (corner_set / "images", corner_set / "labels", corner_set / "classes.txt")
    report = evaluate_dataset(StagedFake([(10, 10, 20, 30)], {10.0: "JS"}), *args, stages=True)
    folder = not_utf8(tmp_path, "plots")

    def plot() -> None:
        assert [path.name for path in write_plots(report, folder)][-1] == "indices.png"
        assert (folder / "indices.png").read_bytes().startswith(b"\x89PNG")

    in_a_child_process(plot)


def test_stages_need_corner_labels_and_two_stages(corner_set: Path, tmp_path: Path) -> None:
    args = (corner_set / "images", corner_set / "labels", corner_set / "classes.txt")
    with pytest.raises(EvalError, match="need okgin's two-stage detector"):
        evaluate_dataset(FakeDetector([[]], 200, 200), *args, stages=True)
    assert evaluate_dataset(FakeDetector([[]], 200, 200), *args, stages=None).stages is None  # auto: skipped
    (corner_set / "labels" / "a.txt").write_text("0 0.5 0.5 0.5 0.8\n")  # one whole-card box
    with pytest.raises(EvalError, match=r"box whole cards .* per-stage figures need corner-index boxes"):
        evaluate_dataset(StagedFake([], {}), *args, stages=True)
