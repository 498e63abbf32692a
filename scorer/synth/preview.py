"""Contact sheets that show the labels drawn on their images, to check by eye that boxes sit on the indices.

Works on any ultralytics dataset folder (``images/<split>/*.jpg`` with ``labels/<split>/*.txt``), including
the real yardstick photos.
"""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np

from scorer.cards import CLASS_NAMES
from scorer.vision.images import ImageError, load_image
from scorer.vision.labels import LabelBox, read_class_names, read_label_file

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp")


def find_images(root: Path) -> list[Path]:
    """The dataset's images (every split), sorted by path."""
    return sorted(path for path in Path(root).glob("images/**/*") if path.suffix.lower() in IMAGE_SUFFIXES)


def label_path(image_path: Path) -> Path:
    """The label file of an image: the same name under ``labels/`` instead of ``images/``."""
    parts = list(image_path.parts)
    position = len(parts) - 1 - parts[::-1].index("images")
    parts[position] = "labels"
    return Path(*parts).with_suffix(".txt")


def class_names(root: Path) -> tuple[str, ...]:
    """The dataset's class names: from its ``classes.txt`` when it has one (as Roboflow exports do), else ours.

    :raises LabelError: for a ``classes.txt`` that cannot be read or names no class.
    """
    listing = Path(root) / "classes.txt"
    return tuple(read_class_names(listing)) if listing.exists() else CLASS_NAMES


def annotate(image: np.ndarray, labels: list[LabelBox], names: tuple[str, ...] = CLASS_NAMES) -> np.ndarray:
    """A copy of ``image`` with each label's box and class name drawn (red suits in red, black in blue)."""
    result = image.copy()
    thickness = max(1, round(image.shape[1] / 800))
    for label in labels:
        x1, y1, x2, y2 = (round(value) for value in label.box)
        name = names[label.class_id] if label.class_id < len(names) else f"?{label.class_id}"
        colour = (0, 0, 255) if name[-1] in "DH" else (255, 80, 0)
        cv2.rectangle(result, (x1, y1), (x2, y2), colour, thickness)
        cv2.putText(
            result,
            name,
            (x1, max(10, y1 - 3)),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.4 * thickness,
            colour,
            thickness,
            cv2.LINE_AA,
        )
    return result


def contact_sheet(root: Path, count: int = 16, tile_width: int = 640) -> np.ndarray:
    """A grid of the first ``count`` images of a dataset with their labels drawn.

    Images that cannot be read (damaged, or too large to decode) are left out.

    :raises FileNotFoundError: when the folder holds no images, or none that can be read.
    :raises LabelError: for a label or classes file that cannot be read, naming the file and line.
    """
    paths = find_images(root)[:count]
    if not paths:
        raise FileNotFoundError(f"no images under {Path(root) / 'images'}")
    names = class_names(root)
    tiles = []
    for path in paths:
        try:
            image = load_image(path)
        except ImageError:
            continue
        height, width = image.shape[:2]
        annotated = annotate(image, read_label_file(label_path(path), width, height), names)
        scale = tile_width / annotated.shape[1]
        tile = cv2.resize(annotated, (tile_width, round(annotated.shape[0] * scale)), interpolation=cv2.INTER_AREA)
        cv2.putText(
            tile, path.name, (4, tile.shape[0] - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 255, 255), 1, cv2.LINE_AA
        )
        tiles.append(tile)
    if not tiles:
        raise FileNotFoundError(f"none of the images under {Path(root) / 'images'} can be read")
    columns = math.ceil(math.sqrt(len(tiles)))
    rows = math.ceil(len(tiles) / columns)
    tile_height = max(tile.shape[0] for tile in tiles)
    sheet = np.full((rows * tile_height, columns * tile_width, 3), 40, np.uint8)
    for number, tile in enumerate(tiles):
        y, x = (number // columns) * tile_height, (number % columns) * tile_width
        sheet[y : y + tile.shape[0], x : x + tile_width] = tile
    return sheet
