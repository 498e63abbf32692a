"""Request fields, read and checked at the edge before any work: a bad field is an ``InputError`` (400).

Pure functions of the values a request carried (JSON values or form text), no Flask and no SQL, so
every view checks every field first and only then loads, scores or stores anything.

>>> parse_players([" Ann ", "Bob"])
['Ann', 'Bob']
>>> parse_form_int("-5", "Gin bonus")
-5
"""

from __future__ import annotations

import collections
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from scorer.cards import DECK, Card
from scorer.errors import OkginError, shown
from scorer.match import (
    Draw,
    Knock,
    RoundInput,
    RoundInputError,
    parse_card_field,
    parse_cards_field,
    parse_name_field,
    parse_round_input,
)
from scorer.records import same_player
from scorer.rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS, InvalidRulesError, Rules

MAX_NAME_LENGTH = 40
MAX_ROW_ID = 2**63 - 1
"""SQLite's largest integer key: ids and round numbers beyond it cannot exist."""
_FORM_INT = re.compile(r"-?[0-9]{1,9}")
_REFUSED_CATEGORIES = {
    "Cc": "a control character",
    "Cs": "a lone surrogate",
    "Zl": "a line break",
    "Zp": "a line break",
}
_REFUSED_CHARACTERS = dict.fromkeys(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069", "a text-direction control"
)
"""The formatting characters a name may not hold: the controls that turn the text after them around (a right-to-left
override in a name turned the sheet around it). Others are parts of names: the zero-width (non-)joiners of Persian
and Indic names and emoji, a soft hyphen, the direction marks, the England flag's tag characters, the zero-width
space of Khmer and Burmese."""
_DRAW_NOTHING = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f\u200b\u2060\ufeff")
"""Characters that draw nothing, nor join or change what they stand beside (the Hangul fillers, the blank Braille
pattern, the grapheme joiner, the zero-width spaces): a name with one is the name without it."""


def _shown(name: str) -> str:
    """A name as it shows: without the characters that draw nothing (``_DRAW_NOTHING``) or only choose how the one
    before them is drawn (variation selectors), so that "Ann" and "Ann" with a filler after it are one name."""
    return "".join(
        char
        for char in name
        if char not in _DRAW_NOTHING and not ("\ufe00" <= char <= "\ufe0f" or "\U000e0100" <= char <= "\U000e01ef")
    )


def same_shown_player(name: str) -> str:
    """The key two names of one player share (``same_player``), as they show (``_shown``)."""
    return same_player(_shown(name))


class InputError(OkginError):
    """A request field that cannot be used, with the reason a player can fix."""


def parse_players(value: object, same: Callable[[str], str] = same_shown_player) -> list[str]:
    """2-4 non-empty player names of printable text, trimmed, distinct as the players' records tell players apart
    (``same``: by default ``same_shown_player``, so "Ann" and "ann", a composed "ë" and an e with its accent, or a
    name and the same with a filler after it, are one player; a match file read with ``str.casefold``, as names were
    told apart when it was saved).

    :raises InputError: naming what is wrong.
    """
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise InputError('players must be a list of names, e.g. ["Ann", "Bob"]')
    names = [name.strip() for name in value]
    if not MIN_PLAYERS <= len(names) <= MAX_PLAYERS:
        raise InputError(f"a match needs {MIN_PLAYERS} to {MAX_PLAYERS} players, got {len(names)}")
    for name in names:
        _check_name(name)
    if len({same(name) for name in names}) != len(names):
        raise InputError(f"player names must differ: {', '.join(names)}")
    return names


def parse_player_name(value: object) -> str:
    """One player's name (a player renamed: ``{"name": ...}``), trimmed, held to a new match's rules
    (``parse_players``); that it differs from the other players' is ``refuse_taken``'s to say, with the match.

    >>> parse_player_name(" Ann ")
    'Ann'

    :raises InputError: naming what is wrong.
    """
    if not isinstance(value, str):
        raise InputError(f'send "name": the player\'s new name, got {shown(value)}')
    name = value.strip()
    _check_name(name)
    return name


def refuse_taken(name: str, others: Sequence[str]) -> None:
    """Refuse ``name`` for a player where one of the ``others`` (the other players of the match) has it already, as
    the players' records tell players apart (``same_shown_player``): the match and the records would make one player
    of two.

    >>> refuse_taken("bob", ["Bob"])
    Traceback (most recent call last):
    ...
    web.fields.InputError: 'bob' is Bob's name already: players' names must differ by more than case, spaces or accents

    :raises InputError: naming the player who has it.
    """
    key = same_shown_player(name)
    taken = next((other for other in others if same_shown_player(other) == key), None)
    if taken is not None:
        raise InputError(
            f"{shown(name)} is {taken}'s name already: players' names must differ by more than case, spaces or accents"
        )


