"""Property tests: rounds and matches scored by okgin agree with the independent scorer in reference_match.py.

Random deals (2 players, and 3-4 for the multi-player table), random rule options within their
ranges, random lay-downs (none given, the knocker's melds, every layoff) and random sequences
of rounds with draws. ``OKGIN_MATCH_EXAMPLES=5000`` runs each property that many times.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import random
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, note, settings
from hypothesis import strategies as st
from reference import deadwood_of, families, is_meld, min_deadwood
from reference_match import (
    Draw,
    IllegalKnock,
    MatchOver,
    MatchState,
    Refused,
    Round,
    final_bonuses,
    hand_size,
    knock_limit,
    new_match,
    play,
    reaches,
    round_scores,
    scored_by_name,
)

from scorer.cards import DECK, Card
from scorer.layoffs import IllegalLayoffError, Layoff
from scorer.match import Draw as EngineDraw
from scorer.match import Knock, Match, MatchError
from scorer.melds import Meld
from scorer.rules import PRESETS, IllegalKnockError, InvalidHandError, Rules, score_round

HARD = os.environ.get("OKGIN_MATCH_EXAMPLES")


def examples(default: int) -> settings:
    """``default`` examples (a few seconds in all), or ``OKGIN_MATCH_EXAMPLES`` for a hard run."""
    count = int(HARD) if HARD else default
    return settings(max_examples=count, deadline=None, suppress_health_check=[HealthCheck.too_slow])


NAMES = ("Ann", "Bob", "Cat", "Dan")

# --- Rules options, each within its valid values


def random_rules(rng: random.Random, players: int, short: bool = False) -> Rules:
    """Rules for ``players`` players: a preset, then (mostly) every option drawn within its valid values.

    ``short``: a small target and often an agreed number of rounds, so that matches end.
    """

    def bonus() -> int:  # mostly the published values, sometimes zero (a round won for no points) or any
        return rng.choice([0, 10, 20, 25, 50, 100, rng.randint(0, 1000)])

    penalty = players > 2 or rng.random() < 0.4
    options: dict[str, Any] = {
        "knock_limit": rng.choice(["upcard", "upcard", rng.randint(0, 10)]),
        "gin_bonus": rng.choice([25, 20, bonus()]),
        "undercut_bonus": bonus(),
        "target": rng.randint(1, 120) if short else rng.choice([rng.randint(1, 150), rng.randint(1, 10000)]),
        "target_rule": rng.choice([">=", ">"]),
        "ace_upcard_gin_only": rng.random() < 0.5,
        "spade_doubles": rng.random() < 0.5,
        "box_bonus": bonus(),
        "game_bonus": bonus(),
        "shutout_doubles": rng.random() < 0.5,
        "scoring": "penalty" if penalty else "standard",
        "max_players": rng.randint(players, 4) if penalty else 2,
        "penalty_knock_points": bonus(),
        "penalty_undercut_points": bonus(),
        "penalty_gin_multiplier": rng.randint(0, 10),
        "rounds_limit": rng.choice([None, rng.randint(1, 5 if short else 1000)]),
    }
    preset = "oklahoma-multi" if players > 2 else rng.choice(sorted(PRESETS))
    chosen = {name for name in options if rng.random() < 0.85} | {"scoring", "max_players"}
    chosen |= {"target", "rounds_limit"} if short else set()
    made = Rules.preset_named(preset, **{name: options[name] for name in chosen})
    assert all(made.to_dict()[name] == options[name] for name in chosen)
    return made


# --- Deals


def _melds_of_size(size: int) -> list[frozenset[Card]]:
    by_rank = [[card for card in DECK if card.rank == rank] for rank in range(1, 14)]
    sets = [frozenset(group) for cards in by_rank for group in itertools.combinations(cards, size) if size <= 4]
    runs = [
        frozenset(card for card in DECK if card.suit_index == suit and start <= card.rank < start + size)
        for suit in range(4)
        for start in range(1, 15 - size)
    ]
    return sets + runs


MELDS = {size: _melds_of_size(size) for size in (3, 4, 5)}


def _add_melds(rng: random.Random, hand: set[Card], cards: int, taken: set[Card]) -> bool:
    """Add disjoint melds of ``cards`` cards in all (0, or 3 or more) to the hand, none of ``taken``."""
    while cards >= 3:
        size = rng.choice([s for s in (3, 4, 5) if s <= cards and (cards - s == 0 or cards - s >= 3)])
        free = [meld for meld in MELDS[size] if not meld & (hand | taken)]
        if not free:
            return False
        hand |= rng.choice(free)
        cards -= size
    return cards == 0


def _knocker_hand(rng: random.Random, size: int, limit: int, within: bool) -> set[Card]:
    """Melds and a little deadwood, within the limit where ``within`` (else any cards: perhaps illegal)."""
    for _ in range(20):
        hand: set[Card] = set()
        dead = rng.randint(0, min(size - 3, 4, limit if within else 4))  # each deadwood card is worth 1 or more
        if not _add_melds(rng, hand, size - dead, set()):
            continue
        budget = limit if within else 1000
        for _ in range(dead):
            free = [card for card in DECK if card not in hand and card.value <= budget]
            if not free:
                break
            card = rng.choice(free)
            hand.add(card)
            budget -= card.value
        if len(hand) == size:
            return hand
    return set(rng.sample(DECK, size))


def _hand_with_deadwood(rng: random.Random, size: int, points: int, taken: set[Card]) -> set[Card] | None:
    """Melds and deadwood cards worth ``points`` in all (perhaps less, if they meld), none of ``taken``; or None."""
    for _ in range(10):
        hand: set[Card] = set()
        dead = rng.randint(min(1, points), min(size - 3, 4, points))
        if dead == size - 1 or dead == size - 2 or not _add_melds(rng, hand, size - dead, taken):
            continue
        left = points
        for count in range(dead, 0, -1):
            fits = [
                card
                for card in DECK
                if card not in hand | taken and (card.value == left if count == 1 else card.value <= left - (count - 1))
            ]
            if not fits:
                break
            card = rng.choice(fits)
            hand.add(card)
            left -= card.value
        if len(hand) == size and left == 0:
            return hand
    return None


def _neighbours(hand: set[Card]) -> list[Card]:
    """Cards that could extend a meld of the hand: the same rank, or the next rank in the same suit."""
    return [
        card
        for card in DECK
        if card not in hand
        and any(
            card.rank == other.rank or (card.suit == other.suit and abs(card.rank - other.rank) == 1) for other in hand
        )
    ]


def deal(
    rng: random.Random,
    options: dict[str, Any],
    seats: Sequence[str],
    knocker: str,
    laydown: str,
    legal: bool = True,
    extra: bool = True,
) -> Round:
    """A round knocked by ``knocker``: random hands and upcard, the lay-down given as ``laydown`` says:
    "none", "melds" (the knocker's), "some" (melds and some players' layoffs) or "all".

    With ``legal`` the knocker's hand is dealt again until his knock is legal; with ``extra`` he sometimes
    holds his discard too.
    """
    size = 10 if len(seats) == 2 else 7
    for _ in range(30):
        upcard = rng.choice(DECK)
        limit = knock_limit(options, upcard)
        hand = _knocker_hand(rng, size + (extra and rng.random() < 0.2), limit, within=legal or rng.random() < 0.5)
        if not legal or _legal(hand, size, limit):
            break
    hands: dict[str, tuple[Card, ...]] = {}
    taken = set(hand)
    keeps = [frozenset(hand - {card}) for card in hand] if len(hand) > size else [frozenset(hand)]
    near = min(map(min_deadwood, keeps))  # the knocker's deadwood: the others' is often near it
    for name in seats:
        if name == knocker:
            continue
        close = _hand_with_deadwood(rng, size, max(0, near + rng.choice([-1, 0, 0, 1])), taken)
        if close and rng.random() < 0.35:  # ties (an undercut at equal deadwood, two players tied) are common
            taken |= close
            hands[name] = tuple(rng.sample(sorted(close), len(close)))
            continue
        pool = [card for card in _neighbours(hand) if card not in taken]
        mine: set[Card] = set(rng.sample(pool, min(len(pool), rng.randint(0, 3))))
        if rng.random() < 0.5:
            _add_melds(rng, mine, 3, taken)
        mine |= set(rng.sample([card for card in DECK if card not in taken | mine], size - len(mine)))
        taken |= mine
        hands[name] = tuple(rng.sample(sorted(mine), len(mine)))
    hands[knocker] = tuple(rng.sample(sorted(hand), len(hand)))
    ordered = tuple((name, hands[name]) for name in seats)
    if laydown == "none":
        return Round(upcard, ordered, knocker)
    discards = [card for card in sorted(hand) if not legal or _legal(hand - {card}, size, limit)]
    discard = rng.choice(discards) if len(hand) == size + 1 and rng.random() < 0.7 else None
    kept = hand - {discard} if discard else hand
    if len(kept) > size:  # melds for one legal discard; the engine chooses it among the cards they leave out
        kept = kept - {rng.choice(discards)}
    legal_families = [f for f in families(kept) if deadwood_of(kept, f) <= limit] or [frozenset()]
    melds = tuple(sorted(rng.choice(legal_families), key=sorted))
    if laydown == "melds":
        return Round(upcard, ordered, knocker, melds, discard)
    melded = frozenset().union(*melds, set())
    unmelded = [card.value for card in hand - melded - {discard}]
    engine_discards = len(hand) == size + 1 and discard is None  # one of the unmelded cards, the highest
    k = sum(unmelded) - (max(unmelded) if engine_discards else 0)
    layoffs = _random_layoffs(rng, melds, seats, knocker, hands, gin=k == 0, some=laydown == "some")
    return Round(upcard, ordered, knocker, melds, discard, layoffs)


def _legal(hand: set[Card], size: int, limit: int) -> bool:
    if len(hand) == size:
        return min_deadwood(frozenset(hand)) <= limit
    return any(min_deadwood(frozenset(hand - {card})) <= limit for card in hand)


def _random_layoffs(
    rng: random.Random,
    melds: tuple[frozenset[Card], ...],
    seats: Sequence[str],
    knocker: str,
    hands: dict[str, tuple[Card, ...]],
    gin: bool,
    some: bool,
) -> tuple[tuple[str, tuple[tuple[Card, int], ...]], ...]:
    """Random legal layoffs, player by player from the knocker's left, onto the table as it grows."""
    start = list(seats).index(knocker)
    table = list(melds)
    given = []
    for name in [*seats[start + 1 :], *seats[:start]]:
        laid: list[tuple[Card, int]] = []
        for _ in range(0 if gin else rng.randint(0, 4)):
            used = {card for card, _ in laid}
            moves = [
                (card, index)
                for card in hands[name]
                if card not in used
                for index, meld in enumerate(table)
                if is_meld(meld | {card})
            ]
            if not moves:
                break
            card, index = rng.choice(moves)
            laid.append((card, index))
            table[index] = table[index] | {card}
        if not some or rng.random() < 0.6:
            given.append((name, tuple(laid)))
        else:
            break  # the rest are the engine's choice (the table after this player depends on it)
    return tuple(given)


