"""A round's earlier versions: what an edit replaced or an undo removed is kept by the server and can be put back at
any later time (before, a round edited into a draw or undone by mistake was gone once its notice was)."""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import web_fixtures
from flask import Flask
from flask.testing import FlaskClient
from test_web_rounds import run_together
from web_fixtures import ANN, BOB, ROUND, database_at, new_match

from scorer.cards import DECK
from scorer.match import Draw, Knock, RoundInput, parse_round_input
from web import create_app
from web.db import init_db, migrations
from web.round_history import EDITED, MAX_EARLIER_VERSIONS, UNDONE, EarlierVersion, Restore, restore

app, client, detector = web_fixtures.app, web_fixtures.client, web_fixtures.detector

KNOCK = parse_round_input(ROUND)
BOB_KNOCKS = {"upcard": "KD", "knocker": "Bob", "hands": {"Ann": "AS AH 9S 9D 4D JC QC 8H 6S 3S",
              "Bob": "2C 3C 4C 6D 7D 8D KH KS KC AD"}}  # fmt: skip
"""Bob knocks with 1 against Ann's 52: Bob scores 51."""


def match_url(match_id: int) -> str:
    return f"/api/matches/{match_id}"


def restore_url(match_id: int, version_id: int) -> str:
    return f"{match_url(match_id)}/earlier-versions/{version_id}/restore"


def added(client: FlaskClient, match_id: int, *bodies: dict[str, Any]) -> dict[str, Any]:
    match: dict[str, Any] = {}
    for body in bodies:
        answer = client.post(f"{match_url(match_id)}/rounds", json=body)
        assert answer.status_code == 201, answer.json
        match = answer.json["match"]
    return match


def edited_into_a_draw(client: FlaskClient) -> tuple[int, dict[str, Any]]:
    """A new match whose round 1 (Ann +18) was edited into a draw; the match as the edit answered it."""
    match_id = new_match(client)
    revision = added(client, match_id, ROUND)["revision"]
    answer = client.put(f"{match_url(match_id)}/rounds/1?revision={revision}", json={"draw": True})
    assert answer.status_code == 200 and answer.json["totals"] == {"Ann": 0, "Bob": 0}
    return match_id, answer.json


def test_an_edit_keeps_what_the_round_held_and_it_is_put_back(client: FlaskClient) -> None:
    match_id, match = edited_into_a_draw(client)
    (kept,) = match["earlier_versions"]
    assert kept["number"] == 1 and kept["replaced_by"] == "edited" and kept["input"] == KNOCK.to_dict()
    assert (kept["restore"], kept["why_not"]) == ("edit", None)
    answer = client.post(restore_url(match_id, kept["id"]), json={"revision": match["revision"]})
    assert answer.status_code == 200
    back = answer.json
    assert back["totals"] == {"Ann": 18, "Bob": 0} and back["rounds"][0]["input"] == KNOCK.to_dict()
    # the draw it replaced is kept in turn (put back, it is a change like any other), and the knock is the round now
    assert [(v["input"], v["restore"]) for v in back["earlier_versions"]] == [
        ({"draw": True}, "edit"),
        (KNOCK.to_dict(), None),
    ]
    assert back["earlier_versions"][1]["why_not"] == "round 1 holds this now"
    assert client.get(match_url(match_id)).json == back


def test_an_edit_that_changes_nothing_keeps_nothing(client: FlaskClient) -> None:
    match_id = new_match(client)
    revision = added(client, match_id, ROUND)["revision"]
    answer = client.put(f"{match_url(match_id)}/rounds/1?revision={revision}", json=ROUND)
    assert answer.status_code == 200 and answer.json["earlier_versions"] == []


def test_a_restore_sent_twice_or_late_changes_no_score(client: FlaskClient) -> None:
    match_id, match = edited_into_a_draw(client)
    version = match["earlier_versions"][0]["id"]
    assert client.post(restore_url(match_id, version), json={"revision": match["revision"]}).status_code == 200
    twice = client.post(restore_url(match_id, version), json={"revision": match["revision"]})
    assert twice.status_code == 409 and "the score sheet changed since this was asked" in twice.json["error"]
    assert twice.json["match"]["totals"] == {"Ann": 18, "Bob": 0}
    # late: sent before round 2 was added, arriving after it
    now = added(client, match_id, BOB_KNOCKS)
    draw = now["earlier_versions"][0]
    late = client.post(restore_url(match_id, draw["id"]), json={"revision": now["revision"] - 1})
    assert late.status_code == 409
    assert client.get(match_url(match_id)).json["totals"] == {"Ann": 18, "Bob": 51}


