"""Laid groups: cards overlapping in a row, a fan or a cascade are one group, and a group is a meld.

When a round ends each player spreads his cards in front of him, a meld to a group, each
card covering most of the one before but leaving its corner index in view; the opponents
lay off by adding a card against one of the knocker's melds. The camera sees corner
indices only: a covered card shows its top-left index, the top card of a group usually
both corners. So each card's footprint is rebuilt in its player's own view (his cards
upright, ``SEAT_TURNS``): from the top-left of its index box, one card wide and one card
tall, the card's size measured on the cards seen whole. Cards whose footprints overlap
are one group (``group_reading``). A card whose top-left is hidden (a stray lies on it)
shows its bottom-right index alone: it is placed from that corner when only so it lies
level with the cards it touches (``_placed``). So is a row of covered cards that shows
their bottom-right indices, where the player spread the group from the right, each card
on top to the left of (or above) the one before: grown from there, the row lies level
under its top card, or at least its bottom edge in line with the card's (``_chains_turned``).
A box wider or taller than a card is no laid card's corner but a stray lying askew: it
lies where its box is (``ASKEW``).

``read_laydown`` then proposes what was laid, for the engine to score as laid: the
knocker's groups that are melds are his melds as laid; a group holding no meld is his
deadwood; a card lying alone when he shows one card too many is the discard he set
aside; and cards missing from an opponent's seat, found at the end of one of the
knocker's melds, are that opponent's layoffs. Whatever the positions cannot tell (a group
mixing a meld with other cards, two lone cards) is left to the engine, with a note.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import statistics
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from scorer.cards import Card, format_cards, parse_cards
from scorer.laydown import LayDown, format_layoffs_by_player
from scorer.layoffs import IllegalLayoffError, Layoff, extended_melds, lay_off_as_given
from scorer.melds import MELD_BY_MASK, Meld, cards_mask, meld_kind
from scorer.vision.boxes import overlap_extent, turned_box, union_box
from scorer.vision.types import Box, CardDetection, FrameReading

SEAT_TURNS: dict[int, int] = {1: 0, 2: 180, 3: 90, 4: 270}
"""Clockwise turn (degrees) of each seat's cards in the picture, seats as in ``TableLayout.default``
(1 bottom, 2 top, 3 left, 4 right): each player's cards read upright from his side of the table."""

WHOLE_CARD_SHARE = 0.6
"""A box at least this share of the longest box in the picture, and card-shaped, is a card seen whole."""

SEEN_WHOLE = 0.8
"""A card's box at least this share of a card's height long (and card-shaped) spans the card: it lies where
its box is. A cascade's covered card shows a strip a card wide but not a card tall."""

SPANS_A_CARD = 0.7
"""A box at least this share of a card both ways, though not card-shaped, spans a card too (no more than ``ASKEW``
cards): a fan's top card, turned, has a box wider than a card's shape, and a card far from the camera in a tilted
picture is smaller than the size measured over the whole picture. A covered card shows a strip, short one way."""

AT_THE_EDGE = 0.1
"""A box within this share of a card of the picture's edge touches it (the index insets keep a card's box a little
inside the card). One that spans a card along that edge (``SPANS_A_CARD``, short of ``ASKEW``) and at least
``LARGEST_STEP`` of one the other way is a card running out of the picture, seen whole: the edge cuts it short, or,
however long, the card size measured errs (a squeezed picture). A covered card's strip along the edge, a cascade's,
shows less than a step (0.13-0.36 of a card at seeds 100-139 and 500-579 of the bench tables)."""

CARD_ASPECT = (0.45, 0.95)
"""Short over long side of a card seen whole (63 x 88 mm cards: 0.72; less after the index insets and a
slight tilt, and in a picture squeezed along one axis, as photos resized to a square are: 0.45 is a card
squeezed to 0.62 of its width). A covered card's edge strip is narrower; a lone corner index (rank over
suit) may not be, but is far smaller than a card (``SMALLEST_CARD_IN_FRAME``)."""

OVERLAP_SHARE = 0.1
"""Two footprints overlapping by at least this share of a card's width, both ways, are one group.

Cards of one group overlap by 70-85% of a card; groups lie at least 12% of a card apart
(``scorer.synth.scene``), more once the index insets are counted. Footprints never reach
past the card, so a gap between groups never closes."""

SMALLEST_CARD_PER_INDEX = 3.3
"""A card's diagonal in corner-index lengths for the deck with the largest indices (``merge``'s
``CARD_DIAGONAL_PER_INDEX`` is 3.3 to 7.8 by deck): sizing cards from their indices errs small, which
keeps groups apart while a group's cards, a fifth of a card apart, still overlap."""

SMALLEST_CARD_IN_FRAME = 0.03
"""A card seen whole is at least this share of the picture's longer side long: a picture of a card table
spans no more than about 30 cards. A box smaller than that is a lone corner index, however card-shaped
(an index's rank over suit can be as wide as a card's 0.6-0.8), so it never sets a card's size."""

