"""Request bodies read as JSON with limits, in one place for every route.

The size of a body is already limited (``MAX_CONTENT_LENGTH``); its depth is limited here. Python's
JSON parser recurses once per nesting level, so ``[[[[...]]]]`` 1000 deep raises ``RecursionError``
(a 500) and deeper still can exhaust the stack. ``DepthLimitedJSONProvider`` is the app's JSON
provider, which every ``request.get_json()`` goes through whatever the route: it measures the depth
before parsing and answers 400 for JSON nested deeper than ``MAX_JSON_DEPTH`` (no okgin request
needs more than 4 levels), and 413 for JSON of more values than ``MAX_JSON_VALUES`` (``MAX_BODY_VALUES`` in a request
body but a match file).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np
from flask import Flask, current_app, request
from flask.json.provider import DefaultJSONProvider

from scorer.errors import shown
from web.errors import ApiError

MAX_JSON_DEPTH = 32
MAX_JSON_VALUES = 500_000
"""At most this many commas and colons in a JSON text: each value after an array's or object's first takes one, so
they bound the values to build. Python's parser holds the interpreter, every other request with it, until the whole
text is read: 10 MB of ``1,1,1...`` (5 million values) or of 700,000 keys held it 2 to 5 s. The most an okgin request
carries, a match file of 1,000 rounds of four players (180 to 300 each) and 1,000 earlier versions (70 each), has
fewer than 400,000."""
MAX_BODY_VALUES = 10_000
"""At most this many in a request body but a match file (``json_object``): a round, a table or a correction has a few
hundred, and 10,000 are read in milliseconds, while 500,000 held every other request 1 to 2 s on a busy machine."""
_STRING = re.compile(rb'"(?:[^"\\]++|\\(?:.|\Z))*+(?:"|\Z)', re.DOTALL)
"""A JSON string, or an unclosed one to the end of the text. Possessive, and matching wherever a quote opens, it
reads each byte once: a pattern that failed on an unclosed string was tried again from every later quote,
and 32 KB of ``"\\"`` took seven seconds, holding the interpreter (every other request) meanwhile."""
_NOT_A_BRACKET = bytes(set(range(256)) - set(b"[]{}"))


def json_depth(data: str | bytes) -> int:
    """How deeply arrays and objects nest in a JSON text (brackets inside strings do not count).

    >>> json_depth('{"a": [1, {"b": "[[["}]}'), json_depth("3"), json_depth("[" * 40 + "]" * 40)
    (3, 0, 40)
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    brackets = _STRING.sub(b"", raw).translate(None, delete=_NOT_A_BRACKET)
    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)
    return int(np.cumsum(steps).max(initial=0))


class DepthLimitedJSONProvider(DefaultJSONProvider):
    """Flask's JSON provider, refusing JSON of more values than ``max_values`` (the caller's limit, by default
    ``MAX_JSON_VALUES``) or nested deeper than ``MAX_JSON_DEPTH`` before parsing it."""

    def loads(self, s: str | bytes, *, max_values: int = MAX_JSON_VALUES, **kwargs: Any) -> Any:
        refuse_many_values(s, max_values)
        # fast path: fewer opening brackets than the limit cannot nest deeper than it
        opening = s.count("[") + s.count("{") if isinstance(s, str) else s.count(b"[") + s.count(b"{")
        if opening > MAX_JSON_DEPTH and json_depth(s) > MAX_JSON_DEPTH:
            # not a ValueError: the reader's "not valid JSON" answer (json_object) must not take it for bad syntax
            raise ApiError(400, f"the JSON body nests deeper than {MAX_JSON_DEPTH} levels")
        return super().loads(s, **kwargs)


def refuse_many_values(text: str | bytes, limit: int) -> None:
    """Refuse a JSON text of more than ``limit`` values (commas and colons: see ``MAX_JSON_VALUES``) before it is
    parsed. They are counted in strings too: no okgin request has thousands of commas in its text.

    :raises ApiError: 413 naming the limit.
    """
    separators = text.count(",") + text.count(":") if isinstance(text, str) else text.count(b",") + text.count(b":")
    if separators > limit:
        raise ApiError(413, f"the JSON holds more than {limit:,} values; no okgin request needs so many")


def json_object(max_values: int = MAX_BODY_VALUES) -> dict[str, Any]:
    """The request's body as a JSON object: the helper every JSON route reads its body with; ``max_values``: how many
    values it may hold (``MAX_JSON_VALUES`` for a match file).

    :raises ApiError: 400 when the body is not a JSON object (or nests too deeply), naming what it is instead;
        413 for more values than ``max_values``; 415 for a compressed body.
    """
    if not request.is_json:
        raise ApiError(400, "the request body must be a JSON object (Content-Type: application/json)")
    if request.content_encoding not in (None, "", "identity"):
        raise ApiError(415, f"Content-Encoding {shown(request.content_encoding)} is not read: send the JSON as it is")
    body = parse_json(request.get_data(cache=True), max_values=max_values)
    if not isinstance(body, dict):
        raise ApiError(400, f"the request body must be a JSON object, not {type(body).__name__} {shown(body)}")
    return body


def parse_json(data: bytes, what: str = "the request body", max_values: int = MAX_JSON_VALUES) -> Any:
    """JSON text read by the app's provider (``DepthLimitedJSONProvider``), a body or an uploaded file (``what``), of at
    most ``max_values`` values, counted once, there.

    :raises ApiError: 400 naming where the text is not JSON, or that it nests too deeply; 413 for more values.
    """
    try:
        return current_app.json.loads(data, max_values=max_values)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        raise ApiError(400, f"{what} is not valid JSON: {error.msg} at {where}") from None
    except UnicodeDecodeError:
        raise ApiError(400, f"{what} is not valid JSON: it is not UTF-8 text") from None
    except ValueError as error:  # a number of more digits than Python reads (4,300)
        raise ApiError(400, f"{what} is not valid JSON: {str(error).split(':')[0]}") from None


def pixel(value: object) -> float | None:
    """A JSON number as a finite float, or None (for true/false, text, and numbers no float holds).

    >>> pixel(12), pixel(1.5), pixel(True), pixel(10**400), pixel(float("nan"))
    (12.0, 1.5, None, None, None)
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


IMAGE_ENDPOINTS = frozenset({"api.detect", "live.frame"})
"""The POST routes of the API and the live table that take an image, not JSON."""


def json_routes(app: Flask) -> list[tuple[str, str]]:
    """Every route that reads a JSON body, as ``(method, path)`` with ``1`` for each id in the path.

    They are the POST and PUT routes of the API, the live table and corrections, but for the image
    uploads; the fuzz suite and ``benchmarks/bench_abuse.py`` send their bad bodies to each.
    """
    routes = []
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith(("/api/", "/live/", "/correct/")) and rule.endpoint not in IMAGE_ENDPOINTS:
            path = "/".join("1" if part.startswith("<") else part for part in rule.rule.split("/"))
            routes += [(method, path) for method in sorted((rule.methods or set()) & {"POST", "PUT"})]
    return sorted(routes, key=lambda route: route[1])
