"""Every option of the rules page reaches the score, end to end: a match made through the API with the option set, a
hand that the option decides, the points worked out by hand from the rules page's text, the sheet's words, and the
match file opened again; then the set-up form (each field kept after an error) and ``okgin score``'s options."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
import web_fixtures
from click.testing import CliRunner
from flask.testing import FlaskClient
from test_web_pages import form_token

from scorer.cli import main

app, client, detector = web_fixtures.app, web_fixtures.client, web_fixtures.detector

ANN_KNOCKS = {"Ann": "8C 9C 10C JC 9H 10H JH 2S 2D AC", "Bob": "QS QC QH 10S JS 3D 5H 7S AD 7D"}
"""Ann knocks with 5 (2S 2D AC); Bob lays off QC and QH onto nothing of Ann's: his best keeps 23."""
KNOCK = {"upcard": "KH", "knocker": "Ann", "hands": ANN_KNOCKS}  # knock won: 23 - 5 = 18
KNOCK_ON_SPADE = {**KNOCK, "upcard": "KS"}
UNDERCUT = {  # Ann 5 (5D), Bob 3 (3D): Bob scores undercut_bonus + 2
    "upcard": "10D",
    "knocker": "Ann",
    "hands": {"Ann": "AS 2S 3S 4H 5H 6H 7C 8C 9C 5D", "Bob": "KC KD KH QC QD QH JC JD JH 3D"},
}
LOW_UPCARD = {**UNDERCUT, "upcard": "3D", "hands": {**UNDERCUT["hands"], "Bob": "KC KD KH QC QD QH JC JD JH 10D"}}
"""Ann knocks with 5 on a 3 upcard; Bob has no deadwood (three runs J-Q-K and 10D J-Q-K of diamonds): undercut 15."""
GIN = {  # Ann has no deadwood; Bob keeps JC JD 3D 5D = 28 (no layoffs onto gin): gin_bonus + 28
    "upcard": "10D",
    "knocker": "Ann",
    "hands": {"Ann": "AS 2S 3S 4H 5H 6H 7C 8C 9C 10C", "Bob": "KC KD KH QC QD QH JC JD 3D 5D"},
}
ACE_UPCARD = {  # Ann knocks with 1 (AD) on an ace upcard; Bob 3: knock won, 2
    "upcard": "AH",
    "knocker": "Ann",
    "hands": {"Ann": "AS 2S 3S 4H 5H 6H 7C 8C 9C AD", "Bob": UNDERCUT["hands"]["Bob"]},
}
THREE = ["Ann", "Bob", "Cat"]
PENALTY_KNOCK = {  # Ann 2 (2C), Bob 28 (9H 8H 6S 5H), Cat 24 (4D 5C 6C 9D): +10, -26, -22
    "upcard": "KD",
    "knocker": "Ann",
    "hands": {"Ann": "AS 2S 3S 7H 7D 7C 2C", "Bob": "KC QC JC 9H 8H 6S 5H", "Cat": "10H 10S 10D 4D 5C 6C 9D"},
}
PENALTY_UNDERCUT = {  # Cat 1 (AD) <= Ann's 2: Cat +20, Ann -(2 - 1), Bob -(28 - 1)
    **PENALTY_KNOCK,
    "hands": {**PENALTY_KNOCK["hands"], "Cat": "10H 10S 10D 4D 5D 6D AD"},
}
PENALTY_GIN = {  # Ann no deadwood: +25, Bob -2 x 28, Cat -2 x 24
    **PENALTY_KNOCK,
    "hands": {**PENALTY_KNOCK["hands"], "Ann": "AS 2S 3S 7H 7D 7C 4S"},
}
TIE = {  # Bob knocks with 2; Cat (from his left) and Ann hold 1 each: the undercut is Cat's, nearest Bob's left
    "upcard": "KD",
    "knocker": "Bob",
    "hands": {"Ann": "KC QC JC 9H 9D 9S AC", "Bob": "AS 2S 3S 7H 7D 7C 2C", "Cat": "10H 10S 10D 4D 5D 6D AD"},
}

Points = dict[str, int]


