"""One test per sentence of the rules page (shared/rules/oklahoma-gin.md), then the options."""

from collections.abc import Mapping

import pytest

from scorer.cards import DECK, Card, InvalidCardError, parse_cards
from scorer.deadwood import best_arrangement
from scorer.melds import Meld
from scorer.rules import IllegalKnockError, InvalidHandError, InvalidRulesError, Rules, score_round

C = Card.parse
ANN = "8C 9C 10C JC 9H 10H JH 2S 2D AC"  # 5 deadwood
BOB = "QS QC QH 10S JS 3D 5H 7S AD 7D"  # 43 alone, 23 after laying off QC and QH
GIN = "AS 2S 3S 4D 4H 4C 7C 8C 9C 10C"


def two(ann: str, bob: str) -> dict[str, list[Card]]:
    return {"Ann": parse_cards(ann), "Bob": parse_cards(bob)}


def scored(ann: str, bob: str, upcard: str = "KD", rules: Rules | None = None, **kwargs):  # type: ignore[no-untyped-def]
    return score_round(rules or Rules(), C(upcard), two(ann, bob), knocker="Ann", **kwargs)


# --- Cards


def test_one_standard_52_card_deck_no_jokers() -> None:
    assert len(set(DECK)) == 52
    with pytest.raises(InvalidCardError):
        C("joker")


def test_ace_is_always_low_a23_is_a_run_qka_is_not() -> None:
    assert best_arrangement(parse_cards("AS 2S 3S")).points == 0
    assert best_arrangement(parse_cards("QS KS AS")).points == 21


def test_values_ace_1_pips_face_value_jqk_10() -> None:
    assert best_arrangement(parse_cards("AC 5D 10H JS QD KH")).points == 1 + 5 + 10 + 30


# --- Melds


def test_a_set_is_3_or_4_cards_of_one_rank() -> None:
    assert best_arrangement(parse_cards("7C 7D 7H")).points == 0
    assert best_arrangement(parse_cards("7C 7D 7H 7S")).points == 0
    assert best_arrangement(parse_cards("7C 7D")).points == 14


def test_a_run_is_3_or_more_consecutive_cards_of_one_suit() -> None:
    assert best_arrangement(parse_cards("4D 5D 6D 7D 8D")).points == 0
    assert best_arrangement(parse_cards("4D 5D 6H")).points == 15


def test_a_card_belongs_to_at_most_one_meld() -> None:
    # 7S cannot serve both the 7s and the 7-8-9 of spades.
    arrangement = best_arrangement(parse_cards("7C 7D 7S 8S 9S"))
    assert arrangement.points == 14


def test_deadwood_is_the_cards_in_no_meld_its_count_the_sum_of_their_values() -> None:
    arrangement = best_arrangement(parse_cards("AS 2S 3S KD 4H"))
    assert (arrangement.deadwood, arrangement.points) == ((C("KD"), C("4H")), 14)


def test_melds_are_chosen_to_minimise_deadwood() -> None:
    # Laying 8S 8C 8D would leave the sixes and sevens (26); the two runs leave 8D.
    assert best_arrangement(parse_cards("6S 7S 8S 6C 7C 8C 8D")).points == 8


# --- Deal and turns (first dealer and winner deals: see test_match.py)


def test_ten_cards_each_for_two_players() -> None:
    assert Rules().hand_size(2) == 10
    with pytest.raises(InvalidHandError, match="Bob holds 9 cards; Oklahoma Gin needs 10"):
        score_round(Rules(), C("KD"), {"Ann": parse_cards(ANN), "Bob": parse_cards(BOB)[:9]}, "Ann")


def test_the_upcard_may_be_in_a_hand_a_player_may_take_it() -> None:
    result = scored(ANN, BOB, upcard="QS")  # Bob took the QS upcard
    assert result.points == {"Ann": 18, "Bob": 0}


def test_a_turn_draw_then_discard_the_knocker_may_be_given_eleven_cards() -> None:
    result = scored(ANN + " KH", BOB)
    assert (result.discard, result.points["Ann"]) == (C("KH"), 18)


# --- Knocking