def test_racing_restores_put_back_once_and_keep_one_version(app: Flask, client: FlaskClient) -> None:
    match_id, match = edited_into_a_draw(client)
    body = {"revision": match["revision"]}
    url = restore_url(match_id, match["earlier_versions"][0]["id"])
    answers = run_together(app, 6, lambda own, _: own.post(url, json=body).status_code)
    assert sorted(answers) == [200] + [409] * 5
    after = client.get(match_url(match_id)).json
    assert after["revision"] == match["revision"] + 1 and len(after["earlier_versions"]) == 2


def test_an_undone_round_is_kept_and_brought_back_as_the_next_round(client: FlaskClient) -> None:
    match_id = new_match(client)
    match = added(client, match_id, {"draw": True}, ROUND)
    undone = client.delete(f"{match_url(match_id)}/rounds/last?revision={match['revision']}").json
    (kept,) = undone["earlier_versions"]
    assert (kept["number"], kept["replaced_by"], kept["restore"]) == (2, "undone", "add")
    assert kept["input"] == KNOCK.to_dict() and undone["totals"] == {"Ann": 0, "Bob": 0}
    answer = client.post(restore_url(match_id, kept["id"]), json={"revision": undone["revision"]})
    assert answer.status_code == 200
    assert [line["number"] for line in answer.json["rounds"]] == [1, 2]
    assert answer.json["totals"] == {"Ann": 18, "Bob": 0} and answer.json["rounds"][1]["dealer"] == "Bob"
    again = client.post(restore_url(match_id, kept["id"]), json={"revision": answer.json["revision"]})
    assert again.status_code == 409
    assert again.json["error"] == "this earlier version of round 2 cannot be put back: round 2 holds this now"
    assert len(client.get(match_url(match_id)).json["rounds"]) == 2


def test_an_undone_round_whose_place_was_filled_again_is_refused(client: FlaskClient) -> None:
    match_id = new_match(client)
    match = added(client, match_id, ROUND)
    undone = client.delete(f"{match_url(match_id)}/rounds/1?revision={match['revision']}").json
    version = undone["earlier_versions"][0]["id"]
    filled = added(client, match_id, BOB_KNOCKS)
    listed = filled["earlier_versions"][0]
    assert listed["restore"] is None and "round 1 was entered again after this was undone" in listed["why_not"]
    answer = client.post(restore_url(match_id, version), json={"revision": filled["revision"]})
    assert answer.status_code == 409
    assert answer.json["error"] == (
        "this earlier version of round 1 cannot be put back: round 1 was entered again after this was undone, and"
        " bringing this back would replace it (Edit changes round 1)"
    )
    assert answer.json["match"]["totals"] == {"Ann": 0, "Bob": 51}


def edited_undone_and_dealt_again(client: FlaskClient) -> tuple[int, dict[str, Any]]:
    """A new match whose round 1 was Ann's knock (A), edited into a draw (B), undone, then entered as another deal,
    Bob's knock (C); the match as that last round left it, with A (edited) and B (undone) kept."""
    match_id, match = edited_into_a_draw(client)
    assert client.delete(f"{match_url(match_id)}/rounds/1?revision={match['revision']}").status_code == 200
    return match_id, added(client, match_id, BOB_KNOCKS)


def test_a_correction_of_a_deal_undone_is_not_put_over_the_deal_entered_in_its_place(client: FlaskClient) -> None:
    """It was: the knock that an edit replaced went back "into round 1" over Bob's knock, a deal entered after round
    1 was undone, which it never was a version of (the undone draw was already refused there)."""
    match_id, match = edited_undone_and_dealt_again(client)
    draw, knock = match["earlier_versions"]  # newest first: the draw undone, the knock the edit replaced
    assert (knock["replaced_by"], knock["input"], draw["replaced_by"]) == ("edited", KNOCK.to_dict(), "undone")
    assert knock["deal"] == draw["deal"] != match["deals"][0]
    why = (
        "round 1 was undone and entered again (another deal) after this was replaced, and bringing this back would"
        " replace it (Edit changes round 1)"
    )
    assert (knock["restore"], knock["why_not"]) == (None, why)
    answer = client.post(restore_url(match_id, knock["id"]), json={"revision": match["revision"]})
    assert answer.status_code == 409
    assert answer.json["error"] == f"this earlier version of round 1 cannot be put back: {why}"
    after = client.get(match_url(match_id)).json
    assert after["totals"] == {"Ann": 0, "Bob": 51} and after["revision"] == match["revision"]
    sheet = client.get(f"/matches/{match_id}/sheet-body?actions=1").get_data(as_text=True)
    assert f"Kept for the record: {why}." in sheet


