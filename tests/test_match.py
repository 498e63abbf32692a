"""The match: dealers, rounds, totals to the target, undo, edit, bonuses and JSON."""

import dataclasses
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer.cards import Card, parse_cards
from scorer.errors import OkginError
from scorer.laydown import LayDown
from scorer.layoffs import IllegalLayoffError, parse_layoffs
from scorer.match import Draw, InvalidPlayersError, Knock, Match, MatchError, parse_round_input
from scorer.melds import Meld
from scorer.rules import IllegalKnockError, InvalidHandError, Rules

C = Card.parse
ANN_KNOCKS = {
    "Ann": parse_cards("8C 9C 10C JC 9H 10H JH 2S 2D AC"),
    "Bob": parse_cards("QS QC QH 10S JS 3D 5H 7S AD 7D"),
}
BOB_GINS = {"Bob": parse_cards("AS 2S 3S 4D 4H 4C 7C 8C 9C 10C"), "Ann": parse_cards("4S 5S KD QD JH 9H 8H 2H 2D 6C")}


def knock(match: Match) -> None:  # Ann scores 18
    match.record_round(C("KS"), ANN_KNOCKS, "Ann")


def gin(match: Match) -> None:  # Bob scores 25 + 66 = 91
    match.record_round(C("KS"), BOB_GINS, "Bob")


def test_first_dealer_chosen_at_random_with_an_injectable_rng() -> None:
    dealers = {Match(["Ann", "Bob"], rng=random.Random(seed)).first_dealer for seed in range(20)}
    assert dealers == {"Ann", "Bob"}
    assert (
        Match(["Ann", "Bob"], rng=random.Random(3)).first_dealer
        == Match(["Ann", "Bob"], rng=random.Random(3)).first_dealer
    )
    assert Match(["Ann", "Bob"], dealer="Bob").dealer == "Bob"


def test_afterwards_the_winner_of_each_round_deals() -> None:
    match = Match(["Ann", "Bob"], dealer="Bob")
    knock(match)
    assert (match.rounds[0].dealer, match.dealer) == ("Bob", "Ann")
    gin(match)
    assert (match.rounds[1].dealer, match.dealer) == ("Ann", "Bob")


def test_draw_is_void_and_the_same_dealer_deals_again() -> None:
    match = Match(["Ann", "Bob"], dealer="Bob")
    draw = match.record_draw()
    assert (draw.draw, draw.result, draw.points, match.totals, match.dealer) == (
        True,
        None,
        {"Ann": 0, "Bob": 0},
        {"Ann": 0, "Bob": 0},
        "Bob",
    )


def test_rounds_keep_a_full_breakdown_and_running_totals() -> None:
    match = Match(["Ann", "Bob"], dealer="Bob")
    knock(match)
    match.record_draw()
    gin(match)
    assert [r.number for r in match.rounds] == [1, 2, 3]
    assert [r.totals_after for r in match.rounds] == [
        {"Ann": 18, "Bob": 0},
        {"Ann": 18, "Bob": 0},
        {"Ann": 18, "Bob": 91},
    ]
    assert match.rounds[2].result is not None and match.rounds[2].result.outcome == "gin"
    assert (match.winner, match.finished) == (None, False)


def test_the_match_ends_when_a_total_reaches_100_or_more_and_that_player_wins() -> None:
    match = Match(["Ann", "Bob"], dealer="Bob")
    gin(match)
    assert not match.finished
    knock(match)  # Ann 18
    gin(match)  # Bob 182
    assert (match.winner, match.finished) == ("Bob", True)


def test_reaching_exactly_the_target_wins_with_ge_not_with_gt() -> None:
    exact = Rules(target=18)
    match = Match(["Ann", "Bob"], exact, dealer="Bob")
    knock(match)
    assert match.winner == "Ann"
    passed = Match(["Ann", "Bob"], Rules(target=18, target_rule=">"), dealer="Bob")
    knock(passed)
    assert passed.winner is None


def test_no_round_can_be_added_after_the_match_is_won() -> None:
    match = Match(["Ann", "Bob"], Rules(target=50), dealer="Bob")
    gin(match)
    with pytest.raises(MatchError, match="the match was won by Bob in round 1; no round 2 can follow"):
        knock(match)
    with pytest.raises(MatchError, match="won by Bob"):
        match.record_draw()
    assert len(match.rounds) == 1