def _check_name(name: str) -> None:
    """Refuse a trimmed player's name that is empty or too long, holds what is no printable text, or shows nothing.

    :raises InputError: naming what is wrong.
    """
    if not name or len(name) > MAX_NAME_LENGTH:
        raise InputError(f"player names must be 1 to {MAX_NAME_LENGTH} characters, got {shown(name)}")
    why = (_REFUSED_CHARACTERS.get(char) or _REFUSED_CATEGORIES.get(unicodedata.category(char)) for char in name)
    refused = next(filter(None, why), None)
    if refused:
        raise InputError(f"player names must be printable text; {shown(name)} holds {refused}")
    if not any(unicodedata.category(char)[0] in "LNPS" for char in _shown(name)):
        raise InputError(f"player names must show a letter, digit or sign; {shown(name)} shows none")


def parse_dealer(value: object, players: list[str]) -> str | None:
    """The first dealer's name, or None (blank or absent) to draw one at random.

    :raises InputError: when it is not one of the players.
    """
    if value is None or value == "":
        return None
    if not isinstance(value, str) or value.strip() not in players:
        raise InputError(f"dealer must be one of {', '.join(players)}; got {shown(value)}")
    return value.strip()


def parse_dealer_seat(text: str, players: list[str]) -> str | None:
    """The first dealer chosen on the set-up form by seat number ("1" to "4"), or None (blank) for random.

    :raises InputError: for a seat no player sits in.
    """
    seat = text.strip()
    if not seat:
        return None
    if seat not in {str(n) for n in range(1, len(players) + 1)}:
        raise InputError("choose the first dealer from the players")
    return players[int(seat) - 1]


def parse_rules(preset: object, options: object) -> Rules:
    """The rules for a new match from a preset id and option overrides.

    :raises InputError: for an unknown preset or option, or a bad option value.
    """
    if not isinstance(preset, str) or preset not in PRESETS:
        choices = ", ".join(f'"{name}" ({p.title})' for name, p in PRESETS.items())
        raise InputError(f"rules must be one of {choices}; got {shown(preset)}")
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise InputError("options must be an object of rule options")
    try:
        return Rules.preset_named(preset, **options)
    except InvalidRulesError as error:
        raise InputError(f"rules: {error}") from error


def parse_id(value: object, what: str) -> int:
    """A positive whole number that SQLite can hold (a JSON ``true`` is not a number).

    >>> parse_id(3, "match")
    3

    :raises InputError: for anything else.
    """
    if type(value) is not int or not 1 <= value <= MAX_ROW_ID:
        raise InputError(f"{what} must be a whole number from 1, got {shown(value)}")
    return value


def parse_round_number(value: object) -> int | None:
    """The round number a client believes it is adding (None when not sent).

    :raises InputError: for anything but a whole number from 1.
    """
    return None if value is None else parse_id(value, "number")


def parse_body_revision(value: object) -> int:
    """The revision of the match a change is asked of, in a JSON body (``{"revision": R}``, the match's
    ``"revision"``): required, so that a tap sent twice, or arriving after another change, changes nothing.

    >>> parse_body_revision(0)
    0

    :raises InputError: when it is missing, or anything but a whole number from 0.
    """
    if type(value) is not int or not 0 <= value <= MAX_ROW_ID:
        raise InputError(f'send "revision": the match\'s revision as shown, a whole number from 0, got {shown(value)}')
    return value


def parse_revision(text: str | None) -> int | None:
    """The revision of the match a client asks a change of (``?revision=N``, the match's ``"revision"``), or None
    when it names none.

    :raises InputError: for anything but a whole number from 0.
    """
    return _query_number(text, "revision", 0, "a whole number from 0")


def parse_before(text: str | None) -> int | None:
    """The match a list goes on from (``?before=ID``: the matches older than it), or None for the newest.

    :raises InputError: for anything but a whole number from 1.
    """
    return _query_number(text, "before", 1, "a match id, a whole number from 1")


def _query_number(text: str | None, name: str, least: int, what: str) -> int | None:
    """The whole number a query names (``?name=N``), at least ``least``, or None when it names none.

    :raises InputError: saying the number must be ``what``.
    """
    if text is None:
        return None
    number = parse_form_int(text, name)
    if number < least:
        raise InputError(f"{name} must be {what}, got {number}")
    return number


def parse_limit(text: str | None, most: int) -> int:
    """How many items one page of a list holds (``?limit=N``, 1 to ``most``), ``most`` when not asked.

    :raises InputError: for anything else.
    """
    limit = _query_number(text, "limit", 1, f"1 to {most}")
    if limit is None:
        return most
    if limit > most:
        raise InputError(f"limit must be 1 to {most}, got {limit}")
    return limit


def parse_offset(text: str | None) -> int:
    """Where one page of a list starts (``?offset=N``: the items after the first N), 0 when not asked.

    :raises InputError: for anything but a whole number from 0.
    """
    return _query_number(text, "offset", 0, "a whole number from 0") or 0


