"""Cases from an audit of the scoring against the rules page (shared/rules/oklahoma-gin.md)."""

from __future__ import annotations

import pytest

from scorer.cards import Card, parse_cards
from scorer.match import Match
from scorer.proposal import table_status
from scorer.rules import InvalidHandError, InvalidRulesError, Rules

C = Card.parse
ANN = parse_cards("8C 9C 10C JC 9H 10H JH 2S 2D AC")  # deadwood 5
BOB = parse_cards("QS QC QH 10S JS 3D 5H 7S AD 7D")  # 23 after laying off QC and QH: Ann wins 18


def test_a_void_round_does_not_count_towards_the_rounds_limit() -> None:
    """A draw is void and dealt again (rules page, "Draw"): only the rounds scored count as agreed rounds."""
    match = Match(["Ann", "Bob"], Rules(rounds_limit=2), dealer="Bob")
    match.record_draw()
    match.record_round(C("KH"), {"Ann": ANN, "Bob": BOB}, "Ann")
    assert (match.finished, match.totals) == (False, {"Ann": 18, "Bob": 0})
    match.record_round(C("KH"), {"Ann": ANN, "Bob": BOB}, "Ann")
    assert (match.winner, match.totals) == ("Ann", {"Ann": 36, "Bob": 0})


def test_draws_are_not_agreed_rounds_in_a_multi_player_match() -> None:
    match = Match(["Ann", "Bob", "Cat"], Rules.preset_named("oklahoma-multi", rounds_limit=2), dealer="Cat")
    match.record_draw()
    match.record_draw()
    assert not match.finished
    hands = {
        "Ann": parse_cards("2C 3C 4C 5D 5H 5S 5C"),
        "Bob": parse_cards("9D 9H 9S 2D 3H 4S KD"),
        "Cat": parse_cards("6C 7D 8H JH QH KH AS"),
    }
    match.record_round(C("KS"), hands, "Ann")
    assert not match.finished
    match.record_round(C("KS"), hands, "Ann")
    assert (match.winner, match.totals) == ("Ann", {"Ann": 50, "Bob": -76, "Cat": -88})


def test_a_card_twice_in_one_hand_is_named_as_such_before_a_knock() -> None:
    """A repeated card in one hand is not "in both Ann's and Ann's hands": the message names the one hand."""
    repeated = [*ANN[:-1], C("8C")]
    with pytest.raises(InvalidHandError, match=r"^Ann's hand holds 8C more than once"):
        table_status(Rules(), C("KH"), {"Ann": repeated, "Bob": BOB})


def test_rules_named_by_a_preset_alone_take_that_presets_options() -> None:
    """``{"preset": "gin-rummy"}`` took the plain defaults (the upcard's knock limit) beside Gin Rummy's name."""
    assert Rules.from_dict({"preset": "gin-rummy"}) == Rules.preset_named("gin-rummy")
    assert Rules.from_dict({"preset": "gin-rummy", "gin_bonus": 20}).gin_bonus == 20
    with pytest.raises(InvalidRulesError, match="unknown rules preset"):
        Rules.from_dict({"preset": ["gin-rummy"]})
    with pytest.raises(InvalidRulesError, match="unknown rules preset"):
        Rules.from_dict({"preset": "canasta"})
