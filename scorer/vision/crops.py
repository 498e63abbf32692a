"""The corner crop: the one place that decides how a detected corner index becomes
classifier input, shared by training-data export and inference so the two never drift."""

from __future__ import annotations

import numpy as np

from scorer.vision.types import Box

CROP_SIZE = 64
"""Classifier input side in pixels."""

CROP_PAD = 0.25
"""Context kept around a corner box on each side, as a fraction of the box's size along that axis."""

MIN_ASPECT = 0.6
"""A box's shorter side is widened to at least this share of its longer side before padding."""

Stretch = tuple[float, float]
"""How many times wider and taller a crop is cut than the frame shows its region: (1, 1) as it is. A frame squeezed
when it was resized (a 16:9 webcam frame stretched to a square) squeezes its indices too, and the classifier reads
them far better cut as they were shot (``CardDetector.frame_stretch``)."""

AS_SHOWN: Stretch = (1.0, 1.0)

NEGATIVE_BELOW = 0.4
"""An index whose ``light_share`` is under this is printed light on a dark face, and is read in negative as well.
Of the labelled indices of the real photos, 90% of the black deck's are under it, 1% of the poker deck's and 2%
of the close-ups' (models/HISTORY.md, Session 11)."""


def corner_crop_box(box: Box, pad: float = CROP_PAD, stretch: Stretch = AS_SHOWN) -> Box:
    """The region cut around a corner box: the box padded along each axis, its shorter side first
    widened to ``MIN_ASPECT`` of the longer one. The region is stretched to a square crop, so in a
    fanned meld the neighbouring cards' indices stay mostly outside it. With a ``stretch``, the region
    is the one cut from the frame stretched so, in the frame's own pixels.

    >>> corner_crop_box((10, 10, 30, 50), pad=0.25)
    (2.0, 0.0, 38.0, 60.0)
    >>> corner_crop_box((10, 10, 30, 50), pad=0.25, stretch=(2.0, 1.0))
    (5.0, 0.0, 35.0, 60.0)
    """
    scale_x, scale_y = stretch
    x1, y1, x2, y2 = box[0] * scale_x, box[1] * scale_y, box[2] * scale_x, box[3] * scale_y
    longer = max(x2 - x1, y2 - y1, 1e-6)
    half_w = max(x2 - x1, MIN_ASPECT * longer) * (1 + 2 * pad) / 2
    half_h = max(y2 - y1, MIN_ASPECT * longer) * (1 + 2 * pad) / 2
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    return ((cx - half_w) / scale_x, (cy - half_h) / scale_y, (cx + half_w) / scale_x, (cy + half_h) / scale_y)


def light_share(image: np.ndarray, box: Box) -> float:
    """The share of a box's pixels on the light side of its Otsu threshold (1.0 for an empty or even box).

    Ink covers less of an index than the card does, so a printed index has a large share and one printed light
    on a dark face (a black deck's white or gold pips) a small one.

    >>> face = np.full((40, 30, 3), 230, np.uint8); face[10:30, 10:20] = 20
    >>> round(light_share(face, (0, 0, 30, 40)), 2), round(light_share(255 - face, (0, 0, 30, 40)), 2)
    (0.83, 0.17)
    """
    import cv2

    height, width = image.shape[:2]
    x1, y1, x2, y2 = (round(value) for value in box)
    region = image[max(y1, 0) : min(y2, height), max(x1, 0) : min(x2, width)]
    if region.size == 0:
        return 1.0
    grey = cv2.cvtColor(region, cv2.COLOR_BGR2GRAY)
    _, light = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    return float(np.count_nonzero(light)) / light.size


def corner_crop(
    image: np.ndarray, box: Box, size: int = CROP_SIZE, pad: float = CROP_PAD, stretch: Stretch = AS_SHOWN
) -> np.ndarray:
    """Cut the region around ``box`` (``corner_crop_box``) from a BGR image, stretched to ``size`` x ``size``.

    Parts outside the image are filled by replicating the border, so a corner at the
    frame's edge still gives a full-size crop.
    """
    import cv2

    x1, y1, x2, y2 = corner_crop_box(box, pad, stretch)
    scale_x, scale_y = size / max(x2 - x1, 1.0), size / max(y2 - y1, 1.0)
    # one affine warp does cut, pad and resize
    matrix = np.array([[scale_x, 0.0, -x1 * scale_x], [0.0, scale_y, -y1 * scale_y]], dtype=np.float32)
    interpolation = cv2.INTER_AREA if max(scale_x, scale_y) < 1 else cv2.INTER_LINEAR
    return cv2.warpAffine(image, matrix, (size, size), flags=interpolation, borderMode=cv2.BORDER_REPLICATE)


def index_views(
    image: np.ndarray,
    box: Box,
    size: int = CROP_SIZE,
    pad: float = CROP_PAD,
    negative_below: float | None = None,
    stretch: Stretch = AS_SHOWN,
) -> list[np.ndarray]:
    """What the classifier reads of one box, in training as at inference: its ``corner_crop``, and with
    ``negative_below``, for an index whose ``light_share`` is under it, the crop's ``lightness_negative`` first
    and the crop after it.

    The classifier learned mostly dark ink on light cards: a black deck's light indices read far better with
    the negative's reading averaged in, while rendered dark faces, which it learned as they are, still read
    as well (models/HISTORY.md, Session 11). The negative comes first because it is the view read surely most
    often, and inference reads the others only when the first leaves a box in doubt (``CardDetector.name_boxes``).
    """
    crop = corner_crop(image, box, size, pad, stretch)
    if negative_below is not None and light_share(image, box) < negative_below:
        return [lightness_negative(crop), crop]
    return [crop]


def lightness_negative(image: np.ndarray) -> np.ndarray:
    """A BGR image with its lightness turned over and its hues kept: white ink on black becomes black on white,
    and red ink stays red (a plain negative turns it cyan, and a red pip reads as a black suit's)."""
    import cv2

    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB)
    lab[..., 0] = 255 - lab[..., 0]
    return cv2.cvtColor(lab, cv2.COLOR_LAB2BGR)
