"""Layoffs: chains at both ends, a set's 4th card, layoffs chosen jointly with the opponent's melds."""

import pytest

from scorer.cards import InvalidCardError, parse_cards
from scorer.layoffs import Layoff, resolve_knock
from scorer.melds import Meld


def melds(*texts: str) -> list[Meld]:
    return [Meld.parse(text) for text in texts]


def laid(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(layoff.card) for layoff in result.layoffs]


# knocker's melds, opponent's hand -> cards laid off, deadwood left
CASES = [
    pytest.param(["5S 6S 7S"], "3S 4S 8S 9S KD", ["8S", "9S", "4S", "3S"], 10, id="chains at both ends"),
    pytest.param(["5S 6S 7S"], "9S 10D", [], 19, id="a chain cannot skip a card"),
    pytest.param(["7C 7D 7H"], "7S KD", ["7S"], 10, id="the 4th card of a set"),
    pytest.param(["7C 7D 7H 7S"], "6S 8S", [], 14, id="a set of four takes nothing"),
    pytest.param(["8C 8D 8H"], "8S 9S", ["8S"], 9, id="nothing chains onto a card laid on a set"),
    pytest.param(
        ["8C 8D 8H", "5S 6S 7S"], "8S 9S", ["8S", "9S"], 0, id="a card fitting two melds goes where it chains"
    ),
    pytest.param(["JS QS KS"], "AS 10S", ["10S"], 1, id="ace is low: nothing after the king"),
    pytest.param(["2S 3S 4S"], "AS KS", ["AS"], 10, id="ace below a two"),
    pytest.param(["5S 6S 7S"], "8S 8C 8D", [], 0, id="keeping an own set beats laying off"),
    pytest.param(["3H 4H 5H", "9H 10H JH"], "6H 7H 8H", [], 0, id="a run of own cards between two runs"),
    pytest.param(["3H 4H 5H", "9H 10H JH"], "6H 7H 8H 8C 8D", ["6H", "7H"], 0, id="break an own run to lay off"),
    pytest.param(
        ["8C 9C 10C JC", "9H 10H JH"],
        "QS QC QH 10S JS 3D 5H 7S AD 7D",
        ["QC", "QH"],
        23,
        id="laying off beats melding the queens (43)",
    ),
]


@pytest.mark.parametrize(("knocker", "hand", "expected_laid", "deadwood"), CASES)
def test_layoff_cases(knocker: list[str], hand: str, expected_laid: list[str], deadwood: int) -> None:
    result = resolve_knock(melds(*knocker), parse_cards(hand))
    assert result.deadwood_points == deadwood
    assert sorted(laid(result)) == sorted(expected_laid)
    shown = sorted(
        [c for m in result.melds for c in m.cards] + [x.card for x in result.layoffs] + list(result.deadwood)
    )
    assert shown == sorted(parse_cards(hand))


def test_no_layoff_onto_gin() -> None:
    result = resolve_knock(melds("5S 6S 7S"), parse_cards("8S 9S KD"), allow_layoffs=False)
    assert (laid(result), result.deadwood_points) == ([], 27)


def test_each_layoff_names_the_meld_as_it_lay_before_that_card() -> None:
    result = resolve_knock(melds("5S 6S 7S"), parse_cards("8S 9S 4S"))
    assert result.layoffs == (
        Layoff(parse_cards("8S")[0], Meld.parse("5S 6S 7S")),
        Layoff(parse_cards("9S")[0], Meld.parse("5S 6S 7S 8S")),
        Layoff(parse_cards("4S")[0], Meld.parse("5S 6S 7S 8S 9S")),
    )
    assert result.to_dict()["layoffs"][1] == {"card": "9S", "onto": ["5S", "6S", "7S", "8S"]}


def test_greedy_melds_first_would_be_wrong_here() -> None:
    # Melding 10-J-Q of spades uses the QS; the queens set would leave 43.
    result = resolve_knock(melds("8C 9C 10C JC", "9H 10H JH"), parse_cards("QS QC QH 10S JS 3D 5H 7S AD 7D"))
    assert [str(m) for m in result.melds] == ["10S JS QS"]


def test_a_card_in_both_the_knockers_melds_and_the_opponents_hand_is_refused() -> None:
    with pytest.raises(InvalidCardError, match="6S in both"):
        resolve_knock(melds("5S 6S 7S"), parse_cards("6S 9S"))
