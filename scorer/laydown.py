"""The lay-down as data: what the players put on the table when a round ends.

At the table the knocker discards (from 11 cards, or 8 with 3-4 players), spreads his
melds as he chooses, and each other player in turn lays off onto them. Nothing obliges
the knocker to lay the arrangement with the least deadwood, and a player with two equal
ways to lay off picks one, so the score follows what was actually laid. A ``LayDown``
holds those three parts, each optional: a part not given is chosen by ``score_round``,
which then lists the alternatives that would score differently.

Text forms (the CLI's): melds ``"JS QS KS | 4C 4D 4H 4S"``; layoffs per player
``"Bob: 10S JS QS onto 7S 8S 9S; Cat: KS onto 7S 8S 9S"`` (``"none"`` for a player who
laid off nothing; the name may be left out when only one player can lay off).

>>> laid = LayDown.of(parse_melds("JS QS KS | 4C 4D 4H 4S"), layoffs={"Bob": parse_layoffs("10S onto JS QS KS")})
>>> print(laid)
knocker melds JS QS KS | 4C 4D 4H 4S; Bob lays off 10S onto JS QS KS

Its JSON form (``to_dict``) travels inside a round's (``scorer.match.Knock``), read back by
``scorer.match.parse_round_input``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from scorer.cards import Card
from scorer.errors import by_name, shown
from scorer.layoffs import IllegalLayoffError, Layoff, format_layoffs, parse_layoffs
from scorer.melds import Meld, format_melds, parse_melds  # noqa: F401 (doctests)


@dataclasses.dataclass(frozen=True)
class LayDown:
    """The knocker's melds as laid, the knocker's discard, and each other player's layoffs as made.

    ``None`` (melds, discard) or a player missing from ``layoffs`` means "not given": the
    engine chooses. An empty tuple of layoffs means that player laid off nothing.
    """

    knocker_melds: tuple[Meld, ...] | None = None
    discard: Card | None = None
    layoffs: tuple[tuple[str, tuple[Layoff, ...]], ...] = ()
    """(player, their layoffs in the order laid), in the order given."""

    @classmethod
    def of(
        cls,
        knocker_melds: Sequence[Meld] | None = None,
        discard: Card | None = None,
        layoffs: Mapping[str, Sequence[Layoff]] | None = None,
    ) -> LayDown:
        """A lay-down from plain sequences and a mapping of layoffs by player."""
        return cls(
            None if knocker_melds is None else tuple(knocker_melds),
            discard,
            tuple((name, tuple(laid)) for name, laid in (layoffs or {}).items()),
        )

    @property
    def layoffs_by_player(self) -> dict[str, tuple[Layoff, ...]]:
        """The layoffs given, by player.

        :raises IllegalLayoffError: naming a player given layoffs twice (the first were dropped unseen).
        """
        return by_name(
            self.layoffs,
            lambda name: IllegalLayoffError(f"{shown(name)} is given layoffs twice: list each player's once"),
        )

    def arguments(self) -> dict[str, Any]:
        """The lay-down as ``score_round``'s (and ``Match.record_round``'s) keyword arguments.

        >>> LayDown(discard=Card.parse("9C")).arguments()
        {'knocker_melds': None, 'discard': Card.parse('9C'), 'layoffs': {}}
        """
        return {"knocker_melds": self.knocker_melds, "discard": self.discard, "layoffs": self.layoffs_by_player}

    @property
    def given(self) -> bool:
        """Whether any part was given."""
        return self.knocker_melds is not None or self.discard is not None or bool(self.layoffs)

    def filled_from(self, other: LayDown) -> LayDown:
        """This lay-down with each part it leaves out (melds, discard, layoffs) taken from ``other``.

        >>> str(LayDown(discard=Card.parse("9C")).filled_from(LayDown(parse_melds("AS 2S 3S"), Card.parse("KD"))))
        'knocker melds AS 2S 3S; discard 9C'
        """
        return LayDown(
            other.knocker_melds if self.knocker_melds is None else self.knocker_melds,
            other.discard if self.discard is None else self.discard,
            self.layoffs or other.layoffs,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"knocker_melds": [["JS", "QS", "KS"]] | null, "discard": "9C" | null,
        "layoffs": {"Bob": [{"card": "10S", "onto": ["JS", "QS", "KS"]}]}}``."""
        return {
            "knocker_melds": None if self.knocker_melds is None else [meld.to_list() for meld in self.knocker_melds],
            "discard": None if self.discard is None else str(self.discard),
            "layoffs": {name: [layoff.to_dict() for layoff in laid] for name, laid in self.layoffs},
        }

    def __str__(self) -> str:
        parts = []
        if self.knocker_melds is not None:
            parts.append(f"knocker melds {format_melds(self.knocker_melds)}")
        if self.discard is not None:
            parts.append(f"discard {self.discard}")
        parts += [f"{name} lays off {format_layoffs(laid)}" for name, laid in self.layoffs]
        return "; ".join(parts) or "as the engine chooses"