def engine_arguments(round_: Round) -> dict[str, Any]:
    """``score_round``'s lay-down arguments for a reference round (layoffs name the meld as the knocker laid it)."""
    melds = None if round_.melds is None else [Meld.of(sorted(meld)) for meld in round_.melds]
    layoffs = None
    if round_.layoffs is not None:
        assert round_.melds is not None
        layoffs = {
            name: [Layoff(card, Meld.of(sorted(round_.melds[index]))) for card, index in laid]
            for name, laid in round_.layoffs
        }
    return {"knocker_melds": melds, "discard": round_.discard, "layoffs": layoffs}


def _layoffs_given(round_: Round) -> bool:
    return round_.layoffs is not None and len(round_.layoffs) == len(round_.hands) - 1


def _exact(options: dict[str, Any], round_: Round) -> bool:
    """Whether the rules page alone fixes the score: two players at the two-player table (the knocker lays for
    his best: his points less the opponent's), or every choice that matters is given. At the penalty table the
    page does not say what a knocker prefers between lay-downs that win him the same and cost the others
    differently (two discards, two arrangements), and with 3-4 players a player's equal ways to lay off may
    change what the next one can lay off.
    """
    if options["scoring"] == "standard":
        return True
    hand = dict(round_.hands)[round_.knocker]
    discard_known = round_.discard is not None or len(hand) in (7, 10)
    return round_.melds is not None and discard_known and (len(round_.hands) == 2 or _layoffs_given(round_))


