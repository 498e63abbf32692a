"""Match set-up, resume and history, the score sheet, its print view and CSV/JSON exports."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from flask import Blueprint, Response, redirect, render_template, request, url_for
from werkzeug.wrappers import Response as BaseResponse

from scorer.rules import Rules
from web import store

bp = Blueprint("sheet", __name__)

# The rule options offered on the set-up form: (form field, Rules option, kind, label).
RULE_OPTIONS: tuple[tuple[str, str, str, str], ...] = (
    ("gin_bonus", "gin_bonus", "int", "Gin bonus"),
    ("undercut_bonus", "undercut_bonus", "int", "Undercut bonus"),
    ("target", "target", "int", "Target score"),
    ("target_rule", "target_rule", "choice", "Match ends when a total is"),
    ("ace_upcard_gin_only", "ace_upcard_gin_only", "bool", "Ace upcard: gin only"),
    ("spade_doubles", "spade_doubles", "bool", "Spade upcard doubles the round"),
    ("box_bonus", "box_bonus", "int", "Box bonus per round won"),
    ("game_bonus", "game_bonus", "int", "Game bonus for the match winner"),
    ("shutout_doubles", "shutout_doubles", "bool", "Shutout doubles"),
)
PRESETS = (("oklahoma", "Oklahoma Gin (knock limit = upcard)"), ("gin-rummy", "Gin Rummy (knock on 10)"),
           ("oklahoma-multi", "Oklahoma Gin, 3-4 players"))  # fmt: skip


def options_from_form(form: Any) -> dict[str, Any]:
    """Rule options from the set-up form; only the ones that differ from the form's blank state.

    :raises store.InputError: for a number that is not one.
    """
    options: dict[str, Any] = {}
    for field, option, kind, label in RULE_OPTIONS:
        if kind == "bool":
            options[option] = form.get(field) == "on"
            continue
        value = (form.get(field) or "").strip()
        if not value:
            continue
        if kind == "int":
            if not value.lstrip("-").isdigit():
                raise store.InputError(f"{label} must be a whole number, got {value!r}")
            options[option] = int(value)
        else:
            options[option] = value
    return options


@bp.get("/")
def index() -> str:
    """Start page: new match form, unfinished matches to resume, and the history."""
    matches = store.list_matches()
    return render_template(
        "index.html",
        unfinished=[m for m in matches if not m["winner"]],
        finished=[m for m in matches if m["winner"]],
        presets=PRESETS,
        defaults=Rules().to_dict(),
        error=None,
    )


@bp.post("/matches")
def create() -> BaseResponse | tuple[str, int]:
    """The set-up form: players, preset, options and the first dealer (blank = drawn at random)."""
    form = request.form
    try:
        players = store.parse_players([name for name in form.getlist("player") if name.strip()])
        rules = store.build_rules(form.get("preset", "oklahoma"), options_from_form(form))
        dealer = form.get("dealer", "").strip()
        dealer_name = None
        if dealer:
            if not dealer.isdigit() or not 1 <= int(dealer) <= len(players):
                raise store.InputError("choose the first dealer from the players")
            dealer_name = players[int(dealer) - 1]
        match_id = store.create_match(players, rules, dealer_name)
    except store.InputError as error:
        matches = store.list_matches()
        page = render_template(
            "index.html",
            unfinished=[m for m in matches if not m["winner"]],
            finished=[m for m in matches if m["winner"]],
            presets=PRESETS,
            defaults=Rules().to_dict(),
            error=str(error),
        )
        return page, 400
    return redirect(url_for("live.table", match_id=match_id), code=303)


@bp.get("/matches/<int:match_id>/sheet")
def sheet(match_id: int) -> str:
    """The score sheet alone, large and print-friendly."""
    return render_template("sheet.html", match=store.load_match(match_id).to_json())


@bp.get("/matches/<int:match_id>/export.json")
def export_json(match_id: int) -> Response:
    body = json.dumps(store.load_match(match_id).to_json(), indent=2)
    return Response(body, mimetype="application/json", headers=_download(match_id, "json"))


@bp.get("/matches/<int:match_id>/export.csv")
def export_csv(match_id: int) -> Response:
    """One row per round: inputs, outcome, and each player's deadwood, points and running total."""
    state = store.load_match(match_id).to_json()
    players: list[str] = state["players"]
    out = io.StringIO()
    writer = csv.writer(out)

    def write(row: list[Any]) -> None:
        writer.writerow([spreadsheet_safe(cell) for cell in row])

    write(
        ["round", "dealer", "upcard", "knocker", "outcome", "winner"]
        + [f"{name} {column}" for name in players for column in ("deadwood", "points", "total")]
    )
    for line in state["rounds"]:
        per_player = line.get("players", {})
        row: list[Any] = [line["number"], line["dealer"], line.get("upcard", ""), line.get("knocker", ""),
                          line["outcome"], line.get("winner", "")]  # fmt: skip
        for name in players:
            row += [per_player.get(name, {}).get("deadwood_points", ""), line["points"].get(name, 0),
                    line["totals"].get(name, 0)]  # fmt: skip
        write(row)
    if state["bonuses"]:
        bonus_cells = [cell for name in players for cell in ("", state["bonuses"].get(name, 0), "")]
        write(["bonuses", "", "", "", "", "", *bonus_cells])
    return Response(out.getvalue(), mimetype="text/csv", headers=_download(match_id, "csv"))


def spreadsheet_safe(value: object) -> object:
    """Text a spreadsheet will not run as a formula (a player named "=cmd()" stays a name).

    >>> spreadsheet_safe("=1+2"), spreadsheet_safe("Ann"), spreadsheet_safe(-5)
    ("'=1+2", 'Ann', -5)
    """
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def _download(match_id: int, extension: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="okgin-match-{match_id}.{extension}"'}
