"""The database: versioned schema that upgrades itself, durability settings, locked and unusable files."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import web_fixtures
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient
from web_fixtures import ROUND, new_match

from scorer.cli import main
from web import create_app, database_path_from_url
from web.db import (
    MAX_DATABASE_BYTES,
    DatabaseError,
    connect,
    get_db,
    init_db,
    make_private,
    migrate,
    migrations,
    schema_version,
    stored_bytes,
)
from web.security import NEW_MATCHES_PER_HOUR

app, client, detector = web_fixtures.app, web_fixtures.client, web_fixtures.detector
REMOTE = {"REMOTE_ADDR": "192.168.1.20"}
PLAYERS = {"players": ["Ann", "Bob"]}


@contextlib.contextmanager
def held_elsewhere(app: Flask, begin: str = "BEGIN EXCLUSIVE") -> Iterator[None]:
    """The app's database held by another program (the sqlite3 shell inside a transaction) for the block."""
    holder = sqlite3.connect(app.config["DATABASE"], isolation_level=None)
    holder.execute(begin)
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def run_all(threads: list[threading.Thread]) -> None:
    """Start every thread, then wait for every one."""
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_a_new_database_gets_the_newest_schema(app: Flask) -> None:
    connection = sqlite3.connect(app.config["DATABASE"])
    assert connection.execute("PRAGMA user_version").fetchone()[0] == schema_version() == len(migrations())
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"matches", "players", "rounds", "corrections"} <= tables


def test_every_connection_is_durable(tmp_path: Path) -> None:
    connection = connect(tmp_path / "probe.db")
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert connection.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL: a commit is on disk
    assert connection.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    connection.close()


def test_an_old_database_is_upgraded_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.executescript(migrations()[0].sql + "\nPRAGMA user_version = 1;")
    old.execute("INSERT INTO matches (id, created_at, rules_json, first_dealer) VALUES (7, 'then', '{}', 'Ann')")
    old.executemany("INSERT INTO players VALUES (7, ?, ?)", [(1, "Ann"), (2, "Bob")])
    old.commit()
    old.close()
    assert init_db(path) == schema_version()
    client = create_app({"DATA_DIR": str(tmp_path), "DATABASE": str(path)}).test_client()
    assert client.get("/api/matches/7").json["players"] == ["Ann", "Bob"]


def test_a_database_newer_than_the_code_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    sqlite3.connect(path).execute(f"PRAGMA user_version = {schema_version() + 1}").connection.close()
    with pytest.raises(DatabaseError, match="newer than this okgin understands"):
        migrate(connect(path))


def test_a_locked_database_answers_503_and_loses_nothing(tmp_path: Path) -> None:
    app = create_app({"DATA_DIR": str(tmp_path), "DATABASE_TIMEOUT": 0.05})
    client = app.test_client()
    match_id = new_match(client)
    with held_elsewhere(app):
        answer = client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
        assert (answer.status_code, answer.json) == (503, {"error": "database is locked, try again"})
    assert client.post(f"/api/matches/{match_id}/rounds", json=ROUND).status_code == 201
    assert client.get(f"/api/matches/{match_id}").json["totals"] == {"Ann": 18, "Bob": 0}


def test_writers_of_a_locked_database_wait_a_bounded_while(tmp_path: Path) -> None:
    """Writers of one match take turns: each waited out the busy timeout of every writer before it while another
    program held the database (12 writers: 12 timeouts for the last), holding a worker thread all that time."""
    timeout = 0.4
    app = create_app({"DATA_DIR": str(tmp_path), "DATABASE_TIMEOUT": timeout})
    match_id = new_match(app.test_client())
    answers: list[tuple[int, float]] = []

    def post() -> None:
        began = time.monotonic()
        answer = app.test_client().post(f"/api/matches/{match_id}/rounds", json=ROUND)
        answers.append((answer.status_code, time.monotonic() - began))

    with held_elsewhere(app):
        run_all([threading.Thread(target=post) for _ in range(12)])
    assert [status for status, _ in answers] == [503] * 12
    assert max(took for _, took in answers) < 8 * timeout  # a turn (three timeouts at most), then one: not twelve
    assert app.test_client().get(f"/api/matches/{match_id}").json["rounds"] == []


def test_an_unwritable_database_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(DatabaseError, match="cannot open the database"):
        create_app({"DATA_DIR": str(tmp_path), "DATABASE": str(blocker / "okgin.db")})


