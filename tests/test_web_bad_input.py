"""The reproductions of issue 11 that once answered 500 (or worked for seconds before failing): each is a 4xx now,
refused before any expensive work, and no error text from inside the server reaches a client."""

from __future__ import annotations

import json
import sqlite3
import threading

import pytest
import web_fixtures
from flask import Flask
from flask.testing import FlaskClient
from image_bombs import jpeg_hiding_its_frame, png_claiming, progressive_jpeg, tiff_in_one_tile
from web_fixtures import JSON_ROUTES, ROUND, FakeDetector, jpeg, new_match

from scorer.errors import OkginError

app, client, detector = web_fixtures.app, web_fixtures.client, web_fixtures.detector

DEEP = "[" * 1000 + "]" * 1000


@pytest.mark.parametrize(("method", "path"), JSON_ROUTES)
@pytest.mark.parametrize("body", [DEEP, '{"players": ' + DEEP + "}"], ids=["deep", "deep-field"])
def test_deeply_nested_json_is_a_400_on_every_json_route(
    client: FlaskClient, method: str, path: str, body: str
) -> None:
    match = new_match(client)
    client.post(f"/api/matches/{match}/rounds", json=ROUND)
    assert match == 1
    answer = client.open(path, method=method, data=body, content_type="application/json", query_string={"match": 1})
    assert (answer.status_code, answer.json) == (400, {"error": "the JSON body nests deeper than 32 levels"})


def test_brackets_inside_strings_are_not_nesting(client: FlaskClient) -> None:
    body = '{"players": ["' + "[" * 5000 + '", "Bob"]}'
    answer = client.post("/api/matches", data=body, content_type="application/json")
    assert answer.status_code in (201, 400) and "nests deeper" not in str(answer.json)


def test_json_as_deep_as_the_limit_still_parses(client: FlaskClient) -> None:
    nested = "[" * 31 + '"Ann"' + "]" * 31
    answer = client.post("/api/matches", data='{"players": ' + nested + "}", content_type="application/json")
    assert answer.status_code == 400 and "nests deeper" not in answer.json["error"]


@pytest.mark.parametrize("route", ["/api/detect", "/live/frame"])
@pytest.mark.parametrize("players", ["²", "٣", "9" * 5000, "-2", "", "1", "5"], ids=str.__len__)
def test_the_player_count_is_checked_before_any_inference(
    client: FlaskClient, detector: FakeDetector, route: str, players: str
) -> None:
    answer = client.post(f"{route}?players={players}", data=jpeg(), content_type="image/jpeg")
    assert answer.status_code == 400 and answer.json["error"].startswith("players must be 2 to 4")
    assert detector.calls == 0


@pytest.mark.parametrize("route", ["/api/detect", "/live/frame"])
@pytest.mark.parametrize(("width", "height"), [(20000, 20000), (30000, 30000), (100000, 100000)])
def test_a_decompression_bomb_is_413_before_decoding(
    client: FlaskClient, detector: FakeDetector, route: str, width: int, height: int
) -> None:
    answer = client.post(route, data=png_claiming(width, height), content_type="image/png")
    assert answer.status_code == 413
    assert "okgin reads images up to 40.0 MP" in answer.json["error"]
    assert detector.calls == 0


@pytest.mark.parametrize("route", ["/api/detect", "/live/frame"])
@pytest.mark.parametrize(
    ("bomb", "status", "error"),
    [
        (jpeg_hiding_its_frame(16000, 16000), 413, "image is 16000x16000 (256.0 MP): okgin reads images up to 40.0 MP"),
        (tiff_in_one_tile(11008), 413, "image is stored in tiles of 11008x11008 (121.2 MP), each decoded whole"),
        (progressive_jpeg(2000), 400, "image: it holds 2000 scans, each a pass over every pixel"),
    ],
    ids=["jpeg-frame-behind-stray-bytes", "tiff-tile", "jpeg-scans"],
)
def test_bombs_that_once_passed_the_header_check_are_refused_before_decoding(
    client: FlaskClient, detector: FakeDetector, route: str, bomb: bytes, status: int, error: str
) -> None:
    # the 2026-12-05 LAN probe: 644 bytes of JPEG took the server to 1.6 GB, 0.9 MB of TIFF to 1 GB, 22 KB of JPEG 11 s
    answer = client.post(route, data=bomb, content_type="image/tiff" if bomb.startswith(b"II") else "image/jpeg")
    assert answer.status_code == status and error in answer.json["error"]
    assert detector.calls == 0


