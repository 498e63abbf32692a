"""The table as it was laid: the knocker's melds, the discard and the layoffs as given, checked and
scored exactly; and, where not given, the alternatives that would score differently."""

from __future__ import annotations

import pytest

from scorer.cards import Card, parse_cards
from scorer.laydown import LayDown, format_layoffs_by_player, parse_layoffs_by_player
from scorer.layoffs import IllegalLayoffError, Layoff, lay_off_as_given, parse_layoffs
from scorer.melds import Meld, parse_melds
from scorer.rules import IllegalKnockError, InvalidHandError, Rules, score_round

C = Card.parse
MULTI = Rules.preset_named("oklahoma-multi")

# The reproductions.
SIX_D = {"K": parse_cards("AC 4C 4D 4H 2S 3S 4S JS QS KS"), "O": parse_cards("KC AD KD AH KH AS 5S 6S 9S 10S")}
NINE_H = {
    "Ann": parse_cards("2C 7C 7D 7H 7S 8S 9S"),
    "Bob": parse_cards("4C 5C 5D 5S 10S JS QS"),
    "Cat": parse_cards("6D 6H JH QH KH 6S KS"),
}
DAN = {
    "Dan": parse_cards("3C 5C 6C 7C 8C 9C 3D 2S"),
    "Eve": parse_cards("10C 2D 9H 10H JH QH KH"),
    "Fay": parse_cards("8D AH 2H 3H 4S 5S 6S"),
    "Gus": parse_cards("KS KD QS JD 4D 6D 10S"),
}


# --- the knocker's melds as laid


def test_leaving_a_meld_out_is_scored_as_laid_and_listed_when_not_given() -> None:
    chosen = score_round(Rules(), C("6D"), SIX_D, "K")
    assert (chosen.outcome, chosen.points) == ("undercut", {"K": 0, "O": 11})
    assert chosen.depends_on == ("knocker_melds",)
    (alternative,) = chosen.alternatives
    assert alternative.laydown.knocker_melds == parse_melds("4C 4D 4H 4S | JS QS KS")
    assert (alternative.outcome, alternative.points, alternative.deadwood) == (
        "knock",
        {"K": 5, "O": 0},
        {"K": 6, "O": 11},
    )
    laid = score_round(Rules(), C("6D"), SIX_D, "K", parse_melds("JS QS KS | 4C 4D 4H 4S"))
    assert (laid.outcome, laid.points, laid.alternatives) == ("knock", {"K": 5, "O": 0}, ())
    assert [str(x) for x in laid.hands["O"].layoffs] == ["10S onto JS QS KS", "9S onto 10S JS QS KS"]


def test_melds_as_laid_over_the_knock_limit_are_an_illegal_knock() -> None:
    with pytest.raises(IllegalKnockError, match="K's deadwood as laid is 10, over the knock limit 6 set by upcard 6D"):
        score_round(Rules(), C("6D"), SIX_D, "K", parse_melds("4C 4D 4H | JS QS KS"))


def test_melds_as_laid_must_be_the_knockers_cards() -> None:
    with pytest.raises(InvalidHandError, match="K's meld 5S 6S 7S uses 5S 6S 7S, not in K's hand"):
        score_round(Rules(), C("6D"), SIX_D, "K", parse_melds("5S 6S 7S"))
    with pytest.raises(InvalidHandError, match="K's melds share a card"):
        score_round(Rules(), C("6D"), SIX_D, "K", parse_melds("4C 4D 4H | 2S 3S 4S | 4S 4C 4D"))


# --- the discard


def test_the_engine_discards_to_win_the_knocker_most_and_lists_the_least_deadwood_discard() -> None:
    chosen = score_round(MULTI, C("8H"), DAN, "Dan")
    assert (chosen.discard, chosen.points["Dan"], chosen.outcome, chosen.winner) == (C("9C"), 0, "undercut", "Fay")
    assert chosen.depends_on == ("knocker_melds", "discard")
    (alternative,) = chosen.alternatives
    assert (alternative.laydown.discard, alternative.points) == (
        C("3C"),
        {"Dan": -3, "Eve": 20, "Fay": -6, "Gus": -58},
    )