def test_a_database_made_writable_again_is_written_again(tmp_path: Path) -> None:
    """A connection opened while the database file was read-only (chmod 400 while the server ran) had SQLite make
    its -wal and -shm read-only, and keep them: with the file's mode put back, every write was still refused as
    "read-only", after a restart too."""
    database = tmp_path / "okgin.db"
    connect(database).close()
    beside = [database.with_name(database.name + suffix) for suffix in ("-wal", "-shm")]
    for path in beside:
        path.write_bytes(b"")
        path.chmod(0o400)
    database.chmod(0o400)
    make_private(database)  # the file is read-only still: so are they
    assert [path.stat().st_mode & 0o777 for path in beside] == [0o400, 0o400]
    database.chmod(0o600)
    make_private(database)
    assert [path.stat().st_mode & 0o777 for path in beside] == [0o600, 0o600]


def test_a_round_is_stored_once_the_database_file_is_writable_again(client: FlaskClient, app: Flask) -> None:
    match_id = new_match(client)
    database = Path(app.config["DATABASE"])
    if not _read_only_holds(database.parent):
        pytest.skip("this process writes into read-only files (root)")
    database.chmod(0o400)
    try:
        assert client.get(f"/api/matches/{match_id}").status_code == 200  # its -wal and -shm made read-only
        refused = client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
        assert refused.status_code == 503 and "read-only" in refused.json["error"]
    finally:
        database.chmod(0o600)
    assert client.post(f"/api/matches/{match_id}/rounds", json=ROUND).status_code == 201


def _read_only_holds(folder: Path) -> bool:
    """Whether a file made read-only refuses this process's writes (not for root, unless it gave up the capability)."""
    probe = folder / "read-only-probe"
    probe.write_bytes(b"")
    probe.chmod(0o400)
    try:
        os.close(os.open(probe, os.O_WRONLY))
    except PermissionError:
        return True
    finally:
        probe.unlink()
    return False


