"""The corner crop: the one place that decides how a detected corner index becomes
classifier input, shared by training-data export and inference so the two never drift."""

from __future__ import annotations

import numpy as np

from scorer.vision.types import Box

CROP_SIZE = 64
"""Classifier input side in pixels."""

CROP_PAD = 0.35
"""Context kept around a corner box, as a fraction of its longer side, on each side."""


def corner_crop_box(box: Box, pad: float = CROP_PAD) -> Box:
    """The square region cut around a corner box: centred on it, side = longer side x (1 + 2 x pad).

    >>> corner_crop_box((10, 10, 30, 50), pad=0.25)
    (0.0, 0.0, 40.0, 60.0)
    """
    x1, y1, x2, y2 = box
    side = max(x2 - x1, y2 - y1) * (1 + 2 * pad)
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    return (cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2)


def corner_crop(image: np.ndarray, box: Box, size: int = CROP_SIZE, pad: float = CROP_PAD) -> np.ndarray:
    """Cut the square around ``box`` from a BGR image and resize it to ``size`` x ``size``.

    Parts outside the image are filled by replicating the border, so a corner at the
    frame's edge still gives a full-size crop.
    """
    import cv2

    x1, y1, x2, y2 = corner_crop_box(box, pad)
    side = max(x2 - x1, 1.0)
    scale = size / side
    # affine map from the crop square to the output: one warp does cut, pad and resize.
    matrix = np.array([[scale, 0.0, -x1 * scale], [0.0, scale, -y1 * scale]], dtype=np.float32)
    interpolation = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    return cv2.warpAffine(image, matrix, (size, size), flags=interpolation, borderMode=cv2.BORDER_REPLICATE)