ASKEW = 1.3
"""A box not seen whole but more than this many cards wide or tall is not grown into a card: a player's cards lie
upright in his view, so the indices of one of them span at most a card (1.3 leaves room for the card size erring
small). Such a box is a stray lying askew, seen at two corners (or a card shaped unlike the cards measured, in a
picture squeezed hard): it lies where its box is. Grown a card down from its top-left, a stray lying across two
groups' indices joined them."""

LEVEL = 0.3
"""Cards of one group lie level: their tops within this share of a card's height of a neighbour's (a row, or a
fan with its slope over one step), or their left edges within this share of a card's width (a cascade), with
room for the card size erring small. A card that touches its neighbours only out of level is misplaced."""

LIES_ON_ITS_TOP_CARD = 0.6
"""A row of covered cards laid from the left lies on its own top card, level, by more than this share of a card's
width (each card covers 70-85% of the one before, less the card size erring small): it is never turned to a row
spread from the right (``_turned_over``), however far it would lie on another card so turned. Spread from the right
and grown from the top-left, a row of strips (a four-index deck's covered cards show both right-hand indices, level
with the next group's top card) reaches into that card by up to about half a card where the groups lie close
(0.51-0.60 at seeds 102, 105, 120, 505 and 554 of the reversed bench tables): at 0.5 those rows were never turned."""

UNDER_ITS_TOP_CARD = 0.3
"""A row turned to one spread from the right, level with a card seen whole by their bottom edges only, lies under it,
along the row, by more than this share of a card's width: its first covered card lies one step (under half a card,
``LARGEST_STEP``) past its top card, so under it by half a card or more, less the card size erring small. A row of
indices that, so turned, reaches only the edge of a card (a stray lying across a row's end) is not turned onto it."""

LARGEST_STEP = 0.5
"""Each card of a group covers most of the one before, so two cards of a group lie less than half a card apart:
a card is at least twice as long as the closest two of its player's cards lie apart. This bounds the card size
from below when no card is seen whole, where the indices alone size it for the deck with the largest indices
(``SMALLEST_CARD_PER_INDEX``), up to 4 times too small for a deck with small ones."""

SET_ASIDE = 1.5
"""A lone card is the set-aside discard when it lies this many times further from the other groups
than any other lone card."""


@dataclasses.dataclass(frozen=True)
class LaidGroup:
    """Cards lying as one group, in laying order (the player's left to right, or top to bottom).

    ``footprint`` is where the group lies in the picture, its covered parts included; None
    for a group a player made by hand (regrouping on the page), which has no place.
    """

    cards: tuple[Card, ...]
    footprint: Box | None = None

    @classmethod
    def of(cls, cards: Sequence[Card] | str) -> LaidGroup:
        """A group of cards without a place, e.g. from a list a player regrouped.

        >>> LaidGroup.of("JS QS KS").to_dict()
        {'cards': ['JS', 'QS', 'KS'], 'box': None}
        """
        return cls(tuple(parse_cards(cards) if isinstance(cards, str) else cards))

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"cards": ["5S", "6S", "7S"], "box": [x1, y1, x2, y2] or null}``."""
        box = None if self.footprint is None else [round(v, 1) for v in self.footprint]
        return {"cards": [str(card) for card in self.cards], "box": box}


def card_size(cards: Sequence[CardDetection], frame: float = 0.0) -> tuple[float, float]:
    """A card's (width, height) in pixels, upright, measured on the cards seen whole.

    A card seen at two opposite corners has a box spanning it (less the index insets, so
    the size errs small, which keeps groups apart). Without one, the size follows from the
    corner indices (``SMALLEST_CARD_PER_INDEX``); a 63 x 88 mm card's sides are 0.58 and
    0.81 of its diagonal. ``frame``, the picture's longer side (0: unknown), tells a
    card-shaped corner index from a card (``SMALLEST_CARD_IN_FRAME``).

    >>> card = CardDetection(Card.parse("AS"), (0, 0, 60, 84), 0.9)
    >>> index = CardDetection(Card.parse("2S"), (100, 0, 110, 20), 0.9)
    >>> card_size([card, index])
    (60.0, 84.0)
    >>> indices = [index, CardDetection(Card.parse("3S"), (130, 0, 143, 18), 0.9)]  # card-shaped 13 x 18
    >>> [round(side) for side in card_size(indices, frame=1280)]  # no card seen whole: sized from the indices
    [36, 51]
    """
    if not cards:
        return (0.0, 0.0)
    whole = _whole_sides(cards, frame)
    if whole:
        return float(statistics.median(s for s, _ in whole)), float(statistics.median(long for _, long in whole))
    diagonal = SMALLEST_CARD_PER_INDEX * statistics.median(max(_sides(card.box)) for card in cards)
    return 0.58 * diagonal, 0.81 * diagonal


def _sides(box: Box) -> tuple[float, float]:
    return box[2] - box[0], box[3] - box[1]


def _whole_sides(cards: Sequence[CardDetection], frame: float) -> list[tuple[float, float]]:
    """The (short, long) sides of the boxes of the cards seen whole (``card_size``)."""
    sides = [sorted(_sides(card.box)) for card in cards]
    longest = max((long for _, long in sides), default=0.0)
    least = SMALLEST_CARD_IN_FRAME * frame
    return [(short, long) for short, long in sides if long >= least and _looks_whole(short, long, longest)]


def spaced_card_size(cards: Sequence[CardDetection], turn: int, size: tuple[float, float]) -> tuple[float, float]:
    """``size``, enlarged (its shape kept) to at least twice the least distance between two of these cards.

    For a player's cards when no card is seen whole (``LARGEST_STEP``): measured from the
    top-left of each box in his view, where each card of a group shows its index.

    >>> row = [CardDetection(Card.parse(c), (22 * k, 0, 22 * k + 8, 12), 0.9) for k, c in enumerate(["2S", "3S", "4S"])]
    >>> spaced_card_size(row, 0, (20.0, 30.0))  # the cards of a row lie 22 apart: a card is at least 44 wide
    (44.0, 66.0)
    """
    corners = [turned_box(card.box, turn)[:2] for card in cards]
    least = min((math.dist(a, b) for a, b in itertools.combinations(corners, 2)), default=0.0)
    scale = max(1.0, least / LARGEST_STEP / max(size[0], 1e-9))
    return size[0] * scale, size[1] * scale


def _looks_whole(short: float, long: float, longest: float) -> bool:
    """Whether a box of these sides is a card seen whole, given the longest a card's box is here."""
    return long >= WHOLE_CARD_SHARE * longest and CARD_ASPECT[0] <= short / max(long, 1e-9) <= CARD_ASPECT[1]