def case(
    name: str,
    preset: str,
    players: list[str],
    options: dict[str, Any],
    rounds: list[dict[str, Any]],
    points: list[Points],
    bonuses: Points,
    winner: str | None,
    said: str,
) -> Any:
    """A match made with ``options``, these ``rounds`` played: each round's ``points`` and the final ``bonuses`` as
    worked out by hand from the rules page, the ``winner``, and a term the sheet ``said``."""
    return pytest.param(preset, players, options, rounds, points, bonuses, winner, said, id=name)


CASES = [
    case(
        "upcard limit",
        "oklahoma",
        ["Ann", "Bob"],
        {},
        [KNOCK],
        [{"Ann": 18, "Bob": 0}],
        {},
        None,
        "knock with the upcard's value or less (ace 1, faces 10)",
    ),
    case(
        "gin rummy's 10",
        "gin-rummy",
        ["Ann", "Bob"],
        {},
        [LOW_UPCARD],
        [{"Ann": 0, "Bob": 15}],
        {},
        None,
        "knock with 10 or less",
    ),
    case(
        "knock_limit 5",
        "oklahoma",
        ["Ann", "Bob"],
        {"knock_limit": 5},
        [LOW_UPCARD],
        [{"Ann": 0, "Bob": 15}],
        {},
        None,
        "knock with 5 or less",
    ),
    case(
        "undercut_bonus",
        "oklahoma",
        ["Ann", "Bob"],
        {"undercut_bonus": 15},
        [UNDERCUT],
        [{"Ann": 0, "Bob": 17}],
        {},
        None,
        "undercut (a tie too): 15 + the difference",
    ),
    case(
        "gin_bonus 25",
        "oklahoma",
        ["Ann", "Bob"],
        {},
        [GIN],
        [{"Ann": 53, "Bob": 0}],
        {},
        None,
        "gin: 25 + the other's deadwood",
    ),
    case(
        "gin_bonus 20",
        "oklahoma",
        ["Ann", "Bob"],
        {"gin_bonus": 20},
        [GIN],
        [{"Ann": 48, "Bob": 0}],
        {},
        None,
        "gin: 20 + the other's deadwood",
    ),
    case(
        "ace upcard, extra off",
        "oklahoma",
        ["Ann", "Bob"],
        {},
        [ACE_UPCARD],
        [{"Ann": 2, "Bob": 0}],
        {},
        None,
        "knock won: the deadwood difference",
    ),
    case(
        "spade_doubles",
        "oklahoma",
        ["Ann", "Bob"],
        {"spade_doubles": True},
        [KNOCK_ON_SPADE, KNOCK],
        [{"Ann": 36, "Bob": 0}, {"Ann": 18, "Bob": 0}],
        {},
        None,
        "a spade upcard doubles the round",
    ),
    case(
        "target >=",
        "oklahoma",
        ["Ann", "Bob"],
        {"target": 18},
        [KNOCK],
        [{"Ann": 18, "Bob": 0}],
        {},
        "Ann",
        "the match: to 18",
    ),
    case(
        "target_rule >",
        "oklahoma",
        ["Ann", "Bob"],
        {"target": 18, "target_rule": ">"},
        [KNOCK, KNOCK],
        [{"Ann": 18, "Bob": 0}, {"Ann": 18, "Bob": 0}],
        {},
        "Ann",
        "the match: over 18",
    ),
    case(
        "rounds_limit, a draw void",
        "oklahoma",
        ["Ann", "Bob"],
        {"rounds_limit": 2},
        [KNOCK, {"draw": True}, UNDERCUT],
        [{"Ann": 18, "Bob": 0}, {"Ann": 0, "Bob": 0}, {"Ann": 0, "Bob": 12}],
        {},
        "Ann",
        "the match: to 100 or 2 rounds",
    ),
    case(
        "box and game bonus",
        "oklahoma",
        ["Ann", "Bob"],
        {"target": 30, "box_bonus": 25, "game_bonus": 100},
        [UNDERCUT, KNOCK, KNOCK],
        [{"Ann": 0, "Bob": 12}, {"Ann": 18, "Bob": 0}, {"Ann": 18, "Bob": 0}],
        {"Ann": 2 * 25 + 100, "Bob": 25},
        "Ann",
        "at the end, 25 for each round won",
    ),
    case(
        "shutout_doubles",
        "oklahoma",
        ["Ann", "Bob"],
        {"target": 30, "box_bonus": 25, "game_bonus": 100, "shutout_doubles": True},
        [KNOCK, KNOCK],
        [{"Ann": 18, "Bob": 0}, {"Ann": 18, "Bob": 0}],
        {"Ann": 50 + 100 + (36 + 50 + 100)},
        "Ann",
        "the winner's score doubles when no one else won a round",
    ),
    case(
        "no shutout: the other won a round",
        "oklahoma",
        ["Ann", "Bob"],
        {"target": 30, "shutout_doubles": True},
        [UNDERCUT, KNOCK, KNOCK],
        [{"Ann": 0, "Bob": 12}, {"Ann": 18, "Bob": 0}, {"Ann": 18, "Bob": 0}],
        {},
        "Ann",
        "the winner's score doubles when no one else won a round",
    ),
    case(
        "penalty knock",
        "oklahoma-multi",
        THREE,
        {},
        [PENALTY_KNOCK],
        [{"Ann": 10, "Bob": -26, "Cat": -22}],
        {},
        None,
        "knock won: 10 to the knocker, the others lose their deadwood above his",
    ),
    case(
        "penalty undercut",
        "oklahoma-multi",
        THREE,
        {},
        [PENALTY_UNDERCUT],
        [{"Ann": -1, "Bob": -27, "Cat": 20}],
        {},
        None,
        "undercut: 20 to the lowest deadwood, the others lose theirs above it",
    ),
    case(
        "penalty undercut tie",
        "oklahoma-multi",
        THREE,
        {},
        [TIE],
        [{"Ann": 0, "Bob": -1, "Cat": 20}],
        {},
        None,
        "undercut: 20 to the lowest deadwood, the others lose theirs above it",
    ),
    case(
        "penalty gin",
        "oklahoma-multi",
        THREE,
        {},
        [PENALTY_GIN],
        [{"Ann": 25, "Bob": -56, "Cat": -48}],
        {},
        None,
        "gin: 25 to the knocker, the others lose 2 x their deadwood",
    ),
    case(
        "penalty points",
        "oklahoma-multi",
        THREE,
        {"penalty_knock_points": 15, "penalty_undercut_points": 30, "penalty_gin_multiplier": 3, "gin_bonus": 20},
        [PENALTY_KNOCK, PENALTY_UNDERCUT, PENALTY_GIN],
        [{"Ann": 15, "Bob": -26, "Cat": -22}, {"Ann": -1, "Bob": -27, "Cat": 30}, {"Ann": 20, "Bob": -84, "Cat": -72}],
        {},
        None,
        "gin: 20 to the knocker, the others lose 3 x their deadwood",
    ),
    case(
        "penalty spade",
        "oklahoma-multi",
        THREE,
        {"spade_doubles": True},
        [{**PENALTY_KNOCK, "upcard": "KS"}],
        [{"Ann": 20, "Bob": -52, "Cat": -44}],
        {},
        None,
        "a spade upcard doubles the round",
    ),
    case(
        "penalty match end",
        "oklahoma-multi",
        THREE,
        {"target": 10, "box_bonus": 5, "game_bonus": 7, "shutout_doubles": True},
        [PENALTY_KNOCK],
        [{"Ann": 10, "Bob": -26, "Cat": -22}],
        {"Ann": 5 + 7 + (10 + 5 + 7)},
        "Ann",
        "at the end, 7 to the winner",
    ),
    case(
        "multi-player rules for two",
        "oklahoma-multi",
        ["Ann", "Bob"],
        {},
        [KNOCK],
        [{"Ann": 10, "Bob": -18}],
        {},
        None,
        "knock won: 10 to the knocker, the others lose their deadwood above his",
    ),
]


