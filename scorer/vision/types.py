"""Plain values that cross the vision boundary: no tensors, no ultralytics types.

A frame goes through them in this order: the detector reads ``CornerEvidence`` (each corner
index with both stages' scores), fuses it into ``CornerDetection``, merges corners into one
``CardDetection`` per card (``Detections``), the layout sorts those into a ``FrameReading`` by
seat, and the stabiliser turns a run of readings into a ``StableReading``. Each value has one
JSON form, its ``to_dict``, which the CLI, the API and the page all print.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from scorer.cards import Card

if TYPE_CHECKING:
    import numpy as np

Box = tuple[float, float, float, float]
"""Pixel box (x1, y1, x2, y2) in the frame's own coordinates (geometry: ``scorer.vision.boxes``)."""


@dataclasses.dataclass(frozen=True)
class CardDetection:
    """One card seen once in a frame: its corner detections merged into one box."""

    card: Card
    box: Box
    confidence: float

    def to_dict(self) -> dict[str, object]:
        """JSON form: ``{"card": "QH", "confidence": 0.912, "box": [x1, y1, x2, y2]}``.

        >>> CardDetection(Card.parse("QH"), (10, 20.04, 30, 40), 0.91234).to_dict()
        {'card': 'QH', 'confidence': 0.912, 'box': [10, 20.0, 30, 40]}
        """
        return {
            "card": str(self.card),
            "confidence": round(self.confidence, 3),
            "box": [round(v, 1) for v in self.box],
        }


@dataclasses.dataclass(frozen=True)
class Conflict:
    """Something on the table that cannot be true of one deck, reported rather than dropped."""

    card: Card | None
    reason: str

    def to_dict(self) -> dict[str, object]:
        """JSON form: ``{"card": "QH" or null, "reason": "..."}``."""
        return {"card": None if self.card is None else str(self.card), "reason": self.reason}


@dataclasses.dataclass(frozen=True)
class CornerDetection:
    """One corner index seen in a frame: the card it names, its pixel box and a score in 0..1."""

    card: Card
    box: Box
    confidence: float


@dataclasses.dataclass(frozen=True)
class CornerEvidence:
    """One named corner index before any card threshold: what each stage said, kept apart.

    Its confidence is ``detector_score ** detector_weight * class_probability``. A weight
    below 1 lets a sure classifier (which has its own ``none`` class to veto false alarms)
    carry an index the detector found only faintly, e.g. a thin glyph under glare. The
    weight and the card threshold are chosen together on synthetic validation scenes
    (``scorer.vision.tuning``), which is why both scores are kept.

    >>> CornerEvidence(Card.parse("7C"), (0, 0, 8, 16), 0.16, 1.0).detection(0.5).confidence
    0.4
    """

    card: Card
    box: Box
    detector_score: float
    class_probability: float

    def detection(self, detector_weight: float) -> CornerDetection:
        confidence = self.detector_score**detector_weight * self.class_probability
        return CornerDetection(self.card, self.box, confidence)


@dataclasses.dataclass(frozen=True)
class Detections:
    """The cards found in one frame, each once, and what contradicts one deck."""

    cards: tuple[CardDetection, ...]
    conflicts: tuple[Conflict, ...]
    width: int
    height: int

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"width", "height", "cards": [...], "conflicts": [...]}``."""
        return {
            "width": self.width,
            "height": self.height,
            "cards": [card.to_dict() for card in self.cards],
            "conflicts": [conflict.to_dict() for conflict in self.conflicts],
        }


class Detector(Protocol):
    """Anything that finds cards in a BGR frame: ``CardDetector`` or a test's fake."""

    def detect(self, image_bgr: np.ndarray) -> Detections: ...


@runtime_checkable
class LiveDetector(Detector, Protocol):
    """A detector that reads a live camera's frames its own way and may decline one (``CardDetector.detect_live``).
    A live pipeline (``TablePipeline.process``) reads a frame so where its detector can, else as a photo."""

    def detect_live(self, image_bgr: np.ndarray) -> Detections: ...


class FrameNotRead(Exception):
    """A live frame the detector declined to read (a moving camera's, blurred), its message saying why in the words
    the players are told. The table's reading stands as the frames read before it left it."""


def _cards_json(cards: tuple[CardDetection, ...]) -> list[dict[str, object]]:
    return [card.to_dict() for card in cards]


@dataclasses.dataclass(frozen=True)
class FrameReading:
    """What one frame (or a stabilised run of frames) shows: cards per seat, the upcard zone, conflicts."""

    by_player: dict[int, tuple[CardDetection, ...]]  # seat number (from 1) -> its cards
    upcard: tuple[CardDetection, ...] = ()
    unassigned: tuple[CardDetection, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    width: int = 0
    height: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the cards of each zone (seats by number as text, then ``upcard`` and
        ``unassigned``), each seat's laid ``groups`` (``scorer.vision.groups``), the conflicts
        and the frame size.

        >>> FrameReading({1: (), 2: ()}, width=640, height=480).to_dict()  # doctest: +NORMALIZE_WHITESPACE
        {'zones': {'1': [], '2': [], 'upcard': [], 'unassigned': []}, 'groups': {'1': [], '2': []},
         'conflicts': [], 'width': 640, 'height': 480}
        """
        from scorer.vision.groups import group_reading, groups_json  # groups are read from these values

        return {
            "zones": {
                **{str(seat): _cards_json(cards) for seat, cards in sorted(self.by_player.items())},
                "upcard": _cards_json(self.upcard),
                "unassigned": _cards_json(self.unassigned),
            },
            "groups": groups_json(group_reading(self)),
            "conflicts": [conflict.to_dict() for conflict in self.conflicts],
            "width": self.width,
            "height": self.height,
        }


@dataclasses.dataclass(frozen=True)
class StableReading:
    """The stabilised reading of the table, whether it has settled, and since when it is unchanged; ``unread``, for
    a frame the detector declined (``FrameNotRead``), why, in the players' words: the reading is then the one the
    frames read before it left."""

    reading: FrameReading
    stable: bool
    changed_at: float
    unread: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the reading's (``FrameReading.to_dict``) plus ``stable`` and ``changed_at``, and ``unread``
        for a frame not read.

        >>> StableReading(FrameReading({}), True, 2.5, unread="blurred").to_dict()["unread"]
        'blurred'
        """
        unread = {} if self.unread is None else {"unread": self.unread}
        return {**self.reading.to_dict(), "stable": self.stable, "changed_at": self.changed_at, **unread}
