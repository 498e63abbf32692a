"""okgin's table companion in the browser: a Flask app built by ``create_app``.

Blueprints: ``sheet`` (set-up, history, score sheet, exports), ``live`` (table page, camera frames),
``correct`` (corrections saved as training data), ``api`` (JSON API), ``security`` (PIN page).
The app never imports torch or ultralytics itself: the detector is built on the first detection
request, or passed in ``test_config["DETECTOR"]``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from flask import Flask, Response
from werkzeug.routing import IntegerConverter

MAX_UPLOAD_BYTES = 10 * 1024 * 1024
DATABASE_URL_ENV = "OKGIN_DATABASE_URL"
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data: blob:; media-src 'self' blob: mediastream:; "
    "style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; form-action 'self'"
)


class AsciiIntegerConverter(IntegerConverter):
    """The ``<int:...>`` of every route: ASCII digits only. Werkzeug's ``\\d+`` takes any script's digits, so
    ``/api/matches/١`` (an Arabic-Indic one) served match 1 at a second address."""

    regex = "[0-9]+"


def default_data_dir() -> Path:
    """Where okgin keeps its database, secret key and corrections: the user's data directory."""
    import platformdirs

    return Path(platformdirs.user_data_dir("okgin"))


def database_path_from_url(url: str) -> Path:
    """The file named by a ``sqlite:///relative.db`` or ``sqlite:////absolute.db`` URL.

    >>> database_path_from_url("sqlite:////tmp/okgin.db").as_posix()
    '/tmp/okgin.db'
    >>> database_path_from_url("sqlite:///okgin.db").as_posix()
    'okgin.db'

    :raises DatabaseError: for another scheme or an empty path.
    """
    from web.db import DatabaseError

    parsed = urlparse(url)
    if parsed.scheme != "sqlite" or parsed.netloc or not parsed.path.startswith("/") or len(parsed.path) < 2:
        raise DatabaseError(f"{DATABASE_URL_ENV} must look like sqlite:///path/to/okgin.db, got {url!r}")
    return Path(unquote(parsed.path[1:]))


def database_location(data_dir: Path, database: str | Path | None = None) -> Path:
    """The database file: ``database`` if given, else ``$OKGIN_DATABASE_URL``, else ``<data dir>/okgin.sqlite3``.

    :raises DatabaseError: for a malformed ``OKGIN_DATABASE_URL``, or a ``database`` given empty (an unset
        variable, which must not quietly mean the default database).
    """
    if database is not None and not str(database).strip():
        from web.db import DatabaseError

        raise DatabaseError("the database file named is empty: give a file name, or leave --db out for the default")
    if database:
        return Path(database)
    url = os.environ.get(DATABASE_URL_ENV)
    return database_path_from_url(url) if url else data_dir / "okgin.sqlite3"


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Build an isolated app. ``test_config`` overrides any setting (``DATABASE``, ``DATA_DIR``, ``DETECTOR`` ...).

    :raises web.db.DatabaseError: when the database cannot be created or upgraded.
    """
    from web import api, correct, db, detection, errors, live, once, security, sheet
    from web.request_json import DepthLimitedJSONProvider

    app = Flask(__name__)
    app.url_map.converters["int"] = AsciiIntegerConverter  # before any route is added: each reads it then
    app.json = DepthLimitedJSONProvider(app)  # every JSON body is parsed with a depth limit
    overrides = dict(test_config or {})
    data_dir = Path(overrides.get("DATA_DIR") or default_data_dir())
    app.config.from_mapping(
        DATA_DIR=str(data_dir),
        DATABASE=str(database_location(data_dir, overrides.get("DATABASE"))),
        CORRECTIONS_DIR=str(data_dir / "corrections"),
        MAX_CONTENT_LENGTH=MAX_UPLOAD_BYTES,
        MAX_FORM_MEMORY_SIZE=MAX_UPLOAD_BYTES,
        DETECT_QUEUE=16,
        STREAM_LIMIT=4,
        WRITE_WAITERS=4,
        DETECTOR=None,
        MODEL_DIR=None,
        LAYOUT=None,
        PIN=None,
        SESSION_COOKIE_SAMESITE="Strict",
        SESSION_COOKIE_HTTPONLY=True,
        JSON_SORT_KEYS=False,
    )
    app.config.update(overrides)
    app.debug = False  # never the Werkzeug debugger: it executes code for whoever can reach the page
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = security.load_or_create_secret_key(data_dir)
    app.json.sort_keys = False  # type: ignore[attr-defined]

    errors.register_error_handlers(app)
    db.init_app(app)
    correct.recover_corrections(Path(app.config["CORRECTIONS_DIR"]), Path(app.config["DATABASE"]))
    detection.init_app(app)
    security.init_app(app)
    once.init_app(app)
    for blueprint in (sheet.bp, live.bp, correct.bp, api.bp):
        app.register_blueprint(blueprint)

    @app.after_request
    def _headers(response: Response) -> Response:
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        response.headers.setdefault("Permissions-Policy", "camera=(self)")
        return response

    return app
