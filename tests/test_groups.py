"""Reading the table as it was laid: cards overlapping in a row, fan or cascade are one group; the knocker's
meld groups are his melds as laid, a lone card his discard, cards put against his melds the layoffs."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from conftest import truth_detections

from scorer.cards import Card, parse_cards
from scorer.melds import parse_melds
from scorer.rules import Rules, score_round
from scorer.synth.scene import SceneConfig
from scorer.vision.boxes import turned_box
from scorer.vision.groups import SEAT_TURNS, card_size, group_cards, group_reading, groups_json, read_laydown
from scorer.vision.layout import TableLayout
from scorer.vision.types import CardDetection, FrameReading

C = Card.parse
CARD = (60.0, 84.0)  # upright width, height of a card in these hand-made readings


def row(cards: str, x: float, y: float, seat: int = 1, step: float = 15) -> list[CardDetection]:
    """A row of overlapping cards laid by ``seat``: each covered card shows its top-left index, the last card
    both corners (its box spans it). Positions are in the player's view, then turned into the picture."""
    parsed = parse_cards(cards)
    found = []
    for k, card in enumerate(parsed):
        left = x + k * step
        box = (left, y, left + CARD[0], y + CARD[1]) if k == len(parsed) - 1 else (left + 2, y + 2, left + 10, y + 22)
        found.append(CardDetection(card, turned_box(box, -SEAT_TURNS[seat]), 0.9))
    return found


def texts(groups: Any) -> list[str]:
    return [" ".join(map(str, group.cards)) for group in groups]


# --- grouping by position


@pytest.mark.parametrize("seat", [1, 2, 3, 4])
def test_overlapping_cards_are_one_group_in_every_seats_view(seat: int) -> None:
    cards = [*row("5S 6S 7S", 0, 0, seat), *row("KD", 110, 0, seat), *row("9C 9D 9H 9S", 190, 0, seat)]
    assert texts(group_cards(cards, SEAT_TURNS[seat], CARD)) == ["5S 6S 7S", "KD", "9C 9D 9H 9S"]


def test_a_cascade_is_one_group_read_top_down() -> None:
    cascade = [CardDetection(C(card), (0, 20 * k, 10, 20 * k + 20), 0.9) for k, card in enumerate(["4H", "5H", "6H"])]
    cascade[-1] = CardDetection(C("6H"), (0, 40, 60, 124), 0.9)
    assert texts(group_cards(cascade, 0, CARD)) == ["4H 5H 6H"]


def test_card_size_comes_from_cards_seen_whole_else_small_from_the_indices() -> None:
    cards = row("5S 6S 7S", 0, 0)
    assert card_size(cards) == CARD
    width, height = card_size(cards[:2])  # indices only: sized as for the deck with the largest indices
    assert width < CARD[0] and height < CARD[1]


def test_card_shaped_indices_are_not_taken_for_cards_seen_whole() -> None:
    # Small-index decks: no card shows two corners, and a "10" index (rank over suit) is as card-shaped as a card.
    # Taken for whole cards, 8 x 13 boxes made the card 8 x 13 pixels and every row fell apart into single cards.
    rows = [("5S 6S 7S 8S", 400), ("KD QH", 560)]
    indices = [
        CardDetection(C(card), (x + 20 * k, 500, x + 20 * k + 8, 513), 0.9)
        for cards, x in rows
        for k, card in enumerate(cards.split())
    ]
    reading = FrameReading({1: tuple(indices)}, width=1280, height=720)
    assert texts(group_reading(reading)[1]) == ["5S 6S 7S 8S", "KD QH"]
    width, height = card_size(indices, frame=1280)
    assert 20 < width < 60 and 30 < height < 80  # from the indices (3.3 index lengths a diagonal), not 8 x 13


