"""The detector's training recipe: generated scenes -> corner tiles and corner crops ->
a one-class corner detector and a rank/suit classifier -> ONNX exports and a manifest in ``models/``.

Why two stages (measured here, see ``models/README.md``): from scratch on 2 CPU cores a
52-class YOLO11n corner detector learns almost nothing in an hour, while a one-class
corner detector and a small classifier on full-resolution crops each learn in minutes.

Everything runs offline: models are built from yaml (never downloaded weights),
``amp=False`` skips the AMP check that fetches weights, ``plots=False`` skips the font
download, flips are off (a mirrored glyph is not a card) and the optimiser is explicit.
Each stage checkpoints every epoch and resumes where it stopped.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from scorer.cards import CLASS_NAMES
from scorer.errors import OkginError
from scorer.vision.backends import fit_within
from scorer.vision.boxes import (
    box_area,
    box_centre,
    box_from_row,
    clip_box,
    contains_point,
    fuse_looks,
    intersection_area,
    scale_box,
    shift_box,
)
from scorer.vision.crops import CROP_PAD, CROP_SIZE, NEGATIVE_BELOW, index_views
from scorer.vision.labels import LabelError, dataset_yaml, label_line, read_label_file, write_label_file
from scorer.vision.manifest import ModelError, ModelManifest
from scorer.vision.types import Box

if TYPE_CHECKING:
    from scorer.vision.detector import CardDetector
    from scorer.vision.tuning import ThresholdScore

NONE_CLASS = "none"
"""Classifier class for a crop that holds no corner index: rejects the detector's false alarms."""

DETECTOR_IMGSZ = 640
"""Inference size of the corner detector: a frame's longer side is letterboxed to this."""

DETECTOR_COARSE_SIZES = (320,)
"""A second, coarser look at each frame: on the 100 real close-ups of rf-zk7wu-phone it lifted the shipped
detector's recall of labelled indices from 0.59 to 0.93 (see the model card), for a quarter of a look's work."""

TILE_SIZE = 320
"""Training tiles are cut at the pixel scale of inference, so 320 px tiles train a 640 px detector."""

CLASSIFIER_ROTATIONS = (0, 90, 180, 270)
"""Each crop is classified turned these ways and the probabilities averaged: on the 240 gen21 val
scenes this lifted the v4 model's best card F1 from 0.891 (one reading) to 0.906 (see the model card)."""

CLASSIFIER_SURE = 0.98
"""A crop read at least this surely at its first turn is not turned: on the rendered benchmark frames over half
the crops are, and on every yardstick the session-8 model read exactly as well with it (models/HISTORY.md,
Session 9). At 0.95 and below the black deck lost cards the turns had caught."""

CLASSIFIER_NONE_SURE = 0.5
"""Nor is a crop first read as no index at even odds or better: turning such a crop can only make it a card, and
most are the detector's false alarms. On every yardstick the session-8 model read as well or better with it, in
a tenth fewer readings (models/HISTORY.md, Session 9). Below even odds, `none` may lead a split among cards
that the turns settle."""

EXTRA_CROP_PADS = (0.1,)
"""A box its first cut (``CROP_PAD``'s 0.25 margin) leaves unsettled is cut again with a 0.1 margin, and the
readings of both cuts are averaged (``CardDetector.name_boxes``): with the session-8 networks that read every
yardstick as well or better, the poker deck 0.987 against 0.978 (models/HISTORY.md, Session 12). Margins of 0.05
and 0.15 read the black deck worse than 0.1; a third cut read worse than two."""

STAND_IN_SURE = 0.98
"""A box read as no card gives way to a box another look found for the same index, read as a card at least this
surely (``CardDetector.read_corners``): every yardstick read as well or better with it (models/HISTORY.md,
Session 16)."""

NEGATIVE_LOOK_AFTER = 2
"""Two sure light-on-dark indices in a frame and it is looked at in negative as well (``CardDetector.find_boxes``):
on the black deck that found 84% of the labelled indices, against 77%, and only one of the poker deck's 88 photos
shows two (models/HISTORY.md, Session 11)."""

GRAIN_MEDIAN_ABOVE = 4.5
"""A frame whose grain at the detector's size is above this many grey levels (``grain_level``) is looked at
median-filtered as well (``CardDetector.looks``): on grainy training-pool scenes that found more cards at 3, 4
and 4.5, and 4.5 takes the second look at one of the benchmark's 40 rendered frames, 3 at ten. It read the
webcam-like photos at F1 0.950 against 0.928, the held-out styles better and every real set the same (no real
photo measures over 3.2; models/HISTORY.md, Session 19)."""

COMPLETE_MARKER = "COMPLETE"

MODEL_FILES = {
    "detector": "corner-detector.pt",
    "detector_onnx": "corner-detector.onnx",
    "classifier": "corner-classifier.pt",
    "classifier_onnx": "corner-classifier.onnx",
}


class TrainingError(OkginError, RuntimeError):
    """The recipe cannot go on: missing data, a run that cannot resume."""


@dataclasses.dataclass(frozen=True)
class LabelledImage:
    """One generated scene and its corner boxes in pixels."""

    image_path: Path
    class_ids: tuple[int, ...]
    boxes: tuple[Box, ...]


