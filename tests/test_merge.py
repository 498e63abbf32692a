"""One deck, one card: corner indices of the same card merge; impossible repeats become conflicts."""

from __future__ import annotations

import math

import pytest

from scorer.cards import Card
from scorer.vision.merge import merge_corners, same_card_distance
from scorer.vision.types import CornerDetection


def corner(card: str, x: float, y: float, conf: float = 0.9, size: tuple[float, float] = (12, 26)) -> CornerDetection:
    return CornerDetection(Card.parse(card), (x, y, x + size[0], y + size[1]), conf)


def test_two_corners_of_one_card_become_one_card_with_union_box_and_combined_score() -> None:
    # indices 26 px tall and 164 px apart: about 6 index sides, as on a card seen at a tilt
    cards, conflicts = merge_corners([corner("QH", 100, 100, 0.7), corner("QH", 200, 230, 0.95)])
    assert conflicts == []
    assert len(cards) == 1
    assert cards[0].card == Card.parse("QH")
    assert cards[0].box == (100, 100, 212, 256)
    assert cards[0].confidence == pytest.approx(1 - 0.3 * 0.05)  # either corner right is enough


def test_same_card_far_apart_keeps_the_better_one_and_reports_it() -> None:
    cards, conflicts = merge_corners([corner("QH", 10, 10, 0.6), corner("QH", 1000, 600, 0.8)])
    assert [(str(c.card), c.box[0]) for c in cards] == [("QH", 1000)]
    assert [(str(c.card), c.reason) for c in conflicts] == [("QH", "QH seen twice, far apart")]


def test_a_sighting_too_weak_to_be_a_card_is_no_second_sighting() -> None:
    sure, faint = corner("QH", 10, 10, 0.8), corner("QH", 1000, 600, 0.3)
    cards, conflicts = merge_corners([sure, faint], min_confidence=0.4)
    assert [(str(c.card), c.box[0]) for c in cards] == [("QH", 10)] and conflicts == []
    # two faint corners of one card add up to a card (0.51), and so to a conflict
    cards, conflicts = merge_corners([sure, faint, corner("QH", 1060, 680, 0.3)], min_confidence=0.4)
    assert [c.reason for c in conflicts] == ["QH seen twice, far apart"]
    assert merge_corners([faint], min_confidence=0.4) == ([], [])


def test_three_far_copies_are_counted() -> None:
    _, conflicts = merge_corners([corner("2C", 0, 0), corner("2C", 500, 0), corner("2C", 1000, 0)])
    assert [c.reason for c in conflicts] == ["2C seen 3 times, far apart"]


def test_a_poker_card_shows_four_indices_and_is_one_card() -> None:
    cards, conflicts = merge_corners(
        [corner("7S", 0, 0), corner("7S", 60, 0), corner("7S", 0, 80), corner("7S", 60, 80)]
    )
    assert len(cards) == 1 and conflicts == []


def test_more_corners_than_a_card_prints_is_a_conflict() -> None:
    five = [corner("7S", 0, 0), corner("7S", 60, 0), corner("7S", 0, 80), corner("7S", 60, 80), corner("7S", 30, 40)]
    cards, conflicts = merge_corners(five)
    assert len(cards) == 1
    assert [c.reason for c in conflicts] == ["7S: 5 corner indices close together, a card prints 4"]


def test_different_cards_never_merge_and_order_is_by_confidence() -> None:
    cards, conflicts = merge_corners([corner("AS", 0, 0, 0.5), corner("AH", 5, 5, 0.9), corner("KD", 300, 0, 0.7)])
    assert [str(c.card) for c in cards] == ["AH", "KD", "AS"]
    assert conflicts == []


def test_no_corners_no_cards() -> None:
    assert merge_corners([]) == ([], [])


@pytest.mark.parametrize(("index_height", "expected"), [(26, 196.56), (13, 98.28)])
def test_same_card_distance_scales_with_the_index(index_height: float, expected: float) -> None:
    box = (0.0, 0.0, 10.0, index_height)
    assert same_card_distance(box, box) == pytest.approx(expected)


def test_a_chain_of_near_corners_is_one_group() -> None:
    # single linkage: a - b near, b - c near, a - c far: one card reported, and a conflict
    cards, conflicts = merge_corners([corner("9D", 0, 0), corner("9D", 150, 0), corner("9D", 300, 0)])
    assert len(cards) == 1
    assert [c.reason for c in conflicts] == ["9D: 3 corner indices spread wider than one card"]


def small_index_card(card: str, x: float, apart: float, conf: float = 0.9) -> list[CornerDetection]:
    """A card's two opposite corner indices (12 x 26 px) whose centres lie ``apart`` index sides (of 26 px) apart,
    along a card's diagonal (63 x 88)."""
    step = apart * 26 / math.hypot(63, 88)
    return [corner(card, x, 0, conf), corner(card, x + 63 * step, 88 * step, conf)]


def test_cards_of_a_small_index_deck_seen_alike_are_one_card_each() -> None:
    # 9 index sides apart: beyond same_card_distance (7.56), as a deck with small indices prints them
    seen = [*small_index_card("JD", 0, 9.0), *small_index_card("9C", 400, 8.4), *small_index_card("QD", 800, 8.8)]
    cards, conflicts = merge_corners(seen)
    assert conflicts == []
    assert sorted(str(c.card) for c in cards) == ["9C", "JD", "QD"]
    assert all(c.confidence == pytest.approx(0.99) for c in cards)  # each seen at two corners


def test_one_card_so_far_apart_is_still_a_conflict() -> None:
    # no other card of the picture vouches for a card this size: a misreading is as likely
    _, conflicts = merge_corners(small_index_card("JD", 0, 9.0))
    assert [c.reason for c in conflicts] == ["JD seen twice, far apart"]


@pytest.mark.parametrize(("first", "second"), [(8.0, 11.0), (13.0, 13.2)])
def test_cards_spread_unalike_or_further_than_any_card_stay_conflicts(first: float, second: float) -> None:
    _, conflicts = merge_corners([*small_index_card("JD", 0, first), *small_index_card("9C", 600, second)])
    assert sorted(c.reason for c in conflicts) == ["9C seen twice, far apart", "JD seen twice, far apart"]


def test_four_small_indices_of_a_poker_card_are_one_card() -> None:
    def four(card: str, x: float) -> list[CornerDetection]:  # indices 26 px tall at the corners of a 170 x 240 card
        return [corner(card, x + dx, dy) for dx in (0, 170) for dy in (0, 240)]

    cards, conflicts = merge_corners([*four("7S", 0), *four("8H", 500)])
    assert len(cards) == 2 and conflicts == []
    _, alone = merge_corners(four("7S", 0))
    assert [c.reason for c in alone] == ["7S seen twice, far apart"]  # two pairs of corners, as two cards