def test_a_card_seen_whole_in_a_squeezed_picture_still_sizes_the_cards() -> None:
    # A photo resized to a square squeezes a 63 x 88 mm card to 0.45-0.55 of its height wide.
    squeezed = CardDetection(C("7S"), (300, 0, 340, 84), 0.9)
    assert card_size([*row("5S 6S 7S", 0, 0)[:2], squeezed], frame=1280) == (40.0, 84.0)


def seen(card: str, box: tuple[float, float, float, float], seat: int = 1) -> CardDetection:
    """A card read at ``box``, given in the view of the player at ``seat``, turned into the picture."""
    return CardDetection(C(card), turned_box(box, -SEAT_TURNS[seat]), 0.9)


@pytest.mark.parametrize("seat", [1, 2, 3, 4])
def test_a_card_showing_only_its_bottom_right_index_joins_the_row_it_ends(seat: int) -> None:
    # 8S lies on top at the row's end, but a stray covers its top-left: only its bottom-right index is read.
    # Grown from that index as from a top-left it lay past the row, alone; grown up and left it lies level with it.
    covered = [seen(card, (2 + 15 * k, 2, 10 + 15 * k, 22), seat) for k, card in enumerate(["5S", "6S", "7S"])]
    cards = [*covered, seen("8S", (95, 62, 103, 82), seat)]  # 8S spans 45-105 across, 0-84 down
    assert texts(group_cards(cards, SEAT_TURNS[seat], CARD)) == ["5S 6S 7S 8S"]


@pytest.mark.parametrize("seat", [1, 2, 3, 4])
def test_a_row_spread_from_the_right_is_one_group(seat: int) -> None:
    # Each card put on top to the left of the one before: 5S lies on top, whole, at the left; 6S, 7S and 8S show
    # their bottom-right index only, in a row level with 5S's bottom. Grown from the top-left, they lay below and
    # right of 5S, a group apart; grown up and left, each lies on 5S's row. A row of the usual kind beside it stays.
    whole = seen("5S", (0, 0, 60, 84), seat)
    covered = [seen(card, (65 + 15 * k, 62, 73 + 15 * k, 82), seat) for k, card in enumerate(["6S", "7S", "8S"])]
    usual = [*row("JD QD KD", 150, 0, seat)]
    assert texts(group_cards([whole, *covered, *usual], SEAT_TURNS[seat], CARD)) == ["5S 6S 7S 8S", "JD QD KD"]


@pytest.mark.parametrize("seat", [1, 2, 3, 4])
def test_a_row_spread_from_the_right_under_a_card_larger_than_measured_is_one_group(seat: int) -> None:
    # 5S lies near the camera, larger than the card size measured over the picture (80 x 120, not 60 x 84); 6S, 7S
    # and 8S show their bottom-right index, bottoms in line with 5S's. Grown up a card of the size measured, their
    # tops lay 34 below 5S's, out of level, and the row was a group apart; by the edges measured, it lies level.
    whole = seen("5S", (0, 0, 80, 120), seat)
    covered = [seen(card, (84 + 15 * k, 98, 92 + 15 * k, 118), seat) for k, card in enumerate(["6S", "7S", "8S"])]
    usual = row("JD QD KD", 170, 0, seat)
    assert texts(group_cards([whole, *covered, *usual], SEAT_TURNS[seat], CARD)) == ["5S 6S 7S 8S", "JD QD KD"]


@pytest.mark.parametrize("seat", [1, 2, 3, 4])
@pytest.mark.parametrize(
    "top",
    [
        (0, 0, 74, 76),  # turned a little, as in a fan: wider than a card's shape (seed 573 of the reversed tables)
        (0, 0, 66, 62),  # far from the camera: shorter than 0.8 of the card size measured (seed 515)
    ],
)
def test_a_row_spread_from_the_right_under_a_top_card_not_card_shaped_is_one_group(
    top: tuple[float, float, float, float], seat: int
) -> None:
    # 5S lies on top, its box not card-shaped, so it was not taken for a card seen whole and 6S, 7S and 8S, showing
    # their bottom-right index level with its bottom, were never turned under it. It spans most of a card both
    # ways: a card seen whole.
    right, bottom = top[2], top[3]
    covered = [
        seen(c, (right + 5 + 15 * k, bottom - 22, right + 13 + 15 * k, bottom - 2), seat)
        for k, c in enumerate(["6S", "7S", "8S"])
    ]
    usual = row("JD QD KD", 150, 0, seat)
    cards = [seen("5S", top, seat), *covered, *usual]
    assert texts(group_cards(cards, SEAT_TURNS[seat], CARD)) == ["5S 6S 7S 8S", "JD QD KD"]


