"""Page forms that make a match are sent once: a double tap on "Start the match", or a browser sending the form again
after a reply it lost, finds the match the first post made instead of making a second one.

Each such form carries a one-time key (``form_key()``, a hidden field ``once``); the app keeps the matches recent
keys made. A key is a random token no other form holds, so a key seen again is the same form sent again.
"""

from __future__ import annotations

import collections
import re
import secrets
import threading
from collections.abc import Callable

from flask import Flask, current_app

FIELD = "once"
KEPT = 1024
"""Recent form keys remembered (a form sent again comes within seconds of the first)."""
_KEY = re.compile(r"[A-Za-z0-9_-]{16,64}")


def form_key() -> str:
    """A new one-time key for a form that makes a match (the templates' ``form_key()``)."""
    return secrets.token_urlsafe(16)


class SentForms:
    """The matches made by recent form posts, by their one-time keys."""

    def __init__(self, size: int = KEPT) -> None:
        self._made: collections.OrderedDict[str, int] = collections.OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def made(self, key: object, make: Callable[[], int]) -> int:
        """The match the form with ``key`` made: ``make()`` the first time, the same match when it comes again.
        A post without a well-formed key (an old page, a script) makes a match each time.

        The lock is held while ``make`` stores the match (one short transaction): a second post of the form,
        arriving meanwhile, waits for it and finds its match.
        """
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            return make()
        with self._lock:
            if key in self._made:
                self._made.move_to_end(key)
                return self._made[key]
            match_id = self._made[key] = make()
            while len(self._made) > self._size:
                self._made.popitem(last=False)
            return match_id


def sent_forms() -> SentForms:
    """This app's forms sent once."""
    forms: SentForms = current_app.extensions["okgin_sent_forms"]
    return forms


def init_app(app: Flask) -> None:
    app.extensions["okgin_sent_forms"] = SentForms()
    app.jinja_env.globals["form_key"] = form_key
