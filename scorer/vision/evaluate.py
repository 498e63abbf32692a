"""How well the detector reads labelled photos: card-level precision, recall, F1 and exact images,
and for corner-index labels what each of the two stages does.

The yardstick is a folder of photos with YOLO label files (``class xc yc w h``,
normalised), whose boxes may cover whole cards or corner indices. What matters to a
player is the card, so scoring is per card and per image: a predicted card is right when
the photo is labelled with that card and (labels having boxes) the prediction lies on
it, generously. A photo is *exact* when nothing is missed and nothing invented.

Datasets are taken as they come: a class that is not a card (``joker``, ``back``, ``JOKER``
...) labels something that must not be read as a card, so a card read there is invented.

Per stage, on corner-index labels (boxes around each printed rank and pip): the detector's
recall of the labelled indices, and the classifier's accuracy on the labelled boxes
themselves, cut as inference cuts them, with the look-alike suits (club and spade, heart and
diamond) counted apart and everything split by how tall the index is in the picture. A
labelled index is found when a detector box and the label each hold the other's centre:
datasets draw index boxes looser or tighter than the detector does (on rf-zk7wu-phone
close-ups a label often has twice the area of the detector's box on the same glyphs, an
IoU under 0.5), and that must not count as a miss. The share also found at IoU >= 0.5 is
reported beside it, as a measure of how tightly the boxes fit.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from scorer.cards import CLASS_NAMES, RANKS, Card, InvalidCardError
from scorer.errors import OkginError, shown
from scorer.files import why_not_a_folder
from scorer.vision.boxes import box_centre, box_from_row, box_height, contains_point, iou, overlaps, widen_box
from scorer.vision.images import ImageError, load_image, write_image
from scorer.vision.labels import LabelError, read_class_names, read_label_file
from scorer.vision.types import Box, CardDetection, Detector

if TYPE_CHECKING:
    import numpy as np

    from scorer.vision.boxes import FusedBoxes
    from scorer.vision.crops import Stretch
    from scorer.vision.manifest import ModelManifest
    from scorer.vision.types import CornerEvidence, Detections

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp")
LABEL_MARGIN = 0.25
"""A label box is widened by this share of its size on each side before testing overlap."""

INDEX_MATCH_IOU = 0.5
"""The overlap at which a detector box also fits a labelled index tightly (``detector_recall_iou``)."""

HEIGHT_BUCKETS: tuple[tuple[str, float], ...] = (
    ("<16 px", 16),
    ("16-25 px", 25),
    ("25-60 px", 60),
    (">60 px", math.inf),
)
"""Index heights reported apart (name, upper bound in pixels): below 16 px a club's three lobes are a few pixels."""

_CARD_CODE = re.compile(r"^(\d{1,2}|[AJQKT])\S$", re.IGNORECASE)
"""A rank (one or two digits, or A J Q K T) and one more character. A class name of this shape that names no card
is refused as a typo ("0C", "QX", and so "JK" too): a class that is not a card is named by a word ("joker")."""

CLASSES_BESIDE_LABELS = "classes.txt"
"""Where labelImg keeps the class names: in the labels folder, beside the photos' label files."""


class EvalError(OkginError):
    """A dataset that cannot be evaluated: missing folders, a bad classes file or label line."""


