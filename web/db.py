"""SQLite storage: one connection per request, a versioned schema that upgrades itself.

The schema version lives in ``PRAGMA user_version``; ``migrations/NNNN_name.sql`` files are applied in
order, each in its own transaction, so a database from any older release is brought up to date on start.
WAL journaling with ``synchronous=FULL`` makes a committed round survive the server being killed.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from flask import Flask, current_app, g

from scorer.errors import OkginError

BUSY_TIMEOUT_SECONDS = 5.0
_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")

MAX_DATABASE_BYTES = 500 * 1024**2
"""The most the database holds before new matches are refused (``web.matches``; ``MAX_DATABASE_BYTES`` in the app
config, ``okgin serve --max-database-mb``): some 500,000 matches begun, or 300 of the longest match files (1,000 rounds
and 1,000 earlier versions of four players named in 40 characters, every lay-down given: 820 bytes an entry, 1.6 MB).
A machine let in may open 30 files an hour (``web.security.NEW_MATCHES_PER_HOUR``), and many machines more: nothing
else bounded what they stored short of a full disk."""


class DatabaseError(OkginError, RuntimeError):
    """The database cannot be opened or written: a message a person can act on, and ``problem``, what a client is
    told (``database_problem``: no path or SQL)."""

    def __init__(self, message: str, problem: str | None = None) -> None:
        super().__init__(message)
        self.problem = problem


MISSING = "the database file is missing (moved or deleted while the server ran): put it back, or restart okgin serve"
_PROBLEMS = (
    ("readonly", "the database cannot be written: its file or folder is read-only"),
    ("no such table", "the database file has lost its tables (replaced while the server ran): restart okgin serve"),
    ("malformed", "the database file is damaged"),
    ("not a database", "the database file is not an okgin database, or is damaged"),
    ("full", "the disk holding the database is full"),
    ("disk i/o", "the database cannot be read or written (a disk error)"),
    ("unable to open", "the database file cannot be opened (a missing folder, or its permissions)"),
)


def database_problem(error: BaseException) -> str:
    """What went wrong with the database, in words a client may be shown (no path, no SQL): for an error that
    ``DatabaseError`` wraps, or an ``sqlite3.Error`` met in a request.

    >>> database_problem(sqlite3.OperationalError("attempt to write a readonly database"))
    'the database cannot be written: its file or folder is read-only'
    >>> database_problem(sqlite3.OperationalError("something new"))
    'database error'
    """
    if isinstance(error, DatabaseError):
        if error.problem:
            return error.problem
        error = error.__cause__ or error
    text = str(error).lower()
    if isinstance(error, PermissionError):
        return "the database cannot be opened: permission denied"
    return next((problem for key, problem in _PROBLEMS if key in text), "database error")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def migrations() -> list[Migration]:
    """The shipped migrations in version order; versions must run 1, 2, 3 ... without gaps.

    >>> [m.version for m in migrations()][:2]
    [1, 2]
    """
    found = []
    for entry in resources.files("web").joinpath("migrations").iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), entry.name, entry.read_text(encoding="utf-8")))
    found.sort(key=lambda migration: migration.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise DatabaseError(f"migrations are not numbered 1..{len(found)}: {[m.name for m in found]}")
    return found


def schema_version() -> int:
    """The schema version this code writes (the newest migration)."""
    return len(migrations())


def make_private(database: Path) -> None:
    """Create the database file readable by its owner only (SQLite gives its -wal and -shm files the same
    mode), and tighten a file an older okgin left readable by others.

    A -wal or -shm that its owner cannot write beside a database file that its owner can is made writable again:
    SQLite made them read-only, as the database file was when a connection opened it (made read-only while the
    server ran), and kept them; with the file's mode put back, every write was still refused as "read-only", after
    a restart too, until someone deleted the -shm by hand.

    :raises OSError: when the file or its folder cannot be created.
    """
    database.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        writable = True
        for existing in (
            database,
            database.with_name(database.name + "-wal"),
            database.with_name(database.name + "-shm"),
        ):
            try:
                mode = existing.stat().st_mode
                if not stat.S_ISREG(mode):
                    continue
                if existing == database:
                    writable = bool(mode & stat.S_IWUSR)
                if mode & 0o077 or (writable and not mode & stat.S_IWUSR):
                    existing.chmod(0o600)
            except FileNotFoundError:  # absent, or a -wal/-shm that SQLite removed as another connection closed
                continue


def connect(path: str | Path, timeout: float = BUSY_TIMEOUT_SECONDS, create: bool = True) -> sqlite3.Connection:
    """Open the database with the durability settings every connection needs; without ``create``, only a
    database file that is there (a request's connection: a file deleted under a running server must not come
    back empty, its matches silently gone).

    :raises DatabaseError: when the file or its folder cannot be created or opened, or is missing.
    """
    database = Path(path)
    if not create and not database.exists():
        raise DatabaseError(f"the database {database} is missing", MISSING)
    try:
        make_private(database)
        connection = sqlite3.connect(database, timeout=timeout, isolation_level=None, check_same_thread=False)
        connection.row_factory = sqlite3.Row
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute("PRAGMA foreign_keys=ON")
    except (OSError, sqlite3.Error) as error:
        raise DatabaseError(f"cannot open the database {database}: {error}") from error
    return connection


def migrate(connection: sqlite3.Connection) -> int:
    """Apply every migration newer than the database's ``user_version``; return the final version.

    :raises DatabaseError: when the database is newer than this code, or cannot be written.
    """
    target = migrations()
    try:
        current = connection.execute("PRAGMA user_version").fetchone()[0]
        if current > len(target):
            raise DatabaseError(
                f"the database has schema version {current}, newer than this okgin understands ({len(target)}); "
                "upgrade okgin"
            )
        for migration in target[current:]:
            # executescript commits first, so the version bump and the DDL run in one explicit transaction.
            connection.executescript(
                f"BEGIN IMMEDIATE;\n{migration.sql}\nPRAGMA user_version = {migration.version};\nCOMMIT;"
            )
        version: int = connection.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.Error as error:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise DatabaseError(f"cannot set up the database schema: {error}") from error
    return version


def init_db(path: str | Path | None = None) -> int:
    """Create or upgrade the database (the app's, or the one at ``path``); return its schema version.

    :raises DatabaseError: for a file that is not okgin's, before anything is written to it.
    """
    database = Path(path if path is not None else current_app.config["DATABASE"])
    refuse_foreign_database(database)
    connection = connect(database)
    try:
        return migrate(connection)
    finally:
        connection.close()


def refuse_foreign_database(database: Path) -> None:
    """Refuse a file that is not an okgin database (another program's SQLite file, or no SQLite file at all),
    read without writing to it: okgin would add its tables and turn its journal to WAL.

    :raises DatabaseError: naming the file and what it holds.
    """
    if not database.is_file() or database.stat().st_size == 0:
        return
    try:
        with contextlib.closing(sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)) as reading:
            tables = [row[0] for row in reading.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    except sqlite3.Error as error:
        raise DatabaseError(f"cannot use {database} as okgin's database: {error}", database_problem(error)) from None
    own = [name for name in tables if not name.startswith("sqlite_")]
    if own and "matches" not in own:
        listed = ", ".join(own[:5]) + (", ..." if len(own) > 5 else "")
        raise DatabaseError(f"{database} is another program's database (its tables: {listed}): name another file")


def get_db() -> sqlite3.Connection:
    """This request's connection, opened on first use and closed on teardown. Its busy timeout is a slice of
    ``busy_timeout()``: a writer waits for the lock slice by slice (``_begin_immediate``), and in WAL mode a reader
    never waits for a writer."""
    if "db" not in g:
        g.db = connect(current_app.config["DATABASE"], _lock_wait_slice(busy_timeout()), create=False)
    connection: sqlite3.Connection = g.db
    return connection


def close_db(_error: BaseException | None = None) -> None:
    connection = g.pop("db", None)
    if connection is not None:
        connection.close()


def init_app(app: Flask) -> None:
    """Register teardown and bring the database schema up to date before the first request."""
    app.teardown_appcontext(close_db)
    app.extensions["okgin_lock_waits"] = LockWaits()
    init_db(app.config["DATABASE"])


class LockWaits:
    """The writers waiting for the database, in the order they came: for their turn at a match, or for the write lock.

    okgin holds the write lock for a few statements. While another program holds it (the sqlite3 shell inside a
    transaction, a backup, a second server), every writer waited out the busy timeout or more, each holding a worker
    thread: 24 writers at once took all 16, and every reader, who needs no lock, waited 15 s for one. So once a writer
    has waited a fifth of the busy timeout (1 s) for the lock itself, the lock is held elsewhere: the first ``room``
    waiting writers wait on, to take it when it comes free, and any later one gives up, giving its thread back. A turn
    waited for long says nothing of the sort: 16 writers of a long match take turns for seconds.

    >>> clock = [0.0]
    >>> waits = LockWaits(clock=lambda: clock[0])
    >>> with waits.waiting(for_lock=False) as first, waits.waiting(for_lock=False) as second:
    ...     with waits.waiting(for_lock=False) as third:
    ...         clock[0] = 60.0
    ...         waits.give_up(third, busy_timeout=5.0, room=2)
    ...     with waits.waiting(for_lock=True) as holder:
    ...         clock[0] = 62.0
    ...         [waits.give_up(waiter, busy_timeout=5.0, room=2) for waiter in (first, second, holder)]
    False
    [False, False, True]
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock_since: dict[object, float | None] = {}  # in the order they came; None: waiting for a turn
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def waiting(self, for_lock: bool) -> Iterator[object]:
        """Count the caller as waiting while in the block (``for_lock``: for the write lock, else for its turn);
        yields who it is, for ``give_up``."""
        waiter = object()
        with self._lock:
            self._lock_since[waiter] = self._clock() if for_lock else None
        try:
            yield waiter
        finally:
            with self._lock:
                del self._lock_since[waiter]

    def give_up(self, waiter: object, busy_timeout: float, room: int) -> bool:
        """Whether ``waiter`` should stop waiting: a writer has waited longer than a fifth of ``busy_timeout`` for the
        lock, and ``room`` writers came before ``waiter``."""
        now = self._clock()
        with self._lock:
            held = any(since is not None and now - since > busy_timeout / 5 for since in self._lock_since.values())
            before = sum(1 for _ in itertools.takewhile(lambda other: other is not waiter, self._lock_since))
            return held and before >= room


def lock_waits() -> LockWaits:
    """The app's ``LockWaits``."""
    waits: LockWaits = current_app.extensions["okgin_lock_waits"]
    return waits


def give_up_waiting(waiter: object) -> bool:
    """Whether a writer waiting for the database should give up (``LockWaits.give_up``): the app lets
    ``WRITE_WAITERS`` writers wait for a database held elsewhere (a quarter of ``okgin serve --threads``)."""
    return lock_waits().give_up(waiter, busy_timeout(), current_app.config["WRITE_WAITERS"])


def busy_timeout() -> float:
    """How long a writer waits for the write lock, in seconds (``DATABASE_TIMEOUT``, else ``BUSY_TIMEOUT_SECONDS``)."""
    return float(current_app.config.get("DATABASE_TIMEOUT", BUSY_TIMEOUT_SECONDS))


def is_locked(error: sqlite3.Error) -> bool:
    """Whether an error means another writer holds the database (worth retrying), not corruption."""
    text = str(error).lower()
    return "locked" in text or "busy" in text


def stored_bytes(connection: sqlite3.Connection) -> int:
    """What the database's rows take, in bytes: its pages (the WAL's newer ones counted) less the free ones, which
    SQLite fills before the file grows. Three pragmas read from the open database, not a walk of its files."""
    page_size, pages, free = (
        connection.execute(f"PRAGMA {pragma}").fetchone()[0] for pragma in ("page_size", "page_count", "freelist_count")
    )
    return int((pages - free) * page_size)


def rows(query: str, *params: Any) -> list[sqlite3.Row]:
    """Run a read query on this request's connection."""
    return get_db().execute(query, params).fetchall()


@contextlib.contextmanager
def snapshot() -> Iterator[sqlite3.Connection]:
    """One read transaction on this request's connection: every query in it sees the same committed state.

    (Outside one, each statement sees the newest commit, so a row and its children could disagree.)
    """
    connection = get_db()
    if connection.in_transaction:  # already inside a transaction, which is a snapshot already
        yield connection
        return
    connection.execute("BEGIN")
    try:
        yield connection
    finally:
        if connection.in_transaction:
            connection.execute("COMMIT")  # nothing was written: this only ends the read


@contextlib.contextmanager
def transaction() -> Iterator[sqlite3.Connection]:
    """One write transaction on this request's connection: everything in it commits together or not at all.

    ``BEGIN IMMEDIATE`` takes the write lock up front, so two requests never both read "round 3 is next"
    and then both insert it.
    """
    connection = get_db()
    _begin_immediate(connection)
    try:
        yield connection
        connection.execute("COMMIT")
    except BaseException:
        # SQLite ends the transaction itself on some errors (a full disk, an I/O error): a ROLLBACK then fails with
        # "no transaction is active", and that error replaced the one to report ("database error", not "disk full")
        if connection.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
        raise


def _lock_wait_slice(timeout: float) -> float:
    """How long a request's connection waits for the write lock at a time: a twentieth of the busy timeout, 1 ms at
    least (SQLite counts whole milliseconds).

    >>> _lock_wait_slice(5.0), _lock_wait_slice(0.0)
    (0.25, 0.001)
    """
    return max(0.001, timeout / 20)


def _begin_immediate(connection: sqlite3.Connection) -> None:
    """``BEGIN IMMEDIATE``, waiting up to the busy timeout for the write lock, in slices (the request connection's own
    busy timeout, ``get_db``): between them, a writer with no room to wait for a database held elsewhere
    (``LockWaits``) gives up.

    :raises sqlite3.OperationalError: "database is locked" when the lock did not come, or there is no room to wait.
    """
    deadline = time.monotonic() + busy_timeout()
    with lock_waits().waiting(for_lock=True) as waiter:
        while True:
            try:
                connection.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as error:
                if not is_locked(error) or time.monotonic() >= deadline or give_up_waiting(waiter):
                    raise