def test_a_deal_brought_back_takes_its_corrections_back_too(client: FlaskClient) -> None:
    """An undone round brought back is the deal it was: what its edits replaced can go back into it."""
    match_id, match = edited_into_a_draw(client)
    match = client.delete(f"{match_url(match_id)}/rounds/1?revision={match['revision']}").json
    draw, knock = match["earlier_versions"]
    assert (draw["restore"], knock["restore"]) == ("add", "add")
    match = client.post(restore_url(match_id, draw["id"]), json={"revision": match["revision"]}).json
    assert match["deals"][0] == draw["deal"] == knock["deal"]
    assert next(v for v in match["earlier_versions"] if v["id"] == knock["id"])["restore"] == "edit"
    match = client.post(restore_url(match_id, knock["id"]), json={"revision": match["revision"]}).json
    assert match["totals"] == {"Ann": 18, "Bob": 0} and match["deals"][0] == knock["deal"]


def test_each_round_entered_is_a_deal_of_its_own_and_an_edit_keeps_it(client: FlaskClient) -> None:
    match_id = new_match(client)
    match = added(client, match_id, ROUND, {"draw": True})
    assert match["deals"] == [1, 2]
    match = client.put(f"{match_url(match_id)}/rounds/1?revision={match['revision']}", json=BOB_KNOCKS).json
    assert match["deals"] == [1, 2] and match["earlier_versions"][0]["deal"] == 1
    match = client.delete(f"{match_url(match_id)}/rounds/2?revision={match['revision']}").json
    match = added(client, match_id, {"draw": True})  # the same draw, entered again: a new entry, a new deal
    assert match["deals"] == [1, 3]


def test_rounds_undone_one_after_another_come_back_in_order(client: FlaskClient) -> None:
    match_id = new_match(client)
    match = added(client, match_id, ROUND, BOB_KNOCKS)
    match = client.delete(f"{match_url(match_id)}/rounds/2?revision={match['revision']}").json
    match = client.delete(f"{match_url(match_id)}/rounds/1?revision={match['revision']}").json
    first, second = match["earlier_versions"]  # newest first
    assert (second["number"], second["restore"]) == (2, None)
    assert second["why_not"] == "the sheet has no round 1: round 2 can only come back after it"
    refused = client.post(restore_url(match_id, second["id"]), json={"revision": match["revision"]})
    assert refused.status_code == 409 and "round 2 can only come back after it" in refused.json["error"]
    match = client.post(restore_url(match_id, first["id"]), json={"revision": match["revision"]}).json
    match = client.post(restore_url(match_id, second["id"]), json={"revision": match["revision"]}).json
    assert match["totals"] == {"Ann": 18, "Bob": 51}


def test_no_round_is_brought_back_once_the_match_is_won(client: FlaskClient) -> None:
    match_id = new_match(client, options={"target": 20})
    match = added(client, match_id, ROUND, {"draw": True})
    match = client.delete(f"{match_url(match_id)}/rounds/2?revision={match['revision']}").json
    version = match["earlier_versions"][0]["id"]
    won = added(client, match_id, ROUND)
    assert won["winner"] == "Ann"
    match = client.delete(f"{match_url(match_id)}/rounds/2?revision={won['revision']}").json
    bigger = ROUND | {
        "hands": {"Ann": ANN.split(), "Bob": ["KH", "KD", "QC", "JD", "9S", "3D", "5H", "7S", "4D", "7D"]}
    }
    match = client.put(f"{match_url(match_id)}/rounds/1?revision={match['revision']}", json=bigger).json
    assert match["winner"] == "Ann"  # round 1 alone wins the match now
    listed = next(v for v in match["earlier_versions"] if v["id"] == version)
    assert listed["why_not"] == "the match is over (Ann won), so no round can be added"
    answer = client.post(restore_url(match_id, version), json={"revision": match["revision"]})
    assert answer.status_code == 409 and len(answer.json["match"]["rounds"]) == 1


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({}, 400, 'send "revision"'),
        ({"revision": True}, 400, 'send "revision"'),
        ({"revision": -1}, 400, 'send "revision"'),
        ({"revision": "3"}, 400, 'send "revision"'),
        ({"revision": 2**63}, 400, 'send "revision"'),
        ({"revision": 10**400}, 400, "not valid JSON"),
    ],
)
def test_a_restore_names_the_revision_it_expects(client: FlaskClient, body: Any, status: int, error: str) -> None:
    match_id, match = edited_into_a_draw(client)
    data = json.dumps(body) if body != {"revision": 10**400} else '{"revision": ' + "9" * 5000 + "}"
    answer = client.post(restore_url(match_id, match["earlier_versions"][0]["id"]), data=data,
                         content_type="application/json")  # fmt: skip
    assert answer.status_code == status and error in answer.json["error"]


