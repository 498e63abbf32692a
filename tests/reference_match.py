"""An independent scorer of rounds and matches, straight from the rules page, the yardstick for scorer.match.

Written from ``shared/rules/oklahoma-gin.md`` alone, without reading ``scorer/rules.py`` or
``scorer/match.py``: the knock limit (upcard or fixed, ace upcard gin-only), the two-player
table (knock, undercut, gin), the multi-player penalty table, spade doubling, then the match
(running totals, the target, an agreed number of rounds, draws, the winner dealing, and the
box, game and shutout bonuses at the end). Melds, deadwood and layoffs come from the
brute force in ``reference.py``. Options are read by name from ``Rules.to_dict()``.

Where the players' choices are not given, every choice the rules allow is tried: the
knocker lays any least-deadwood arrangement (after any discard), each other player, in seat
order from the knocker's left, any layoffs that leave him the least deadwood. A two-player
round then has one score (the knocker's best); a 3-4 player round a set of possible scores.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from reference import deadwood_of, families, is_meld, min_deadwood

from scorer.cards import Card

Table = tuple[frozenset[Card], ...]
Points = tuple[int, ...]
"""Points in seat order from the knocker: the knocker first, then each player to his left."""


class Refused(ValueError):
    """A round the rules do not allow: an illegal knock, wrong hands, illegal layoffs."""


class IllegalKnock(Refused):
    """The knocker's deadwood is over the knock limit."""


class MatchOver(Refused):
    """A round entered after the match was won."""


# --- One round


def knock_limit(options: Mapping[str, Any], upcard: Card) -> int:
    """Oklahoma: the upcard's value (10 for tens and faces, 1 for an ace); plain Gin Rummy: a fixed number.

    Extra: with ``ace_upcard_gin_only`` an ace upcard means only gin may end the round (limit 0).
    """
    if options["ace_upcard_gin_only"] and upcard.rank == 1:
        return 0
    if options["knock_limit"] == "upcard":
        return min(upcard.rank, 10)
    return int(options["knock_limit"])


def hand_size(options: Mapping[str, Any], players: int) -> int:
    """10 cards for two players, 7 for three or four (multi-player only)."""
    if options["scoring"] == "standard" and players != 2:
        raise Refused(f"standard scoring is for 2 players, not {players}")
    if not 2 <= players <= options["max_players"]:
        raise Refused(f"{players} players where the rules allow 2-{options['max_players']}")
    return 10 if players == 2 else 7


@dataclasses.dataclass(frozen=True)
class Scored:
    outcome: str  # "knock", "gin" or "undercut"
    winner: int  # seat, counted from the knocker (0)
    points: Points


def table_points(options: Mapping[str, Any], upcard: Card, deadwood: Sequence[int]) -> Scored:
    """The points of a round from each player's final deadwood, the knocker's first (rules page, "Scoring")."""
    k, others = deadwood[0], list(deadwood[1:])
    if options["scoring"] == "standard":
        (o,) = others
        if k == 0:  # gin: no undercut, the opponent scores nothing even with zero deadwood
            scored = Scored("gin", 0, (options["gin_bonus"] + o, 0))
        elif k < o:
            scored = Scored("knock", 0, (o - k, 0))
        else:  # a tie is an undercut
            scored = Scored("undercut", 1, (0, options["undercut_bonus"] + k - o))
    elif k == 0:  # multi-player gin: +25, each other player -2 x deadwood
        scored = Scored("gin", 0, (options["gin_bonus"], *(-options["penalty_gin_multiplier"] * d for d in others)))
    elif min(others) > k:  # knock: +10, each other player -(deadwood - winner's)
        scored = Scored("knock", 0, (options["penalty_knock_points"], *(-(d - k) for d in others)))
    else:  # undercut: the lowest deadwood, ties to the nearest the knocker's left
        lowest = min(others)
        winner = others.index(lowest) + 1
        points = tuple(
            options["penalty_undercut_points"] if seat == winner else -(d - lowest) for seat, d in enumerate(deadwood)
        )
        scored = Scored("undercut", winner, points)
    if options["spade_doubles"] and upcard.suit == "S":
        scored = dataclasses.replace(scored, points=tuple(2 * p for p in scored.points))
    return scored


def layoff_choices(table: Table, hand: frozenset[Card]) -> dict[frozenset[Card], set[Table]]:
    """Every set of cards the hand can lay off, one card at a time, and the tables each may leave.

    The table's melds stay in their order (index = the knocker's meld); a card may go onto any meld it extends.
    """
    found: dict[frozenset[Card], set[Table]] = {}
    stack: list[tuple[Table, frozenset[Card]]] = [(table, frozenset())]
    seen: set[tuple[Table, frozenset[Card]]] = set()
    while stack:
        state = stack.pop()
        if state in seen:
            continue
        seen.add(state)
        melds, laid = state
        found.setdefault(laid, set()).add(melds)
        for card in hand - laid:
            for index, meld in enumerate(melds):
                if is_meld(meld | {card}):
                    grown = (*melds[:index], meld | {card}, *melds[index + 1 :])
                    stack.append((grown, laid | {card}))
    return found