def sheet_terms(client: FlaskClient, match_id: int) -> str:
    page = client.get(f"/matches/{match_id}/sheet").get_data(as_text=True)
    found = re.search(r'<details class="rules-terms">(.*?)</details>', page, re.S)
    assert found
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html.unescape(found.group(1))))


@pytest.mark.parametrize(
    ("preset", "players", "options", "rounds", "points", "bonuses", "winner", "said"),
    CASES,
)
def test_each_option_scores_as_the_rules_page_says_and_survives_the_match_file(
    client: FlaskClient,
    preset: str,
    players: list[str],
    options: dict[str, Any],
    rounds: list[dict[str, Any]],
    points: list[dict[str, int]],
    bonuses: dict[str, int],
    winner: str | None,
    said: str,
) -> None:
    made = client.post("/api/matches", json={"players": players, "rules": preset, "options": options, "dealer": "Ann"})
    assert made.status_code == 201, made.json
    match_id = made.json["id"]
    for body in rounds:
        assert client.post(f"/api/matches/{match_id}/rounds", json=body).status_code == 201
    state = client.get(f"/api/matches/{match_id}").json
    assert [line["points"] for line in state["rounds"]] == points
    assert (state["final_bonuses"], state["winner"]) == ({name: bonuses.get(name, 0) for name in players}, winner)
    assert {name: value for name, value in state["rules"].items() if name in options} == options
    assert said in sheet_terms(client, match_id)
    saved = json.loads(client.get(f"/matches/{match_id}/export.json").get_data())
    opened = client.post("/api/matches/import", json=saved)
    assert opened.status_code == 201 and opened.json["notes"] == [], opened.json
    copy = client.get(f"/api/matches/{opened.json['id']}").json
    kept = ("rules", "terms", "goal", "totals", "final_bonuses", "final_totals", "winner")
    assert {key: copy[key] for key in kept} == {key: state[key] for key in kept}