@pytest.mark.parametrize("route", ["/api/detect", "/live/frame"])
def test_an_upload_waiting_too_long_for_a_decoder_is_503_busy(
    client: FlaskClient, detector: FakeDetector, monkeypatch: pytest.MonkeyPatch, route: str
) -> None:
    from scorer.vision import images

    monkeypatch.setattr(images, "_decode_slots", threading.Semaphore(0))  # every slot taken, by uploads that linger
    monkeypatch.setattr(images, "DECODE_WAIT_SECONDS", 0.1)
    answer: list = []
    waiting = threading.Thread(
        target=lambda: answer.append(client.post(route, data=jpeg(), content_type="image/jpeg")), daemon=True
    )
    waiting.start()
    waiting.join(5)  # it once waited for a slot for ever, holding one of the server's threads
    assert [(a.status_code, a.json["error"]) for a in answer] == [
        (503, "could not decode image: the server is busy decoding other pictures; try again in a moment")
    ]
    assert detector.calls == 0


def test_a_correction_with_a_400_digit_box_value_is_a_400(app: Flask, client: FlaskClient) -> None:
    from web.detection import service

    with app.app_context():
        frame_id = service().remember_frame(jpeg(100, 100), 100, 100)
    card = {"card": "QH", "box": [0, 0, int("9" * 400), 10]}
    answer = client.post("/correct/examples", json={"frame_id": frame_id, "cards": [card]})
    assert answer.status_code == 400 and "[x1, y1, x2, y2]" in answer.json["error"]


@pytest.mark.parametrize(
    ("raised", "named"),
    [
        ("no such table: rounds_secret_layout", "the database file has lost its tables"),
        ("attempt to write a readonly database", "the database cannot be written: its file or folder is read-only"),
        ("database disk image is malformed", "the database file is damaged"),
        ("rounds_secret_layout went wrong", "database error"),
    ],
)
def test_database_errors_name_the_problem_but_never_reach_the_client(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, raised: str, named: str
) -> None:
    def broken(*args: object) -> None:
        raise sqlite3.OperationalError(raised)

    monkeypatch.setattr("web.matches.list_matches", broken)
    answer = client.get("/api/matches")
    assert answer.status_code == 503
    assert answer.json["error"].startswith(named) and answer.json["error"].endswith("; the server log has the details")
    assert "rounds_secret_layout" not in answer.json["error"]
    assert raised in caplog.text  # the log has it


def test_a_bug_is_a_logged_500_even_when_it_is_a_value_error(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: object) -> None:
        raise ValueError("internal detail")

    monkeypatch.setattr("web.matches.list_matches", broken)
    answer = client.get("/api/matches")
    assert answer.status_code == 500
    assert answer.json == {"error": "internal error; the server log has the details"}
    assert "internal detail" in caplog.text


def test_a_user_error_that_reaches_the_edge_is_a_400(client: FlaskClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise OkginError("that table is not set up")

    monkeypatch.setattr("web.matches.list_matches", refuse)
    answer = client.get("/api/matches")
    assert (answer.status_code, answer.json) == (400, {"error": "that table is not set up"})


# The per-field reproductions of issue 11: every request field is checked before any work (web/fields.py).


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"players": ["\ud800", "Bob"]}, id="lone-surrogate-name"),
        pytest.param({"players": ["A\u0000n", "Bob"]}, id="nul-in-a-name"),
    ],
)
def test_names_that_cannot_be_stored_are_a_400(client: FlaskClient, body: dict) -> None:
    answer = client.post("/api/matches", json=body)
    assert answer.status_code == 400 and "error" in answer.json


