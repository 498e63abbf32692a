"""Box geometry, in one place: every box is ``(x1, y1, x2, y2)`` in pixels (``scorer.vision.types.Box``).

Detection, merging, stabilising, evaluation, training and the label files all measure boxes
the same way through these functions, so an overlap means one thing everywhere.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

import numpy as np

from scorer.vision.types import Box


def box_from_row(row: Sequence[float] | np.ndarray) -> Box:
    """A plain-float box from the first four values of an array row.

    >>> box_from_row(np.array([1, 2, 3, 4], np.float32))
    (1.0, 2.0, 3.0, 4.0)
    """
    return (float(row[0]), float(row[1]), float(row[2]), float(row[3]))


def box_area(box: Box) -> float:
    """The area of a box; an inverted box has none.

    >>> box_area((0, 0, 4, 5)), box_area((4, 0, 0, 5))
    (20, 0)
    """
    return max(box[2] - box[0], 0) * max(box[3] - box[1], 0)


def box_centre(box: Box) -> tuple[float, float]:
    """The centre of a box.

    >>> box_centre((0, 0, 10, 20))
    (5.0, 10.0)
    """
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


def box_height(box: Box) -> float:
    """How tall a box is, in pixels.

    >>> box_height((3, 10, 9, 34))
    24
    """
    return box[3] - box[1]


def contains_point(box: Box, point: tuple[float, float]) -> bool:
    """Whether a point lies in a box, edges included.

    >>> contains_point((0, 0, 10, 10), (10, 5)), contains_point((0, 0, 10, 10), (11, 5))
    (True, False)
    """
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def union_box(boxes: Iterable[Box]) -> Box:
    """The smallest box holding every box given.

    >>> union_box([(0, 0, 2, 2), (5, 1, 6, 9)])
    (0, 0, 6, 9)
    """
    boxes = list(boxes)
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def intersection_area(a: Box, b: Box) -> float:
    """The area two boxes share.

    >>> intersection_area((0, 0, 10, 10), (5, 5, 20, 20))
    25
    """
    return max(min(a[2], b[2]) - max(a[0], b[0]), 0) * max(min(a[3], b[3]) - max(a[1], b[1]), 0)


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes.

    >>> iou((0, 0, 10, 10), (5, 0, 15, 10))
    0.3333333333333333
    """
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    inter = width * height
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def overlap_extent(a: Box, b: Box) -> tuple[float, float]:
    """How far two boxes overlap across and down; negative: the gap between them.

    >>> overlap_extent((0, 0, 10, 10), (6, 12, 20, 20))
    (4, -2)
    """
    return min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])


def turned_box(box: Box, turn: int) -> Box:
    """The box seen turned back by ``turn`` degrees clockwise (a multiple of 90), about the origin.

    A card laid by a player at the top of the picture (turned 180 degrees) reads upright in
    ``turned_box(box, 180)``; ``turned_box(turned_box(box, t), -t)`` is the box again.

    >>> turned_box((10, 20, 30, 60), 90), turned_box((10, 20, 30, 60), 180)
    ((20, -30, 60, -10), (-30, -60, -10, -20))
    """
    x1, y1, x2, y2 = box
    corners = {0: ((x1, y1), (x2, y2)), 90: ((y1, -x1), (y2, -x2)), 180: ((-x1, -y1), (-x2, -y2))}
    corners[270] = ((-y1, x1), (-y2, x2))
    (a, b), (c, d) = corners[turn % 360]
    return (min(a, c), min(b, d), max(a, c), max(b, d))


def overlaps(a: Box, b: Box) -> bool:
    """Whether two boxes share some area (touching edges do not count).

    >>> overlaps((0, 0, 10, 10), (9, 9, 20, 20)), overlaps((0, 0, 10, 10), (10, 0, 20, 10))
    (True, False)
    """
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def widen_box(box: Box, margin: float) -> Box:
    """The box grown on each side by ``margin`` times its size along that axis.

    >>> widen_box((10, 10, 20, 30), 0.25)
    (7.5, 5.0, 22.5, 35.0)
    """
    dx, dy = (box[2] - box[0]) * margin, (box[3] - box[1]) * margin
    return (box[0] - dx, box[1] - dy, box[2] + dx, box[3] + dy)


def shift_box(box: Box, dx: float, dy: float) -> Box:
    """The box moved by ``(dx, dy)``.

    >>> shift_box((10, 10, 20, 30), -10, 5)
    (0, 15, 10, 35)
    """
    return (box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy)