def offline_environment() -> None:
    """Make sure ultralytics never reaches for the network: no downloads, no pip installs."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_AUTOINSTALL", "false")
    os.environ.setdefault("YOLO_VERBOSE", "false")


def read_split(scene_dir: Path, split: str) -> Iterator[LabelledImage]:
    """The labelled images of one split of an ultralytics dataset written by ``okgin data generate``."""
    image_dir = scene_dir / "images" / split
    if not image_dir.is_dir():
        raise TrainingError(f"no {split} images in {scene_dir}: expected {image_dir} (run 'okgin data generate')")
    for image_path in sorted(image_dir.iterdir()):
        if image_path.suffix.lower() not in {".jpg", ".jpeg", ".png"}:
            continue
        label_path = scene_dir / "labels" / split / f"{image_path.stem}.txt"
        height, width = _image_size(image_path)
        try:
            labelled = read_label_file(label_path, width, height, class_count=len(CLASS_NAMES))
        except LabelError as error:
            raise TrainingError(str(error)) from None
        yield LabelledImage(
            image_path, tuple(label.class_id for label in labelled), tuple(label.box for label in labelled)
        )


def _image_size(path: Path) -> tuple[int, int]:
    """(height, width) read from the file header, without decoding the pixels."""
    from PIL import Image

    with Image.open(path) as image:
        width, height = image.size
    return height, width


TILE_NOISE_SHARE = 0.35
"""The share of scenes whose detector tiles get sensor noise and dead pixels at the detector's own scale
(``noisy_at_detector_scale``)."""


def noisy_at_detector_scale(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``image`` (already at the detector's scale) with grey sensor noise and, half the time, dead and hot pixels.

    A scene's camera noise is drawn at its full size (640 to 1920 px wide), and shrinking it to the detector's
    640 px averages most of it away; a webcam frame of 640 px, or one stretched to a 640 px square, keeps all of
    it, and on such frames the detector missed big, plain indices (models/HISTORY.md, Session 18).
    """
    from scorer.synth.camera import salt_and_pepper, sensor_noise

    noisy = sensor_noise(image.astype(np.float32), rng, 1.0)
    if rng.random() < 0.5:
        noisy = salt_and_pepper(noisy, rng, 1.0)
    return np.clip(noisy, 0, 255).astype(np.uint8)


def make_detector_tiles(
    scene_dir: Path,
    out_dir: Path,
    tiles_per_image: int = 2,
    seed: int = 0,
    imgsz: int = DETECTOR_IMGSZ,
    card_classes: bool = False,
    noise_share: float = TILE_NOISE_SHARE,
) -> Path:
    """Cut one-class training tiles at the pixel scale the detector sees at inference.

    A frame is letterboxed so its longer side is ``imgsz``; each scene is scaled the same
    way and cut into ``TILE_SIZE`` tiles, most of them centred near a labelled corner.
    A corner cut by the tile edge keeps its label only if 60% of it stays inside.
    ``noise_share`` of the scenes are made noisy after shrinking (``noisy_at_detector_scale``).
    With ``card_classes`` the tiles keep the 52 card classes (the one-stage design)
    instead of the single class ``corner``. Returns the dataset YAML.
    """
    import cv2

    rng = random.Random(seed)
    noise_rng = np.random.default_rng(seed)
    for split in ("train", "val"):
        (out_dir / "images" / split).mkdir(parents=True, exist_ok=True)
        (out_dir / "labels" / split).mkdir(parents=True, exist_ok=True)
        for item in read_split(scene_dir, split):
            image = cv2.imread(str(item.image_path))
            if image is None:
                raise TrainingError(f"cannot read generated image {item.image_path}")
            image, scale = _at_inference_scale(image, imgsz)
            if noise_rng.random() < noise_share:
                image = noisy_at_detector_scale(image, noise_rng)
            height, width = image.shape[:2]
            boxes = [scale_box(box, scale) for box in item.boxes]
            classes = item.class_ids if card_classes else (0,) * len(boxes)
            for index in range(tiles_per_image):
                if boxes and rng.random() < 0.8:
                    centre = _near(box_centre(rng.choice(boxes)), rng, width, height)
                else:
                    centre = (rng.uniform(0, width), rng.uniform(0, height))
                _write_tile(image, boxes, classes, centre, out_dir, split, f"{item.image_path.stem}_{index}")
    names = CLASS_NAMES if card_classes else ("corner",)
    yaml_path = out_dir / "data.yaml"
    comment = f"corner tiles cut from {scene_dir} by scorer.training.make_detector_tiles"
    yaml_path.write_text(dataset_yaml(out_dir.resolve(), names, "images/train", "images/val", comment))
    return yaml_path


def _at_inference_scale(image: np.ndarray, imgsz: int) -> tuple[np.ndarray, float]:
    """``image`` shrunk (or grown) so its longer side is ``imgsz``, as the detector's letterbox does, and the scale."""
    small = fit_within(image, (imgsz, imgsz))
    return small, small.shape[1] / image.shape[1]


def _near(point: tuple[float, float], rng: random.Random, width: int, height: int) -> tuple[float, float]:
    """A tile centre up to 0.4 tile from ``point``, so what the tile is cut for is not always in its middle."""
    tile_w, tile_h = min(TILE_SIZE, width), min(TILE_SIZE, height)
    return point[0] + rng.uniform(-0.4, 0.4) * tile_w, point[1] + rng.uniform(-0.4, 0.4) * tile_h


def _write_tile(
    image: np.ndarray,
    boxes: list[Box],
    classes: Sequence[int],
    centre: tuple[float, float],
    out_dir: Path,
    split: str,
    name: str,
) -> None:
    """Cut a ``TILE_SIZE`` tile centred on ``centre`` (moved to stay inside the image) with the labels of
    the corners in it; a corner cut by the tile edge keeps its label only if 60% of it stays inside."""
    import cv2

    height, width = image.shape[:2]
    tile_w, tile_h = min(TILE_SIZE, width), min(TILE_SIZE, height)
    cx, cy = centre
    x0 = int(min(max(cx - tile_w / 2, 0), width - tile_w))
    y0 = int(min(max(cy - tile_h / 2, 0), height - tile_h))
    tile = image[y0 : y0 + tile_h, x0 : x0 + tile_w]
    lines = []
    for cls, box in zip(classes, boxes, strict=True):
        inside = clip_box(shift_box(box, -x0, -y0), tile_w, tile_h)
        if box_area(inside) >= 0.6 * box_area(box):
            lines.append(label_line(cls, inside, tile_w, tile_h))
    cv2.imwrite(str(out_dir / "images" / split / f"{name}.jpg"), tile, [cv2.IMWRITE_JPEG_QUALITY, 95])
    write_label_file(out_dir / "labels" / split / f"{name}.txt", lines)


