"""What the server tells the table page is legal (issue 10, problem 7): the page shows it and decides nothing."""

from __future__ import annotations

import web_fixtures
from flask.testing import FlaskClient
from web_fixtures import ANN, BOB, ROUND, new_match

app, client, detector = web_fixtures.app, web_fixtures.client, web_fixtures.detector

ARRANGE = {"upcard": "KS", "hands": {"Ann": ANN, "Bob": BOB}}


def test_one_card_extra_shows_the_deadwood_after_the_best_discard(client: FlaskClient) -> None:
    answer = client.post("/api/arrange", json=ARRANGE | {"hands": {"Ann": ANN + " KD", "Bob": BOB}}).json
    ann = answer["players"]["Ann"]
    assert (ann["discard"], ann["deadwood_points"], ann["can_knock"], ann["problem"]) == ("KD", 5, True, None)
    assert answer["proposed_knocker"] == "Ann" and answer["reason"] is None
    scored = client.post("/api/score", json=ROUND | {"hands": {"Ann": ANN + " KD", "Bob": BOB}}).json
    assert scored["discard"] == "KD", "the proposal says which card the 11-card hand discards"


def test_a_hand_of_the_wrong_size_never_may_knock(client: FlaskClient) -> None:
    match_id = new_match(client, players=["Ann", "Bob", "Cat"], rules="oklahoma-multi")
    body = {"match": match_id, "upcard": "KS", "hands": {"Ann": ANN, "Bob": "", "Cat": "2C 3C"}}
    answer = client.post("/api/arrange", json=body).json
    ann, bob = answer["players"]["Ann"], answer["players"]["Bob"]
    assert ann["can_knock"] is False
    assert ann["problem"] == "10 cards: Multi-player Oklahoma Gin deals 7 (a knocker holds 8 before the discard)"
    assert bob["can_knock"] is False and bob["problem"] == "0 cards: Multi-player Oklahoma Gin deals 7"
    assert answer["proposed_knocker"] is None and answer["reason"] == "nobody may knock yet"


def test_no_knock_is_proposed_once_the_match_is_won_or_when_two_may_knock(client: FlaskClient) -> None:
    match_id = new_match(client, options={"target": 10})
    assert client.post("/api/arrange", json=ARRANGE | {"match": match_id}).json["proposed_knocker"] == "Ann"
    client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    over = client.post("/api/arrange", json=ARRANGE | {"match": match_id}).json
    assert over["proposed_knocker"] is None and over["reason"] == "the match is over: Ann won"
    both = {"upcard": "KS", "hands": {"Ann": ANN, "Bob": "3S 4S 5S 4D 5D 6D 6H 7H 8H KH"}}
    assert client.post("/api/arrange", json=both).json["reason"] == "Ann and Bob may each knock: say who knocked"
    short = {"upcard": "KS", "hands": {"Ann": ANN, "Bob": "QS QC QH"}}
    assert client.post("/api/arrange", json=short).json["reason"] == "Bob holds 3 cards, not 10"


def test_rule_names_in_errors_are_the_ones_players_know(client: FlaskClient) -> None:
    answer = client.post("/api/matches", json={"players": ["Ann", "Bob", "Cat"], "rules": "oklahoma"})
    assert answer.status_code == 400
    assert "Oklahoma Gin is for 2 players, not 3: choose Multi-player Oklahoma Gin" in answer.json["error"]
