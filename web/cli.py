"""``okgin serve`` and ``okgin init-db``: the table companion's web server and its database.

Both plain HTTP and ``--https`` are served by ``web.server`` (waitress, with TLS on its event loop and
limits on connections, idle time and handshakes); HTTPS is the only way a phone on the LAN gets camera
access. User errors (a busy port, a host that is no address, an unusable database) are one line and
exit status 2, like every okgin command.
"""

from __future__ import annotations

import json
import ssl
import sys
from pathlib import Path
from typing import Any

import click

from scorer.cli import UserError
from web.db import MAX_DATABASE_BYTES
from web.server import ServerLimits

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
MIN_PIN_LENGTH = 4


def _data_dir(data_dir: str | None) -> Path:
    from web import default_data_dir

    return Path(data_dir) if data_dir else default_data_dir()


def _players_layout(value: str | None) -> tuple[int, dict[str, Any] | None]:
    """``--players-layout``: a player count (2-4, default zones) or a JSON file of seat zones."""
    if value is None:
        return 2, None
    if value.isdigit():
        players = int(value)
        if not 2 <= players <= 4:
            raise click.BadParameter(f"a table seats 2 to 4 players, not {players}", param_hint="--players-layout")
        return players, None
    path = Path(value)
    try:
        layout = json.loads(path.read_text(encoding="utf-8"))
        from scorer.vision.layout import TableLayout

        seats = len(TableLayout.from_dict(layout).seats)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise click.BadParameter(f"cannot read the layout {path}: {error}", param_hint="--players-layout") from error
    return seats, layout


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: the LAN).")
@click.option("--port", default=5000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--db", "database", type=click.Path(dir_okay=False), help="SQLite file (default: in the data dir).")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False),
    help="Where the secret key, TLS certificate, corrections and (without --db) the database live (default: the "
    "user's data directory).",
)
@click.option("--camera", help="A camera on this machine: index (0) or a video URL/file, read by the server.")
@click.option("--https", "use_https", is_flag=True, help="Serve HTTPS with a self-signed certificate.")
@click.option("--pin", help="PIN asked of other machines (requests from this machine never need it).")
@click.option(
    "--model",
    "model_dir",
    type=click.Path(file_okay=False),
    help="Model directory with manifest.json (default: $OKGIN_MODEL_DIR, else the checkout's models/).",
)
@click.option("--players-layout", help="Seats for the camera: a player count 2-4 or a JSON layout file.")
@click.option(
    "--allow-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="Another name clients reach this server by (localhost, --host and this machine's names always work).",
)
@click.option(
    "--threads",
    default=ServerLimits.threads,
    show_default=True,
    type=click.IntRange(4, 64),
    help=(
        "Request threads; a quarter may serve camera streams, a quarter wait for the detector, "
        "a quarter wait for a database another program holds."
    ),
)
@click.option(
    "--max-database-mb",
    default=MAX_DATABASE_BYTES // 1024**2,
    show_default=True,
    type=click.IntRange(1),
    help="The most the database holds: past it, new matches are refused (rounds of matches begun are still stored).",
)
def serve(
    host: str,
    port: int,
    database: str | None,
    data_dir: str | None,
    camera: str | None,
    use_https: bool,
    pin: str | None,
    model_dir: str | None,
    players_layout: str | None,
    allowed_hosts: tuple[str, ...],
    threads: int,
    max_database_mb: int,
) -> None:
    """Serve the score sheet, the live table and the JSON API."""
    from web import create_app, database_location
    from web.server import build_server, check_host

    if pin is not None and len(pin) < MIN_PIN_LENGTH:
        raise click.BadParameter(f"use at least {MIN_PIN_LENGTH} characters", param_hint="--pin")
    players, layout = _players_layout(players_layout)
    check_host(host, port)
    directory = _data_dir(data_dir)
    try:
        location = database_location(directory, database)
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # made here first: its key, certificate, corrections
        tls = _tls_context(directory, host) if use_https else None
        app = create_app(
            {
                "DATA_DIR": str(directory),
                "DATABASE": str(location),
                "PIN": pin,
                "MODEL_DIR": model_dir,
                "LAYOUT": layout,
                "ALLOWED_HOSTS": [host, *allowed_hosts],
                "SESSION_COOKIE_SECURE": use_https,
                "STREAM_LIMIT": max(1, threads // 4),
                "DETECT_QUEUE": max(1, threads // 4),
                "WRITE_WAITERS": max(1, threads // 4),
                "MAX_DATABASE_BYTES": max_database_mb * 1024**2,
            }
        )
    except OSError as error:
        raise UserError(f"cannot use the data directory {directory}: {error.strerror or error}") from error
    server = build_server(app, host, port, ServerLimits(threads=threads), tls)  # binds: a busy port stops us here
    if host not in LOOPBACK_HOSTS and not pin:
        click.echo(f"warning: listening on {host} without --pin: anyone on this network can change scores", err=True)
    if camera is not None:
        from web.live import attach_camera

        attach_camera(app, camera, players)
    scheme = "https" if use_https else "http"
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"okgin serving on {scheme}://{shown}:{port}/  (database {location}; Ctrl+C stops)")
    sys.stdout.flush()
    server.run()


def _tls_context(directory: Path, host: str) -> ssl.SSLContext:
    from web.server import tls_context
    from web.tls import ensure_certificate

    cert, key = ensure_certificate(directory / "tls", [host] if host not in ("0.0.0.0", "::") else None)
    click.echo(f"certificate: {cert} (self-signed: accept it once in each browser)")
    return tls_context(cert, key)


@click.command("init-db")
@click.option("--db", "database", type=click.Path(dir_okay=False), help="SQLite file (default: in the data dir).")
@click.option("--data-dir", type=click.Path(file_okay=False), help="The data directory (default: the user's).")
def init_db(database: str | None, data_dir: str | None) -> None:
    """Create the database, or upgrade its schema to this version of okgin."""
    from web import database_location
    from web.db import init_db as initialise

    location = database_location(_data_dir(data_dir), database)
    version = initialise(location)  # a DatabaseError is a user error: one line, exit 2
    click.echo(f"database ready: {location} (schema version {version})")
