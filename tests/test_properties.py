"""Property tests: the fast engine agrees with the brute-force reference in tests/reference.py (and, for whole
rounds under every option, tests/reference_match.py); impossible tables are refused by okgin's own errors.
``OKGIN_MATCH_EXAMPLES=5000`` runs each property that takes ``examples`` that many times."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from reference import (
    best_families,
    deadwood_of,
    families,
    is_meld,
    min_deadwood,
    opponent_deadwood,
    score_laid,
    score_two_player,
)
from reference_match import IllegalKnock, Round, knock_limit, round_scores, scored_by_name
from test_match_reference import examples, random_rules

from scorer.cards import DECK, Card
from scorer.deadwood import all_best_arrangements, best_arrangement, best_discard
from scorer.errors import OkginError
from scorer.layoffs import IllegalLayoffError, Layoff, resolve_knock
from scorer.match import Match, parse_round_input
from scorer.melds import MELD_BY_MASK, Meld
from scorer.proposal import table_status
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


# --- the table as laid


def _random_layoffs(
    rng: random.Random, family: list[frozenset[Card]], table: list[set[Card]], hand: list[Card]
) -> tuple[dict[int, frozenset[Card]], list[Layoff]]:
    """Some legal layoffs of a hand onto the table (grown in place): by meld index, and as the engine takes them.

    Each meld takes a random number of the cards that extend it; the engine is told the
    meld as the knocker laid it (``family``), which names it whatever was laid on it since.
    """
    by_meld: dict[int, frozenset[Card]] = {}
    given: list[Layoff] = []
    for index, meld in enumerate(table):
        laid: list[Card] = []
        for _ in range(rng.randint(0, 3)):
            taken = {card for cards in by_meld.values() for card in cards} | set(laid)
            fits = [card for card in hand if card not in taken and is_meld(meld | set(laid) | {card})]
            if not fits:
                break
            laid.append(rng.choice(fits))
        if laid:
            by_meld[index] = frozenset(laid)
            given += [Layoff(card, Meld.of(family[index])) for card in laid]
            meld |= set(laid)
    return by_meld, given


def _laid_round(seed: int, players: int) -> tuple[str, list[int]] | None:
    """Deal, lay the knocker's hand down in a random legal way (limit 10), lay off at random, and score it.

    Returns the reference's score after checking ours equals it, or None when no knock was legal.
    """
    rng = random.Random(seed)
    if players == 2:
        knocker, opponent = _knock_deal(rng, 10)
        hands = {"K": knocker, "O": opponent}
    else:
        hands = {("K" if name == "P0" else name): cards for name, cards in _multi_deal(rng, players).items()}
    legal = [family for family in families(hands["K"]) if deadwood_of(hands["K"], family) <= 10]
    if not legal:
        return None
    family = list(rng.choice(legal))
    table = [set(meld) for meld in family]
    gin = deadwood_of(hands["K"], frozenset(family)) == 0
    others, given = [], {}
    for name in list(hands)[1:]:
        by_meld, layoffs = ({}, []) if gin else _random_layoffs(rng, family, table, hands[name])
        others.append((hands[name], by_meld))
        given[name] = layoffs
    expected = score_laid(10, hands["K"], family, others, "standard" if players == 2 else "penalty")
    assert expected is not None  # legal by construction
    rules = Rules.preset_named("gin-rummy" if players == 2 else "oklahoma-multi")
    result = score_round(rules, DECK[51], hands, "K", [Meld.of(meld) for meld in family], layoffs=given)
    assert (result.outcome, list(result.points.values())) == expected
    assert result.alternatives == ()  # everything was given: nothing left to choose
    return expected


@SLOW
@given(st.integers(0, 2**32), st.sampled_from([2, 2, 3, 4]))
def test_any_legal_laid_arrangement_scores_as_the_reference_scores_it(seed: int, players: int) -> None:
    """For any legal lay-down (melds, possibly leaving meldable cards out; layoffs as made), our score is the
    brute-force score of that lay-down."""
    _laid_round(seed, players)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_laid_rounds_agree_with_the_reference_on_fixed_seeds(players: int) -> None:
    outcomes = [_laid_round(seed, players) for seed in range(60)]
    assert sum(outcome is not None for outcome in outcomes) >= 40  # most deals knock: the check is not vacuous


@SLOW
@given(deals())
def test_every_least_deadwood_laydown_is_the_result_or_an_alternative(deal: tuple[list[Card], list[Card]]) -> None:
    """Saying when it matters: each way the knocker may lay his least deadwood, and each legal lay-down
    that wins him more than the engine's choice, scores as the result or one of its alternatives."""
    knocker, opponent = deal
    try:
        result = score_round(Rules.preset_named("gin-rummy"), DECK[0], {"K": knocker, "O": opponent}, "K")
    except IllegalKnockError:
        return
    listed = [result.points] + [alternative.points for alternative in result.alternatives]
    assert len(listed) == len({tuple(points.values()) for points in listed})  # one per different score
    hand = frozenset(knocker)
    least = min_deadwood(hand)
    for family in families(hand):
        k = deadwood_of(hand, family)
        if k > 10:
            continue
        o = opponent_deadwood(family, opponent, layoffs=k > 0)  # the opponent lays off as well as he can
        points = {"K": 25 + o, "O": 0} if k == 0 else {"K": o - k, "O": 0} if k < o else {"K": 0, "O": 10 + k - o}
        if k == least or points["K"] > result.points["K"] or points["O"] < result.points["O"]:
            assert points in listed, f"{sorted(map(sorted, family))} scores {points}, not listed"