def test_an_arrangement_of_twelve_cards_says_so(client: FlaskClient) -> None:
    hand = ["AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC"]
    answer = client.post("/api/arrange", json={"hands": {"Ann": hand, "Bob": ["KS"]}})
    assert answer.status_code == 200 and answer.json["players"]["Ann"]["problem"].startswith("12 cards")


@pytest.mark.parametrize("value", [10**400, float("inf")], ids=["400-digits", "infinite"])
def test_a_box_no_float_holds_is_a_400_where_a_box_is_placed(client: FlaskClient, value: object) -> None:
    new_match(client)
    body = {"box": [value, 0, 10, 10], "width": 100, "height": 100}
    answer = client.post("/live/place?match=1", data=json.dumps(body), content_type="application/json")
    assert answer.status_code == 400 and "[x1, y1, x2, y2]" in answer.json["error"]


MELDS = {**ROUND, "knocker_melds": ["8C 9C 10C"] * 3_000}
LAYOFFS = {**ROUND, "layoffs": {"Bob": ["QC onto 8C 9C 10C JC"] * 3_000}}


@pytest.mark.parametrize(
    ("path", "body", "said"),
    [
        ("/api/score", MELDS, "knocker_melds: 3000 melds, more than a player holds cards (11)"),
        ("/api/matches/1/rounds", LAYOFFS, "Bob's layoffs: 3000 layoffs, more than a player holds cards (11)"),
        ("/api/score", {**ROUND, "layoffs": {f"P{n}": [] for n in range(5)}}, "layoffs: 5 players' layoffs"),
        ("/api/arrange", {"hands": {f"P{n}": [] for n in range(3_000)}}, "hands: 3000 players' hands"),
        ("/api/matches/1/rounds", {**ROUND, "hands": {f"P{n}": "" for n in range(5)}}, "hands: 5 players' hands"),
        ("/api/score", {**ROUND, "groups": {"Ann": [["AS"]] * 3_000}}, "Ann's groups: 3000 groups, more than"),
        ("/api/score", {**ROUND, "groups": {f"P{n}": [] for n in range(5)}}, "groups: 5 players' groups"),
    ],
    ids=["melds", "layoffs", "layoffs-players", "arranged-hands", "hands", "groups", "groups-players"],
)
def test_lists_longer_than_a_round_holds_are_refused_before_their_entries_are_read(
    client: FlaskClient, path: str, body: dict[str, object], said: str
) -> None:
    """Each meld, layoff, hand and group was parsed before any count was checked: 300,000 melds in one 6 MB body
    held the server's interpreter (every other request) for 8 s before the answer said they share a card. (A body of
    so many is refused for its values now, unparsed: ``MAX_BODY_VALUES``.)"""
    new_match(client)
    answer = client.post(path, json=body)
    assert answer.status_code == 400 and said in answer.json["error"], answer.json


@pytest.mark.parametrize("digits", ["9" * 5000, "0" * 5000 + "1"], ids=["5000-digits", "1-after-5000-zeros"])
def test_a_match_query_of_thousands_of_digits_is_a_404_or_that_match(client: FlaskClient, digits: str) -> None:
    """int() refuses more than 4,300 digits: ``?match=`` of 5,000 nines was a 500 on every live route."""
    new_match(client)
    body = {"box": [10, 60, 20, 80], "width": 100, "height": 100}
    place = client.post(f"/live/place?match={digits}", json=body)
    frame = client.post(f"/live/frame?match={digits}", data=jpeg(64, 48), content_type="image/jpeg")
    if digits.endswith("1"):  # match 1, written with leading zeros
        assert place.status_code == frame.status_code == 200
    else:
        assert place.status_code == frame.status_code == 404 and "no match with id" in place.json["error"]
        assert len(place.json["error"]) < 100


