"""The table as the page sends it: each player's cards in the groups they lie in (as the camera read
them, or as a player regrouped them), read into hands and a lay-down the way a picture is read.

``scorer.vision.groups.read_laydown`` does the reading; this module only turns names into seats and
back, so the page and the CLI read a table one way.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from scorer.cards import Card
from scorer.laydown import LayDown
from scorer.match import Knock
from scorer.rules import IllegalKnockError, IllegalLayoffError, InvalidHandError, RoundResult, Rules
from scorer.vision.groups import LaidGroup, read_laydown


def read_groups(
    knock: Knock, groups: Mapping[str, Sequence[Sequence[Card]]], rules: Rules
) -> tuple[Knock, dict[str, Any]]:
    """The knock as the groups say it was laid, and what was read: ``{"hands", "laydown", "notes"}`` by name.

    The players sit in the knock's order. Cards laid off against the knocker's melds go back to
    whoever laid them; each part of the lay-down given with the knock (melds, discard, layoffs)
    wins over the one read.

    :raises InvalidHandError: for a knocker who is not one of the players, or a player count the rules refuse.
    """
    names = [name for name, _ in knock.hands]
    if knock.knocker not in names:
        raise InvalidHandError(f"knocker must be one of {', '.join(names)}; got {knock.knocker!r}")
    by_seat = {
        seat: tuple(LaidGroup(tuple(group)) for group in groups.get(name, ())) for seat, name in enumerate(names, 1)
    }
    table = read_laydown(by_seat, names.index(knock.knocker) + 1, rules.hand_size(len(names)))
    read = LayDown(
        table.laydown.knocker_melds,
        table.laydown.discard,
        tuple((names[int(seat) - 1], laid) for seat, laid in table.laydown.layoffs),
    )
    hands = tuple((names[seat - 1], cards) for seat, cards in table.hands.items())
    answer = {
        "hands": {name: [str(card) for card in cards] for name, cards in hands},
        "laydown": read.to_dict(),
        "notes": [name_seats(note, dict(enumerate(names, 1))) for note in table.notes],
    }
    return dataclasses.replace(knock, hands=hands, laydown=knock.laydown.filled_from(read)), answer


def score_as_read(
    knock: Knock, groups: Mapping[str, Sequence[Sequence[Card]]], rules: Rules
) -> tuple[RoundResult, dict[str, Any]]:
    """The knock scored as the groups say it was laid (``read_groups``), and what was read.

    Where the lay-down read makes no legal knock while the cards hold one (a fan laid from its other end read as
    other groups: the melds read as deadwood over the limit), the read hands are scored as the engine lays them,
    the parts given with the knock kept, and a note says so: the players see a proposal to check, not an error.

    :raises InvalidHandError, IllegalKnockError, IllegalLayoffError: when the knock cannot be scored even so.
    """
    read_knock, read = read_groups(knock, groups, rules)
    try:
        return read_knock.score(rules), read
    except (IllegalKnockError, IllegalLayoffError) as error:
        result = dataclasses.replace(read_knock, laydown=knock.laydown).score(rules)
        note = f"as the cards were read from the picture, {error}: scored as they lie best; check how they were laid"
        return result, {**read, "notes": [*read["notes"], note]}


SEATS = re.compile(r"\b(?P<within>in )?seat (?P<seat>\d+)\b|\bseats (?P<seats>\d+(?:(?:, | and )\d+)*)\b")
"""Seats as ``scorer.vision`` words them: "seat 3", "in seat 3", or a list, "seats 2 and 3", "seats 1, 2 and 3"."""


def name_seats(text: str, names: Mapping[int, str]) -> str:
    """``text`` with each seat called by the name of the player sitting there: nobody at the table is "seat 1".

    A card "in seat 2" lies in front of that player; a seat nobody sits at keeps its number.

    >>> name_seats("seat 3 shows 11 cards; seat 9 none", {1: "Ann", 3: "Cat"})
    'Cat shows 11 cards; seat 9 none'
    >>> name_seats("2H straddles seats 1 and 3; 4S is seen in seat 3 and in seat 9", {1: "Ann", 3: "Cat"})
    '2H straddles Ann and Cat; 4S is seen in front of Cat and in seat 9'
    """

    def rename(found: re.Match[str]) -> str:
        if found["seats"]:
            return re.sub(r"\d+", lambda seat: names.get(int(seat[0]), f"seat {seat[0]}"), found["seats"])
        name = names.get(int(found["seat"]))
        if name is None:
            return found[0]
        return f"in front of {name}" if found["within"] else name

    return SEATS.sub(rename, text)
