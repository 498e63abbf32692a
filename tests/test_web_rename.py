"""A player renamed in a match (a typo, "Anm", fixed after the match began): everywhere the match holds the name, in
one change of the match, its scores unchanged."""

from __future__ import annotations

from typing import Any

import pytest
import web_fixtures
from flask import Flask
from flask.testing import FlaskClient
from test_web_import import KEPT, exported, played_match
from web_fixtures import ROUND, FakeDetector, new_match

from web import create_app

app, client, detector = web_fixtures.app, web_fixtures.client, web_fixtures.detector
LAID = ROUND | {"layoffs": {"Bob": ["QC onto 8C 9C 10C JC", "QH onto 9H 10H JH"]}}
"""Ann knocks (+18), Bob's layoffs given: a round keyed by name in its hands and its layoffs."""


def match_url(match_id: int) -> str:
    return f"/api/matches/{match_id}"


def rename(client: FlaskClient, match_id: int, seat: int, name: Any, revision: Any) -> Any:
    return client.put(f"{match_url(match_id)}/players/{seat}", json={"name": name, "revision": revision})


def played(client: FlaskClient) -> dict[str, Any]:
    """Ann and Bob (Bob deals first): Ann's knock with Bob's layoffs, a draw, round 3 edited into a draw and undone
    (two earlier versions), then Bob's two gins win the match. The match as its last round answered it."""
    match: dict[str, Any] = client.get(match_url(played_match(client, first=LAID))).json
    assert match["winner"] == "Bob" and len(match["earlier_versions"]) == 2
    return match


def called(value: Any, old: str, new: str) -> Any:
    """``value`` (a match's JSON) with every string ``old``, as a value or a key, made ``new``."""
    if isinstance(value, dict):
        return {called(key, old, new): called(part, old, new) for key, part in value.items()}
    if isinstance(value, list):
        return [called(part, old, new) for part in value]
    return new if value == old else value


def test_a_renamed_player_is_renamed_everywhere_and_the_match_scores_the_same(client: FlaskClient) -> None:
    before = played(client)
    answer = rename(client, before["id"], 2, "  Bobby ", before["revision"])
    assert answer.status_code == 200, answer.json
    after = answer.json
    # the players, first dealer, dealers, winner, every round's knocker, hands and layoffs, the earlier versions, the
    # points and totals by name: all as they were, under the new name (and a revision more)
    assert after == called(before, "Bob", "Bobby") | {"revision": before["revision"] + 1}
    assert after["players"] == ["Ann", "Bobby"] and after["first_dealer"] == "Bobby" and after["winner"] == "Bobby"
    assert after["final_totals"] == {"Ann": before["final_totals"]["Ann"], "Bobby": before["final_totals"]["Bob"]}
    assert list(after["rounds"][0]["input"]["layoffs"]) == ["Bobby"]
    assert client.get(match_url(before["id"])).json == after


def test_the_rename_is_stored_not_only_cached(app: Flask, client: FlaskClient, detector: FakeDetector) -> None:
    before = played(client)
    after = rename(client, before["id"], 1, "Anne", before["revision"]).json
    restarted = create_app({"TESTING": True, "DATA_DIR": app.config["DATA_DIR"], "DETECTOR": detector})
    assert restarted.test_client().get(match_url(before["id"])).json == after
    listed = restarted.test_client().get("/api/matches").json["matches"][0]
    assert listed["players"] == ["Anne", "Bob"]


def test_an_earlier_version_comes_back_under_the_new_name(client: FlaskClient) -> None:
    match_id = new_match(client)
    revision = client.post(f"{match_url(match_id)}/rounds", json=ROUND).json["match"]["revision"]
    edited = client.put(f"{match_url(match_id)}/rounds/1?revision={revision}", json={"draw": True}).json
    renamed = rename(client, match_id, 1, "Anne", edited["revision"]).json
    (kept,) = renamed["earlier_versions"]
    assert kept["input"]["knocker"] == "Anne" and kept["points"] == {"Anne": 18, "Bob": 0}
    assert kept["restore"] == "edit"
    answer = client.post(
        f"{match_url(match_id)}/earlier-versions/{kept['id']}/restore", json={"revision": renamed["revision"]}
    )
    assert answer.status_code == 200, answer.json
    assert answer.json["totals"] == {"Anne": 18, "Bob": 0} and answer.json["rounds"][0]["input"]["knocker"] == "Anne"


def test_a_renamed_match_is_exported_and_opened_again_under_the_new_name(client: FlaskClient) -> None:
    before = played(client)
    rename(client, before["id"], 2, "Bobby", before["revision"])
    original = exported(client, before["id"])
    assert original["players"] == ["Ann", "Bobby"]
    answer = client.post("/api/matches/import", json=original)
    assert answer.status_code == 201, answer.json
    assert answer.json["notes"] == []
    copy = exported(client, answer.json["id"])
    assert {key: copy[key] for key in KEPT} == {key: original[key] for key in KEPT}
    assert [version["input"] for version in copy["earlier_versions"]] == [
        version["input"] for version in original["earlier_versions"]
    ]