BOX_SHIFT = 0.2
"""Largest shift of a training crop's box, as a share of the box's longer side."""

BOX_SCALE = (0.75, 1.3)
"""Range of a training crop box's resizing per axis. On real photos the detector's boxes
were seen off-centre and too small, cutting glyphs; crops must be read all the same."""


def _jittered(box: Box, rng: random.Random) -> Box:
    """A corner box moved and resized the way a detector's box misses the truth."""
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    side = max(w, h)
    dx, dy = rng.uniform(-BOX_SHIFT, BOX_SHIFT) * side, rng.uniform(-BOX_SHIFT, BOX_SHIFT) * side
    sw, sh = rng.uniform(*BOX_SCALE), rng.uniform(*BOX_SCALE)
    cx, cy = (x1 + x2) / 2 + dx, (y1 + y2) / 2 + dy
    return (cx - w * sw / 2, cy - h * sh / 2, cx + w * sw / 2, cy + h * sh / 2)


def _covers_a_corner(box: Box, corners: list[Box]) -> bool:
    """Whether a candidate negative crop holds more than a sliver (15% of its area) of some labelled corner."""
    return any(intersection_area(box, corner) > 0.15 * box_area(box) for corner in corners)


def make_classifier_crops(
    scene_dir: Path,
    out_dir: Path,
    seed: int = 0,
    crops_per_corner: int = 1,
    negatives_per_image: int = 6,
    crop_size: int = CROP_SIZE,
    crop_pad: float = CROP_PAD,
    min_corner_px: float = 7.0,
    negative_below: float | None = NEGATIVE_BELOW,
) -> Path:
    """Cut every labelled corner from the full-resolution scenes, as inference will, into an
    ImageFolder tree (``train/<card>/``, ``val/<card>/``), plus ``none`` crops of places with no
    corner index (pips, court art, card backs, clutter) so the classifier can veto false alarms.
    Corners under ``min_corner_px`` on their shorter side are skipped: a few blurred pixels teach noise.
    ``negative_below`` must be the shipped manifest's (``index_views``): a light-on-dark index is written in
    negative as well as printed, the two readings inference may make of it."""
    import cv2

    rng = random.Random(seed)
    for split in ("train", "val"):
        for name in (*CLASS_NAMES, NONE_CLASS):
            (out_dir / split / name).mkdir(parents=True, exist_ok=True)
        for item in read_split(scene_dir, split):
            image = cv2.imread(str(item.image_path))
            if image is None:
                raise TrainingError(f"cannot read generated image {item.image_path}")
            height, width = image.shape[:2]
            boxes = list(item.boxes)
            for index, (cls, box) in enumerate(zip(item.class_ids, boxes, strict=True)):
                if min(box[2] - box[0], box[3] - box[1]) < min_corner_px:
                    continue
                for copy in range(crops_per_corner):
                    views = index_views(image, _jittered(box, rng), crop_size, crop_pad, negative_below)
                    _write_views(views, out_dir / split / CLASS_NAMES[cls] / f"{item.image_path.stem}_{index}_{copy}")
            sizes = [(x2 - x1, y2 - y1) for x1, y1, x2, y2 in boxes] or [(0.03 * width, 0.06 * height)]
            outlines = _card_outlines(scene_dir, split, item.image_path.stem)
            made, tries = 0, 0
            while made < negatives_per_image and tries < 50 * negatives_per_image:
                tries += 1
                w, h = rng.choice(sizes)
                where = rng.random()
                # inside a card up to 2.5 times an index: a close-up's big pips were read as cards
                scale = rng.uniform(0.7, 2.5 if where < 0.45 else 1.6)
                w, h = w * scale, h * scale
                if where < 0.45 and outlines:  # inside a card: pips, court art and backs look most like an index
                    corners = rng.choice(outlines)
                    u, v = rng.uniform(0.15, 0.85), rng.uniform(0.15, 0.85)
                    top = corners[0] + u * (corners[1] - corners[0])
                    bottom = corners[3] + u * (corners[2] - corners[3])
                    cx, cy = top + v * (bottom - top)
                    x1, y1 = cx - w / 2, cy - h / 2
                elif where < 0.7 and boxes:  # beside an index: half an index, the edge of a neighbour
                    bx1, by1, bx2, by2 = rng.choice(boxes)
                    x1 = rng.uniform(bx1 - 2 * w, bx2 + w)
                    y1 = rng.uniform(by1 - 2 * h, by2 + h)
                else:
                    x1, y1 = rng.uniform(0, max(width - w, 1)), rng.uniform(0, max(height - h, 1))
                candidate = (x1, y1, x1 + w, y1 + h)
                if _covers_a_corner(candidate, boxes):
                    continue
                views = index_views(image, candidate, crop_size, crop_pad, negative_below)
                _write_views(views, out_dir / split / NONE_CLASS / f"{item.image_path.stem}_n{made}")
                made += 1
    (out_dir / COMPLETE_MARKER).write_text("all crops written\n")
    return out_dir


def _write_views(views: list[np.ndarray], stem: Path) -> int:
    """Write a box's views (``index_views``) as ``<stem>.png``, then ``<stem>_v1.png`` ...; returns how many."""
    import cv2

    for number, view in enumerate(views):
        cv2.imwrite(f"{stem}{f'_v{number}' if number else ''}.png", view)
    return len(views)


def _scene_cards(scene_dir: Path, split: str, stem: str) -> list[dict[str, Any]]:
    """Every card of a scene (faces and backs) as the generator's sidecar truth records it; none without one."""
    meta = scene_dir / "meta" / split / f"{stem}.json"
    if not meta.exists():
        return []
    cards: list[dict[str, Any]] = json.loads(meta.read_text()).get("cards", [])
    return cards


