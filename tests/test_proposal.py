"""Before a knock: who may knock, and the one policy for proposing a knock without being asked."""

from __future__ import annotations

import pytest

from scorer.cards import Card, parse_cards
from scorer.proposal import table_status
from scorer.rules import InvalidHandError, Rules

C = Card.parse
ANN = "8C 9C 10C JC 9H 10H JH 2S 2D AC"  # deadwood 5
BOB = "QS QC QH 10S JS 3D 5H 7S AD 7D"  # deadwood 43 before layoffs
MULTI = Rules.preset_named("oklahoma-multi")


def hands(**by_name: str) -> dict[str, list[Card]]:
    return {name: parse_cards(cards) for name, cards in by_name.items()}


def test_exactly_one_player_who_may_knock_is_proposed() -> None:
    status = table_status(Rules(), C("KS"), hands(Ann=ANN, Bob=BOB))
    assert (status.proposed_knocker, status.reason, status.knock_limit) == ("Ann", None, 10)
    assert [status.hands[name].can_knock for name in ("Ann", "Bob")] == [True, False]


@pytest.mark.parametrize(
    ("upcard", "table", "reason"),
    [
        (None, {"Ann": ANN, "Bob": BOB}, "no upcard yet"),
        ("3S", {"Ann": ANN, "Bob": BOB}, "nobody may knock yet"),
        ("KS", {"Ann": ANN, "Bob": "3S 4S 5S 4D 4H 4C 7H 7D 7S KD"}, "Ann and Bob may each knock: say who knocked"),
        ("KS", {"Ann": ANN, "Bob": "QS QC QH"}, "Bob holds 3 cards, not 10"),
        ("KS", {"Ann": ANN, "Bob": ""}, "Bob holds 0 cards, not 10"),
        ("KS", {"Ann": ANN, "Bob": "QS"}, "Bob holds 1 card, not 10"),  # "1 cards" on the page (live probe)
    ],
)
def test_no_knock_is_proposed_unless_the_table_can_be_scored_as_it_lies(
    upcard: str | None, table: dict[str, str], reason: str
) -> None:
    status = table_status(Rules(), None if upcard is None else C(upcard), hands(**table))
    assert (status.proposed_knocker, status.reason) == (None, reason)


ELEVEN_EACH = "Ann and Bob each hold 11 cards: only the knocker holds one more than the 10 dealt"


@pytest.mark.parametrize(
    ("rules", "table", "reason"),
    [
        (Rules(), {"Ann": ANN + " KH", "Bob": "3S 4S 5S 4D 4H 4C 7H 7D 7S KD QD"}, ELEVEN_EACH),  # both under 10
        (Rules(), {"Ann": ANN + " KH", "Bob": BOB + " KD"}, ELEVEN_EACH),  # only Ann under 10
        (
            MULTI,
            {"Ann": "AC 2C 3C 4D 4H 4S 9D 5S", "Bob": "KS QS JS 10H 9H 2D 3S 6S", "Cy": "5C 6C 7C 8D 8H 8S KD 2H"},
            "Ann, Bob and Cy each hold 8 cards: only the knocker holds one more than the 7 dealt",
        ),
    ],
)
def test_more_than_one_hand_a_card_over_the_deal_is_said_to_be_impossible(
    rules: Rules, table: dict[str, str], reason: str
) -> None:
    """Only the player who just drew holds a card more than dealt: the table said "Ann and Bob may each knock: say
    who knocked" for two 11-card hands, or named one of them as of the wrong size."""
    status = table_status(rules, C("KS"), hands(**table))
    assert (status.proposed_knocker, status.reason) == (None, reason)


def test_three_who_may_knock_are_named_as_a_sentence_names_them() -> None:
    table = hands(Ann="AC 2C 3C 4D 4H 4S 9D", Bob="5H 6H 7H 8C 8D 8S 2D", Cy="JC QC KC 10D 10H 10S 3H")
    status = table_status(MULTI, C("KS"), table)
    assert (status.proposed_knocker, status.reason) == (None, "Ann, Bob and Cy may each knock: say who knocked")


def test_an_empty_or_short_hand_never_may_knock() -> None:
    status = table_status(Rules(), C("KS"), hands(Ann="", Bob="AS 2S 3S"))
    assert [(s.can_knock, s.problem) for s in status.hands.values()] == [
        (False, "0 cards: Oklahoma Gin deals 10"),
        (False, "3 cards: Oklahoma Gin deals 10"),
    ]


def test_ten_cards_cannot_knock_in_a_seven_card_game() -> None:
    table = hands(Ann="AC 2C 3C 4D 4H 4S 9D 5S 6S 7S", Bob="KS QS JS 10H 9H 2D 3S", Cy="5C 6C 7C 8D 8H 8S KD")
    status = table_status(MULTI, C("10D"), table)
    problem = "10 cards: Multi-player Oklahoma Gin deals 7 (a knocker holds 8 before the discard)"
    assert status.hands["Ann"].problem == problem
    assert status.hands["Ann"].to_dict()["deadwood_points"] is None and not status.hands["Ann"].can_knock


def test_a_hand_one_card_over_names_its_best_discard() -> None:
    status = table_status(Rules(), C("KS"), hands(Ann=ANN + " KH", Bob=BOB))
    ann = status.hands["Ann"]
    assert (str(ann.discard), ann.deadwood_points, ann.can_knock, status.proposed_knocker) == ("KH", 5, True, "Ann")
    assert ann.to_dict()["discard"] == "KH"


def test_twelve_cards_are_a_problem_not_an_error() -> None:
    status = table_status(Rules(), C("KS"), hands(Ann=ANN + " KH KD", Bob=BOB))
    assert status.hands["Ann"].problem is not None and status.hands["Ann"].arrangement is None


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"Ann": "AS 2S", "Bob": "2S"}, "2S is in both Ann's and Bob's hands"),
        ({"Ann": ANN, "Bob": BOB, "Cy": ""}, "Oklahoma Gin is for 2 players, not 3"),
    ],
)
def test_tables_that_cannot_exist_are_refused(table: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidHandError, match=message):
        table_status(Rules(), C("KS"), hands(**table))


def test_a_table_is_read_from_card_text_as_a_round_is_scored() -> None:
    """``score_round`` takes hands and the upcard as card text: ``table_status`` read "8C 9C" as the cards 8, C,
    9, C ("holds C more than once") and stopped on an upcard "KS" with an AttributeError."""
    status = table_status(Rules(), "KS", {"Ann": ANN, "Bob": BOB})
    assert (status.upcard, status.proposed_knocker, status.hands["Ann"].deadwood_points) == (C("KS"), "Ann", 5)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"Ann": None, "Bob": BOB}, "Ann's hand must be cards"),
        ({1: ANN, "Bob": BOB}, "a player's name is text, not 1"),
        ([("Ann", ANN), ("Bob", BOB)], "hands must map each player's name to their cards"),
    ],
)
def test_hands_that_are_not_cards_are_refused_by_name(table: object, message: str) -> None:
    with pytest.raises(InvalidHandError, match=message):
        table_status(Rules(), C("KS"), table)  # type: ignore[arg-type]


def test_nothing_is_proposed_once_the_match_is_won() -> None:
    status = table_status(Rules(), C("KS"), hands(Ann=ANN, Bob=BOB), winner="Bob")
    assert (status.proposed_knocker, status.reason, status.hands["Ann"].can_knock) == (
        None,
        "the match is over: Bob won",
        True,
    )