@pytest.mark.parametrize(
    ("options", "body", "refused"),
    [
        ({}, LOW_UPCARD, "over the knock limit 3 set by upcard 3D"),
        ({"knock_limit": 4}, LOW_UPCARD, "over the knock limit 4"),
        ({"knock_limit": 0}, KNOCK, "over the knock limit 0"),
        ({"ace_upcard_gin_only": True}, ACE_UPCARD, "knock limit 0 with ace upcard AH (only gin ends the round)"),
    ],
)
def test_a_knock_over_the_options_limit_is_refused_by_name(
    client: FlaskClient, options: dict[str, Any], body: dict[str, Any], refused: str
) -> None:
    match_id = client.post("/api/matches", json={"players": ["Ann", "Bob"], "options": options}).json["id"]
    answer = client.post(f"/api/matches/{match_id}/rounds", json=body)
    assert answer.status_code == 400 and refused in answer.json["error"]


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"gin_bonus": -1}, "gin_bonus must be a whole number 0-1000, not -1"),
        ({"gin_bonus": "25"}, "gin_bonus must be a whole number 0-1000, not '25'"),
        ({"undercut_bonus": True}, "undercut_bonus must be a whole number 0-1000, not true"),
        ({"knock_limit": 11}, "knock_limit must be 'upcard' or a whole number 0-10, not 11"),
        ({"target": 0}, "target must be a whole number 1-10000, not 0"),
        ({"target_rule": "=>"}, "target_rule must be '>=' or '>', not '=>'"),
        ({"rounds_limit": 0}, "rounds_limit must be a whole number 1-1000, not 0"),
        ({"box_bonus": 2.5}, "box_bonus must be a whole number 0-1000, not 2.5"),
        ({"spade_doubles": "yes"}, "spade_doubles must be true or false, not 'yes'"),
        ({"penalty_gin_multiplier": 11}, "penalty_gin_multiplier must be a whole number 0-10, not 11"),
        ({"max_players": 3}, "standard scoring is for 2 players; 3 need scoring='penalty'"),
        ({"preset": "gin-rummy"}, "the preset is named once"),
        ({"nope": 1}, "unknown rules option 'nope'"),
    ],
)
def test_an_option_out_of_bounds_is_refused_naming_it(client: FlaskClient, options: dict[str, Any], said: str) -> None:
    answer = client.post("/api/matches", json={"players": ["Ann", "Bob"], "rules": "oklahoma", "options": options})
    assert answer.status_code == 400 and said in answer.json["error"]


