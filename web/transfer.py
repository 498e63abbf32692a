"""A match file read back: the JSON a match's "JSON" link saves (``/matches/<id>/export.json``) becomes a new match.

What a round holds is taken from each round's ``input`` (what was entered) and scored again, never from the file's
points or totals: a file edited by hand, or written by an older engine, cannot put a score on the sheet that the
rules do not give. Where the file's totals differ from the rescored ones, the import says so. What edits replaced
and undos removed (``earlier_versions``) comes along, so that the copy loses nothing the original kept, and so do
the deals they are versions of (``web.round_history``): a file without them (saved before deals were told apart)
reads each as the deal numbered as its round, as the database does; so does a file whose rounds were removed or added
by hand, their deals left as they were (the import says so). A file saved by okgin's first release, whose rounds
were written as the sheet showed them, with no ``input``, is read from what each round showed was entered.

A file keeps at most the earlier versions a match keeps (``web.round_history.MAX_EARLIER_VERSIONS``): of a file
that holds more (saved before matches kept a bounded number), the newest are kept and the import says how many older
ones it left out; the rest are only counted, never read.

The copy keeps which match it was made from (``Origin``: the file's ``origin``, or else its own ``id`` and
``created_at``), so that the players' records count that match once however many copies of it are opened here.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from scorer.errors import OkginError, shown
from scorer.match import MAX_ROUNDS, Match, RoundInput, RoundInputError, parse_round_input
from scorer.rules import Rules
from web.fields import MAX_ROW_ID, InputError, parse_players
from web.round_history import EDITED, MAX_EARLIER_VERSIONS, UNDONE

MAX_IMPORTED_ROUNDS = MAX_ROUNDS
"""The most rounds a match holds (``scorer.match.MAX_ROUNDS``): a file beyond it is not a match okgin kept."""
MAX_DEAL = 2**52
"""The largest deal id a file may name: the new deals that follow it (each the largest + 1) stay whole numbers a
page's JavaScript reads exactly (up to 2**53 - 1) for as many rounds as a match can hold, and far below SQLite's
largest integer."""
OTHER_TOTALS_SHOWN = 3
"""How many of the file's totals of names that are no player's its totals note lists (a file may hold thousands)."""


@dataclasses.dataclass(frozen=True)
class Origin:
    """The match a copy was made from, as it was first stored: its id and creation time where it was begun (a copy of
    a copy names the same match)."""

    id: int
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class KeptVersion:
    """An earlier version from the file, to be stored with the new match (``web.round_history``)."""

    number: int
    entered: RoundInput
    replaced_at: str
    replaced_by: str
    deal: int


@dataclasses.dataclass(frozen=True)
class MatchFile:
    """A match file checked and scored again: the match, its rounds' deals, its earlier versions, the match it was
    saved from (``source``, None when the file does not say), and what the import changed."""

    match: Match
    deals: tuple[int, ...]
    earlier: tuple[KeptVersion, ...]
    """Oldest first, as they are stored."""
    source: Origin | None
    notes: tuple[str, ...]


def read_match_file(data: object) -> MatchFile:
    """The match a file exported by okgin holds (``MatchRecord.to_dict()``), scored again round by round.

    :raises InputError: naming what is missing or wrong, and the round that does not score.
    """
    if not isinstance(data, Mapping):
        raise InputError('a match file is a JSON object with "players", "rules", "first_dealer" and "rounds"')
    missing = [key for key in ("players", "rules", "first_dealer", "rounds") if key not in data]
    if missing:
        raise InputError(f"this is not a match file okgin exported: it has no {', '.join(map(repr, missing))}")
    players = parse_players(data["players"], same=str.casefold)  # a file saved earlier told names apart by case only
    dealer = _first_dealer(data["first_dealer"], players)
    if not isinstance(data["rules"], Mapping):
        raise InputError(f"the file's rules must be an object of rule options, got {shown(data['rules'])}")
    try:
        match = Match(players, Rules.from_dict(data["rules"]), dealer=dealer)
    except OkginError as error:  # rules the engine refuses, or a player count they refuse
        raise InputError(f"the file's rules or players: {error}") from None
    for number, entered in enumerate(_inputs(data["rounds"], "rounds", MAX_IMPORTED_ROUNDS), start=1):
        try:
            match.record(entered)
        except OkginError as error:
            raise InputError(f"round {number} of the file does not score: {error}") from None
    stated, played = data.get("deals"), len(match.rounds)
    deals_read = not isinstance(stated, list) or len(stated) == played
    deals = _deals(stated if deals_read else None, played)
    versions = data.get("earlier_versions")
    earlier = _earlier_versions(versions, deals_read)
    _check_deals([*enumerate(deals, start=1), *((kept.number, kept.deal) for kept in earlier)])
    notes = (*_changed_totals(data, match), *_deals_not_read(stated, played), *_versions_left_out(versions))
    return MatchFile(match, deals, earlier, _source(data), notes)


def _first_dealer(value: object, players: list[str]) -> str:
    if not isinstance(value, str) or value.strip() not in players:
        raise InputError(f"the file's first dealer must be one of {', '.join(players)}; got {shown(value)}")
    return value.strip()


def _inputs(rounds: object, what: str, limit: int | None) -> list[RoundInput]:
    """Each entry's ``input`` read as a round input; with a ``limit``, a list of more entries is refused."""
    if not isinstance(rounds, list):
        raise InputError(f"the file's {what} must be a list, got {shown(rounds)}")
    if limit is not None and len(rounds) > limit:
        raise InputError(f"the file has {len(rounds)} {what}: more than {limit} is not a match okgin kept")
    inputs = []
    for number, entry in enumerate(rounds, start=1):
        entered = _entered(entry)
        if entered is None:
            raise InputError(f'entry {number} of the file\'s {what} has no "input" (what was entered)')
        try:
            inputs.append(parse_round_input(entered))
        except RoundInputError as error:
            raise InputError(f"entry {number} of the file's {what}: {error}") from None
    return inputs


