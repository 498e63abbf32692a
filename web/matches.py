"""Matches in SQLite: the rounds as entered, and the ``scorer.match.Match`` they rebuild.

The database keeps what was entered for each round (``Knock``/``Draw`` in their JSON form) and never a
computed score: totals, dealers and the winner come from replaying the rounds, so an edited round or a
newer engine cannot leave stale totals behind. Replays are kept in a small per-app cache keyed by the
match's ``revision`` (bumped by every write), so a long match is not replayed on every request. What an edit
replaced or an undo removed is kept too (``web.round_history``), in the same transaction, and can be put back.
So is the match's outline (``scorer.records.MatchOutline``): the players' records read every match's outline in one
query, never replaying a match (``records``).

Writes are optimistic: the change is computed on the cached match outside any lock, then ``BEGIN
IMMEDIATE`` checks the revision is unchanged and writes one row. The write lock is held for a few
statements, never for a replay, so many writers on one long match do not time out on "database is
locked"; a writer that lost the race computes again on the newer match.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import datetime
import json
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar, cast, overload

from flask import Flask, current_app

from scorer.cards import InvalidCardError
from scorer.match import (
    InvalidPlayersError,
    Knock,
    Match,
    MatchError,
    MatchRound,
    RoundInput,
    RoundInputError,
    parse_round_input,
    renamed,
)
from scorer.records import (
    HeadToHead,
    InvalidOutlineError,
    MatchOutline,
    PlayerRecord,
    head_to_head,
    player_records,
    same_player,
    scoring_engine,
)
from scorer.rules import IllegalKnockError, IllegalLayoffError, InvalidHandError, InvalidRulesError, Rules
from web.db import (
    MAX_DATABASE_BYTES,
    DatabaseError,
    busy_timeout,
    database_problem,
    get_db,
    give_up_waiting,
    lock_waits,
    snapshot,
    stored_bytes,
    transaction,
)
from web.fields import MAX_ROW_ID, InputError, refuse_taken
from web.round_history import (
    EDITED,
    UNDONE,
    EarlierVersion,
    Restore,
    history_rows,
    keep_replaced,
    newest_kept,
    read_history,
    restore,
)
from web.transfer import MatchFile, Origin, read_match_file

if TYPE_CHECKING:
    from web.once import KeepPost

Kept = TypeVar("Kept")
MOST_LISTED = 100
"""The most matches one page of a list holds (``GET /api/matches``)."""
CACHE_SIZE = 32
CACHE_ROUNDS = 20_000
"""The most rounds (and earlier versions) the cached matches hold together; the match last used is kept even when it
alone holds more. A match file held up to 5,000 rounds (1,000 since session 47: ``scorer.match.MAX_ROUNDS``), and 32
such matches rebuilt held hundreds of MB by count alone (a scale probe, session 44)."""
WRITE_ATTEMPTS = 20
STALE_BACKOFF_SECONDS = 0.002
"""The first retry's longest random wait after another process wrote first; it doubles per attempt, up to 64x."""
RESTORE_CHECK_ROUNDS = 100_000
"""The most rounds one revision's offers of earlier versions add up again (``MatchRecord.restores``). A match file of
5,000 rounds and 1,000 versions (the most a file held then; 1,000 rounds since session 47), each of which would end
the match early: its first read took 1.6 s, once per revision (the review's import_refused.py, session 46, two shared
cores), where it took 24 s."""
SCORING_ERRORS = (InvalidHandError, IllegalKnockError, IllegalLayoffError, RoundInputError)
"""What the engine raises for a round that cannot be scored as entered: the player's to fix (400)."""


class NotFoundError(LookupError):
    """No such match or round."""


class ConflictError(ValueError):
    """The request is well-formed but the match's state refuses it; ``details`` go into the 409 answer."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details or {}


class UnreadableMatchError(ConflictError):
    """A stored match whose rounds no longer score (stored by an engine that allowed what this one refuses): it
    cannot be shown or changed, but what was entered can still be saved (``stored_file``)."""


class BusyError(RuntimeError):
    """The match kept changing under a write, attempt after attempt, or the server is busy writing out other long
    matches (503: try again)."""


LONG_MATCH_ROUNDS = 200
"""A match of more rounds and earlier versions together than this is long to write out (a second or so of the CPU at
a thousand rounds of four players' knocks): only ``LONG_MATCHES_AT_ONCE`` are written out at a time."""
LONG_MATCHES_AT_ONCE = 2
LONG_MATCH_WAIT_SECONDS = 0.5
"""How long a request waits for a turn to write out a long match before it is answered 503: waiting, it holds one of
the server's worker threads, and sixteen readers of a long match held them all for a minute (session 47's probe)."""
_LONG_MATCH_TURNS = threading.BoundedSemaphore(LONG_MATCHES_AT_ONCE)


@contextlib.contextmanager
def long_match_turn(rounds: int) -> Iterator[None]:
    """A turn to write out a match of ``rounds`` rounds and earlier versions: at once for most matches; for a long
    one (``LONG_MATCH_ROUNDS``), one of ``LONG_MATCHES_AT_ONCE`` turns.

    :raises BusyError: when no turn comes within ``LONG_MATCH_WAIT_SECONDS``.
    """
    if rounds <= LONG_MATCH_ROUNDS:
        yield
        return
    if not _LONG_MATCH_TURNS.acquire(timeout=LONG_MATCH_WAIT_SECONDS):
        raise BusyError(f"the server is busy writing out other long matches; this one has {rounds} rounds: try again")
    try:
        yield
    finally:
        _LONG_MATCH_TURNS.release()


class _WorkedOut(Generic[Kept]):
    """A value a record's readers work out once and keep on it (a record is one revision, shared by the requests that
    read it: ``MatchCache``). ``functools.cached_property`` without its lock: Python 3.11 holds one lock for every
    instance of a class, so one long match's offers held up every other match's first read. Each record has a lock
    of its own: a reader who finds another working it out waits for it, rather than work it out again (sixteen
    readers of a long match's JSON each wrote it out)."""

    def __init__(self, work: Callable[[Any], Kept]) -> None:
        self.work, self.name = work, work.__name__
        self.__doc__ = work.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, record: None, owner: type) -> _WorkedOut[Kept]: ...

    @overload
    def __get__(self, record: object, owner: type | None = None) -> Kept: ...

    def __get__(self, record: object, owner: type | None = None) -> Kept | _WorkedOut[Kept]:
        if record is None:  # asked of the class: the descriptor itself (``kept``)
            return self
        kept = record.__dict__.get(self.name, _MISSING)
        if kept is _MISSING:
            with _lock_of(record):
                kept = record.__dict__.get(self.name, _MISSING)
                if kept is _MISSING:
                    kept = record.__dict__[self.name] = self.work(record)  # past the frozen dataclass's __setattr__
        return cast(Kept, kept)

    def keep(self, record: object, value: Kept) -> None:
        """Give ``record`` its value, worked out elsewhere, unless its readers have worked it out already."""
        with _lock_of(record):
            record.__dict__.setdefault(self.name, value)

    def kept(self, record: object) -> Kept | None:
        """The value if ``record``'s readers have worked it out already, else None (and nothing is worked out)."""
        kept = record.__dict__.get(self.name, _MISSING)
        return None if kept is _MISSING else cast(Kept, kept)


