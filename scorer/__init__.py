"""okgin's library: cards, melds, deadwood, rules and match scoring for Oklahoma Gin,
and (in ``scorer.vision``) the camera pipeline. Importing it never loads torch."""

from scorer.cards import CLASS_NAMES, DECK, Card, DuplicateCardError, InvalidCardError, parse_cards

__all__ = ["CLASS_NAMES", "DECK", "Card", "DuplicateCardError", "InvalidCardError", "parse_cards"]
__version__ = "0.1.0"