def test_undo_the_last_round() -> None:
    match = Match(["Ann", "Bob"], Rules(target=50), dealer="Bob")
    knock(match)
    gin(match)
    undone = match.undo_last()
    assert (undone.number, match.totals, match.winner, match.dealer) == (2, {"Ann": 18, "Bob": 0}, None, "Ann")
    match.undo_last()
    with pytest.raises(MatchError, match="no round to undo"):
        match.undo_last()


def test_edit_a_past_round_recomputes_totals_and_dealers() -> None:
    match = Match(["Ann", "Bob"], dealer="Bob")
    knock(match)
    knock(match)
    match.edit(0, Draw())  # it was a draw after all
    assert [r.totals_after for r in match.rounds] == [{"Ann": 0, "Bob": 0}, {"Ann": 18, "Bob": 0}]
    assert [r.dealer for r in match.rounds] == ["Bob", "Bob"]
    match.edit(0, Knock.of(C("KS"), BOB_GINS, "Bob"))
    assert match.totals == {"Ann": 18, "Bob": 91}
    assert [r.dealer for r in match.rounds] == ["Bob", "Bob"]
    with pytest.raises(MatchError, match="no round 5 to edit"):
        match.edit(5, Draw())


def test_an_edit_that_would_end_the_match_before_later_rounds_is_refused() -> None:
    match = Match(["Ann", "Bob"], Rules(target=50), dealer="Bob")
    knock(match)
    knock(match)
    with pytest.raises(MatchError, match="no round 2 can follow"):
        match.edit(0, Knock.of(C("KS"), BOB_GINS, "Bob"))
    assert match.totals == {"Ann": 36, "Bob": 0}


def test_bad_rounds_are_refused_and_leave_the_match_unchanged() -> None:
    match = Match(["Ann", "Bob"], dealer="Bob")
    with pytest.raises(IllegalKnockError, match="over the knock limit 3 set by upcard 3S"):
        match.record_round(C("3S"), ANN_KNOCKS, "Ann")
    with pytest.raises(InvalidHandError, match="hands name 'Cat', who is not in this match"):
        match.record_round(C("KS"), {"Ann": ANN_KNOCKS["Ann"], "Cat": ANN_KNOCKS["Bob"]}, "Ann")
    with pytest.raises(InvalidHandError, match="hands are missing for Bob"):
        match.record_round(C("KS"), {"Ann": ANN_KNOCKS["Ann"]}, "Ann")
    with pytest.raises(InvalidHandError, match="knocker must be one of Ann, Bob; got 'Cat'"):
        match.record_round(C("KS"), ANN_KNOCKS, "Cat")
    assert match.rounds == []


def test_a_knock_naming_a_player_twice_is_refused_by_name() -> None:
    """Hands given twice for Ann were scored as her second hand alone: "Oklahoma Gin is for 2 players, not 1", or in
    a match "hands are missing for Bob"."""
    twice = (("Ann", tuple(ANN_KNOCKS["Ann"])), ("Ann", tuple(ANN_KNOCKS["Bob"])))
    with pytest.raises(InvalidHandError, match="'Ann' is given two hands: each player holds one"):
        Match(["Ann", "Bob"]).record(Knock(C("KS"), twice, "Ann"))