PICTURE = (640, 480)  # width, height of the picture in these hand-made readings


def picture_in_view(seat: int) -> tuple[float, float, float, float]:
    """The picture's box (0, 0, width, height) in the view of the player at ``seat``."""
    return turned_box((0, 0, *PICTURE), SEAT_TURNS[seat])


@pytest.mark.parametrize("seat", [1, 2, 3, 4])
def test_a_row_spread_from_the_right_under_a_card_running_out_of_the_picture_is_one_group(seat: int) -> None:
    # 5S lies on top at the picture's edge, in a picture squeezed across: its box, 0.8 of a card wide and 1.3 tall,
    # is neither card-shaped nor short of askew, so 6S, 7S and 8S, showing their bottom-right index level with its
    # bottom, were never turned under it (seed 570 seat 3 of the reversed bench tables). It touches the edge and
    # spans a card along it: a card running out of the picture, seen whole.
    left, _, _, bottom = picture_in_view(seat)
    top = seen("5S", (left + 10, bottom - 111, left + 58, bottom), seat)
    covered = [
        seen(card, (left + 63 + 15 * k, bottom - 22, left + 71 + 15 * k, bottom - 1), seat)
        for k, card in enumerate(["6S", "7S", "8S"])
    ]
    usual = row("JD QD KD", left + 160, bottom - 90, seat)
    reading = FrameReading({seat: (top, *covered, *usual)}, width=PICTURE[0], height=PICTURE[1])
    assert texts(group_reading(reading)[seat]) == ["5S 6S 7S 8S", "JD QD KD"]


@pytest.mark.parametrize("seat", [1, 2, 3, 4])
def test_a_row_spread_from_the_right_under_a_card_cut_by_the_pictures_edge_is_one_group(seat: int) -> None:
    # 5S lies on top, its left half cut off by the picture's edge: its box, a card tall but half a card wide, was
    # grown a card wide, and 6S, 7S and 8S, grown down from their bottom-right indices, reached JD's row beside
    # them: one group of seven. Touching the edge and spanning a card along it, 5S is a card seen whole.
    left, _, _, bottom = picture_in_view(seat)
    top = seen("5S", (left, bottom - 100, left + 32, bottom - 16), seat)
    covered = [
        seen(card, (left + 37 + 15 * k, bottom - 38, left + 45 + 15 * k, bottom - 18), seat)
        for k, card in enumerate(["6S", "7S", "8S"])
    ]
    usual = row("JD QD KD", left + 100, bottom - 100, seat)
    groups = group_cards([top, *covered, *usual], SEAT_TURNS[seat], CARD, PICTURE)
    assert texts(groups) == ["5S 6S 7S 8S", "JD QD KD"]


@pytest.mark.parametrize("seat", [1, 2, 3, 4])
def test_a_cascades_covered_strip_at_the_pictures_edge_is_no_card_seen_whole(seat: int) -> None:
    # The cascade's first covered card shows a strip a card wide along the picture's edge, under half a card tall:
    # taken for a card seen whole, it lay where its strip is, apart from the next card, grown down from its index.
    left, top, _, _ = picture_in_view(seat)
    strips = [
        seen(card, (left, top + 22 * k, left + 60, top + 22 * k + 18), seat) for k, card in enumerate(["4H", "5H"])
    ]
    cascade = [*strips, seen("6H", (left, top + 44, left + 60, top + 128), seat)]
    assert texts(group_cards(cascade, SEAT_TURNS[seat], CARD, PICTURE)) == ["4H 5H 6H"]