def test_knock_only_if_deadwood_after_the_discard_is_at_most_the_knock_limit() -> None:
    with pytest.raises(
        IllegalKnockError, match=r"illegal knock: Ann's deadwood is 5, over the knock limit 4 set by upcard 4D"
    ):
        scored(ANN, BOB, upcard="4D")
    assert scored(ANN, BOB, upcard="5D").outcome == "knock"


@pytest.mark.parametrize(("upcard", "limit"), [("10H", 10), ("JS", 10), ("QC", 10), ("KD", 10), ("6C", 6), ("AH", 1)])
def test_oklahoma_knock_limit_is_the_upcards_value(upcard: str, limit: int) -> None:
    assert Rules().knock_limit_for(C(upcard)) == limit


def test_plain_gin_rummy_knock_limit_is_always_10() -> None:
    rules = Rules.preset_named("gin-rummy")
    assert {rules.knock_limit_for(card) for card in DECK} == {10}
    result = scored("8C 9C 10C JC 9H 10H JH 2S 6D AC", BOB, upcard="2H", rules=rules)  # 9 deadwood
    assert result.knock_limit == 10 and result.outcome == "knock"
    with pytest.raises(IllegalKnockError, match="over the knock limit 10"):
        scored("8C 9C 10C JC 9H 10H JH 2S 6D 3C", BOB, rules=rules)


def test_the_knocker_spreads_melds_and_deadwood_the_opponent_spreads_theirs() -> None:
    result = scored(ANN, BOB)
    ann, bob = result.hands["Ann"], result.hands["Bob"]
    assert [str(m) for m in ann.melds] == ["8C 9C 10C JC", "9H 10H JH"]
    assert ann.deadwood_points == 5
    assert sorted(ann.cards) == sorted(parse_cards(ANN)) and sorted(bob.cards) == sorted(parse_cards(BOB))


def test_layoffs_4th_card_of_a_set_and_runs_at_either_end_also_by_chains() -> None:
    result = scored("7C 7D 7H 4S 5S 6S AC AD 2H 3C", "7S 3S 2S 8S KD QD JD 2C 3H 4H", upcard="KH")
    assert sorted(str(x.card) for x in result.hands["Bob"].layoffs) == ["2S", "3S", "7S", "8S"]


def test_no_layoffs_onto_a_gin_hand() -> None:
    result = scored(GIN, "4S 5S KD QD JH 9H 8H 2H 2D 6C")
    assert result.hands["Bob"].layoffs == ()
    assert result.hands["Bob"].deadwood_points == 66


def test_the_scorer_chooses_layoffs_that_minimise_the_opponents_deadwood() -> None:
    assert scored(ANN, BOB).hands["Bob"].deadwood_points == 23  # not 43 with the queens melded


# --- Scoring a round (two players)


def test_knock_win_knocker_scores_the_difference() -> None:
    result = scored(ANN, BOB)
    assert (result.outcome, result.winner, result.points) == ("knock", "Ann", {"Ann": 18, "Bob": 0})


def test_undercut_opponent_scores_bonus_plus_difference() -> None:
    result = scored(ANN, "QS QC QH 10S JS 3D AH 7S 7C 7D", upcard="9S")  # Bob: QC, QH laid off, 3D + AH = 4
    assert (result.outcome, result.winner, result.points) == ("undercut", "Bob", {"Ann": 0, "Bob": 10 + 1})


def test_a_tie_is_an_undercut() -> None:
    result = scored(ANN, "QS QC QH 10S JS 3D 2H 7S 7C 7D")  # Bob 5, Ann 5
    assert (result.outcome, result.points) == ("undercut", {"Ann": 0, "Bob": 10})


def test_undercut_bonus_is_an_option() -> None:
    result = scored(ANN, "QS QC QH 10S JS 3D 2H 7S 7C 7D", rules=Rules(undercut_bonus=25))
    assert result.points["Bob"] == 25


def test_gin_knocker_scores_gin_bonus_plus_opponents_deadwood() -> None:
    result = scored(GIN, "4S 5S KD QD JH 9H 8H 2H 2D 6C")
    assert (result.outcome, result.points) == ("gin", {"Ann": 25 + 66, "Bob": 0})


