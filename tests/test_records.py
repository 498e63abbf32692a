"""Players' records over matches: who won what, names matched across matches, head to head."""

import json
from typing import Any

import pytest
from test_match import ANN_KNOCKS, BOB_GINS, BOB_UNDERCUTS, C

from scorer.cards import parse_cards
from scorer.match import Match
from scorer.records import InvalidOutlineError, MatchOutline, RoundsTally, head_to_head, player_records
from scorer.rules import Rules


def played(players: list[str], *rounds: str, rules: Rules | None = None) -> Match:
    """A match of Ann and Bob (named ``players``) with rounds "knock" (Ann +18), "gin" (Bob +91), "undercut"
    (Bob +10, Ann laid down) and "draw"."""
    ann, bob = players
    match = Match(players, rules or Rules(target=100), dealer=bob)
    for kind in rounds:
        if kind == "draw":
            match.record_draw()
            continue
        hands, knocker = {"knock": (ANN_KNOCKS, "Ann"), "gin": (BOB_GINS, "Bob"), "undercut": (BOB_UNDERCUTS, "Ann")}[
            kind
        ]
        named = {ann: hands["Ann"], bob: hands["Bob"]}
        match.record_round(C("KS"), named, ann if knocker == "Ann" else bob)
    return match


def by_name(matches: list[Match]) -> dict[str, dict[str, object]]:
    return {record.name: record.to_dict() for record in player_records(matches)}


def test_rounds_gins_undercuts_and_points_are_counted_per_player() -> None:
    records = by_name([played(["Ann", "Bob"], "knock", "draw", "undercut", "gin")])
    assert records["Ann"] == dict(
        name="Ann", matches=1, finished=1, won=0, rounds=3, rounds_won=1, gins=0, undercuts=0, undercut=1, points=18
    )
    assert records["Bob"] == dict(
        name="Bob", matches=1, finished=1, won=1, rounds=3, rounds_won=2, gins=1, undercuts=1, undercut=0, points=101
    )


def test_an_outline_of_a_match_gives_the_same_records() -> None:
    matches = [played(["Ann", "Bob"], "knock", "draw", "gin"), played(["Bob", "Ann"], "undercut", "knock", "gin")]
    outlines = [MatchOutline.of(match) for match in matches]
    assert player_records(outlines) == player_records(matches)
    assert head_to_head(outlines) == head_to_head(matches)
    assert [tally.rounds for tally in outlines[0].tallies] == [2, 2]  # the draw is void


def test_an_outline_reads_back_from_its_json_form() -> None:
    outline = MatchOutline.of(played(["Ann", "Bob"], "knock", "draw", "undercut", "gin"))
    assert MatchOutline.from_dict(json.loads(json.dumps(outline.to_dict()))) == outline
    assert outline.tallies == (
        RoundsTally(rounds=3, rounds_won=1, gins=0, undercuts=0, undercut=1, points=18),
        RoundsTally(rounds=3, rounds_won=2, gins=1, undercuts=1, undercut=0, points=101),
    )


TALLY = {"rounds": 1, "rounds_won": 1, "gins": 0, "undercuts": 0, "undercut": 0, "points": 18}
OUTLINE = {"players": ["Ann"], "finished": False, "winner": None, "tallies": [TALLY]}


@pytest.mark.parametrize(
    "data",
    [
        [],
        {**OUTLINE, "players": "Ann"},
        {**OUTLINE, "winner": "Bob"},
        {**OUTLINE, "finished": 1},
        {**OUTLINE, "tallies": []},
        {**OUTLINE, "tallies": [{**TALLY, "gins": True}]},
        {**OUTLINE, "tallies": [{"rounds": 1}]},
    ],
)
def test_an_outline_not_as_okgin_writes_it_is_refused(data: Any) -> None:
    with pytest.raises(InvalidOutlineError):
        MatchOutline.from_dict(data)


def test_a_name_typed_differently_is_the_same_player_shown_as_last_typed() -> None:
    first = played(["ann", "Bob"], "knock")
    second = played(["  ANN ", "bob"], "gin", "gin")
    third = played(["Ann", "Cat"], "knock")
    records = by_name([first, second, third])
    assert set(records) == {"Ann", "bob", "Cat"}
    assert records["Ann"]["matches"] == 3 and records["Ann"]["rounds_won"] == 2
    assert records["bob"]["matches"] == 2 and records["bob"]["won"] == 1


def test_a_name_written_in_another_unicode_form_is_the_same_player() -> None:
    """A phone may send "Zoë" as a composed ë or as an e and its accent: two records of one player (scale probe)."""
    records = by_name([played(["Zo\u00eb", "Bob"], "knock"), played(["Zoe\u0308", "Bob"], "gin", "gin")])
    assert len(records) == 2 and records["Zoe\u0308"]["matches"] == 2


def test_two_players_of_one_match_whose_names_differ_in_case_stay_two() -> None:
    records = player_records([played(["Ann", "ann"], "knock")])
    assert sorted((record.name, record.matches, record.rounds_won) for record in records) == [
        ("Ann", 1, 1),
        ("ann", 1, 0),
    ]
    assert [(pair.first, pair.second) for pair in head_to_head([played(["Ann", "ann"], "gin", "gin")])] == [
        ("Ann", "ann")
    ]


def test_most_matches_won_first() -> None:
    records = player_records([played(["Ann", "Bob"], "gin", "gin"), played(["Cat", "Bob"], "knock")])
    assert [record.name for record in records] == ["Bob", "Cat", "Ann"]


def test_penalty_scoring_counts_minus_points() -> None:
    rules = Rules(preset="oklahoma", scoring="penalty", max_players=4, target=100)
    match = Match(["Ann", "Bob", "Cat"], rules, dealer="Cat")
    hands = {
        "Ann": parse_cards("3C 4C 5C 6H 6S 6D 2H"),
        "Bob": parse_cards("KH KS QD JD 9S 8S 7H"),
        "Cat": parse_cards("AS AD 2S 9C 9D 10H QC"),
    }
    result = match.record_round(C("KD"), hands, "Ann").result
    assert result is not None
    records = by_name([match])
    assert {name: record["points"] for name, record in records.items()} == result.points
    assert min(result.points.values()) < 0


def test_head_to_head_counts_finished_matches_only_and_wins_by_others() -> None:
    matches = [
        played(["Ann", "Bob"], "gin", "gin"),  # Bob wins
        played(["Bob", "Ann"], "knock"),  # unfinished
        played(["ann", "BOB"], "gin", "gin"),  # Bob wins, spelled otherwise
    ]
    three = Match(["Ann", "Bob", "Cat"], Rules(scoring="penalty", max_players=4, rounds_limit=1), dealer="Cat")
    three.record_round(
        C("KD"),
        {
            "Cat": parse_cards("3C 4C 5C 6H 6S 6D 2H"),
            "Bob": parse_cards("KH KS QD JD 9S 8S 7H"),
            "Ann": parse_cards("AS AD 2S 9C 9D 10H QC"),
        },
        "Cat",
    )
    assert three.winner == "Cat"
    pairs = {(pair.first, pair.second): pair.to_dict() for pair in head_to_head([*matches, three])}
    assert pairs[("Ann", "Bob")] == dict(first="Ann", second="Bob", matches=3, first_won=0, second_won=2)
    assert pairs[("Ann", "Cat")] == dict(first="Ann", second="Cat", matches=1, first_won=0, second_won=1)
    assert next(iter(pairs)) == ("Ann", "Bob")