def _card_shaped(box: Box, size: tuple[float, float]) -> bool:
    """Whether a card's box is card-shaped and nearly a card long (a covered card's strip is not)."""
    short, long = sorted(_sides(box))
    return long >= SEEN_WHOLE * size[1] and _looks_whole(short, long, size[1])


def _seen_whole(box: Box, size: tuple[float, float], picture_box: Box | None = None) -> bool:
    """Whether a card's box spans the card: card-shaped, or nearly a card both ways short of askew (``SPANS_A_CARD``).

    Spread from the right, a row's top card is the one it is turned onto (``_turned_over``): a fan's top card
    whose box was wider than a card's shape left its row grown the wrong way, as did a card running out of the
    picture (``picture_box``, upright as the box: ``AT_THE_EDGE``)."""
    if _card_shaped(box, size):
        return True
    wide, tall = _sides(box)
    if min(wide / size[0], tall / size[1]) >= SPANS_A_CARD and not _askew(box, size):
        return True
    return picture_box is not None and _runs_out(box, size, picture_box)


def _runs_out(box: Box, size: tuple[float, float], picture_box: Box) -> bool:
    """Whether a box touching the picture's edge (``picture_box``, upright as the box) is a card running out of it
    (``AT_THE_EDGE``): spanning a card along that edge, and half a card or more the other way."""
    sides = _sides(box)
    for along in (0, 1):  # 0: the box spans a card across, so it touches the picture's top or bottom
        cut = 1 - along
        gap = min(box[cut] - picture_box[cut], picture_box[cut + 2] - box[cut + 2])
        spans = SPANS_A_CARD * size[along] <= sides[along] <= ASKEW * size[along]
        if gap <= AT_THE_EDGE * size[cut] and spans and sides[cut] >= LARGEST_STEP * size[cut]:
            return True
    return False


def _grown(box: Box, size: tuple[float, float], corner: str = "top-left") -> Box:
    """An upright box grown to a whole card from its top-left (a covered card shows that index) or bottom-right."""
    x1, y1, x2, y2 = box
    if corner == "bottom-right":
        return (min(x1, x2 - size[0]), min(y1, y2 - size[1]), x2, y2)
    return (x1, y1, max(x2, x1 + size[0]), max(y2, y1 + size[1]))


def _askew(box: Box, size: tuple[float, float]) -> bool:
    """Whether a box not seen whole spans more than a card: no laid card's corner (``ASKEW``)."""
    return box[2] - box[0] > ASKEW * size[0] or box[3] - box[1] > ASKEW * size[1]


def _a_corner(box: Box, size: tuple[float, float]) -> bool:
    """Whether a box is one corner index: short of a card both ways (a covered card's edge strip is a card long)."""
    return box[2] - box[0] < SEEN_WHOLE * size[0] and box[3] - box[1] < SEEN_WHOLE * size[1]


def _overlap(a: Box, b: Box, least: float) -> bool:
    across, down = overlap_extent(a, b)
    return across >= least and down >= least


