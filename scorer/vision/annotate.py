"""Drawing what was recognised over the picture: a box and a label per card.

``annotate(scene, found) -> scene`` in the manner of supervision's annotators: a copy of
the BGR image is returned, the original is left alone. Text uses OpenCV's built-in
Hershey font, so nothing is downloaded.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scorer.vision.types import CardDetection, Conflict, Detections, FrameReading

Colour = tuple[int, int, int]  # BGR

SEAT_COLOURS: tuple[Colour, ...] = ((60, 180, 75), (230, 130, 40), (200, 60, 200), (40, 200, 230))
UPCARD_COLOUR: Colour = (0, 215, 255)
OTHER_COLOUR: Colour = (160, 160, 160)
CONFLICT_COLOUR: Colour = (40, 40, 230)


def _draw_card(image: np.ndarray, card: CardDetection, colour: Colour, prefix: str = "") -> None:
    import cv2

    x1, y1, x2, y2 = (round(v) for v in card.box)
    thickness = max(1, round(min(image.shape[:2]) / 400))
    cv2.rectangle(image, (x1, y1), (x2, y2), colour, thickness)
    text = f"{prefix}{card.card} {card.confidence:.2f}"
    scale = max(0.4, min(image.shape[:2]) / 1400)
    (width, height), baseline = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
    top = max(y1 - height - baseline - 2, 0)
    cv2.rectangle(image, (x1, top), (x1 + width + 4, top + height + baseline + 2), colour, cv2.FILLED)
    cv2.putText(image, text, (x1 + 2, top + height + 1), cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), 1, cv2.LINE_AA)


def _draw_conflicts(image: np.ndarray, conflicts: Sequence[Conflict]) -> None:
    import cv2

    scale = max(0.45, min(image.shape[:2]) / 1200)
    for row, conflict in enumerate(conflicts[:8]):
        y = int(22 * scale / 0.45 * (row + 1))
        cv2.putText(image, conflict.reason, (8, y), cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), 3, cv2.LINE_AA)
        cv2.putText(image, conflict.reason, (8, y), cv2.FONT_HERSHEY_SIMPLEX, scale, CONFLICT_COLOUR, 1, cv2.LINE_AA)


def annotate(image_bgr: np.ndarray, found: Detections | FrameReading) -> np.ndarray:
    """A copy of the image with each card boxed and labelled, and the conflicts written at the top.

    Raw detections are drawn in one colour; a table reading colours each seat, the upcard
    and unassigned cards differently and prefixes the seat ("2: QH 0.93").
    """
    canvas = image_bgr.copy()
    if isinstance(found, FrameReading):
        for seat, cards in found.by_player.items():
            colour = SEAT_COLOURS[(seat - 1) % len(SEAT_COLOURS)]
            for card in cards:
                _draw_card(canvas, card, colour, f"{seat}: ")
        for card in found.upcard:
            _draw_card(canvas, card, UPCARD_COLOUR, "up: ")
        for card in found.unassigned:
            _draw_card(canvas, card, OTHER_COLOUR)
    else:
        for card in found.cards:
            _draw_card(canvas, card, SEAT_COLOURS[0])
    _draw_conflicts(canvas, found.conflicts)
    return canvas