def scale_box(box: Box, scale_x: float, scale_y: float | None = None) -> Box:
    """The box in an image resized by ``scale_x`` (and ``scale_y``, default the same).

    >>> scale_box((10, 10, 20, 30), 0.5)
    (5.0, 5.0, 10.0, 15.0)
    """
    scale_y = scale_x if scale_y is None else scale_y
    return (box[0] * scale_x, box[1] * scale_y, box[2] * scale_x, box[3] * scale_y)


def clip_box(box: Box, width: float, height: float) -> Box:
    """The box cut to a ``width`` x ``height`` frame.

    >>> clip_box((-5, 10, 120, 30), 100, 50)
    (0.0, 10, 100, 30)
    """
    return (
        max(0.0, min(box[0], width)),
        max(0.0, min(box[1], height)),
        max(0.0, min(box[2], width)),
        max(0.0, min(box[3], height)),
    )


def to_normalised_xywh(box: Box, width: float, height: float) -> tuple[float, float, float, float]:
    """Centre, width and height as shares of the frame: the YOLO label form.

    >>> to_normalised_xywh((100, 50, 300, 250), 1000, 500)
    (0.2, 0.3, 0.2, 0.4)
    """
    x1, y1, x2, y2 = box
    return ((x1 + x2) / 2 / width, (y1 + y2) / 2 / height, (x2 - x1) / width, (y2 - y1) / height)


def from_normalised_xywh(xc: float, yc: float, w: float, h: float, width: float, height: float) -> Box:
    """A pixel box from the YOLO label form (``to_normalised_xywh`` read back).

    >>> from_normalised_xywh(0.25, 0.5, 0.25, 0.5, 1000, 500)
    (125.0, 125.0, 375.0, 375.0)
    """
    return ((xc - w / 2) * width, (yc - h / 2) * height, (xc + w / 2) * width, (yc + h / 2) * height)


def xywh_to_xyxy(boxes: np.ndarray) -> np.ndarray:
    """Rows of top-left corner plus size (N, 4) as corner boxes (N, 4).

    >>> xywh_to_xyxy(np.array([[40.0, 40.0, 20.0, 20.0]])).tolist()
    [[40.0, 40.0, 60.0, 60.0]]
    """
    return np.column_stack([boxes[:, :2], boxes[:, :2] + boxes[:, 2:4]])


def centre_xywh_to_corner_xywh(boxes: np.ndarray) -> np.ndarray:
    """Rows of centre plus size (N, 4), as YOLO heads give them, as top-left corner plus size.

    >>> centre_xywh_to_corner_xywh(np.array([[50.0, 50.0, 20.0, 20.0]])).tolist()
    [[40.0, 40.0, 20.0, 20.0]]
    """
    return np.column_stack([boxes[:, :2] - boxes[:, 2:4] / 2, boxes[:, 2:4]])


CONTAINED = 0.7
"""Share of the smaller box inside the larger at which two looks' boxes are one corner index."""


StandIn = tuple[Box, float]
"""A box another look found for the same index, and its detector score."""