@pytest.mark.parametrize("seat", [1, 2, 3, 4])
def test_a_row_spread_from_the_right_reaching_into_the_next_groups_top_card_is_one_group(seat: int) -> None:
    # 9S lies on top, whole; 10C and 7C, spread to its right, show both right-hand indices (a four-index deck), a
    # strip as tall as a card, level with AD, the next group's top card 17 past the row's end (seed 554 seat 1 of the
    # reversed bench tables). Grown from the top-left, 7C reaches into AD by 33, over half a card, as a row laid
    # from the left lies on its own top card: the row joined AD. Turned, it lies on 9S by 46, further.
    top = seen("9S", (0, 0, 56, 84), seat)
    strips = [seen("10C", (62, 2, 70, 82), seat), seen("7C", (74, 2, 82, 82), seat)]
    cards = [top, *strips, seen("AD", (101, 0, 157, 84), seat)]
    assert texts(group_cards(cards, SEAT_TURNS[seat], CARD)) == ["9S 10C 7C", "AD"]


@pytest.mark.parametrize("seat", [1, 2, 3, 4])
def test_a_lone_card_beside_a_fans_top_card_is_not_turned_under_it(seat: int) -> None:
    # A fan laid from the left ends in 7C, its box 74 x 76, wider than a card's shape; KD lies alone beside it,
    # only a strip of it read. Turned up and left, KD would lie level on 7C and join the fan (seed 514 of the hard
    # bench tables, once 7C is seen whole): a lone index is turned onto card-shaped cards only.
    fan = [seen("3S", (2, 2, 10, 22), seat), seen("9C", (17, 2, 25, 22), seat), seen("7C", (30, 0, 104, 76), seat)]
    lone = seen("KD", (108, 4, 133, 76), seat)
    assert texts(group_cards([*fan, lone], SEAT_TURNS[seat], CARD)) == ["3S 9C 7C", "KD"]


@pytest.mark.parametrize("seat", [1, 2, 3, 4])
def test_indices_whose_bottoms_reach_only_a_strays_edge_are_not_turned_onto_it(seat: int) -> None:
    # A squeezed, tilted picture (seed 138 of the hard bench tables): 2H and 6H show their top-left index, their
    # top card 8S lies partly under 9H, a stray seen whole, and JD lies alone, its card running out of the picture.
    # By their bottoms 2H, 6H and 8S lie level with 9H, but turned they reach only its edge (8S by a quarter of a
    # card): so turned, 2H and 6H fell apart from 8S. JD, a lone index, is not turned under 9H by its bottom alone.
    boxes = {"2H": (0, 182, 9, 225), "6H": (22, 175, 31, 217), "8S": (44, 171, 114, 220), "9H": (95, 0, 206, 193)}
    cards = [seen(card, box, seat) for card, box in {**boxes, "JD": (204, 168, 212, 210)}.items()]
    groups = group_cards(cards, SEAT_TURNS[seat], (75.0, 138.0))
    assert [set(text.split()) for text in texts(groups)] == [{"2H", "6H", "8S", "9H"}, {"JD"}]


@pytest.mark.parametrize("seat", [1, 2, 3, 4])
def test_a_cascade_spread_upwards_is_one_group(seat: int) -> None:
    # Each card put on top above the one before: 5S lies on top, whole; 6S and 7S below it show a strip along their
    # bottom edge (a deck printing four indices shows both bottom corners). Grown down from their tops they lay
    # below 5S, a group apart; grown up from their bottoms each lies under 5S, left edges in line.
    whole = seen("5S", (0, 0, 60, 84), seat)
    strips = [seen(card, (2, 86 + 20 * k, 58, 102 + 20 * k), seat) for k, card in enumerate(["6S", "7S"])]
    cascade = [seen("JD", (152, 2, 160, 22), seat), seen("QD", (150, 20, 210, 104), seat)]
    assert texts(group_cards([whole, *strips, *cascade], SEAT_TURNS[seat], CARD)) == ["5S 6S 7S", "JD QD"]


