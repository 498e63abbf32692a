"""How well the detector reads real photos: card-level precision, recall, F1 and exact images.

The yardstick is a folder of photos with YOLO label files (``class xc yc w h``,
normalised), whose boxes may cover whole cards or corner indices. What matters to a
player is the card, so scoring is per card and per image: a predicted card is right when
the photo is labelled with that card and (labels having boxes) the prediction lies on
it, generously. A photo is *exact* when nothing is missed and nothing invented.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorer.cards import RANKS, Card, InvalidCardError
from scorer.errors import OkginError
from scorer.vision.images import ImageError, load_image
from scorer.vision.types import Box, CardDetection

if TYPE_CHECKING:
    from scorer.vision.pipeline import Detector

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp")
LABEL_MARGIN = 0.25
"""A label box is widened by this share of its size on each side before testing overlap."""


class EvalError(OkginError):
    """A dataset that cannot be evaluated: missing folders, a bad classes file or label line."""


@dataclasses.dataclass(frozen=True)
class LabelledCard:
    """A card the photo is labelled with, and its label boxes in pixels (one per box in the file)."""

    card: Card
    boxes: tuple[Box, ...]


@dataclasses.dataclass(frozen=True)
class ImageResult:
    """One photo: what it shows, what was found, what was missed and what was invented."""

    image: str
    expected: tuple[Card, ...]
    found: tuple[Card, ...]  # predicted and right
    missed: tuple[Card, ...]
    invented: tuple[Card, ...]
    confusions: tuple[tuple[Card, Card], ...] = ()  # (labelled, predicted) on the same spot

    @property
    def exact(self) -> bool:
        return not self.missed and not self.invented

    def to_dict(self) -> dict[str, Any]:
        return {
            "image": self.image,
            "exact": self.exact,
            "expected": [str(c) for c in self.expected],
            "found": [str(c) for c in self.found],
            "missed": [str(c) for c in self.missed],
            "invented": [str(c) for c in self.invented],
            "confusions": [[str(a), str(b)] for a, b in self.confusions],
        }


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


@dataclasses.dataclass(frozen=True)
class EvalReport:
    """Totals over all photos; ``errors`` lists photos that could not be read."""

    images: tuple[ImageResult, ...]
    errors: tuple[str, ...] = ()

    @property
    def true_positives(self) -> int:
        return sum(len(r.found) for r in self.images)

    @property
    def precision(self) -> float:
        return _ratio(self.true_positives, self.true_positives + sum(len(r.invented) for r in self.images))

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
        """``precision 0.xx recall 0.xx F1 0.xx exact-images k/n``."""
        return (
            f"precision {self.precision:.2f} recall {self.recall:.2f} F1 {self.f1:.2f} "
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
            "cards_invented": sum(len(r.invented) for r in self.images),
            "confusions": [
                {"labelled": str(a), "predicted": str(b), "count": n} for (a, b), n in self.confusions().most_common()
            ],
            "errors": list(self.errors),
        }


def read_classes(path: str | Path) -> list[Card]:
    """The card of each class id, one code per line (``10C``, ``AS``...), in any order.

    :raises EvalError: naming the file and line of a code that is not a card.
    """
    file = Path(path)
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise EvalError(f"could not read classes file {str(file)!r}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise EvalError(f"classes file {str(file)!r} is not a text file of card codes") from None
    cards = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            cards.append(Card.parse(line.strip()))
        except InvalidCardError as error:
            raise EvalError(f"{file}:{number}: {error}") from None
    if not cards:
        raise EvalError(f"classes file {str(file)!r} lists no classes")
    return cards


def read_labels(path: Path, classes: Sequence[Card], width: int, height: int) -> list[LabelledCard]:
    """The labelled cards of one photo; a missing label file means a photo without cards.

    :raises EvalError: naming the file and line of a malformed label.
    """
    if not path.exists():
        return []
    boxes: dict[Card, list[Box]] = defaultdict(list)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise EvalError(f"could not read label file {str(path)!r}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise EvalError(f"label file {str(path)!r} is not a text file of YOLO label lines") from None
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        try:
            class_id = int(fields[0])
            xc, yc, w, h = (float(v) for v in fields[1:5])
            card = classes[class_id]
        except (ValueError, IndexError):
            raise EvalError(f"{path}:{number}: expected 'class xc yc w h' with a class below {len(classes)}") from None
        boxes[card].append(((xc - w / 2) * width, (yc - h / 2) * height, (xc + w / 2) * width, (yc + h / 2) * height))
    return [LabelledCard(card, tuple(found)) for card, found in boxes.items()]


def _widened(box: Box, margin: float = LABEL_MARGIN) -> Box:
    dx, dy = (box[2] - box[0]) * margin, (box[3] - box[1]) * margin
    return (box[0] - dx, box[1] - dy, box[2] + dx, box[3] + dy)


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _lies_on(predicted: Box, label: LabelledCard) -> bool:
    return not label.boxes or any(_overlaps(predicted, _widened(box)) for box in label.boxes)


def match_image(image: str, predicted: Sequence[CardDetection], labelled: Sequence[LabelledCard]) -> ImageResult:
    """Compare one photo's predicted cards with its labels (see the module docstring).

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
    )


def dataset_images(images_dir: str | Path) -> list[Path]:
    """The photos of a folder, sorted by name.

    :raises EvalError: when the folder is missing or holds no image.
    """
    folder = Path(images_dir)
    if not folder.is_dir():
        raise EvalError(f"images folder {str(folder)!r} does not exist")
    photos = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not photos:
        raise EvalError(f"images folder {str(folder)!r} holds no {'/'.join(IMAGE_SUFFIXES)} files")
    return photos


def evaluate_dataset(
    detector: Detector,
    images_dir: str | Path,
    labels_dir: str | Path,
    classes_file: str | Path,
    progress: Callable[[Iterable[Path]], Iterable[Path]] = iter,
) -> EvalReport:
    """Run ``detector`` over every photo in ``images_dir`` and score it against ``labels_dir/<stem>.txt``.

    A photo that cannot be read is listed in ``errors`` and left out of the totals.

    :raises EvalError: for a missing folder or a malformed classes or label file.
    """
    classes = read_classes(classes_file)
    labels_folder = Path(labels_dir)
    if not labels_folder.is_dir():
        raise EvalError(f"labels folder {str(labels_folder)!r} does not exist")
    results, errors = [], []
    for photo in progress(dataset_images(images_dir)):
        try:
            image = load_image(photo)
        except ImageError as error:
            errors.append(str(error))
            continue
        height, width = image.shape[:2]
        labelled = read_labels(labels_folder / f"{photo.stem}.txt", classes, width, height)
        results.append(match_image(photo.name, detector.detect(image).cards, labelled))
    return EvalReport(tuple(results), tuple(errors))


def format_report(report: EvalReport) -> str:
    """A per-rank table (labelled, found, missed, invented) ending with the summary line."""
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
    lines.extend(f"unreadable: {error}" for error in report.errors)
    lines.append(report.summary_line())
    return "\n".join(lines)


def write_plots(report: EvalReport, directory: str | Path, top: int = 20) -> list[Path]:
    """Write ``confusions.png`` (the most-confused cards) and ``per-image.json`` (missed/invented per photo).

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
    return [chart, per_image]