def _entered(entry: object) -> object | None:
    """What a round entry of the file says was entered: its ``input``, or in a file of okgin's first release (rounds
    written as the sheet showed them) its ``draw``, or its ``upcard``, ``knocker`` and ``hands``, as they were
    entered then; None for an entry that says neither."""
    if not isinstance(entry, Mapping):
        return None
    if "input" in entry:
        return entry["input"]
    if entry.get("draw") is True:
        return {"draw": True}
    shown_keys = ("upcard", "knocker", "hands")
    return {key: entry[key] for key in shown_keys} if all(key in entry for key in shown_keys) else None


def _earlier_versions(versions: object, deals_read: bool = True) -> tuple[KeptVersion, ...]:
    """The file's newest ``MAX_EARLIER_VERSIONS`` earlier versions (newest first, as exported), oldest first; none
    when the file has none. Without ``deals_read``, each is read as a version of the deal numbered as its round
    (``_deals_not_read``)."""
    if versions is None:
        return ()
    newest = versions[:MAX_EARLIER_VERSIONS] if isinstance(versions, list) else versions
    inputs = _inputs(newest, "earlier_versions", None)
    assert isinstance(newest, list)  # _inputs refuses anything else
    kept = []
    for index, (version, entered) in enumerate(zip(newest, inputs, strict=True), start=1):
        number, replaced_at, replaced_by = (version.get(key) for key in ("number", "replaced_at", "replaced_by"))
        if type(number) is not int or not 1 <= number <= MAX_ROW_ID:
            raise InputError(f"entry {index} of the file's earlier_versions has no round number: {shown(number)}")
        if replaced_by not in (EDITED, UNDONE):
            raise InputError(f"entry {index} of the file's earlier_versions was replaced by {shown(replaced_by)}")
        when = _utc_time(replaced_at)
        if when is None:
            raise InputError(f"entry {index} of the file's earlier_versions has no time: {shown(replaced_at)}")
        deal = _deal(version, number, index) if deals_read else number
        kept.append(KeptVersion(number, entered, when, replaced_by, deal))
    return tuple(reversed(kept))


def _versions_left_out(versions: object) -> tuple[str, ...]:
    """A note saying how many of the file's earlier versions were left out (``_earlier_versions``), if any."""
    if not isinstance(versions, list) or len(versions) <= MAX_EARLIER_VERSIONS:
        return ()
    return (
        f"the file keeps {len(versions):,} earlier versions and a match keeps its newest {MAX_EARLIER_VERSIONS:,}:"
        f" the {len(versions) - MAX_EARLIER_VERSIONS:,} oldest were left out (the file still holds them)",
    )


def _deals_not_read(deals: object, rounds: int) -> tuple[str, ...]:
    """A note saying the file's deals were not read, where they are a list of another length than its rounds: a
    round removed or added by hand, its deal left as it was, and which deal is whose cannot be told. Each round and
    earlier version is then read as the deal numbered as its round, as in a file saved before deals were told apart:
    the rounds the file holds make the match, and no version is lost."""
    if not isinstance(deals, list) or len(deals) == rounds:
        return ()
    return (
        f"the file lists {len(deals)} deals for its {rounds} rounds (a round removed or added by hand?): each round"
        " was read as the deal numbered as it, and each earlier version as a version of its round",
    )


def _deals(deals: object, rounds: int) -> tuple[int, ...]:
    """The file's ``deals``, one per round; in a file saved before deals were told apart, each round's is the deal
    numbered as the round (``web.round_history``)."""
    if deals is None:
        return tuple(range(1, rounds + 1))
    if not isinstance(deals, list) or len(deals) != rounds:
        raise InputError(f"the file's deals must list one deal id per round ({rounds}), got {shown(deals)}")
    return tuple(_a_deal(deal, f"the file's deal for round {number}") for number, deal in enumerate(deals, start=1))