def _touching(footprint: Box, others: Sequence[Box], size: tuple[float, float]) -> tuple[bool, bool]:
    """(whether a footprint overlaps any of the others, whether it lies level with one it overlaps: ``LEVEL``)."""
    overlapped = [other for other in others if _overlap(footprint, other, OVERLAP_SHARE * size[0])]
    return bool(overlapped), any(_level(footprint, other, size) for other in overlapped)


def _placed(upright: Sequence[Box], size: tuple[float, float], picture_box: Box | None = None) -> list[Box]:
    """Each card's footprint, upright: its box if seen whole or askew, else grown to a card from a corner.

    A lone corner index is taken for a top-left one (grown right and down) unless, so
    placed, the card lies level with none of the cards it touches (``LEVEL``). It is then
    taken for a bottom-right one (grown left and up: its top-left is hidden, under a stray
    or the cards of a group spread from the right) if so it lies level with one, or if so
    it touches none where as a top-left it touched some out of level (a card lying alone
    beside a group). Rows of covered cards, edge strips too, are turned together
    (``_chains_turned``).
    """
    whole = [_seen_whole(box, size, picture_box) for box in upright]
    askew = [not seen and _askew(box, size) for box, seen in zip(upright, whole, strict=True)]
    first = [box if seen or skew else _grown(box, size) for box, seen, skew in zip(upright, whole, askew, strict=True)]
    placed = list(first)
    for i, box in enumerate(upright):
        if whole[i] or askew[i] or not _a_corner(box, size):
            continue
        laid = [footprint for j, footprint in enumerate(first) if j != i and not askew[j]]
        touches, level = _touching(first[i], laid, size)
        if level:
            continue
        turned = _grown(box, size, "bottom-right")
        touches_turned, level_turned = _touching(turned, laid, size)
        if level_turned or (touches and not touches_turned):
            placed[i] = turned
    return _chains_turned(upright, size, placed, whole)


def _chains_turned(
    upright: Sequence[Box], size: tuple[float, float], placed: Sequence[Box], whole: Sequence[bool]
) -> list[Box]:
    """The footprints, with each row of covered cards (their footprints overlapping level; a single card too) grown
    from their bottom-right instead where so they lie further on a card seen whole, level with it, than they lay on
    any card as grown from the top-left, and that was not on their own top card (``_turned_over``).

    A player who spreads a group from the right puts each card on top to the left of the one before: the covered
    cards show their bottom-right index (or both right-hand ones), in a row level with the bottom of the top card.
    Grown from the top-left, that row lies below and beside its top card, a group apart, or reaches into the next
    group."""
    footprints = list(placed)
    width = size[0]
    covered = [i for i, box in enumerate(upright) if not whole[i] and not _askew(box, size)]
    linked = [
        (a, b)
        for a, b in itertools.combinations(range(len(covered)), 2)
        if _overlap(footprints[covered[a]], footprints[covered[b]], OVERLAP_SHARE * width)
        and _level(footprints[covered[a]], footprints[covered[b]], size)
    ]
    waiting = [[covered[k] for k in row] for row in _joined(len(covered), linked)]
    while waiting:  # again after each row turned: a row grown the wrong way may have reached into another's place
        for row in waiting:
            turned = _turned_over(row, upright, footprints, whole, size)
            if turned:
                footprints = [turned.get(i, footprint) for i, footprint in enumerate(footprints)]
                waiting.remove(row)
                break
        else:
            break
    return footprints


