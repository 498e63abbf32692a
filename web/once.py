"""Posts that make a match are made once: a double tap on "Start the match" or "Rematch", a browser sending the
form again after a reply it lost, or a retry after the server restarted, finds the match the first post made
instead of making a second one.

Each such page form carries a one-time key (``form_key()``, a hidden field ``once``); an API client may send one as
the ``Idempotency-Key`` header. A post is its key and what it asked (a hash of the form's fields, the file's bytes,
the JSON body). The database keeps the match each recent post made (table ``sent_once``: a day, ``KEPT`` posts at
most), written in the transaction that stores the match, so a key is never kept without its match nor a match
made by a keyed post without its key.

A key sent again with something else asked is another request, and makes its own match (once, like any post),
rather than the 422 the IETF Idempotency-Key draft gives a client that reuses a key. The keys here are a page's:
a player whose reply was slow, who fixes a name or the target or picks another file and taps again on the same
page, asks for that match. Answering the first post's match would ignore the fix without a word, and an error
would only have the player reload the page (a new key) to send the same again. Tying a match to what was asked
also means a key, seen or guessed, never answers someone else's match to another request.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass

from flask import Flask
from werkzeug.datastructures import MultiDict

from web.db import get_db
from web.security import CSRF_FIELD

FIELD = "once"
HEADER = "Idempotency-Key"
KEPT = 1024
"""Posts remembered at most, the oldest forgotten first (a form is sent again within seconds or minutes)."""
LIFETIME_SECONDS = 24 * 60 * 60
"""How long a post's match is remembered: long past any retry of a lost reply or restart of the server."""
_KEY = re.compile(r"[A-Za-z0-9_-]{16,64}")

KeepPost = Callable[[sqlite3.Connection, int], None]
"""Keeps the post that made a match: called with the match's transaction and its id (``web.matches``)."""


def form_key() -> str:
    """A new one-time key for a form that makes a match (the templates' ``form_key()``)."""
    return secrets.token_urlsafe(16)


def form_asked(form: MultiDict[str, str]) -> bytes:
    """What a form post asked: its fields as sent, but its one-time key and CSRF token, in one order."""
    fields = sorted((name, form.getlist(name)) for name in form if name not in (FIELD, CSRF_FIELD))
    return json.dumps(fields, separators=(",", ":")).encode()


@dataclass(frozen=True)
class Post:
    """A keyed post: its one-time key and a hash of what it asked."""

    key: str
    asked: str

    def match_made(self, db: sqlite3.Connection) -> int | None:
        """The match this post made within ``LIFETIME_SECONDS``, if it has been sent before."""
        row = db.execute(
            "SELECT match_id FROM sent_once WHERE key = ? AND asked = ? AND sent_at > ?",
            (self.key, self.asked, int(time.time()) - LIFETIME_SECONDS),
        ).fetchone()
        return None if row is None else int(row[0])

    def keep(self, db: sqlite3.Connection, match_id: int) -> None:
        """Keep that this post made ``match_id``, forgetting posts past their lifetime or beyond ``KEPT``.

        :raises sqlite3.IntegrityError: when the same post was kept meanwhile (sent twice at once).
        """
        now = int(time.time())
        db.execute("DELETE FROM sent_once WHERE sent_at <= ?", (now - LIFETIME_SECONDS,))
        db.execute(
            "INSERT INTO sent_once (key, asked, match_id, sent_at) VALUES (?, ?, ?, ?)",
            (self.key, self.asked, match_id, now),
        )
        db.execute(
            "DELETE FROM sent_once WHERE id <= (SELECT id FROM sent_once ORDER BY id DESC LIMIT 1 OFFSET ?)", (KEPT,)
        )


def made(key: object, asked: bytes, make: Callable[[KeepPost | None], int]) -> int:
    """The match the post with ``key`` asking ``asked`` made: ``make(keep)`` the first time (it stores the match and
    calls ``keep`` in the same transaction), the same match when the post comes again. A post without a
    well-formed key (an old page, a script) makes a match each time: ``make(None)``.

    Two identical posts at once both find no match and both make one; the write lock orders their transactions,
    and the later one breaks ``sent_once``'s UNIQUE (key, asked): its match is rolled back, and it answers the
    match of the first.
    """
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        return make(None)
    post = Post(key, hashlib.sha256(asked).hexdigest())
    found = post.match_made(get_db())
    if found is not None:
        return found
    try:
        return make(post.keep)
    except sqlite3.IntegrityError:
        found = post.match_made(get_db())
        if found is None:  # not this post's key: another constraint, which is not ours to answer
            raise
        return found


def init_app(app: Flask) -> None:
    app.jinja_env.globals["form_key"] = form_key