def _deal(entry: Mapping[str, Any], number: int, index: int) -> int:
    """The deal of entry ``index`` of the file's earlier versions, a version of round ``number``: its ``deal``, or the
    deal numbered as its round in a file saved before deals were told apart."""
    deal = entry.get("deal")
    return number if deal is None else _a_deal(deal, f"entry {index} of the file's earlier_versions")


def _a_deal(deal: object, what: str) -> int:
    if type(deal) is not int or not 1 <= deal <= MAX_DEAL:
        raise InputError(f"{what} is no deal id (1 to {MAX_DEAL}): {shown(deal)}")
    return deal


def _check_deals(numbered: list[tuple[int, int]]) -> None:
    """Refuse a deal named as two rounds' (``(round number, deal)`` pairs): a deal is one entry of one round."""
    rounds: dict[int, int] = {}
    for number, deal in numbered:
        if rounds.setdefault(deal, number) != number:
            raise InputError(f"the file names deal {deal} as round {rounds[deal]}'s and as round {number}'s")


def _source(data: Mapping[str, Any]) -> Origin | None:
    """The match the file was saved from: its ``origin`` when it was itself a copy, else its own ``id`` and
    ``created_at``; None for a file that names neither (made by hand: a match of its own).

    :raises InputError: for an ``origin`` that is not a match's id and creation time.
    """
    stated = data.get("origin")
    if stated is not None:
        found = _origin(stated)
        if found is None:
            raise InputError(
                f'the file\'s origin must be {{"id": a match id, "created_at": a time}}, got {shown(stated)}'
            )
        return found
    return _origin(data)


def _origin(value: object) -> Origin | None:
    if not isinstance(value, Mapping):
        return None
    match_id, created_at = value.get("id"), value.get("created_at")
    if type(match_id) is not int or not 1 <= match_id <= MAX_ROW_ID or _a_time(created_at) is None:
        return None
    assert isinstance(created_at, str)  # _a_time read it
    return Origin(match_id, created_at)  # as written: a copy is matched to its original by this text


def _a_time(value: object) -> datetime.datetime | None:
    """``value`` read as a time as okgin writes one (ISO 8601, ``2026-12-05T14:02:00+00:00``), or None for none: the
    sheet shows it in the players' own clock."""
    if not isinstance(value, str) or not 0 < len(value) <= 40:
        return None
    try:
        return datetime.datetime.fromisoformat(value)
    except ValueError:
        return None


def _utc_time(value: object) -> str | None:
    """A time of the file's (``_a_time``) as okgin writes one, in UTC to the second (a time without an offset read as
    UTC), or None for none: the sheet prints a version's time as written, saying UTC, and a browser reads only some
    of the forms Python does (``2026-12-05T14:02:00+05:00`` was printed as 14:02 UTC, ``20261205T1402`` as
    NaN-NaN-NaN)."""
    when = _a_time(value)
    if when is None:
        return None
    try:
        return when.replace(tzinfo=when.tzinfo or datetime.UTC).astimezone(datetime.UTC).isoformat(timespec="seconds")
    except OverflowError:  # in year 1 or 9999, east or west of UTC: no year of UTC's
        return None


def _changed_totals(data: Mapping[str, Any], match: Match) -> tuple[str, ...]:
    """Where the file's totals are not the rescored ones, a note saying both: the players' totals compared, the file's
    as it gives them (a key of no player's made a note that said the same totals twice; a player it gives no total,
    renamed in the rounds but not in the totals, was said to have ``null``)."""
    stated = data.get("totals")
    if not isinstance(stated, Mapping) or all(stated.get(name) == match.totals[name] for name in match.players):
        return ()
    rescored = ", ".join(f"{name} {match.totals[name]}" for name in match.players)
    return (
        f"the file's totals ({_stated_totals(stated, match.players)}) were scored again by these rules: {rescored}",
    )


def _stated_totals(stated: Mapping[str, Any], players: Sequence[str]) -> str:
    """The file's totals as it gives them: each player's, the players it gives none, and (the first few of) its totals
    of names that are no player's.

    >>> _stated_totals({"Ann": 18, "Bob": None}, ["Anna", "Bob"])
    "Bob null; none for Anna; 'Ann' 18, of no player"
    """
    given = ", ".join(f"{name} {shown(stated[name])}" for name in players if name in stated)
    missing = [name for name in players if name not in stated]
    others = [name for name in stated if name not in players]
    listed = [f"{shown(name)} {shown(stated[name])}" for name in others[:OTHER_TOTALS_SHOWN]]
    if len(others) > OTHER_TOTALS_SHOWN:
        listed.append(f"{len(others) - OTHER_TOTALS_SHOWN:,} more")
    parts = (
        given,
        f"none for {' or '.join(missing)}" if missing else "",
        f"{', '.join(listed)}, of no player" if others else "",
    )
    return "; ".join(part for part in parts if part)