def others_outcomes(
    table: Table, hands: Sequence[frozenset[Card]], given: Sequence[Sequence[tuple[Card, int]] | None], gin: bool
) -> set[tuple[int, ...]]:
    """Every tuple of the other players' deadwood, in seat order: each lays off as given (a list of
    (card, index of the knocker's meld) in the order laid) or, where not given (None), any way that leaves him
    the least deadwood. Nobody lays off onto gin; everyone melds the rest of his hand as well as he can.
    """
    if not hands:
        return {()}
    hand, laid_given = hands[0], given[0]
    if gin:
        if laid_given:
            raise Refused("no layoffs onto a gin hand")
        return {(min_deadwood(hand), *tail) for tail in others_outcomes(table, hands[1:], given[1:], gin)}
    if laid_given is not None:
        after, left = apply_layoffs(table, hand, laid_given)
        return {(left, *tail) for tail in others_outcomes(after, hands[1:], given[1:], gin)}
    choices = layoff_choices(table, hand)
    least = min(min_deadwood(hand - laid) for laid in choices)
    results: set[tuple[int, ...]] = set()
    for laid, tables in choices.items():
        if min_deadwood(hand - laid) == least:
            for after in tables:
                results |= {(least, *tail) for tail in others_outcomes(after, hands[1:], given[1:], gin)}
    return results


def apply_layoffs(table: Table, hand: frozenset[Card], layoffs: Sequence[tuple[Card, int]]) -> tuple[Table, int]:
    """Lay off these (card, index of the knocker's meld) in order; the table after and the player's deadwood."""
    melds = list(table)
    cards = [card for card, _ in layoffs]
    if len(set(cards)) != len(cards) or not set(cards) <= hand:
        raise Refused("layoff of a card not in the player's hand, or twice")
    for card, index in layoffs:
        if not is_meld(melds[index] | {card}):
            raise Refused(f"{card} does not extend meld {index}")
        melds[index] = melds[index] | {card}
    return tuple(melds), min_deadwood(hand - set(cards))


@dataclasses.dataclass(frozen=True)
class Round:
    """A round ended by a knock, with what was laid where it is given (None: the players' choice).

    ``hands`` are in seat order, the knocker's included; ``melds`` the knocker's melds as laid;
    ``layoffs`` each other player's layoffs as (card, index into ``melds``), in the order laid.
    """

    upcard: Card
    hands: tuple[tuple[str, tuple[Card, ...]], ...]
    knocker: str
    melds: tuple[frozenset[Card], ...] | None = None
    discard: Card | None = None
    layoffs: tuple[tuple[str, tuple[tuple[Card, int], ...]], ...] | None = None


class Draw:
    """A void round: two cards left in the stock and nobody knocked."""


def _seats(round_: Round) -> list[str]:
    """The players from the knocker round his left (seat order wraps)."""
    names = [name for name, _ in round_.hands]
    start = names.index(round_.knocker)
    return names[start:] + names[:start]


def _knocker_choices(
    options: Mapping[str, Any], round_: Round, size: int
) -> list[tuple[frozenset[Card], tuple[frozenset[Card], ...]]]:
    """The knocker's legal (kept cards, melds laid) pairs; raises IllegalKnock when there is none."""
    hand = frozenset(dict(round_.hands)[round_.knocker])
    limit = knock_limit(options, round_.upcard)
    discards: list[Card | None] = [None]
    if len(hand) == size + 1:
        melded = frozenset().union(*round_.melds) if round_.melds else frozenset()
        discards = [round_.discard] if round_.discard else list(sorted(hand - melded))
        if round_.discard is not None and (round_.discard not in hand or round_.discard in melded):
            raise Refused("the discard is not one of the knocker's unmelded cards")
    elif len(hand) == size:
        if round_.discard is not None:
            raise Refused("a discard given for a knocker holding no extra card")
    else:
        raise Refused(f"the knocker holds {len(hand)} cards, not {size} (or {size + 1} with the discard)")
    choices = []
    for discard in discards:
        kept = hand - {discard}
        if round_.melds is not None:
            melds = tuple(round_.melds)
            if not all(is_meld(m) for m in melds) or sum(map(len, melds)) != len(frozenset().union(*melds, set())):
                raise Refused("the knocker's melds are not disjoint melds")
            if not frozenset().union(*melds, set()) <= kept:
                raise Refused("the knocker's melds are not from his hand")
            laid = [melds]
        else:
            least = min_deadwood(kept)
            laid = [tuple(f) for f in families(kept) if deadwood_of(kept, f) == least]
        choices += [(kept, melds) for melds in laid if deadwood_of(kept, frozenset(melds)) <= limit]
    if not choices:
        raise IllegalKnock(f"no legal knock under the knock limit {limit} of upcard {round_.upcard}")
    return choices


