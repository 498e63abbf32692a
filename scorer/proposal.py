"""Before a knock: each hand's best melds, who may knock, and the knock to propose without being asked.

One policy for every screen (the web page and ``okgin watch`` both show what this says): a knock is
proposed on its own only when the table could be scored as it lies (an upcard, every other hand of
the dealt size) and exactly one player may knock. With two who may, the players say who knocked; but two
hands each one card over the dealt size are no table at all (only the knocker holds the card he drew), and the
reason says so.

>>> ann, bob = parse_cards("8C 9C 10C JC 9H 10H JH 2S 2D AC"), parse_cards("QS QC QH 10S JS 3D 5H 7S AD 7D")
>>> status = table_status(Rules(), Card.parse("KS"), {"Ann": ann, "Bob": bob})
>>> status.proposed_knocker, status.hands["Ann"].deadwood_points, status.hands["Bob"].can_knock
('Ann', 5, False)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from scorer.cards import Card, card_count, parse_cards  # noqa: F401 (doctests)
from scorer.deadwood import Arrangement, best_arrangement, best_discard
from scorer.rules import Rules, as_upcard, held_cards


@dataclasses.dataclass(frozen=True)
class HandStatus:
    """One hand before a knock: its best arrangement (after the best discard when it holds one card extra).

    ``problem`` says why the hand cannot take part as it is (too few or too many cards); ``arrangement``
    is None when the hand has more cards than a knocker may hold.
    """

    cards: tuple[Card, ...]
    arrangement: Arrangement | None
    discard: Card | None
    can_knock: bool
    problem: str | None

    @property
    def deadwood_points(self) -> int | None:
        return None if self.arrangement is None else self.arrangement.points

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``cards``, ``melds``, ``deadwood``, ``deadwood_points`` (null when too many cards),
        ``discard`` (the best one for a hand one card over), ``can_knock`` and ``problem`` (or null)."""
        arrangement = self.arrangement
        return {
            "cards": [str(card) for card in self.cards],
            "melds": [] if arrangement is None else [meld.to_list() for meld in arrangement.melds],
            "deadwood": [] if arrangement is None else [str(card) for card in arrangement.deadwood],
            "deadwood_points": self.deadwood_points,
            "discard": None if self.discard is None else str(self.discard),
            "can_knock": self.can_knock,
            "problem": self.problem,
        }


@dataclasses.dataclass(frozen=True)
class TableStatus:
    """Every hand's status, the knock limit, and the knock proposed without asking (with why not, if none)."""

    upcard: Card | None
    knock_limit: int | None
    hands: dict[str, HandStatus]
    proposed_knocker: str | None
    reason: str | None
    """Why no knock is proposed (None when one is)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``upcard``, ``knock_limit`` (null without an upcard), ``players`` (``HandStatus.to_dict()``
        by name), ``proposed_knocker`` and ``reason``."""
        return {
            "upcard": None if self.upcard is None else str(self.upcard),
            "knock_limit": self.knock_limit,
            "players": {name: hand.to_dict() for name, hand in self.hands.items()},
            "proposed_knocker": self.proposed_knocker,
            "reason": self.reason,
        }


def table_status(
    rules: Rules, upcard: Card | str | None, hands: Mapping[str, Sequence[Card] | str], winner: str | None = None
) -> TableStatus:
    """Each hand's melds and deadwood, who may knock under ``upcard``, and the knock to propose.

    A player may knock holding the dealt number of cards (after the discard) or one more, with
    the least deadwood (after the best discard) within the knock limit. Once a match has a ``winner``,
    nothing is proposed; nor when two hands hold one card more than dealt, which no table can.

    ``upcard`` and the hands may be cards or card text, as ``score_round`` takes them.

    :raises InvalidHandError: for a player count the rules do not allow, a hand that is no cards, or a card twice in
        one hand or in two.
    :raises InvalidCardError: for an upcard that is neither a card nor card text.
    """
    held = held_cards(hands)
    size = rules.hand_size(len(held))
    upcard = None if upcard is None else as_upcard(upcard)
    limit = None if upcard is None else rules.knock_limit_for(upcard)
    statuses = {name: _hand_status(rules, cards, size, limit) for name, cards in held.items()}
    knockers = [name for name, status in statuses.items() if status.can_knock]
    drawn = [name for name, cards in held.items() if len(cards) == size + 1]
    if winner is not None:
        reason: str | None = f"the match is over: {winner} won"
    elif len(drawn) > 1:  # only the knocker holds the card he drew: one of these hands has a card too many
        reason = (
            f"{_in_words(drawn)} each hold {card_count(size + 1)}: "
            f"only the knocker holds one more than the {size} dealt"
        )
    elif upcard is None:
        reason = "no upcard yet"
    elif not knockers:
        reason = "nobody may knock yet"
    elif len(knockers) > 1:
        reason = f"{_in_words(knockers)} may each knock: say who knocked"
    elif wrong := [
        f"{name} holds {card_count(len(status.cards))}, not {size}"
        for name, status in statuses.items()
        if name != knockers[0] and len(status.cards) != size
    ]:
        reason = "; ".join(wrong)
    else:
        reason = None
    return TableStatus(upcard, limit, statuses, knockers[0] if reason is None else None, reason)


def _in_words(names: Sequence[str]) -> str:
    """Names as a sentence lists them: "Ann", "Ann and Bob", "Ann, Bob and Cy".

    >>> _in_words(["Ann", "Bob", "Cy"])
    'Ann, Bob and Cy'
    """
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _hand_status(rules: Rules, cards: tuple[Card, ...], size: int, limit: int | None) -> HandStatus:
    title = rules.title
    if len(cards) > size + 1:
        too_many = f"{card_count(len(cards))}: {title} deals {size} (a knocker holds {size + 1} before the discard)"
        return HandStatus(cards, None, None, False, too_many)
    discard = None
    if len(cards) == size + 1:
        discard, arrangement = best_discard(cards)
    else:
        arrangement = best_arrangement(cards)
    problem = None if len(cards) >= size else f"{card_count(len(cards))}: {title} deals {size}"
    can_knock = limit is not None and problem is None and arrangement.points <= limit
    return HandStatus(cards, arrangement, discard, can_knock, problem)
