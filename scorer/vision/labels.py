"""YOLO label files, read and written in one place.

A dataset in the ultralytics layout has ``images/NAME.jpg`` and ``labels/NAME.txt`` with one
line per object: ``class xc yc w h``, the box's centre and size as shares of the image.
Exports from labelling tools may instead give a polygon (``class x1 y1 x2 y2 x3 y3 ...``);
it is read as the box around its points. A missing label file means an image with nothing
labelled. ``data.yaml`` names the classes; a bare ``classes.txt`` lists one name a line.

>>> line = label_line(37, (125, 125, 375, 375), 1000, 500)
>>> line
'37 0.250000 0.500000 0.250000 0.500000'
>>> parse_label_line(line, 1000, 500)
LabelBox(class_id=37, box=(125.0, 125.0, 375.0, 375.0))
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

from scorer.errors import OkginError, shown
from scorer.files import read_regular_text
from scorer.vision.boxes import from_normalised_xywh, to_normalised_xywh
from scorer.vision.types import Box

MAX_LABEL_BYTES = 16 * 1024**2
"""The largest label or classes file read: a photo's labels take a few hundred bytes, a dataset's classes a few
hundred more."""


class LabelError(OkginError):
    """A label or classes file that cannot be read, naming the file and line."""


@dataclasses.dataclass(frozen=True)
class LabelBox:
    """One labelled object: its class id and its pixel box."""

    class_id: int
    box: Box


def label_line(class_id: int, box: Box, width: int, height: int) -> str:
    """The label line of a pixel box in a ``width`` x ``height`` image (six decimals, as ultralytics writes)."""
    xc, yc, w, h = to_normalised_xywh(box, width, height)
    return f"{class_id} {xc:.6f} {yc:.6f} {w:.6f} {h:.6f}"


def parse_label_line(text: str, width: int, height: int) -> LabelBox | None:
    """One label line as a pixel box; ``None`` for a blank line.

    >>> parse_label_line("3 0.1 0.1 0.3 0.1 0.3 0.3 0.1 0.3", 100, 100).box  # a polygon: the box around it
    (10.0, 10.0, 30.0, 30.0)

    A box of no width or height, or one wholly outside the image, is a labelling slip: read, it would turn a
    right reading into a miss plus an invented card without a word, so it is refused.

    >>> parse_label_line("3 1.5 1.5 0.1 0.1", 100, 100)
    Traceback (most recent call last):
    ValueError: the box lies wholly outside the image: it spans x 1.45 to 1.55, y 1.45 to 1.55 (the image is 0 to 1)

    :raises ValueError: for a line that is neither ``class xc yc w h`` nor a polygon, or whose box is empty
        or outside the image.
    """
    fields = text.split()
    if not fields:
        return None
    if not fields[0].isdecimal():
        raise ValueError(f"the class must be a whole number from 0, got {shown(fields[0])}")
    class_id = int(fields[0])
    values = [float(value) for value in fields[1:]]
    if not all(map(math.isfinite, values)):
        raise ValueError(f"coordinates must be finite numbers, got {' '.join(fields[1:])[:60]}")
    if len(values) == 4:
        xc, yc, w, h = values
        box = from_normalised_xywh(xc, yc, w, h, 1, 1)
    elif len(values) >= 6 and len(values) % 2 == 0:
        xs, ys = values[0::2], values[1::2]
        box = (min(xs), min(ys), max(xs), max(ys))
    else:
        raise ValueError(
            f"expected 'class xc yc w h' or a polygon 'class x1 y1 x2 y2 x3 y3 ...', got {len(fields)} fields"
        )
    _check_in_image(box)
    x1, y1, x2, y2 = box
    return LabelBox(class_id, (x1 * width, y1 * height, x2 * width, y2 * height))


def _check_in_image(box: Box) -> None:
    """Refuse a label box, as shares of the image, that has no area or does not reach into the image.

    :raises ValueError: saying which.
    """
    x1, y1, x2, y2 = box
    if x2 <= x1 or y2 <= y1:
        raise ValueError(f"the box has no area: width {x2 - x1:.6g}, height {y2 - y1:.6g} (both must be above 0)")
    if x2 <= 0 or y2 <= 0 or x1 >= 1 or y1 >= 1:
        raise ValueError(
            f"the box lies wholly outside the image: it spans x {x1:.6g} to {x2:.6g}, y {y1:.6g} to {y2:.6g} "
            "(the image is 0 to 1)"
        )


def read_label_file(path: str | Path, width: int, height: int, class_count: int | None = None) -> list[LabelBox]:
    """Every labelled box of one image of ``width`` x ``height`` pixels; an absent file means none.

    :raises LabelError: naming the file and line of a malformed label, or of a class id
        not below ``class_count`` when it is given.
    """
    file = Path(path)
    try:
        lines = read_regular_text(file, MAX_LABEL_BYTES).splitlines()
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as error:
        raise LabelError(f"could not read label file {str(file)!r}: {error}") from None
    labels = []
    for number, line in enumerate(lines, start=1):
        try:
            label = parse_label_line(line, width, height)
        except ValueError as error:
            raise LabelError(f"{file}:{number}: {error}") from None
        if label is None:
            continue
        if class_count is not None and label.class_id >= class_count:
            raise LabelError(f"{file}:{number}: class {label.class_id} is not below the {class_count} classes named")
        labels.append(label)
    return labels


def write_label_file(path: str | Path, lines: Iterable[str]) -> None:
    """Write label lines (see ``label_line``), each ending in a newline; no lines make an empty file."""
    Path(path).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def read_class_names(path: str | Path) -> list[str]:
    """The class names of a ``classes.txt``, one a line in class-id order; blank lines are skipped.

    :raises LabelError: when the file cannot be read or names no class.
    """
    file = Path(path)
    try:
        lines = read_regular_text(file, MAX_LABEL_BYTES).splitlines()
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise LabelError(f"could not read classes file {str(file)!r}: {reason}") from None
    names = [line.strip() for line in lines if line.strip()]
    if not names:
        raise LabelError(f"classes file {str(file)!r} lists no classes")
    return names


def dataset_yaml(root: str | Path, names: Sequence[str], train: str, val: str, comment: str = "") -> str:
    """The ultralytics dataset file: where the images are and the name of each class id.

    >>> print(dataset_yaml("/data", ["corner"], "images/train", "images/val", "tiles"), end="")
    # tiles
    path: /data
    train: images/train
    val: images/val
    names:
      0: corner
    """
    header = "".join(f"# {line}\n" for line in comment.splitlines())
    classes = "".join(f"  {class_id}: {name}\n" for class_id, name in enumerate(names))
    return f"{header}path: {root}\ntrain: {train}\nval: {val}\nnames:\n{classes}"