@pytest.mark.parametrize(
    ("lone", "expected"),
    [
        # 2C lies alone left of the row, its top-left under a stray: grown from its bottom-right index as from a
        # top-left it reached into the row out of level with it; grown up and left it touches nothing.
        (seen("2C", (50, 62, 58, 82)), ["2C", "5S 6S 7S"]),
        # KD lies alone right of the row, its top-left index read: grown up and left from it, it would touch the
        # row out of level, so it stays a top-left index, alone.
        (seen("KD", (185, 2, 193, 22)), ["5S 6S 7S", "KD"]),
    ],
)
def test_a_lone_card_beside_a_row_stays_alone_whichever_corner_shows(lone: CardDetection, expected: list[str]) -> None:
    assert texts(group_cards([*row("5S 6S 7S", 75, 0), lone], 0, CARD)) == expected


@pytest.mark.parametrize(
    ("stray", "expected"),
    [
        # A stray lying askew above both rows, seen at two corners: 110 x 20, wider than any laid card's indices.
        ((40, -30, 150, -10), [{"5S", "6S", "7S"}, {"9H"}, {"KD", "QD", "JD"}]),
        # Turned the other way, 20 x 160, over the first row's end only: taller than a card.
        ((80, -40, 100, 120), [{"5S", "6S", "7S", "9H"}, {"KD", "QD", "JD"}]),
    ],
)
def test_a_stray_lying_askew_across_two_rows_lies_where_its_box_is(
    stray: tuple[float, float, float, float], expected: list[set[str]]
) -> None:
    # Grown a card down and right from its top-left like a lone index, it reached into both rows and joined them.
    cards = [*row("5S 6S 7S", 0, 0), seen("9H", stray), *row("KD QD JD", 112, 0)]
    assert [set(text.split()) for text in texts(group_cards(cards, 0, CARD))] == expected


def test_without_a_card_seen_whole_the_cards_spacing_sizes_them() -> None:
    # A deck with small indices (12 x 9 on 88 x 123 cards) whose every card shows one index: sized from the
    # indices for the deck with the largest ones, a card was 23 pixels wide, less than a row's step of 22 plus
    # the overlap asked for, and every row fell apart into single cards.
    def indices(cards: str, x: float) -> list[CardDetection]:
        return [
            CardDetection(C(card), (x + 22 * k, 500, x + 22 * k + 12, 509), 0.9) for k, card in enumerate(cards.split())
        ]

    reading = FrameReading({1: (*indices("AS 2S 3S 4S", 400), *indices("KD QD JD", 566))}, width=1280, height=720)
    assert texts(group_reading(reading)[1]) == ["AS 2S 3S 4S", "KD QD JD"]


# --- what the groups say was laid

TWO = {1: "knocker", 2: "opponent"}


def laid(readings: dict[int, list[CardDetection]], knocker: int, size: int, **options: Any) -> Any:
    groups = {seat: group_cards(cards, SEAT_TURNS[seat], CARD) for seat, cards in readings.items()}
    return read_laydown(groups, knocker, size, **options)


def test_meld_groups_are_the_knockers_melds_and_a_group_without_a_meld_his_deadwood() -> None:
    table = laid({1: [*row("JS QS KS", 0, 0), *row("AC 2S 3S", 110, 0)], 2: row("2H 5D 9C 10H JD QC", 0, 0, 2)}, 1, 6)
    assert table.laydown.knocker_melds == parse_melds("JS QS KS") and table.notes == ()
    assert table.laydown.discard is None and table.laydown.layoffs == ()


def test_a_group_mixing_a_meld_with_other_cards_leaves_the_melds_to_the_engine() -> None:
    table = laid({1: row("7H 7D 7C 9C", 0, 0), 2: row("2H 5D 9S 10H", 0, 0, 2)}, 1, 4)
    assert table.laydown.knocker_melds is None
    assert table.notes == ("seat 1 lays 7H 7D 7C 9C together, a meld with other cards: its melds are not read",)