@pytest.mark.parametrize(
    "match",
    [
        pytest.param(-9223372036854775809, id="below-int64"),
        pytest.param(True, id="true-is-not-match-1"),
        pytest.param(2**63, id="above-int64"),
    ],
)
def test_a_match_that_is_no_match_id_is_a_4xx(client: FlaskClient, match: object) -> None:
    new_match(client)
    answer = client.post("/api/score", json={"match": match, **ROUND})
    assert answer.status_code in (400, 404) and "error" in answer.json


@pytest.mark.parametrize(
    "field",
    [{"target": "--5"}, {"target": "²"}, {"dealer": "²"}, {"target": "9" * 5000}],
    ids=["double-minus", "superscript", "superscript-dealer", "5000-digits"],
)
def test_form_fields_of_a_new_match_are_a_400(client: FlaskClient, field: dict) -> None:
    answer = client.post("/matches", data={"player": ["Ann", "Bob"], **field}, headers={"X-Requested-With": "x"})
    assert answer.status_code == 400


# Found by probing a live server in session 40: each once a stall, a 500 or an answer naming the wrong problem.


def test_an_unclosed_string_is_read_once_not_from_every_quote() -> None:
    """The depth check skips strings with one pattern; one that retried an unclosed string from every later quote
    took 7 s for 32 KB of '"\\' (quadratic), holding every other request. It now takes the rest of the text."""
    from web.request_json import _STRING, json_depth

    text = b'["a", "b' + b'\\"' * 1000
    assert _STRING.findall(text) == [b'"a"', text[text.index(b'"b') :]]  # the unclosed string runs to the end
    assert json_depth(b"[" * 40 + b'"\\' * 1000) == 40


def test_a_body_of_escaped_quotes_is_answered_at_once(client: FlaskClient) -> None:
    body = b"[" * 40 + b'"\\' * 500_000  # 1 MB: days of work for the quadratic pattern
    answer = client.post("/api/cards", data=body, content_type="application/json")
    assert (answer.status_code, answer.json["error"]) == (400, "the JSON body nests deeper than 32 levels")


@pytest.mark.parametrize(
    ("body", "headers", "status", "named"),
    [
        (b'{"text": "\xff\xfe"}', {}, 400, "not valid JSON: it is not UTF-8 text"),
        (b'{"text": "AS",}', {}, 400, "not valid JSON: Expecting property name enclosed in double quotes at line 1"),
        (b'{"text": ' + b"9" * 4301 + b"}", {}, 400, "not valid JSON: Exceeds the limit (4300 digits)"),
        (b'["AS"]', {}, 400, "the request body must be a JSON object, not list ['AS']"),
        (b'{"text": "AS"}', {"Content-Encoding": "gzip"}, 415, "Content-Encoding 'gzip' is not read"),
    ],
    ids=["not-utf8", "trailing-comma", "4301-digits", "a-list", "gzip"],
)
def test_a_body_that_is_not_a_json_object_is_named_for_what_it_is(
    client: FlaskClient, body: bytes, headers: dict[str, str], status: int, named: str
) -> None:
    answer = client.post("/api/cards", data=body, content_type="application/json", headers=headers)
    assert answer.status_code == status and named in answer.json["error"]
    assert named in answer.json["error"]


@pytest.mark.parametrize("option", ["gin_bonus", "box_bonus", "game_bonus", "target"])
def test_a_rule_option_of_thousands_of_digits_is_refused_before_a_match_exists(
    client: FlaskClient, option: str
) -> None:
    """A gin bonus of 4,300 digits was stored, and its first gin made a total no one can write: the match then
    answered 500 on every view. Options are bounded now, and the error does not echo the digits."""
    answer = client.post("/api/matches", json={"players": ["Ann", "Bob"], "options": {option: int("9" * 4300)}})
    assert answer.status_code == 400 and f"rules: {option} must be a whole number" in answer.json["error"]
    assert len(answer.json["error"]) < 200
    assert client.get("/api/matches").json["matches"] == []