@dataclasses.dataclass(frozen=True)
class FusedBoxes:
    """One frame's corner boxes from all its looks (``fuse_looks``): the best box of each index, best first, as
    ``xyxy``, ``scores`` and ``classes`` arrays, and per kept box the boxes of other looks it stands for
    (``stand_ins``), which the classifier may read when it finds no index in the kept one."""

    xyxy: np.ndarray
    scores: np.ndarray
    classes: np.ndarray
    stand_ins: tuple[tuple[StandIn, ...], ...]

    @classmethod
    def of(cls, look: tuple[np.ndarray, np.ndarray, np.ndarray] | FusedBoxes) -> FusedBoxes:
        """One look's (xyxy, score, class) arrays as fused boxes standing for nothing else."""
        if isinstance(look, FusedBoxes):
            return look
        xyxy, scores, classes = look
        return cls(
            np.asarray(xyxy, np.float32).reshape(-1, 4), np.asarray(scores), np.asarray(classes), ((),) * len(scores)
        )

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The kept boxes as (xyxy, score, class) arrays, as one look gives them."""
        return self.xyxy, self.scores, self.classes

    def subset(self, keep: np.ndarray) -> FusedBoxes:
        """The kept boxes where ``keep`` (a boolean mask) is true, each with its stand-ins."""
        chosen = np.flatnonzero(keep)
        return FusedBoxes(
            self.xyxy[chosen], self.scores[chosen], self.classes[chosen], tuple(self.stand_ins[i] for i in chosen)
        )


def fuse_looks(looks: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray] | FusedBoxes], iou_limit: float) -> FusedBoxes:
    """Several detections of one frame (xyxy, score, class arrays, or boxes fused before) as one, best first:
    where boxes overlap by more than ``iou_limit``, only the highest-scoring stays (class-agnostic non-maximum
    suppression); a box of one look mostly inside a better one of another look (``CONTAINED``) is the same index
    seen at another scale, boxed tighter or looser, and goes too (kept, it made a card's corners one too many).
    A kept box stands for the boxes of other looks it put out, and for what they stood for: where one look
    boxed only a close-up's pip and a coarser one the whole index, the pip's box scores higher, and the
    index's box is still there to be read.

    >>> a = (np.array([[0, 0, 10, 10]], np.float32), np.array([0.9], np.float32), np.array([0]))
    >>> b = (np.array([[1, 1, 10, 10], [50, 50, 60, 60]], np.float32), np.array([0.5, 0.7]), np.array([0, 0]))
    >>> fused = fuse_looks([a, b], 0.5)
    >>> fused.xyxy.tolist(), fused.stand_ins
    ([[0.0, 0.0, 10.0, 10.0], [50.0, 50.0, 60.0, 60.0]], ((((1.0, 1.0, 10.0, 10.0), 0.5),), ()))
    >>> c = (np.array([[-1, -1, 13, 14]], np.float32), np.array([0.6], np.float32), np.array([0]))
    >>> fuse_looks([a, c], 0.5).xyxy.tolist()
    [[0.0, 0.0, 10.0, 10.0]]

    A box of a later look that puts out a kept one stands for it and for what it stood for:

    >>> negative = (np.array([[0, 0, 11, 11]], np.float32), np.array([0.95], np.float32), np.array([0]))
    >>> [(box, round(score, 2)) for box, score in fuse_looks([fused, negative], 0.5).stand_ins[0]]
    [((0.0, 0.0, 10.0, 10.0), 0.9), ((1.0, 1.0, 10.0, 10.0), 0.5)]
    """
    parts = [FusedBoxes.of(look) for look in looks]
    xyxy = np.concatenate([part.xyxy for part in parts]).astype(np.float32).reshape(-1, 4)
    scores = np.concatenate([part.scores for part in parts]).astype(np.float32)
    classes = np.concatenate([part.classes for part in parts])
    earlier = [stand_ins for part in parts for stand_ins in part.stand_ins]
    look_of = np.concatenate([np.full(len(part.scores), index) for index, part in enumerate(parts)])
    areas = np.maximum(xyxy[:, 2] - xyxy[:, 0], 0) * np.maximum(xyxy[:, 3] - xyxy[:, 1], 0)
    # every pair at once (a few hundred boxes): which pairs are one index, then greedy by score
    x1, y1, x2, y2 = xyxy.T
    across = np.clip(np.minimum(x2[:, None], x2) - np.maximum(x1[:, None], x1), 0, None)
    down = np.clip(np.minimum(y2[:, None], y2) - np.maximum(y1[:, None], y1), 0, None)
    inter = across * down
    union = areas[:, None] + areas[None, :] - inter
    other_look = look_of[:, None] != look_of[None, :]
    one_index = (inter > iou_limit * np.maximum(union, 1e-9)) | (
        other_look & (inter > CONTAINED * np.minimum(areas[:, None], areas[None, :]))
    )
    np.fill_diagonal(one_index, False)
    clashes: dict[int, list[int]] = {}
    for first, second in zip(*np.nonzero(one_index), strict=True):  # few: each look is suppressed already
        clashes.setdefault(int(first), []).append(int(second))
    kept: list[int] = []
    stand_ins: list[tuple[StandIn, ...]] = []
    suppressed: set[int] = set()
    for candidate in map(int, np.argsort(-scores, kind="stable")):
        if candidate in suppressed:
            continue
        put_out = [other for other in clashes.get(candidate, ()) if other not in suppressed]
        kept.append(candidate)
        standing_for = list(earlier[candidate])
        for other in put_out:
            if other_look[candidate, other]:  # a look's own weaker copies were put out by its suppression already
                standing_for += [(box_from_row(xyxy[other]), float(scores[other])), *earlier[other]]
        stand_ins.append(tuple(standing_for))
        suppressed.update(put_out)
    chosen = np.array(kept, dtype=np.int64)
    return FusedBoxes(xyxy[chosen].reshape(-1, 4), scores[chosen], classes[chosen], tuple(stand_ins))