def test_gin_opponent_scores_nothing_even_with_zero_deadwood() -> None:
    result = scored(GIN, "JH QH KH 5D 6D 7D 8D 6H 6C 6S")
    assert result.hands["Bob"].deadwood_points == 0
    assert result.points == {"Ann": 25, "Bob": 0}


def test_gin_bonus_20_option() -> None:
    assert scored(GIN, "JH QH KH 5D 6D 7D 6H 6C 6S 3D", rules=Rules(gin_bonus=20)).points["Ann"] == 20 + 3


# Draw rounds: test_match.py::test_draw_is_void_and_the_same_dealer_deals_again
# The match to 100: test_match.py


# --- Multi-player Oklahoma Gin

MULTI = Rules.preset_named("oklahoma-multi")


def three(ann: str, bob: str, cat: str) -> dict[str, list[Card]]:
    return {"Ann": parse_cards(ann), "Bob": parse_cards(bob), "Cat": parse_cards(cat)}


def test_multi_two_players_get_10_cards_three_or_four_get_7() -> None:
    assert [MULTI.hand_size(n) for n in (2, 3, 4)] == [10, 7, 7]
    with pytest.raises(InvalidHandError, match="Multi-player Oklahoma Gin is for 2 to 4 players, not 5"):
        MULTI.hand_size(5)
    with pytest.raises(InvalidHandError, match=r"^Oklahoma Gin is for 2 players, not 3: choose Multi-player Oklahoma"):
        Rules().hand_size(3)


def test_multi_gin_winner_25_others_lose_twice_their_deadwood_after_own_melds_no_layoffs() -> None:
    hands = three("2C 3C 4C 5D 5H 5S 5C", "9D 9H 9S 2D 3H 4S KD", "6C 7D 8H JH QH KH AS")
    result = score_round(MULTI, C("KS"), hands, "Ann")
    assert result.outcome == "gin"
    assert result.points == {"Ann": 25, "Bob": -2 * 19, "Cat": -2 * 22}


def test_multi_knock_winner_10_others_lose_deadwood_minus_winners_after_layoffs() -> None:
    # Bob (Ann's left) lays 5C onto 2-3-4C; Cat then chains 6C 7C onto it.
    hands = three("2C 3C 4C 5D 5H 5S AD", "5C 9D 9H 10S JS 2D 3H", "6C 7C 8H 8D 8S QC QD")
    result = score_round(MULTI, C("KH"), hands, "Ann")
    assert result.outcome == "knock"
    assert [str(x.card) for x in result.hands["Cat"].layoffs] == ["6C", "7C"]
    assert result.points == {"Ann": 10, "Bob": -(43 - 1), "Cat": -(20 - 1)}


def test_multi_undercut_lowest_deadwood_wins_20_everyone_else_loses_the_difference() -> None:
    hands = three("2C 3C 4C 5D 5H 5S 3D", "9D 9H 9S 2D 3H 4S AH", "6C 7C 8C 10H JH QH AS")
    result = score_round(MULTI, C("KH"), hands, "Ann")  # Ann 3, Bob 10, Cat 1
    assert (result.outcome, result.winner) == ("undercut", "Cat")
    assert result.points == {"Ann": -(3 - 1), "Bob": -(10 - 1), "Cat": 20}


def test_multi_undercut_ties_go_to_the_player_nearest_the_layer_downs_left() -> None:
    ann, bob, cat = (
        parse_cards("2C 3C 4C 5D 5H 5S AD"),
        parse_cards("9D 9H 9S 2D 3H 4S AH"),
        parse_cards("6C 7C 8C 10H JH QH AS"),
    )
    # Bob knocks with 10; Ann and Cat tie with 1. Hands are in seating order: the next one sits at the left.
    cat_left = score_round(MULTI, C("KH"), {"Ann": ann, "Bob": bob, "Cat": cat}, "Bob")
    ann_left = score_round(MULTI, C("KH"), {"Cat": cat, "Bob": bob, "Ann": ann}, "Bob")
    assert (cat_left.outcome, cat_left.winner, ann_left.winner) == ("undercut", "Cat", "Ann")
    assert cat_left.points == {"Ann": 0, "Bob": -(10 - 1), "Cat": 20}


