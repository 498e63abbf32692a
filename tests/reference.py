"""An independent brute-force scorer, the yardstick for the fast engine.

Written differently on purpose: no bitmasks, no tables, no shared helpers beyond
``Card``. Melds are found by testing every subset of the hand; arrangements by trying
every family of disjoint melds; layoffs by attaching cards one at a time, in every
order, to the melds as they grow. Slow, simple, obviously right.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable

from scorer.cards import Card

Family = frozenset[frozenset[Card]]


def is_set(cards: Iterable[Card]) -> bool:
    group = list(cards)
    return len(group) in (3, 4) and len({card.rank for card in group}) == 1


def is_run(cards: Iterable[Card]) -> bool:
    group = list(cards)
    ranks = sorted(card.rank for card in group)
    return (
        len(group) >= 3
        and len({card.suit for card in group}) == 1
        and len(set(ranks)) == len(ranks)
        and ranks[-1] - ranks[0] == len(ranks) - 1
    )


def is_meld(cards: Iterable[Card]) -> bool:
    group = list(cards)
    return is_set(group) or is_run(group)


def value(cards: Iterable[Card]) -> int:
    return sum(10 if card.rank >= 10 else card.rank for card in cards)


def melds_of(hand: Iterable[Card]) -> list[frozenset[Card]]:
    """Every subset of the hand that is a meld."""
    cards = sorted(hand)
    return [
        frozenset(group)
        for size in range(3, len(cards) + 1)
        for group in itertools.combinations(cards, size)
        if is_meld(group)
    ]


def families(hand: Iterable[Card]) -> list[Family]:
    """Every family of pairwise disjoint melds of the hand (the empty family included)."""
    melds = melds_of(hand)
    found: list[Family] = []

    def extend(start: int, chosen: list[frozenset[Card]], used: frozenset[Card]) -> None:
        found.append(frozenset(chosen))
        for index in range(start, len(melds)):
            if not melds[index] & used:
                extend(index + 1, [*chosen, melds[index]], used | melds[index])

    extend(0, [], frozenset())
    return found


def deadwood_of(hand: Iterable[Card], family: Family) -> int:
    melded = set().union(*family) if family else set()
    return value(card for card in hand if card not in melded)


@functools.lru_cache(maxsize=200_000)
def min_deadwood(hand: frozenset[Card]) -> int:
    return min(deadwood_of(hand, family) for family in families(hand))


def merged(family: Family) -> Family:
    """The family with runs of one suit that touch joined into one run."""
    groups = [set(meld) for meld in family]
    changed = True
    while changed:
        changed = False
        for first, second in itertools.permutations(groups, 2):
            if is_run(first) and is_run(second) and is_run(first | second):
                first |= second
                groups.remove(second)
                changed = True
                break
    return frozenset(frozenset(group) for group in groups)


def best_families(hand: frozenset[Card]) -> set[Family]:
    """All least-deadwood families, adjacent runs joined."""
    least = min_deadwood(hand)
    return {merged(family) for family in families(hand) if deadwood_of(hand, family) == least}


def layoff_sets(table: Iterable[frozenset[Card]], hand: Iterable[Card]) -> set[frozenset[Card]]:
    """Every set of the hand's cards that can be laid off, one card at a time, onto the table's melds."""
    start = tuple(sorted(tuple(sorted(meld)) for meld in table))
    cards = frozenset(hand)
    reached: set[frozenset[Card]] = set()
    seen: set[tuple[tuple[tuple[Card, ...], ...], frozenset[Card]]] = set()
    stack = [(start, frozenset[Card]())]
    while stack:
        melds, laid = stack.pop()
        if (melds, laid) in seen:
            continue
        seen.add((melds, laid))
        reached.add(laid)
        for card in cards - laid:
            for index, meld in enumerate(melds):
                grown = (*meld, card)
                if is_meld(grown):
                    new = tuple(sorted((*melds[:index], tuple(sorted(grown)), *melds[index + 1 :])))
                    stack.append((new, laid | {card}))
    return reached


def opponent_deadwood(table: Iterable[frozenset[Card]], hand: Iterable[Card], layoffs: bool = True) -> int:
    cards = frozenset(hand)
    options = layoff_sets(list(table), cards) if layoffs else {frozenset()}
    return min(min_deadwood(cards - laid) for laid in options)


def score_two_player(
    limit: int, knocker: Iterable[Card], opponent: Iterable[Card], gin_bonus: int = 25, undercut_bonus: int = 10
) -> tuple[str, int, int] | None:
    """(outcome, knocker's points, opponent's points), or None for an illegal knock.

    The knocker picks, among their least-deadwood families, the one best for them.
    """
    hand = frozenset(knocker)
    k = min_deadwood(hand)
    if k > limit:
        return None
    outcomes = []
    for family in families(hand):
        if deadwood_of(hand, family) != k:
            continue
        o = opponent_deadwood(family, opponent, layoffs=k > 0)
        if k == 0:
            outcomes.append(("gin", gin_bonus + o, 0))
        elif k < o:
            outcomes.append(("knock", o - k, 0))
        else:
            outcomes.append(("undercut", 0, undercut_bonus + k - o))
    return max(outcomes, key=lambda outcome: outcome[1] - outcome[2])


def score_laid(
    limit: int,
    knocker: Iterable[Card],
    family: list[frozenset[Card]],
    others: list[tuple[Iterable[Card], dict[int, frozenset[Card]]]],
    scoring: str = "standard",
) -> tuple[str, list[int]] | None:
    """(outcome, points in seat order, the knocker first) of a round laid exactly so, or None if illegal.

    ``family`` is the knocker's melds as laid (the rest of his cards is deadwood). ``others``
    are, per player in seat order from the knocker's left, (hand, {index of a knocker's
    meld: the cards laid onto it}); each player melds the rest of his hand as well as he
    can. A meld with its layoffs, the earlier players' included, must still be a meld.
    ``scoring`` is "standard" (two players: gin 25, undercut 10) or "penalty" (the
    multi-player table: knock 10, undercut 20, gin 25 and -2 x deadwood).
    """
    hand = frozenset(knocker)
    table = [frozenset(meld) for meld in family]
    melded = frozenset().union(*table)
    if not all(is_meld(meld) for meld in table) or not melded <= hand or sum(map(len, table)) != len(melded):
        return None
    k = value(hand - melded)
    if k > limit:
        return None
    deadwood = [k]
    for cards, laid in others:
        held = frozenset(cards)
        used = [card for onto in laid.values() for card in onto]
        if (used and k == 0) or len(set(used)) != len(used) or not set(used) <= held:
            return None
        for index, onto in laid.items():
            if not is_meld(table[index] | onto):
                return None
            table[index] |= onto
        deadwood.append(min_deadwood(held - set(used)))
    if scoring == "standard":
        (o,) = deadwood[1:]
        if k == 0:
            return "gin", [25 + o, 0]
        return ("knock", [o - k, 0]) if k < o else ("undercut", [0, 10 + k - o])
    if k == 0:
        return "gin", [25, *(-2 * d for d in deadwood[1:])]
    lowest = min(deadwood[1:])
    if lowest > k:
        return "knock", [10, *(-(d - k) for d in deadwood[1:])]
    winner = deadwood[1:].index(lowest) + 1  # ties: nearest the knocker's left
    return "undercut", [20 if seat == winner else -(d - lowest) for seat, d in enumerate(deadwood)]