def _card_outlines(scene_dir: Path, split: str, stem: str) -> list[np.ndarray]:
    """The four corners of every card (faces and backs) in a scene, from the generator's sidecar truth."""
    cards = _scene_cards(scene_dir, split, stem)
    return [np.asarray(card["outline"], dtype=float) for card in cards if len(card.get("outline", ())) == 4]


def _index_boxes(scene_dir: Path, split: str, stem: str) -> list[Box]:
    """The box of every corner index that shows at all, labelled or not (a sliver under another card,
    an index too small to label): a detection there is not a false alarm to teach as ``none``."""
    return [
        box_from_row(index["box"])
        for card in _scene_cards(scene_dir, split, stem)
        for index in card.get("indices", ())
        if index.get("visible", 0) > 0 or index.get("labelled")
    ]


def _overlaps_an_index(box: Box, indices: list[Box]) -> bool:
    """Whether ``box`` shares more than a sliver (15% of the smaller box) with one of ``indices``."""
    return any(intersection_area(box, index) > 0.15 * min(box_area(box), box_area(index)) for index in indices)


MINED_MARKER = "MINED"

MINED_PER_IMAGE = 4
"""The most false alarms one scene adds as ``none`` crops, so a few cluttered scenes do not swamp the class."""


def _false_cards(
    scene_dir: Path, detector: CardDetector, per_image: int
) -> Iterator[tuple[str, LabelledImage, np.ndarray, list[Box]]]:
    """Per train and val scene: its split, labels, pixels and the ``per_image`` most confident false cards
    that ``detector`` reads in it, as inference does.

    A false card is a corner box that overlaps no index (labelled or not, see ``_index_boxes``) and that the
    classifier names as a card: a card nobody laid down, in the making (a keyboard's legends, a note's
    digits, a big pip), which random negatives rarely hit.
    """
    import cv2

    if detector.classifier is None:
        raise TrainingError("mining false alarms needs a two-stage model; this model has no classifier")
    weight = detector.manifest.detector_weight
    for split in ("train", "val"):
        for item in read_split(scene_dir, split):
            image = cv2.imread(str(item.image_path))
            if image is None:
                raise TrainingError(f"cannot read generated image {item.image_path}")
            indices = [*item.boxes, *_index_boxes(scene_dir, split, item.image_path.stem)]
            found = detector.find_boxes(image)
            away = np.array([not _overlaps_an_index(box_from_row(row), indices) for row in found.xyxy], bool)
            # named and vetoed as inference does: what survives is a card in the making
            false_cards = detector.read_corners(image, found.subset(away))
            false_cards.sort(key=lambda corner: corner.detection(weight).confidence, reverse=True)
            yield split, item, image, [corner.box for corner in false_cards[:per_image]]


def mine_hard_negatives(
    scene_dir: Path, detector: CardDetector, out_dir: Path, per_image: int = MINED_PER_IMAGE
) -> int:
    """Add ``detector``'s false cards on the scenes (``_false_cards``) to the classifier's ``none`` crops,
    cut as inference cuts them, so it learns to veto exactly those; returns how many."""
    manifest = detector.manifest
    written = 0
    for split, item, image, false_cards in _false_cards(scene_dir, detector, per_image):
        (out_dir / split / NONE_CLASS).mkdir(parents=True, exist_ok=True)
        for rank, box in enumerate(false_cards):
            _write_views(
                manifest.index_views(image, box), out_dir / split / NONE_CLASS / f"{item.image_path.stem}_m{rank}"
            )
            written += 1
    (out_dir / MINED_MARKER).write_text(f"{written} false alarms of {manifest.directory}\n")
    return written


def mine_detector_tiles(
    scene_dir: Path,
    detector: CardDetector,
    out_dir: Path,
    per_image: int = MINED_PER_IMAGE,
    seed: int = 0,
    imgsz: int = DETECTOR_IMGSZ,
) -> int:
    """Add a tile around each of ``detector``'s false cards on the scenes (``_false_cards``) to the one-class
    tiles in ``out_dir``, labelled with the true corners in it, so the detector learns that place holds no
    index; returns how many."""
    rng = random.Random(seed)
    written = 0
    for split, item, image, false_cards in _false_cards(scene_dir, detector, per_image):
        small, scale = _at_inference_scale(image, imgsz)
        height, width = small.shape[:2]
        boxes = [scale_box(box, scale) for box in item.boxes]
        for rank, box in enumerate(false_cards):
            centre = _near(box_centre(scale_box(box, scale)), rng, width, height)
            _write_tile(small, boxes, (0,) * len(boxes), centre, out_dir, split, f"{item.image_path.stem}_m{rank}")
            written += 1
    (out_dir / MINED_MARKER).write_text(f"{written} false alarms of {detector.manifest.directory}\n")
    return written


def make_correction_crops(corrections_dir: Path, model_dir: Path | None, out_dir: Path, copies: int = 5) -> int:
    """Turn the web page's corrections into classifier examples; returns how many crops were written.

    A correction stores the frame and one corrected whole-card box per card
    (``labels/<stem>.txt``). The shipped corner detector finds the corner indices again;
    a corner inside exactly one corrected card takes that card's class, a corner inside
    none (a false card the player deleted) becomes ``none``. Each crop is written
    ``copies`` times so a few corrections weigh against thousands of synthetic crops.
    """
    import cv2

    from scorer.vision.detector import CardDetector

    try:
        detector = CardDetector(model_dir)
    except ModelError as error:
        raise TrainingError(f"corrections need the model that read them: {error}") from None
    if detector.classifier is None:
        raise TrainingError("corrections retrain the classifier of a two-stage model; this model has none")
    written = 0
    for image_path in sorted((corrections_dir / "images").glob("*.jpg")):
        image = cv2.imread(str(image_path))
        label_path = corrections_dir / "labels" / f"{image_path.stem}.txt"
        if image is None or not label_path.exists():
            continue
        height, width = image.shape[:2]
        try:
            cards = read_label_file(label_path, width, height, class_count=len(CLASS_NAMES))
        except LabelError as error:
            raise TrainingError(str(error)) from None
        xyxy = fuse_looks(detector.looks(image), detector.manifest.iou).xyxy
        for index, row in enumerate(xyxy):
            box = box_from_row(row)
            inside = [card.class_id for card in cards if contains_point(card.box, box_centre(box))]
            if len(inside) > 1:
                continue  # overlapping cards: the corner's owner is ambiguous
            name = CLASS_NAMES[inside[0]] if inside else NONE_CLASS
            views = detector.manifest.index_views(image, box)
            (out_dir / "train" / name).mkdir(parents=True, exist_ok=True)
            for copy in range(copies):
                written += _write_views(
                    views, out_dir / "train" / name / f"correction_{image_path.stem}_{index}_{copy}"
                )
    return written


