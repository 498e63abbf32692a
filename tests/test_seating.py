"""Seats in playing order, decided once by the table layout: the CLI and the web page give the same zone
to the same player. Around a table seen from above the bottom player's left neighbour sits at the left
edge, so with 3-4 players the order is bottom, left, top, right (issue 10, problem 3).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from web_fixtures import FakeDetector, jpeg

from scorer.cards import parse_cards
from scorer.rules import Rules
from scorer.vision.detector import Detections
from scorer.vision.layout import LayoutError, TableLayout
from scorer.vision.types import CardDetection

WIDTH, HEIGHT = 1280, 720
# Where each seat's cards lie in a 1280x720 picture (box centres), and the hands dealt there.
BOTTOM = ("2C 3C 4C 5D 6D 7D AS", [(300 + 90 * i, 650) for i in range(7)])
TOP = ("8S 9S 10S JD QD KD AH", [(300 + 90 * i, 70) for i in range(7)])
LEFT = ("2H 3H 4H 5S 6S 7S QC", [(120, 160 + 60 * i) for i in range(7)])
RIGHT = ("5C 6C 7C 9D 10D JH QH", [(1160, 160 + 60 * i) for i in range(7)])
UPCARD = ("9C", [(900, 360)])


def cards_at(*seats: tuple[str, list[tuple[int, int]]]) -> list[CardDetection]:
    found = []
    for text, centres in seats:
        for card, (x, y) in zip(parse_cards(text), centres, strict=True):
            found.append(CardDetection(card, (x - 25, y - 35, x + 25, y + 35), 0.9))
    return found


def test_the_default_layouts_carry_playing_order() -> None:
    assert TableLayout.default(2).order == ("1", "2")
    assert [(s["zone"], s["where"]) for s in TableLayout.default(3).seating(["A", "B", "C"])] == [
        ("1", "bottom"),
        ("3", "left"),
        ("2", "top"),
    ]
    assert [s["where"] for s in TableLayout.default(4).seating(["A", "B", "C", "D"])] == [
        "bottom",
        "left",
        "top",
        "right",
    ]
    with pytest.raises(LayoutError, match="2 seats, too few for 3 players"):
        TableLayout.default(2).seating(["A", "B", "C"])


def test_a_layout_file_may_give_its_own_order_and_it_round_trips() -> None:
    layout = TableLayout.from_dict({"seats": {"1": [0, 0.5, 1, 1], "2": [0, 0, 1, 0.5]}, "order": ["2", "1"]})
    assert [s["zone"] for s in layout.seating(["Ann", "Bob"])] == ["2", "1"]
    assert TableLayout.from_dict(TableLayout.default(4).to_dict()) == TableLayout.default(4)
    with pytest.raises(LayoutError, match="must name each seat once"):
        TableLayout.from_dict({"seats": {"1": [0, 0.5, 1, 1], "2": [0, 0, 1, 0.5]}, "order": ["1", "1"]})


@pytest.mark.parametrize("players", [3, 4])
def test_the_cli_scores_hands_in_the_layouts_playing_order(players: int) -> None:
    from scorer.cli.live import score_reading

    seats = [BOTTOM, TOP, LEFT, RIGHT][:players]
    layout = TableLayout.default(players)
    reading = layout.assign(Detections(tuple(cards_at(*seats, UPCARD)), (), WIDTH, HEIGHT))
    result = score_reading(Rules.preset_named("oklahoma-multi"), layout, reading, parse_cards("9C")[0], "1")
    assert list(result.hands) == ["1", "3", "2", "4"][:players], "the left neighbour (seat 3) plays second"


def test_watch_scores_a_steady_table_once_whatever_order_its_cards_are_found_in() -> None:
    import json

    from scorer.cli.live import _Reporter
    from scorer.vision.types import StableReading

    layout = TableLayout.default(3)
    found = cards_at(BOTTOM, TOP, LEFT, UPCARD)
    lines: list[str] = []
    reporter = _Reporter(Rules.preset_named("oklahoma-multi"), layout, parse_cards("9C")[0], "1", True, lines.append)
    for order in (found, found[::-1], found[3:] + found[:3]):
        reading = layout.assign(Detections(tuple(order), (), WIDTH, HEIGHT))
        reporter(StableReading(reading, stable=True, changed_at=0.0))
    events = [json.loads(line)["event"] for line in lines]
    assert events.count("score") == 1 and events.count("reading") == 1


@pytest.fixture
def seated_app(tmp_path: Path) -> Iterator[tuple[Flask, FakeDetector]]:
    from web import create_app

    detector = FakeDetector(cards_at(BOTTOM, TOP, LEFT, RIGHT, UPCARD))
    yield create_app({"TESTING": True, "DATA_DIR": str(tmp_path / "data"), "DETECTOR": detector}), detector


def new_match(client: FlaskClient, players: list[str]) -> int:
    answer = client.post("/api/matches", json={"players": players, "rules": "oklahoma-multi", "dealer": players[0]})
    assert answer.status_code == 201, answer.json
    match_id: int = answer.json["id"]
    return match_id


@pytest.mark.parametrize(
    ("players", "expected"),
    [
        (["Ann", "Bob", "Cat"], {"Ann": BOTTOM, "Bob": LEFT, "Cat": TOP}),
        (["Ann", "Bob", "Cat", "Dan"], {"Ann": BOTTOM, "Bob": LEFT, "Cat": TOP, "Dan": RIGHT}),
    ],
)
def test_live_frames_give_each_player_the_cards_of_their_seat(
    seated_app: tuple[Flask, FakeDetector], players: list[str], expected: dict
) -> None:
    pytest.importorskip("scorer.vision.pipeline")
    client = seated_app[0].test_client()
    match_id = new_match(client, players)
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert '"where": "left"' in page and f'"player": "{players[1]}"' in page
    answer = None
    for _ in range(12):  # the stabiliser needs a run of agreeing frames
        answer = client.post(f"/live/frame?match={match_id}", data=jpeg(), content_type="image/jpeg")
        assert answer.status_code == 200, answer.json
    assert answer is not None
    table = answer.json["table"]
    for name, (cards, _) in expected.items():
        assert sorted(c["card"] for c in table["hands"][name]) == sorted(cards.split()), name
    assert table["upcard"]["card"] == "9C"
    out = {c["card"] for c in table["out"]}
    assert out == (set() if len(players) == 4 else set(RIGHT[0].split())), "nobody sits at the right with 3"


def test_a_drawn_box_is_placed_by_the_layout(seated_app: tuple[Flask, FakeDetector]) -> None:
    client = seated_app[0].test_client()
    match_id = new_match(client, ["Ann", "Bob", "Cat"])

    def place(box: list[float]) -> dict:
        answer = client.post(f"/live/place?match={match_id}", json={"box": box, "width": WIDTH, "height": HEIGHT})
        assert answer.status_code == 200, answer.json
        result: dict = answer.json
        return result

    assert place([80, 300, 160, 400]) == {"player": "Bob"}  # the left strip: the second player
    assert place([600, 20, 660, 120]) == {"player": "Cat"}
    assert place([870, 320, 930, 400]) == {"upcard": True}
    assert place([1150, 300, 1200, 400]) == {"out": True}  # the right strip: nobody sits there with 3
    bad = client.post(f"/live/place?match={match_id}", json={"box": [1, 2], "width": WIDTH, "height": HEIGHT})
    assert bad.status_code == 400 and "x1, y1, x2, y2" in bad.json["error"]
    assert client.post("/live/place", json={}).status_code == 400


def test_a_reading_s_conflicts_name_the_player_not_the_seat() -> None:
    """The camera's status said "seat 3 shows 9 cards": a match's table calls that seat by its player."""
    from web.live import table_json

    layout = TableLayout.default(3)
    crowded = ("2H 3H 4H 5S 6S 7S QC 8H 9H", [(120, 160 + 45 * i) for i in range(9)])  # the left seat: Bob's
    reading = layout.assign(Detections(tuple(cards_at(BOTTOM, TOP, crowded, UPCARD)), (), WIDTH, HEIGHT), max_cards=8)
    assert [c.reason for c in reading.conflicts] == ["seat 3 shows 9 cards; a hand holds at most 8"]
    table = table_json(reading, layout, ["Ann", "Bob", "Cat"])
    assert table["conflicts"] == [{"card": None, "reason": "Bob shows 9 cards; a hand holds at most 8"}]


def test_a_card_straddling_two_seats_names_both_players() -> None:
    """The camera's status said "KH straddles seats 3 and 1": the players heard seat numbers, not their names."""
    from web.live import table_json

    layout = TableLayout.default(3)
    straddling = CardDetection(parse_cards("KH")[0], (230, 400, 330, 600), 0.9)  # Bob's left strip and Ann's seat
    reading = layout.assign(Detections((*cards_at(BOTTOM, TOP, UPCARD), straddling), (), WIDTH, HEIGHT))
    assert [c.reason for c in reading.conflicts] == ["KH straddles seats 3 and 1"]  # the CLI's wording: seats
    table = table_json(reading, layout, ["Ann", "Bob", "Cat"])
    assert table["conflicts"] == [{"card": "KH", "reason": "KH straddles Bob and Ann"}]