# --- Rounds


SEEDS = st.integers(0, 2**32 - 1)
"""Each example is one seed of ``random.Random``: options and deals spread evenly, and a failure reads back."""


def random_round(rng: random.Random, laydowns: Sequence[str] = ("none", "melds", "some", "all")) -> tuple[Rules, Round]:
    players = rng.choice([2, 2, 3, 4])
    made = random_rules(rng, players)
    seats = NAMES[:players]
    return made, deal(rng, made.to_dict(), seats, rng.choice(seats), rng.choice(laydowns))


def described(round_: Round | Draw) -> str:
    if isinstance(round_, Draw):
        return "draw"
    hands = "; ".join(f"{name}: {' '.join(map(str, cards))}" for name, cards in round_.hands)
    melds = None if round_.melds is None else " | ".join(" ".join(map(str, sorted(meld))) for meld in round_.melds)
    return (
        f"upcard {round_.upcard}; {hands}; knocker {round_.knocker}; melds {melds}; discard {round_.discard}; "
        f"layoffs {round_.layoffs}"
    )


@examples(60)
@given(SEEDS)
def test_a_round_scores_as_the_rules_page_says(seed: int) -> None:
    """Outcome, winner and points of one knock under any options, as laid where given, else as the knocker
    lays for his best (with 3-4 players, among the scores the others' equal choices allow)."""
    made, round_ = random_round(random.Random(seed))
    note(f"{made}\n{described(round_)}")
    options = made.to_dict()
    scores = round_scores(options, round_)
    result = score_round(made, round_.upcard, dict(round_.hands), round_.knocker, **engine_arguments(round_))
    assert result.knock_limit == knock_limit(options, round_.upcard)
    assert result.doubled == (options["spade_doubles"] and round_.upcard.suit == "S")
    if _exact(options, round_):
        assert (result.outcome, result.winner, result.points) == scored_by_name(options, round_)
        return
    seats = [name for name, _ in round_.hands]
    start = seats.index(round_.knocker)
    mine = tuple(result.points[name] for name in [*seats[start:], *seats[:start]])
    assert mine in scores, f"{mine} is not among the scores the rules allow: {sorted(scores)}"
    assert scores[mine].outcome == result.outcome
    most = max(points[0] for points in scores)
    if len(round_.hands) == 2 or _layoffs_given(round_):  # the knocker lays for the most points
        assert mine[0] == most
    else:  # what he wins may depend on how the others break their ties
        assert mine[0] <= most