def _init_model(init_dir: Path) -> CardDetector:
    """The model in ``init_dir`` as inference runs it (its ONNX files and manifest)."""
    from scorer.vision.detector import CardDetector

    try:
        return CardDetector(init_dir)
    except ModelError as error:
        raise TrainingError(f"mining false alarms needs the --init model as inference runs it: {error}") from None


def _run_dir_state(run_dir: Path) -> str:
    """'done', 'resume' or 'new' for an ultralytics run directory."""
    weights = run_dir / "weights"
    if (weights / "best.pt").exists() and not (weights / "last.pt").exists():
        return "done"
    if (weights / "last.pt").exists():
        import torch

        checkpoint = torch.load(weights / "last.pt", map_location="cpu", weights_only=False)
        return "done" if checkpoint.get("epoch", -1) == -1 else "resume"
    return "new"


def train_stage(
    task: str,
    data: Path,
    run_dir: Path,
    epochs: int,
    imgsz: int,
    batch: int,
    init_weights: Path | None = None,
    device: str = "cpu",
    workers: int = 2,
    lr0: float | None = None,
    freeze: int = 0,
    hours: float | None = None,
    cache: bool = False,
) -> Path:
    """Train (or resume) one ultralytics model; returns the best weights.

    ``task`` is ``detect`` (one-class corners from ``yolo11n.yaml``) or ``classify``
    (``yolo11n-cls.yaml``). ``init_weights`` fine-tunes from shipped weights instead of
    starting from scratch; ``freeze`` keeps that many of its first layers as they are.
    ``hours`` bounds the stage by wall time instead (ultralytics fits the epochs and the learning-rate
    schedule to it after the first epoch): a lent GPU is lent for minutes. ``cache`` keeps the decoded
    images in memory, where the loaders, not the GPU, are what limits speed.
    """
    offline_environment()
    from ultralytics import YOLO

    state = _run_dir_state(run_dir)
    if state == "done":
        return run_dir / "weights" / "best.pt"
    if state == "resume":
        model = YOLO(str(run_dir / "weights" / "last.pt"))
        model.train(resume=True, device=device, workers=workers)
        return run_dir / "weights" / "best.pt"
    yaml_name = "yolo11n.yaml" if task == "detect" else "yolo11n-cls.yaml"
    model = YOLO(str(init_weights)) if init_weights else YOLO(yaml_name, task=task)
    common = {
        "data": str(data),
        "epochs": epochs,
        "imgsz": imgsz,
        "batch": batch,
        "device": device,
        "workers": workers,
        "project": str(run_dir.parent.resolve()),
        "name": run_dir.name,
        "exist_ok": True,
        "amp": False,
        "plots": False,
        "fliplr": 0.0,
        "flipud": 0.0,
        "pretrained": init_weights is not None,  # False would make ultralytics drop the init weights
        "verbose": False,
        "seed": 0,
        "deterministic": False,
        "patience": 1000,
        "cos_lr": True,
        "hsv_h": 0.02,  # colour casts and exposure, as webcams vary
        "hsv_s": 0.5,
        "hsv_v": 0.4,
    }
    if freeze:
        common["freeze"] = freeze
    if hours:
        common["time"] = hours
    if cache:
        common["cache"] = "ram"
    if task == "detect":
        model.train(
            **common,
            optimizer="SGD",
            lr0=lr0 or 0.01,
            momentum=0.937,
            weight_decay=0.0005,
            warmup_epochs=1.0,
            mosaic=1.0,
            close_mosaic=1,
            scale=0.3,
            degrees=0.0,
        )
    else:
        model.train(
            **common,
            optimizer="AdamW",
            lr0=lr0 or 0.002,
            warmup_epochs=0.5,
            scale=0.15,
            erasing=0.1,
            auto_augment=None,
        )
    return run_dir / "weights" / "best.pt"


def validate(scene_dir: Path, model_dir: Path, crops_dir: Path | None = None) -> dict[str, float]:
    """Synthetic validation of shipped weights: the corner detector's mAP50 and mAP50-95 on the
    full-frame val scenes at inference size (all cards as one class), and the classifier's top-1
    on a crop tree's val split when one is given."""
    offline_environment()
    from ultralytics import YOLO

    if not (scene_dir / "data.yaml").exists():
        raise TrainingError(f"cannot validate: {scene_dir / 'data.yaml'} does not exist")
    try:
        manifest = ModelManifest.load(model_dir)
        detector_weights = manifest.file(manifest.detector, "detector weights")
        classifier_weights = manifest.file(manifest.classifier, "classifier weights") if crops_dir else None
    except ModelError as error:
        raise TrainingError(f"cannot validate: {error}") from None
    detector = YOLO(str(detector_weights))
    metrics = detector.val(
        data=str(scene_dir / "data.yaml"), imgsz=manifest.detector_imgsz, batch=8, single_cls=True,
        plots=False, device="cpu", verbose=False, workers=0,
    )  # fmt: skip
    result = {"detector_map50": float(metrics.box.map50), "detector_map50_95": float(metrics.box.map)}
    if crops_dir is not None:
        classifier = YOLO(str(classifier_weights))
        top = classifier.val(
            data=str(crops_dir), imgsz=manifest.crop_size, batch=256, plots=False, device="cpu", verbose=False,
            workers=0,
        )  # fmt: skip
        result["classifier_top1"] = float(top.top1)
        result["classifier_top5"] = float(top.top5)
    return result