# --- Published extras, off by default


def test_extras_are_off_by_default() -> None:
    rules = Rules()
    assert not (rules.ace_upcard_gin_only or rules.spade_doubles or rules.shutout_doubles)
    assert rules.box_bonus == rules.game_bonus == 0


def test_an_ace_upcard_means_only_gin_may_end_the_round() -> None:
    rules = Rules(ace_upcard_gin_only=True)
    assert rules.knock_limit_for(C("AH")) == 0
    refusal = r"deadwood is 5, over the knock limit 0 with ace upcard AH \(only gin ends the round\)"
    with pytest.raises(IllegalKnockError, match=refusal):
        scored("8C 9C 10C JC 9H 10H JH 2S 2D AC", BOB, upcard="AH", rules=rules)
    assert scored(GIN, BOB, upcard="AH", rules=rules).outcome == "gin"


def test_a_spade_upcard_doubles_the_rounds_score() -> None:
    rules = Rules(spade_doubles=True)
    result = scored(ANN, BOB, upcard="KS", rules=rules)
    assert (result.doubled, result.points["Ann"]) == (True, 36)
    assert scored(ANN, BOB, upcard="KH", rules=rules).points["Ann"] == 18


# Box bonus, game bonus and shutout doubling are match-end bonuses: test_match.py


# --- The knocker's choice and bad input


def test_the_knocker_lays_sets_rather_than_runs_to_avoid_an_undercut() -> None:
    # 9S in the run 9S-QS would let Bob lay off 8S and KS (undercut); in the four 9s only KS fits.
    result = scored("9C 9D 9H 9S 10S JS QS 2C 3D AH", "8S KS 2H 3H 4H 5H 6C 6D 6H 5C")
    assert {str(m) for m in result.hands["Ann"].melds} == {"9C 9D 9H 9S", "10S JS QS"}
    assert (result.outcome, result.points) == ("knock", {"Ann": 13 - 6, "Bob": 0})


def test_the_knockers_melds_as_laid_are_used_when_given() -> None:
    melds = [Meld.parse("9C 9D 9H"), Meld.parse("9S 10S JS QS")]
    result = scored("9C 9D 9H 9S 10S JS QS 2C 3D AH", "8S KS 2H 3H 4H 5H 6C 6D 6H 5C", knocker_melds=melds)
    assert (result.outcome, result.points) == ("undercut", {"Ann": 0, "Bob": 10 + 1})


def test_knocker_melds_must_come_from_the_knockers_hand() -> None:
    with pytest.raises(InvalidHandError, match="Ann's meld 5S 6S 7S uses 5S 6S 7S, not in Ann's hand"):
        scored(ANN, BOB, knocker_melds=[Meld.parse("5S 6S 7S")])


@pytest.mark.parametrize(
    ("hands", "message"),
    [
        ({"Ann": ANN, "Bob": BOB.replace("QH", "10C")}, "10C is in both Ann's and Bob's hands"),
        ({"Ann": ANN + " KH KS", "Bob": BOB}, "Ann holds 12 cards; Oklahoma Gin needs 10 after the knocker's discard"),
        ({"Ann": ANN}, "Oklahoma Gin is for 2 players, not 1"),
        ({"Zed": ANN, "Bob": BOB}, "knocker must be one of Zed, Bob; got 'Ann'"),
    ],
)
def test_bad_hands_are_reported_by_name(hands: Mapping[str, str], message: str) -> None:
    with pytest.raises(InvalidHandError, match=message):
        score_round(Rules(), C("KD"), {name: parse_cards(cards) for name, cards in hands.items()}, "Ann")


# --- Rules options