def test_two_melds_laid_touching_are_cut_in_laying_order() -> None:
    table = laid({1: row("7H 7D 7C 8S 9S 10S", 0, 0), 2: row("2H 5D 9C 10H JD QC", 0, 0, 2)}, 1, 6)
    assert table.laydown.knocker_melds == parse_melds("7C 7D 7H | 8S 9S 10S")


def test_a_card_set_aside_by_a_knocker_with_one_card_too_many_is_his_discard() -> None:
    knocker = [*row("JS QS KS", 0, 0), *row("2C 3D", 110, 0), *row("KH", 300, 0)]
    table = laid({1: knocker, 2: row("2H 5D 9C 10H 4D 7S", 0, 0, 2)}, 1, 5)
    assert table.laydown.discard == C("KH")
    crowded = laid(
        {1: [*row("JS QS KS", 0, 0), *row("2C", 110, 0), *row("3D", 190, 0)], 2: row("2H 5D 9C 10C", 0, 0, 2)}, 1, 4
    )
    assert crowded.laydown.discard is None and "the discard is not read" in crowded.notes[0]


def test_cards_put_against_the_knockers_meld_are_the_short_seats_layoffs() -> None:
    knocker = [*row("5C 6C 7C 8C", 0, 0), *row("QD QH QS", 120, 0), *row("2D", 220, 0)]
    table = laid({1: knocker, 2: row("2H 5D 9S 10H JD KC", 0, 0, 2)}, 1, 7)
    assert table.laydown.knocker_melds == parse_melds("5C 6C 7C | QD QH QS")
    assert [str(x) for x in table.laydown.layoffs_by_player["2"]] == ["8C onto 5C 6C 7C"]
    assert sorted(map(str, table.hands[2])) == ["10H", "2H", "5D", "8C", "9S", "JD", "KC"] and len(table.hands[1]) == 7
    assert table.notes == ()  # 8C lies last in its row: likelier than 5C, laid under the row's start


def test_two_as_likely_readings_of_the_layoffs_are_noted() -> None:
    knocker = [*row("5C 6C 7C 8C", 0, 0), *row("QD QH QS QC", 120, 0)]
    table = laid({1: knocker, 2: row("2H 5D 9S 10H JD KC", 0, 0, 2)}, 1, 7)
    assert [str(x) for x in table.laydown.layoffs_by_player["2"]] == ["QC onto QD QH QS"]
    assert table.notes == (
        "the layoffs are read as seat 2: QC onto QD QH QS; they may be seat 2: 8C onto 5C 6C 7C: check",
    )


def test_the_knockers_own_cards_tell_the_layoffs_for_sure() -> None:
    knocker = [*row("5C 6C 7C 8C", 0, 0), *row("QD QH QS", 120, 0), *row("2D", 220, 0)]
    table = laid(
        {1: knocker, 2: row("2H 5D 9S 10H JD KC", 0, 0, 2)}, 1, 7, knocker_cards=parse_cards("6C 7C 8C QD QH QS 2D")
    )
    assert [str(x) for x in table.laydown.layoffs_by_player["2"]] == ["5C onto 6C 7C 8C"] and table.notes == ()


def test_with_three_players_the_short_seats_lay_off_in_turn() -> None:
    # Ann knocked with 7S 8S 9S; Bob (her left) laid 10S JS, Cat then QS: a chain only in that order.
    seats = {1: [*row("7S 8S 9S 10S JS QS", 0, 0), *row("7C 7D 7H", 150, 0), *row("2C", 250, 0)]}
    seats |= {3: row("4C 5C 5D 5S QH", 0, 0, 3), 2: row("6D 6H JH KH 6S KS", 0, 0, 2)}
    table = laid(seats, 1, 7, seating=[1, 3, 2])
    assert {seat: [str(x.card) for x in layoffs] for seat, layoffs in table.laydown.layoffs} == {
        "3": ["10S", "JS"],
        "2": ["QS"],
    }