FORM = {
    "player": ["Ann", "ann", "", ""],  # names that differ by case only: the form comes back with the error
    "preset": "gin-rummy",
    "gin_bonus": "20",
    "undercut_bonus": "15",
    "penalty_knock_points": "11",
    "penalty_undercut_points": "22",
    "penalty_gin_multiplier": "3",
    "target": "150",
    "target_rule": ">",
    "rounds_limit": "7",
    "ace_upcard_gin_only": "on",
    "spade_doubles": "on",
    "shutout_doubles": "on",
    "box_bonus": "25",
    "game_bonus": "100",
    "dealer": "2",
}


def test_the_set_up_form_keeps_every_option_after_an_error_and_then_sets_each(client: FlaskClient) -> None:
    refused = client.post("/matches", data={"csrf_token": form_token(client), **FORM})
    assert refused.status_code == 400
    page = refused.get_data(as_text=True)
    assert "player names must differ" in page
    for name in ("undercut_bonus", "penalty_knock_points", "penalty_undercut_points", "penalty_gin_multiplier",
                 "target", "rounds_limit", "box_bonus", "game_bonus"):  # fmt: skip
        assert re.search(rf'name="{name}" [^>]*value="{FORM[name]}"', page), name
    for name in ("ace_upcard_gin_only", "spade_doubles", "shutout_doubles"):
        assert re.search(rf'name="{name}" checked', page), name
    for name, value in (("preset", "gin-rummy"), ("gin_bonus", "20"), ("target_rule", "&gt;"), ("dealer", "2")):
        select = re.search(rf'<select id="{name}".*?</select>', page, re.S)
        assert select and re.search(rf'<option value="{value}"[^>]* selected', select.group(0)), name
    made = client.post("/matches", data={"csrf_token": form_token(client), **FORM, "player": ["Ann", "Bob", "", ""]})
    assert made.status_code == 303
    rules = client.get("/api/matches/1").json["rules"]
    assert rules == {
        "preset": "gin-rummy",
        "knock_limit": 10,
        "gin_bonus": 20,
        "undercut_bonus": 15,
        "target": 150,
        "target_rule": ">",
        "ace_upcard_gin_only": True,
        "spade_doubles": True,
        "box_bonus": 25,
        "game_bonus": 100,
        "shutout_doubles": True,
        "max_players": 2,
        "scoring": "standard",
        "penalty_knock_points": 11,
        "penalty_undercut_points": 22,
        "penalty_gin_multiplier": 3,
        "rounds_limit": 7,
    }


def okgin_score(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["score", *args])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ((), "undercut: Bob scores 12"),
        (("--undercut-bonus", "15"), "undercut: Bob scores 17"),
        (("--spade-doubles", "--upcard", "10S"), "undercut: Bob scores 24 (doubled: spade upcard)"),
        (("--rules", "oklahoma-multi", "--undercut-points", "30"), "undercut: Bob +30, Ann -2"),
        (("--knock-limit", "4"), "over the knock limit 4"),
        (("--knock-limit", "11"), "knock_limit must be 'upcard' or a whole number 0-10, not 11"),
        (("--gin-bonus", "-1"), "gin_bonus must be a whole number 0-1000, not -1"),
        (("--knock-points", "5"), "--knock-points counts in penalty scoring only"),
    ],
)
def test_okgin_score_takes_each_round_option(args: tuple[str, ...], said: str) -> None:
    hands = UNDERCUT["hands"]
    upcard = () if "--upcard" in args else ("--upcard", "10D")
    _, output = okgin_score(*upcard, "--knocker", f"Ann: {hands['Ann']}", "--opponent", f"Bob: {hands['Bob']}", *args)
    assert said in output


def test_okgin_score_takes_the_gin_bonus_and_the_ace_rule() -> None:
    hands = GIN["hands"]
    _, output = okgin_score(
        "--upcard", "10D", "--knocker", hands["Ann"], "--opponent", hands["Bob"], "--gin-bonus", "20"
    )
    assert "gin: knocker scores 48" in output
    hands = ACE_UPCARD["hands"]
    code, output = okgin_score(
        "--upcard", "AH", "--knocker", hands["Ann"], "--opponent", hands["Bob"], "--ace-gin-only"
    )
    assert code != 0 and "only gin ends the round" in output
