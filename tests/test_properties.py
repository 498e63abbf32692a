"""Property tests: the fast engine agrees with the brute-force reference in tests/reference.py."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import best_families, min_deadwood, opponent_deadwood, score_two_player

from scorer.cards import DECK, Card
from scorer.deadwood import all_best_arrangements, best_arrangement, best_discard
from scorer.layoffs import resolve_knock
from scorer.melds import MELD_BY_MASK, Meld
from scorer.rules import IllegalKnockError, Rules, score_round

# A narrow band of ranks in all four suits makes sets, runs, ties and layoffs common.
MELD_RICH = [card for card in DECK if 4 <= card.rank <= 9]
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def hands(max_size: int = 11) -> st.SearchStrategy[list[Card]]:
    """Hands of 0..max_size distinct cards, half of them drawn from the meld-rich band."""
    pool = st.sampled_from([list(DECK), MELD_RICH])
    return pool.flatmap(lambda cards: st.lists(st.sampled_from(cards), unique=True, max_size=max_size))


def _meldy_hand(rng: random.Random, available: list[Card], size: int, filler: list[Card]) -> list[Card]:
    """A hand of random disjoint melds from ``available``, topped up from ``filler``."""
    hand: set[Card] = set()
    room = size - rng.randint(1, 5)
    for meld in rng.sample(BAND_MELDS, len(BAND_MELDS)):
        if len(hand) + len(meld.cards) <= room and set(meld.cards) <= set(available) - hand:
            hand |= set(meld.cards)
    hand |= set(rng.sample([card for card in filler if card not in hand], size - len(hand)))
    return rng.sample(sorted(hand), size)


def _knock_deal(rng: random.Random, size: int) -> tuple[list[Card], list[Card]]:
    """A knocker mostly of melds and low cards (knocks are mostly legal), an opponent partly of melds."""
    band = [card for card in DECK if card.rank <= 9]
    knocker = _meldy_hand(rng, band, size, [card for card in band if card.rank <= 3])
    rest = [card for card in band if card not in knocker]
    return knocker, _meldy_hand(rng, rest, size, rest)


BAND_MELDS = [meld for meld in MELD_BY_MASK.values() if meld.cards[-1].rank <= 9 and len(meld.cards) <= 4]


def deals(size: int = 10) -> st.SearchStrategy[tuple[list[Card], list[Card]]]:
    """Two disjoint hands; the knocker's is built from melds and low cards."""
    return st.randoms(use_true_random=False).map(lambda rng: _knock_deal(rng, size))


@FAST
@given(hands())
def test_least_deadwood_matches_the_reference(hand: list[Card]) -> None:
    arrangement = best_arrangement(hand)
    assert arrangement.points == min_deadwood(frozenset(hand))
    melded = [card for meld in arrangement.melds for card in meld.cards]
    assert sorted(melded + list(arrangement.deadwood)) == sorted(hand)
    assert all(Meld.of(meld.cards) == meld for meld in arrangement.melds)
    assert sum(card.value for card in arrangement.deadwood) == arrangement.points


@FAST
@given(hands(max_size=10))
def test_all_best_arrangements_are_the_reference_families(hand: list[Card]) -> None:
    mine = {frozenset(frozenset(meld.cards) for meld in a.melds) for a in all_best_arrangements(hand)}
    assert mine == best_families(frozenset(hand))


@FAST
@given(hands(max_size=10), st.randoms(use_true_random=False))
def test_tie_breaking_does_not_depend_on_card_order(hand: list[Card], rng) -> None:  # type: ignore[no-untyped-def]
    shuffled = list(hand)
    rng.shuffle(shuffled)
    assert best_arrangement(shuffled) == best_arrangement(hand)
    assert all_best_arrangements(shuffled) == all_best_arrangements(hand)