def export_onnx(weights: Path, imgsz: int) -> Path:
    """Export weights to ONNX next to them: dynamic shapes, so a 16:9 frame is letterboxed to 640x384 rather
    than padded to a square, and the classifier takes all crops in one batch; no onnxslim (it would be fetched)."""
    offline_environment()
    from ultralytics import YOLO

    exported = YOLO(str(weights)).export(format="onnx", imgsz=imgsz, simplify=False, dynamic=True, device="cpu")
    return Path(exported)


def ship(detector_weights: Path, classifier_weights: Path, models_dir: Path, provenance: dict[str, Any]) -> Path:
    """Copy weights into ``models_dir``, export each copy to ONNX beside it, write ``manifest.json``.

    Exporting the copies (not the sources) leaves the source folders untouched, even when they
    are another shipped ``models/``. ``provenance`` (``trained_on``, ``train_command`` ...) is
    recorded in the manifest as given.
    """
    offline_environment()
    from ultralytics import YOLO

    models_dir.mkdir(parents=True, exist_ok=True)
    detector = models_dir / MODEL_FILES["detector"]
    classifier = models_dir / MODEL_FILES["classifier"]
    for source, target in ((detector_weights, detector), (classifier_weights, classifier)):
        if source.resolve() != target.resolve():
            shutil.copyfile(source, target)
    for weights, imgsz in ((detector, DETECTOR_IMGSZ), (classifier, CROP_SIZE)):
        export_onnx(weights, imgsz)  # written beside the copy as <stem>.onnx: the manifest's ONNX names
    classifier_names = YOLO(str(classifier)).names
    manifest = ModelManifest(
        models_dir,
        design="two-stage",
        detector=MODEL_FILES["detector"],
        detector_onnx=MODEL_FILES["detector_onnx"],
        classifier=MODEL_FILES["classifier"],
        classifier_onnx=MODEL_FILES["classifier_onnx"],
        detector_imgsz=DETECTOR_IMGSZ,
        detector_coarse_sizes=DETECTOR_COARSE_SIZES,
        crop_size=CROP_SIZE,
        crop_pad=CROP_PAD,
        extra_crop_pads=EXTRA_CROP_PADS,
        classifier_rotations=CLASSIFIER_ROTATIONS,
        classifier_sure=CLASSIFIER_SURE,
        classifier_none_sure=CLASSIFIER_NONE_SURE,
        stand_in_sure=STAND_IN_SURE,
        negative_below=NEGATIVE_BELOW,
        negative_look_after=NEGATIVE_LOOK_AFTER,
        grain_median_above=GRAIN_MEDIAN_ABOVE,
        classifier_names=tuple(classifier_names[i] for i in range(len(classifier_names))),
        none_class=NONE_CLASS,
        # a low corner threshold, since the classifier's none class vetoes false alarms; the card
        # threshold and fusion are placeholders until tune_thresholds chooses them for these weights
        conf=0.05,
        card_conf=0.1,
        detector_weight=1.0,
        provenance=provenance,
    )
    return manifest.save()


def average_weights(weights: Sequence[Path], model_dir: Path) -> Path:
    """Put the average of ``weights`` into ``model_dir`` in place of its part of their kind (classifier or
    detector), exported to ONNX beside it; the manifest keeps its thresholds and records the sources.
    Returns the manifest's path.

    The weights must be runs fine-tuned from one start (a "model soup"): such runs on other scenes, or with
    other negatives, err in different places, and their average kept the gains of each on the real photos
    where each alone lost on some set (models/HISTORY.md, Session 8). Averages of unrelated runs are noise.

    :raises TrainingError: for fewer than two files, an unreadable one, or weights of other kinds or shapes.
    """
    offline_environment()
    import torch
    from ultralytics.nn.tasks import ClassificationModel, DetectionModel

    if len(weights) < 2:
        raise TrainingError("averaging needs two or more weights files")
    checkpoints = _read_checkpoints(weights)
    kinds = {ClassificationModel: "classifier", DetectionModel: "detector"}
    parts = {next((name for kind, name in kinds.items() if isinstance(model, kind)), None) for _, model in checkpoints}
    states = [model.state_dict() for _, model in checkpoints]
    shapes = [{key: tuple(value.shape) for key, value in state.items()} for state in states]
    if len(parts) != 1 or None in parts or any(shape != shapes[0] for shape in shapes):
        raise TrainingError("the weights must all be classifiers, or all detectors, of one architecture")
    part = str(parts.pop())
    average = {
        key: torch.stack([state[key] for state in states]).mean(dim=0) if value.is_floating_point() else value
        for key, value in states[0].items()
    }
    manifest = ModelManifest.load(model_dir)
    weights_name, onnx_name = getattr(manifest, part), getattr(manifest, f"{part}_onnx")
    if weights_name is None or onnx_name is None:
        raise TrainingError(f"the model in {str(model_dir)!r} names no {part} .pt and .onnx files to replace")
    checkpoint, model = checkpoints[0]
    model.load_state_dict(average)
    checkpoint.update(model=model.half(), ema=None, optimizer=None)
    torch.save(checkpoint, model_dir / weights_name)
    exported = export_onnx(
        model_dir / weights_name, manifest.crop_size if part == "classifier" else manifest.detector_imgsz
    )
    exported.replace(model_dir / onnx_name)
    sources = [str(path) for path in weights]
    return manifest.replace(provenance={**manifest.provenance, f"{part}_averaged_from": sources}).save()


