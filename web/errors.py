"""Every failure answers as a clear message: JSON ``{"error": ...}`` for the API, a short page for people.

User errors (any ``scorer.errors.OkginError`` that reaches the edge) answer 400 with their message.
Anything else is a bug or a broken server: logged with its traceback, answered with a generic 500 (or
503 for the database, naming the kind of problem: read-only, missing, damaged, full) that never carries
exception text, so no SQL or path reaches a client.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from flask import Flask, Response, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

from scorer.errors import OkginError
from web.db import DatabaseError, database_problem, is_locked
from web.fields import InputError
from web.matches import BusyError, ConflictError, NotFoundError


class ApiError(Exception):
    """Answer the request with ``status`` and ``{"error": message}``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def wants_json() -> bool:
    """API and live-table endpoints answer JSON; pages answer HTML."""
    path = request.path
    return path.startswith(("/api/", "/live/", "/correct/")) or request.accept_mimetypes.best == "application/json"


def error_response(status: int, message: str, details: dict[str, Any] | None = None) -> tuple[Response | str, int]:
    """``{"error": message, **details}`` for JSON clients; a page naming the problem for people."""
    if wants_json():
        return jsonify(error=message, **(details or {})), status
    return render_template("error.html", status=status, message=message), status


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(ApiError)
    def _api_error(error: ApiError) -> tuple[Response | str, int]:
        return error_response(error.status, error.message)

    @app.errorhandler(InputError)
    def _input_error(error: InputError) -> tuple[Response | str, int]:
        return error_response(400, str(error))

    @app.errorhandler(NotFoundError)
    def _not_found(error: NotFoundError) -> tuple[Response | str, int]:
        return error_response(404, str(error.args[0]) if error.args else "not found")

    @app.errorhandler(ConflictError)
    def _conflict(error: ConflictError) -> tuple[Response | str, int]:
        return error_response(409, str(error), error.details)

    @app.errorhandler(BusyError)
    def _busy(error: BusyError) -> tuple[Response | str, int]:
        return error_response(503, str(error))

    @app.errorhandler(sqlite3.Error)
    def _database(error: sqlite3.Error) -> tuple[Response | str, int]:
        if is_locked(error):
            return error_response(503, "database is locked, try again")
        app.logger.exception("database error on %s %s", request.method, request.path)
        return error_response(503, f"{database_problem(error)}; the server log has the details")

    @app.errorhandler(DatabaseError)
    def _database_unavailable(error: DatabaseError) -> tuple[Response | str, int]:
        cause = error.__cause__
        if isinstance(cause, sqlite3.Error) and is_locked(cause):
            return error_response(503, "database is locked, try again")
        app.logger.error("database unavailable on %s %s: %s", request.method, request.path, error)
        problem = database_problem(error)
        return error_response(503, f"the database is unavailable: {problem}; the server log has the details")

    @app.errorhandler(OkginError)
    def _user_error(error: OkginError) -> tuple[Response | str, int]:
        return error_response(400, str(error))

    @app.errorhandler(HTTPException)
    def _http(error: HTTPException) -> tuple[Response | str, int]:
        status = error.code or 500
        limit = app.config["MAX_CONTENT_LENGTH"]
        too_large = f"upload too large: the limit is {limit // (1024 * 1024)} MB"
        length = request.content_length
        if length is not None and length <= limit and request.mimetype == "multipart/form-data":
            # werkzeug answers 413 for a form of more parts than it reads, whatever its size
            too_large = f"the form has too many parts: okgin reads up to {app.config['MAX_FORM_PARTS']}"
        messages = {
            404: f"no such page: {request.path}",
            405: f"{request.method} is not allowed on {request.path}",
            413: too_large,
        }
        return error_response(status, messages.get(status, error.description or error.name))

    @app.errorhandler(Exception)
    def _unexpected(error: Exception) -> tuple[Response | str, int]:
        app.logger.exception("unexpected error on %s %s", request.method, request.path)
        return error_response(500, "internal error; the server log has the details")
