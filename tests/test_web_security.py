"""Request guards: CSRF on form posts, cross-site refusal on the API, the PIN, headers, no debug."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import web_fixtures
from flask import Flask
from flask.testing import FlaskClient

app, client, detector = web_fixtures.app, web_fixtures.client, web_fixtures.detector

REMOTE = {"REMOTE_ADDR": "192.168.1.20"}


def page_token(client: FlaskClient) -> str:
    match = re.search(r'name="csrf-token" content="([^"]+)"', client.get("/").get_data(as_text=True))
    assert match
    return match.group(1)


def test_a_form_post_without_the_csrf_token_is_refused(client: FlaskClient) -> None:
    answer = client.post("/matches", data={"player": ["Ann", "Bob"]})
    assert answer.status_code == 403
    assert "CSRF" in answer.get_data(as_text=True)


def test_a_form_post_with_the_sessions_token_is_accepted(client: FlaskClient) -> None:
    token = page_token(client)
    answer = client.post("/matches", data={"player": ["Ann", "Bob", "", ""], "csrf_token": token})
    assert answer.status_code == 303 and answer.headers["Location"].endswith("/matches/1")


def test_a_wrong_csrf_header_is_refused(client: FlaskClient) -> None:
    page_token(client)
    answer = client.post("/api/matches", data="x", headers={"X-CSRF-Token": "forged"}, content_type="text/plain")
    assert answer.status_code == 403 and "CSRF token does not match" in answer.json["error"]


def test_a_csrf_token_of_non_ascii_text_is_refused_not_a_500(client: FlaskClient) -> None:
    """hmac.compare_digest raises TypeError for a str holding a non-ASCII character: a forged token "é" was a 500."""
    page_token(client)
    header = client.post("/api/cards", data="x", headers={"X-CSRF-Token": "\u00e9"}, content_type="text/plain")
    assert header.status_code == 403 and "CSRF token does not match" in header.json["error"]
    for path in ("/matches", "/matches/import"):
        form = client.post(path, data={"player": ["Ann", "Bob"], "csrf_token": "\u2603"})
        assert form.status_code == 403 and "CSRF token" in form.get_data(as_text=True)


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"])
def test_the_api_refuses_what_a_cross_site_form_can_send(client: FlaskClient, content_type: str) -> None:
    answer = client.post("/api/matches", data=b'{"players": ["Ann", "Bob"]}', content_type=content_type)
    assert answer.status_code == 403
    assert client.get("/api/matches").json["matches"] == []


def test_a_foreign_origin_is_refused_even_with_json(client: FlaskClient) -> None:
    answer = client.post("/api/matches", json={"players": ["Ann", "Bob"]}, headers={"Origin": "https://evil.example"})
    assert answer.status_code == 403 and "cross-site" in answer.json["error"]
    same = client.post("/api/matches", json={"players": ["Ann", "Bob"]}, headers={"Origin": "http://localhost"})
    assert same.status_code == 201


@pytest.fixture
def pin_app(tmp_path: Path) -> Flask:
    from web import create_app

    return create_app({"TESTING": True, "DATA_DIR": str(tmp_path), "PIN": "4321"})


def test_loopback_needs_no_pin(pin_app: Flask) -> None:
    local = pin_app.test_client()
    assert local.get("/api/matches").status_code == 200
    assert local.get("/api/matches", environ_base={"REMOTE_ADDR": "::1"}).status_code == 200


def test_other_machines_need_the_pin(pin_app: Flask) -> None:
    remote = pin_app.test_client()
    refused = remote.get("/api/matches", environ_base=REMOTE)
    assert refused.status_code == 401 and "X-Okgin-Pin" in refused.json["error"]
    page = remote.get("/", environ_base=REMOTE)
    assert page.status_code == 302 and "/pin" in page.headers["Location"]
    assert remote.get("/api/matches", environ_base=REMOTE, headers={"X-Okgin-Pin": "4321"}).status_code == 200


def test_the_pin_page_unlocks_the_session(pin_app: Flask) -> None:
    remote = pin_app.test_client()
    form = remote.get("/pin?next=/api/matches", environ_base=REMOTE).get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', form)
    assert token
    wrong = remote.post("/pin?next=/", data={"pin": "0000", "csrf_token": token.group(1)}, environ_base=REMOTE)
    assert wrong.status_code == 401
    right = remote.post(
        "/pin?next=//evil.example/", data={"pin": "4321", "csrf_token": token.group(1)}, environ_base=REMOTE
    )
    assert right.status_code == 302 and right.headers["Location"] == "/"  # never redirects off-site
    assert remote.get("/api/matches", environ_base=REMOTE).status_code == 200


def test_pin_guessing_is_throttled(pin_app: Flask) -> None:
    remote = pin_app.test_client()
    for _ in range(3):  # three free tries, then a wait that doubles (tests/test_web_lan_security.py)
        wrong = remote.get("/api/matches", environ_base=REMOTE, headers={"X-Okgin-Pin": "1111"})
        assert wrong.status_code == 401 and wrong.json["error"].endswith(
            "the X-Okgin-Pin header sent is not this server's PIN"
        )
    locked = remote.get("/api/matches", environ_base=REMOTE, headers={"X-Okgin-Pin": "4321"})
    assert locked.status_code == 429


def test_debug_is_off_and_errors_show_no_traceback(app: Flask, client: FlaskClient) -> None:
    assert app.debug is False

    @app.get("/api/boom")
    def boom() -> str:
        raise RuntimeError("secret internals")

    answer = client.get("/api/boom")
    assert answer.status_code == 500
    assert answer.json == {"error": "internal error; the server log has the details"}


def test_pages_carry_protective_headers(client: FlaskClient) -> None:
    headers = client.get("/").headers
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"


def test_the_secret_key_is_generated_once_and_kept(tmp_path: Path) -> None:
    from web import create_app

    first = create_app({"DATA_DIR": str(tmp_path)}).config["SECRET_KEY"]
    second = create_app({"DATA_DIR": str(tmp_path)}).config["SECRET_KEY"]
    assert first == second and len(first) >= 32
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def form_of(fields: int) -> str:
    """A URL-encoded set-up form of two players and ``fields`` fields in all."""
    return "&".join(["player=Ann", "player=Bob", *["unread=1"] * (fields - 2)])


def test_a_form_of_more_fields_than_okgin_reads_is_refused_before_it_is_parsed(pin_app: Flask) -> None:
    """Werkzeug bounds a multipart form's parts, not a URL-encoded form's fields: 10 MB of ``x=1&x=1...`` took 20 s and
    400 MB to parse, and the PIN page parses its form for any machine on the LAN."""
    limit = pin_app.config["MAX_FORM_PARTS"]
    local, remote = pin_app.test_client(), pin_app.test_client()
    form = {"content_type": "application/x-www-form-urlencoded", "headers": {"X-Requested-With": "test"}}
    too_many = f"{form_of(limit + 1)}&pin=4321"
    for client, path, extra in [(remote, "/pin", REMOTE), (local, "/matches", {})]:
        answer = client.post(path, data=too_many, environ_base=extra, **form)  # type: ignore[arg-type]
        assert answer.status_code == 413, path
        assert f"the form has too many fields: okgin reads up to {limit}" in answer.get_data(as_text=True)
    made = local.post("/matches", data=form_of(limit), **form)  # type: ignore[arg-type]
    assert made.status_code == 303 and made.headers["Location"].endswith("/matches/1")