def test_cards_missing_from_a_hand_that_no_meld_ends_in_are_not_read_as_layoffs() -> None:
    knocker = [*row("5C 6C 7C", 0, 0), *row("QD QH QS", 120, 0), *row("2C", 240, 0), *row("9H", 360, 0)]
    table = laid({1: knocker, 2: row("2H 5D 9S 10H JD KC", 0, 0, 2)}, 1, 7)
    assert table.laydown.layoffs == () and table.notes == (
        "seat 2 shows 1 too few, but none of the melds seat 1 laid ends in cards to lay off: layoffs not read",
    )


def test_counts_that_fit_no_lay_down_are_not_read() -> None:
    table = laid({1: row("5C 6C 7C 8C 9C 10C", 0, 0), 2: row("2H 3H 4D", 0, 0, 2)}, 1, 3)
    assert table.laydown.given is False and "not 3 each" in table.notes[0]


# --- rendered tables

HAND_1 = "AS 2S 3S 4H 5H 6H 7C 8C 9C KD"
HAND_2 = "AD 2D 3D 4C 5C 6C 7H 8H 9H KS"


def truth_groups(truth: Any, seat: int, seen: set[Card]) -> list[list[str]]:
    """The scene's own groups of a seat's cards (as rendered), restricted to the cards a detector can see."""
    groups: dict[int, list[str]] = {}
    for placed in truth.cards:
        if placed.zone == "hand" and placed.seat == seat and placed.card in seen:
            groups.setdefault(placed.group, []).append(str(placed.card))
    return sorted(sorted(group) for group in groups.values())


@pytest.mark.parametrize(
    ("seed", "mild", "reversed_share"),
    [
        (3, True, 0.0),
        (8, True, 0.0),
        (21, True, 0.0),
        (101, False, 0.0),
        (102, False, 0.0),
        (104, False, 0.0),
        (1, True, 1.0),
        (4, True, 1.0),
        (102, False, 1.0),
    ],
)
def test_rendered_tables_are_read_into_their_groups(
    seed: int, mild: bool, reversed_share: float, scene_config: SceneConfig
) -> None:
    """Rows (and, on hard tables, fans and cascades under a tilted camera) of the scene renderer, 2-4 players,
    read by a perfect detector; with ``reversed_share`` 1 every group is spread from the right (its covered cards
    show their bottom-right index: three tables read right, kept from changing; many such tables are still read
    wrong). ``benchmarks/bench_groups.py`` measures it over many tables."""
    from scorer.synth.scene import render_table_scene

    config = dataclasses.replace(scene_config, reversed_share=reversed_share)
    _, truth = render_table_scene(seed, mild=mild, config=config)
    players = max(placed.seat or 0 for placed in truth.cards)
    reading = TableLayout.default(players).assign(truth_detections(truth))
    for seat, groups in group_reading(reading).items():
        hand = {placed.card for placed in truth.cards if placed.zone == "hand" and placed.seat == seat}
        read = sorted(sorted(str(c) for c in group.cards if c in hand) for group in groups)
        assert [group for group in read if group] == truth_groups(
            truth, seat, {c.card for c in reading.by_player[seat]}
        )


# --- a designed table: the 6D knock, laid as the knocker laid it

STEP, GAP, WIDTH = 30, 45, 120  # pixels: a card's offset in a row, the space between rows, a card's width


def laid_rows(seat: int, rows: list[str], start: float, y: float) -> list[Any]:
    """Placements of one player's rows of overlapping cards, laid from his left (seat 2 sits opposite)."""
    from scorer.synth.scene import Placement

    direction, angle = (1, 0.0) if seat == 1 else (-1, 180.0)
    placements, x = [], start
    for text in rows:
        cards = parse_cards(text)
        placements += [
            Placement(card, (x + direction * STEP * k, y), angle, "hand", seat) for k, card in enumerate(cards)
        ]
        x += direction * (STEP * (len(cards) - 1) + WIDTH + GAP)
    return placements


