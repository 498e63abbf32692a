"""``okgin solve`` and ``okgin score``: the scoring engine from the command line.

Light on purpose: only click and the pure ``scorer`` modules are imported, so both
commands start quickly. Bad input exits with status 2 and one line on stderr.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click

from scorer.cards import Card, format_cards, parse_cards
from scorer.cli import fail
from scorer.deadwood import Arrangement, all_best_arrangements, best_arrangement, best_discard
from scorer.errors import OkginError
from scorer.layoffs import PlayerResult
from scorer.melds import Meld
from scorer.rules import PRESETS, RoundResult, Rules, score_round


def _melds_text(melds: Sequence[Meld]) -> str:
    return " | ".join(str(meld) for meld in melds) or "none"


def _arrangement_text(arrangement: Arrangement) -> str:
    return (
        f"melds {_melds_text(arrangement.melds)}; deadwood {_deadwood_text(arrangement.deadwood, arrangement.points)}"
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
    click.echo(f"melds:    {_melds_text(arrangement.melds)}")
    click.echo(f"deadwood: {_deadwood_text(arrangement.deadwood, arrangement.points)}")
    for other in alternatives:
        click.echo(f"also:     {_arrangement_text(other)}")


def _player_text(result: PlayerResult) -> str:
    layoffs = ", ".join(f"{layoff.card} onto {layoff.onto}" for layoff in result.layoffs)
    laid = f"; layoffs {layoffs}" if layoffs else ""
    return (
        f"melds {_melds_text(result.melds)}{laid}; deadwood {_deadwood_text(result.deadwood, result.deadwood_points)}"
    )


def _result_text(result: RoundResult) -> list[str]:
    opponent = next(name for name in result.hands if name != result.knocker)
    lines = [f"upcard {result.upcard}: knock limit {result.knock_limit}"]
    if result.discard is not None:
        lines.append(f"knocker discards {result.discard}")
    lines.append(f"knocker:  {_player_text(result.hands[result.knocker])}")
    lines.append(f"opponent: {_player_text(result.hands[opponent])}")
    doubled = " (doubled: spade upcard)" if result.doubled else ""
    lines.append(f"{result.outcome}: {result.winner} scores {result.points[result.winner]}{doubled}")
    return lines


@click.command()
@click.option("--upcard", required=True, help="The upcard, e.g. KS (sets the Oklahoma knock limit).")
@click.option(
    "--knocker", "knocker_cards", required=True, help="The knocker's 10 cards (or 11: the best discard is chosen)."
)
@click.option("--opponent", "opponent_cards", required=True, help="The opponent's 10 cards.")
@click.option(
    "--knocker-melds", default=None, help='The knocker\'s melds as laid, split by "|": "AS 2S 3S | 7H 7D 7C".'
)
@click.option("--rules", "preset", type=click.Choice(sorted(PRESETS)), default="oklahoma", show_default=True)
@click.option("--gin-bonus", type=int, default=None, help="Gin bonus (oklahoma: 25; some play 20).")
@click.option("--undercut-bonus", type=int, default=None, help="Undercut bonus (default 10).")
@click.option("--knock-limit", type=int, default=None, help="A fixed knock limit 0-10 instead of the preset's.")
@click.option("--spade-doubles", is_flag=True, help="A spade upcard doubles the round.")
@click.option("--ace-gin-only", is_flag=True, help="An ace upcard allows only gin.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def score(
    upcard: str,
    knocker_cards: str,
    opponent_cards: str,
    knocker_melds: str | None,
    preset: str,
    gin_bonus: int | None,
    undercut_bonus: int | None,
    knock_limit: int | None,
    spade_doubles: bool,
    ace_gin_only: bool,
    as_json: bool,
) -> None:
    """Score a two-player knock: outcome, melds, layoffs, deadwood and points.

    JSON: the round result as the web API gives it, the players named "knocker" and
    "opponent": "outcome" (knock|undercut|gin), "knocker", "winner", "upcard",
    "knock_limit", "discard", "doubled", "players" {name: {melds, layoffs, deadwood,
    deadwood_points}} with each layoff {"card": "QC", "onto": [the knocker's meld as it
    lay before]}, and "points" {name: points}.
    """
    options: dict[str, Any] = {
        name: value
        for name, value in (("gin_bonus", gin_bonus), ("undercut_bonus", undercut_bonus), ("knock_limit", knock_limit))
        if value is not None
    }
    if spade_doubles:
        options["spade_doubles"] = True
    if ace_gin_only:
        options["ace_upcard_gin_only"] = True
    try:
        rules = Rules.preset_named(preset, **options)
        melds = None
        if knocker_melds is not None:
            melds = [Meld.parse(part) for part in knocker_melds.split("|") if part.strip()]
        hands = {"knocker": parse_cards(knocker_cards), "opponent": parse_cards(opponent_cards)}
        result = score_round(rules, Card.parse(upcard), hands, knocker="knocker", knocker_melds=melds)
    except OkginError as error:
        fail(str(error))
    if as_json:
        click.echo(json.dumps(result.to_dict()))
    else:
        click.echo("\n".join(_result_text(result)))
