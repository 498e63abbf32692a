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


def read_labels(path: Path) -> list[tuple[int, float, float, float, float]]:
    """YOLO label lines as (class, cx, cy, w, h); a missing file means no labels."""
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        fields = line.split()
        if len(fields) >= 5:
            rows.append((int(fields[0]), float(fields[1]), float(fields[2]), float(fields[3]), float(fields[4])))
    return rows


def class_names(root: Path) -> tuple[str, ...]:
    """The dataset's class names: from its ``classes.txt`` when it has one (as Roboflow exports do), else ours."""
    listing = Path(root) / "classes.txt"
    if listing.exists():
        return tuple(line.strip() for line in listing.read_text().splitlines() if line.strip())
    return CLASS_NAMES


def annotate(
    image: np.ndarray, labels: list[tuple[int, float, float, float, float]], names: tuple[str, ...] = CLASS_NAMES
) -> np.ndarray:
    """A copy of ``image`` with each label's box and class name drawn (red suits in red, black in blue)."""
    result = image.copy()
    height, width = image.shape[:2]
    thickness = max(1, round(width / 800))
    for class_id, cx, cy, w, h in labels:
        x1, y1 = round((cx - w / 2) * width), round((cy - h / 2) * height)
        x2, y2 = round((cx + w / 2) * width), round((cy + h / 2) * height)
        name = names[class_id] if 0 <= class_id < len(names) else f"?{class_id}"
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

    :raises FileNotFoundError: when the folder holds no images.
    """
    paths = find_images(root)[:count]
    if not paths:
        raise FileNotFoundError(f"no images under {Path(root) / 'images'}")
    names = class_names(root)
    tiles = []
    for path in paths:
        image = cv2.imread(str(path))
        if image is None:
            continue
        annotated = annotate(image, read_labels(label_path(path)), names)
        scale = tile_width / annotated.shape[1]
        tile = cv2.resize(annotated, (tile_width, round(annotated.shape[0] * scale)), interpolation=cv2.INTER_AREA)
        cv2.putText(
            tile, path.name, (4, tile.shape[0] - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 255, 255), 1, cv2.LINE_AA
        )
        tiles.append(tile)
    columns = math.ceil(math.sqrt(len(tiles)))
    rows = math.ceil(len(tiles) / columns)
    tile_height = max(tile.shape[0] for tile in tiles)
    sheet = np.full((rows * tile_height, columns * tile_width, 3), 40, np.uint8)
    for number, tile in enumerate(tiles):
        y, x = (number // columns) * tile_height, (number % columns) * tile_width
        sheet[y : y + tile.shape[0], x : x + tile_width] = tile
    return sheet