def test_presets_and_options() -> None:
    assert Rules.preset_named("oklahoma") == Rules()
    assert Rules.preset_named("gin-rummy", gin_bonus=20).gin_bonus == 20
    assert Rules.preset_named("oklahoma-multi").max_players == 4
    with pytest.raises(ValueError, match="unknown rules preset 'hollywood'"):
        Rules.preset_named("hollywood")
    with pytest.raises(ValueError, match="unknown rules option 'big_gin'"):
        Rules.preset_named("oklahoma", big_gin=31)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"knock_limit": 11}, "knock_limit must be 'upcard' or a whole number 0-10"),
        ({"target": 0}, "target must be a whole number 1-10000"),
        ({"gin_bonus": 10**4299}, r"gin_bonus must be a whole number 0-1000, not 1000+\.\.\.0+$"),  # not 4,300 digits
        ({"penalty_gin_multiplier": 11}, "penalty_gin_multiplier must be a whole number 0-10"),
        ({"rounds_limit": 1001}, "rounds_limit must be a whole number 1-1000"),
        ({"target_rule": "=>"}, "target_rule must be '>=' or '>'"),
        ({"undercut_bonus": -1}, "undercut_bonus must be"),
        ({"spade_doubles": "yes"}, "spade_doubles must be true or false"),
        ({"max_players": 3}, "standard scoring is for 2 players"),
    ],
)
def test_option_values_out_of_range_are_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Rules(**options)  # type: ignore[arg-type]


def test_rules_json_round_trip() -> None:
    rules = Rules.preset_named("oklahoma-multi", target=150, target_rule=">", box_bonus=25, spade_doubles=True)
    assert Rules.from_dict(rules.to_dict()) == rules
    with pytest.raises(ValueError, match="unknown rules option 'colour'"):
        Rules.from_dict({"colour": "red"})


def test_round_result_json_is_one_shape_by_player_name() -> None:
    data = scored(ANN, BOB).to_dict()
    assert {key: data[key] for key in ("outcome", "knocker", "winner", "upcard", "knock_limit", "discard")} == {
        "outcome": "knock", "knocker": "Ann", "winner": "Ann", "upcard": "KD", "knock_limit": 10, "discard": None,
    }  # fmt: skip
    assert set(data["players"]["Ann"]) == {"melds", "layoffs", "deadwood", "deadwood_points"}
    assert data["players"]["Bob"]["layoffs"] == [
        {"card": "QC", "onto": ["8C", "9C", "10C", "JC"]},
        {"card": "QH", "onto": ["9H", "10H", "JH"]},
    ]
    assert data["points"] == {"Ann": 18, "Bob": 0}
    assert set(data) == {"outcome", "knocker", "winner", "upcard", "knock_limit", "discard", "doubled", "players",
                         "points", "laydown", "given", "alternatives", "depends_on"}  # fmt: skip
    assert data["laydown"] == {
        "knocker_melds": [["8C", "9C", "10C", "JC"], ["9H", "10H", "JH"]], "discard": None,
        "layoffs": {"Bob": data["players"]["Bob"]["layoffs"]},
    }  # fmt: skip
    assert data["given"] == {"knocker_melds": None, "discard": None, "layoffs": {}}
    assert (data["alternatives"], data["depends_on"]) == ([], [])


def test_results_keep_the_seating_order() -> None:
    result = score_round(Rules(), C("KD"), {"Bob": parse_cards(BOB), "Ann": parse_cards(ANN)}, "Ann")
    assert list(result.hands) == list(result.points) == ["Bob", "Ann"]


def test_knocker_melds_as_laid_with_eleven_cards_choose_the_discard_among_the_rest() -> None:
    melds = [Meld.parse("8C 9C 10C JC"), Meld.parse("9H 10H JH")]
    result = scored(ANN + " KH", BOB, knocker_melds=melds)
    assert (result.discard, result.points["Ann"]) == (C("KH"), 18)


def test_multi_rules_score_two_players_with_the_penalty_table() -> None:
    result = scored(ANN, BOB, rules=MULTI)
    assert (result.outcome, result.points) == ("knock", {"Ann": 10, "Bob": -(23 - 5)})