def test_unknown_versions_and_other_matches_versions_are_404(client: FlaskClient) -> None:
    match_id, match = edited_into_a_draw(client)
    _, other_match = edited_into_a_draw(client)
    body = {"revision": match["revision"]}
    for version in (999, 2**63, 2**80, other_match["earlier_versions"][0]["id"]):
        answer = client.post(restore_url(match_id, version), json=body)
        assert (answer.status_code, answer.json["error"]) == (404, f"match {match_id} has no earlier version {version}")
    assert client.post(restore_url(2**80, 1), json=body).status_code == 404
    assert client.post(restore_url(match_id, 1), data="{", content_type="application/json").status_code == 400
    oversized = b'{"revision": 1, "x": "' + b"x" * (12 * 1024 * 1024) + b'"}'
    assert client.post(restore_url(match_id, 1), data=oversized, content_type="application/json").status_code == 413
    assert client.get(match_url(match_id)).json["totals"] == {"Ann": 0, "Bob": 0}


def test_the_export_and_the_sheet_carry_the_earlier_versions(client: FlaskClient) -> None:
    match_id, match = edited_into_a_draw(client)
    exported = json.loads(client.get(f"/matches/{match_id}/export.json").get_data(as_text=True))
    assert exported["earlier_versions"] == match["earlier_versions"]
    assert client.get(f"/matches/{match_id}/export.csv").status_code == 200
    version = match["earlier_versions"][0]["id"]
    sheet = client.get(f"/matches/{match_id}/sheet-body?actions=1").get_data(as_text=True)
    assert "Earlier versions of round 1 (1)" in sheet and f'data-restore="{version}"' in sheet
    assert (
        f'data-revision="{match["revision"]}"' in sheet and 'aria-label="Put back round 1: Ann knocked, up KS"' in sheet
    )
    assert "Bob: Q♠ Q♣ Q♥ 10♠ J♠ 3♦ 5♥ 7♠ A♦ 7♦" in re.sub(r"<[^>]+>", "", sheet)  # cards shown as cards
    assert "Earlier versions" not in client.get(f"/matches/{match_id}/sheet-body").get_data(as_text=True)


def test_a_version_3_database_is_upgraded_and_keeps_what_later_edits_replace(tmp_path: Path) -> None:
    path = tmp_path / "v3.db"
    with database_at(path, 3) as old:
        old.execute("INSERT INTO rounds VALUES (7, 1, ?, 'then')", (json.dumps(ROUND),))
    assert init_db(path) == len(migrations())
    client = create_app({"DATA_DIR": str(tmp_path), "DATABASE": str(path)}).test_client()
    match = client.get("/api/matches/7").json
    assert match["earlier_versions"] == [] and match["totals"] == {"Ann": 18, "Bob": 0}
    match = client.put(f"/api/matches/7/rounds/1?revision={match['revision']}", json={"draw": True}).json
    with contextlib.closing(sqlite3.connect(path)) as upgraded:
        (stored,) = upgraded.execute("SELECT match_id, number, input_json, replaced_by FROM earlier_versions")
    assert stored == (7, 1, json.dumps(ROUND), "edited")  # exactly what the round held
    back = client.post(restore_url(7, match["earlier_versions"][0]["id"]), json={"revision": match["revision"]})
    assert back.json["totals"] == {"Ann": 18, "Bob": 0}


def test_a_version_4_database_keeps_what_its_versions_could_be_put_back_over(tmp_path: Path) -> None:
    """Rows from before deals were told apart are the deal numbered as their round: an edit's earlier version goes
    back into its round as before the upgrade, and a deal entered after the upgrade is one of its own."""
    path = tmp_path / "v4.db"
    with database_at(path, 4) as old:
        old.execute("INSERT INTO rounds VALUES (7, 1, '{\"draw\": true}', 'then')")
        old.executemany(
            "INSERT INTO earlier_versions (match_id, number, input_json, replaced_at, replaced_by)"
            " VALUES (7, ?, ?, ?, ?)",
            [(1, json.dumps(ROUND), "2026-12-05T14:02:00+00:00", EDITED),
             (2, json.dumps(BOB_KNOCKS), "2026-12-05T14:03:00+00:00", UNDONE)],
        )  # fmt: skip
    assert init_db(path) == len(migrations())
    client = create_app({"DATA_DIR": str(tmp_path), "DATABASE": str(path)}).test_client()
    match = client.get("/api/matches/7").json
    versions = [(v["number"], v["deal"], v["restore"]) for v in match["earlier_versions"]]
    assert versions == [(2, 2, "add"), (1, 1, "edit")] and match["deals"] == [1]
    match = client.delete(f"/api/matches/7/rounds/1?revision={match['revision']}").json
    match = added(client, 7, BOB_KNOCKS)
    assert match["deals"][0] == 3  # after every deal the match had
    knock = next(v for v in match["earlier_versions"] if v["input"] == KNOCK.to_dict())
    assert knock["restore"] is None and "round 1 was undone and entered again" in knock["why_not"]


