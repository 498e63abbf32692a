"""Best melds: parametrized hands -> melds and deadwood, ties, 11-card discards."""

import pytest

from scorer.cards import InvalidCardError, parse_cards
from scorer.deadwood import all_best_arrangements, best_arrangement, best_discard, deadwood_points
from scorer.melds import Meld, cards_mask

# hand -> (melds, deadwood points); the melds of a unique best arrangement, or None when ties exist.
HANDS = [
    # OpenSpiel's "best meld group 4s4d4h, 5s5c5d, 2c3c4c with 3 deadwood" style hand.
    ("4S 4D 4H 5S 5C 5D 2C 3C 4C 3H", ["2C 3C 4C", "4D 4H 4S", "5C 5D 5S"], 3),
    # OpenSpiel: laying 8s8c8d blocks the 6s and 7s (26 points); the two runs leave 8d (8).
    ("6S 7S 8S 6C 7C 8C 8D", ["6C 7C 8C", "6S 7S 8S"], 8),
    ("AS 2S 3S 4S KD", ["AS 2S 3S 4S"], 10),
    ("", [], 0),
    ("KS", [], 10),
    ("AC 2D 3H 4S 5C 6D 7H 8S 9C 10D", [], 55),
    ("QS KS AS", [], 21),
    ("7C 7D 7H 7S 8S 9S", ["7C 7D 7H", "7S 8S 9S"], 0),
    ("7C 7D 7H 7S 8S", ["7C 7D 7H 7S"], 8),
    ("AH 2H 3H 4H 5H 6H 7H 8H 9H 10H", ["AH 2H 3H 4H 5H 6H 7H 8H 9H 10H"], 0),
    ("JC QC KC JD QD KD JH QH KH 2S", None, 2),
    ("3C 4C 5C 6C 6D 6H 7H 8H", ["3C 4C 5C 6C", "6H 7H 8H"], 6),  # the 6s split between two runs
    ("9S 10S JS QS KS 9C 9D 9H", None, 0),  # 9S in the set or in the run
]


@pytest.mark.parametrize(("hand", "melds", "points"), HANDS, ids=[hand or "empty" for hand, _, _ in HANDS])
def test_best_arrangement_table(hand: str, melds: list[str] | None, points: int) -> None:
    cards = parse_cards(hand)
    arrangement = best_arrangement(cards)
    assert arrangement.points == points == deadwood_points(cards_mask(cards))
    if melds is not None:
        assert sorted(str(meld) for meld in arrangement.melds) == sorted(melds)
        assert len(all_best_arrangements(cards)) == 1
    shown = sorted([card for meld in arrangement.melds for card in meld.cards] + list(arrangement.deadwood))
    assert shown == sorted(cards)
    assert sum(card.value for card in arrangement.deadwood) == points


def test_all_best_arrangements_lists_every_tie_in_a_fixed_order() -> None:
    cards = parse_cards("3C 3D 3H 4C 4D 4H 5C 5D 5H")
    arrangements = all_best_arrangements(cards)
    assert [[str(m) for m in a.melds] for a in arrangements] == [
        ["3C 4C 5C", "3D 4D 5D", "3H 4H 5H"],
        ["3C 3D 3H", "4C 4D 4H", "5C 5D 5H"],
    ]
    assert best_arrangement(reversed(cards)) == arrangements[0] == best_arrangement(cards)


def test_a_long_run_is_one_meld_not_two() -> None:
    assert best_arrangement(parse_cards("AS 2S 3S 4S 5S 6S")).melds == (Meld.parse("AS 2S 3S 4S 5S 6S"),)


def test_ties_between_sets_and_runs_are_all_listed() -> None:
    # The 9S completes either the four 9s or the run 9S..KS: both leave no deadwood.
    cards = parse_cards("9S 10S JS QS KS 9C 9D 9H")
    arrangements = all_best_arrangements(cards)
    assert [{str(m) for m in a.melds} for a in arrangements] == [
        {"9C 9D 9H", "9S 10S JS QS KS"},
        {"9C 9D 9H 9S", "10S JS QS KS"},
    ]
    assert arrangements[0] == best_arrangement(cards)


@pytest.mark.parametrize(
    ("hand", "discard", "points"),
    [
        ("AS 2S 3S 4S 5S 6S 7S 8S 9S 10S KD", "KD", 0),
        ("7C 7D 7H 8H 9H 2S 3S 4S KC QD 5D", "QD", 29),  # QD or KC: the lower deadwood key keeps KC
        ("AC 2C 3C 4C 5D 6D 7D 8D 9H 9S 9C", "4C", 0),
    ],
)
def test_best_discard_from_eleven_cards(hand: str, discard: str, points: int) -> None:
    card, arrangement = best_discard(parse_cards(hand))
    assert (str(card), arrangement.points) == (discard, points)
    assert card not in arrangement.deadwood


def test_best_discard_from_eight_cards_for_a_seven_card_game() -> None:
    card, arrangement = best_discard(parse_cards("AS 2S 3S 7H 7D 7C KD 2H"))
    assert (str(card), arrangement.points) == ("KD", 2)


def test_best_discard_needs_1_to_11_cards() -> None:
    with pytest.raises(InvalidCardError, match="from 1 to 11 cards, not 12"):
        best_discard(parse_cards("AS 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS"))
    with pytest.raises(InvalidCardError, match="not 0"):
        best_discard([])


def test_more_than_eleven_cards_or_a_repeat_is_refused() -> None:
    with pytest.raises(InvalidCardError, match="at most 11 cards"):
        best_arrangement(parse_cards("AS 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS"))
    with pytest.raises(InvalidCardError, match="AS more than once"):
        best_arrangement([*parse_cards("AS 2S"), *parse_cards("AS")])
