"""``okgin solve`` and ``okgin score``: the scoring engine from the command line.

Light on purpose: only click and the pure ``scorer`` modules are imported, so both
commands start quickly. Bad input exits with status 2 and one line on stderr.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from scorer.cards import Card, format_cards, parse_cards
from scorer.cli import fail
from scorer.deadwood import Arrangement, all_best_arrangements, best_arrangement, best_discard
from scorer.errors import OkginError
from scorer.laydown import parse_layoffs_by_player
from scorer.layoffs import PlayerResult, format_layoffs
from scorer.melds import format_melds, parse_melds
from scorer.rules import PRESETS, Alternative, InvalidHandError, InvalidRulesError, RoundResult, Rules, score_round

T = TypeVar("T")


def _arrangement_text(arrangement: Arrangement) -> str:
    return (
        f"melds {format_melds(arrangement.melds)}; deadwood {_deadwood_text(arrangement.deadwood, arrangement.points)}"
    )


def _deadwood_text(cards: Sequence[Card], points: int) -> str:
    return f"{format_cards(cards) or 'none'} = {points}"


@click.command()
@click.argument("cards", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option("--all", "show_all", is_flag=True, help="Also list every other arrangement with the same deadwood.")
def solve(cards: tuple[str, ...], as_json: bool, show_all: bool) -> None:
    """Best melds and deadwood of a hand of 0 to 11 CARDS (separate or one quoted string).

    For 11 cards, the best discard is chosen first. JSON: {"melds": [["AS","2S","3S"]],
    "deadwood": ["KD"], "deadwood_points": 10} plus "discard" for 11 cards and
    "alternatives" with --all.
    """
    try:
        hand = parse_cards(" ".join(cards))
        discard: Card | None = None
        if len(hand) == 11:
            discard, arrangement = best_discard(hand)
            hand = [card for card in hand if card != discard]
        arrangement = best_arrangement(hand)
        alternatives = all_best_arrangements(hand)[1:] if show_all else []
    except OkginError as error:
        fail(str(error))
    if as_json:
        data: dict[str, Any] = arrangement.to_dict()
        if discard is not None:
            data["discard"] = str(discard)
        if show_all:
            data["alternatives"] = [other.to_dict() for other in alternatives]
        click.echo(json.dumps(data))
        return
    if discard is not None:
        click.echo(f"discard:  {discard}")
    click.echo(f"melds:    {format_melds(arrangement.melds)}")
    click.echo(f"deadwood: {_deadwood_text(arrangement.deadwood, arrangement.points)}")
    for other in alternatives:
        click.echo(f"also:     {_arrangement_text(other)}")


def player_text(result: PlayerResult) -> str:
    """``melds 7C 7D 7H; layoffs 10S onto 7S 8S 9S; deadwood 2C = 2``."""
    laid = f"; layoffs {format_layoffs(result.layoffs)}" if result.layoffs else ""
    return (
        f"melds {format_melds(result.melds)}{laid}; deadwood {_deadwood_text(result.deadwood, result.deadwood_points)}"
    )


def _points_text(result: RoundResult | Alternative, knocker: str) -> str:
    """``knock: knocker scores 18`` where the loser scores nothing (two players' standard scoring); else every
    player's points, ``undercut: Cat +20, Ann -2, Bob -4`` (penalty scoring, two players too)."""
    points = result.points
    if len(points) == 2 and not any(points[name] for name in points if name != result.winner):
        return f"{result.outcome}: {result.winner} scores {points[result.winner]}"
    order = [result.winner, *(name for name in points if name != result.winner)]
    return f"{result.outcome}: " + ", ".join(f"{name} {points[name]:+d}" for name in order)


GIVE_THE_LAYDOWN = "say how it was laid with --knocker-melds, --discard and --layoffs to score it as laid"
_CHOICE_WORDS = {"knocker_melds": "the knocker's melds", "discard": "the knocker's discard"}


def alternatives_text(result: RoundResult, hint: str = GIVE_THE_LAYDOWN) -> list[str]:
    """Lines saying what the score depends on and how each other lay-down scores (none when nothing does)."""
    if not result.alternatives:
        return []
    depends = [_CHOICE_WORDS.get(part, f"{part}'s layoffs") for part in result.depends_on]
    lines = [f"the score depends on {' and '.join(depends)}; laid otherwise:"]
    for alternative in result.alternatives:
        laid = alternative.laydown
        parts = []
        if "knocker_melds" in alternative.differs and laid.knocker_melds is not None:
            deadwood = alternative.deadwood[result.knocker]
            parts.append(f"{result.knocker} lays {format_melds(laid.knocker_melds)} (deadwood {deadwood})")
        if "discard" in alternative.differs:
            parts.append(f"{result.knocker} discards {laid.discard}")
        layoffs = laid.layoffs_by_player
        parts += [f"{name} lays off {format_layoffs(layoffs[name])}" for name in alternative.differs if name in layoffs]
        lines.append(f"  if {'; '.join(parts)}: {_points_text(alternative, result.knocker)}")
    return [*lines, hint]


def _result_text(result: RoundResult) -> list[str]:
    lines = [f"upcard {result.upcard}: knock limit {result.knock_limit}"]
    if result.discard is not None:
        lines.append(f"{result.knocker} discards {result.discard}")
    width = max(len(name) for name in result.hands) + 2
    lines += [f"{name + ':':<{width}}{player_text(player)}" for name, player in result.hands.items()]
    doubled = " (doubled: spade upcard)" if result.doubled else ""
    lines.append(_points_text(result, result.knocker) + doubled)
    return lines + alternatives_text(result)


_SCORED_BY = {
    "undercut_bonus": ("--undercut-bonus", "standard"),
    "penalty_knock_points": ("--knock-points", "penalty"),
    "penalty_undercut_points": ("--undercut-points", "penalty"),
    "penalty_gin_multiplier": ("--gin-multiplier", "penalty"),
}
"""The options that only one scoring counts: the command-line option and that scoring."""


def _check_scored(rules: Rules, options: dict[str, Any], taken: str = "") -> None:
    """Refuse an option these rules' scoring does not count: given, it would be ignored without a word. ``taken``
    says why the rules are what the user did not type.

    :raises InvalidRulesError: naming the option and what the rules score with instead.
    """
    undercut = {"standard": "--undercut-bonus", "penalty": "--undercut-points"}
    for name in options:
        flag, scoring = _SCORED_BY.get(name, ("", rules.scoring))
        if scoring != rules.scoring:
            hint = f" (its undercut: {undercut[rules.scoring]})" if flag in undercut.values() else ""
            raise InvalidRulesError(
                f"{flag} counts in {scoring} scoring only; --rules {rules.preset}{taken} uses {rules.scoring} scoring"
                f"{hint}"
            )


def _option(name: str, parse: Callable[[str], T], text: str | None) -> T | None:
    """An option's value read by ``parse`` (None when not given); a user error names the option."""
    if text is None:
        return None
    try:
        return parse(text)
    except OkginError as error:
        fail(f"{name}: {error}")


def _named_hand(text: str, default: str) -> tuple[str, list[Card]]:
    """A hand written ``"Ann: 2C 7C ..."`` or just its cards (then named ``default``)."""
    name, colon, cards = text.partition(":")
    if colon and name.strip():
        return name.strip(), parse_cards(cards)
    return default, parse_cards(text)


@click.command()
@click.option("--upcard", required=True, help="The upcard, e.g. KS (sets the Oklahoma knock limit).")
@click.option(
    "--knocker",
    "knocker_cards",
    required=True,
    help='The knocker\'s 10 cards (7 with 3-4 players), or one more to choose the discard; "Ann: ..." names him.',
)
@click.option(
    "--opponent",
    "opponent_cards",
    required=True,
    multiple=True,
    help="An opponent's cards; repeat for 3-4 players, in seat order from the knocker's left. \"Bob: ...\" names one.",
)
@click.option(
    "--knocker-melds", default=None, help='The knocker\'s melds as laid, split by "|": "AS 2S 3S | 7H 7D 7C".'
)
@click.option("--discard", default=None, help="The knocker's discard, one of his 11 (or 8) cards.")
@click.option(
    "--layoffs",
    default=None,
    help='Layoffs as made: "10S 9S onto JS QS KS" (one opponent) or "Bob: 10S onto 7S 8S 9S; Cat: none".',
)
@click.option(
    "--rules",
    "preset",
    type=click.Choice(sorted(PRESETS)),
    default="oklahoma",
    show_default=True,
    help="oklahoma-multi is taken for 3-4 players.",
)
@click.option("--gin-bonus", type=int, default=None, help="Gin bonus (oklahoma: 25; some play 20).")
@click.option("--undercut-bonus", type=int, default=None, help="Two-player scoring's undercut bonus (default 10).")
@click.option("--knock-points", type=int, default=None, help="Penalty scoring (oklahoma-multi): a knock's points (10).")
@click.option("--undercut-points", type=int, default=None, help="Penalty scoring: an undercut's points (20).")
@click.option(
    "--gin-multiplier",
    type=int,
    default=None,
    help="Penalty scoring: on a gin the others lose this many times their deadwood (2).",
)
@click.option("--knock-limit", type=int, default=None, help="A fixed knock limit 0-10 instead of the preset's.")
@click.option("--spade-doubles", is_flag=True, help="A spade upcard doubles the round.")
@click.option("--ace-gin-only", is_flag=True, help="An ace upcard allows only gin.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def score(
    upcard: str,
    knocker_cards: str,
    opponent_cards: tuple[str, ...],
    knocker_melds: str | None,
    discard: str | None,
    layoffs: str | None,
    preset: str,
    gin_bonus: int | None,
    undercut_bonus: int | None,
    knock_points: int | None,
    undercut_points: int | None,
    gin_multiplier: int | None,
    knock_limit: int | None,
    spade_doubles: bool,
    ace_gin_only: bool,
    as_json: bool,
) -> None:
    """Score a knock: outcome, melds, layoffs, deadwood and points, as laid where the lay-down is given.

    Without --knocker-melds, --discard or --layoffs the engine chooses them; when the
    score depends on that choice it says so and lists each other lay-down that scores
    differently, so the players can give the one they made.

    JSON: the round result as the web API gives it (``RoundResult.to_dict``), the players named
    as given ("knocker" and "opponent" unless named): "outcome" (knock|undercut|gin), "knocker",
    "winner", "upcard", "knock_limit", "discard", "doubled", "players" {name: {melds, layoffs,
    deadwood, deadwood_points}} with each layoff {"card": "QC", "onto": [the knocker's meld as it
    lay before]}, "points" {name: points}, and the lay-down: "laydown" (as scored), "given",
    "alternatives" (other lay-downs that score differently) and "depends_on".
    """
    given = {
        "gin_bonus": gin_bonus,
        "undercut_bonus": undercut_bonus,
        "penalty_knock_points": knock_points,
        "penalty_undercut_points": undercut_points,
        "penalty_gin_multiplier": gin_multiplier,
        "knock_limit": knock_limit,
    }
    options: dict[str, Any] = {name: value for name, value in given.items() if value is not None}
    if spade_doubles:
        options["spade_doubles"] = True
    if ace_gin_only:
        options["ace_upcard_gin_only"] = True
    taken = ""
    if len(opponent_cards) > 1 and preset == "oklahoma":
        preset, taken = "oklahoma-multi", " (taken for 3-4 players)"
    try:
        rules = Rules.preset_named(preset, **options)
        _check_scored(rules, options, taken)
        knocker, knocker_hand = _named_hand(knocker_cards, "knocker")
        count = len(opponent_cards)
        defaults = ["opponent"] if count == 1 else [f"opponent {n}" for n in range(1, count + 1)]
        hands = {knocker: knocker_hand}
        for default, text in zip(defaults, opponent_cards, strict=True):
            name, hand = _named_hand(text, default)
            if name in hands:
                raise InvalidHandError(f"two players are called {name!r}; name each once")
            hands[name] = hand
        result = score_round(
            rules,
            Card.parse(upcard),
            hands,
            knocker=knocker,
            knocker_melds=_option("--knocker-melds", parse_melds, knocker_melds),
            discard=_option("--discard", Card.parse, discard),
            layoffs=_option("--layoffs", lambda text: parse_layoffs_by_player(text, list(hands)[1:]), layoffs),
        )
    except OkginError as error:
        fail(str(error))
    if as_json:
        click.echo(json.dumps(result.to_dict()))
    else:
        click.echo("\n".join(_result_text(result)))