def test_the_records_count_the_renamed_player_under_the_new_name(client: FlaskClient) -> None:
    before = played(client)
    won = {record["name"]: record["won"] for record in client.get("/api/players").json["players"]}
    assert won == {"Bob": 1, "Ann": 0}
    rename(client, before["id"], 2, "Bobby", before["revision"])
    records = client.get("/api/players").json
    assert {record["name"]: (record["won"], record["gins"]) for record in records["players"]} == {
        "Bobby": (1, 2),
        "Ann": (0, 0),
    }
    pairs = [(pair["first"], pair["second"], pair["matches"]) for pair in records["head_to_head"]]
    assert sorted(pairs[0][:2]) == ["Ann", "Bobby"] and pairs[0][2] == 1 and len(pairs) == 1


def test_a_rename_asked_of_an_older_sheet_is_refused(client: FlaskClient) -> None:
    before = played(client)
    answer = rename(client, before["id"], 1, "Anne", before["revision"] - 1)
    assert answer.status_code == 409 and "changed since" in answer.json["error"]
    assert answer.json["match"] == before
    assert client.get(match_url(before["id"])).json == before


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("Bob", "'Bob' is Bob's name already: players' names must differ"),
        ("  bob ", "'bob' is Bob's name already"),
        ("Bo\u0308b", None),  # told apart from Bob: another letter
        ("", "player names must be 1 to 40 characters"),
        ("   ", "player names must be 1 to 40 characters"),
        ("A" * 41, "player names must be 1 to 40 characters"),
        ("Ann\ud800", "holds a lone surrogate"),
        ("Ann\u202e", "holds a text-direction control"),
        ("\u200b", "shows none"),
        (7, 'send "name"'),
        (None, 'send "name"'),
    ],
)
def test_a_name_a_new_match_would_refuse_is_refused(client: FlaskClient, name: Any, said: str | None) -> None:
    match_id = new_match(client)
    answer = rename(client, match_id, 1, name, 0)
    if said is None:
        assert answer.status_code == 200, answer.json
        return
    assert answer.status_code == 400 and said in answer.json["error"], answer.json
    assert client.get(match_url(match_id)).json["players"] == ["Ann", "Bob"]


@pytest.mark.parametrize(("seat", "revision", "status"), [(3, 0, 404), (0, 0, 404), (1, None, 400), (1, -1, 400)])
def test_a_seat_nobody_sits_in_or_no_revision_is_refused(
    client: FlaskClient, seat: int, revision: Any, status: int
) -> None:
    match_id = new_match(client)
    answer = rename(client, match_id, seat, "Anne", revision)
    assert answer.status_code == status and answer.json["error"]
    assert client.get(match_url(match_id)).json["revision"] == 0


def test_a_rename_to_the_name_held_changes_nothing_and_one_sent_twice_counts_once(client: FlaskClient) -> None:
    match_id = new_match(client)
    unchanged = rename(client, match_id, 1, " Ann ", 0)
    assert unchanged.status_code == 200 and unchanged.json["revision"] == 0
    first, second = (rename(client, match_id, 1, "Anne", 0) for _ in range(2))
    assert first.status_code == second.status_code == 200
    assert first.json == second.json and first.json["revision"] == 1 and first.json["players"] == ["Anne", "Bob"]


def test_a_player_may_fix_the_case_of_their_own_name(client: FlaskClient) -> None:
    match_id = new_match(client)
    answer = rename(client, match_id, 2, "BOB", 0)
    assert answer.status_code == 200 and answer.json["players"] == ["Ann", "BOB"]


def test_a_name_an_earlier_version_of_a_match_file_gives_a_stranger_is_refused(client: FlaskClient) -> None:
    """A match file's earlier versions are read, not scored: one may name someone who is not a player, and renaming a
    player so would make one hand of two."""
    match_id = new_match(client)
    client.post(f"{match_url(match_id)}/rounds", json=ROUND)
    client.delete(f"{match_url(match_id)}/rounds/1")
    saved = exported(client, match_id)
    saved["earlier_versions"][0]["input"]["hands"]["Zed"] = []
    opened = client.post("/api/matches/import", json=saved)
    assert opened.status_code == 201, opened.json
    answer = rename(client, opened.json["id"], 1, "Zed", 0)
    said = "Ann cannot be called Zed: in an earlier version of round 1, the round names 'Zed' already, beside 'Ann'"
    assert (answer.status_code, answer.json["error"]) == (400, said)
    assert client.get(match_url(opened.json["id"])).json["players"] == ["Ann", "Bob"]