@pytest.mark.parametrize(
    ("said", "heard"),
    [
        ("seat 3 shows 9 cards; a hand holds at most 8", "Cat shows 9 cards; a hand holds at most 8"),
        ("QH straddles seats 1 and 2", "QH straddles Ann and Bob"),
        ("QH straddles seats 1 and 3 and 4", "QH straddles Ann and Cat and Dan"),
        ("QH straddles seats 1, 2 and 4", "QH straddles Ann, Bob and Dan"),
        ("QH is seen in seat 2 and in seat 1; a deck has one",
         "QH is seen in front of Bob and in front of Ann; a deck has one"),
        ("QH is seen in the upcard zone and outside every seat", None),
        ("seat 1 shows 10 cards, seat 2 11: not 10 each", "Ann shows 10 cards, Bob 11: not 10 each"),
        ("seat 1 lays 9H 10H JH 2S together, a meld with other cards",
         "Ann lays 9H 10H JH 2S together, a meld with other cards"),
        ("seat 2 shows 1 too few and seat 3 shows 2 too few, but none of the melds seat 1 laid ends in cards",
         "Bob shows 1 too few and Cat shows 2 too few, but none of the melds Ann laid ends in cards"),
        ("the layoffs are read as seat 2: QC; they may be seat 3: QC",
         "the layoffs are read as Bob: QC; they may be Cat: QC"),
        ("seat 5 shows 9 cards; 2H straddles seats 4 and 5", "seat 5 shows 9 cards; 2H straddles Dan and seat 5"),
    ],
)  # fmt: skip
def test_every_seat_the_camera_speaks_of_is_named(said: str, heard: str | None) -> None:
    """Each way ``scorer.vision`` words a seat in its conflicts and notes, as a match's table hears it; a seat
    nobody sits at keeps its number."""
    from web.laydown import name_seats

    assert name_seats(said, {1: "Ann", 2: "Bob", 3: "Cat", 4: "Dan"}) == (heard or said)