# --- before a knock: who may knock, and the knock proposed (scorer.proposal)


def _table(rng: random.Random, size: int, players: int) -> dict[str, list[Card]]:
    """Hands mostly of melds and low cards, each the dealt size, a card over or under it, or two over."""
    band = [card for card in DECK if card.rank <= 9]
    table: dict[str, list[Card]] = {}
    for seat in range(players):
        free = [card for card in DECK if all(card not in hand for hand in table.values())]
        count = size + rng.choice([-1, 0, 0, 0, 1, 1, 2])
        low = [card for card in free if card.rank <= 3]
        filler = low if len(low) >= count else free
        table[f"P{seat}"] = _meldy_hand(rng, [card for card in band if card in free], count, filler)
    return table


@examples(100)
@given(st.integers(0, 2**32 - 1), st.sampled_from([2, 2, 3, 4]))
def test_who_may_knock_and_the_knock_proposed_are_the_references(seed: int, players: int) -> None:
    """Each hand's least deadwood (after its best discard, one card over), whether it may knock, and the one knock
    proposed: only with an upcard, exactly one who may knock, every other hand of the dealt size."""
    rng = random.Random(seed)
    rules = random_rules(rng, players)
    size = 10 if players == 2 else 7
    table = _table(rng, size, players)
    upcard = None if rng.random() < 0.1 else rng.choice(DECK)
    status = table_status(rules, upcard, table)
    limit = None if upcard is None else knock_limit(rules.to_dict(), upcard)
    assert status.knock_limit == limit
    may_knock = []
    for name, hand in table.items():
        cards = frozenset(hand)
        if len(hand) > size + 1:
            points = None  # more than a knocker holds: not arranged at all
        elif len(hand) == size + 1:
            points = min(min_deadwood(cards - {card}) for card in cards)
        else:
            points = min_deadwood(cards)
        assert status.hands[name].deadwood_points == points, name
        if limit is not None and len(hand) >= size and points is not None and points <= limit:
            may_knock.append(name)
    assert [name for name, hand in status.hands.items() if hand.can_knock] == may_knock
    one_over = [name for name, hand in table.items() if len(hand) == size + 1]
    scorable = len(may_knock) == 1 and all(len(table[name]) == size for name in table if name not in may_knock)
    expected = may_knock[0] if upcard is not None and len(one_over) <= 1 and scorable else None
    assert status.proposed_knocker == expected
    assert (status.reason is None) == (expected is not None)
    if len(one_over) > 1:
        assert status.reason is not None and "only the knocker holds one more" in status.reason