def test_a_given_discard_is_scored_as_laid() -> None:
    laid = score_round(MULTI, C("8H"), DAN, "Dan", discard=C("3C"))
    assert (laid.discard, laid.points, laid.alternatives) == (
        C("3C"),
        {"Dan": -3, "Eve": 20, "Fay": -6, "Gus": -58},
        (),
    )
    assert laid.given == LayDown(discard=C("3C"))


@pytest.mark.parametrize(
    ("hand", "discard", "message"),
    [
        ("3C 5C 6C 7C 8C 9C 3D 2S", "KH", "Dan's discard KH is not among Dan's 8 cards"),
        ("3C 5C 6C 7C 8C 9C 3D", "2S", "Dan's discard 2S is given with 7 cards, the hand after the discard"),
    ],
)
def test_a_discard_must_be_one_of_the_knockers_cards(hand: str, discard: str, message: str) -> None:
    hands = {**DAN, "Dan": parse_cards(hand)}
    with pytest.raises(InvalidHandError, match=message):
        score_round(MULTI, C("8H"), hands, "Dan", discard=C(discard))


def test_a_discard_cannot_be_in_the_melds_as_laid() -> None:
    with pytest.raises(InvalidHandError, match="Dan cannot discard 9C: it is in Dan's melds as laid"):
        score_round(MULTI, C("8H"), DAN, "Dan", parse_melds("5C 6C 7C 8C 9C"), discard=C("9C"))


# --- layoffs as made


def test_an_indifferent_players_layoffs_decide_the_winner_and_are_listed() -> None:
    chosen = score_round(MULTI, C("9H"), NINE_H, "Ann")
    assert chosen.points == {"Ann": 10, "Bob": -2, "Cat": -8}
    assert chosen.depends_on == ("Bob",)
    (alternative,) = chosen.alternatives
    assert alternative.points == {"Ann": -2, "Bob": -4, "Cat": 20}
    assert [str(x.card) for x in alternative.laydown.layoffs_by_player["Bob"]] == ["10S", "JS", "QS"]


def test_layoffs_as_made_are_scored_in_seat_order() -> None:
    bob = {"Bob": parse_layoffs("10S JS QS onto 7S 8S 9S")}
    laid = score_round(MULTI, C("9H"), NINE_H, "Ann", layoffs=bob)
    assert (laid.outcome, laid.winner, laid.points) == ("undercut", "Cat", {"Ann": -2, "Bob": -4, "Cat": 20})
    assert [str(x) for x in laid.hands["Cat"].layoffs] == ["KS onto 7S 8S 9S 10S JS QS"]
    none = score_round(MULTI, C("9H"), NINE_H, "Ann", layoffs={"Bob": ()})
    assert (none.points, none.alternatives) == ({"Ann": 10, "Bob": -2, "Cat": -8}, ())


def test_a_later_players_layoff_makes_the_engine_choose_what_allows_it() -> None:
    laid = score_round(MULTI, C("9H"), NINE_H, "Ann", layoffs={"Cat": parse_layoffs("KS onto 7S 8S 9S")})
    assert laid.points == {"Ann": -2, "Bob": -4, "Cat": 20}
    assert [str(x.card) for x in laid.hands["Bob"].layoffs] == ["10S", "JS", "QS"]


