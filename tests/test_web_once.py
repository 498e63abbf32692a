"""Posts that make a match, made once (``web.once``): a post is its one-time key and what it asked; the match it
made is kept in the database with the match, so a post sent again finds it, across a restart too."""

from __future__ import annotations

import contextlib
import io
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import web_fixtures
from flask import Flask
from flask.testing import FlaskClient
from test_web_pages import SETUP, form_token
from web_fixtures import new_match
from werkzeug.datastructures import MultiDict

from web import once

app, client, detector = web_fixtures.app, web_fixtures.client, web_fixtures.detector
REMATCH = {"Idempotency-Key": "rematch-of-match-1"}
BODY = {"players": ["Ann", "Bob"], "dealer": "Bob"}


def setup_form(client: FlaskClient, **fields: Any) -> dict[str, Any]:
    """The set-up form as the start page serves it (its one-time key), filled with ``SETUP`` and ``fields``."""
    key = re.search(r'name="once" value="([^"]+)"', client.get("/").get_data(as_text=True))
    assert key
    return {"csrf_token": form_token(client), **SETUP, "once": key.group(1), **fields}


def open_file(client: FlaskClient, key: str, content: bytes, name: str = "m.json") -> Any:
    form = {"csrf_token": form_token(client), "once": key, "file": (io.BytesIO(content), name)}
    return client.post("/matches/import", data=form, content_type="multipart/form-data")


def opened(location: str | None) -> int:
    assert location is not None
    return int(location.rstrip("/").rsplit("/", 1)[1])


def match_ids(client: FlaskClient) -> list[int]:
    return sorted(m["id"] for m in client.get("/api/matches").json["matches"])


@contextlib.contextmanager
def database(app: Flask) -> Any:
    with contextlib.closing(sqlite3.connect(app.config["DATABASE"])) as connection:
        yield connection
        connection.commit()


def test_a_changed_set_up_form_sent_with_the_same_key_makes_the_match_it_asks_for(client: FlaskClient) -> None:
    """The player taps Start, the reply is slow, fixes a name and the target and taps again on the same page: that
    post was answered with the first form's match, the fix silently lost."""
    first = setup_form(client)
    fixed = {**first, "player": ["Ann", "Rob", "", ""], "target": "150"}
    made = opened(client.post("/matches", data=first).location)
    remade = opened(client.post("/matches", data=fixed).location)
    assert remade != made
    state = client.get(f"/api/matches/{remade}").json
    assert (state["players"], state["rules"]["target"]) == (["Ann", "Rob"], 150)
    assert opened(client.post("/matches", data=fixed).location) == remade  # each form made once
    assert opened(client.post("/matches", data=first).location) == made
    assert match_ids(client) == [made, remade]


def test_another_file_sent_with_the_same_key_opens_that_file(client: FlaskClient) -> None:
    """a.json opened, the reply lost, b.json picked and opened on the same page: b.json opened a.json's match."""
    files = {}
    for players in (["Eve", "Fay"], ["Gus", "Hal"]):
        match_id = new_match(client, players=players, dealer=players[0])
        files[players[0]] = client.get(f"/matches/{match_id}/export.json").get_data()
    key = "a-key-of-one-form-0"
    first = opened(open_file(client, key, files["Eve"], "a.json").location)
    second = opened(open_file(client, key, files["Gus"], "b.json").location)
    assert second != first and client.get(f"/api/matches/{second}").json["players"] == ["Gus", "Hal"]
    assert opened(open_file(client, key, files["Gus"], "b.json").location) == second
    assert len(match_ids(client)) == 4


def test_a_post_sent_again_after_the_server_restarts_finds_its_match(tmp_path: Path) -> None:
    """The keys were kept in memory: a Rematch (or a form) retried after a restart made a second match."""
    from web import create_app

    config = {"TESTING": True, "DATA_DIR": str(tmp_path / "data")}
    before = create_app(config).test_client()
    rematch = before.post("/api/matches", json=BODY, headers=REMATCH).json["id"]
    form = setup_form(before)
    started = opened(before.post("/matches", data=form).location)
    exported = before.get(f"/matches/{rematch}/export.json").get_data()
    imported = opened(open_file(before, "a-key-of-one-form-0", exported).location)

    after = create_app(config).test_client()  # the same database; a new session (another CSRF token)
    assert after.post("/api/matches", json=BODY, headers=REMATCH).json["id"] == rematch
    assert opened(after.post("/matches", data={**form, "csrf_token": form_token(after)}).location) == started
    assert opened(open_file(after, "a-key-of-one-form-0", exported).location) == imported
    assert match_ids(after) == [rematch, started, imported]