_MISSING = object()


def _lock_of(record: object) -> threading.RLock:
    """The lock of ``record``'s worked-out values, made by whoever asks first: ``dict.setdefault`` is atomic, so every
    reader finds the one lock; reentrant, as one value may need another."""
    lock: threading.RLock = record.__dict__.setdefault("_worked_out_lock", threading.RLock())
    return lock


@dataclasses.dataclass(frozen=True)
class MatchRecord:
    """A stored match: its id, creation time and revision (count of changes), the rebuilt match, each round's deal
    (``deals``, in round order: ``web.round_history``), what edits replaced and undos removed (``earlier``, newest
    first), and the match it is a copy of (``origin``: None unless it was imported from a file that says)."""

    id: int
    created_at: str
    revision: int
    match: Match
    deals: tuple[int, ...]
    earlier: tuple[EarlierVersion, ...] = ()
    origin: Origin | None = None

    @_WorkedOut
    def json_text(self) -> str:
        """``to_dict()`` written out as JSON, once per revision: every device at the table reads the match. Written
        as ``jsonify`` writes the match in the other answers (keys in order, ASCII: ``web.create_app``)."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``Match.to_dict()`` plus ``id``, ``created_at``, ``revision`` (what a client names when it
        changes a round, so that a request sent twice, or arriving late, changes nothing), ``origin``
        (``Origin.to_dict()`` or null), ``deals`` (each round's, in round order) and ``earlier_versions``
        (``EarlierVersion.to_dict()`` each, newest first, with ``restore``: ``"edit"``, ``"add"`` or null,
        ``why_not``: why it cannot be put back, or null, and ``points``: what it scored on its own, ``{}`` for a
        draw, null where it no longer scores)."""
        earlier = []
        for version in self.earlier:
            how = self.restores[version.id]
            scored = self._version_scores[version.id]
            points, outcome = (None, None) if isinstance(scored, str) else (dict(scored.points), scored.outcome)
            shown = {"restore": how.how, "why_not": how.why_not, "points": points, "outcome": outcome}
            earlier.append(version.to_dict() | shown)
        return {
            "id": self.id,
            "created_at": self.created_at,
            "revision": self.revision,
            "origin": None if self.origin is None else self.origin.to_dict(),
            **self.match.to_dict(),
            "deals": list(self.deals),
            "earlier_versions": earlier,
        }

    def turn(self) -> contextlib.AbstractContextManager[None]:
        """A turn to write this match out for a reader (a page, an export): ``long_match_turn``. The answers to
        changes take none: a change made must not be answered "try again"."""
        return long_match_turn(len(self.match.rounds) + len(self.earlier))

    def json_for_reader(self) -> str:
        """``json_text``, worked out in the match's turn (taken before the record's lock, so that readers waiting for
        a turn are answered at once, not one after another), or kept already."""
        kept = MatchRecord.json_text.kept(self)
        if kept is not None:
            return kept
        with self.turn():
            return self.json_text

    @_WorkedOut
    def _version_scores(self) -> dict[int, VersionScore | str]:
        """Each earlier version's points on its own and its outcome (a draw: no points, no outcome), so that the
        players can tell versions apart without comparing their cards, or why it no longer scores, by version id (a
        file's versions are read, not scored, as it is opened). Made once per revision: the record of a revision is
        shared by the requests that read it (``MatchCache``)."""
        return {version.id: self._scored_alone(version) for version in self.earlier}

    def _scored_alone(self, version: EarlierVersion) -> VersionScore | str:
        """What ``version`` scores on its own, or why it no longer scores (kept by ``_version_scores``)."""
        kept = MatchRecord._version_scores.kept(self)
        if kept is not None:
            return kept[version.id]
        entered = version.entered
        try:
            result = self.match.seated(entered).score(self.match.rules) if isinstance(entered, Knock) else None
        except (*SCORING_ERRORS, InvalidCardError) as error:
            return str(error)
        return VersionScore({}, None) if result is None else VersionScore(result.points, result.outcome)

    def carry_version_scores(self, before: MatchRecord) -> None:
        """Take what each earlier version scores alone from ``before``, the revision this one was changed from, where
        it was worked out there, scoring only the versions it lacks: a version scores alone as it did while the
        match's players and rules stay (every answer to an edit scored each of 1,000 versions again, and each offered
        one twice: 2.4 s an edit, 0.5 s now, on two busy cores)."""
        scores = MatchRecord._version_scores.kept(before)
        if scores is not None:
            carried = {
                kept.id: scores[kept.id] if kept.id in scores else self._scored_alone(kept) for kept in self.earlier
            }
            MatchRecord._version_scores.keep(self, carried)

    def restore_of(self, version: EarlierVersion) -> Restore:
        """How an earlier version of this match can be put back (``web.round_history.restore``), and not offered
        where putting it back would be refused: a version of an early round whose points would end the match
        before the rounds played after it. One version asked of a record whose offers are not worked out yet (a
        put-back, on the copy it changes) is worked out alone."""
        found = MatchRecord.restores.kept(self)
        return found[version.id] if found is not None else self._restore(version, self.match.inputs(), None, None)[0]

    @_WorkedOut
    def restores(self) -> dict[int, Restore]:
        """``restore_of`` each earlier version, by id, made once per revision: a version that no longer scores is not
        offered, nor an edit that would end the match early (``Match.check_edit``: most are told by the totals
        alone; the rounds the trials add up again, refused or not, are bounded by ``RESTORE_CHECK_ROUNDS``, newest
        versions first, and an older one past that is offered as it was, and refused, saying why, if put back)."""
        inputs, found, rounds_left = self.match.inputs(), {}, RESTORE_CHECK_ROUNDS
        scores = self._version_scores  # each version scored once, for its offer and for the points shown
        for version in self.earlier:  # newest first
            found[version.id], tried = self._restore(version, inputs, rounds_left, scores)
            rounds_left -= tried
        return found

    def _restore(
        self,
        version: EarlierVersion,
        inputs: list[RoundInput],
        rounds_left: int | None,
        scores: dict[int, VersionScore | str] | None,
    ) -> tuple[Restore, int]:
        """How ``version`` can be put back, and how many rounds its check added up again (an edit tried while
        ``rounds_left``, None: however many); ``scores``: what the versions score alone (``_version_scores``), None
        to score this one alone."""
        how = restore(version, inputs, self.deals, self.match.winner)
        if how.how is None:
            return how, 0
        scored = self._scored_alone(version) if scores is None else scores[version.id]
        if isinstance(scored, str):
            return Restore(None, f"it no longer scores: {scored}"), 0
        if how.how != "edit" or (rounds_left is not None and rounds_left <= 0):
            return how, 0
        index = version.number - 1
        try:
            return how, self.match.check_edit(index, version.entered, scored.points)
        except MatchError:  # tried on a copy up to the round that would end the match
            tried = len(self.match.rounds) - index
            return Restore(None, "putting it back would end the match before the rounds played after it"), tried

    @property
    def new_deal(self) -> int:
        """The deal a round entered now is: one more than any of the match's, on the sheet or kept."""
        return 1 + max((*self.deals, *(version.deal for version in self.earlier)), default=0)

    def check_revision(self, revision: int | None) -> None:
        """Refuse a change asked of an earlier revision of the match than this one (None: asked of any).

        :raises ConflictError: naming both revisions, with the match as it is now.
        """
        if revision is not None and revision != self.revision:
            raise ConflictError(
                "the score sheet changed since this was asked (on another device, or by a tap sent twice), so it"
                " was not done; the sheet shows the match as it is now: repeat it if still wanted"
                f" (match {self.id} has changed since revision {revision}; it is at revision {self.revision})",
                {"match": self.to_dict()},
            )