@examples(30)
@given(SEEDS)
def test_illegal_knocks_and_wrong_hands_are_refused_as_the_rules_page_says(seed: int) -> None:
    """Random hands (often over the knock limit), sometimes a card too many or too few: the engine refuses
    exactly what the reference refuses, and an illegal knock as an illegal knock."""
    rng = random.Random(seed)
    players = rng.choice([2, 2, 3, 4])
    made = random_rules(rng, players)
    options = made.to_dict()
    seats = NAMES[:players]
    knocker = rng.choice(seats)
    round_ = deal(rng, options, seats, knocker, rng.choice(["none", "melds"]), legal=False)
    if rng.random() < 0.3:
        name = rng.choice(seats)
        hands = dict(round_.hands)
        spare = [card for card in DECK if all(card not in cards for cards in hands.values())]
        hands[name] = hands[name][:-1] if rng.random() < 0.5 else (*hands[name], rng.choice(spare))
        round_ = Round(round_.upcard, tuple(hands.items()), knocker, round_.melds, round_.discard)
    note(f"{made}\n{described(round_)}")
    try:
        round_scores(options, round_)
        refused: type[Exception] | None = None
    except IllegalKnock:
        refused = IllegalKnockError
    except Refused:
        refused = InvalidHandError
    arguments = engine_arguments(round_)
    if refused is None:
        score_round(made, round_.upcard, dict(round_.hands), knocker, **arguments)
    else:
        with pytest.raises(refused):
            score_round(made, round_.upcard, dict(round_.hands), knocker, **arguments)