def render_laid_table(
    config: SceneConfig, seed: int, knocker_rows: list[str], opponent_rows: list[str], upcard: str
) -> Any:
    """The rows as laid, in the anglo deck the session's ``scene_config`` rendered (so never skipped for want
    of the checkout's rendered decks)."""
    from scorer.synth.scene import Placement, render_cards

    placements = [*laid_rows(1, knocker_rows, 120, 590), *laid_rows(2, opponent_rows, 1160, 130)]
    placements.append(Placement(C(upcard), (900, 360), 0.0, "upcard"))
    return render_cards(seed, placements, deck="anglo", card_width=WIDTH, config=config)


SIX_D_LAID = (["JS QS KS", "4C 4D 4H 4S", "AC 2S 3S"], ["KC KD KH", "AD AH AS", "5S 6S 9S 10S"], "6D")
"""The knocker leaves 2S 3S out of a run to lay the four 4s: deadwood 6, the limit; the engine's least
deadwood (1) would be undercut (the opponent lays off 5S 6S 9S 10S): the grouping decides the winner."""


def assert_scored_as_laid(reading: Any) -> None:
    from scorer.cli.live import score_reading

    as_laid = score_reading(Rules(), TableLayout.default(2), reading, C("6D"), "1")
    assert (as_laid.outcome, as_laid.points) == ("knock", {"1": 5, "2": 0})
    assert as_laid.given.knocker_melds == parse_melds("JS QS KS | 4C 4D 4H 4S")
    hands = {str(seat): [d.card for d in cards] for seat, cards in reading.by_player.items()}
    unread = score_round(Rules(), C("6D"), hands, "1")  # the same cards, their grouping unknown
    assert (unread.outcome, unread.points) == ("undercut", {"1": 0, "2": 11})


def test_a_table_whose_grouping_decides_the_winner_is_scored_as_laid(scene_config: SceneConfig) -> None:
    _, truth = render_laid_table(scene_config, 1, *SIX_D_LAID)
    reading = TableLayout.default(2).assign(truth_detections(truth))
    assert texts(group_reading(reading)[1]) == ["JS QS KS", "4C 4D 4H 4S", "AC 2S 3S"]
    assert_scored_as_laid(reading)
    assert groups_json(group_reading(reading))["1"][0]["cards"] == ["JS", "QS", "KS"]


def test_layoffs_put_against_a_meld_on_a_rendered_table_go_back_to_whoever_laid_them(
    scene_config: SceneConfig,
) -> None:
    knocker = ["3H 4H 5H 6H 7H", "8C 8D 8S", "JD QD KD", "AC"]
    _, truth = render_laid_table(scene_config, 2, knocker, ["2C 2D 2S", "9H 10H JC 4S 6D"], "KS")
    reading = TableLayout.default(2).assign(truth_detections(truth))
    table = read_laydown(group_reading(reading), 1, 10)
    assert [str(x) for x in table.laydown.layoffs_by_player["2"]] == ["6H onto 3H 4H 5H", "7H onto 3H 4H 5H 6H"]
    assert len(table.hands[1]) == len(table.hands[2]) == 10 and table.notes == ()


@pytest.mark.model
@pytest.mark.slow
def test_the_shipped_model_reads_the_laid_table_and_it_is_scored_as_laid(scene_config: SceneConfig) -> None:
    from conftest import shipped_model_or_skip

    from scorer.vision.detector import CardDetector

    detector = CardDetector(shipped_model_or_skip())
    image, _ = render_laid_table(scene_config, 1, *SIX_D_LAID)
    reading = TableLayout.default(2).assign(detector.detect(image))
    assert texts(group_reading(reading)[1]) == ["JS QS KS", "4C 4D 4H 4S", "AC 2S 3S"]
    assert_scored_as_laid(reading)