@dataclasses.dataclass(frozen=True)
class ClassList:
    """A dataset's classes: the card each class id names, or None for a class that is not a card.

    >>> classes = ClassList.from_names(["AS", "joker", "10h"])
    >>> classes.cards, classes.non_cards
    ((Card.parse('AS'), None, Card.parse('10H')), ('joker',))

    :raises EvalError: for a name shaped like a card code that names no card, or no card at all.
    """

    names: tuple[str, ...]
    cards: tuple[Card | None, ...] = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        cards: list[Card | None] = []
        for class_id, name in enumerate(self.names):
            try:
                cards.append(Card.parse(name))
            except InvalidCardError as error:
                if _CARD_CODE.match(name):
                    raise EvalError(
                        f"class {class_id}: {error}; a class that is not a card needs a name that is no card code, "
                        "such as 'joker' or 'back'"
                    ) from None
                cards.append(None)
        if not any(cards):
            raise EvalError(f"the classes ({', '.join(self.names) or 'none'}) name no card")
        object.__setattr__(self, "cards", tuple(cards))

    @classmethod
    def from_names(cls, names: Sequence[str]) -> ClassList:
        return cls(tuple(names))

    @classmethod
    def read(cls, path: str | Path) -> ClassList:
        """The classes of a ``classes.txt``: one name a line, in class-id order.

        :raises EvalError: naming the file and the class that is wrong.
        """
        try:
            names = read_class_names(path)
        except LabelError as error:
            raise EvalError(str(error)) from None
        try:
            return cls(tuple(names))
        except EvalError as error:
            raise EvalError(f"{path}: {error}") from None

    @classmethod
    def okgin(cls) -> ClassList:
        """okgin's own class order (``scorer.cards.CLASS_NAMES``), as ``okgin data generate`` labels scenes."""
        return cls(CLASS_NAMES)

    @property
    def non_cards(self) -> tuple[str, ...]:
        """The names of the classes that are not cards."""
        return tuple(name for name, card in zip(self.names, self.cards, strict=True) if card is None)

    def same_card_names(self) -> list[tuple[Card, tuple[str, ...]]]:
        """The cards that more than one class names (``AS`` and ``as``): merged when scored, and said so.

        >>> ClassList.from_names(["AS", "as", "KD"]).same_card_names()
        [(Card.parse('AS'), ('AS', 'as'))]
        """
        names_of: defaultdict[Card, list[str]] = defaultdict(list)
        for name, card in zip(self.names, self.cards, strict=True):
            if card is not None:
                names_of[card].append(name)
        return [(card, tuple(names)) for card, names in names_of.items() if len(names) > 1]


@dataclasses.dataclass(frozen=True)
class LabelledCard:
    """A card the photo is labelled with, and its label boxes in pixels (one per box in the file)."""

    card: Card
    boxes: tuple[Box, ...]


@dataclasses.dataclass(frozen=True)
class ImageLabels:
    """What one photo is labelled with: its cards, and the boxes of things that are not cards."""

    cards: tuple[LabelledCard, ...]
    non_cards: tuple[Box, ...] = ()


@dataclasses.dataclass(frozen=True)
class ImageResult:
    """One photo: what it shows, what was found, what was missed and what was invented."""

    image: str
    expected: tuple[Card, ...]
    found: tuple[Card, ...]  # predicted and right
    missed: tuple[Card, ...]
    invented: tuple[Card, ...]
    confusions: tuple[tuple[Card, Card], ...] = ()  # (labelled, predicted) on the same spot
    on_non_cards: tuple[Card, ...] = ()  # invented cards read on a label that is not a card (a joker, a back)

    @property
    def exact(self) -> bool:
        return not self.missed and not self.invented

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ImageResult:
        """The result ``to_dict`` wrote (one photo of ``per-image.json``).

        >>> result = ImageResult("a.jpg", (Card.parse("QC"),), (), (Card.parse("QC"),), (Card.parse("QS"),))
        >>> ImageResult.from_dict(result.to_dict()) == result
        True
        """

        def cards(key: str) -> tuple[Card, ...]:
            return tuple(Card.parse(text) for text in data.get(key, ()))

        return cls(
            str(data["image"]),
            cards("expected"),
            cards("found"),
            cards("missed"),
            cards("invented"),
            tuple((Card.parse(a), Card.parse(b)) for a, b in data.get("confusions", ())),
            cards("on_non_cards"),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "image": self.image,
            "exact": self.exact,
            "expected": [str(c) for c in self.expected],
            "found": [str(c) for c in self.found],
            "missed": [str(c) for c in self.missed],
            "invented": [str(c) for c in self.invented],
            "confusions": [[str(a), str(b)] for a, b in self.confusions],
            "on_non_cards": [str(c) for c in self.on_non_cards],
        }


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