def add_veto_classifiers(weights: Sequence[Path], model_dir: Path, below: float | None = None) -> Path:
    """Give the classifier of ``model_dir`` the classifiers ``weights`` as a veto (``CardDetector._veto``): they may
    lower its belief in a card it reads less surely than ``below`` (None: any card), never name another. Returns
    the manifest's path.

    Each is copied beside the classifier as ``<classifier>-veto-1.pt`` and so on, exported to ONNX beside its
    copy, and listed as ``veto_classifiers`` (replacing any listed before); the classifier and thresholds are kept.

    :raises TrainingError: for no file, an unreadable one, or one that is not a classifier of the model's classes.
    """
    offline_environment()
    import torch
    from ultralytics.nn.tasks import ClassificationModel

    if not weights:
        raise TrainingError("name one or more veto classifier weights files")
    manifest = ModelManifest.load(model_dir)
    if manifest.design != "two-stage" or manifest.classifier is None:
        raise TrainingError(f"the model in {str(model_dir)!r} has no classifier .pt for a veto to check")
    names = _read_checkpoints([model_dir / manifest.classifier])[0][1].names
    checkpoints = _read_checkpoints(weights)
    if not all(isinstance(model, ClassificationModel) and model.names == names for _, model in checkpoints):
        raise TrainingError("a veto classifier must be a classifier of the model's classes, in the same order")
    stem = Path(manifest.classifier).stem
    veto_names = tuple(f"{stem}-veto-{number}.pt" for number in range(1, len(weights) + 1))
    for (checkpoint, model), name in zip(checkpoints, veto_names, strict=True):
        checkpoint.update(model=model.half(), ema=None, optimizer=None)
        torch.save(checkpoint, model_dir / name)
        export_onnx(model_dir / name, manifest.crop_size)  # beside its copy, where the manifest finds it
    provenance = {**manifest.provenance, "veto_classifiers_from": [str(path) for path in weights]}
    return manifest.replace(veto_classifiers=veto_names, veto_below=below, provenance=provenance).save()


def _read_checkpoints(weights: Sequence[Path]) -> list[tuple[dict[str, Any], Any]]:
    """Each file's checkpoint and its network in float32.

    :raises TrainingError: naming a file that is not a checkpoint.
    """
    import torch

    checkpoints = []
    for path in weights:
        try:
            checkpoint = torch.load(path, map_location="cpu", weights_only=False)
            # a finished run's best.pt holds its EMA weights as "model"; a checkpoint cut short, as "ema"
            model = checkpoint["model"] if checkpoint.get("ema") is None else checkpoint["ema"]
        except Exception as error:  # torch raises many types for a file that is not a checkpoint
            raise TrainingError(f"cannot read weights {str(path)!r}: {type(error).__name__}: {error}") from None
        checkpoints.append((checkpoint, model.float()))
    return checkpoints


@dataclasses.dataclass(frozen=True)
class Tuning:
    """What ``tune_thresholds`` chose: every pair's score (best first) and the manifest's pair before."""

    scores: tuple[ThresholdScore, ...]
    before: ThresholdScore | None  # None when the previous pair was not among those tried

    @property
    def best(self) -> ThresholdScore:
        return self.scores[0]


def tune_thresholds(model_dir: Path, scene_dir: Path) -> Tuning:
    """Choose ``card_conf`` and ``detector_weight`` for the model in ``model_dir`` on the val
    scenes of ``scene_dir`` (``scorer.vision.tuning``) and write them into its manifest.

    The manifest records the choice and where it was made.

    :raises TrainingError: for a missing model or unreadable scenes.
    """
    from scorer.vision.detector import CardDetector
    from scorer.vision.evaluate import ClassList, EvalError, dataset_images, read_labels
    from scorer.vision.images import ImageError, load_image
    from scorer.vision.tuning import LabelledReading, score_thresholds

    classes = ClassList.okgin().cards
    readings = []
    try:
        detector = CardDetector(model_dir)
        for photo in dataset_images(scene_dir / "images" / "val"):
            image = load_image(photo)
            height, width = image.shape[:2]
            labels = read_labels(scene_dir / "labels" / "val" / f"{photo.stem}.txt", classes, width, height)
            readings.append(LabelledReading(photo.name, tuple(detector.read_corners(image)), labels.cards))
    except (ModelError, EvalError, ImageError) as error:
        raise TrainingError(str(error)) from None
    scores = score_thresholds(readings)
    manifest = detector.manifest
    previous = (manifest.detector_weight, manifest.card_conf)
    before = next((s for s in scores if (s.detector_weight, s.card_conf) == previous), None)
    best = scores[0]
    chosen_on = {"scenes": str(scene_dir), **best.to_dict()}
    manifest.replace(
        card_conf=best.card_conf,
        detector_weight=best.detector_weight,
        provenance={**manifest.provenance, "thresholds_chosen_on": chosen_on},
    ).save()
    return Tuning(tuple(scores), before)


def crops_dataset_is_complete(out_dir: Path) -> bool:
    """Whether ``make_classifier_crops`` finished writing this tree (an interrupted one is cut again)."""
    return (out_dir / COMPLETE_MARKER).exists()


def class_balance(out_dir: Path, split: str = "train") -> dict[str, int]:
    """Crops per class, to see which cards the generator under-represents."""
    return {name: sum(1 for _ in (out_dir / split / name).glob("*.png")) for name in (*CLASS_NAMES, NONE_CLASS)}


# --- the whole recipe -----------------------------------------------------------------------------------------------