def _turned_over(
    members: Sequence[int],
    upright: Sequence[Box],
    footprints: Sequence[Box],
    whole: Sequence[bool],
    size: tuple[float, float],
) -> dict[int, Box]:
    """The row ``members`` grown from their bottom-right, if so it touches cards seen whole only, each member that
    touches one level with it the way the row runs (tops in line along a row or fan, left edges down a cascade: a
    cascade's cards beside another group's top card are not turned onto it), and lies further on one, along the
    row, than it lay level on any card as placed, which was less than ``LIES_ON_ITS_TOP_CARD``; else nothing.

    A row of two or more may instead lie level with the cards it touches by their far edges (bottoms along a row,
    right edges down a cascade), lying further than ``UNDER_ITS_TOP_CARD`` on one: those edges are measured, the
    indices' and the card's box alike, where the row's tops, grown from there, follow from the card size, which
    errs (a card near the camera is larger than the size measured over the picture; down a tilted row the grown
    tops drift off the top card's). A lone index keeps to its top, as ``_placed`` places one: it may as well be a
    top-left index whose card runs out of the picture; and it is turned onto card-shaped cards only, not onto a box
    that only spans a card (``SPANS_A_CARD``), as a fan's top card does: a lone card beside a fan was so turned
    onto it."""
    width = size[0]
    others = [j for j in range(len(footprints)) if j not in members]
    along_x = _spread(upright, members, 0) >= _spread(upright, members, 1)
    axis, slack = (0, LEVEL * size[0]) if not along_x else (1, LEVEL * size[1])
    run = 1 - axis  # the row's own direction: across for a row or fan, down for a cascade

    turned = {i: _grown(upright[i], size, "bottom-right") for i in members}
    touched = {i: _overlapped(turned[i], footprints, others, width) for i in members}
    onto = [j for found in touched.values() for j in found]
    lone = len(members) == 1
    if not onto or not all(_card_shaped(upright[j], size) if lone else whole[j] for j in onto):
        return {}
    edges = (axis, axis + 2) if len(members) > 1 else (axis,)  # the near edges (tops or left edges), the far ones

    def in_line(a: Box, b: Box, among: Sequence[int] = edges) -> bool:
        return any(abs(a[edge] - b[edge]) <= slack for edge in among)

    def each_in_line(among: Sequence[int]) -> bool:
        return all(
            any(in_line(turned[i], footprints[j], among) for j in found) for i, found in touched.items() if found
        )

    if not each_in_line(edges):
        return {}
    # laid from the left, a row lies on its own top card, most of a card; spread from the right, grown from the
    # top-left it reaches a little into the next group's top card, or none, and turned it lies on its own: how far
    # along the run a member lies on a card level with it, as placed (``_level``) and as turned (``in_line``)
    before = max(
        (
            overlap_extent(footprints[i], footprints[j])[run]
            for i in members
            for j in _overlapped(footprints[i], footprints, others, width)
            if _level(footprints[i], footprints[j], size)
        ),
        default=0.0,
    )
    if before >= LIES_ON_ITS_TOP_CARD * width:
        return {}
    after = max(
        (
            overlap_extent(turned[i], footprints[j])[run]
            for i, found in touched.items()
            for j in found
            if in_line(turned[i], footprints[j])
        ),
        default=0.0,
    )
    least = before if each_in_line((axis,)) else max(before, UNDER_ITS_TOP_CARD * width)
    return turned if after > least else {}


def _spread(boxes: Sequence[Box], members: Sequence[int], axis: int) -> float:
    """How far apart the members' boxes lie along ``axis`` (0: across, 1: down), by their top-left corners."""
    return max(boxes[i][axis] for i in members) - min(boxes[i][axis] for i in members)


def _overlapped(footprint: Box, footprints: Sequence[Box], among: Sequence[int], width: float) -> list[int]:
    """Those of ``among`` whose footprint ``footprint`` overlaps (``OVERLAP_SHARE``)."""
    return [j for j in among if _overlap(footprint, footprints[j], OVERLAP_SHARE * width)]


def _level(a: Box, b: Box, size: tuple[float, float]) -> bool:
    """Whether two footprints lie level: tops in line (a row, a fan) or left edges in line (a cascade)."""
    return abs(a[1] - b[1]) <= LEVEL * size[1] or abs(a[0] - b[0]) <= LEVEL * size[0]


def _components(footprints: Sequence[Box], width: float) -> list[list[int]]:
    """The footprints in groups, as indices in order: footprints overlapping (``OVERLAP_SHARE``) lie in one."""
    linked = [
        (i, j)
        for i, j in itertools.combinations(range(len(footprints)), 2)
        if _overlap(footprints[i], footprints[j], OVERLAP_SHARE * width)
    ]
    return _joined(len(footprints), linked)


def _joined(count: int, links: Sequence[tuple[int, int]]) -> list[list[int]]:
    """``range(count)`` in the sets that ``links`` join, each in order, in order of their first member."""
    group_of = list(range(count))

    def root(index: int) -> int:
        while group_of[index] != index:
            group_of[index] = group_of[group_of[index]]
            index = group_of[index]
        return index

    for i, j in links:
        group_of[root(i)] = root(j)
    members: dict[int, list[int]] = {}
    for index in range(count):
        members.setdefault(root(index), []).append(index)
    return list(members.values())


def group_cards(
    cards: Sequence[CardDetection], turn: int, size: tuple[float, float], picture: tuple[float, float] | None = None
) -> tuple[LaidGroup, ...]:
    """Group one player's cards by position: cards whose footprints overlap lie in one group.

    ``turn`` is how his cards are turned in the picture (``SEAT_TURNS``), ``size`` a card's
    upright (width, height) (``card_size``). A card seen whole lies where its box is; any
    other is grown from the top-left of its box (its visible index) to a card's size, or
    from its bottom-right where only that lies level with its neighbours (``_placed``), as is
    a row of them spread from the right (``_chains_turned``). ``picture``, the picture's
    (width, height) (None: unknown), tells a card running out of it, seen whole
    (``AT_THE_EDGE``). Groups come in the player's left-to-right order.

    >>> row = [CardDetection(Card.parse(c), (x, 0, x + 10, 20), 0.9) for c, x in (("5S", 0), ("6S", 15), ("7S", 30))]
    >>> apart = CardDetection(Card.parse("KD"), (200, 0, 260, 84), 0.9)
    >>> [format_cards(g.cards) for g in group_cards([apart, *row], 0, (60.0, 84.0))]
    ['5S 6S 7S', 'KD']
    """
    width, height = size
    upright = [turned_box(card.box, turn) for card in cards]
    picture_box = None if picture is None else turned_box((0, 0, *picture), turn)
    footprints = _placed(upright, size, picture_box)
    groups = []
    for indices in _components(footprints, width):
        box = union_box([footprints[i] for i in indices])
        along_x = box[2] - box[0] - width >= box[3] - box[1] - height  # a row or fan, else a cascade
        indices.sort(key=lambda i: (upright[i][0], upright[i][1]) if along_x else (upright[i][1], upright[i][0]))
        groups.append((box, LaidGroup(tuple(cards[i].card for i in indices), turned_box(box, -turn))))
    groups.sort(key=lambda item: (item[0][0], item[0][1]))
    return tuple(group for _, group in groups)


