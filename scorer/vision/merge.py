"""From corner-index detections to cards: one deck holds each card once.

A card shows its index in two opposite corners (poker decks: in all four), so the
detector may see the same card several times. Same-class corners about a card apart are
one card; the same class seen far apart (or more often than a card has corners) cannot be
true of one deck and is reported as a ``Conflict`` rather than silently dropped. A deck
printed with small indices puts a card's two corners further apart than most: where
several cards of one picture are each seen twice at the same such distance, that distance
is the picture's card (``_small_index_cards``).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Sequence

from scorer.cards import Card
from scorer.vision.boxes import box_centre, union_box
from scorer.vision.types import Box, CardDetection, Conflict, CornerDetection

INDICES_PER_CARD = 4
"""The most corner indices one card prints: two on most decks (top-left and bottom-right),
four on many poker decks (every corner)."""

CARD_DIAGONAL_PER_INDEX = 5.6
"""A card's diagonal in units of its corner index's longer side (the box's longer side).

The longer side of an axis-aligned index box barely changes with rotation, so it is a
rotation-proof ruler for the card's size. Measured on the rendered decks of
``scorer.synth`` (60 scenes, 19 decks): per-deck medians 3.3 to 7.8, overall about 5.6;
a standard poker card (88 x 63 mm, index ~20 mm tall) gives 5.4.
"""

SAME_CARD_DIAGONALS = 1.35
"""Same-class corners closer than this many card diagonals belong to one card.

On the same rendered scenes the two indices of one card lie a median 4.1 and a 99th
percentile 6.4 index sides apart; 1.35 x 5.6 = 7.6 index sides keeps them together
while two copies at different places of the table stay apart.
"""


SMALL_INDEX_DIAGONALS = 12.0
"""The furthest apart, in index sides, two corners of one card can lie: a card of 88 x 63 mm
with indices 9 mm tall (the smallest common print). On the rendered tables of
``benchmarks/bench_groups.py`` the two decks whose corners lay beyond ``SAME_CARD_DIAGONALS``
put them 7.7 to 9.4 index sides apart."""

SMALL_INDEX_AGREEMENT = 0.15
"""Two cards' corner distances (in index sides) this close, relatively, are one deck's card size."""


def same_card_distance(a: Box, b: Box) -> float:
    """The largest centre distance at which two same-class corner boxes are still one card."""
    return SAME_CARD_DIAGONALS * CARD_DIAGONAL_PER_INDEX * _index_side(a, b)


def _index_side(*boxes: Box) -> float:
    """The longer side of the largest of some index boxes: the ruler for how far apart they lie."""
    return max(1e-9, *(max(box[2] - box[0], box[3] - box[1]) for box in boxes))


def _span(corners: Sequence[CornerDetection]) -> float:
    """How far apart the furthest two of a card's corners lie, in index sides (of its largest index)."""
    side = _index_side(*(corner.box for corner in corners))
    centres = [box_centre(corner.box) for corner in corners]
    return max(math.dist(a, b) for a, b in itertools.combinations(centres, 2)) / side


def _cluster(corners: Sequence[CornerDetection]) -> list[list[CornerDetection]]:
    """Group same-class corners by single linkage: a chain of near neighbours is one group."""
    groups: list[list[CornerDetection]] = []
    for corner in sorted(corners, key=lambda c: -c.confidence):
        near = [
            group
            for group in groups
            if any(
                math.dist(box_centre(corner.box), box_centre(member.box)) <= same_card_distance(corner.box, member.box)
                for member in group
            )
        ]
        merged = [corner]
        for group in near:
            merged.extend(group)
            groups.remove(group)
        groups.append(merged)
    return groups


def combined_confidence(corners: Sequence[CornerDetection]) -> float:
    """How sure we are of a card read at several corners: the chance not all of them are wrong.

    >>> round(combined_confidence([CornerDetection(Card.parse("AS"), (0, 0, 1, 1), 0.5)] * 2), 2)
    0.75
    """
    return 1.0 - math.prod(1.0 - corner.confidence for corner in corners)


def _wider_than_a_card(group: Sequence[CornerDetection]) -> bool:
    """Whether some two corners of a chained group are further apart than one card allows."""
    return any(
        math.dist(box_centre(a.box), box_centre(b.box)) > same_card_distance(a.box, b.box)
        for i, a in enumerate(group)
        for b in group[i + 1 :]
    )


def merge_corners(
    corners: Sequence[CornerDetection], min_confidence: float = 0.0
) -> tuple[list[CardDetection], list[Conflict]]:
    """Merge corner detections into one ``CardDetection`` per card, reporting what one deck forbids.

    Same-class corners within about a card's size are one card: its box is the union of the
    corner boxes, its confidence ``1 - prod(1 - c)`` over its corners, since each corner read
    the same way is independent evidence (a card seen at two corners beats a lone misread).
    A group less confident than ``min_confidence`` (the card threshold) is dropped first: it is
    not a card, so not a second sighting either (a half-hidden index read at 0.4 beside a row
    must not stop a round being scored). Two groups far apart keep the more confident one and
    report a conflict; a group with more corners than a card prints does too.

    >>> qh = Card.parse("QH")
    >>> cards, conflicts = merge_corners([CornerDetection(qh, (0, 0, 10, 20), 0.9),
    ...                                   CornerDetection(qh, (60, 80, 70, 100), 0.6)])
    >>> [(str(c.card), c.box, c.confidence) for c in cards], conflicts
    ([('QH', (0, 0, 70, 100), 0.96)], [])
    >>> cards, conflicts = merge_corners([CornerDetection(qh, (0, 0, 10, 20), 0.9),
    ...                                   CornerDetection(qh, (900, 0, 910, 20), 0.6)])
    >>> [str(c.card) for c in cards], [c.reason for c in conflicts]
    (['QH'], ['QH seen twice, far apart'])
    >>> merge_corners([CornerDetection(qh, (0, 0, 10, 20), 0.9), CornerDetection(qh, (900, 0, 910, 20), 0.3)],
    ...               min_confidence=0.4)[1]
    []
    """
    by_card: dict[Card, list[CornerDetection]] = defaultdict(list)
    for corner in corners:
        by_card[corner.card].append(corner)
    grouped = {
        card: [group for group in _cluster(seen) if combined_confidence(group) >= min_confidence]
        for card, seen in by_card.items()
    }
    small_index = _small_index_cards(grouped)
    for card in small_index:
        grouped[card] = [[corner for group in grouped[card] for corner in group]]
    cards: list[CardDetection] = []
    conflicts: list[Conflict] = []
    for card, groups in grouped.items():
        if not groups:
            continue
        groups.sort(key=lambda group: -combined_confidence(group))
        best = groups[0]
        cards.append(CardDetection(card, union_box([c.box for c in best]), combined_confidence(best)))
        if len(groups) > 1:
            times = "twice" if len(groups) == 2 else f"{len(groups)} times"
            conflicts.append(Conflict(card, f"{card} seen {times}, far apart"))
        elif len(best) > INDICES_PER_CARD:
            conflicts.append(
                Conflict(card, f"{card}: {len(best)} corner indices close together, a card prints {INDICES_PER_CARD}")
            )
        elif card not in small_index and _wider_than_a_card(best):
            conflicts.append(Conflict(card, f"{card}: {len(best)} corner indices spread wider than one card"))
    cards.sort(key=lambda c: (-c.confidence, c.card))
    return cards, conflicts


def _small_index_cards(grouped: dict[Card, list[list[CornerDetection]]]) -> set[Card]:
    """The cards whose corners, in one group or two, lie further apart than ``same_card_distance`` allows but are
    one card of a small-index deck: at most ``INDICES_PER_CARD`` corners spanning at most ``SMALL_INDEX_DIAGONALS``
    index sides, where another card of the picture spans as much, within ``SMALL_INDEX_AGREEMENT``.

    One card so spread may be two readings, one of them wrong, and stays a conflict; several spread alike are a
    deck whose card is that size (models/HISTORY.md, Session 43: ``python benchmarks/bench_groups.py --seed S``,
    tables read by a perfect detector, false conflicts 10 -> 1, 33 -> 0 and 23 -> 0 for S = 100, 500, 900).
    """
    within = SAME_CARD_DIAGONALS * CARD_DIAGONAL_PER_INDEX
    spans = {}
    for card, groups in grouped.items():
        corners = [corner for group in groups for corner in group]
        if len(groups) <= 2 and 2 <= len(corners) <= INDICES_PER_CARD:
            span = _span(corners)
            if (len(groups) == 2 or _wider_than_a_card(corners)) and within < span <= SMALL_INDEX_DIAGONALS:
                spans[card] = span
    return {
        card
        for card, span in spans.items()
        if any(abs(other - span) <= SMALL_INDEX_AGREEMENT * span for key, other in spans.items() if key != card)
    }
