"""Turning a flickering stream of per-frame readings into one steady reading of the table.

A detector misses a card in one frame and invents one in the next; a hand moving over
the table hides cards for a moment. Scoring such noise would be wrong, so:

- a card counts as present once seen (in the same place) in most of the last ``window``
  frames, and stays until seen in fewer than a third of them (hysteresis: a card
  flickering around the threshold does not flip the result);
- a new label where another card lies (QH read as QD), or a card moving to another
  place, takes over only once the old reading has faded below that third while the new
  one holds the majority: never both at once, and a 50/50 flicker keeps the old one;
- the reading is *stable* once the set of present cards has not changed for
  ``settle_seconds`` and the window is full;
- a frame after a pause (a camera stopped, paused or switched), or of another size (another camera), starts
  afresh: the frames before it showed another picture, and would be voted with the new one's for a second, the
  old cards called stable at once.

A stabiliser takes one frame at a time (``update`` holds its lock): two frames of one table added at once mixed their
steps, a card voted present by one missing from the other's cards (a ``KeyError``) or left out of the reading.
"""

from __future__ import annotations

import math
import threading
from collections import Counter, deque

from scorer.cards import Card
from scorer.vision.boxes import iou
from scorer.vision.types import CardDetection, Conflict, FrameReading, StableReading

Place = str
"""Where a card lies: a seat number as text, "upcard" or "unassigned"."""
Key = tuple[Place, Card]

_UPCARD, _UNASSIGNED = "upcard", "unassigned"
SAME_SPOT_IOU = 0.3
"""Two labels whose boxes overlap this much describe the same physical card."""
PAUSE_SECONDS = 10.0
PAUSE_FACTOR = 4.0
"""A frame comes after a pause when it follows the one before by more than ``PAUSE_SECONDS`` and more than
``PAUSE_FACTOR`` times the interval before that: a server reading every frame in 5 s is slow, not paused, and one
frame read slowly (a busy laptop) does not empty the table for the frames it takes to fill the window again."""


def _places(reading: FrameReading) -> dict[Key, CardDetection]:
    found: dict[Key, CardDetection] = {}
    for seat, cards in reading.by_player.items():
        found.update({(str(seat), card.card): card for card in cards})
    found.update({(_UPCARD, card.card): card for card in reading.upcard})
    found.update({(_UNASSIGNED, card.card): card for card in reading.unassigned})
    return found


class Stabiliser:
    """Majority vote with hysteresis over the last ``window`` readings (see the module docstring).

    >>> from scorer.vision.types import CardDetection
    >>> qh = CardDetection(Card.parse("QH"), (0, 0, 10, 10), 0.9)
    >>> stabiliser = Stabiliser(window=3, settle_seconds=0.5)
    >>> [len(stabiliser.update(FrameReading({1: (qh,) if seen else ()}), t).reading.by_player[1])
    ...  for t, seen in enumerate([1, 0, 1, 0, 0, 0])]
    [0, 0, 1, 1, 1, 0]
    """

    def __init__(self, window: int = 7, settle_seconds: float = 1.0) -> None:
        if window < 1:
            raise ValueError(f"the window must hold at least one frame, not {window}")
        if settle_seconds < 0:
            raise ValueError(f"settle_seconds must not be negative, not {settle_seconds}")
        self.window = window
        self.settle_seconds = settle_seconds
        self.enter_count = window // 2 + 1  # a majority of the window
        self.leave_count = max(1, math.ceil(window / 3))  # present cards stay while seen this often
        self._lock = threading.Lock()
        self._forget()

    def reset(self) -> None:
        """Forget every frame seen (a new round, or another camera)."""
        with self._lock:
            self._forget()

    def _forget(self) -> None:
        self._frames: deque[tuple[dict[Key, CardDetection], tuple[Conflict, ...]]] = deque(maxlen=self.window)
        self._seats: set[str] = set()
        self._present: set[Key] = set()
        self._latest: dict[Key, CardDetection] = {}
        self._changed_at: float | None = None
        self._last_time: float | None = None
        self._interval: float | None = None
        self._size: tuple[int, int] = (0, 0)

    def update(self, reading: FrameReading, timestamp: float) -> StableReading:
        """Add one frame's reading taken at ``timestamp`` (seconds) and return the stabilised reading.

        A timestamp earlier than the previous one (a replayed video), a frame after a pause, and a frame of
        another size than the one before start afresh (see the module docstring).
        """
        with self._lock:
            return self._update(reading, timestamp)

    def _update(self, reading: FrameReading, timestamp: float) -> StableReading:
        size = (reading.width, reading.height)
        if self._last_time is not None:
            interval = timestamp - self._last_time
            paused = interval > max(PAUSE_SECONDS, PAUSE_FACTOR * (self._interval or 0.0))
            resized = all(size) and all(self._size) and size != self._size
            if interval < 0 or paused or resized:
                self._forget()
            self._interval = interval if interval >= 0 else None  # a pause too: the next one is judged by it
        self._last_time = timestamp
        self._size = size if all(size) else self._size
        places = _places(reading)
        self._frames.append((places, reading.conflicts))
        self._seats.update(str(seat) for seat in reading.by_player)
        self._latest.update(places)
        counts = Counter(key for frame, _ in self._frames for key in frame)
        present = self._vote(counts)
        if present != self._present or self._changed_at is None:
            self._present = present
            self._changed_at = timestamp
        self._latest = {key: card for key, card in self._latest.items() if key in counts}
        stable = len(self._frames) == self.window and timestamp - self._changed_at >= self.settle_seconds
        return StableReading(self._reading(reading), stable, self._changed_at)

    def agrees(self, reading: FrameReading) -> bool:
        """Whether ``reading`` shows exactly the cards, in their places, that the stabilised reading holds now."""
        places = set(_places(reading))
        with self._lock:
            return places == self._present

    def _vote(self, counts: Counter[Key]) -> set[Key]:
        kept = {key for key in self._present if counts[key] >= self.leave_count}
        newcomers = sorted(
            (key for key, n in counts.items() if key not in kept and n >= self.enter_count),
            key=lambda key: -counts[key],
        )
        for key in newcomers:
            place, card = key
            box = self._latest[key].box
            # a card has one place and one label: a newcomer waits until any rival reading of the same
            # physical card (same card elsewhere, or another label on the same spot) has faded out
            blocked = any(
                (other[1] == card and other[0] != place)
                or (other[0] == place and other[1] != card and iou(self._latest[other].box, box) >= SAME_SPOT_IOU)
                for other in kept
            )
            if not blocked:
                kept.add(key)
        return kept

    def _reading(self, latest: FrameReading) -> FrameReading:
        def cards_at(place: Place) -> tuple[CardDetection, ...]:
            cards = [self._latest[key] for key in self._present if key[0] == place]
            return tuple(sorted(cards, key=lambda c: c.box[0] + c.box[2]))

        seen_conflicts = Counter(conflict for _, conflicts in self._frames for conflict in set(conflicts))
        conflicts = tuple(c for c, n in seen_conflicts.items() if n >= self.enter_count)
        return FrameReading(
            by_player={int(seat): cards_at(seat) for seat in sorted(self._seats, key=int)},
            upcard=cards_at(_UPCARD),
            unassigned=cards_at(_UNASSIGNED),
            conflicts=conflicts,
            width=latest.width,
            height=latest.height,
        )
