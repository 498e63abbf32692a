"""The players' records page and API: figures over the stored matches, kept up to date, names as typed."""

from __future__ import annotations

import contextlib
import html
import json
import re
import sqlite3
import threading
from pathlib import Path

import pytest
import web_fixtures
from flask import Flask
from flask.testing import FlaskClient
from web_fixtures import ROUND, database_at, new_match

from scorer.records import MatchOutline
from web import create_app, matches

app, client, detector = web_fixtures.app, web_fixtures.client, web_fixtures.detector
GIN = {  # Bob goes gin: 25 + Ann's 66
    "upcard": "KS",
    "knocker": "Bob",
    "hands": {"Bob": "AS 2S 3S 4D 4H 4C 7C 8C 9C 10C", "Ann": "4S 5S KD QD JH 9H 8H 2H 2D 6C"},
}


def records(client: FlaskClient) -> dict:
    answer = client.get("/api/players")
    assert answer.status_code == 200, answer.json
    return answer.json


def counted_in_the_background(app: Flask) -> None:
    """Wait for the thread that makes the outlines of matches kept before okgin stored them, if one was started."""
    filler = app.extensions.get("okgin_outlines_filler")
    if filler is not None:
        filler.join(60)
        assert not filler.is_alive()


def never_replayed(match_id: int) -> matches.MatchRecord:
    raise AssertionError(f"the records replayed match {match_id}")