class VersionScore(NamedTuple):
    """What an earlier version scores on its own: each player's points and the outcome (None for a draw)."""

    points: dict[str, int]
    outcome: str | None


@dataclasses.dataclass(frozen=True)
class MatchSummary:
    """One line of the resume and history lists."""

    id: int
    created_at: str
    players: list[str]
    preset: str
    """The rule set's id ("oklahoma"), as ``Rules.preset``."""
    title: str
    """The rule set's name as players know it ("Oklahoma Gin")."""
    rounds: int
    """Every round entered, draws included."""
    draws: int
    winner: str | None
    finished_at: str | None

    @property
    def rounds_scored(self) -> int:
        """The rounds that were scored, as ``Match.to_dict()`` counts them: a draw is void."""
        return self.rounds - self.draws

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class Changed(NamedTuple):
    """A write computed on a private copy of a match: the changed match, its rounds' deals, and the SQL that stores the
    change (which answers the earlier version it kept, if it replaced or removed a round), or None for a change that
    changes nothing (a round saved as it was): nothing is stored and the revision stays. ``earlier``: the earlier
    versions as the change leaves them, where it changes them (a player renamed in them), else None."""

    match: Match
    deals: tuple[int, ...]
    write: Callable[[sqlite3.Connection], EarlierVersion | None] | None
    earlier: tuple[EarlierVersion, ...] | None = None


class _Stale(Exception):
    """The match changed between computing a write and taking the write lock."""


class ByRevision(Generic[Kept]):
    """Values by match id, each valid for one revision of its match; the most recently used ``size`` are kept, and a
    value for an older revision than the one kept is not (a slow reader must not put back what a writer replaced).

    With a ``budget``, the values' ``weight`` together stays within it too, the most recently used always kept: a
    few matches of a thousand rounds (``scorer.match.MAX_ROUNDS``) must not hold hundreds of MB.
    """

    def __init__(self, size: int, budget: int | None = None, weight: Callable[[Kept], int] | None = None) -> None:
        self._size = size
        self._budget = float("inf") if budget is None else budget
        self._weight = weight or (lambda _: 1)
        self._entries: collections.OrderedDict[int, tuple[int, Kept]] = collections.OrderedDict()
        self._weights: dict[int, int] = {}
        self._total = 0  # the kept values' weight together
        self._lock = threading.Lock()

    def get(self, match_id: int, revision: int) -> Kept | None:
        with self._lock:
            entry = self._entries.get(match_id)
            if entry is None or entry[0] != revision:
                return None
            self._entries.move_to_end(match_id)
            return entry[1]

    def put(self, match_id: int, revision: int, value: Kept) -> None:
        with self._lock:
            kept = self._entries.get(match_id)
            if kept is not None and kept[0] > revision:
                return
            self._entries[match_id] = (revision, value)
            self._entries.move_to_end(match_id)
            weight = self._weight(value)
            self._total += weight - self._weights.get(match_id, 0)
            self._weights[match_id] = weight
            while len(self._entries) > self._size or (len(self._entries) > 1 and self._total > self._budget):
                oldest, _ = self._entries.popitem(last=False)
                self._total -= self._weights.pop(oldest)


class MatchCache:
    """Rebuilt matches by id, valid for one revision; a few are kept, most recently used first.

    ``guard(match_id)`` is held while a match is replayed into the cache or a write to it commits, so
    threads that find no entry wait for it (blocked, not spinning a replay of their own and starving the
    thread that holds the database's write lock of the GIL).
    """

    def __init__(self, size: int = CACHE_SIZE, guards: int = 64, rounds: int = CACHE_ROUNDS) -> None:
        self._entries: ByRevision[MatchRecord] = ByRevision(size, rounds, _rounds_kept)
        self._guards = [threading.Lock() for _ in range(guards)]
        self._writers = [threading.Lock() for _ in range(guards)]

    def writer(self, match_id: int) -> threading.Lock:
        """The lock a thread holds while it computes and commits a change to this match in this process
        (shared by a few ids): writers take turns instead of each computing on a match another has just
        changed. Held while scoring, it is not the database's write lock, which is taken only to commit."""
        return self._writers[match_id % len(self._writers)]

    def guard(self, match_id: int) -> threading.Lock:
        """The lock for rebuilding or changing this match in this process (shared by a few ids)."""
        return self._guards[match_id % len(self._guards)]

    def get(self, match_id: int, revision: int) -> MatchRecord | None:
        """The match at this revision, if kept: shared by the requests that read it, and what they work out of it
        once (the offers of its earlier versions), so not to be changed (``_write`` changes a copy)."""
        return self._entries.get(match_id, revision)

    def put(self, record: MatchRecord) -> None:
        """Keep ``record``, which is no longer to be changed."""
        self._entries.put(record.id, record.revision, record)


def _rounds_kept(record: MatchRecord) -> int:
    """What a cached match weighs: its rounds and the earlier versions it keeps."""
    return 1 + len(record.match.rounds) + len(record.earlier)


def _cache() -> MatchCache:
    cache: MatchCache = current_app.extensions.setdefault("okgin_matches", MatchCache())
    return cache


def _new_match_place() -> contextlib.AbstractContextManager[None]:
    """``web.security.new_match_place``, imported when called: ``web.security`` imports ``web.errors``, which imports
    this module's errors."""
    from web.security import new_match_place

    return new_match_place()


def _refuse_when_full(db: sqlite3.Connection) -> None:
    """Refuse a new match while the database holds ``MAX_DATABASE_BYTES`` (the app config's, else the default). Read
    in the write transaction, so matches stored at once each see the others': the database passes the bound by one
    match at most. Rounds of matches begun are never refused (a game in progress is never lost): each match is
    bounded already (``scorer.match.MAX_ROUNDS`` rounds, ``web.round_history.MAX_EARLIER_VERSIONS`` earlier versions).

    :raises ApiError: 507 when it holds as much (``web.errors`` imports this module: imported when raised).
    """
    most = int(current_app.config.get("MAX_DATABASE_BYTES", MAX_DATABASE_BYTES))
    held = stored_bytes(db)
    if held >= most:
        from web.errors import ApiError

        raise ApiError(
            507,
            f"the database holds {_megabytes(held)} MB, the most this server keeps ({_megabytes(most)} MB): no new"
            " match is stored, while rounds of the matches begun still are. Start okgin serve with a larger"
            " --max-database-mb, or with another database (--db) for new matches",
        )


