"""okgin's library: cards, melds, deadwood, rules and match scoring for Oklahoma Gin,
and (in ``scorer.vision``) the camera pipeline. Importing it never loads torch.

>>> from scorer import Rules, parse_cards, score_round
>>> knocker = parse_cards("8C 9C 10C JC 9H 10H JH 2S 2D AC")
>>> opponent = parse_cards("QS QC QH 10S JS 3D 5H 7S AD 7D")
>>> result = score_round(Rules(), Card.parse("KS"), {"Ann": knocker, "Bob": opponent}, knocker="Ann")
>>> result.outcome, result.points["Ann"]
('knock', 18)
"""

from scorer.cards import CLASS_NAMES, DECK, Card, DuplicateCardError, InvalidCardError, parse_cards
from scorer.deadwood import Arrangement, best_arrangement
from scorer.match import Match
from scorer.melds import Meld
from scorer.rules import IllegalKnockError, InvalidHandError, Rules, score_round

__all__ = [
    "CLASS_NAMES",
    "DECK",
    "Arrangement",
    "Card",
    "DuplicateCardError",
    "IllegalKnockError",
    "InvalidCardError",
    "InvalidHandError",
    "Match",
    "Meld",
    "Rules",
    "best_arrangement",
    "parse_cards",
    "score_round",
]
__version__ = "0.1.0"
