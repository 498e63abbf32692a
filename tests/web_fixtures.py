"""Shared fixtures for the web tests: flaskr-style ``app``/``client``/``runner`` and a ``FakeDetector``.

Import the fixtures into a test module with ``app, client, runner = web_fixtures.app, ...``. Web tests
never load torch: the detector is a fake that returns canned detections.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from scorer.cards import parse_cards
from scorer.vision.types import CardDetection, Conflict, Detections

ANN = "8C 9C 10C JC 9H 10H JH 2S 2D AC"
BOB = "QS QC QH 10S JS 3D 5H 7S AD 7D"
ROUND = {"upcard": "KS", "knocker": "Ann", "hands": {"Ann": ANN.split(), "Bob": BOB}}
"""The engine's worked example: Ann knocks with 5, Bob lays off QC and QH and keeps 23: Ann scores 18."""
JSON_ROUTES = [
    ("POST", "/api/arrange"),
    ("POST", "/api/cards"),
    ("POST", "/api/matches"),
    ("POST", "/api/matches/1/earlier-versions/1/restore"),
    ("PUT", "/api/matches/1/players/1"),
    ("POST", "/api/matches/1/rematch"),
    ("POST", "/api/matches/1/rounds"),
    ("PUT", "/api/matches/1/rounds/1"),
    ("POST", "/api/matches/import"),
    ("POST", "/api/score"),
    ("POST", "/correct/examples"),
    ("POST", "/live/place"),
]
"""Every route that reads a JSON body, ids as 1 (``web.request_json.json_routes`` of the app, checked in the fuzz)."""


class FakeDetector:
    """Returns the same cards for every frame; counts calls. Boxes: seat 1 bottom half, seat 2 top half."""

    def __init__(self, cards: Sequence[CardDetection] = (), conflicts: Sequence[Conflict] = ()) -> None:
        self.cards = tuple(cards)
        self.conflicts = tuple(conflicts)
        self.calls = 0

    def detect(self, image_bgr: np.ndarray) -> Detections:
        self.calls += 1
        height, width = image_bgr.shape[:2]
        return Detections(self.cards, self.conflicts, width, height)


def seated(cards: str, row_y: float, width: int = 1280) -> list[CardDetection]:
    """Detections for a row of cards across the frame at height ``row_y`` (pixels)."""
    found = parse_cards(cards)
    step = width * 0.8 / max(1, len(found))
    return [
        CardDetection(card, (60 + i * step, row_y - 40, 60 + i * step + 50, row_y + 40), 0.9)
        for i, card in enumerate(found)
    ]


def table_detections() -> list[CardDetection]:
    """Ann's hand at the bottom of a 1280x720 frame, Bob's at the top."""
    return seated(ANN, 620) + seated(BOB, 100)


def jpeg(width: int = 1280, height: int = 720) -> bytes:
    image = np.full((height, width, 3), (40, 90, 30), np.uint8)
    ok, encoded = cv2.imencode(".jpg", image)
    assert ok
    return encoded.tobytes()


@pytest.fixture
def detector() -> FakeDetector:
    return FakeDetector(table_detections())


@pytest.fixture
def app(tmp_path: Path, detector: FakeDetector) -> Iterator[Flask]:
    from web import create_app

    yield create_app({"TESTING": True, "DATA_DIR": str(tmp_path / "data"), "DETECTOR": detector})


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def runner(app: Flask) -> FlaskCliRunner:
    return app.test_cli_runner()


@contextlib.contextmanager
def database_at(path: Path, version: int) -> Iterator[sqlite3.Connection]:
    """A database file as migration ``version`` left it, holding match 7 of Ann and Bob (Bob deals first), for a
    test to add that version's rows to before an upgrade; committed at the end."""
    from web.db import migrations

    with contextlib.closing(sqlite3.connect(path)) as old:
        for migration in migrations()[:version]:
            old.executescript(migration.sql)
        old.execute(f"PRAGMA user_version = {version}")
        old.execute("INSERT INTO matches (id, created_at, rules_json, first_dealer) VALUES (7, 'then', '{}', 'Bob')")
        old.executemany("INSERT INTO players VALUES (7, ?, ?)", [(1, "Ann"), (2, "Bob")])
        yield old
        old.commit()


def new_match(client: FlaskClient, **extra: Any) -> int:
    answer = client.post("/api/matches", json={"players": ["Ann", "Bob"], "dealer": "Bob", **extra})
    assert answer.status_code == 201, answer.json
    match_id: int = answer.json["id"]
    return match_id