@dataclasses.dataclass(frozen=True)
class EvalReport:
    """Totals over all photos; ``errors`` lists photos that could not be read."""

    images: tuple[ImageResult, ...]
    errors: tuple[str, ...] = ()
    non_card_classes: tuple[str, ...] = ()  # classes of the dataset that are not cards
    stages: StageReport | None = None  # per-stage figures, for corner-index labels
    notes: tuple[str, ...] = ()  # what the dataset holds that the figures leave out or merge (``dataset_notes``)

    @property
    def true_positives(self) -> int:
        return sum(len(r.found) for r in self.images)

    @property
    def invented(self) -> int:
        """Cards read that the photos are not labelled with where they were read."""
        return sum(len(r.invented) for r in self.images)

    @property
    def precision(self) -> float:
        return _ratio(self.true_positives, self.true_positives + self.invented)

    @property
    def recall(self) -> float:
        return _ratio(self.true_positives, sum(len(r.expected) for r in self.images))

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def exact_images(self) -> int:
        return sum(r.exact for r in self.images)

    def confusions(self) -> Counter[tuple[Card, Card]]:
        """How often each labelled card was read as another, over all photos."""
        return Counter(pair for r in self.images for pair in r.confusions)

    def summary_line(self) -> str:
        """``precision 0.xxx recall 0.xxx F1 0.xxx exact-images k/n``: three places, since on a few hundred
        cards one card moves a figure by about 0.003 and candidates are compared at that grain."""
        return (
            f"precision {self.precision:.3f} recall {self.recall:.3f} F1 {self.f1:.3f} "
            f"exact-images {self.exact_images}/{len(self.images)}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
            "exact_images": self.exact_images,
            "images": len(self.images),
            "cards_labelled": sum(len(r.expected) for r in self.images),
            "cards_found": self.true_positives,
            "cards_missed": sum(len(r.missed) for r in self.images),
            "cards_invented": self.invented,
            "cards_read_on_non_cards": sum(len(r.on_non_cards) for r in self.images),
            "non_card_classes": list(self.non_card_classes),
            "confusions": [
                {"labelled": str(a), "predicted": str(b), "count": n} for (a, b), n in self.confusions().most_common()
            ],
            "errors": list(self.errors),
            "notes": list(self.notes),
            **({} if self.stages is None else {"stages": self.stages.to_dict()}),
        }


def read_labels(path: Path, classes: Sequence[Card | None], width: int, height: int) -> ImageLabels:
    """The labelled cards of one photo, and its labels that are not cards (``classes[id]`` None);
    a missing label file means a photo without labels.

    :raises EvalError: naming the file and line of a malformed label.
    """
    try:
        labels = read_label_file(path, width, height, class_count=len(classes))
    except LabelError as error:
        raise EvalError(str(error)) from None
    boxes: dict[Card, list[Box]] = defaultdict(list)
    non_cards = []
    for label in labels:
        card = classes[label.class_id]
        if card is None:
            non_cards.append(label.box)
        else:
            boxes[card].append(label.box)
    return ImageLabels(tuple(LabelledCard(card, tuple(found)) for card, found in boxes.items()), tuple(non_cards))


def _lies_on(predicted: Box, label: LabelledCard) -> bool:
    return not label.boxes or any(overlaps(predicted, widen_box(box, LABEL_MARGIN)) for box in label.boxes)


def match_image(
    image: str, predicted: Sequence[CardDetection], labelled: Sequence[LabelledCard], non_cards: Sequence[Box] = ()
) -> ImageResult:
    """Compare one photo's predicted cards with its labels (see the module docstring); ``non_cards``
    are the boxes of labelled things that are not cards, where any card read is invented.

    >>> qh, qd = Card.parse("QH"), Card.parse("QD")
    >>> result = match_image("p.jpg", [CardDetection(qd, (0, 0, 10, 10), 0.9)], [LabelledCard(qh, ((0, 0, 50, 80),))])
    >>> [str(c) for c in result.missed], [str(c) for c in result.invented], result.exact
    (['QH'], ['QD'], False)
    """
    labels = {label.card: label for label in labelled}
    found: list[CardDetection] = []
    invented: list[CardDetection] = []
    for detection in predicted:
        label = labels.get(detection.card)
        (found if label is not None and _lies_on(detection.box, label) else invented).append(detection)
    found_cards = {d.card for d in found}
    missed = [label for label in labelled if label.card not in found_cards]
    confusions = []
    unpaired = sorted(invented, key=lambda d: -d.confidence)
    for label in missed:  # a missed card read as another: the surest invented card lying on it, each used once
        reading = next((d for d in unpaired if label.boxes and _lies_on(d.box, label)), None)
        if reading is not None:
            unpaired.remove(reading)
            confusions.append((label.card, reading.card))
    return ImageResult(
        image=image,
        expected=tuple(sorted(labels)),
        found=tuple(sorted(found_cards)),
        missed=tuple(sorted(label.card for label in missed)),
        invented=tuple(sorted(d.card for d in invented)),
        confusions=tuple(confusions),
        on_non_cards=tuple(
            sorted(d.card for d in invented if any(overlaps(d.box, widen_box(box, LABEL_MARGIN)) for box in non_cards))
        ),
    )