# --- rounds at the ends of the ranks: ace low, king high, under every rule option

EDGE = [card for card in DECK if card.rank <= 4 or card.rank >= 10]
"""Aces, kings and their neighbours: A-2-3 runs, J-Q-K runs, and the Q-K-A and K-A-2 that are no runs."""
EDGE_MELDS = [meld for meld in MELD_BY_MASK.values() if set(meld.cards) <= set(EDGE) and len(meld.cards) <= 5]


def _edge_hand(rng: random.Random, free: list[Card], size: int, melded: int, low: bool) -> list[Card]:
    """``size`` cards of ``free``: disjoint edge melds of ``melded`` cards (or a few less), the rest at random,
    of the lowest ranks where ``low`` (a knock then is mostly legal)."""
    hand: set[Card] = set()
    for _ in range(10):  # melds that fill exactly ``melded`` cards are found in a few tries
        tried: set[Card] = set()
        for meld in rng.sample(EDGE_MELDS, len(EDGE_MELDS)):
            if len(tried) + len(meld.cards) <= melded and set(meld.cards) <= set(free) - tried:
                tried |= set(meld.cards)
        hand = max(hand, tried, key=len)
        if len(hand) == melded:
            break
    pool = [card for card in free if card not in hand]
    near = [card for card in pool if card.rank <= 2] if low else [card for card in pool if card in EDGE]
    hand |= set(rng.sample(near if len(near) >= size - len(hand) else pool, size - len(hand)))
    return rng.sample(sorted(hand), size)


def _edge_round(rng: random.Random) -> tuple[Rules, Round]:
    """Random options (``random_rules``), an upcard, and hands at the ends of the ranks: the knocker's mostly
    melds (all eleven of his cards at times: a gin whatever he discards), the others' tempting layoffs."""
    players = rng.choice([2, 2, 3, 4])
    rules = random_rules(rng, players)
    size = 10 if players == 2 else 7
    names = ["Ann", "Bob", "Cat", "Dan"][:players]
    knocker = rng.choice(names)
    held = size + (rng.random() < 0.4)
    hands: dict[str, list[Card]] = {}
    free = list(DECK)
    for name in [knocker, *(name for name in names if name != knocker)]:
        count = held if name == knocker else size
        melded = rng.choice([count, count - 1, count - 2, count - 3]) if name == knocker else rng.randint(0, count)
        hands[name] = _edge_hand(rng, free, count, melded, low=name == knocker)
        free = [card for card in free if card not in hands[name]]
    upcard = rng.choice(free + hands[rng.choice(names)])  # a player may have taken the upcard
    return rules, Round(upcard, tuple((name, tuple(hands[name])) for name in names), knocker)


@examples(80)
@given(st.integers(0, 2**32 - 1))
def test_rounds_at_the_ends_of_the_ranks_score_as_the_rules_page_says(seed: int) -> None:
    """Aces low, kings high, big gin (eleven cards in melds), every option: the engine's outcome, winner and points
    are the brute-force reference's (``reference_match``), or refused as it refuses them."""
    rules, round_ = _edge_round(random.Random(seed))
    options = rules.to_dict()
    hands = dict(round_.hands)
    try:
        scores = round_scores(options, round_)
    except IllegalKnock:
        with pytest.raises(IllegalKnockError):
            score_round(rules, round_.upcard, hands, round_.knocker)
        return
    result = score_round(rules, round_.upcard, hands, round_.knocker)
    seats = [name for name, _ in round_.hands]
    start = seats.index(round_.knocker)
    mine = tuple(result.points[name] for name in [*seats[start:], *seats[:start]])
    assert mine in scores, f"{mine} is not among the scores the rules allow: {sorted(scores)}"
    assert scores[mine].outcome == result.outcome
    if rules.scoring == "standard":
        assert (result.outcome, result.winner, result.points) == scored_by_name(options, round_)
    elif len(seats) == 2:  # the knocker lays for his most points; with more players they may hang on the others
        assert mine[0] == max(points[0] for points in scores)