@pytest.mark.parametrize(
    ("hand", "error"),
    [
        ("AS " * 3_300_000, "Ann's hand: 9900000 characters, more than the whole deck written out takes"),
        (["AS"] * 5_000, "Ann's hand: 5000 cards, more than a deck holds (52)"),
    ],
    ids=["a-10-MB-string", "a-5000-card-list"],
)
def test_a_hand_longer_than_a_deck_is_refused_before_it_is_read(client: FlaskClient, hand: object, error: str) -> None:
    """A 10 MB hand of "AS AS AS ..." took 23 s of a worker to be told its duplicate."""
    answer = client.post("/api/arrange", json={"hands": {"Ann": hand, "Bob": "KS"}})
    assert (answer.status_code, answer.json["error"]) == (400, error)


def test_a_match_whose_stored_rules_are_not_an_object_is_listed_and_says_why(app: Flask, client: FlaskClient) -> None:
    match_id = new_match(client)
    with sqlite3.connect(app.config["DATABASE"]) as db:
        db.execute("UPDATE matches SET rules_json = 'null' WHERE id = ?", (match_id,))
    assert client.get("/").status_code == 200
    listed = client.get("/api/matches")
    assert listed.status_code == 200 and listed.json["matches"][0]["title"] == "unknown rules"
    opened = client.get(f"/api/matches/{match_id}")
    assert opened.status_code == 409 and "rules must be a mapping of options" in opened.json["error"]


def test_a_match_that_no_longer_scores_still_saves_what_was_entered(app: Flask, client: FlaskClient) -> None:
    """A match stored by an engine that allowed what this one refuses (a target of 10**9, before the rules' bounds)
    answered 409 everywhere, its JSON export too: what its players entered was out of their reach."""
    match_id = new_match(client)
    assert client.post(f"/api/matches/{match_id}/rounds", json=ROUND).status_code == 201
    with sqlite3.connect(app.config["DATABASE"]) as db:
        rules = json.loads(db.execute("SELECT rules_json FROM matches WHERE id = ?", (match_id,)).fetchone()[0])
        stored = json.dumps(rules | {"target": 10**9})  # a new revision: not the match cached before
        db.execute("UPDATE matches SET rules_json = ?, revision = revision + 1 WHERE id = ?", (stored, match_id))
    opened = client.get(f"/api/matches/{match_id}")
    assert opened.status_code == 409 and f"/matches/{match_id}/export.json" in opened.json["error"]
    saved = client.get(f"/matches/{match_id}/export.json")
    assert saved.status_code == 200 and "attachment" in saved.headers["Content-Disposition"]
    stored = saved.json
    assert "target" in stored["not_scored"] and stored["rules"]["target"] == 10**9
    assert (stored["players"], stored["first_dealer"] in ("Ann", "Bob"), stored["deals"]) == (["Ann", "Bob"], True, [1])
    assert [line["input"]["hands"] for line in stored["rounds"]] == [
        {"Ann": ROUND["hands"]["Ann"], "Bob": ROUND["hands"]["Bob"].split()}
    ]
    imported = client.post("/api/matches/import", json=stored)  # its own rules, refused by name: nothing stored
    assert imported.status_code == 400 and "target" in imported.json["error"]


def test_a_database_deleted_under_the_server_is_missing_not_made_anew(app: Flask, client: FlaskClient) -> None:
    """It was silently created again, empty, and every request answered "database error"."""
    from pathlib import Path

    new_match(client)
    database = Path(app.config["DATABASE"])
    database.unlink()
    answer = client.get("/api/matches")
    assert answer.status_code == 503 and "the database file is missing" in answer.json["error"]
    assert str(database) not in answer.json["error"] and not database.exists()


