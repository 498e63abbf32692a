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


def corner_crop_box(box: Box, pad: float = CROP_PAD) -> Box:
    """The region cut around a corner box: the box padded along each axis, its shorter side first
    widened to ``MIN_ASPECT`` of the longer one. The region is stretched to a square crop, so in a
    fanned meld the neighbouring cards' indices stay mostly outside it.

    >>> corner_crop_box((10, 10, 30, 50), pad=0.25)
    (2.0, 0.0, 38.0, 60.0)
    """
    x1, y1, x2, y2 = box
    longer = max(x2 - x1, y2 - y1, 1e-6)
    half_w = max(x2 - x1, MIN_ASPECT * longer) * (1 + 2 * pad) / 2
    half_h = max(y2 - y1, MIN_ASPECT * longer) * (1 + 2 * pad) / 2
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    return (cx - half_w, cy - half_h, cx + half_w, cy + half_h)


def corner_crop(image: np.ndarray, box: Box, size: int = CROP_SIZE, pad: float = CROP_PAD) -> np.ndarray:
    """Cut the region around ``box`` from a BGR image, stretched to ``size`` x ``size``.

    Parts outside the image are filled by replicating the border, so a corner at the
    frame's edge still gives a full-size crop.
    """
    import cv2

    x1, y1, x2, y2 = corner_crop_box(box, pad)
    scale_x, scale_y = size / max(x2 - x1, 1.0), size / max(y2 - y1, 1.0)
    # one affine warp does cut, pad and resize
    matrix = np.array([[scale_x, 0.0, -x1 * scale_x], [0.0, scale_y, -y1 * scale_y]], dtype=np.float32)
    interpolation = cv2.INTER_AREA if max(scale_x, scale_y) < 1 else cv2.INTER_LINEAR
    return cv2.warpAffine(image, matrix, (size, size), flags=interpolation, borderMode=cv2.BORDER_REPLICATE)