def test_two_identical_posts_at_once_make_one_match(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second post looks for its match before the first commits, so both make one: the first to commit keeps
    the key, and the other's match is rolled back and it answers the first's (the race, made to happen)."""
    first = client.post("/api/matches", json=BODY, headers=REMATCH).json["id"]
    looked = []
    real = once.Post.match_made

    def not_yet_committed(post: once.Post, db: sqlite3.Connection) -> int | None:
        looked.append(post)
        return None if len(looked) == 1 else real(post, db)

    monkeypatch.setattr(once.Post, "match_made", not_yet_committed)
    again = client.post("/api/matches", json=BODY, headers=REMATCH)
    assert (again.status_code, again.json["id"], len(looked)) == (201, first, 2)
    assert match_ids(client) == [first]
    with database(app) as db:
        assert db.execute("SELECT match_id FROM sent_once").fetchall() == [(first,)]


def test_a_match_is_not_stored_when_its_key_cannot_be(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key is written in the match's transaction: a failure keeping it stores neither."""

    def full(post: once.Post, db: sqlite3.Connection, match_id: int) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(once.Post, "keep", full)
    answer = client.post("/api/matches", json=BODY, headers=REMATCH)
    assert answer.status_code == 503 and "the disk holding the database is full" in answer.json["error"]
    assert match_ids(client) == []
    with database(app) as db:
        assert db.execute("SELECT count(*) FROM sent_once").fetchone() == (0,)


def test_posts_are_kept_for_a_day_and_at_most_kept(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The oldest post beyond ``KEPT`` and every post older than a day are forgotten as a new one is kept: sent
    again, each makes a new match."""

    def sent(n: int) -> int:
        answer = client.post("/api/matches", json=BODY, headers={"Idempotency-Key": f"a-key-of-post-{n:04}"})
        assert answer.status_code == 201
        match_id: int = answer.json["id"]
        return match_id

    def kept() -> list[int]:
        with database(app) as db:
            return [row[0] for row in db.execute("SELECT match_id FROM sent_once ORDER BY id")]

    monkeypatch.setattr(once, "KEPT", 2)
    made = [sent(n) for n in range(3)]
    assert kept() == made[1:]
    assert sent(2) == made[2]
    forgotten = sent(0)
    assert forgotten not in made and kept() == [made[2], forgotten]
    with database(app) as db:
        db.execute("UPDATE sent_once SET sent_at = sent_at - ?", (once.LIFETIME_SECONDS,))
    a_day_later = sent(2)
    assert a_day_later not in made and kept() == [a_day_later]


def test_the_form_asked_is_its_fields_but_its_key_and_token() -> None:
    """A form sent again on a new session (another CSRF token) asks the same; players in other seats do not."""
    sent = MultiDict([("player", "Ann"), ("player", "Bob"), ("target", "100"), ("once", "k" * 16)])
    resent = MultiDict([("target", "100"), ("csrf_token", "t"), ("player", "Ann"), ("player", "Bob")])
    assert once.form_asked(sent) == once.form_asked(resent)
    seats_swapped = MultiDict([("player", "Bob"), ("player", "Ann"), ("target", "100")])
    assert once.form_asked(sent) != once.form_asked(seats_swapped)
    assert json.loads(once.form_asked(sent)) == [["player", ["Ann", "Bob"]], ["target", ["100"]]]


def test_each_file_opened_is_said_on_its_own_table_whichever_shows_first(client: FlaskClient) -> None:
    """Two files opened (two tabs), the second's table shown first: the first's "Opened from" notice was lost, as
    Flask's flashed messages are all taken by the first page that asks for any."""
    files = []
    for players in (["Eve", "Fay"], ["Gus", "Hal"]):
        match_id = new_match(client, players=players, dealer=players[0])
        files.append(client.get(f"/matches/{match_id}/export.json").get_data())
    first = opened(open_file(client, "a-key-of-one-form-1", files[0], "a.json").location)
    second = opened(open_file(client, "a-key-of-one-form-2", files[1], "b.json").location)

    def notices(match_id: int) -> list[str]:
        page = client.get(f"/matches/{match_id}").get_data(as_text=True)
        data = re.search(r'<script type="application/json" id="table-data">(.*?)</script>', page, re.S)
        assert data
        return list(json.loads(data.group(1))["notices"])

    assert notices(second) == [f"Opened from b.json: a copy of the match, kept here as match #{second}."]
    assert notices(first) == [f"Opened from a.json: a copy of the match, kept here as match #{first}."]
    assert notices(first) == notices(second) == []  # each said once