def parse_layoffs_by_player(text: str, players: Sequence[str]) -> dict[str, tuple[Layoff, ...]]:
    """Layoffs per player, written ``"Bob: 10S JS onto 7S 8S 9S; Cat: none"``.

    ``players`` are those who may lay off; a name matches exactly, else without regard to case
    (players may be "Bob" and "bob": case then tells them apart). When only one player may lay
    off, the name may be left out: ``"10S 9S onto JS QS KS"``.

    >>> parse_layoffs_by_player("bob: 10S onto 7S 8S 9S; Cat: none", ["Bob", "Cat"])
    {'Bob': (Layoff.parse('10S onto 7S 8S 9S'),), 'Cat': ()}
    >>> parse_layoffs_by_player("QC onto 9C 10C JC", ["opponent"])
    {'opponent': (Layoff.parse('QC onto 9C 10C JC'),)}

    Blank text is no layoff by anyone, as ``parse_layoffs`` reads it for one player (``--layoffs ""`` was taken for
    layoffs not given, and the engine then chose some).

    >>> parse_layoffs_by_player(" ", ["Bob", "Cat"]) == parse_layoffs_by_player(" ; ", ["Bob", "Cat"])
    True
    >>> parse_layoffs_by_player(" ", ["Bob", "Cat"])
    {'Bob': (), 'Cat': ()}

    :raises IllegalLayoffError: for an unknown, ambiguous or repeated player, or layoffs that cannot be read.
    """
    if not text.replace(";", " ").strip():  # separators alone say no more than blank text: nobody laid off
        return {name: () for name in players}
    by_name: dict[str, list[str]] = {}
    for player in players:
        by_name.setdefault(player.lower(), []).append(player)
    result: dict[str, tuple[Layoff, ...]] = {}
    for part in (part.strip() for part in text.split(";")):
        if not part:
            continue
        name_text, colon, rest = part.partition(":")
        if colon and " onto " not in name_text:
            written = name_text.strip()
            folded = [written] if written in players else by_name.get(written.lower(), [])
            if not folded:
                raise IllegalLayoffError(
                    f"layoffs name {written!r}, who does not lay off here; {', '.join(players) or 'nobody'} may"
                )
            if len(folded) > 1:
                raise IllegalLayoffError(f"layoffs name {written!r}, which may be {' or '.join(folded)}: write it so")
            name = folded[0]
        elif len(players) == 1:
            name, rest = players[0], part
        else:
            raise IllegalLayoffError(f"say whose layoffs {part!r} are: 'NAME: CARDS onto MELD' ({', '.join(players)})")
        if name in result:
            raise IllegalLayoffError(f"{name}'s layoffs are given twice; list them once, split by commas")
        result[name] = parse_layoffs(rest)
    return result


def format_layoffs_by_player(layoffs: Mapping[str, Sequence[Layoff]]) -> str:
    """Layoffs per player as one line, the form ``parse_layoffs_by_player`` reads back."""
    return "; ".join(f"{name}: {format_layoffs(laid)}" for name, laid in layoffs.items())