@pytest.mark.parametrize(
    ("players", "dealer", "message"),
    [
        (["Ann"], None, "2 or more distinct"),
        (["Ann", "Ann"], None, "distinct"),
        (["Ann", "Bob"], "Cat", "the dealer 'Cat'"),
    ],
)
def test_bad_players_or_dealer_are_refused(players: list[str], dealer: str | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Match(players, dealer=dealer)


def test_box_bonus_per_round_won_and_game_bonus_added_at_match_end() -> None:
    match = Match(["Ann", "Bob"], Rules(box_bonus=25, game_bonus=100), dealer="Bob")
    knock(match)
    assert match.final_bonuses() == {"Ann": 0, "Bob": 0}
    gin(match)
    knock(match)
    gin(match)
    assert match.winner == "Bob"
    assert match.final_bonuses() == {"Ann": 2 * 25, "Bob": 2 * 25 + 100}
    assert match.final_totals == {"Ann": 36 + 50, "Bob": 182 + 150}


def test_shutout_doubles_the_winners_score() -> None:
    match = Match(["Ann", "Bob"], Rules(game_bonus=100, shutout_doubles=True), dealer="Bob")
    gin(match)
    gin(match)
    assert match.final_bonuses() == {"Ann": 0, "Bob": 100 + (182 + 100)}
    assert match.final_totals["Bob"] == 2 * (182 + 100)


def test_multi_player_match_winner_has_the_most_points_when_a_player_first_reaches_the_target() -> None:
    rules = Rules.preset_named("oklahoma-multi", target=30)
    match = Match(["Ann", "Bob", "Cat"], rules, dealer="Cat")
    hands = {
        "Ann": parse_cards("2C 3C 4C 5D 5H 5S 5C"),
        "Bob": parse_cards("9D 9H 9S 2D 3H 4S KD"),
        "Cat": parse_cards("6C 7D 8H JH QH KH AS"),
    }
    match.record_round(C("KS"), hands, "Ann")
    assert match.totals == {"Ann": 25, "Bob": -38, "Cat": -44}
    match.record_round(C("KS"), hands, "Ann")
    assert (match.winner, match.totals["Ann"]) == ("Ann", 50)


def test_multi_player_match_may_end_after_an_agreed_number_of_rounds() -> None:
    match = Match(["Ann", "Bob", "Cat"], Rules.preset_named("oklahoma-multi", rounds_limit=1), dealer="Cat")
    match.record_round(
        C("KS"),
        {
            "Ann": parse_cards("2C 3C 4C 5D 5H 5S 5C"),
            "Bob": parse_cards("9D 9H 9S 2D 3H 4S KD"),
            "Cat": parse_cards("6C 7D 8H JH QH KH AS"),
        },
        "Ann",
    )
    assert match.winner == "Ann"


def test_json_round_trip_of_the_whole_match_keeps_its_own_rules() -> None:
    match = Match(["Ann", "Bob"], Rules(gin_bonus=20, target=150), dealer="Bob")
    knock(match)
    match.record_draw()
    melds = [Meld.parse("AS 2S 3S"), Meld.parse("4D 4H 4C"), Meld.parse("7C 8C 9C 10C")]
    match.record_round(C("KS"), BOB_GINS, "Bob", knocker_melds=melds)
    data = json.loads(json.dumps(match.to_dict()))
    again = Match.from_dict(data)
    assert again.to_dict() == data
    assert (again.rules, again.totals, again.dealer) == (match.rules, match.totals, match.dealer)
    assert data["rounds"][2]["result"]["points"] == {"Ann": 0, "Bob": 20 + 66}
    assert data["rounds"][2]["input"]["knocker_melds"] == [m.to_list() for m in melds]
    assert data["rounds"][1]["input"] == {"draw": True} and data["rounds"][1]["result"] is None
    with pytest.raises(ValueError, match="not a match"):
        Match.from_dict({"players": ["Ann", "Bob"]})


def test_the_lay_down_as_given_is_kept_with_the_round_and_survives_edit_undo_and_json() -> None:
    multi = Rules.preset_named("oklahoma-multi")
    hands = {
        "Ann": parse_cards("2C 7C 7D 7H 7S 8S 9S"),
        "Bob": parse_cards("4C 5C 5D 5S 10S JS QS"),
        "Cat": parse_cards("6D 6H JH QH KH 6S KS"),
    }
    bob_lays_off = {"Bob": parse_layoffs("10S JS QS onto 7S 8S 9S")}
    match = Match(["Ann", "Bob", "Cat"], multi, dealer="Cat")
    assert match.record_round(C("9H"), hands, "Ann").points == {"Ann": 10, "Bob": -2, "Cat": -8}
    assert match.record_round(C("9H"), hands, "Ann", layoffs=bob_lays_off).points == {"Ann": -2, "Bob": -4, "Cat": 20}
    assert match.rounds[1].entered.laydown.layoffs_by_player == bob_lays_off
    match.edit(0, Knock.of(C("9H"), hands, "Ann", layoffs=bob_lays_off))
    assert match.totals == {"Ann": -4, "Bob": -8, "Cat": 40}
    data = json.loads(json.dumps(match.to_dict()))
    assert data["rounds"][0]["input"]["layoffs"] == {"Bob": [layoff.to_dict() for layoff in bob_lays_off["Bob"]]}
    assert Match.from_dict(data).to_dict() == data
    match.undo_last()
    assert match.totals == {"Ann": -2, "Bob": -4, "Cat": 20}
    with pytest.raises(IllegalLayoffError, match="Cat cannot lay KS onto 7S 8S 9S"):
        match.record_round(C("9H"), hands, "Ann", layoffs={"Bob": (), "Cat": parse_layoffs("KS onto 7S 8S 9S")})


BOB_UNDERCUTS = {"Ann": ANN_KNOCKS["Ann"], "Bob": parse_cards("QS QC QH 10S JS 3D 2H 7S 7C 7D")}  # Bob scores 10


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["knock", "gin", "undercut", "draw", "undo"]), max_size=12))
def test_any_sequence_of_rounds_keeps_totals_dealers_and_json_consistent(operations: list[str]) -> None:
    match = Match(["Ann", "Bob"], Rules(target=100), dealer="Bob")
    for operation in operations:
        try:
            if operation == "undo":
                match.undo_last()
            elif operation == "draw":
                match.record_draw()
            else:
                hands, knocker = {
                    "knock": (ANN_KNOCKS, "Ann"),
                    "gin": (BOB_GINS, "Bob"),
                    "undercut": (BOB_UNDERCUTS, "Ann"),
                }[operation]
                match.record_round(C("KS"), hands, knocker)
        except MatchError:
            assert match.finished or (operation == "undo" and not match.rounds)
    totals = {"Ann": 0, "Bob": 0}
    dealer = "Bob"
    for number, round_ in enumerate(match.rounds, start=1):
        assert (round_.number, round_.dealer) == (number, dealer)
        totals = {name: totals[name] + round_.points[name] for name in totals}
        assert round_.totals_after == totals
        dealer = round_.dealer if round_.draw else round_.result.winner  # type: ignore[union-attr]
    assert match.totals == totals and match.dealer == dealer
    assert match.finished == any(total >= 100 for total in totals.values())
    assert Match.from_dict(json.loads(json.dumps(match.to_dict()))).to_dict() == match.to_dict()