def dataset_images(images_dir: str | Path, only: Sequence[str] = ()) -> list[Path]:
    """The photos of a folder, sorted by name; with ``only``, those whose file name matches one of
    these shell patterns (one deck or one kind of shot of a mixed set is then scored on its own).

    :raises EvalError: when the folder is missing or holds no (matching) image.
    """
    folder = Path(images_dir)
    if not folder.is_dir():
        raise EvalError(f"images folder {str(folder)!r} {why_not_a_folder(folder)}")
    photos = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not photos:
        raise EvalError(f"images folder {str(folder)!r} holds no {'/'.join(IMAGE_SUFFIXES)} files")
    if only:
        photos = [p for p in photos if any(fnmatch.fnmatchcase(p.name, pattern) for pattern in only)]
        if not photos:
            raise EvalError(f"no photo in {str(folder)!r} matches {' or '.join(repr(p) for p in only)}")
    return photos


# --- per stage: corner-index labels ----------------------------------------------------------------------------------

LOOK_ALIKES = {"C": "S", "S": "C", "H": "D", "D": "H"}
"""The suit each suit is most easily misread as: the other suit of its colour, told apart by a few pixels."""

OUTCOMES = ("right", "club_as_spade", "spade_as_club", "heart_as_diamond", "diamond_as_heart", "other_card", "none")
"""What the classifier made of a labelled index (``IndexReading.outcome``)."""

_SUIT_WORDS = {"C": "club", "D": "diamond", "H": "heart", "S": "spade"}


@dataclasses.dataclass(frozen=True)
class IndexReading:
    """One labelled corner index and what each stage made of it."""

    card: Card
    height: float  # the labelled box's height in the picture, in pixels
    detected: bool  # some detector box and the labelled box hold each other's centre
    named: Card | None  # what the classifier reads in the labelled box; None: its no-card class, or too unsure
    fitted: bool = False  # some detector box overlaps it by INDEX_MATCH_IOU
    box: Box | None = None  # the labelled box, in the photo's pixels
    photo: Path | None = None  # the photo it is on, for drawing the failures (``write_index_sheet``)

    @property
    def outcome(self) -> str:
        """One of ``OUTCOMES``: right, a look-alike suit (same rank), another card, or no card.

        >>> IndexReading(Card.parse("JC"), 20, True, Card.parse("JS")).outcome
        'club_as_spade'
        """
        if self.named is None:
            return "none"
        if self.named == self.card:
            return "right"
        if self.named.rank == self.card.rank and LOOK_ALIKES[self.card.suit] == self.named.suit:
            return f"{_SUIT_WORDS[self.card.suit]}_as_{_SUIT_WORDS[self.named.suit]}"
        return "other_card"

    @property
    def bucket(self) -> str:
        """The name of its ``HEIGHT_BUCKETS`` row."""
        return next(name for name, upper in HEIGHT_BUCKETS if self.height < upper)


@dataclasses.dataclass(frozen=True)
class StageReport:
    """Per-stage figures over a dataset's labelled corner indices.

    ``non_card_boxes`` counts the labelled boxes of things that are not cards (jokers, backs),
    ``non_card_boxes_named`` those the classifier reads as some card all the same.
    """

    indices: tuple[IndexReading, ...]
    non_card_boxes: int = 0
    non_card_boxes_named: int = 0

    @property
    def detector_recall(self) -> float:
        """The share of labelled indices the detector found."""
        return _ratio(sum(r.detected for r in self.indices), len(self.indices))

    @property
    def detector_recall_iou(self) -> float:
        """The share of labelled indices a detector box also overlaps by ``INDEX_MATCH_IOU``."""
        return _ratio(sum(r.fitted for r in self.indices), len(self.indices))

    @property
    def classifier_accuracy(self) -> float:
        """The share of labelled index boxes the classifier named right."""
        return _ratio(sum(r.outcome == "right" for r in self.indices), len(self.indices))

    def rows(self) -> list[dict[str, Any]]:
        """One row per index height (``HEIGHT_BUCKETS``, empty ones left out) and a last row for all."""
        groups = [(name, [r for r in self.indices if r.bucket == name]) for name, _ in HEIGHT_BUCKETS]
        rows = []
        for name, readings in [*((n, g) for n, g in groups if g), ("all", list(self.indices))]:
            outcomes = Counter(r.outcome for r in readings)
            rows.append(
                {
                    "height": name,
                    "labelled": len(readings),
                    "detected": sum(r.detected for r in readings),
                    **{outcome: outcomes[outcome] for outcome in OUTCOMES},
                }
            )
        return rows

    def confusions(self) -> Counter[tuple[Card, Card]]:
        """How often the classifier read each labelled index as another card."""
        return Counter((r.card, r.named) for r in self.indices if r.named is not None and r.named != r.card)

    def to_dict(self) -> dict[str, Any]:
        return {
            "indices": len(self.indices),
            "detector_recall": round(self.detector_recall, 4),
            "detector_recall_iou": round(self.detector_recall_iou, 4),
            "match_iou": INDEX_MATCH_IOU,
            "classifier_accuracy": round(self.classifier_accuracy, 4),
            "by_height": self.rows(),
            "confusions": [
                {"labelled": str(a), "predicted": str(b), "count": n} for (a, b), n in self.confusions().most_common()
            ],
            "non_card_boxes": self.non_card_boxes,
            "non_card_boxes_named": self.non_card_boxes_named,
        }


