"""Posts that make a match are made once: a double tap on "Start the match" or "Rematch", or a browser sending the
form again after a reply it lost, finds the match the first post made instead of making a second one.

Each such page form carries a one-time key (``form_key()``, a hidden field ``once``); an API client may send one as
the ``Idempotency-Key`` header. The app keeps the matches recent keys made, with what each post asked.
"""

from __future__ import annotations

import collections
import re
import secrets
import threading
from collections.abc import Callable

from flask import Flask, current_app

FIELD = "once"
HEADER = "Idempotency-Key"
KEPT = 1024
"""Recent form keys remembered (a form sent again comes within seconds of the first)."""
_KEY = re.compile(r"[A-Za-z0-9_-]{16,64}")


def form_key() -> str:
    """A new one-time key for a form that makes a match (the templates' ``form_key()``)."""
    return secrets.token_urlsafe(16)


class SentForms:
    """The matches made by recent form posts, by their one-time keys."""

    def __init__(self, size: int = KEPT) -> None:
        self._made: collections.OrderedDict[str, tuple[str, int]] = collections.OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def made(self, key: object, make: Callable[[], int], body: str = "") -> int:
        """The match the post with ``key`` made: ``make()`` the first time, the same match when it comes again with
        the same ``body`` (what was asked: a key sent again with another request is another request, so no one can
        claim a key to send another's post to their match). A post without a well-formed key (an old page, a
        script) makes a match each time.

        The lock is held while ``make`` stores the match (one short transaction): a second post of the form,
        arriving meanwhile, waits for it and finds its match.
        """
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            return make()
        with self._lock:
            kept = self._made.get(key)
            if kept is not None and kept[0] == body:
                self._made.move_to_end(key)
                return kept[1]
            match_id = make()
            if kept is None:
                self._made[key] = (body, match_id)
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