def parse_finished(text: str | None) -> bool | None:
    """Which matches a list holds (``?finished=true`` or ``false``), or None for all of them.

    :raises InputError: for any other word.
    """
    if text is None:
        return None
    if text not in ("true", "false"):
        raise InputError(f"finished must be true or false, got {shown(text)}")
    return text == "true"


def parse_form_int(text: str, label: str) -> int:
    """A whole number typed in a form: ASCII digits with an optional minus, at most 9 of them.

    :raises InputError: naming the field, for ``--5``, ``²``, ``1e3`` or thousands of digits.
    """
    if not _FORM_INT.fullmatch(text):
        raise InputError(f"{label} must be a whole number, got {shown(text)}")
    return int(text)


def parse_player_count(text: str) -> int:
    """A player count from a query string (``?players=3``).

    :raises InputError: unless it is 2 to 4.
    """
    if text not in {str(n) for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)}:
        raise InputError(f"players must be {MIN_PLAYERS} to {MAX_PLAYERS}, got {shown(text)}")
    return int(text)


def parse_round(body: Mapping[str, Any]) -> RoundInput:
    """A round as sent to the API: ``{"upcard", "knocker", "hands", "knocker_melds"?}`` or ``{"draw": true}``.

    :raises InputError: naming the missing or malformed field.
    """
    try:
        return parse_round_input(body)
    except RoundInputError as error:
        raise InputError(str(error)) from None


def parse_knock(body: Mapping[str, Any]) -> Knock:
    """A knock to score on its own (a draw scores nothing).

    :raises InputError: naming the missing or malformed field.
    """
    entered = parse_round(body)
    if isinstance(entered, Draw):
        raise InputError("a draw scores nothing: send upcard, knocker and hands")
    return entered


def parse_groups(value: object) -> dict[str, tuple[tuple[Card, ...], ...]]:
    """Each player's cards in the groups they lie in: ``{"Ann": [["JS", "QS", "KS"], "4C 4D 4H"], "Bob": [...]}``.

    Every card lies once on the table.

    :raises InputError: for groups that are not lists of cards, or a card in two places.
    """
    if not isinstance(value, dict) or not value:
        raise InputError('groups must map each player to their groups, like {"Ann": [["JS", "QS", "KS"]], "Bob": []}')
    if len(value) > MAX_PLAYERS:  # counted before any is read: a million groups took 9 s of the interpreter
        raise InputError(f"groups: {len(value)} players' groups, more than play a round ({MAX_PLAYERS})")
    groups: dict[str, tuple[tuple[Card, ...], ...]] = {}
    try:
        for name, laid in value.items():
            name = parse_name_field(name, "groups")
            if not isinstance(laid, list):
                raise InputError(f"{name}'s groups must be a list of groups of cards, got {shown(laid)}")
            if len(laid) > len(DECK):
                raise InputError(f"{name}'s groups: {len(laid)} groups, more than a deck has cards ({len(DECK)})")
            groups[name] = tuple(parse_cards_field(group, f"a group of {name}'s") for group in laid)
    except RoundInputError as error:
        raise InputError(str(error)) from None
    counts = collections.Counter(card for laid in groups.values() for group in laid for card in group)
    repeated = sorted(card for card, count in counts.items() if count > 1)
    if repeated:
        raise InputError(f"groups: {', '.join(map(str, repeated))} lie in two places; a card lies once on the table")
    return groups


def parse_upcard(value: object) -> Card | None:
    """An optional upcard: absent, null or blank for none yet.

    :raises InputError: for something that is not a card.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        return parse_card_field(value, "upcard")
    except RoundInputError as error:
        raise InputError(str(error)) from None


def parse_hands(value: object) -> dict[str, tuple[Card, ...]]:
    """Hands by player name, each a list of cards or one string; hands may be empty or short.

    :raises InputError: for a hand that is not cards, or a card twice in one hand.
    """
    if not isinstance(value, dict) or not value:
        raise InputError('hands must be an object like {"Ann": ["QH", "10S", ...], "Bob": "AS 2S ..."}')
    if len(value) > MAX_PLAYERS:  # counted before any is read
        raise InputError(f"hands: {len(value)} players' hands, more than play a round ({MAX_PLAYERS})")
    try:
        return {
            parse_name_field(name, "hands"): parse_cards_field(cards, f"{name}'s hand") for name, cards in value.items()
        }
    except RoundInputError as error:
        raise InputError(str(error)) from None


def parse_card_text(value: object) -> tuple[Card, ...]:
    """Cards typed in a box (``"ace of clubs, 10h QD"``), each once.

    :raises InputError: naming the word that is not a card.
    """
    if not isinstance(value, str):
        raise InputError(f'text must be cards written like "QH 10S 3D" or "ace of clubs", got {shown(value)}')
    try:
        return parse_cards_field(value, "the cards")
    except RoundInputError as error:
        raise InputError(str(error)) from None