def test_a_change_refused_at_commit_keeps_no_version(client: FlaskClient, app: Flask) -> None:
    """The version is written in the change's transaction: a change that is not committed keeps nothing."""
    match_id, match = edited_into_a_draw(client)
    with contextlib.closing(sqlite3.connect(app.config["DATABASE"])) as db, db:
        db.execute("CREATE TRIGGER refuse BEFORE UPDATE ON rounds BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    answer = client.put(f"{match_url(match_id)}/rounds/1?revision={match['revision']}", json=ROUND)
    assert answer.status_code >= 500
    with contextlib.closing(sqlite3.connect(app.config["DATABASE"])) as db:
        assert db.execute("SELECT COUNT(*) FROM earlier_versions").fetchone()[0] == 1


def version(number: int, entered: RoundInput, replaced_by: str = EDITED, deal: int | None = None) -> EarlierVersion:
    """A version of round ``number``, of the deal numbered as the round (as ``restore_on`` deals) or of ``deal``."""
    return EarlierVersion(1, number, entered, "2026-12-05T14:02:00+00:00", replaced_by, deal or number)


def restore_on(kept: EarlierVersion, inputs: list[RoundInput], winner: str | None) -> Restore:
    """``restore`` on a sheet whose rounds are the deals numbered as them: none entered again after an undo."""
    return restore(kept, inputs, range(1, len(inputs) + 1), winner)


@pytest.mark.parametrize(
    ("kept", "inputs", "winner", "expected"),
    [
        (version(1, KNOCK), [Draw()], None, Restore("edit")),
        (version(1, KNOCK), [Draw()], "Ann", Restore("edit")),  # an edit of a won match may still be put back
        (version(1, KNOCK), [KNOCK], None, Restore(None, "round 1 holds this now")),
        (version(2, KNOCK, UNDONE), [Draw()], None, Restore("add")),
        (version(2, KNOCK), [Draw()], None, Restore("add")),  # edited, then undone: it comes back as round 2
        (version(2, KNOCK, UNDONE), [Draw()], "Ann",
         Restore(None, "the match is over (Ann won), so no round can be added")),
        (version(3, KNOCK, UNDONE), [Draw()], None,
         Restore(None, "the sheet has no round 2: round 3 can only come back after it")),
        (version(1, KNOCK, UNDONE), [Draw(), Draw()], None,
         Restore(None, "round 1 was entered again after this was undone, and bringing this back would replace it"
                       " (Edit changes round 1)")),
        (version(1, KNOCK, deal=7), [Draw(), Draw()], None,  # a correction of another deal than round 1's now
         Restore(None, "round 1 was undone and entered again (another deal) after this was replaced, and bringing"
                       " this back would replace it (Edit changes round 1)")),
        (version(3, KNOCK, deal=7), [Draw(), Draw()], None, Restore("add")),  # comes back as that deal, round 3
    ],
)  # fmt: skip
def test_how_an_earlier_version_comes_back(
    kept: EarlierVersion, inputs: list[RoundInput], winner: str | None, expected: Restore
) -> None:
    assert restore_on(kept, inputs, winner) == expected


def test_a_version_of_the_same_round_in_another_order_of_hands_is_the_round_as_it_is() -> None:
    reordered = parse_round_input(ROUND | {"hands": {"Bob": BOB, "Ann": ANN}})
    assert isinstance(reordered, Knock)
    assert restore_on(version(1, reordered), [KNOCK], None).how is None


def test_a_round_edited_many_times_shows_its_newest_versions_and_keeps_all(client: FlaskClient) -> None:
    match_id = new_match(client)
    client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    # Ann's knock of 5 under every other upcard that allows it: 20 deals, each kept when the next replaces it
    held = {*ANN.split(), *BOB.split(), ROUND["upcard"]}
    upcards = [str(card) for card in DECK if card.rank >= 5 and str(card) not in held]
    for upcard in upcards:
        client.put(f"/api/matches/{match_id}/rounds/1", json={**ROUND, "upcard": upcard})
    client.put(f"/api/matches/{match_id}/rounds/1", json={"draw": True})
    client.put(f"/api/matches/{match_id}/rounds/1", json=BOB_KNOCKS)  # none of those kept is what it holds now
    assert len(upcards) == 20 and len(client.get(f"/api/matches/{match_id}").json["earlier_versions"]) == 22
    sheet = client.get(f"/matches/{match_id}/sheet-body?actions=1").get_data(as_text=True)
    assert sheet.count(">replaced\n") == 20 and "2 older kept in the match's JSON." in sheet


def test_a_deal_kept_twice_is_offered_once(client: FlaskClient) -> None:
    """Undone, brought back and undone again: the sheet lists the deal once, with its way back."""
    match_id = new_match(client)
    client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    for _ in range(2):
        client.delete(f"/api/matches/{match_id}/rounds/1")
        kept = client.get(f"/api/matches/{match_id}").json
        client.post(f"/api/matches/{match_id}/earlier-versions/{kept['earlier_versions'][0]['id']}/restore",
                    json={"revision": kept["revision"]})  # fmt: skip
    client.delete(f"/api/matches/{match_id}/rounds/1")
    assert len(client.get(f"/api/matches/{match_id}").json["earlier_versions"]) == 3
    sheet = client.get(f"/matches/{match_id}/sheet-body?actions=1").get_data(as_text=True)
    assert "Undone round 1 (1)" in sheet and sheet.count(">Bring back</button>") == 1


def test_each_earlier_version_says_what_it_scored(client: FlaskClient) -> None:
    """The versions listed only their cards: the players compared ten cards by eye to tell which one to put back
    (a first-time user's probe). Each says what it scored on its own, in the JSON and on the sheet."""
    match_id = new_match(client)
    assert client.post(f"/api/matches/{match_id}/rounds", json=ROUND).status_code == 201
    assert client.put(f"/api/matches/{match_id}/rounds/1", json={"draw": True}).status_code == 200
    assert client.post(f"/api/matches/{match_id}/rounds", json=ROUND).status_code == 201
    assert client.delete(f"/api/matches/{match_id}/rounds/2").status_code == 200
    kept = client.get(f"/api/matches/{match_id}").json["earlier_versions"]
    assert [version["points"] for version in kept] == [{"Ann": 18, "Bob": 0}, {"Ann": 18, "Bob": 0}]
    assert client.put(f"/api/matches/{match_id}/rounds/1", json=ROUND).status_code == 200  # the draw kept in turn
    kept = client.get(f"/api/matches/{match_id}").json["earlier_versions"]
    assert kept[0]["points"] == {}
    sheet = client.get(f"/matches/{match_id}/sheet-body?actions=1").get_data(as_text=True)
    assert 'Ann knocked, up <span class="card-text black">K♠</span>: <bdi>Ann</bdi> +18</span>' in sheet


def test_a_version_that_would_end_the_match_early_is_not_offered(client: FlaskClient) -> None:
    """Round 1's first reading (Ann +18) was offered to be put back where, with it, Ann reaches 30 in round 2 and
    round 3 could not follow: the server refused the tap its own sheet offered. It is kept for the record, saying
    why, and the sheet shows no button for it."""
    match_id = new_match(client, options={"target": 30})
    url = match_url(match_id)
    assert client.post(f"{url}/rounds", json=ROUND).status_code == 201
    revision = client.get(url).json["revision"]
    assert client.put(f"{url}/rounds/1?revision={revision}", json={"draw": True}).status_code == 200
    for body in (ROUND, {"draw": True}):
        assert client.post(f"{url}/rounds", json=body).status_code == 201
    match = client.get(url).json
    (version,) = match["earlier_versions"]
    assert (version["number"], version["points"]) == (1, {"Ann": 18, "Bob": 0})
    assert version["restore"] is None
    assert version["why_not"] == "putting it back would end the match before the rounds played after it"
    sheet = client.get(f"/matches/{match_id}/sheet-body?actions=1").get_data(as_text=True)
    assert "data-restore" not in sheet and f"Kept for the record: {version['why_not']}." in sheet
    refused = client.post(f"{url}/earlier-versions/{version['id']}/restore", json={"revision": match["revision"]})
    assert refused.status_code == 409 and "cannot be put back: putting it back would end" in refused.json["error"]
    undone = client.delete(f"{url}/rounds/3?revision={match['revision']}")
    assert undone.status_code == 200  # round 3 undone: now it can come back, ending the match in round 2
    version = next(kept for kept in undone.json["earlier_versions"] if kept["number"] == 1)
    assert version["restore"] == "edit"
    back = client.post(f"{url}/earlier-versions/{version['id']}/restore", json={"revision": undone.json["revision"]})
    assert back.status_code == 200 and back.json["winner"] == "Ann"


def test_a_files_version_that_no_longer_scores_is_not_offered(client: FlaskClient) -> None:
    """A match file's earlier versions are read, not scored, as it is opened: one whose knocker is no player, or whose
    knock is over the limit, was offered to come back and then refused (400)."""
    match_id = new_match(client)
    assert client.post(f"{match_url(match_id)}/rounds", json=ROUND).status_code == 201
    data = client.get(f"/matches/{match_id}/export.json").json
    bad = [
        {**ROUND, "knocker": "Zed"},  # no player of this match
        {**ROUND, "upcard": "AS", "knocker": "Bob"},  # Bob's 10-card hand is far over the knock limit under an ace
    ]
    when = "2026-12-06T09:00:00+00:00"
    data["earlier_versions"] = [
        {"id": number, "number": 2, "input": entered, "replaced_at": when, "replaced_by": "undone", "deal": 1 + number}
        for number, entered in enumerate(bad, start=1)
    ]
    copy = client.post("/api/matches/import", json=data)
    assert copy.status_code == 201, copy.json
    versions = client.get(match_url(copy.json["id"])).json["earlier_versions"]
    assert len(versions) == 2 and [version["restore"] for version in versions] == [None, None]
    assert all(version["why_not"].startswith("it no longer scores: ") for version in versions), versions
    assert all(version["points"] is None for version in versions)


def test_the_offers_of_a_revision_are_worked_out_once(client: FlaskClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every read of a match tried each earlier version's edit again (a 2,000-round match with 300 versions: 1.8 s a
    read, where one revision's offers once took 0.08 s): the record of a revision is shared by the reads of it."""
    from scorer.match import Match

    match_id = new_match(client, options={"target": 10_000})
    url = match_url(match_id)
    for _ in range(3):
        assert client.post(f"{url}/rounds", json=ROUND).status_code == 201
    for _ in range(3):
        revision = client.get(url).json["revision"]
        assert client.put(f"{url}/rounds/1?revision={revision}", json={"draw": True}).status_code == 200
        revision = client.get(url).json["revision"]
        assert client.put(f"{url}/rounds/1?revision={revision}", json=ROUND).status_code == 200
    checked = []
    for name in ("check_edit", "edit"):  # the check, and the trial of the edit the check was before
        method = getattr(Match, name)
        monkeypatch.setattr(
            Match, name, lambda match, *args, method=method: checked.append(args) or method(match, *args)
        )
    first = client.get(url).json
    assert len(first["earlier_versions"]) == 6
    for _ in range(3):
        assert client.get(url).json == first
        assert "data-restore" in client.get(f"/matches/{match_id}/sheet-body?actions=1").get_data(as_text=True)
    assert checked == []  # worked out once for the revision, as the edit's answer was made


def test_an_earlier_gin_is_said_as_a_gin(client: FlaskClient) -> None:
    """An undone gin's line under the sheet said "Bob knocked, up K♠" where the sheet had said gin."""
    match_id = new_match(client)
    gin = {
        "upcard": "KS",
        "knocker": "Bob",
        "hands": {"Bob": "AS 2S 3S 4D 4H 4C 7C 8C 9C 10C", "Ann": "4S 5S KD QD JH 9H 8H 2H 2D 6C"},
    }
    assert client.post(f"{match_url(match_id)}/rounds", json=gin).status_code == 201
    assert client.delete(f"{match_url(match_id)}/rounds/1").status_code == 200
    (version,) = client.get(match_url(match_id)).json["earlier_versions"]
    assert (version["outcome"], version["points"]) == ("gin", {"Ann": 0, "Bob": 91})
    sheet = client.get(f"/matches/{match_id}/sheet-body?actions=1").get_data(as_text=True)
    assert 'aria-label="Bring back round 1: Bob went gin, up KS"' in sheet and "Bob went gin, up" in sheet


def test_the_trials_of_refused_versions_count_against_the_bound(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A version refused (its points would end the match early) is found by trying the edit to the round that ends
    it, but only checks that passed were counted: a file of 1,000 such versions of a 5,000-round match took 24 s a
    read. Every trial counts against ``RESTORE_CHECK_ROUNDS``; a version past it is offered as it was."""
    from scorer.match import Match
    from web import matches

    match_id = new_match(client, options={"target": 50})
    url = match_url(match_id)
    for body in (ROUND, *[{"draw": True}] * 28, ROUND):  # Ann 36 of 50 after 30 rounds
        assert client.post(f"{url}/rounds", json=body).status_code == 201
    data = client.get(f"/matches/{match_id}/export.json").json
    gin = {
        "upcard": "KS",
        "knocker": "Bob",
        "hands": {"Bob": "AS 2S 3S 4D 4H 4C 7C 8C 9C 10C", "Ann": "4S 5S KD QD JH 9H 8H 2H 2D 6C"},
    }
    when = "2026-12-06T09:00:00+00:00"
    data["earlier_versions"] = [  # round 1 as Bob's gin: he would win in round 1, before 29 more rounds
        {"id": n, "number": 1, "input": gin, "replaced_at": when, "replaced_by": "edited", "deal": 1} for n in range(10)
    ]
    copy = client.post("/api/matches/import", json=data).json["id"]
    tried = []
    edit = Match.edit
    monkeypatch.setattr(Match, "edit", lambda match, *args: tried.append(args) or edit(match, *args))
    monkeypatch.setattr(matches, "RESTORE_CHECK_ROUNDS", 60)
    versions = client.get(match_url(copy)).json["earlier_versions"]
    assert len(tried) == 2  # 30 rounds each: the bound spent
    assert [version["restore"] for version in versions] == [None, None] + ["edit"] * 8


def test_a_records_worked_out_value_holds_up_no_other_record() -> None:
    """functools.cached_property holds one lock for every record in Python 3.11: one long match's offers being
    worked out held up the first read of every other match."""
    import threading

    from web.matches import _WorkedOut

    started, finish = threading.Event(), threading.Event()

    class Record:
        def __init__(self, slow: bool) -> None:
            self.slow = slow

        @_WorkedOut
        def offers(self) -> str:
            if self.slow:
                started.set()
                finish.wait(10)
            return "slow" if self.slow else "quick"

    slow, quick = Record(True), Record(False)
    worker = threading.Thread(target=lambda: slow.offers)
    worker.start()
    assert started.wait(5)
    answered = []
    reader = threading.Thread(target=lambda: answered.append(quick.offers))
    reader.start()
    reader.join(2)
    finish.set()
    worker.join(5)
    assert answered == ["quick"]  # not behind the slow record's
    assert slow.offers == "slow" and slow.__dict__["offers"] == "slow"  # kept on its record


def test_an_edits_answer_scores_only_the_version_it_keeps(client: FlaskClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every answer about a new revision scored each earlier version alone again, and an offer's check scored it a
    second time (an edit of a round with 1,000 versions: 2.4 s, on two busy cores): a version scores alone
    as it did while the match's players stay, so only the version an edit keeps is scored."""
    from web.matches import MatchRecord

    match_id = new_match(client)
    url = match_url(match_id)
    revision = added(client, match_id, ROUND)["revision"]
    for body in (BOB_KNOCKS, ROUND, BOB_KNOCKS, ROUND):
        revision = client.put(f"{url}/rounds/1?revision={revision}", json=body).json["revision"]
    scored = []
    score_alone = MatchRecord._scored_alone
    monkeypatch.setattr(
        MatchRecord, "_scored_alone", lambda record, kept: scored.append(kept.id) or score_alone(record, kept)
    )
    answer = client.put(f"{url}/rounds/1?revision={revision}", json={"draw": True}).json
    assert len(answer["earlier_versions"]) == 5 and answer["earlier_versions"][0]["points"] == {"Ann": 18, "Bob": 0}
    assert scored == [answer["earlier_versions"][0]["id"]]
    assert client.get(url).json == answer and len(scored) == 1


def test_a_match_keeps_its_newest_versions_and_its_file_opens_again(client: FlaskClient, app: Flask) -> None:
    """A script's 1,001 edits of one round kept 1,001 earlier versions, and the match's own file was then refused
    (more than 1,000): a match keeps its newest ``MAX_EARLIER_VERSIONS``, the oldest let go as one more is kept, so
    what its JSON link saves always opens again."""
    match_id = new_match(client)
    url = match_url(match_id)
    added(client, match_id, ROUND)
    with contextlib.closing(sqlite3.connect(app.config["DATABASE"])) as db, db:  # as many edits into a draw made
        db.executemany(
            "INSERT INTO earlier_versions (match_id, number, input_json, replaced_at, replaced_by, deal)"
            " VALUES (?, 1, '{\"draw\": true}', '2026-12-05T14:02:00+00:00', 'edited', 1)",
            [(match_id,)] * MAX_EARLIER_VERSIONS,
        )
        db.execute("UPDATE matches SET revision = revision + 1 WHERE id = ?", (match_id,))
        (oldest,) = db.execute("SELECT MIN(id) FROM earlier_versions").fetchone()
    revision = client.get(url).json["revision"]
    edited = client.put(f"{url}/rounds/1?revision={revision}", json=BOB_KNOCKS).json
    versions = edited["earlier_versions"]
    assert len(versions) == MAX_EARLIER_VERSIONS and versions[0]["input"] == KNOCK.to_dict()
    assert min(version["id"] for version in versions) == oldest + 1
    with contextlib.closing(sqlite3.connect(app.config["DATABASE"])) as db:
        assert db.execute("SELECT COUNT(*) FROM earlier_versions").fetchone()[0] == MAX_EARLIER_VERSIONS
    gone = client.post(restore_url(match_id, oldest), json={"revision": edited["revision"]})
    assert gone.status_code == 404  # the match as cached holds what is stored
    opened = client.post("/api/matches/import", json=client.get(f"/matches/{match_id}/export.json").json)
    assert opened.status_code == 201 and opened.json["notes"] == [], opened.json
    copy = client.get(match_url(opened.json["id"])).json
    assert copy["totals"] == edited["totals"] == {"Ann": 0, "Bob": 51}
    assert [version["input"] for version in copy["earlier_versions"]] == [version["input"] for version in versions]