def _megabytes(size: int) -> str:
    """A size in MB as a message says it.

    >>> _megabytes(500 * 1024**2), _megabytes(100_000)
    ('500', '0.1')
    """
    return f"{round(size / 1024**2, 1):g}"


def create_match(players: list[str], rules: Rules, dealer: str | None, keep_post: KeepPost | None = None) -> int:
    """Store a new match; the first dealer is drawn at random when ``dealer`` is None. ``keep_post`` keeps the
    one-time key of the post that made it, in the same transaction (``web.once``).

    :raises InputError: when the rules refuse this many players.
    :raises ApiError: 429 past the matches a client may start in an hour (``web.security.new_match_place``).
    :raises ApiError: 507 when the database holds ``MAX_DATABASE_BYTES`` (``_refuse_when_full``).
    """
    try:
        match = Match(players, rules, dealer=dealer)
    except (InvalidPlayersError, InvalidHandError) as error:  # InvalidHandError: a count the rules refuse
        raise InputError(str(error)) from error
    with _new_match_place(), transaction() as db:
        _refuse_when_full(db)
        cursor = db.execute(
            "INSERT INTO matches (created_at, rules_json, first_dealer, outline_json, outline_revision)"
            " VALUES (?, ?, ?, ?, 0)",
            (_now(), json.dumps(rules.to_dict()), match.first_dealer, _outline_json(match)),
        )
        match_id = cursor.lastrowid
        assert match_id is not None
        db.executemany(
            "INSERT INTO players (match_id, seat, name) VALUES (?, ?, ?)",
            [(match_id, seat, name) for seat, name in enumerate(players, start=1)],
        )
        if keep_post is not None:
            keep_post(db, match_id)
    return match_id


def load_match(match_id: int) -> MatchRecord:
    """The match as stored now, from the cache when its revision is unchanged, else replayed.

    :raises NotFoundError: for an unknown id.
    :raises ConflictError: when the stored rounds no longer score (e.g. rules a newer engine refuses).
    """
    if not 1 <= match_id <= MAX_ROW_ID:
        raise NotFoundError(f"no match with id {match_id}")
    cache = _cache()
    record = _cached(cache, match_id)
    if record is None:
        with cache.guard(match_id):  # one replay per match at a time; the others find it cached
            record = _cached(cache, match_id) or _replayed(cache, match_id)
    return record