def read_indices(
    labels: ImageLabels, detector_boxes: Sequence[Box], named: Sequence[Card | None], photo: Path | None = None
) -> list[IndexReading]:
    """What both stages made of one photo's labelled corner indices.

    ``named`` is the classifier's reading of each labelled box, in the order of
    ``labels.cards`` and their boxes; ``photo`` is where they are, kept with each reading.

    >>> labels = ImageLabels((LabelledCard(Card.parse("QC"), ((10, 10, 20, 30), (80, 80, 90, 100))),))
    >>> [(r.detected, r.outcome) for r in read_indices(labels, [(12, 14, 18, 26)], [Card.parse("QS"), None])]
    [(True, 'club_as_spade'), (False, 'none')]

    :raises ValueError: when there is not one reading per labelled box.
    """
    boxes = [(label.card, box) for label in labels.cards for box in label.boxes]
    if len(named) != len(boxes):
        raise ValueError(f"{len(named)} classifier readings for {len(boxes)} labelled boxes")
    return [
        IndexReading(
            card,
            box_height(box),
            detected=any(_same_index(box, found) for found in detector_boxes),
            named=name,
            fitted=any(iou(box, found) >= INDEX_MATCH_IOU for found in detector_boxes),
            box=box,
            photo=photo,
        )
        for (card, box), name in zip(boxes, named, strict=True)
    ]


def _same_index(label: Box, found: Box) -> bool:
    """Whether a detector box is on a labelled index: each holds the other's centre (see the module docstring)."""
    return contains_point(label, box_centre(found)) and contains_point(found, box_centre(label))


def labels_are_corners(labels_dir: str | Path, classes: ClassList) -> bool:
    """Whether a label folder boxes corner indices rather than whole cards: some photo labels
    one card more than once (a card shows its index in two or four corners, but is one card).

    :raises EvalError: for an unreadable label file.
    """
    for path in sorted(Path(labels_dir).glob("*.txt")):
        if path.name == CLASSES_BESIDE_LABELS:  # the class names, not a photo's labels
            continue
        try:
            # the size does not matter here: only how often each class is labelled
            labels = read_label_file(path, 1, 1, class_count=len(classes.cards))
        except LabelError as error:
            raise EvalError(str(error)) from None
        seen = Counter(label.class_id for label in labels if classes.cards[label.class_id] is not None)
        if any(count > 1 for count in seen.values()):
            return True
    return False


class StagedDetector(Protocol):
    """A two-stage detector whose stages can be run apart: ``scorer.vision.detector.CardDetector``."""

    manifest: ModelManifest
    classifier: Any

    def find_boxes(self, image_bgr: np.ndarray) -> FusedBoxes: ...

    def read_corners(self, image_bgr: np.ndarray, found: FusedBoxes | None = None) -> list[CornerEvidence]: ...

    def cards_from(self, corners: Sequence[CornerEvidence], width: int, height: int) -> Detections: ...

    def name_frame_boxes(
        self, image_bgr: np.ndarray, boxes: Sequence[Box]
    ) -> tuple[list[tuple[Card | None, float]], Stretch]: ...


def _staged(detector: Detector) -> StagedDetector | None:
    """The detector, if it has two stages that can be run apart (else None, with the reason in ``_why_not_staged``)."""
    return detector if _why_not_staged(detector) is None else None  # type: ignore[return-value]


def _why_not_staged(detector: Detector) -> str | None:
    needed = ("find_boxes", "read_corners", "name_frame_boxes", "cards_from", "manifest")
    if not all(hasattr(detector, name) for name in needed):
        return "per-stage figures need okgin's two-stage detector (CardDetector)"
    if getattr(detector, "classifier", None) is None:
        manifest = detector.manifest  # type: ignore[attr-defined]
        return f"per-stage figures need a two-stage model; the one in {manifest.directory} is {manifest.design}"
    return None