def test_a_full_disk_is_said_so_and_loses_nothing(client: FlaskClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite ends the transaction itself when the disk is full: the ROLLBACK after it failed ("no transaction is
    active") and that error was reported, a 503 "database error" instead of the disk being full."""
    import web.db

    match = new_match(client, options={"target": 10000})
    full = {"pages": 0}

    def connect_full(path: str | Path, timeout: float = 5.0, create: bool = True) -> sqlite3.Connection:
        connection = connect(path, timeout, create)
        if full["pages"]:
            connection.execute(f"PRAGMA max_page_count = {full['pages']}")  # the disk fills at this size
        return connection

    monkeypatch.setattr(web.db, "connect", connect_full)
    with contextlib.closing(sqlite3.connect(client.application.config["DATABASE"])) as probe:
        full["pages"] = probe.execute("PRAGMA page_count").fetchone()[0]
    stored = 0
    for _ in range(200):
        answer = client.post(f"/api/matches/{match}/rounds", json={**ROUND, "number": stored + 1})
        if answer.status_code != 201:
            break
        stored += 1
    assert answer.status_code == 503
    assert answer.json["error"].startswith("the disk holding the database is full"), answer.json
    full["pages"] = 0
    assert len(client.get(f"/api/matches/{match}").json["rounds"]) == stored


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(DatabaseError, match=r"junk\.db"):
        create_app({"DATA_DIR": str(tmp_path), "DATABASE": str(junk)})


def test_the_database_url_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "from-env.db"
    monkeypatch.setenv("OKGIN_DATABASE_URL", f"sqlite:///{target}")
    assert create_app({"DATA_DIR": str(tmp_path / "data")}).config["DATABASE"] == str(target)
    assert target.exists()
    with pytest.raises(ValueError, match="sqlite:///"):
        database_path_from_url("postgres://db/okgin")


def test_init_db_command_creates_and_reports(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["init-db", "--db", str(tmp_path / "x.db"), "--data-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert f"schema version {schema_version()}" in result.output


def test_init_db_command_reports_an_unusable_path_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    result = CliRunner().invoke(main, ["init-db", "--db", str(tmp_path / "f" / "x.db")])
    assert result.exit_code == 2
    assert "cannot open the database" in result.output and "Traceback" not in result.output


def test_a_round_is_one_transaction(client: FlaskClient, app: Flask) -> None:
    match_id = new_match(client, options={"target": 10})
    client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    row = sqlite3.connect(app.config["DATABASE"]).execute("SELECT winner FROM matches WHERE id = ?", (match_id,))
    assert row.fetchone()[0] == "Ann"  # the round and the match's winner were written together


def test_another_programs_database_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    """init-db added okgin's tables to a photo catalogue's SQLite file and turned its journal to WAL."""
    foreign = tmp_path / "photos.db"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE photos (path TEXT)")
    before = foreign.read_bytes()
    result = CliRunner().invoke(main, ["init-db", "--db", str(foreign), "--data-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert (
        result.stderr.strip()
        == f"okgin: {foreign} is another program's database (its tables: photos): name another file"
    )
    assert foreign.read_bytes() == before and not foreign.with_name("photos.db-wal").exists()
    text = tmp_path / "notes.db"
    text.write_text("not a database")
    with pytest.raises(DatabaseError, match="file is not a database"):
        init_db(text)


def test_an_empty_database_name_is_not_the_default_database(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["init-db", "--db", "", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2 and "the database file named is empty" in result.stderr
    assert not list(tmp_path.iterdir())


def test_the_match_cache_holds_a_budget_of_rounds_not_only_a_count_of_matches() -> None:
    """A match file may hold 5,000 rounds, about 20 MB rebuilt: 32 such matches cached by count took hundreds of MB
    (a scale probe: six took a server from 73 to 515 MB). The cache now keeps rounds within a budget, the match last
    used always kept (else each of its pages would replay it)."""
    from web.matches import ByRevision

    kept: ByRevision[str] = ByRevision(size=32, budget=10, weight=len)
    kept.put(1, 1, "aaaa")
    kept.put(2, 1, "bbbb")
    assert kept.get(1, 1) == "aaaa"  # used: now the newest
    kept.put(3, 1, "cccc")  # 12 > 10: the least recently used goes
    assert (kept.get(1, 1), kept.get(2, 1), kept.get(3, 1)) == ("aaaa", None, "cccc")
    kept.put(3, 2, "c" * 50)  # one match over the whole budget is kept, alone
    assert (kept.get(1, 1), kept.get(3, 2)) == (None, "c" * 50)
    kept.put(4, 1, "dd")
    assert (kept.get(3, 2), kept.get(4, 1)) == (None, "dd")


def test_writers_of_a_database_held_elsewhere_give_back_their_threads(tmp_path: Path) -> None:
    """While another program held the database, 24 writers at once (of one match, and new matches) each waited out
    a busy timeout or more, holding every worker thread: readers, who need no lock, waited 15 s for one. Once the
    first has waited a fifth of the timeout, the writers past the first ``WRITE_WAITERS`` give their threads back."""
    timeout = 1.0
    app = create_app({"DATA_DIR": str(tmp_path), "DATABASE_TIMEOUT": timeout})
    match_id = new_match(app.test_client())
    took: list[float] = []
    statuses: list[int] = []

    def write(path: str, body: dict[str, object]) -> None:
        began = time.monotonic()
        statuses.append(app.test_client().post(path, json=body).status_code)
        took.append(time.monotonic() - began)

    rounds = [(f"/api/matches/{match_id}/rounds", ROUND)] * 8
    matches = [("/api/matches", {"players": ["Ann", "Bob"]})] * 4
    with held_elsewhere(app, "BEGIN IMMEDIATE"):
        run_all([threading.Thread(target=write, args=writer) for writer in [*rounds, *matches]])
    assert statuses == [503] * 12
    given_back = sorted(took)[: len(took) - app.config["WRITE_WAITERS"]]
    assert max(given_back) < 0.6 * timeout  # each waited a timeout or more; now a fifth of it and a slice
    assert [match["id"] for match in app.test_client().get("/api/matches").json["matches"]] == [match_id]


def new_matches_from_the_lan(client: FlaskClient, count: int) -> list[int]:
    """The statuses of ``count`` new matches asked for by one machine on the LAN (whose matches are counted)."""
    return [client.post("/api/matches", json=PLAYERS, environ_base=REMOTE).status_code for _ in range(count)]


def test_a_match_the_database_did_not_store_uses_none_of_the_hours_matches(tmp_path: Path) -> None:
    """A new match was counted against the hour's before its write: each one answered 503 while another program held
    the database used up one of the 30, though nothing was stored."""
    app = create_app({"DATA_DIR": str(tmp_path), "DATABASE_TIMEOUT": 0.05})
    client = app.test_client()
    exported = client.get(f"/matches/{new_match(client)}/export.json").json  # this machine's: not counted
    with held_elsewhere(app):
        assert new_matches_from_the_lan(client, 3) == [503] * 3
        assert client.post("/api/matches/import", json=exported, environ_base=REMOTE).status_code == 503
    assert new_matches_from_the_lan(client, NEW_MATCHES_PER_HOUR + 1) == [201] * NEW_MATCHES_PER_HOUR + [429]


def test_new_matches_at_once_never_pass_the_hours(app: Flask) -> None:
    """Places are taken under one lock and given back only by a write that failed: 40 asked at once store 30."""
    answers: list[int] = []

    def ask() -> None:
        answers.extend(new_matches_from_the_lan(app.test_client(), 1))

    run_all([threading.Thread(target=ask) for _ in range(40)])
    assert sorted(answers) == [201] * NEW_MATCHES_PER_HOUR + [429] * (40 - NEW_MATCHES_PER_HOUR)
    assert len(app.test_client().get("/api/matches").json["matches"]) == NEW_MATCHES_PER_HOUR


def test_a_post_sent_many_times_at_once_uses_one_of_the_hours_matches(app: Flask) -> None:
    """Posts sent at once with one key each store a match, and all but the first are rolled back (``web.once``): each
    had used up one of the hour's 30, so 16 at once (a double tap, a retry) left the machine 14."""
    made: list[int] = []
    key = {"Idempotency-Key": "sent-at-once-1234"}

    def post() -> None:
        made.append(app.test_client().post("/api/matches", json=PLAYERS, headers=key, environ_base=REMOTE).json["id"])

    run_all([threading.Thread(target=post) for _ in range(16)])
    assert made == [made[0]] * 16
    more = new_matches_from_the_lan(app.test_client(), NEW_MATCHES_PER_HOUR)
    assert more == [201] * (NEW_MATCHES_PER_HOUR - 1) + [429]


def test_past_its_bound_the_database_takes_no_new_match_but_every_round_of_one_begun(tmp_path: Path) -> None:
    """Nothing bounded what the database held: one machine could store some 300 MB a day opening long match files, and
    many more. Past ``MAX_DATABASE_BYTES`` a new match is refused (507), never a round of a match begun, and a refused
    match uses none of the hour's."""
    app = create_app({"DATA_DIR": str(tmp_path)})
    client = app.test_client()
    match_id, won = new_match(client, options={"target": 10000}), new_match(client, options={"target": 10})
    assert client.post(f"/api/matches/{won}/rounds", json=ROUND).json["match"]["finished"]
    exported = client.get(f"/matches/{match_id}/export.json").json
    with app.app_context():
        app.config["MAX_DATABASE_BYTES"] = held = stored_bytes(get_db())
    size = f"{round(held / 1024**2, 1):g}"
    for refused in (
        client.post("/api/matches", json=PLAYERS, environ_base=REMOTE),
        client.post("/api/matches/import", json=exported, environ_base=REMOTE),
        client.post("/api/matches", json=PLAYERS),
        client.post(f"/api/matches/{won}/rematch", json={}),
    ):
        assert (refused.status_code, refused.json["error"]) == (
            507,
            f"the database holds {size} MB, the most this server keeps ({size} MB): no new match is stored, while"
            " rounds of the matches begun still are. Start okgin serve with a larger --max-database-mb, or with"
            " another database (--db) for new matches",
        )
    for number in (1, 2, 3):
        assert client.post(f"/api/matches/{match_id}/rounds", json={**ROUND, "number": number}).status_code == 201
    app.config["MAX_DATABASE_BYTES"] = MAX_DATABASE_BYTES
    assert new_matches_from_the_lan(client, NEW_MATCHES_PER_HOUR + 1) == [201] * NEW_MATCHES_PER_HOUR + [429]


def test_the_bound_counts_what_rows_take_not_pages_freed(tmp_path: Path) -> None:
    """Pages freed by deleted rows are filled before the file grows: they hold nothing, so they count for nothing."""
    with contextlib.closing(connect(tmp_path / "x.db")) as database:
        database.execute("CREATE TABLE kept (data TEXT)")
        empty = stored_bytes(database)
        database.execute("INSERT INTO kept VALUES (?)", ("QH" * 100_000,))
        assert stored_bytes(database) > empty + 190_000  # the 200 KB row, in pages
        database.execute("DELETE FROM kept")
        assert stored_bytes(database) == empty


def test_serve_bounds_the_database_as_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import web.server

    served: list[Flask] = []

    class NotServing:
        def run(self) -> None:
            """Serve nothing: the test reads the app ``serve`` built."""

    def build_server(app: Flask, *_: object) -> NotServing:
        served.append(app)
        return NotServing()

    monkeypatch.setattr(web.server, "build_server", build_server)
    for asked, bound in ((["--max-database-mb", "64"], 64 * 1024**2), ([], MAX_DATABASE_BYTES)):
        result = CliRunner().invoke(main, ["serve", "--port", "8710", "--data-dir", str(tmp_path), *asked])
        assert result.exit_code == 0, result.output
        assert served.pop().config["MAX_DATABASE_BYTES"] == bound