@settings(max_examples=80, deadline=None)
@given(st.permutations(DECK).map(lambda cards: cards[:11]))
def test_best_discard_leaves_the_least_deadwood(hand: list[Card]) -> None:
    card, arrangement = best_discard(hand)
    assert arrangement.points == min(min_deadwood(frozenset(hand) - {c}) for c in hand)
    assert arrangement == best_arrangement([c for c in hand if c != card])


@SLOW
@given(deals(), st.booleans())
def test_joint_layoffs_match_the_reference(deal: tuple[list[Card], list[Card]], gin: bool) -> None:
    knocker, opponent = deal
    melds = best_arrangement(knocker).melds
    result = resolve_knock(melds, opponent, allow_layoffs=not gin)
    table = [frozenset(meld.cards) for meld in melds]
    assert result.deadwood_points == opponent_deadwood(table, opponent, layoffs=not gin)
    shown = [c for m in result.melds for c in m.cards] + [x.card for x in result.layoffs] + list(result.deadwood)
    assert sorted(shown) == sorted(opponent)


def assert_scored_as_the_reference_does(knocker: list[Card], opponent: list[Card]) -> None:
    """Our two-player round (gin-rummy limit 10) against the brute-force reference: outcome and points."""
    expected = score_two_player(10, knocker, opponent)
    try:
        result = score_round(Rules.preset_named("gin-rummy"), DECK[0], {"K": knocker, "O": opponent}, "K")
    except IllegalKnockError:
        assert expected is None
        return
    assert (result.outcome, result.points["K"], result.points["O"]) == expected


@SLOW
@given(deals())
def test_two_player_round_scores_match_the_reference(deal: tuple[list[Card], list[Card]]) -> None:
    assert_scored_as_the_reference_does(*deal)


@pytest.mark.parametrize("seed", range(3))
def test_reference_agrees_on_fixed_random_deals(seed: int) -> None:
    """A deterministic sweep (no hypothesis shrinking) so CI always covers the same deals."""
    rng = random.Random(seed)
    for _ in range(40):
        assert_scored_as_the_reference_does(*_knock_deal(rng, 10))


def _multi_deal(rng: random.Random, players: int) -> dict[str, list[Card]]:
    band = [card for card in DECK if card.rank <= 9]
    knocker = _meldy_hand(rng, band, 7, [card for card in band if card.rank <= 3])
    rest = [card for card in band if card not in knocker]
    hands = {"P0": knocker}
    for seat in range(1, players):
        hands[f"P{seat}"] = _meldy_hand(rng, rest, 7, rest)
        rest = [card for card in rest if card not in hands[f"P{seat}"]]
    return hands


@settings(max_examples=80, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from([3, 4]))
def test_multi_player_rounds_keep_the_penalty_table(rng: random.Random, players: int) -> None:
    hands = _multi_deal(rng, players)
    try:
        result = score_round(Rules.preset_named("oklahoma-multi"), DECK[51], hands, "P0")
    except IllegalKnockError:
        return
    deadwood = {name: player.deadwood_points for name, player in result.hands.items()}
    for name, player in result.hands.items():
        assert sorted(player.cards) == sorted(hands[name])
        assert player.deadwood_points == min_deadwood(frozenset(hands[name]) - {x.card for x in player.layoffs})
        for layoff in player.layoffs:  # each layoff extends a meld on the table into a meld
            Meld.of((*layoff.onto.cards, layoff.card))
    winner = result.winner
    if result.outcome == "gin":
        assert result.hands["P0"].layoffs == () and all(not p.layoffs for p in result.hands.values())
        assert all(result.points[n] == -2 * deadwood[n] for n in hands if n != winner)
    else:
        assert deadwood[winner] == min(deadwood[n] for n in hands if n != "P0" or result.outcome == "knock")
        assert all(result.points[n] == deadwood[winner] - deadwood[n] for n in hands if n != winner)
    assert result.points[winner] == {"gin": 25, "knock": 10, "undercut": 20}[result.outcome]