def group_reading(reading: FrameReading) -> dict[int, tuple[LaidGroup, ...]]:
    """Each seat's cards in laid groups, the card size measured over the whole picture.

    Where no card is seen whole the size comes from the indices, and each seat's is at
    least what its cards' spacing implies (``spaced_card_size``).
    """
    every = [card for cards in reading.by_player.values() for card in cards]
    shown = [*every, *reading.upcard, *reading.unassigned]
    frame = max(reading.width, reading.height)
    size = card_size(shown, frame)
    measured = bool(_whole_sides(shown, frame))
    groups = {}
    for seat, cards in reading.by_player.items():
        turn = SEAT_TURNS.get(seat, 0)
        seat_size = size if measured else spaced_card_size(cards, turn, size)
        groups[seat] = group_cards(cards, turn, seat_size, (reading.width, reading.height) if frame else None)
    return groups


def groups_json(groups: Mapping[int, Sequence[LaidGroup]]) -> dict[str, list[dict[str, Any]]]:
    """JSON form: seat number (as text) to its groups (``LaidGroup.to_dict``)."""
    return {str(seat): [group.to_dict() for group in laid] for seat, laid in sorted(groups.items())}


# --- what the groups say was laid


@dataclasses.dataclass(frozen=True)
class LaidTable:
    """What the positions of the cards say was laid: each seat's own cards and the lay-down.

    ``hands`` hold each seat's cards with its layoffs moved back to it (the knocker's with
    his discard); ``laydown`` names players by seat number as text, and leaves out what the
    positions could not tell; ``notes`` say what that was.
    """

    hands: dict[int, tuple[Card, ...]]
    laydown: LayDown
    groups: dict[int, tuple[LaidGroup, ...]]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``hands`` and ``groups`` by seat, the ``laydown`` (``LayDown.to_dict``), ``notes``."""
        return {
            "hands": {str(seat): [str(card) for card in cards] for seat, cards in sorted(self.hands.items())},
            "laydown": self.laydown.to_dict(),
            "groups": groups_json(self.groups),
            "notes": list(self.notes),
        }


def _melds_in_order(cards: Sequence[Card]) -> tuple[Meld, ...] | None:
    """The group cut, in laying order, into consecutive melds (two melds laid touching), or None."""
    if len(cards) < 3:
        return None
    if meld_kind(tuple(sorted(cards))) is not None:
        return (Meld.of(cards),)
    for cut in range(3, len(cards) - 2):
        head, tail = _melds_in_order(cards[:cut]), _melds_in_order(cards[cut:])
        if head is not None and tail is not None:
            return head + tail
    return None


def _holds_a_meld(cards: Sequence[Card]) -> bool:
    mask = cards_mask(cards)
    return any(meld & mask == meld for meld in MELD_BY_MASK)


def _layoff_options(group: Sequence[Card]) -> list[tuple[Card, ...]]:
    """The cards of a meld group that may have been laid off onto the rest (none included).

    A run keeps 3+ consecutive cards and loses its lowest and/or highest ones; a set of
    four loses any one card.
    """
    if meld_kind(tuple(sorted(group))) is None:
        return [()]
    if len({card.rank for card in group}) == 1:
        return [(), *((card,) for card in group)] if len(group) == 4 else [()]
    ranked = sorted(group, key=lambda card: card.rank)
    return [
        (*ranked[:below], *ranked[len(ranked) - above :])
        for below in range(len(ranked) - 2)
        for above in range(len(ranked) - 2 - below)
    ]


def _not_last(group: Sequence[Card], cards: Sequence[Card]) -> int:
    """How many of ``cards`` are not among the group's last cards in laying order.

    A card put against a row is most easily put on top at its end, so the last cards laid
    are the likeliest layoffs.
    """
    last = set(group[len(group) - len(cards) :])
    return sum(card not in last for card in cards)


def _splits(groups: Sequence[tuple[Card, ...]], count: int) -> list[tuple[tuple[int, int], list[_Split]]]:
    """Every way to take ``count`` laid-off cards from the knocker's meld groups, likeliest first, with its rank.

    Likeliest: the fewest melds laid onto, then the cards last in their rows.
    """
    ways = []
    for picked in itertools.product(*(_layoff_options(group) for group in groups)):
        if sum(map(len, picked)) != count:
            continue
        rank = (sum(bool(cards) for cards in picked), sum(map(_not_last, groups, picked)))
        ways.append((rank, [_Split.of(group, cards) for group, cards in zip(groups, picked, strict=True)]))
    return sorted(ways, key=lambda way: way[0])


@dataclasses.dataclass(frozen=True)
class _Split:
    """One group of the knocker's: his own cards, and the cards laid off against them."""

    kept: tuple[Card, ...]
    laid: tuple[Card, ...]

    @classmethod
    def of(cls, group: Sequence[Card], laid: Sequence[Card]) -> _Split:
        return cls(tuple(card for card in group if card not in laid), tuple(laid))