def test_the_rules_in_words_name_every_option_that_scores() -> None:
    """The sheet lists a match's rules in words (``Rules.terms``): each scoring's own points, each extra only when
    agreed, and a knock limit of 0 (or an ace upcard under gin-only aces) said as gin only."""
    multi = Rules.preset_named("oklahoma-multi", penalty_knock_points=15, penalty_gin_multiplier=3).terms()
    assert multi[1:] == (
        "knock won: 15 to the knocker, the others lose their deadwood above his",
        "undercut: 20 to the lowest deadwood, the others lose theirs above it",
        "gin: 25 to the knocker, the others lose 3 x their deadwood",
    )
    extras = Rules(knock_limit=7, ace_upcard_gin_only=True, game_bonus=100, shutout_doubles=True).terms()
    assert extras[0:2] == ("knock with 7 or less", "an ace upcard: only gin ends the round")
    assert extras[-2:] == ("at the end, 100 to the winner", "the winner's score doubles when no one else won a round")
    assert Rules(knock_limit=0, ace_upcard_gin_only=True).terms()[0:2] == (
        "only gin ends a round",
        "gin: 25 + the other's deadwood",
    )


def test_a_multi_player_table_playing_gin_only_is_not_told_of_knocks_and_undercuts() -> None:
    """With a knock limit of 0 only gin ends a round: the two-player terms said so alone, while the penalty table's
    still listed a knock's and an undercut's points, which no round of it can score."""
    assert Rules.preset_named("oklahoma-multi", knock_limit=0).terms() == (
        "only gin ends a round",
        "gin: 25 to the knocker, the others lose 2 x their deadwood",
    )


def test_the_upcard_may_be_card_text_as_a_hand_may() -> None:
    """``score_round(rules, "KS", ...)`` failed with AttributeError ('str' has no 'value'), while hands as text were
    read: the upcard is read as text too, and anything else refused by name."""
    hands = {"Ann": "8C 9C 10C JC 9H 10H JH 2S 2D AC", "Bob": "QS QC QH 10S JS 3D 5H 7S AD 7D"}
    assert score_round(Rules(), "ks", hands, "Ann").points == {"Ann": 18, "Bob": 0}
    with pytest.raises(InvalidCardError, match="unknown card 'KX'"):
        score_round(Rules(), "KX", hands, "Ann")
    with pytest.raises(InvalidCardError, match="upcard must be a card"):
        score_round(Rules(), 13, hands, "Ann")  # type: ignore[arg-type]


def test_hands_that_are_not_cards_are_refused_naming_the_player() -> None:
    """A hand of None raised TypeError ('NoneType' is not iterable), hands given as a list of pairs AttributeError,
    and a card twice in a hand written as text was "hand holds ..." without the player's name."""
    with pytest.raises(InvalidHandError, match="Ann's hand must be cards"):
        score_round(Rules(), "KS", {"Ann": None, "Bob": BOB}, "Ann")  # type: ignore[dict-item]
    with pytest.raises(InvalidHandError, match="hands must map each player's name"):
        score_round(Rules(), "KS", [("Ann", ANN), ("Bob", BOB)], "Ann")  # type: ignore[arg-type]
    with pytest.raises(InvalidCardError, match=r"^Bob's hand holds 7D more than once"):
        score_round(Rules(), "KS", {"Ann": ANN, "Bob": BOB.replace("AD", "7D")}, "Ann")  # type: ignore[dict-item]


def test_a_knocker_that_is_no_name_is_refused_naming_the_players() -> None:
    """A knocker given as a list raised TypeError (unhashable type: 'list'); found by the property test of
    impossible tables (tests/test_properties.py)."""
    with pytest.raises(InvalidHandError, match=r"knocker must be one of Ann, Bob; got \[\]"):
        score_round(Rules(), "KS", {"Ann": ANN, "Bob": BOB}, [])  # type: ignore[arg-type]


def test_rules_options_that_cannot_be_names_are_refused_as_options() -> None:
    """``Rules(preset=[])`` raised TypeError (unhashable) and ``Rules.from_dict({"preset": ..., 1: 2})`` TypeError
    (keywords must be strings)."""
    with pytest.raises(InvalidRulesError, match="unknown rules preset"):
        Rules(preset=[])  # type: ignore[arg-type]
    with pytest.raises(InvalidRulesError, match="unknown rules option 1"):
        Rules.from_dict({"preset": "oklahoma", 1: 2})  # type: ignore[dict-item]
    with pytest.raises(InvalidRulesError, match="unknown rules option 1"):
        Rules.from_dict({1: 2})  # type: ignore[dict-item]