# --- tables that cannot exist are refused by the library's own errors, naming the problem

JUNK = st.one_of(st.none(), st.integers(-2, 60), st.text(max_size=6), st.lists(st.text(max_size=3), max_size=3))
"""What a client may send where a name, a card or a hand belongs."""


def _corrupted(rng: random.Random, junk: object) -> tuple[Rules, list[str], object, dict[object, object], object, str]:
    """A legal-looking deal spoiled one way: (rules, the players dealt, upcard, hands, knocker, what every refusal
    must name)."""
    players = rng.choice([2, 2, 3, 4])
    rules = Rules.preset_named("oklahoma-multi") if players > 2 or rng.random() < 0.3 else Rules()
    size = 10 if players == 2 else 7
    deck = rng.sample(DECK, len(DECK))
    names = ["Ann", "Bob", "Cat", "Dan"][:players]
    dealt = {name: [deck.pop() for _ in range(size)] for name in names}
    upcard: object = deck.pop()
    knocker: object = rng.choice(names)
    spoil = rng.choice(["shared card", "card twice", "no cards", "five players", "junk hand", "junk name", "junk up"])
    victim = rng.choice(names)
    named = ""
    if spoil == "shared card":
        card = rng.choice(dealt[rng.choice([name for name in names if name != victim])])
        dealt[victim] = [*dealt[victim][1:], card]
        named = str(card)
    elif spoil == "card twice":
        dealt[victim] = [*dealt[victim], dealt[victim][0]]
        named = str(dealt[victim][0])
    elif spoil == "no cards":
        dealt[victim] = []
        named = victim
    elif spoil == "five players":
        dealt |= {name: [deck.pop() for _ in range(7)] for name in ["Cat", "Dan", "Eve"]}
        named = "5"
    hands: dict[object, object] = {name: cards for name, cards in dealt.items()}
    if spoil == "junk hand":
        hands[victim] = junk
    elif spoil == "junk name":
        hands[junk if isinstance(junk, str | int | None) else str(junk)] = hands.pop(victim)
        knocker = rng.choice([knocker, junk])
    elif spoil == "junk up":
        upcard = junk
    return rules, names, upcard, hands, knocker, named


def _as_json(value: object) -> object:
    """Cards as text, the rest as it is: what a client sends."""
    if isinstance(value, Card):
        return str(value)
    if isinstance(value, dict):
        return {name: _as_json(cards) for name, cards in value.items()}
    return [_as_json(card) for card in value] if isinstance(value, list) else value


@examples(200)
@given(st.integers(0, 2**32 - 1), JUNK)
def test_impossible_tables_raise_the_librarys_own_error_naming_the_problem(seed: int, junk: object) -> None:
    """A card in two hands or twice in one, a hand of no cards, five players, junk for a hand, a name or the
    upcard: ``score_round``, ``table_status`` and a match's round refuse each with an ``OkginError`` (never a
    ``KeyError``, ``TypeError`` or plain ``ValueError``) naming the problem, or score it if it is after all legal."""
    rules, players, upcard, hands, knocker, named = _corrupted(random.Random(seed), junk)
    note(f"{upcard!r} {hands!r} knocker {knocker!r}")
    calls = [
        lambda: score_round(rules, upcard, hands, knocker),  # type: ignore[arg-type]
        lambda: table_status(rules, upcard, hands),  # type: ignore[arg-type]
        lambda: Match(players, rules).record(
            parse_round_input(_as_json(dict(upcard=upcard, hands=hands, knocker=knocker)))
        ),
    ]
    for call in calls:
        try:
            call()
        except (IllegalKnockError, IllegalLayoffError):
            pass  # a hand spoiled into one that may not knock: the rules, not the table, refuse it
        except OkginError as error:
            assert named in str(error)