def _cached(cache: MatchCache, match_id: int) -> MatchRecord | None:
    row = get_db().execute("SELECT revision FROM matches WHERE id = ?", (match_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no match with id {match_id}")
    return cache.get(match_id, row["revision"])


def _replayed(cache: MatchCache, match_id: int) -> MatchRecord:
    """The match rebuilt from its rows (``_rebuilt``), then cached."""
    record = _rebuilt(match_id)
    cache.put(record)
    return record


def _rebuilt(match_id: int) -> MatchRecord:
    """The match rebuilt from its row, its rounds and its earlier versions, all read in one snapshot (so the
    revision is theirs).

    :raises NotFoundError: for an unknown id.
    :raises ConflictError: when the stored rounds no longer score.
    """
    try:
        with snapshot() as db:
            row, players, rounds = _stored_rows(db, match_id)
            earlier = read_history(db, match_id)
        rules = Rules.from_dict(json.loads(row["rules_json"]))
        inputs = [parse_round_input(json.loads(line["input_json"])) for line in rounds]
        match = Match(players, rules, dealer=row["first_dealer"])
        match.replay(inputs)
    except (*SCORING_ERRORS, InvalidRulesError, json.JSONDecodeError, MatchError, InvalidPlayersError) as error:
        raise UnreadableMatchError(
            f"match {match_id} cannot be rebuilt from what is stored: {error}. What was entered can still be saved: "
            f"/matches/{match_id}/export.json"
        ) from error
    origin = None if row["origin_id"] is None else Origin(row["origin_id"], row["origin_created_at"])
    deals = tuple(line["deal"] for line in rounds)
    return MatchRecord(match_id, row["created_at"], row["revision"], match, deals, earlier, origin)


def stored_file(match_id: int, why: str) -> dict[str, Any]:
    """What is stored for a match, in its file's fields (players, rules, first dealer, each round's input and deal,
    the earlier versions), read as it lies and not scored, with ``not_scored``: ``why`` it was not. The export of a
    match that no longer rebuilds (``UnreadableMatchError``), so that nothing entered is out of the players' reach.

    :raises NotFoundError: for an unknown id.
    """
    with snapshot() as db:
        row, players, rounds = _stored_rows(db, match_id)
        versions = history_rows(db, match_id)
    return {
        "id": match_id,
        "created_at": row["created_at"],
        "origin": None if row["origin_id"] is None else Origin(row["origin_id"], row["origin_created_at"]).to_dict(),
        "players": players,
        "rules": _stored_json(row["rules_json"]),
        "first_dealer": row["first_dealer"],
        "rounds": [{"number": line["number"], "input": _stored_json(line["input_json"])} for line in rounds],
        "deals": [line["deal"] for line in rounds],
        "earlier_versions": [
            {
                "id": version["id"],
                "number": version["number"],
                "input": _stored_json(version["input_json"]),
                "replaced_at": version["replaced_at"],
                "replaced_by": version["replaced_by"],
                "deal": version["deal"],
            }
            for version in versions
        ],
        "not_scored": why,
    }


def _stored_rows(db: sqlite3.Connection, match_id: int) -> tuple[sqlite3.Row, list[str], list[sqlite3.Row]]:
    """A match's row, its players in seat order and its rounds' rows (``number``, ``input_json``, ``deal``) in order.

    :raises NotFoundError: for an unknown id.
    """
    row = db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no match with id {match_id}")
    players = [r["name"] for r in db.execute("SELECT name FROM players WHERE match_id = ? ORDER BY seat", (match_id,))]
    rounds = db.execute(
        "SELECT number, input_json, COALESCE(deal, number) AS deal FROM rounds WHERE match_id = ? ORDER BY number",
        (match_id,),
    ).fetchall()
    return row, players, rounds


def _stored_json(text: str) -> Any:
    """A stored JSON column as its value, or as the text it is where it is no JSON (kept, not lost)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def add_round(
    match_id: int, entered: RoundInput, number: int | None = None, revision: int | None = None
) -> tuple[MatchRecord, MatchRound]:
    """Score and store the next round. With ``number`` (the round the client believes it adds), a round
    already stored under that number is never stored twice: the answer is a 409 carrying that round. With
    ``revision`` (the match as the client saw it), only if the match is still at that revision: a round sent
    again after it was undone (its number free again) is not brought back.

    :raises InputError: when the round cannot be scored.
    :raises ConflictError: for a number already taken or out of turn, a match changed since ``revision``, or a
        match already won.
    """
    record = _write(match_id, lambda record: _added(record, entered, number, record.new_deal, revision))
    return record, record.match.rounds[-1]


def undo_round(match_id: int, number: int | None = None, revision: int | None = None) -> MatchRecord:
    """Delete the last round (kept among the earlier versions, to be brought back); with ``number``, only if round
    ``number`` is still the last (a repeated undo then deletes nothing more); with ``revision``, only if the match
    is still at that revision (an undo that arrives after round ``number`` was entered again deletes nothing).

    :raises NotFoundError: for a number that is not recorded.
    :raises ConflictError: when there is no round, round ``number`` is not the last, or the match has changed
        since ``revision``.
    """

    def change(record: MatchRecord) -> Changed:
        record.check_revision(revision)
        match = record.match
        last = len(match.rounds)
        if number is not None and not 1 <= number <= last:  # round 0 was told "edit round 0 instead"
            raise NotFoundError(f"match {match_id} has no round {number} (it has {last})")
        if not last:
            raise ConflictError("there is no round to undo", {"match": record.to_dict()})
        if number is not None and number != last:
            raise ConflictError(
                f"only the last round ({last}) can be undone; edit round {number} instead", {"match": record.to_dict()}
            )
        removed = match.undo_last()

        def write(db: sqlite3.Connection) -> EarlierVersion:
            kept = keep_replaced(db, match_id, removed, record.deals[-1], UNDONE, _now())
            db.execute("DELETE FROM rounds WHERE match_id = ? AND number = ?", (match_id, last))
            return kept

        return Changed(match, record.deals[:-1], write)

    return _write(match_id, change)


def edit_round(match_id: int, number: int, entered: RoundInput, revision: int | None = None) -> MatchRecord:
    """Replace round ``number`` (what it held is kept among the earlier versions); it and every round after it are
    scored again (totals, dealers and winner follow). With ``revision``, only if the match is still at that
    revision: an edit sent before another one, arriving after it, does not undo it.

    :raises NotFoundError: when the round does not exist.
    :raises InputError: when the round cannot be scored.
    :raises ConflictError: when the edit would end the match before rounds that come after it, or the match has
        changed since ``revision``.
    """

    def change(record: MatchRecord) -> Changed:
        record.check_revision(revision)
        return _edited(record, number, entered)

    return _write(match_id, change)


def restore_version(match_id: int, version_id: int, revision: int) -> MatchRecord:
    """Put back an earlier version of a round (``web.round_history.restore``): its round holds it again (an edit),
    or an undone round comes back as the next round; only while the match is at ``revision``, so a tap sent twice
    or arriving late changes nothing.

    :raises NotFoundError: for a version that is not one of this match's.
    :raises InputError: when the round cannot be scored.
    :raises ConflictError: when the match has changed since ``revision``, or the version cannot be put back
        (saying why, in players' words).
    """

    def change(record: MatchRecord) -> Changed:
        version = next((kept for kept in record.earlier if kept.id == version_id), None)
        if version is None:
            raise NotFoundError(f"match {match_id} has no earlier version {version_id}")
        record.check_revision(revision)
        how = record.restore_of(version)
        if how.how == "edit":
            return _edited(record, version.number, version.entered)
        if how.how == "add":  # the deal it was a version of comes back
            return _added(record, version.entered, version.number, version.deal)
        raise ConflictError(
            f"this earlier version of round {version.number} cannot be put back: {how.why_not}",
            {"match": record.to_dict()},
        )

    return _write(match_id, change)


def rename_player(match_id: int, seat: int, name: str, revision: int) -> MatchRecord:
    """Call the player in ``seat`` (1 for the first player) ``name`` everywhere the match holds the name: its players,
    first dealer and winner, every round and earlier version, and its outline (the players' records count the match
    under the new name), in one transaction; the match scores as it did. Only while the match is at ``revision``;
    a seat that holds ``name`` already changes nothing (a rename sent twice, its answer lost), its revision included.

    :raises NotFoundError: for a seat no player sits in.
    :raises InputError: for a name another player's is, as the records tell players apart (``fields.refuse_taken``).
    :raises ConflictError: when the match has changed since ``revision``.
    """

    def change(record: MatchRecord) -> Changed:
        players = record.match.players
        if not 1 <= seat <= len(players):
            raise NotFoundError(f"match {match_id} has no player {seat} (it has {len(players)})")
        old = players[seat - 1]
        if old == name:
            return Changed(record.match, record.deals, None)
        record.check_revision(revision)
        refuse_taken(name, [player for player in players if player != old])
        earlier = tuple(_renamed_version(kept, old, name) for kept in record.earlier)
        match = record.match.renamed(old, name)

        def write(db: sqlite3.Connection) -> None:
            db.execute("UPDATE players SET name = ? WHERE match_id = ? AND seat = ?", (name, match_id, seat))
            db.execute("UPDATE matches SET first_dealer = ? WHERE id = ?", (match.first_dealer, match_id))
            db.executemany(
                "UPDATE rounds SET input_json = ? WHERE match_id = ? AND number = ?",
                [(json.dumps(line.entered.to_dict()), match_id, line.number) for line in match.rounds],
            )
            db.executemany(
                "UPDATE earlier_versions SET input_json = ? WHERE id = ?",
                [(json.dumps(kept.entered.to_dict()), kept.id) for kept in earlier],
            )

        return Changed(match, record.deals, write, earlier)

    return _write(match_id, change)


def _renamed_version(kept: EarlierVersion, old: str, new: str) -> EarlierVersion:
    """Earlier version ``kept`` with player ``old`` called ``new`` (``rename_player``).

    :raises InputError: when it names ``new`` already: a match file's versions are read, not scored, and one may
        name someone who is not a player.
    """
    try:
        return dataclasses.replace(kept, entered=renamed(kept.entered, old, new))
    except InvalidPlayersError as error:
        raise InputError(
            f"{old} cannot be called {new}: in an earlier version of round {kept.number}, {error}"
        ) from error


def list_matches(
    limit: int = MOST_LISTED, finished: bool | None = None, before: int | None = None
) -> list[MatchSummary]:
    """Newest first: id, players, rule set, rounds played, winner, for the resume and history lists.

    ``finished`` True or False lists only the finished or the unfinished matches (a club's year of finished matches
    must not push an unfinished one off the resume list); ``before`` only those of a lower id: the next page of a
    list that ended at that match.
    """
    where, values = [], []
    if finished is not None:
        where.append("m.winner IS NOT NULL" if finished else "m.winner IS NULL")
    if before is not None:
        where.append("m.id < ?")
        values.append(before)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    with snapshot() as db:
        rows = db.execute(
            "SELECT m.*, (SELECT COUNT(*) FROM rounds AS r WHERE r.match_id = m.id) AS round_count,"
            " (SELECT COUNT(*) FROM rounds AS r WHERE r.match_id = m.id AND json_extract(r.input_json, '$.draw'))"
            f" AS draw_count FROM matches AS m{clause} ORDER BY m.id DESC LIMIT ?",
            (*values, limit),
        ).fetchall()
        players: dict[int, list[str]] = collections.defaultdict(list)
        ids = [row["id"] for row in rows]
        marks = ", ".join("?" * len(ids))
        for row in db.execute(f"SELECT match_id, name FROM players WHERE match_id IN ({marks}) ORDER BY seat", ids):
            players[row["match_id"]].append(row["name"])
    return [
        MatchSummary(
            row["id"],
            row["created_at"],
            players[row["id"]],
            *_preset_and_title(row["rules_json"]),
            row["round_count"],
            row["draw_count"],
            row["winner"],
            row["finished_at"],
        )
        for row in rows
    ]


def match_page(
    limit: int, finished: bool | None = None, before: int | None = None
) -> tuple[list[MatchSummary], int | None]:
    """One page of ``list_matches``, and the id the next page is asked ``before`` (None where no older match is
    listed)."""
    summaries = list_matches(limit + 1, finished, before)
    return summaries[:limit], summaries[limit - 1].id if len(summaries) > limit else None


def read_imported(data: object) -> MatchFile:
    """A match file read and its rounds scored again (``web.transfer.read_match_file``), a long one in its turn
    (``long_match_turn``): a file of a thousand rounds is seconds of the CPU.

    :raises InputError: naming what is wrong with the file.
    :raises BusyError: when a long file finds no turn.
    """
    rounds = [data.get(key) for key in ("rounds", "earlier_versions")] if isinstance(data, dict) else []
    with long_match_turn(sum(len(entries) for entries in rounds if isinstance(entries, list))):
        return read_match_file(data)


def store_imported(imported: MatchFile, keep_post: KeepPost | None = None) -> int:
    """Store a match read from a file (``web.transfer``) as a new match, its rounds and earlier versions with it,
    in one transaction: an import is stored whole or not at all. It is a copy of the match the file was saved from:
    of that match's origin when that match is stored here and is itself a copy. Returns the new match's id.
    ``keep_post`` keeps the one-time key of the post that made it, in the same transaction (``web.once``).

    :raises ApiError: 429 past the matches a client may start in an hour (``web.security.new_match_place``).
    :raises ApiError: 507 when the database holds ``MAX_DATABASE_BYTES`` (``_refuse_when_full``).
    """
    match, now, source = imported.match, _now(), imported.source
    with _new_match_place(), transaction() as db:
        _refuse_when_full(db)
        origin = source
        if source is not None:  # a file saved before copies named their origin may be a copy's
            found = db.execute(
                "SELECT origin_id, origin_created_at FROM matches"
                " WHERE id = ? AND created_at = ? AND origin_id IS NOT NULL",
                (source.id, source.created_at),
            ).fetchone()
            origin = source if found is None else Origin(found["origin_id"], found["origin_created_at"])
        cursor = db.execute(
            "INSERT INTO matches (created_at, rules_json, first_dealer, winner, finished_at, origin_id,"
            " origin_created_at, outline_json, outline_revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)",
            (
                now,
                json.dumps(match.rules.to_dict()),
                match.first_dealer,
                match.winner,
                now if match.winner else None,
                None if origin is None else origin.id,
                None if origin is None else origin.created_at,
                _outline_json(match),
            ),
        )
        match_id = cursor.lastrowid
        assert match_id is not None
        db.executemany(
            "INSERT INTO players (match_id, seat, name) VALUES (?, ?, ?)",
            [(match_id, seat, name) for seat, name in enumerate(match.players, start=1)],
        )
        db.executemany(
            "INSERT INTO rounds (match_id, number, input_json, created_at, deal) VALUES (?, ?, ?, ?, ?)",
            [
                (match_id, line.number, json.dumps(line.entered.to_dict()), now, deal)
                for line, deal in zip(match.rounds, imported.deals, strict=True)
            ],
        )
        db.executemany(
            "INSERT INTO earlier_versions (match_id, number, input_json, replaced_at, replaced_by, deal)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    match_id,
                    kept.number,
                    json.dumps(kept.entered.to_dict()),
                    kept.replaced_at,
                    kept.replaced_by,
                    kept.deal,
                )
                for kept in imported.earlier
            ],
        )
        if keep_post is not None:
            keep_post(db, match_id)
    return match_id


_COUNTED = (
    "FROM matches AS m WHERE (m.origin_id IS NULL OR NOT EXISTS ("
    "  SELECT 1 FROM matches AS o"
    "  WHERE o.id = m.origin_id AND o.created_at = m.origin_created_at AND o.origin_id IS NULL"
    "  UNION ALL SELECT 1 FROM matches AS o"
    "  WHERE o.origin_id = m.origin_id AND o.origin_created_at = m.origin_created_at AND o.id < m.id))"
)
"""The matches the players' records count (``records``), as SQL's FROM and WHERE."""
FILL_BATCH = 50
"""The most outlines ``fill_outlines`` makes before it stores them, together: one commit (a sync to disk) each."""
_FILLER = "okgin_outlines_filler"


@dataclasses.dataclass(frozen=True)
class Records:
    """The players' records (``scorer.records``) over the matches counted, and how many more matches they will count
    once those matches' outlines are made (``fill_outlines``: matches kept before okgin stored outlines). Shared by
    the requests that ask for them: not to be changed."""

    players: list[PlayerRecord]
    pairs: list[HeadToHead]
    counted: int
    waiting: int


class _RecordsKept:
    """The records last made, with the matches' ids and revisions they were made of, and the outlines they were made
    of, by match id with the revision each was made for: a records page parses only the outlines that changed, and
    adds up again only when one did."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.made_of: tuple[tuple[int, int, int | None], ...] = ()
        self.records = Records([], [], 0, 0)
        self.outlines: dict[int, tuple[int, MatchOutline]] = {}

    def has_outline(self, match_id: int, revision: int) -> bool:
        """Whether the outline of ``match_id`` at ``revision`` is kept here, read already."""
        found = self.outlines.get(match_id)
        return found is not None and found[0] == revision


def _outline_texts(db: sqlite3.Connection, match_ids: list[int]) -> dict[int, str | None]:
    """The stored outlines (``outline_json``) of ``match_ids``, by id, a few hundred ids a query (SQLite's limit on a
    query's parameters)."""
    texts: dict[int, str | None] = {}
    for start in range(0, len(match_ids), 500):
        batch = match_ids[start : start + 500]
        marks = ",".join("?" * len(batch))
        query = f"SELECT id, outline_json FROM matches WHERE id IN ({marks})"
        texts.update((row["id"], row["outline_json"]) for row in db.execute(query, batch))
    return texts


def records() -> Records:
    """The players' records over every match they count, made of the matches' outlines, each read once (a request
    reads the text of only those changed since the records were last made): each is stored with its match, in the
    transaction of every change to it, so none is ever replayed here (a club's year of matches took 15 s to
    replay). A match that no longer scores is left out. A match kept before okgin stored outlines
    is counted once its outline is made, which a thread does in the background (``fill_outlines``), started here when
    one is missing: a records page never waits for it.

    A match is counted once, however many copies of it were imported (``store_imported``): as the first of them stored
    here, the original itself when it is here. A copy played on after it was opened is not counted: the match it was
    copied from is. Matches alike that no file tied together (two empty matches of Ann and Bob) are two matches.
    """
    kept: _RecordsKept = current_app.extensions.setdefault("okgin_records", _RecordsKept())
    with kept.lock:  # one request adds them up, the others asking meanwhile wait and read what it made
        with snapshot() as db:  # the outlines' text only of the matches changed since the records were last made
            rows = db.execute(f"SELECT id, revision, outline_revision {_COUNTED} ORDER BY id").fetchall()
            made_of = tuple((row["id"], row["revision"], row["outline_revision"]) for row in rows)
            if made_of == kept.made_of:
                if kept.records.waiting:
                    _start_filling(current_app._get_current_object())  # type: ignore[attr-defined]
                return kept.records
            stored = [row for row in rows if row["outline_revision"] == row["revision"]]
            unread = [row["id"] for row in stored if not kept.has_outline(row["id"], row["revision"])]
            texts = _outline_texts(db, unread)
        outlines: dict[int, tuple[int, MatchOutline]] = {}
        unreadable, waiting = [], len(rows) - len(stored)
        for row in stored:
            match_id, revision = row["id"], row["revision"]
            if kept.has_outline(match_id, revision):
                outlines[match_id] = kept.outlines[match_id]
            else:
                try:
                    outline = read_outline(texts[match_id])
                except InvalidOutlineError:  # not what this okgin writes: made again
                    unreadable.append((match_id, revision))
                    continue
                if outline is not None:  # else its rounds no longer score
                    outlines[match_id] = (revision, outline)
        if unreadable:
            with transaction() as db:
                db.executemany(
                    "UPDATE matches SET outline_revision = NULL WHERE id = ? AND outline_revision = ?", unreadable
                )
            made_of = ()  # made again for the same revisions: read again
        if waiting or unreadable:
            _start_filling(current_app._get_current_object())  # type: ignore[attr-defined]
        counted = [outline for _, outline in outlines.values()]  # oldest first, as ``scorer.records`` takes them
        kept.records = Records(player_records(counted), head_to_head(counted), len(counted), waiting + len(unreadable))
        kept.made_of, kept.outlines = made_of, outlines
        return kept.records


RECORDS_LISTED = 100
"""The most players' records, and the most head-to-head pairs, one page of them lists: a club's 5,000 matches of
20,000 players made the records page 11 MB, and 16 phones reading it stalled every other request for seconds
(session 48's probe)."""


@dataclasses.dataclass(frozen=True)
class RecordsPage:
    """One page of the players' records (``records_page``): a slice of each list, each list's length, and the offset
    of the next page (None on the last)."""

    players: list[PlayerRecord]
    pairs: list[HeadToHead]
    players_total: int
    pairs_total: int
    counted: int
    waiting: int
    more: int | None


def records_page(player: str | None, offset: int, limit: int) -> RecordsPage:
    """The records from ``offset``, ``limit`` of each list (most matches won first; pairs with most matches together
    first), or with ``player`` only that player's record and opponents (the name written any way ``same_player``
    allows, the player first in each pair): a list a phone can show, however many matches are kept."""
    found = records()
    players, pairs = found.players, found.pairs
    if player is not None:
        key = same_player(player)
        players = [record for record in players if same_player(record.name) == key]
        pairs = [pair.seen_by(player) for pair in pairs if pair.involves(player)]
    end = offset + limit
    return RecordsPage(
        players[offset:end],
        pairs[offset:end],
        len(players),
        len(pairs),
        found.counted,
        found.waiting,
        end if end < max(len(players), len(pairs)) else None,
    )


def fill_outlines() -> int:
    """Make and store the outline of each match the records count that has none for its revision (stored before okgin
    kept outlines, or changed by hand), newest first; returns how many were stored. Each match is rebuilt from its
    rounds, then the thread sleeps as long as that took, so the requests served meanwhile keep at least half of the
    interpreter (a club's year of matches: about 15 s of replays). An outline is stored only while its match is at the
    revision it was made of: a change meanwhile has stored its own.
    """
    stored = 0
    while True:
        with snapshot() as db:
            stale = db.execute(
                f"SELECT id, revision {_COUNTED} AND m.outline_revision IS NOT m.revision ORDER BY id DESC LIMIT ?",
                (FILL_BATCH,),
            ).fetchall()
        if not stale:
            return stored
        made: list[tuple[str | None, int, int, int]] = []
        for row in stale:
            began = time.perf_counter()
            try:
                record = _rebuilt(row["id"])
                made.append((_outline_json(record.match), record.revision, row["id"], record.revision))
            except NotFoundError:
                continue
            except ConflictError:  # left out of the records until a change, or another engine, makes it score
                made.append((_left_out_json(), row["revision"], row["id"], row["revision"]))
            time.sleep(time.perf_counter() - began)
        with transaction() as db:
            changed = db.executemany(
                "UPDATE matches SET outline_json = ?, outline_revision = ? WHERE id = ? AND revision = ?", made
            ).rowcount
        if not changed:  # every one changed meanwhile (storing its own) or is gone: the next records page looks again
            return stored
        stored += changed


def _start_filling(app: Flask) -> None:
    """Start ``fill_outlines`` in a thread of its own, unless one is at it."""
    with app.extensions.setdefault(_FILLER + "_lock", threading.Lock()):
        running = app.extensions.get(_FILLER)
        if running is not None and running.is_alive():
            return
        thread = threading.Thread(target=_fill_in_background, args=(app,), name="okgin-outlines", daemon=True)
        app.extensions[_FILLER] = thread
        thread.start()


def _fill_in_background(app: Flask) -> None:
    with app.app_context():
        try:
            fill_outlines()
        except (sqlite3.Error, DatabaseError) as error:  # the next records page tries again
            app.logger.warning("the players' records could not count every match yet: %s", database_problem(error))


def _outline_json(match: Match) -> str:
    return json.dumps(MatchOutline.of(match).to_dict(), separators=(",", ":"))


def _left_out_json() -> str:
    """What is stored for a match whose rounds no longer score: left out of the records by this engine only."""
    return json.dumps({"engine": scoring_engine(), "left_out": True}, separators=(",", ":"))


def read_outline(text: str | None) -> MatchOutline | None:
    """The outline stored (``outline_json``), or None for a match this engine left out (``_left_out_json``).

    :raises InvalidOutlineError: for none, or one another engine made or okgin never wrote: it is to be made again.
    """
    if text is None:
        raise InvalidOutlineError("no outline stored")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidOutlineError(f"the outline is not JSON: {error}") from error
    if isinstance(data, dict) and data.get("left_out") is True and data.get("engine") == scoring_engine():
        return None
    return MatchOutline.from_dict(data)


# --- internals


TURN_WAIT_TIMEOUTS = 3
"""How long a change waits for its turn (``_writer_turn``), in the database's busy timeouts: 15 s by default, as long
as the page waits for an answer, and longer than 32 writers of one long match take turns (``bench_writes.py``)."""


@contextlib.contextmanager
def _writer_turn(cache: MatchCache, match_id: int) -> Iterator[None]:
    """This process's turn to change ``match_id`` (``MatchCache.writer``), waited for ``TURN_WAIT_TIMEOUTS`` busy
    timeouts at most: while another program held the database, each writer waited out the busy timeout of every
    writer before it, holding a worker thread (16 writers of one match: 80 s, every other request queued). Past the
    writers with room to wait for a database held elsewhere (``web.db.LockWaits``), it is not waited for: the turn
    would only come to wait for the lock, and the wait took a worker thread from readers, who need no lock.

    :raises BusyError: when no turn comes in time, or there is no room to wait.
    """
    writer = cache.writer(match_id)
    timeout = busy_timeout()
    deadline = time.monotonic() + TURN_WAIT_TIMEOUTS * timeout
    with lock_waits().waiting(for_lock=False) as waiter:
        while not writer.acquire(timeout=timeout / 20):
            if give_up_waiting(waiter):
                raise BusyError(f"match {match_id} is busy: another program holds the database; try again")
            if time.monotonic() >= deadline:
                raise BusyError(
                    f"match {match_id} is busy: the changes before this one wait for the database; try again"
                )
    try:
        yield
    finally:
        writer.release()


def _write(match_id: int, change: Callable[[MatchRecord], Changed]) -> MatchRecord:
    """Compute ``change`` on the match as stored, outside the write lock, and commit it if the match is
    unchanged meanwhile; else compute again on the newer match (from the cache: the winner put it there).
    Writers in one process take turns (``MatchCache.writer``); the revision check guards against others. A change
    that changes nothing (``Changed``) answers the match as stored.

    :raises BusyError: when the match changed under every attempt, or no turn came (``_writer_turn``).
    """
    cache = _cache()
    with _writer_turn(cache, match_id):  # without turns, 16 writers at once starved one of them into a 503
        for attempt in range(WRITE_ATTEMPTS):
            shared = load_match(match_id)
            record = dataclasses.replace(shared, match=shared.match.copy())  # ``change`` may change its match
            match, deals, write, versions = change(record)
            if write is None:
                return shared
            outline = _outline_json(match)
            try:
                with cache.guard(match_id):  # readers that miss the cache wait for this write's entry
                    with transaction() as db:
                        current = db.execute("SELECT revision FROM matches WHERE id = ?", (match_id,)).fetchone()
                        if current is None or current["revision"] != record.revision:
                            raise _Stale
                        kept = write(db)
                        winner = match.winner
                        db.execute(
                            "UPDATE matches SET revision = revision + 1, winner = ?,"
                            " finished_at = CASE WHEN ? IS NULL THEN NULL ELSE COALESCE(finished_at, ?) END,"
                            " outline_json = ?, outline_revision = revision + 1 WHERE id = ?",
                            (winner, winner, _now(), outline, match_id),
                        )
                    earlier = record.earlier if versions is None else versions
                    earlier = earlier if kept is None else newest_kept((kept, *earlier))  # as keep_replaced left them
                    changed = dataclasses.replace(
                        record, revision=record.revision + 1, match=match, deals=deals, earlier=earlier
                    )
                    if versions is None:  # the same versions of the same players: each scores alone as it did
                        changed.carry_version_scores(shared)
                    cache.put(changed)  # after COMMIT: never a revision not stored
            except _Stale:
                # another process wrote meanwhile: back off a random, growing while before computing again
                time.sleep(random.uniform(0, STALE_BACKOFF_SECONDS * 2 ** min(attempt, 6)))
                continue
            return changed
    raise BusyError(f"match {match_id} kept changing while this change was saved; try again")


def _added(
    record: MatchRecord, entered: RoundInput, number: int | None, deal: int, revision: int | None = None
) -> Changed:
    """The next round scored and stored (``add_round``), as deal ``deal``; ``number``: the round the client believes
    it adds, ``revision``: the match it saw.

    :raises InputError: when the round cannot be scored.
    :raises ConflictError: for a number already taken or out of turn, a match changed since ``revision``, or a
        match already won.
    """
    match = record.match
    played = len(match.rounds)
    if number is not None and number <= played:  # said first: a round sent twice finds itself stored
        raise ConflictError(
            f"round {number} is already recorded",
            {"round": match.rounds[number - 1].to_dict(), "match": record.to_dict()},
        )
    record.check_revision(revision)
    if number is not None and number != played + 1:
        raise ConflictError(
            f"round {number} cannot be added: the match has {played} rounds, so the next is round {played + 1}",
            {"match": record.to_dict()},
        )
    if match.finished:
        raise ConflictError(
            f"the match is over ({match.winner} won); undo or edit a round instead", {"match": record.to_dict()}
        )
    try:
        new = match.record(entered)
    except SCORING_ERRORS as error:
        raise InputError(str(error)) from error
    except MatchError as error:  # it holds the most rounds a match takes: not a change of the sheet to look at
        raise InputError(str(error)) from error

    def write(db: sqlite3.Connection) -> None:
        db.execute(
            "INSERT INTO rounds (match_id, number, input_json, created_at, deal) VALUES (?, ?, ?, ?, ?)",
            (record.id, new.number, json.dumps(new.entered.to_dict()), _now(), deal),
        )

    return Changed(match, (*record.deals, deal), write)


def _edited(record: MatchRecord, number: int, entered: RoundInput) -> Changed:
    """Round ``number`` replaced and stored (``edit_round``), the same deal, and what it held kept; a round that held
    this already is left as it is, the revision too (a round saved unchanged in the Edit dialog raised it, and other
    devices' undos, sent at the revision before, were refused for a change that changed nothing).

    :raises NotFoundError: when the round does not exist.
    :raises InputError: when the round cannot be scored.
    :raises ConflictError: when the edit would end the match before rounds that come after it.
    """
    match = record.match
    if not 1 <= number <= len(match.rounds):
        raise NotFoundError(f"match {record.id} has no round {number} (it has {len(match.rounds)})")
    replaced = match.rounds[number - 1]
    try:
        edited = match.edit(number - 1, entered)
    except SCORING_ERRORS as error:
        raise InputError(f"round {number}: {error}") from error
    except MatchError as error:
        raise ConflictError(
            f"after this edit the match would end before its last round: {error}", {"match": record.to_dict()}
        ) from error
    if replaced.entered.to_dict() == edited.entered.to_dict():
        return Changed(match, record.deals, None)
    text = json.dumps(edited.entered.to_dict())

    def write(db: sqlite3.Connection) -> EarlierVersion | None:
        kept = keep_replaced(db, record.id, replaced, record.deals[number - 1], EDITED, _now())
        db.execute("UPDATE rounds SET input_json = ? WHERE match_id = ? AND number = ?", (text, record.id, number))
        return kept

    return Changed(match, record.deals, write)


def _preset_and_title(rules_json: str) -> tuple[str, str]:
    try:
        rules = Rules.from_dict(json.loads(rules_json))
    except (InvalidRulesError, json.JSONDecodeError):  # listed anyway; opening the match says why
        return "", "unknown rules"
    return rules.preset, rules.title


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