def read_laydown(
    groups: Mapping[int, Sequence[LaidGroup]],
    knocker: int,
    hand_size: int,
    seating: Sequence[int] | None = None,
    knocker_cards: Collection[Card] | None = None,
) -> LaidTable:
    """What was laid, read from the groups (``group_reading``) with ``knocker`` (a seat) knocking.

    ``hand_size`` is the cards each player holds after the knocker's discard (10, or 7
    for 3-4 players); ``seating`` the seats in playing order (default: the groups' order),
    in which layoffs are tried. ``knocker_cards``, the knocker's own cards if known (as
    seen when he knocked, before anyone laid off), tells the layoffs apart for sure;
    without them the cards missing from the other seats are taken from the ends of his
    melds, the likeliest way first (``_splits``), with a note when another is as likely.

    >>> def row(cards, y):
    ...     return [CardDetection(Card.parse(c), (20 * k, y, 20 * k + 10, y + 20), 0.9) for k, c in enumerate(cards)]
    >>> knocker = group_cards(row("JS QS KS".split(), 0), 0, (60.0, 84.0))
    >>> other = group_cards(row("2C 5D 9H".split(), 500), 180, (60.0, 84.0))
    >>> laid = read_laydown({1: knocker, 2: other}, knocker=1, hand_size=3)
    >>> laid.laydown.knocker_melds, laid.notes
    ((Meld.parse('JS QS KS'),), ())
    """
    seats = list(seating or groups)
    cards = {seat: [card for group in groups.get(seat, ()) for card in group.cards] for seat in seats}
    own = {seat: tuple(found) for seat, found in cards.items()}
    short = {seat: hand_size - len(cards[seat]) for seat in seats if seat != knocker and len(cards[seat]) < hand_size}
    laid_off = sum(short.values())
    extra = len(cards[knocker]) - laid_off - hand_size
    if extra not in (0, 1):
        (first, first_cards), *others = cards.items()
        shown = f"seat {first} shows {len(first_cards)} cards" + "".join(f", seat {s} {len(c)}" for s, c in others)
        note = f"{shown}: not {hand_size} each (the knocker one more), so the lay-down is not read"
        return LaidTable(own, LayDown(), _frozen(groups), (note,))
    notes: list[str] = []
    knocker_groups = [group.cards for group in groups.get(knocker, ())]
    meld_groups = [group for group in knocker_groups if _melds_in_order(group) is not None]
    layoffs: dict[int, tuple[Layoff, ...]] = {}
    if laid_off:
        if knocker_cards is None:
            ways = _splits(meld_groups, laid_off)
        else:
            theirs = [tuple(card for card in group if card not in knocker_cards) for group in meld_groups]
            ways = [((0, 0), [_Split.of(group, laid) for group, laid in zip(meld_groups, theirs, strict=True)])]
        found = _assign_layoffs(ways, short, knocker, seats, notes)
        if found is None:
            return LaidTable(own, LayDown(), _frozen(groups), tuple(notes))
        meld_groups, layoffs = found
        moved = {layoff.card for laid in layoffs.values() for layoff in laid}
        own = {
            seat: tuple(c for c in own[seat] if c not in moved) + tuple(x.card for x in layoffs.get(seat, ()))
            for seat in seats
        }
    melds = _knocker_melds(knocker_groups, meld_groups, knocker, notes)
    discard = _set_aside(groups.get(knocker, ()), notes) if extra else None
    laydown = LayDown.of(melds, discard, {str(seat): laid for seat, laid in layoffs.items()})
    return LaidTable(own, laydown, _frozen(groups), tuple(notes))


def _frozen(groups: Mapping[int, Sequence[LaidGroup]]) -> dict[int, tuple[LaidGroup, ...]]:
    return {seat: tuple(laid) for seat, laid in groups.items()}