def test_a_layoff_can_tell_which_melds_the_knocker_laid() -> None:
    # The engine lays the four 9s (Bob could lay off only KS); 8S laid onto 9S-QS says the knocker laid the run.
    hands = {"Ann": parse_cards("9C 9D 9H 9S 10S JS QS 2C 3D AH"), "Bob": parse_cards("8S KS 2H 3H 4H 5H 6C 6D 6H 5C")}
    assert score_round(Rules(), C("KD"), hands, "Ann").points == {"Ann": 7, "Bob": 0}
    laid = score_round(Rules(), C("KD"), hands, "Ann", layoffs={"Bob": parse_layoffs("8S KS onto 9S 10S JS QS")})
    assert laid.hands["Ann"].melds == parse_melds("9C 9D 9H | 9S 10S JS QS")
    assert (laid.outcome, laid.points) == ("undercut", {"Ann": 0, "Bob": 11})


def test_layoffs_as_made_need_not_be_the_best() -> None:
    laid = score_round(Rules(), C("6D"), SIX_D, "K", layoffs={"O": parse_layoffs("10S 9S onto JS QS KS")})
    assert (laid.outcome, laid.points) == ("knock", {"K": 10, "O": 0})  # 5S and 6S kept: 11 against 1


@pytest.mark.parametrize(
    ("layoffs", "message"),
    [
        ({"Bob": "KH onto 7S 8S 9S"}, "Bob lays off KH, which is not in Bob's hand"),
        ({"Bob": "10S onto 7S 8S 9S, 10S onto 7S 8S 9S"}, "Bob lays off 10S twice"),
        ({"Bob": "JS onto 7S 8S 9S"}, r"Bob cannot lay JS onto 7S 8S 9S: a layoff is the 4th card of a set"),
        ({"Bob": "10S onto 10C JC QC"}, "Bob lays 10S onto 10C JC QC, which is not on the table"),
        ({"Ann": "none"}, "Ann knocked and lays off nothing"),
        ({"Zed": "none"}, "layoffs are given for 'Zed', who is not one of the players"),
        ({"Cat": "KS onto 7S 8S 9S", "Bob": "none"}, "Cat cannot lay KS onto 7S 8S 9S"),
    ],
)
def test_layoffs_the_table_does_not_allow_are_refused(layoffs: dict[str, str], message: str) -> None:
    given = {name: parse_layoffs(text) for name, text in layoffs.items()}
    with pytest.raises(IllegalLayoffError, match=message):
        score_round(MULTI, C("9H"), NINE_H, "Ann", layoffs=given)


def test_nobody_lays_off_onto_a_gin_hand() -> None:
    hands = {"Ann": parse_cards("AS 2S 3S 4D 4H 4C 7C 8C 9C 10C"), "Bob": parse_cards("5S 6S KD QD JD 2H 3H 5H 6H 8H")}
    with pytest.raises(IllegalLayoffError, match="Bob lays off 5S onto AS 2S 3S, but nobody lays off onto a gin"):
        score_round(Rules(), C("KH"), hands, "Ann", layoffs={"Bob": parse_layoffs("5S onto AS 2S 3S")})
    assert score_round(Rules(), C("KH"), hands, "Ann", layoffs={"Bob": ()}).outcome == "gin"


def test_a_layoff_waits_for_the_card_it_chains_on() -> None:
    result = lay_off_as_given([Meld.parse("JS QS KS")], parse_cards("9S 10S 2C"), parse_layoffs("9S 10S onto JS QS KS"))
    assert [str(x) for x in result.layoffs] == ["10S onto JS QS KS", "9S onto 10S JS QS KS"]
    assert result.deadwood_points == 2


def test_the_scored_laydown_given_back_scores_the_same_with_nothing_left_to_choose() -> None:
    for rules, upcard, hands, knocker in (
        (Rules(), "6D", SIX_D, "K"),
        (MULTI, "9H", NINE_H, "Ann"),
        (MULTI, "8H", DAN, "Dan"),
    ):
        chosen = score_round(rules, C(upcard), hands, knocker)
        for laid in (chosen, *chosen.alternatives):
            again = score_round(rules, C(upcard), hands, knocker, **laid.laydown.arguments())
            assert (again.points, again.laydown, again.alternatives) == (laid.points, laid.laydown, ())


