"""Table layout: cards go to the seat (or upcard zone) holding their centre; impossible tables are reported."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import detection, row_of, truth_detections

from scorer.cards import parse_cards
from scorer.vision.layout import LayoutError, TableLayout, Zone, points_in_polygon
from scorer.vision.types import Conflict, Detections


def detections(cards: list[Any], conflicts: tuple[Conflict, ...] = ()) -> Detections:
    return Detections(tuple(cards), conflicts, 1280, 720)


def names(cards: Any) -> list[str]:
    return [str(c.card) for c in cards]


def test_two_player_default_sorts_bottom_and_top_halves_and_the_upcard() -> None:
    bottom = row_of("AS 2S 3S", y=650)
    top = row_of("KD QD JD", y=60)
    upcard = detection("7H", (880, 360))
    reading = TableLayout.default(2).assign(detections([*bottom, *top, upcard]))
    assert names(reading.by_player[1]) == ["AS", "2S", "3S"]
    assert names(reading.by_player[2]) == ["KD", "QD", "JD"]
    assert names(reading.upcard) == ["7H"]
    assert reading.conflicts == () and reading.unassigned == ()
    assert (reading.width, reading.height) == (1280, 720)


def test_cards_on_the_pile_are_nobodys() -> None:
    reading = TableLayout.default(2).assign(detections([detection("5C", (500, 360))]))
    assert names(reading.unassigned) == ["5C"]
    assert reading.by_player == {1: (), 2: ()}


def test_hands_are_listed_left_to_right() -> None:
    cards = [detection("3S", (600, 650)), detection("AS", (100, 650)), detection("2S", (300, 650))]
    assert names(TableLayout.default(2).assign(detections(cards)).by_player[1]) == ["AS", "2S", "3S"]


@pytest.mark.parametrize(
    ("cards", "max_cards", "reason"),
    [
        (row_of("AS 2S 3S 4S", y=650), 3, "seat 1 shows 4 cards; a hand holds at most 3"),
        ([detection("7H", (880, 330)), detection("8H", (900, 400))], None, "the upcard zone shows 2 cards"),
        ([detection("QH", (100, 360), size=(60, 200))], None, "QH straddles seats 1 and 2"),
        ([detection("QH", (100, 650)), detection("QH", (880, 360), conf=0.95)], None, "QH is seen in the upcard zone"),
    ],
)
def test_impossible_tables_are_reported(cards: list[Any], max_cards: int | None, reason: str) -> None:
    reading = TableLayout.default(2).assign(detections(cards), max_cards=max_cards)
    assert any(reason in conflict.reason for conflict in reading.conflicts), reading.conflicts


def test_a_card_seen_twice_is_kept_once_where_it_is_surest() -> None:
    reading = TableLayout.default(2).assign(
        detections([detection("QH", (100, 650), conf=0.6), detection("QH", (100, 60), conf=0.9)])
    )
    assert names(reading.by_player[2]) == ["QH"] and reading.by_player[1] == ()
    assert [c.reason for c in reading.conflicts] == ["QH is seen in seat 2 and in seat 1; a deck has one"]


def test_detector_conflicts_are_kept() -> None:
    conflict = Conflict(None, "something odd")
    assert TableLayout.default(2).assign(detections([], (conflict,))).conflicts == (conflict,)


@pytest.mark.parametrize(
    ("players", "point", "zone"),
    [
        (3, (0.1, 0.5), "3"),
        (3, (0.9, 0.5), None),
        (4, (0.9, 0.5), "4"),
        (4, (0.05, 0.95), "1"),
        (4, (0.95, 0.05), "2"),
        (4, (0.7, 0.5), "upcard"),
    ],
)
def test_three_and_four_player_layouts(players: int, point: tuple[float, float], zone: str | None) -> None:
    assert TableLayout.default(players).zone_of(point) == zone


def test_dict_round_trip_and_rectangles() -> None:
    layout = TableLayout.default(4)
    assert TableLayout.from_dict(layout.to_dict()) == layout
    custom = TableLayout.from_dict({"seats": {"2": [0, 0, 1, 0.5], "1": {"rect": [0, 0.5, 1, 1]}}, "upcard": None})
    assert [zone.name for zone in custom.seats] == ["1", "2"] and custom.upcard is None
    assert custom.zone_of((0.5, 0.9)) == "1"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"seats": {"1": [0, 0, 2, 1]}}, r"point \(2.0, 0.0\) is outside the picture"),
        ({"seats": {"1": [0.5, 0, 0.2, 1]}}, "must have x1 < x2"),
        ({"seats": {"1": [[0, 0], [1, 1]]}}, "needs at least 3 corners"),
        ({"seats": {"1": "everywhere"}}, "expected \\[x1, y1, x2, y2\\]"),
        ({"seats": {"1": [0, 0, 1, 1], "3": [0, 0, 1, 1]}}, "seat zones must be named 1, 2"),
        ({"seats": {}}, "at least one seat"),
        ({"zones": []}, 'must be an object with "seats"'),
    ],
)
def test_bad_layouts_are_named(data: dict[str, Any], message: str) -> None:
    with pytest.raises(LayoutError, match=message):
        TableLayout.from_dict(data)


def test_unsupported_player_count() -> None:
    with pytest.raises(LayoutError, match="2, 3 or 4 players, not 5"):
        TableLayout.default(5)


def test_point_in_polygon_handles_concave_shapes() -> None:
    import numpy as np

    ell = ((0, 0), (1, 0), (1, 0.2), (0.2, 0.2), (0.2, 1), (0, 1))
    inside = points_in_polygon(np.array([[0.1, 0.9], [0.9, 0.1], [0.6, 0.6]]), ell)
    assert inside.tolist() == [True, True, False]
    assert Zone("x", ell).contains(np.array([[0.1, 0.1]])).tolist() == [True]


HAND_1 = "AS 2S 3S 4H 5H 6H 7C 8C 9C KD"
HAND_2 = "AD 2D 3D 4C 5C 6C 7H 8H 9H KS"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rendered_table_read_by_a_perfect_detector(render_scene: Any, seed: int) -> None:
    _, truth = render_scene(seed, hands={1: HAND_1, 2: HAND_2}, upcard="QH")
    reading = TableLayout.default(2).assign(truth_detections(truth), max_cards=10)
    assert sorted(names(reading.by_player[1])) == sorted(map(str, parse_cards(HAND_1)))
    assert sorted(names(reading.by_player[2])) == sorted(map(str, parse_cards(HAND_2)))
    assert names(reading.upcard) == ["QH"]
    assert reading.conflicts == ()


def test_annotating_a_reading_draws_each_zone(blank_frame: Any) -> None:
    from scorer.vision.annotate import annotate

    reading = TableLayout.default(2).assign(
        detections([*row_of("AS 2S", y=650), detection("7H", (880, 360)), detection("5C", (500, 360))])
    )
    drawn = annotate(blank_frame, reading)
    assert drawn.shape == blank_frame.shape and not (blank_frame != 90).any(), "the original is untouched"
    for x, y in ((100, 650), (880, 360), (500, 360)):  # every card's box edge was drawn near it
        assert (drawn[y - 40 : y + 40, x - 30 : x + 30] != 90).any()