def round_scores(options: Mapping[str, Any], round_: Round) -> dict[Points, Scored]:
    """Every score the round may have by the players' choices, keyed by points in seat order from the knocker.

    :raises Refused: for hands of the wrong size, a card twice, an illegal knock or illegal layoffs.
    """
    seats = _seats(round_)
    hands = dict(round_.hands)
    size = hand_size(options, len(seats))
    every = [card for _, cards in round_.hands for card in cards]
    if len(set(every)) != len(every):
        raise Refused("a card in two hands, or twice in one")
    if any(len(hands[name]) != size for name in seats[1:]):
        raise Refused(f"every player but the knocker holds {size} cards")
    scores: dict[Points, Scored] = {}
    for kept, melds in _knocker_choices(options, round_, size):
        k = deadwood_of(kept, frozenset(melds))
        others = [frozenset(hands[name]) for name in seats[1:]]
        given = dict(round_.layoffs or ())
        outcomes = others_outcomes(tuple(melds), others, [given.get(name) for name in seats[1:]], gin=k == 0)
        for deadwood_after in outcomes:
            scored = table_points(options, round_.upcard, (k, *deadwood_after))
            scores[scored.points] = scored
    return scores


def best_for_knocker(options: Mapping[str, Any], scores: Mapping[Points, Scored]) -> Scored:
    """The score the knocker lays for: two players, the most points for him less the opponent's; with the
    penalty table, the most points for him (the page does not say which he prefers of lay-downs that win him
    the same and cost the others differently: this takes the least cost, and is exact only where they agree)."""

    def preference(points: Points) -> tuple[int, ...]:
        if options["scoring"] == "standard":
            return (points[0] - points[1],)
        return points[0], sum(points[1:])

    return scores[max(scores, key=preference)]


def scored_by_name(options: Mapping[str, Any], round_: Round) -> tuple[str, str, dict[str, int]]:
    """The round's outcome, winner and points by name, the knocker laying for his best (exact where the
    others' choices cannot change the score: two players, or every layoff given)."""
    scored = best_for_knocker(options, round_scores(options, round_))
    seats = _seats(round_)
    return scored.outcome, seats[scored.winner], dict(zip(seats, scored.points, strict=True))


# --- The match


@dataclasses.dataclass
class MatchState:
    """The match after some rounds: as the rules page defines totals, the end, the winner, the next dealer."""

    players: list[str]
    dealer: str
    totals: dict[str, int]
    rounds_won: dict[str, int]
    rounds_scored: int = 0
    winner: str | None = None
    history: list[tuple[str, dict[str, int], dict[str, int]]] = dataclasses.field(default_factory=list)
    """Per round: its dealer, its points and the totals after it."""


def reaches(options: Mapping[str, Any], total: int) -> bool:
    return total >= options["target"] if options["target_rule"] == ">=" else total > options["target"]


def new_match(players: Iterable[str], dealer: str) -> MatchState:
    names = list(players)
    return MatchState(names, dealer, dict.fromkeys(names, 0), dict.fromkeys(names, 0))


def play(options: Mapping[str, Any], state: MatchState, entered: Round | Draw) -> None:
    """Add one round: its winner deals next, and a draw (void) keeps the dealer.

    :raises MatchOver: once the match is won.
    :raises Refused: for a round the rules do not allow (the match is unchanged).
    """
    if state.winner is not None:
        raise MatchOver(f"the match was won by {state.winner}")
    dealer = state.dealer
    points = dict.fromkeys(state.players, 0)
    if isinstance(entered, Round):
        _, winner, points = scored_by_name(options, entered)
        state.rounds_scored += 1
        state.dealer = winner
        state.rounds_won[winner] += 1
        state.totals = {name: state.totals[name] + points[name] for name in state.players}
    state.history.append((dealer, points, dict(state.totals)))
    leader = max(state.totals.values())
    leaders = [name for name in state.players if state.totals[name] == leader]
    if any(reaches(options, total) for total in state.totals.values()):
        assert len(leaders) == 1, "only the round's winner gains, so whoever reaches the target leads alone"
        state.winner = leaders[0]
    elif options["rounds_limit"] is not None and state.rounds_scored >= options["rounds_limit"] and len(leaders) == 1:
        state.winner = leaders[0]  # the agreed rounds are played; a tie at the top plays on


def final_bonuses(options: Mapping[str, Any], state: MatchState) -> dict[str, int]:
    """At the end: a box bonus per round won (each player), a game bonus to the winner, and for a shutout
    (no other player won a round) the winner's whole score, bonuses included, doubled."""
    bonuses = dict.fromkeys(state.players, 0)
    if state.winner is None:
        return bonuses
    for name in state.players:
        bonuses[name] = options["box_bonus"] * state.rounds_won[name]
    bonuses[state.winner] += options["game_bonus"]
    shutout = all(state.rounds_won[name] == 0 for name in state.players if name != state.winner)
    if options["shutout_doubles"] and shutout:
        bonuses[state.winner] += state.totals[state.winner] + bonuses[state.winner]
    return bonuses