@examples(30)
@given(SEEDS, st.integers(2, 4))
def test_a_match_takes_as_many_players_as_its_rules_allow(seed: int, players: int) -> None:
    """Two players for the two-player table; 2 up to ``max_players`` for the penalty table."""
    made = random_rules(random.Random(seed), random.Random(seed).choice([2, 3, 4]))
    try:
        hand_size(made.to_dict(), players)
    except Refused:
        with pytest.raises(InvalidHandError):
            Match(NAMES[:players], made)
        return
    assert list(Match(NAMES[:players], made).players) == list(NAMES[:players])


# --- Matches


def random_match(rng: random.Random) -> tuple[Rules, list[str], str, list[Round | Draw]]:
    """Rules, players, the first dealer and up to 10 rounds: draws, knocks, and (two players) a knock mirrored
    so that the other player wins the same and the totals may tie."""
    players = rng.choice([2, 2, 3, 4])
    made = random_rules(rng, players, short=True)
    seats = list(NAMES[:players])
    standard = made.scoring == "standard"
    # At the penalty table the knocker's melds and discard are given, so that the rules page fixes the score.
    laydowns = ["none", "melds", "all"] if standard else ["melds", "all"] if players == 2 else ["all"]
    entered: list[Round | Draw] = []
    for _ in range(rng.randint(1, 10)):
        knocks = [round_ for round_ in entered if isinstance(round_, Round)]
        if rng.random() < 0.2:
            entered.append(Draw())
        elif players == 2 and knocks and rng.random() < 0.4:
            entered.append(_mirrored(knocks[-1]))
        else:
            knocker = rng.choice(seats)
            entered.append(deal(rng, made.to_dict(), seats, knocker, rng.choice(laydowns), extra=standard))
    dealer = rng.choice(seats)
    first = entered[0]
    if isinstance(first, Round) and players == 2 and rng.random() < 0.35:  # tied after the 2 agreed rounds
        entered[1:2] = [_mirrored(first)]
        made = dataclasses.replace(made, rounds_limit=2)
    if rng.random() < 0.4:  # a target some total reaches exactly: ">=" ends the match there, ">" plays on
        state = new_match(seats, dealer)
        for round_ in entered:
            play({**made.to_dict(), "target": 10_000, "rounds_limit": None}, state, round_)
        reached = [total for _, _, totals in state.history for total in totals.values() if total >= 1]
        if reached:
            made = dataclasses.replace(made, target=min(rng.choice(reached), 10_000))
    return made, seats, dealer, entered


def _mirrored(round_: Round) -> Round:
    """The same two-player round with the hands swapped: the other player knocks, laying the same melds."""
    (first, first_hand), (second, second_hand) = round_.hands
    hands = ((first, second_hand), (second, first_hand))
    return Round(round_.upcard, hands, second if round_.knocker == first else first, round_.melds, round_.discard)


def _record(match: Match, entered: Round | Draw) -> None:
    if isinstance(entered, Draw):
        match.record_draw()
    else:
        match.record_round(entered.upcard, dict(entered.hands), entered.knocker, **engine_arguments(entered))


def _as_engine_input(entered: Round | Draw) -> Knock | EngineDraw:
    if isinstance(entered, Draw):
        return EngineDraw()
    return Knock.of(entered.upcard, dict(entered.hands), entered.knocker, **engine_arguments(entered))