def test_a_tiff_upload_is_read_and_a_gif_is_named(client: FlaskClient) -> None:
    import io

    from PIL import Image

    pictures = {}
    for kind in ("TIFF", "GIF"):
        encoded = io.BytesIO()
        Image.new("RGB", (64, 48), "white").save(encoded, kind)
        pictures[kind] = encoded.getvalue()
    assert client.post("/api/detect", data=pictures["TIFF"], content_type="image/tiff").status_code == 200
    gif = client.post("/api/detect", data=pictures["GIF"], content_type="application/octet-stream")
    assert gif.status_code == 400 and "GIF images are not read; send JPEG, PNG" in gif.json["error"]


def test_a_form_of_too_many_parts_says_so(client: FlaskClient) -> None:
    fields = {f"f{index}": "x" for index in range(2000)}
    answer = client.post("/api/detect", data=fields, content_type="multipart/form-data")
    assert (answer.status_code, answer.json["error"]) == (413, "the form has too many parts: okgin reads up to 1000")


# Found by probing a live server in session 52: bodies that held the interpreter, every other client with it.


@pytest.mark.parametrize(
    ("path", "limit"),
    [("/api/cards", "MAX_BODY_VALUES"), ("/api/matches/import", "MAX_JSON_VALUES")],
    ids=["a-body", "a-match-file"],
)
def test_json_of_more_values_than_a_route_reads_is_refused_unparsed(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch, path: str, limit: str
) -> None:
    """Python's parser holds the interpreter until a whole text is read: 10 MB of ``1,1,1...`` or 700,000 keys held
    every other request 2 to 5 s. A body of more values (commas and colons) than its route reads is refused before it
    is parsed: 500,000 for a match file, the largest, 10,000 for any other body (read in milliseconds)."""
    from flask.json.provider import DefaultJSONProvider

    from web import request_json

    def parsed(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(DefaultJSONProvider, "loads", parsed)
    most = getattr(request_json, limit)
    answer = client.post(path, data='{"text": "AS", "x": [' + "1," * most + "1]}", content_type="application/json")
    refused = json.loads(answer.get_data())  # answer.json would parse with the app's provider
    assert (answer.status_code, refused) == (
        413,
        {"error": f"the JSON holds more than {most:,} values; no okgin request needs so many"},
    )


def test_the_largest_match_file_holds_fewer_values_than_a_json_body_may(client: FlaskClient) -> None:
    """The values limit leaves room for a match file of 1,000 rounds of four players and the 1,000 earlier versions a
    match keeps at most."""
    from scorer.match import MAX_ROUNDS
    from web.request_json import MAX_JSON_VALUES

    players = ["Annabelle", "Bartholomew", "Cecilia", "Dmitri"]
    hands = ["8C 9C 10C JC 2S 2D AH", "QS QC QH 10S JS 3D 5H", "AC 2C 3C 4D 5D 6S 7S", "KD KH 4H 4S 8D 8H 9D"]
    knock = {"upcard": "KS", "knocker": "Annabelle", "hands": dict(zip(players, hands, strict=True))}
    answer = client.post("/api/matches", json={"players": players, "rules": "oklahoma-multi"})
    rounds = f"/api/matches/{answer.json['id']}/rounds"
    assert client.post(rounds, json=knock).status_code == 201
    assert client.post(rounds, json=knock).status_code == 201
    assert client.delete(f"{rounds}/2").status_code == 200  # round 2 kept as an earlier version
    exported = client.get(f"/matches/{answer.json['id']}/export.json").json
    exported["rounds"] *= MAX_ROUNDS
    exported["earlier_versions"] *= 1_000
    text = json.dumps(exported, separators=(",", ":"))
    assert text.count(",") + text.count(":") < MAX_JSON_VALUES * 0.8
