"""Fuzzing every JSON route: whatever the body, the answer is 2xx, or 4xx with ``{"error": "..."}``; never a 5xx.

Two kinds of bodies per route: any JSON value (and any bytes), and bodies shaped like the route's own
with every field drawn from valid values, near misses and junk, which reach deeper into the parsing.
The number of examples is bounded (``OKGIN_FUZZ_EXAMPLES``, default 25 per test) and the examples are
the same on every run, so the suite takes seconds and CI is repeatable; to search further, raise the
count and set ``OKGIN_FUZZ_RANDOM=1`` for fresh examples each run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import web_fixtures
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from web_fixtures import JSON_ROUTES, ROUND, jpeg

from scorer.cards import DECK

EXAMPLES = int(os.environ.get("OKGIN_FUZZ_EXAMPLES", "25"))
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=not os.environ.get("OKGIN_FUZZ_RANDOM"),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
ROUTES = JSON_ROUTES

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([10**400, -(10**400), 2**63, -(2**63) - 1])  # past int64, past what a float holds
    | st.floats()
    | st.text(max_size=20)
    | st.text(st.characters(exclude_categories=()), max_size=8)  # with NUL, controls and lone surrogates
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=12), children, max_size=6),
    max_leaves=30,
)
card_names = st.sampled_from([str(card) for card in DECK])
cards_or_junk = card_names | st.text(max_size=4) | scalars
hands = (
    st.lists(card_names, unique=True, max_size=12)  # real hands, up to one card too many and beyond
    | st.lists(cards_or_junk, max_size=13)
    | st.text(max_size=40)
    | scalars
)
names = (
    st.sampled_from(["Ann", "Bob", "Cy", "Di"]) | st.text(st.characters(exclude_categories=()), max_size=12) | scalars
)
rules = st.sampled_from(["oklahoma", "gin-rummy", "oklahoma-multi"]) | scalars
options = (
    st.dictionaries(
        st.sampled_from(["gin_bonus", "knock_limit", "target", "max_players", "scoring", "spade_doubles", "nope"]),
        scalars,
        max_size=4,
    )
    | scalars
)
layoffs = st.fixed_dictionaries({}, optional={"card": cards_or_junk, "onto": hands}) | st.text(max_size=30) | scalars
by_player = st.dictionaries(
    names.filter(lambda n: isinstance(n, str)), st.lists(layoffs, max_size=4) | scalars, max_size=4
)
round_bodies = st.fixed_dictionaries(
    {},
    optional={
        "upcard": cards_or_junk,
        "knocker": names,
        "hands": st.dictionaries(names.filter(lambda n: isinstance(n, str)), hands, max_size=4) | scalars,
        "draw": scalars,
        "knocker_melds": st.lists(hands, max_size=4) | json_values,
        "discard": cards_or_junk,
        "layoffs": by_player | json_values,
        "groups": st.dictionaries(names.filter(lambda n: isinstance(n, str)), st.lists(hands, max_size=4) | scalars)
        | json_values,
        "number": scalars,
        "match": st.sampled_from([1, 2, True, -(2**63) - 1, 2**63]) | scalars,
        "rules": rules,
        "options": options,
    },
)
SHAPED: dict[str, Any] = {
    "/api/matches": st.fixed_dictionaries(
        {},
        optional={
            "players": st.lists(names, max_size=6) | scalars,
            "rules": rules,
            "options": options,
            "dealer": names,
        },
    ),
    "/api/matches/1/earlier-versions/1/restore": st.fixed_dictionaries({}, optional={"revision": scalars}),
    "/api/matches/1/players/1": st.fixed_dictionaries({}, optional={"name": names, "revision": scalars}),
    "/api/matches/1/rematch": st.just({}) | json_values,
    "/api/matches/1/rounds": round_bodies,
    "/api/matches/1/rounds/1": round_bodies,
    "/api/matches/import": st.fixed_dictionaries(
        {},
        optional={
            "players": st.lists(names, max_size=5) | scalars,
            "rules": st.fixed_dictionaries({}, optional={"preset": rules}) | options | scalars,
            "first_dealer": names,
            "rounds": st.lists(st.fixed_dictionaries({}, optional={"input": round_bodies}) | scalars, max_size=3)
            | scalars,
            "earlier_versions": st.lists(
                st.fixed_dictionaries(
                    {},
                    optional={"input": round_bodies, "number": scalars, "replaced_at": names, "replaced_by": names},
                ),
                max_size=2,
            )
            | scalars,
            "totals": st.dictionaries(st.text(max_size=4), scalars, max_size=3) | scalars,
        },
    ),
    "/api/score": round_bodies,
    "/api/arrange": round_bodies,
    "/api/cards": st.fixed_dictionaries({}, optional={"text": st.text(max_size=40) | scalars}),
    "/live/place": st.fixed_dictionaries(
        {},
        optional={"box": st.lists(scalars, min_size=4, max_size=4) | scalars, "width": scalars, "height": scalars},
    ),
    "/correct/examples": st.fixed_dictionaries(
        {},
        optional={
            "frame_id": st.sampled_from(["FRAME"]) | scalars,
            "cards": st.lists(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "card": cards_or_junk,
                        "box": st.lists(scalars, max_size=5) | scalars,
                        "seat": names,
                        "detected": cards_or_junk,
                    },
                )
                | scalars,
                max_size=5,
            )
            | scalars,
        },
    ),
}


@pytest.fixture(scope="module")
def fuzzed_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    from web import create_app
    from web.detection import service

    data = tmp_path_factory.mktemp("fuzz")
    app = create_app({"TESTING": True, "DATA_DIR": str(data), "DETECTOR": web_fixtures.FakeDetector()})
    client = app.test_client()
    assert client.post("/api/matches", json={"players": ["Ann", "Bob"], "dealer": "Bob"}).status_code == 201
    assert client.post("/api/matches/1/rounds", json=ROUND).status_code == 201
    with app.app_context():
        app.config["FUZZ_FRAME"] = service().remember_frame(jpeg(200, 100), 200, 100)
    yield app


def assert_answered_well(client: FlaskClient, method: str, path: str, **body: Any) -> None:
    body.setdefault("query_string", {"match": 1})  # the routes that need a match (/live/place) find one
    answer = client.open(path, method=method, **body)
    assert answer.status_code < 500, (answer.status_code, answer.get_data(as_text=True)[:300], body)
    if answer.status_code >= 400:
        assert answer.is_json and isinstance(answer.json.get("error"), str) and answer.json["error"], answer.data[:300]


def with_frame(app: Flask, body: Any) -> Any:
    if isinstance(body, dict) and body.get("frame_id") == "FRAME":
        return body | {"frame_id": app.config["FUZZ_FRAME"]}
    return body


@pytest.mark.parametrize(("method", "path"), ROUTES)
@FUZZ
@given(body=json_values)
def test_any_json_body(fuzzed_app: Flask, method: str, path: str, body: Any) -> None:
    assert_answered_well(fuzzed_app.test_client(), method, path, json=body)


@pytest.mark.parametrize(("method", "path"), ROUTES)
@FUZZ
@given(body=st.data())
def test_bodies_shaped_like_the_routes_own(fuzzed_app: Flask, method: str, path: str, body: st.DataObject) -> None:
    drawn = with_frame(fuzzed_app, body.draw(SHAPED[path]))
    assert_answered_well(fuzzed_app.test_client(), method, path, json=drawn)


@pytest.mark.parametrize(("method", "path"), ROUTES)
@FUZZ
@given(raw=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_any_bytes_as_json(fuzzed_app: Flask, method: str, path: str, raw: bytes) -> None:
    assert_answered_well(fuzzed_app.test_client(), method, path, data=raw, content_type="application/json")


@FUZZ
@given(players=st.text(max_size=12), raw=st.binary(max_size=300))
def test_any_detection_upload(fuzzed_app: Flask, players: str, raw: bytes) -> None:
    client = fuzzed_app.test_client()
    for route in ("/api/detect", "/live/frame"):
        assert_answered_well(client, "POST", route, query_string={"players": players}, data=raw,
                             content_type="image/jpeg")  # fmt: skip


def test_every_json_route_is_fuzzed(fuzzed_app: Flask) -> None:
    from web.request_json import json_routes

    assert json_routes(fuzzed_app) == ROUTES


def test_the_fuzzed_app_still_holds_its_match(fuzzed_app: Flask) -> None:
    """Whatever the fuzzing did, the match it started with reads back whole (rounds may have been added)."""
    match = fuzzed_app.test_client().get("/api/matches/1").json
    assert match["players"] == ["Ann", "Bob"] and len(match["rounds"]) >= 1
    assert Path(fuzzed_app.config["DATABASE"]).exists()