STAGES = ("all", "detector", "classifier")


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """One run of the recipe: ``okgin train``'s options, for callers without a command line.

    ``stage`` trains both models (``all``) or one; ``init_dir`` fine-tunes from the weights
    shipped there instead of starting from scratch; ``mine_negatives`` adds that model's false
    alarms on the scenes to the detector's tiles and the classifier's ``none`` crops (see
    ``_false_cards``); ``tile_noise`` is the share of scenes whose detector tiles are made noisy at the
    detector's scale (``noisy_at_detector_scale``); ``freeze`` keeps the first layers of the ``init_dir``
    networks as they were; ``lr0`` is both stages' starting learning rate (None: each stage's own, which
    suits training from scratch; a fine-tune that should stay near its start takes less); ``ship_dir``
    exports the result there and tunes its thresholds on the val scenes; ``provenance`` goes into the shipped
    manifest.
    """

    scene_dir: Path
    run_dir: Path = Path("runs/corners")
    detector_epochs: int = 30
    classifier_epochs: int = 15
    batch: int = 32
    tiles_per_image: int = 3
    tile_noise: float = TILE_NOISE_SHARE
    crops_per_corner: int = 2
    init_dir: Path | None = None
    device: str = "cpu"
    workers: int = 2
    stage: str = "all"
    ship_dir: Path | None = None
    corrections_dir: Path | None = None
    mine_negatives: bool = False
    freeze: int = 0
    lr0: float | None = None
    seed: int = 0
    provenance: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """Where a run left its weights and, when it shipped, the manifest and the threshold choice."""

    detector_weights: Path
    classifier_weights: Path
    manifest: Path | None = None
    tuning: Tuning | None = None


def check_scenes(scene_dir: Path) -> None:
    """:raises TrainingError: unless ``scene_dir`` holds scenes from ``okgin data generate``."""
    if not (scene_dir / "images" / "train").is_dir():
        raise TrainingError(f"{scene_dir} holds no generated scenes; run 'okgin data generate --out {scene_dir}'")


def train(config: TrainConfig, log: Callable[[str], None] = print) -> TrainResult:
    """Run the recipe: cut tiles and crops (once), train or resume each stage, ship when asked.

    Re-running the same config resumes: tiles and crops already cut are kept, and a stage
    whose run stopped part-way resumes from its last checkpoint. ``log`` hears each step.

    :raises TrainingError: for missing scenes or initial weights, or a run that cannot go on.
    """
    check_scenes(config.scene_dir)
    if config.stage not in STAGES:
        raise TrainingError(f"unknown stage {config.stage!r}: choose one of {', '.join(STAGES)}")
    if config.mine_negatives and config.init_dir is None:
        raise TrainingError("mining false alarms needs the model that makes them: give --init")
    if config.freeze and config.init_dir is None:
        raise TrainingError("--freeze keeps layers of the networks being fine-tuned: give --init")
    if config.lr0 is not None and not 0 < config.lr0 < 1:
        raise TrainingError(f"a learning rate of {config.lr0} cannot train: give one between 0 and 1")
    init_detector = init_classifier = None
    if config.init_dir is not None:
        init_detector = config.init_dir / MODEL_FILES["detector"]
        init_classifier = config.init_dir / MODEL_FILES["classifier"]
        for path in (init_detector, init_classifier):
            if not path.exists():
                raise TrainingError(f"cannot fine-tune from {config.init_dir}: no weights at {path}")
    run_dir = config.run_dir
    detector_weights = run_dir / "detector" / "weights" / "best.pt"
    classifier_weights = run_dir / "classifier" / "weights" / "best.pt"
    if config.stage in {"all", "detector"}:
        tiles_yaml = run_dir / "tiles" / "data.yaml"
        if not tiles_yaml.exists():
            log("cutting detector tiles ...")
            make_detector_tiles(
                config.scene_dir, run_dir / "tiles", config.tiles_per_image, config.seed, noise_share=config.tile_noise
            )
        if config.mine_negatives and config.init_dir is not None and not (run_dir / "tiles" / MINED_MARKER).exists():
            log(f"mining the false alarms of {config.init_dir} on the scenes ...")
            mined = mine_detector_tiles(
                config.scene_dir, _init_model(config.init_dir), run_dir / "tiles", seed=config.seed
            )
            log(f"added {mined} tiles around false alarms")
        detector_weights = train_stage(
            "detect", tiles_yaml, run_dir / "detector", config.detector_epochs, TILE_SIZE, config.batch,
            init_detector, config.device, config.workers, config.lr0, config.freeze,
        )  # fmt: skip
    if config.stage in {"all", "classifier"}:
        crops = run_dir / "crops"
        if not crops_dataset_is_complete(crops):
            log("cutting classifier crops ...")
            make_classifier_crops(config.scene_dir, crops, config.seed, config.crops_per_corner)
        if config.mine_negatives and config.init_dir is not None and not (crops / MINED_MARKER).exists():
            log(f"mining the false alarms of {config.init_dir} on the scenes ...")
            mined = mine_hard_negatives(config.scene_dir, _init_model(config.init_dir), crops)
            log(f"added {mined} false alarms as '{NONE_CLASS}' crops")
        if config.corrections_dir is not None:
            added = make_correction_crops(config.corrections_dir, config.init_dir, crops)
            log(f"added {added} crops from the corrections in {config.corrections_dir}")
        classifier_weights = train_stage(
            "classify", crops, run_dir / "classifier", config.classifier_epochs, CROP_SIZE, config.batch * 4,
            init_classifier, config.device, config.workers, config.lr0, config.freeze,
        )  # fmt: skip
    if config.ship_dir is None:
        return TrainResult(detector_weights, classifier_weights)
    # a stage not trained in this run ships as it was in --init
    if not detector_weights.exists() and init_detector is not None:
        detector_weights = init_detector
    if not classifier_weights.exists() and init_classifier is not None:
        classifier_weights = init_classifier
    for weights in (detector_weights, classifier_weights):
        if not weights.exists():
            raise TrainingError(f"nothing to ship: no weights at {weights} (train that stage, or give --init)")
    manifest = ship(detector_weights, classifier_weights, config.ship_dir, config.provenance)
    log(f"choosing the card threshold of {config.ship_dir} on the val scenes of {config.scene_dir} ...")
    tuning = tune_thresholds(config.ship_dir, config.scene_dir)
    return TrainResult(detector_weights, classifier_weights, manifest, tuning)