# --- the lay-down as data


def test_laydown_text_forms() -> None:
    laid = LayDown.of(
        parse_melds("7C 7D 7H | 7S 8S 9S"), C("2C"), {"Bob": parse_layoffs("10S onto 7S 8S 9S"), "Cat": ()}
    )
    assert laid.to_dict()["layoffs"] == {"Bob": [{"card": "10S", "onto": ["7S", "8S", "9S"]}], "Cat": []}
    assert not LayDown().given and laid.given
    assert (
        str(laid) == "knocker melds 7C 7D 7H | 7S 8S 9S; discard 2C; Bob lays off 10S onto 7S 8S 9S; Cat lays off none"
    )
    text = format_layoffs_by_player(laid.layoffs_by_player)
    assert parse_layoffs_by_player(text, ["Bob", "Cat"]) == laid.layoffs_by_player
    assert Layoff.parse(str(Layoff(C("QC"), Meld.parse("9C 10C JC")))) == Layoff(C("QC"), Meld.parse("9C 10C JC"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("10S onto 7S 8S 9S", "say whose layoffs '10S onto 7S 8S 9S' are"),
        ("Zed: none", "layoffs name 'Zed', who does not lay off here; Bob, Cat may"),
        ("Bob: none; bob: 10S onto 7S 8S 9S", "Bob's layoffs are given twice"),
        ("Bob: 10S onto", "cannot read layoff '10S onto'"),
    ],
)
def test_layoffs_text_that_cannot_be_read_is_refused_by_name(text: str, message: str) -> None:
    with pytest.raises(IllegalLayoffError, match=message):
        parse_layoffs_by_player(text, ["Bob", "Cat"])


def test_layoffs_of_players_whose_names_differ_only_in_case_go_to_the_player_named() -> None:
    """Players "Bob" and "bob" are two players (``score_round`` and ``Match`` keep them apart), but the layoffs text
    folded case before it looked for an exact name: "Bob: ..." went to "bob", so the written form did not read back
    and "Bob: 10S JS onto 7S 8S 9S; bob: none" was refused as bob's layoffs given twice."""
    laid = {"Bob": parse_layoffs("10S JS onto 7S 8S 9S"), "bob": ()}
    text = format_layoffs_by_player(laid)
    assert parse_layoffs_by_player(text, ["Bob", "bob"]) == laid
    hands = {
        "Ann": parse_cards("7S 8S 9S 2C 3C 4C AD"),
        "Bob": parse_cards("10S JS 4D 6D 8D 10D QD"),
        "bob": parse_cards("2S 3S 4S 6H 8H 10C QC"),
    }
    result = score_round(Rules.preset_named("oklahoma-multi"), C("KH"), hands, "Ann", layoffs=laid)
    assert [str(layoff.card) for layoff in result.hands["Bob"].layoffs] == ["10S", "JS"]
    assert result.points == {"Ann": 10, "Bob": -37, "bob": -33}


def test_a_name_that_only_folds_to_two_players_is_refused_as_ambiguous() -> None:
    with pytest.raises(IllegalLayoffError, match="layoffs name 'BOB', which may be Bob or bob"):
        parse_layoffs_by_player("BOB: none", ["Bob", "bob"])
    assert parse_layoffs_by_player("BOB: none", ["Bob", "Cat"]) == {"Bob": ()}  # case alone still folds


def test_a_player_given_layoffs_twice_is_refused_by_name() -> None:
    """Bob's first layoffs were dropped unseen, and the round scored as if he had made only his second."""
    twice = LayDown(layoffs=(("Bob", tuple(parse_layoffs("10S onto JS QS KS"))), ("Bob", ())))
    with pytest.raises(IllegalLayoffError, match="'Bob' is given layoffs twice: list each player's once"):
        twice.arguments()