def test_recording_a_round_scores_only_that_round(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long match stays cheap to extend: earlier rounds are kept as scored, not replayed."""
    import scorer.match

    match = Match(["Ann", "Bob"], Rules(target=10_000), dealer="Bob")
    for _ in range(5):
        knock(match)
    calls: list[str] = []
    scoring = scorer.match.score_round
    monkeypatch.setattr(scorer.match, "score_round", lambda *a, **k: calls.append(a[3]) or scoring(*a, **k))
    knock(match)
    assert calls == ["Ann"]
    match.edit(4, Knock.of(C("KS"), BOB_GINS, "Bob"))  # round 5 is scored again; round 6 keeps its score
    assert calls == ["Ann", "Bob"]
    assert [r.dealer for r in match.rounds][4:] == ["Ann", "Bob"] and match.totals == {"Ann": 5 * 18, "Bob": 91}


def test_replay_and_copy() -> None:
    match = Match(["Ann", "Bob"], Rules(target=50), dealer="Bob")
    knock(match)
    twin = match.copy()
    gin(twin)
    assert (len(match.rounds), len(twin.rounds), twin.winner, match.winner) == (1, 2, "Bob", None)
    fresh = Match(["Ann", "Bob"], Rules(target=50), dealer="Bob")
    fresh.replay(twin.inputs())
    assert fresh.to_dict() == twin.to_dict()
    with pytest.raises(MatchError, match="no round 3 can follow"):
        fresh.replay([*twin.inputs(), Draw()])
    assert fresh.to_dict() == twin.to_dict(), "unchanged on error"


ANN_AS = {"upcard": "KS", "knocker": "Ann", "hands": {"Ann": "AS"}}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "a round is an object"),
        ({"draw": "yes"}, "draw must be true or false"),
        ({"knocker": "Ann", "hands": {"Ann": "AS"}}, "upcard must be a card"),
        ({"upcard": "ZZ", "knocker": "Ann", "hands": {"Ann": "AS"}}, "upcard: unknown card 'ZZ'"),
        ({"upcard": "KS", "knocker": 1, "hands": {"Ann": "AS"}}, "knocker must be a player's name"),
        ({"upcard": "KS", "knocker": "Ann", "hands": {}}, "hands must be an object"),
        ({"upcard": "KS", "knocker": "Ann", "hands": {"Ann": [1]}}, "Ann's hand must be a list of cards"),
        ({"upcard": "KS", "knocker": "Ann", "hands": {"Ann": "AS AS"}}, "Ann's hand holds AS more than once"),
        ({"upcard": "KS", "knocker": "Ann", "hands": {"Ann": "AS"}, "knocker_melds": "AS"}, "list of melds"),
        ({"upcard": "KS", "knocker": "Ann", "hands": {"Ann": "AS"}, "knocker_melds": ["AS 2S"]}, "not a meld"),
        ({**ANN_AS, "knocker_melds": [[1, 2, 3]]}, "knocker_melds must be a list of cards"),
        ({**ANN_AS, "discard": ["2C"]}, 'discard must be a card like "7D"'),
        ({**ANN_AS, "discard": "2X"}, "discard: unknown card '2X'"),
        ({**ANN_AS, "layoffs": ["10S"]}, "layoffs must map players to their layoffs"),
        ({**ANN_AS, "layoffs": {"Bob": 3}}, "Bob's layoffs must be a list of layoffs"),
        ({**ANN_AS, "layoffs": {"Bob": "10S onto 7S 8S 9S"}}, "Bob's layoffs must be a list of layoffs"),
        ({**ANN_AS, "layoffs": {"Bob": [{"card": "10S"}]}}, 'a layoff is {"card": "QC", "onto"'),
        ({**ANN_AS, "layoffs": {"Bob": [{"card": 10, "onto": "7S 8S 9S"}]}}, "card must be a card"),
        ({**ANN_AS, "layoffs": {"Bob": [{"card": "10S", "onto": 7}]}}, "onto must be a list of cards"),
        ({**ANN_AS, "layoffs": {"Bob": [{"card": "10S", "onto": ["8S", "9S"]}]}}, "onto 8S 9S is not a meld"),
        ({**ANN_AS, "layoffs": {"Bob": ["10S 7S 8S 9S"]}}, "cannot read layoff '10S 7S 8S 9S'"),
        # a name holding a lone surrogate is not text: refused before any message says it raw
        ({**ANN_AS, "knocker": "Ann\ud800"}, r"knocker name 'Ann\\ud800', which holds a lone surrogate"),
        ({**ANN_AS, "hands": {"Ann": "AS", "Zed\ud800": "KC"}}, r"hands name 'Zed\\ud800', which holds a lone"),
        ({**ANN_AS, "hands": {"Ann": "AS", "Zed\ud800": 5}}, r"hands name 'Zed\\ud800', which holds a lone"),
        ({**ANN_AS, "layoffs": {"Zed\ud800": []}}, r"layoffs name 'Zed\\ud800', which holds a lone surrogate"),
        ({**ANN_AS, "layoffs": {"Zed\ud800": 3}}, r"layoffs name 'Zed\\ud800', which holds a lone surrogate"),
        ({**ANN_AS, "layoffs": {1: []}}, "layoffs must be a player's name, got 1"),
    ],
)
def test_a_round_input_that_cannot_be_read_names_the_field(data: object, message: str) -> None:
    with pytest.raises(ValueError, match=message) as refused:
        parse_round_input(data)
    str(refused.value).encode()  # a message a page can send (UTF-8): no lone surrogate said raw


def test_round_input_json_round_trip() -> None:
    melds = (Meld.parse("AS 2S 3S"),)
    knock_ = Knock.of(C("KS"), {"Ann": parse_cards("ace of spades, 2S 3S"), "Bob": []}, "Ann", melds)
    assert parse_round_input(json.loads(json.dumps(knock_.to_dict()))) == knock_
    laid = Knock.of(
        C("9H"), {"Ann": [], "Bob": [], "Cat": []}, "Ann", discard=C("2C"),
        layoffs={"Bob": parse_layoffs("10S onto 7S 8S 9S"), "Cat": ()},
    )  # fmt: skip
    assert laid.to_dict()["layoffs"] == {"Bob": [{"card": "10S", "onto": ["7S", "8S", "9S"]}], "Cat": []}
    assert parse_round_input(json.loads(json.dumps(laid.to_dict()))) == laid
    texts = {**laid.to_dict(), "layoffs": {"Bob": ["10S onto 7S 8S 9S"], "Cat": []}, "knocker_melds": None}
    assert parse_round_input(texts) == laid, "a layoff may be written as text"
    old = {key: value for key, value in laid.to_dict().items() if key not in ("knocker_melds", "discard", "layoffs")}
    assert parse_round_input(old) == dataclasses.replace(laid, laydown=LayDown()), "stored before lay-downs: none given"
    assert parse_round_input(Draw().to_dict()) == Draw()


def test_an_edit_scores_the_edited_deal_only_and_the_match_follows(monkeypatch: pytest.MonkeyPatch) -> None:
    """An edit of round 1 scored every round after it again (each deal solved anew): on a 340-round match, putting
    back its 60 earlier versions took 5-8 s. A round's score is its own deal's: the later rounds keep theirs, and
    their totals, dealers and the winner follow, as a replay of the same rounds gives them."""
    match = Match(["Ann", "Bob"], Rules(target=10_000), dealer="Bob")
    for number in range(30):
        (gin if number % 3 == 0 else knock if number % 3 == 1 else Match.record_draw)(match)
    solved = []
    score = Knock.score
    monkeypatch.setattr(Knock, "score", lambda entered, rules: solved.append(entered) or score(entered, rules))
    edited = Knock(C("KS"), ANN_KNOCKS, "Ann")
    match.edit(0, edited)
    assert len(solved) == 1  # the edited deal only
    replayed = Match(["Ann", "Bob"], Rules(target=10_000), dealer="Bob")
    replayed.replay(match.inputs())
    assert match.to_dict() == replayed.to_dict()
    assert [r.dealer for r in match.rounds[:3]] == ["Bob", "Ann", "Ann"]  # Ann won round 1 now: she deals round 2
    low = Match(["Ann", "Bob"], Rules(target=90), dealer="Bob")
    for play in (knock, knock, Match.record_draw):
        play(low)
    with pytest.raises(MatchError, match="won by Bob in round 2; no round 3 can follow"):
        low.edit(1, Knock(C("KS"), BOB_GINS, "Bob"))  # Bob 91 of 90 in round 2, before round 3
    assert low.totals == {"Ann": 36, "Bob": 0}  # unchanged on error


@pytest.mark.parametrize("seed", range(12))
def test_checking_an_edit_says_what_the_edit_would(seed: int) -> None:
    """``check_edit`` answers from the totals where they decide, and tries the edit where they do not: either
    way as the edit itself does (a put-back offered must be a put-back made)."""
    rng = random.Random(seed)
    deals = [
        Knock.of(C("KS"), ANN_KNOCKS, "Ann"),  # Ann +18
        Knock.of(C("KS"), BOB_GINS, "Bob"),  # Bob +91
        Knock.of(C("KS"), BOB_UNDERCUTS, "Ann"),  # Bob +10
        Draw(),
    ]
    rules = Rules(target=rng.choice([40, 100, 150, 250]), target_rule=rng.choice([">=", ">"]))
    if seed % 3 == 0:
        rules = dataclasses.replace(rules, rounds_limit=rng.randint(3, 12))
    match = Match(["Ann", "Bob"], rules, dealer="Bob")
    while not match.finished and len(match.rounds) < 14:
        match.record(rng.choice(deals if len(match.rounds) % 4 else deals[2:]))
    for index in range(len(match.rounds)):
        for entered in deals:
            try:
                match.copy().edit(index, entered)
                refused = None
            except MatchError as error:
                refused = str(error)
            if refused is None:
                match.check_edit(index, entered)
            else:
                with pytest.raises(MatchError) as raised:
                    match.check_edit(index, entered)
                assert str(raised.value) == refused
    assert match.to_dict() == Match.from_dict(match.to_dict()).to_dict()  # checked, never changed


def test_a_match_takes_at_most_max_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    match = Match(["Ann", "Bob"], Rules())
    for _ in range(3):
        match.record_draw()
    monkeypatch.setattr("scorer.match.MAX_ROUNDS", 2)  # a match kept before a lower bound
    with pytest.raises(MatchError, match="a match holds at most 2 rounds, and this one has them: start a new match"):
        match.record_draw()
    match.replay(match.inputs())  # is still read back whole: the bound is on rounds added
    assert len(match.rounds) == 3


@pytest.mark.parametrize("players", [[["Ann"], "Bob"], 5, "AB", None])
def test_players_that_are_not_names_are_refused_not_a_crash(players: object) -> None:
    """``Match([["Ann"], "Bob"])`` raised TypeError (unhashable list), ``Match(5)`` TypeError, and ``Match("AB")``
    started a match between "A" and "B"."""
    with pytest.raises(InvalidPlayersError, match="2 or more distinct player names"):
        Match(players)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "data",
    [[], None, {"players": 5, "rules": {}, "first_dealer": "Ann", "rounds": []}, {"players": ["Ann", "Bob"]}],
)
def test_a_match_from_data_that_is_none_is_a_user_error(data: object) -> None:
    """``Match.from_dict`` raised a bare ValueError, or TypeError for players that are not a list of names: the edges
    catch ``OkginError``."""
    with pytest.raises(OkginError):
        Match.from_dict(data)  # type: ignore[arg-type]