def _read_in_stages(
    detector: StagedDetector, image: np.ndarray, labels: ImageLabels, photo: Path | None = None
) -> tuple[Detections, list[IndexReading], int]:
    """One photo through both stages: its cards (as ``detect`` reads them), what each stage made of its
    labelled indices, and how many of its non-card boxes the classifier reads as a card."""
    height, width = image.shape[:2]
    found = detector.find_boxes(image)
    detections = detector.cards_from(detector.read_corners(image, found), width, height)
    index_boxes = [box for label in labels.cards for box in label.boxes]
    threshold = detector.manifest.classifier_conf
    named_boxes, _ = detector.name_frame_boxes(image, [*index_boxes, *labels.non_cards])  # as inference names
    named = [card if probability >= threshold else None for card, probability in named_boxes]
    readings = read_indices(labels, [box_from_row(row) for row in found.xyxy], named[: len(index_boxes)], photo)
    return detections, readings, sum(card is not None for card in named[len(index_boxes) :])


def evaluate_dataset(
    detector: Detector,
    images_dir: str | Path,
    labels_dir: str | Path,
    classes: str | Path | ClassList | None = None,
    progress: Callable[[Iterable[Path]], Iterable[Path]] = iter,
    stages: bool | None = False,
    only: Sequence[str] = (),
) -> EvalReport:
    """Run ``detector`` over every photo in ``images_dir`` and score it against ``labels_dir/<stem>.txt``.

    ``classes`` is a ``classes.txt`` (or a ``ClassList``); None means the ``classes.txt`` in ``labels_dir`` where
    there is one (labelImg's layout), else the one beside it (a set's ``images/``, ``labels/`` and ``classes.txt``
    side by side, as Roboflow exports them), a note saying which was used, else okgin's own class order, as
    ``okgin data generate`` labels scenes; ``only`` keeps the photos whose names match (``dataset_images``).
    ``stages=True`` adds per-stage figures (``StageReport``;
    the labels must box corner indices, and the detector be a two-stage ``CardDetector``); None adds
    them when the labels box corner indices (``labels_are_corners``). For generated validation scenes:
    ``evaluate_dataset(CardDetector(), "gen/images/val", "gen/labels/val", stages=True)``.
    A photo that cannot be read is listed in ``errors`` and left out of the totals.

    :raises EvalError: for a missing folder, a malformed classes or label file, or per-stage figures
        asked of whole-card labels or of a detector without two stages.
    """
    labels_folder = Path(labels_dir)
    class_notes: tuple[str, ...] = ()
    if classes is None:  # labels in their set's own class order scored in okgin's read as other cards, without a word
        found = [where for where in (labels_folder, labels_folder.parent) if (where / CLASSES_BESIDE_LABELS).is_file()]
        if found:
            classes = found[0] / CLASSES_BESIDE_LABELS
            place = "in the labels folder" if found[0] == labels_folder else "beside the labels folder"
            class_notes = (f"classes read from {str(classes)!r}, the classes file {place}",)
    if classes is None:
        class_list = ClassList.okgin()
    else:
        class_list = classes if isinstance(classes, ClassList) else ClassList.read(classes)
    if not labels_folder.is_dir():
        raise EvalError(f"labels folder {str(labels_folder)!r} {why_not_a_folder(labels_folder)}")
    photos = dataset_images(images_dir, only)
    corners = stages is not False and labels_are_corners(labels_folder, class_list)
    if stages and not corners:
        raise EvalError(
            f"the labels in {str(labels_folder)!r} box whole cards (no photo labels a card twice); "
            "per-stage figures need corner-index boxes"
        )
    if stages and (reason := _why_not_staged(detector)) is not None:
        raise EvalError(reason)
    staged = _staged(detector) if corners else None  # asked for, or corner labels and a detector that can
    results, errors, indices, non_card_boxes, non_cards_named = [], [], [], 0, 0
    for photo in progress(photos):
        try:
            image = load_image(photo)
        except ImageError as error:
            errors.append(str(error))
            continue
        height, width = image.shape[:2]
        labels = read_labels(labels_folder / f"{photo.stem}.txt", class_list.cards, width, height)
        if staged is None:
            detections = detector.detect(image)
        else:
            detections, readings, named = _read_in_stages(staged, image, labels, photo)
            indices.extend(readings)
            non_card_boxes += len(labels.non_cards)
            non_cards_named += named
        results.append(match_image(photo.name, detections.cards, labels.cards, labels.non_cards))
    report = StageReport(tuple(indices), non_card_boxes, non_cards_named) if staged is not None else None
    notes = (*class_notes, *dataset_notes(images_dir, labels_folder, class_list))
    return EvalReport(tuple(results), tuple(errors), class_list.non_cards, report, notes)