@examples(30)
@given(SEEDS)
@example(0).via("a total exactly the target, by '>' (plays on); a shutout with box and game bonuses")
@example(1).via("a total exactly the target, by '>=' (the match ends)")
@example(6).via("tied at the top after the agreed rounds: the match plays on")
def test_a_match_keeps_totals_the_end_the_winner_bonuses_and_dealers_as_the_rules_page_says(seed: int) -> None:
    """Per round its dealer, points and running totals; then the winner, the end (target or agreed rounds, a tie
    plays on, nothing after the end), the final bonuses, the next dealer; the same after undoing rounds."""
    rng = random.Random(seed)
    made, seats, dealer, entered = random_match(rng)
    note(f"{made}\nfirst dealer {dealer}\n" + "\n".join(map(described, entered)))
    options = made.to_dict()
    match = Match(seats, made, dealer=dealer)
    state = new_match(seats, dealer)
    for number, round_ in enumerate(entered, start=1):
        try:
            play(options, state, round_)
        except MatchOver:
            with pytest.raises(MatchError):
                _record(match, round_)
            break
        _record(match, round_)
        recorded = match.rounds[-1]
        assert (recorded.number, recorded.dealer) == (number, state.history[-1][0])
        assert (recorded.points, recorded.totals_after) == state.history[-1][1:]
        assert_same_state(match, state, options)
    event(_how_it_ended(options, state))
    # undo: the match before the last rounds is the reference's after fewer rounds
    keep = rng.randint(0, len(match.rounds))
    while len(match.rounds) > keep:
        match.undo_last()
    again = new_match(seats, dealer)
    for round_ in entered[:keep]:
        play(options, again, round_)
    assert_same_state(match, again, options)
    # and the same rounds replayed from what was entered score the same
    replayed = Match(seats, made, dealer=dealer)
    replayed.replay([_as_engine_input(round_) for round_ in entered[:keep]])
    assert replayed.to_dict() == match.to_dict()


def _how_it_ended(options: dict[str, Any], state: MatchState) -> str:
    """What the example exercised, for ``--hypothesis-show-statistics``."""
    agreed = options["rounds_limit"] is not None and state.rounds_scored >= options["rounds_limit"]
    if state.winner is None:
        return "a tie at the top plays on after the agreed rounds" if agreed else "not finished"
    if not any(reaches(options, total) for total in state.totals.values()):
        return "ended after the agreed rounds"
    others = [name for name in state.players if name != state.winner]
    return "ended at the target" + (", a shutout" if all(state.rounds_won[name] == 0 for name in others) else "")


def assert_same_state(match: Match, state: MatchState, options: dict[str, Any]) -> None:
    assert match.totals == state.totals
    assert (match.winner, match.finished) == (state.winner, state.winner is not None)
    assert match.dealer == state.dealer
    bonuses = final_bonuses(options, state)
    assert match.final_bonuses() == bonuses
    assert match.final_totals == {name: state.totals[name] + bonuses[name] for name in state.players}
    data = match.to_dict()
    assert data["rounds_scored"] == state.rounds_scored
    limit = options["rounds_limit"]
    assert data["agreed_rounds_played"] == (limit is not None and state.rounds_scored >= limit)


def test_layoffs_the_table_does_not_allow_are_refused_by_both() -> None:
    """One random layoff by the knocker's left-hand neighbour (onto a gin hand, onto a meld it does not
    extend, or a legal one): the engine refuses exactly what the reference refuses."""
    rng = random.Random(7)
    made = Rules.preset_named("oklahoma-multi")
    refusals = []
    for _ in range(60):
        round_ = deal(rng, made.to_dict(), NAMES[:3], "Ann", "all", extra=False)
        if not round_.melds:
            continue
        layoff = (rng.choice(round_.hands[1][1]), rng.randrange(len(round_.melds)))
        tried = dataclasses.replace(round_, layoffs=(("Bob", (layoff,)),))
        try:
            round_scores(made.to_dict(), tried)
            refusals.append(False)
        except Refused:
            refusals.append(True)
        arguments = engine_arguments(tried)
        if refusals[-1]:
            with pytest.raises(IllegalLayoffError):
                score_round(made, tried.upcard, dict(tried.hands), "Ann", **arguments)
        else:
            score_round(made, tried.upcard, dict(tried.hands), "Ann", **arguments)
    assert True in refusals and False in refusals
