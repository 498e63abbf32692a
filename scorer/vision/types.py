"""Plain values that cross the vision boundary: no tensors, no ultralytics types."""

from __future__ import annotations

import dataclasses

from scorer.cards import Card

Box = tuple[float, float, float, float]
"""Pixel box (x1, y1, x2, y2) in the frame's own coordinates."""


@dataclasses.dataclass(frozen=True)
class CardDetection:
    """One card seen once in a frame: its corner detections merged into one box."""

    card: Card
    box: Box
    confidence: float

    def to_dict(self) -> dict[str, object]:
        """JSON form used by ``okgin detect --json`` and ``/api/detect``."""
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
        return {"card": None if self.card is None else str(self.card), "reason": self.reason}


@dataclasses.dataclass(frozen=True)
class FrameReading:
    """What one frame (or a stabilised run of frames) shows: cards per seat, the upcard zone, conflicts."""

    by_player: dict[int, tuple[CardDetection, ...]]  # seat number (from 1) -> its cards
    upcard: tuple[CardDetection, ...] = ()
    unassigned: tuple[CardDetection, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    width: int = 0
    height: int = 0