def dataset_notes(images_dir: str | Path, labels_dir: str | Path, classes: ClassList) -> tuple[str, ...]:
    """What a dataset holds that its figures leave out or merge, said rather than passed over: label files
    with no photo of their name (a photo renamed or missing), and cards that two classes name."""
    photo_stems = {p.stem for p in Path(images_dir).iterdir() if p.suffix.lower() in IMAGE_SUFFIXES}
    orphans = sorted(
        p.name for p in Path(labels_dir).glob("*.txt") if p.name != CLASSES_BESIDE_LABELS and p.stem not in photo_stems
    )
    notes = []
    if orphans:
        example = ", ".join(shown(name) for name in orphans[:3])
        notes.append(f"{len(orphans)} label file(s) have no photo of their name and are not scored ({example})")
    for card, names in classes.same_card_names():
        notes.append(f"classes {', '.join(shown(n) for n in names)} all name {card}: scored as one card")
    return tuple(notes)


def format_stages(report: StageReport) -> str:
    """The per-stage table: per index height, how many were labelled, detected, and what the classifier said."""
    columns = ("labelled", "detected", *OUTCOMES)
    titles = ("labelled", "detected", "right", "C->S", "S->C", "H->D", "D->H", "other", "none")
    lines = [f"{'index height':<13}" + "".join(f"{title:>9}" for title in titles)]
    for row in report.rows():
        lines.append(f"{row['height']:<13}" + "".join(f"{row[column]:>9}" for column in columns))
    for (labelled, named), count in report.confusions().most_common(5):
        lines.append(f"classifier read {labelled} as {named} x{count}")
    if report.non_card_boxes:
        lines.append(f"non-card boxes read as a card: {report.non_card_boxes_named}/{report.non_card_boxes}")
    lines.append(
        f"detector recall {report.detector_recall:.2f} ({report.detector_recall_iou:.2f} at IoU >= {INDEX_MATCH_IOU}), "
        f"classifier accuracy {report.classifier_accuracy:.2f} on {len(report.indices)} labelled indices"
    )
    return "\n".join(lines)


def format_report(report: EvalReport) -> str:
    """A per-rank table (labelled, found, missed, invented) ending with the summary line; the photos that could
    not be read (``errors``) are the caller's to report, as errors."""
    rows = {rank: Counter[str]() for rank in RANKS}
    for result in report.images:
        for key, cards in (
            ("labelled", result.expected),
            ("found", result.found),
            ("missed", result.missed),
            ("invented", result.invented),
        ):
            for card in cards:
                rows[card.rank_text][key] += 1
    lines = [f"{'rank':<5}{'labelled':>9}{'found':>7}{'missed':>8}{'invented':>9}"]
    for rank, counts in rows.items():
        if sum(counts.values()):
            lines.append(
                f"{rank:<5}{counts['labelled']:>9}{counts['found']:>7}{counts['missed']:>8}{counts['invented']:>9}"
            )
    for (labelled, predicted), count in report.confusions().most_common(5):
        lines.append(f"confused {labelled} -> {predicted} x{count}")
    on_non_cards = sum(len(r.on_non_cards) for r in report.images)
    if report.non_card_classes:
        names = ", ".join(report.non_card_classes)
        lines.append(f"not cards: {names} ({on_non_cards} cards read on them, counted as invented)")
    lines.extend(f"note: {note}" for note in report.notes)
    if report.stages is not None:
        lines.append(format_stages(report.stages))
    lines.append(report.summary_line())
    return "\n".join(lines)


SHEET_TILE = 112
"""The side of one index's picture on the failures sheet (``write_index_sheet``), in pixels."""

SHEET_COLUMNS = 8
SHEET_LIMIT = 240
"""The most indices one failures sheet draws: the missed first, then the misread, smallest first."""

_CAPTION = 28  # two lines of caption above each tile