def records_read(client: FlaskClient, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The records, read without replaying any match (a club's year of matches took 15 s to replay)."""
    with monkeypatch.context() as patched:
        patched.setattr(matches, "_rebuilt", never_replayed)
        return records(client)


def stored_outline(app: Flask, match_id: int) -> tuple[MatchOutline | None, bool]:
    """The outline stored with the match, and whether it was made for the match's revision."""
    with contextlib.closing(sqlite3.connect(app.config["DATABASE"])) as db:
        text, made_for, revision = db.execute(
            "SELECT outline_json, outline_revision, revision FROM matches WHERE id = ?", (match_id,)
        ).fetchone()
    return None if text is None else matches.read_outline(text), made_for == revision


def test_the_records_count_every_match_and_round(client: FlaskClient) -> None:
    won = new_match(client)
    for body in (GIN, {"draw": True}, ROUND, GIN):
        assert client.post(f"/api/matches/{won}/rounds", json=body).status_code == 201
    going = new_match(client, players=["ann", "Cat"], dealer="Cat")
    client.post(
        f"/api/matches/{going}/rounds",
        json={**ROUND, "hands": {"ann": ROUND["hands"]["Ann"], "Cat": ROUND["hands"]["Bob"]}, "knocker": "ann"},
    )
    found = records(client)
    by_name = {record["name"]: record for record in found["players"]}
    assert by_name["ann"] == dict(
        name="ann", matches=2, finished=1, won=0, rounds=4, rounds_won=2, gins=0, undercuts=0, undercut=0, points=36
    )
    assert by_name["Bob"]["won"] == 1 and by_name["Bob"]["gins"] == 2 and by_name["Bob"]["points"] == 182
    assert found["head_to_head"] == [dict(first="ann", second="Bob", matches=1, first_won=0, second_won=1)]
    assert found["matches_counted"] == 2


def test_an_undo_is_counted_at_once(client: FlaskClient) -> None:
    match_id = new_match(client)
    client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    assert {r["name"]: r["rounds_won"] for r in records(client)["players"]} == {"Ann": 1, "Bob": 0}
    assert client.delete(f"/api/matches/{match_id}/rounds/1").status_code == 200
    assert {r["name"]: r["rounds_won"] for r in records(client)["players"]} == {"Ann": 0, "Bob": 0}


def test_every_match_is_counted_however_many(client: FlaskClient) -> None:
    """The records counted the 200 most recent matches: a club keeps a year of play (3,000 matches), and a player's
    older matches were left out of their record."""
    oldest = new_match(client, players=["Old", "Bob"], dealer="Bob")
    body = {**ROUND, "knocker": "Old", "hands": {"Old": ROUND["hands"]["Ann"], "Bob": ROUND["hands"]["Bob"]}}
    assert client.post(f"/api/matches/{oldest}/rounds", json=body).status_code == 201
    for _ in range(200):
        new_match(client)
    found = records(client)
    assert found["matches_counted"] == 201
    assert found["matches_waiting"] == 0
    old = next(record for record in found["players"] if record["name"] == "Old")
    assert (old["matches"], old["rounds_won"], old["points"]) == (1, 1, 18)
    assert "Over all 201 matches kept here." in client.get("/players").get_data(as_text=True)


def test_the_records_read_the_outline_of_only_the_matches_changed(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each records request read every counted match's stored outline (a club's 3,000 matches), though the records
    kept already held all but the one changed."""
    played = [new_match(client) for _ in range(5)]
    asked: list[list[int]] = []
    texts = matches._outline_texts

    def outline_texts(db: sqlite3.Connection, match_ids: list[int]) -> dict[int, str | None]:
        asked.append(list(match_ids))
        return texts(db, match_ids)

    monkeypatch.setattr(matches, "_outline_texts", outline_texts)
    assert records(client)["matches_counted"] == 5
    assert sorted(asked.pop()) == played
    records(client)
    assert asked == []  # nothing changed: nothing read
    assert client.post(f"/api/matches/{played[2]}/rounds", json=ROUND).status_code == 201
    found = records(client)
    assert asked == [[played[2]]]
    assert {r["name"]: r["rounds_won"] for r in found["players"]} == {"Ann": 1, "Bob": 0}


def test_each_change_to_a_match_stores_its_outline_and_the_records_follow(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every write (a round added, edited, undone, put back) stores the match's outline in its transaction, so the
    records read it, never a replay, and never a stale one."""
    match_id = new_match(client)
    url = f"/api/matches/{match_id}"

    def follows() -> tuple[dict[str, tuple[int, int]], int]:
        match = client.get(url).json
        outline, current = stored_outline(app, match_id)
        with app.app_context():
            assert current and outline == MatchOutline.of(matches.load_match(match_id).match)
        found = records_read(client, monkeypatch)
        return {r["name"]: (r["rounds_won"], r["gins"]) for r in found["players"]}, match["revision"]

    assert follows()[0] == {"Ann": (0, 0), "Bob": (0, 0)}
    assert client.post(f"{url}/rounds", json=ROUND).status_code == 201
    won, revision = follows()
    assert won == {"Ann": (1, 0), "Bob": (0, 0)}
    assert client.put(f"{url}/rounds/1?revision={revision}", json=GIN).status_code == 200
    won, revision = follows()
    assert won == {"Ann": (0, 0), "Bob": (1, 1)}
    assert client.delete(f"{url}/rounds/1?revision={revision}").status_code == 200
    won, revision = follows()
    assert won == {"Ann": (0, 0), "Bob": (0, 0)}
    undone = client.get(url).json["earlier_versions"][0]
    assert undone["input"]["knocker"] == "Bob" and undone["restore"] == "add"
    back = client.post(f"{url}/earlier-versions/{undone['id']}/restore", json={"revision": revision})
    assert back.status_code == 200
    assert follows()[0] == {"Ann": (0, 0), "Bob": (1, 1)}


def test_a_match_kept_before_the_upgrade_is_counted_once_its_outline_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database from before okgin stored outlines has none: the records page answers at once, saying how many
    matches are still being counted, while a thread makes each missing outline once."""
    path = tmp_path / "v6.db"
    with database_at(path, 6) as old:
        old.execute("INSERT INTO rounds VALUES (7, 1, ?, 'then', 1)", (json.dumps(ROUND),))
    app = create_app({"DATA_DIR": str(tmp_path), "DATABASE": str(path)})
    client = app.test_client()
    rebuilt: list[int] = []
    real = matches._rebuilt
    monkeypatch.setattr(matches, "_rebuilt", lambda match_id: rebuilt.append(match_id) or real(match_id))
    page = client.get("/players").get_data(as_text=True)
    assert "Over 0 of the 1 matches kept here so far: 1 saved by an older okgin is still being counted" in page
    assert "No match counted yet." in page and "No matches yet." not in page
    counted_in_the_background(app)
    found = records_read(client, monkeypatch)
    assert (found["matches_counted"], found["matches_waiting"]) == (1, 0)
    assert {r["name"]: (r["rounds_won"], r["points"]) for r in found["players"]} == {"Ann": (1, 18), "Bob": (0, 0)}
    assert "Over all 1 match kept here." in client.get("/players").get_data(as_text=True)
    counted_in_the_background(app)
    assert rebuilt == [7] and stored_outline(app, 7)[1]


def test_an_outline_stored_unreadable_is_made_again(app: Flask, client: FlaskClient) -> None:
    match_id = new_match(client)
    client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    with contextlib.closing(sqlite3.connect(app.config["DATABASE"])) as db, db:
        db.execute("UPDATE matches SET outline_json = '{\"players\": 3}' WHERE id = ?", (match_id,))
    found = records(client)  # the outline is forgotten, and made again in the background
    assert (found["matches_counted"], found["matches_waiting"]) == (0, 1)
    counted_in_the_background(app)
    assert records(client)["matches_counted"] == 1 and stored_outline(app, match_id)[1]


def test_a_stored_match_that_no_longer_scores_is_left_out(app: Flask, client: FlaskClient) -> None:
    broken, kept = new_match(client), new_match(client, players=["Ann", "Cat"], dealer="Cat")
    client.post(f"/api/matches/{broken}/rounds", json=ROUND)
    with app.app_context():
        from web.db import transaction

        with transaction() as db:
            db.execute('UPDATE rounds SET input_json = \'{"upcard": "ZZ"}\' WHERE match_id = ?', (broken,))
            db.execute("UPDATE matches SET revision = revision + 1 WHERE id = ?", (broken,))
    assert kept and records(client)["matches_counted"] == 1
    counted_in_the_background(app)
    found = records(client)
    assert (found["matches_counted"], found["matches_waiting"]) == (1, 0)  # not waited for
    assert stored_outline(app, broken) == (None, True)  # tried once for this revision


def test_an_outline_another_version_of_the_scoring_made_is_made_again(app: Flask, client: FlaskClient) -> None:
    """A stored outline keeps what the engine of its day made of the rounds: a fix of the scoring would have left the
    records' figures stale until each match changed. One made by other code (``scoring_engine``) is made again."""
    match_id = new_match(client)
    client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    outline, _ = stored_outline(app, match_id)
    assert outline is not None
    with contextlib.closing(sqlite3.connect(app.config["DATABASE"])) as db, db:
        old = json.dumps(
            {
                **outline.to_dict(),
                "engine": "an older engine",
                "tallies": [{**tally, "points": 999} for tally in outline.to_dict()["tallies"]],
            }
        )
        db.execute("UPDATE matches SET outline_json = ? WHERE id = ?", (old, match_id))
    waiting = records(client)  # read once: this read starts the outline's making, which a second read could see done
    assert (waiting["matches_counted"], waiting["matches_waiting"]) == (0, 1)
    counted_in_the_background(app)
    found = records(client)
    assert found["matches_counted"] == 1 and {r["points"] for r in found["players"]} == {18, 0}
    assert stored_outline(app, match_id) == (outline, True)


def test_the_page_shows_names_as_text(client: FlaskClient) -> None:
    match_id = new_match(client, players=["<b>Ann</b>", "Bob"], dealer="Bob")
    body = {
        **ROUND,
        "knocker": "<b>Ann</b>",
        "hands": {"<b>Ann</b>": ROUND["hands"]["Ann"], "Bob": ROUND["hands"]["Bob"]},
    }
    assert client.post(f"/api/matches/{match_id}/rounds", json=body).status_code == 201
    page = client.get("/players")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert "<b>Ann</b>" not in text and "&lt;b&gt;Ann&lt;/b&gt;" in text
    assert "Over all 1 match kept here" in text
    assert 'href="/players"' in client.get("/").get_data(as_text=True)


def finished_between(client: FlaskClient, first: str, second: str) -> None:
    """A match of ``first`` and ``second`` that ``first`` wins with one knock (``ROUND``: Ann's)."""
    match_id = new_match(client, players=[first, second], dealer=second, options={"target": 10})
    body = {**ROUND, "knocker": first, "hands": {first: ROUND["hands"]["Ann"], second: ROUND["hands"]["Bob"]}}
    assert client.post(f"/api/matches/{match_id}/rounds", json=body).status_code == 201


def pairs_shown(html: str) -> list[str]:
    section = html.split('id="head-to-head"')[1]
    return [" ".join(re.sub(r"<[^>]+>", " ", item).split()) for item in re.findall(r"<li>(.*?)</li>", section, re.S)]


def test_a_players_name_lists_only_their_opponents_with_them_first(client: FlaskClient) -> None:
    """A club's head-to-head list held every pair (336 of them, a 37,000 px page on a phone): a player's name now
    lists that player's opponents only, the player first."""
    finished_between(client, "Ann", "Bob")
    finished_between(client, "Cat", "Bob")
    finished_between(client, "Cat", "Dan")
    everyone = client.get("/players").get_data(as_text=True)
    assert 'href="/players?player=Bob#head-to-head"' in everyone and len(pairs_shown(everyone)) == 3
    page = client.get("/players?player=bob").get_data(as_text=True)
    assert "Head to head: bob" in page and "Every pair of players" in page
    assert sorted(pairs_shown(page)) == [
        "Bob 0 – 1 Ann 1 finished match together",
        "Bob 0 – 1 Cat 1 finished match together",
    ], pairs_shown(page)
    assert "No finished matches of Eve with another player." in client.get("/players?player=Eve").get_data(as_text=True)


def test_the_records_come_a_page_at_a_time(client: FlaskClient) -> None:
    """Every record and pair in one answer: a club's 20,000 players made /api/players 5 MB and the page 11 MB, and 16
    phones reading them stalled the server (session 48's probe). A page holds ``limit``; ``more`` asks for the next."""
    finished_between(client, "Ann", "Bob")
    finished_between(client, "Cat", "Bob")
    finished_between(client, "Cat", "Dan")
    first = client.get("/api/players?limit=2").json
    assert (len(first["players"]), len(first["head_to_head"])) == (2, 2)
    assert (first["players_total"], first["head_to_head_total"]) == (4, 3)
    assert first["more"] == "/api/players?offset=2&limit=2"
    second = client.get(first["more"]).json
    assert (len(second["players"]), len(second["head_to_head"]), second["more"]) == (2, 1, None)
    names = [record["name"] for record in first["players"] + second["players"]]
    assert sorted(names) == ["Ann", "Bob", "Cat", "Dan"]
    assert len(client.get("/api/players").json["players"]) == 4  # 100 a page unless asked
    for query, why in (
        ("limit=101", "limit must be 1 to 100"),
        ("limit=0", "limit must be 1 to 100"),
        ("offset=-1", "offset must be a whole number"),
        ("offset=x", "offset must be a whole number"),
    ):
        answer = client.get(f"/api/players?{query}")
        assert answer.status_code == 400 and why in answer.json["error"], (query, answer.json)
        assert client.get(f"/players?{query}").status_code == (400 if query.startswith("offset") else 200)


def test_a_players_name_lists_only_their_record(client: FlaskClient) -> None:
    """``?player=`` listed every player's record (6 MB of them), though it asked for one player's."""
    finished_between(client, "Ann", "Bob")
    finished_between(client, "Cat", "Dan")
    found = client.get("/api/players?player=bob").json
    assert [record["name"] for record in found["players"]] == ["Bob"] and found["players_total"] == 1
    assert found["head_to_head"] == [dict(first="Bob", second="Ann", matches=1, first_won=0, second_won=1)]
    page = client.get("/players?player=bob").get_data(as_text=True)
    assert re.findall(r'<th scope="row"><a [^>]*>([^<]*)</a>', page) == ["Bob"]
    assert "No match of Eve counted." in client.get("/players?player=Eve").get_data(as_text=True)


def test_the_records_page_shows_a_page_and_links_the_next(client: FlaskClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matches, "RECORDS_LISTED", 2)
    finished_between(client, "Ann", "Bob")
    finished_between(client, "Cat", "Dan")
    page = client.get("/players").get_data(as_text=True)
    rows = re.findall(r'<th scope="row"><a [^>]*>([^<]*)</a>', page)
    assert len(rows) == 2 and "Players 1 to 2 of 4, most matches won first." in page
    assert 'name="player"' in page and 'role="search"' in page  # a player beyond the first page is found by name
    following = re.search(r'href="([^"]+)">Next page<', page)
    assert following is not None and "First page" not in page
    later = client.get(html.unescape(following.group(1))).get_data(as_text=True)
    assert sorted(rows + re.findall(r'<th scope="row"><a [^>]*>([^<]*)</a>', later)) == ["Ann", "Bob", "Cat", "Dan"]
    assert "Players 3 to 4 of 4" in later and "Next page" not in later and 'href="/players">First page<' in later
    assert "No more pairs: the list ends at 2." in later


def test_no_matches_yet(client: FlaskClient) -> None:
    assert records(client) == {
        "players": [],
        "head_to_head": [],
        "players_total": 0,
        "head_to_head_total": 0,
        "more": None,
        "matches_counted": 0,
        "matches_waiting": 0,
    }
    assert "No matches yet." in client.get("/players").get_data(as_text=True)


def exported(client: FlaskClient, match_id: int) -> dict:
    answer = client.get(f"/matches/{match_id}/export.json")
    assert answer.status_code == 200
    return answer.json


def imported(client: FlaskClient, data: dict) -> int:
    answer = client.post("/api/matches/import", json=data)
    assert answer.status_code == 201, answer.json
    copy: int = answer.json["id"]
    return copy


def test_a_match_opened_again_from_its_file_is_counted_once(client: FlaskClient) -> None:
    """It was counted twice: the copy is another match in the database, with the same games."""
    original = new_match(client)
    for body in (GIN, GIN):
        client.post(f"/api/matches/{original}/rounds", json=body)
    alone = records(client)
    copy = imported(client, exported(client, original))
    assert client.get(f"/api/matches/{copy}").json["origin"] == {
        "id": original,
        "created_at": client.get(f"/api/matches/{original}").json["created_at"],
    }
    assert records(client) == alone
    assert alone["matches_counted"] == 1 and {r["name"]: r["won"] for r in alone["players"]} == {"Bob": 1, "Ann": 0}
    # a copy of the copy is still that match, and so is a copy saved before files named their origin
    imported(client, exported(client, copy))
    assert records(client) == alone
    assert client.get(f"/api/matches/{copy}").json["origin"]["id"] == original
    old_file = exported(client, copy)
    del old_file["origin"]
    assert client.get(f"/api/matches/{imported(client, old_file)}").json["origin"]["id"] == original
    assert records(client) == alone
    assert len(client.get("/api/matches").json["matches"]) == 4  # every copy is kept, and listed


def test_copies_of_a_match_kept_elsewhere_are_one_match(client: FlaskClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file from another okgin names a match not stored here: opened twice, it is still one match, counted as
    the first copy (played on since or not), from the outline stored with it when it was opened."""
    match_id = new_match(client)
    client.post(f"/api/matches/{match_id}/rounds", json=GIN)
    elsewhere = exported(client, match_id) | {"id": 9000, "created_at": "2020-01-01T10:00:00+00:00"}
    client.post("/api/matches/import", json=exported(client, match_id) | {"id": None})  # names no match: its own
    first, second = imported(client, elsewhere), imported(client, elsewhere)
    client.post(f"/api/matches/{second}/rounds", json=GIN)
    found = records_read(client, monkeypatch)
    assert found["matches_counted"] == 3
    assert {r["name"]: r["rounds_won"] for r in found["players"]} == {"Bob": 3, "Ann": 0}
    assert client.get(f"/api/matches/{first}").json["origin"] == {"id": 9000, "created_at": elsewhere["created_at"]}


def test_matches_alike_are_each_counted(client: FlaskClient) -> None:
    """Two matches of the same players with the same rounds, each begun here, are two matches."""
    for _ in range(2):
        match_id = new_match(client)
        client.post(f"/api/matches/{match_id}/rounds", json=GIN)
    new_match(client)
    new_match(client)
    found = records(client)
    assert found["matches_counted"] == 4
    assert {r["name"]: (r["matches"], r["rounds_won"]) for r in found["players"]} == {"Bob": (4, 2), "Ann": (4, 0)}


def test_records_asked_at_once_after_the_upgrade_answer_at_once_and_each_match_is_rebuilt_once(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the upgrade, four phones opening the records each rebuilt every match (a club's year: 15 s each). They
    now answer with what is counted so far, and one thread rebuilds each match once."""
    ids = [new_match(client) for _ in range(3)]
    with contextlib.closing(sqlite3.connect(app.config["DATABASE"])) as db, db:
        db.execute("UPDATE matches SET outline_json = NULL, outline_revision = NULL")  # as the upgrade leaves them
    rebuilt: list[int] = []
    real = matches._rebuilt

    def slow(match_id: int) -> matches.MatchRecord:
        rebuilt.append(match_id)
        threading.Event().wait(0.05)  # long enough that the other requests ask while it works
        return real(match_id)

    monkeypatch.setattr(matches, "_rebuilt", slow)
    start, answers = threading.Barrier(4), []

    def ask() -> None:
        with app.app_context():
            start.wait()
            found = matches.records()
            answers.append(found.counted + found.waiting)

    askers = [threading.Thread(target=ask) for _ in range(4)]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join(10)
    counted_in_the_background(app)
    assert answers == [3, 3, 3, 3] and sorted(rebuilt) == ids
    assert records(client)["matches_counted"] == 3 and sorted(rebuilt) == ids
