"""The one base class of okgin's user errors.

A user error is input or a setting a person can fix: a card that is not a card, a knock the rules
refuse, a missing model, an image too large to read. Every such error derives from ``OkginError``,
so the edges (the CLI, the web app) catch exactly these and turn them into one clear line or a 4xx,
while any other exception is a bug: a traceback on the command line, a logged 500 on the web.

``OkginError`` is a ``ValueError`` because the errors it gathers were ``ValueError`` subclasses
before it existed (as python-chess's ``IllegalMoveError`` is); those that were ``RuntimeError``
subclasses derive from both, so no existing ``except`` clause stops catching them.

>>> from scorer.cards import Card, InvalidCardError
>>> issubclass(InvalidCardError, OkginError)
True
>>> try:
...     Card.parse("11H")
... except OkginError as error:
...     print(type(error).__name__)
InvalidCardError
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

__all__ = ["OkginError", "by_name", "shown"]

Value = TypeVar("Value")


class _JsonWords(reprlib.Repr):
    """A short ``repr`` that writes null, true and false as JSON does: most values quoted came from JSON (a page
    showed 'upcard must be a card like "7D", got None')."""

    def repr_NoneType(self, value: None, level: int) -> str:  # reprlib names its methods by type
        return "null"

    def repr_bool(self, value: bool, level: int) -> str:
        return "true" if value else "false"


_SHORT_REPR = _JsonWords()
_SHORT_REPR.maxlevel, _SHORT_REPR.maxdict, _SHORT_REPR.maxstring, _SHORT_REPR.maxother = 3, 4, 40, 40


class OkginError(ValueError):
    """Input or a setting a person can fix; the message names the problem and, where it can, the fix."""


def shown(value: object) -> str:
    """``value`` as an error message quotes it: its ``repr``, cut short.

    A client may send megabytes where a card or a name belongs; the message names the value without
    echoing it whole (nor spending the time to write it out).

    >>> shown("QH"), shown(["AS"] * 100), shown(None), shown([True])
    ("'QH'", "['AS', 'AS', 'AS', 'AS', 'AS', 'AS', ...]", 'null', '[true]')
    >>> shown(10**100)
    '100000000000000000...0000000000000000000'
    """
    return _SHORT_REPR.repr(value)


def by_name(
    pairs: Mapping[str, Value] | Iterable[tuple[str, Value]], given_twice: Callable[[str], OkginError]
) -> dict[str, Value]:
    """``(name, value)`` pairs (or a mapping) by name, refusing a name given twice with ``given_twice(name)``: a
    ``dict`` keeps the last unseen (a player's second hand scored alone, the table a player short).

    >>> by_name([("Ann", 1), ("Bob", 2)], OkginError)
    {'Ann': 1, 'Bob': 2}
    >>> by_name([("Ann", 1), ("Ann", 2)], lambda name: OkginError(f"{shown(name)} twice"))
    Traceback (most recent call last):
    ...
    scorer.errors.OkginError: 'Ann' twice
    """
    if isinstance(pairs, Mapping):
        return dict(pairs)
    found: dict[str, Value] = {}
    for name, value in pairs:
        if name in found:
            raise given_twice(name)
        found[name] = value
    return found