def _knocker_melds(
    knocker_groups: Sequence[tuple[Card, ...]], meld_groups: Sequence[tuple[Card, ...]], knocker: int, notes: list[str]
) -> tuple[Meld, ...] | None:
    """The knocker's melds as laid, once the laid-off cards are out of his groups; None when unclear."""
    melds: list[Meld] = []
    for group in meld_groups:
        melds += _melds_in_order(group) or ()
    mixed = [group for group in knocker_groups if _melds_in_order(group) is None and _holds_a_meld(group)]
    if mixed:
        shown = "; ".join(format_cards(group) for group in mixed)
        notes.append(f"seat {knocker} lays {shown} together, a meld with other cards: its melds are not read")
        return None
    if not melds:
        notes.append(f"seat {knocker} shows no group that is a meld: its melds are not read")
        return None
    return tuple(melds)


def _assign_layoffs(
    ways: Sequence[tuple[tuple[int, int], list[_Split]]],
    short: Mapping[int, int],
    knocker: int,
    seats: Sequence[int],
    notes: list[str],
) -> tuple[list[tuple[Card, ...]], dict[int, tuple[Layoff, ...]]] | None:
    """The cards laid off onto the knocker's melds and who laid them: the seats short of cards, in seat order.

    The first way (``_splits``) whose cards the short seats can have laid off in turn (a
    chain needs the card before it); a note names a second legal way as likely.
    """
    start = seats.index(knocker)
    order = [seat for k in range(1, len(seats)) if (seat := seats[(start + k) % len(seats)]) in short]
    legal = []
    for rank, split in ways:
        table = [meld for part in split for meld in _melds_in_order(part.kept) or ()]
        if sum(len(meld.cards) for meld in table) != sum(len(part.kept) for part in split):
            continue  # a group cut too short to stay a meld
        pool = [(card, Meld.of(part.kept)) for part in split for card in part.laid]
        if len(pool) != sum(short.values()):
            continue
        for owners in _owner_choices(len(pool), order, short):
            layoffs = _legal_in_turn(pool, owners, table, order)
            if layoffs is not None:
                legal.append((rank, [part.kept for part in split], layoffs))
        if len(legal) > 1:
            break
    if not legal:
        missing = " and ".join(f"seat {seat} shows {count} too few" for seat, count in short.items())
        notes.append(f"{missing}, but none of the melds seat {knocker} laid ends in cards to lay off: layoffs not read")
        return None
    if len(legal) > 1 and legal[1][0] == legal[0][0]:
        chosen, other = (format_layoffs_by_player(_named(way[2])) for way in legal[:2])
        notes.append(f"the layoffs are read as {chosen}; they may be {other}: check")
    return legal[0][1], legal[0][2]


def _named(layoffs: Mapping[int, Sequence[Layoff]]) -> dict[str, Sequence[Layoff]]:
    return {f"seat {seat}": laid for seat, laid in layoffs.items()}


def _owner_choices(count: int, order: Sequence[int], short: Mapping[int, int]) -> list[tuple[int, ...]]:
    """Every way to give ``count`` laid-off cards to the short seats, each seat as many as it lacks."""
    seats = [seat for seat in order for _ in range(short[seat])]
    return sorted(set(itertools.permutations(seats, count)), key=lambda owners: [order.index(s) for s in owners])


def _legal_in_turn(
    pool: Sequence[tuple[Card, Meld]], owners: Sequence[int], table: Sequence[Meld], order: Sequence[int]
) -> dict[int, tuple[Layoff, ...]] | None:
    """Each seat's layoffs when these owners laid these cards, checked in seat order; None if the table refuses."""
    current = tuple(table)
    layoffs: dict[int, tuple[Layoff, ...]] = {}
    for seat in order:
        laid = [Layoff(card, onto) for (card, onto), owner in zip(pool, owners, strict=True) if owner == seat]
        try:
            result = lay_off_as_given(current, [layoff.card for layoff in laid], laid, player=f"seat {seat}")
        except IllegalLayoffError:
            return None
        layoffs[seat] = result.layoffs
        current = extended_melds(current, result.layoffs)
    return layoffs


def _set_aside(groups: Sequence[LaidGroup], notes: list[str]) -> Card | None:
    """The knocker's discard: the card lying alone, or the lone card lying furthest from the rest."""
    lone = [group for group in groups if len(group.cards) == 1]
    if len(lone) == 1:
        return lone[0].cards[0]
    gaps = sorted(
        ((_gap(group, [other for other in groups if other is not group]), group.cards[0]) for group in lone),
        key=lambda item: -item[0],
    )
    if len(gaps) >= 2 and gaps[0][0] > 0 and gaps[0][0] >= SET_ASIDE * gaps[1][0]:
        return gaps[0][1]
    notes.append("the knocker shows one card more than a hand, but no card lies set aside: the discard is not read")
    return None


def _gap(group: LaidGroup, others: Sequence[LaidGroup]) -> float:
    """The distance from a group's footprint to the nearest other group's (0 where a place is unknown)."""
    distances = []
    for other in others:
        if group.footprint is None or other.footprint is None:
            return 0.0
        across, down = overlap_extent(group.footprint, other.footprint)
        distances.append(max(0.0, -across, -down))
    return min(distances, default=0.0)