def write_index_sheet(report: StageReport, path: str | Path, limit: int = SHEET_LIMIT) -> Path | None:
    """Draw the labelled indices some stage got wrong into one picture, for looking at.

    Each is cut from its photo with three times its size around it, its labelled box in red, captioned with
    the card, what the classifier read in the box (``-``: no card), its height, "missed" when the detector did
    not find it, and the photo's name. The tables count failures; only the pictures tell a blurred or tiny
    index from a misread glyph or a label that boxes something else. None when nothing failed (or no reading
    knows its photo).
    """
    import itertools

    import numpy as np

    wrong = [
        reading
        for reading in report.indices
        if reading.photo is not None
        and reading.box is not None
        and not (reading.detected and reading.outcome == "right")
    ]
    chosen = sorted(wrong, key=lambda r: (r.detected, r.outcome, r.height))[:limit]
    if not chosen:
        return None
    place = {id(reading): number for number, reading in enumerate(chosen)}
    tiles: list[np.ndarray | None] = [None] * len(chosen)
    by_photo = sorted(chosen, key=lambda r: str(r.photo))  # each photo read once
    for photo, readings in itertools.groupby(by_photo, key=lambda r: r.photo):
        assert photo is not None
        try:
            image = load_image(photo)
        except ImageError:
            continue
        for reading in readings:
            tiles[place[id(reading)]] = _failure_tile(image, reading)
    drawn = [tile for tile in tiles if tile is not None]
    if not drawn:
        return None
    columns = min(SHEET_COLUMNS, len(drawn))
    blank = np.full_like(drawn[0], 255)
    drawn += [blank] * (-len(drawn) % columns)
    rows = [np.concatenate(drawn[start : start + columns], axis=1) for start in range(0, len(drawn), columns)]
    return write_image(path, np.concatenate(rows, axis=0))


def _failure_tile(image: np.ndarray, reading: IndexReading) -> np.ndarray:
    """One failed index for ``write_index_sheet``: its surroundings scaled to ``SHEET_TILE``, box and caption drawn."""
    import cv2
    import numpy as np

    assert reading.box is not None and reading.photo is not None
    x1, y1, x2, y2 = reading.box
    side = max(x2 - x1, y2 - y1, 8.0) * 3
    left, top = (x1 + x2 - side) / 2, (y1 + y2 - side) / 2
    scale = SHEET_TILE / side
    matrix = np.array([[scale, 0.0, -left * scale], [0.0, scale, -top * scale]], np.float32)
    tile = cv2.warpAffine(
        image, matrix, (SHEET_TILE, SHEET_TILE), borderMode=cv2.BORDER_CONSTANT, borderValue=(128, 128, 128)
    )
    corners = [(round((x - left) * scale), round((y - top) * scale)) for x, y in ((x1, y1), (x2, y2))]
    cv2.rectangle(tile, corners[0], corners[1], (0, 0, 255), 1)
    named = "-" if reading.named is None else str(reading.named)
    lines = (
        f"{reading.card}>{named} h{reading.height:.0f}{'' if reading.detected else ' missed'}",
        reading.photo.stem[:18],
    )
    tile = cv2.copyMakeBorder(tile, _CAPTION, 0, 0, 0, cv2.BORDER_CONSTANT, value=(255, 255, 255))
    for number, line in enumerate(lines):
        cv2.putText(tile, line, (2, 11 + 13 * number), cv2.FONT_HERSHEY_SIMPLEX, 0.35, (0, 0, 0), 1, cv2.LINE_AA)
    return tile


def write_plots(report: EvalReport, directory: str | Path, top: int = 20) -> list[Path]:
    """Write ``confusions.png`` (the most-confused cards) and ``per-image.json`` (missed/invented per photo),
    and with per-stage figures ``indices.png``, the labelled indices a stage got wrong (``write_index_sheet``).

    Uses matplotlib's Agg backend and its bundled font: nothing is downloaded.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    per_image = folder / "per-image.json"
    per_image.write_text(
        json.dumps({"summary": report.to_dict(), "images": [r.to_dict() for r in report.images]}, indent=1) + "\n"
    )
    pairs = report.confusions().most_common(top)
    figure, axes = plt.subplots(figsize=(7, 0.35 * max(len(pairs), 3) + 1.2))
    if pairs:
        labels = [f"{a} read as {b}" for (a, b), _ in pairs][::-1]
        axes.barh(labels, [n for _, n in pairs][::-1], color="#b04040")
        axes.set_xlabel("times")
    else:
        axes.text(0.5, 0.5, "no card read as another", ha="center", va="center")
        axes.set_axis_off()
    axes.set_title(f"Most-confused cards ({report.summary_line()})", fontsize=9)
    figure.tight_layout()
    chart = folder / "confusions.png"
    figure.savefig(chart, dpi=100)
    plt.close(figure)
    written = [chart, per_image]
    if report.stages is not None and (sheet := write_index_sheet(report.stages, folder / "indices.png")) is not None:
        written.append(sheet)
    return written
