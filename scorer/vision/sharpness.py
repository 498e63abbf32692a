"""How sharp a frame's corner indices are: a live frame smeared by a moving camera is not worth reading.

A camera bumped mid-frame smears every index, and the detector boxes the smears: session 44's live probe frame
(1280x720) gave it 191 boxes that the classifier reads unsurely at every pad, view, turn and stretch, 5,932 crops
(some 5 s of two cores, while every other table waits) against 120 to 190 for a sharp frame of that table, to read
one card of 21. Sharpness is measured on the boxes the detector found, each cut much as the classifier cuts it
(``box_sharpness``: padded, at the crop size), so that it is the indices' own blur that counts, whatever the frame's
size or the camera's distance, and against each crop's own contrast, so that a dim table is not blurred. The
whole frame's variance of its Laplacian told the two apart poorly: 101 to 111 on the blurred frames, 157 to 165 on
the probe's dim sharp ones (models/HISTORY.md, Session 45).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scorer.vision.crops import CROP_PAD, CROP_SIZE, corner_crop
from scorer.vision.types import Box

SMEARED_BELOW = 0.06
"""A box whose sharpness (``box_sharpness``) is under this is smeared: its edges, the way they are least sharp, rise
over 17 pixels of its 64-pixel crop or more, two fifths of the box's shorter side. Chosen with ``BLURRED_SHARE`` on
session 44's live probe and the real photos (models/HISTORY.md, Session 45)."""

BLURRED_SHARE = 0.75
"""A frame is blurred when this share of its boxes are smeared, so a quarter of them sharp (cards a moving hand
left still, a sharp overlay) and it is read. Smeared were at most 1 box in 90 of the live probe's sharp frames (dim,
and shrunk to 960 or 640 px wide, too), 97 in 100 of its bumped ones, at most half of a real photo's (of those
with 16 boxes or more), and 89 to 100 in 100 of its sharp frames smeared 13 px along any line or blurred by a
Gaussian of sigma 4, each read as a photo at F1 0.72 or less against the frame's own reading, with 4 to 47 times
its crops."""

BLUR_JUDGED_FROM = 16
"""A frame of fewer boxes is always read: a few boxes on plain surfaces (a card's back, glare) measure as smeared
however sharp the picture (one real photo's single box), and so few cost little to read even blurred (some 30 crops
a box)."""

BLURRED = "the picture is blurred: hold the camera still"
"""What the players are told of a frame not read for its blur."""


def box_sharpness(
    image_bgr: np.ndarray, boxes: Sequence[Box], size: int = CROP_SIZE, pad: float = CROP_PAD
) -> np.ndarray:
    """How sharp each box is, one figure per box: in a square cut around its middle (``square_within``, padded by
    ``pad`` and resized to ``size`` as the classifier's crops are), along the way it is least sharp (across, down or
    either diagonal), the 98th percentile of its grey's change per pixel, as a share of its contrast (its grey's 95th
    percentile less its 5th).

    A blur along a line draws each edge across it out over the line's length, so the figure falls as one over that
    length measured in the index's own size, however bright or dim the index; grain only raises it. The square is
    the box's shorter side, so that a blur counts alike whichever way the camera moved: in the classifier's crop,
    stretched to a square, a blur along an index's length counts against that length, and a bumped table of cards
    lying sideways measured sharp. A square ring 20 px wide, boxed, sharp and then blurred 25 px across:

    >>> import cv2
    >>> card = np.full((60, 60, 3), 220, np.uint8); card[20:40, 20:40] = 30; card[25:35, 25:35] = 220
    >>> [round(float(box_sharpness(image, [(15, 15, 45, 45)])[0]), 3) for image in (card, cv2.blur(card, (25, 1)))]
    [0.354, 0.043]
    """
    import cv2

    if not boxes:
        return np.zeros(0, np.float32)
    grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
    crops = np.stack([corner_crop(grey, square_within(box), size, pad) for box in boxes]).astype(np.float32)
    across = crops[:, :, 2:] - crops[:, :, :-2]  # a Sobel filter per crop, inside its border: change per pixel
    down = crops[:, 2:, :] - crops[:, :-2, :]
    across = (across[:, :-2] + 2 * across[:, 1:-1] + across[:, 2:]) / 8
    down = (down[:, :, :-2] + 2 * down[:, :, 1:-1] + down[:, :, 2:]) / 8
    diagonal = np.float32(np.sqrt(0.5))
    ways = np.abs(np.stack([across, down, (across + down) * diagonal, (across - down) * diagonal], axis=1))
    steepest = _ranked(ways.reshape(len(boxes), 4, -1), (0.98,))[..., 0]
    contrast = np.diff(_ranked(crops.reshape(len(boxes), -1), (0.05, 0.95)), axis=1)[:, 0]
    sharpness: np.ndarray = steepest.min(axis=1) / np.maximum(contrast, 1.0)
    return sharpness


def _ranked(values: np.ndarray, shares: Sequence[float]) -> np.ndarray:
    """The values of each row (last axis) found ``shares`` of the way up its order, by nearest rank: what
    ``np.percentile`` gives but for its interpolation, at half its cost."""
    last = values.shape[-1] - 1
    ranks = [round(share * last) for share in shares]
    return np.partition(values, ranks, axis=-1)[..., ranks]


def square_within(box: Box) -> Box:
    """The square about a box's middle whose side is the box's shorter side.

    >>> square_within((10, 10, 30, 50))
    (10.0, 20.0, 30.0, 40.0)
    """
    x1, y1, x2, y2 = box
    half = min(x2 - x1, y2 - y1) / 2
    middle_x, middle_y = (x1 + x2) / 2, (y1 + y2) / 2
    return (middle_x - half, middle_y - half, middle_x + half, middle_y + half)


def blurred(sharpness: np.ndarray) -> bool:
    """Whether a frame whose boxes measure ``sharpness`` (``box_sharpness``) is too blurred to read: at least
    ``BLUR_JUDGED_FROM`` boxes, ``BLURRED_SHARE`` of them smeared (under ``SMEARED_BELOW``).

    >>> blurred(np.full(20, 0.02)), blurred(np.full(20, 0.2)), blurred(np.full(5, 0.02))
    (True, False, False)
    """
    return len(sharpness) >= BLUR_JUDGED_FROM and float(np.mean(sharpness < SMEARED_BELOW)) >= BLURRED_SHARE
