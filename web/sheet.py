"""Match set-up, resume and history, the players' records, the score sheet, its print view and CSV/JSON exports."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence
from typing import Any

from flask import Blueprint, Response, redirect, render_template, request, session, url_for
from markupsafe import Markup, escape
from werkzeug.wrappers import Response as BaseResponse

from scorer.match import Knock
from scorer.rules import PRESETS, Rules
from web import fields, matches, once
from web.errors import ApiError
from web.request_json import parse_json

bp = Blueprint("sheet", __name__)

# The rule options offered on the set-up form: (form field = Rules option, kind, label).
RULE_OPTIONS: tuple[tuple[str, str, str], ...] = (
    ("gin_bonus", "int", "Gin bonus"),
    ("undercut_bonus", "int", "Undercut bonus"),
    ("penalty_knock_points", "int", "Knock points"),
    ("penalty_undercut_points", "int", "Undercut points"),
    ("penalty_gin_multiplier", "int", "Gin: the others lose their deadwood times"),
    ("target", "int", "Target score"),
    ("target_rule", "choice", "Match ends when a total is"),
    ("rounds_limit", "int", "Agreed number of rounds"),
    ("ace_upcard_gin_only", "bool", "Ace upcard: gin only"),
    ("spade_doubles", "bool", "Spade upcard doubles the round"),
    ("box_bonus", "int", "Box bonus per round won"),
    ("game_bonus", "int", "Game bonus for the match winner"),
    ("shutout_doubles", "bool", "Shutout doubles"),
)
PLAYER_FIELDS = 4
RULES_SAID = "rules: "
"""How ``fields.parse_rules`` begins an error about the options."""


SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


@bp.app_template_filter("card")
def card_html(card: object) -> Markup:
    """A card named in the sheet's words ("up 9♥"), as the page's script shows one in a sentence (cards.js
    ``textWithCards``): rank and suit symbol on a small card face in the suit's colour. Anything else is text.

    >>> str(card_html("10H")), str(card_html("<b>"))
    ('<span class="card-text red">10♥</span>', '&lt;b&gt;')
    """
    code = str(card)
    if len(code) not in (2, 3) or code[-1] not in SUIT_SYMBOLS:
        return escape(code)
    colour = "red" if code[-1] in "DH" else "black"
    return Markup('<span class="card-text {}">{}{}</span>').format(colour, code[:-1], SUIT_SYMBOLS[code[-1]])


@bp.app_template_filter("alternatives")
def alternatives(versions: Sequence[dict[str, Any]], holds: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """A round's earlier versions (JSON, newest first) as the sheet offers them: each entry (what was entered) once,
    and none the round ``holds`` now. An undo, the round brought back and undone again keeps the same entry twice; of
    such, the one that can be put back is shown (the newest, if none can).

    >>> draw, knock = {"draw": True}, {"knocker": "Ann", "upcard": "KS"}
    >>> kept = [{"id": 3, "input": draw, "restore": None}, {"id": 2, "input": draw, "restore": "add"},
    ...         {"id": 1, "input": knock, "restore": "add"}]
    >>> [version["id"] for version in alternatives(kept)], [version["id"] for version in alternatives(kept, knock)]
    ([2, 1], [2])
    """
    shown: dict[str, dict[str, Any]] = {}
    for version in versions:
        entered = json.dumps(version["input"], sort_keys=True)
        if version["input"] != holds and (
            entered not in shown or (version["restore"] and not shown[entered]["restore"])
        ):
            shown[entered] = version
    order = {id(version): place for place, version in enumerate(versions)}
    return sorted(shown.values(), key=lambda version: order[id(version)])


def options_from_form(form: Any) -> dict[str, Any]:
    """Rule options from the set-up form; blank number fields keep the preset's value.

    :raises fields.InputError: for a number that is not one.
    """
    options: dict[str, Any] = {}
    for option, kind, label in RULE_OPTIONS:
        if kind == "bool":
            options[option] = form.get(option) == "on"
            continue
        value = (form.get(option) or "").strip()
        if value:
            options[option] = fields.parse_form_int(value, label) if kind == "int" else value
    return options


def form_values(form: Any | None = None) -> dict[str, Any]:
    """What the set-up form shows: the defaults, or after an error every value as it was submitted (a number not sent,
    another scoring's that the page left out, its default: an emptied box is sent, blank)."""
    defaults = Rules().to_dict()
    if form is None:
        return {"player": [""] * PLAYER_FIELDS, "preset": "oklahoma", "dealer": "", **defaults}
    names = [*form.getlist("player"), *[""] * PLAYER_FIELDS][:PLAYER_FIELDS]
    values: dict[str, Any] = {"player": names, "preset": form.get("preset", ""), "dealer": form.get("dealer", "")}
    for option, kind, _label in RULE_OPTIONS:
        values[option] = form.get(option) == "on" if kind == "bool" else form.get(option, defaults[option])
    return values


START_PAGE_LIST = 50
"""The most matches each list of the start page shows at once (unfinished, finished); older ones are a link away."""


def setup_page(
    form: Any | None = None,
    error: str | None = None,
    import_error: str | None = None,
    imported: tuple[int, tuple[str, ...]] | None = None,
) -> str:
    """The start page: the set-up form (blank, or as submitted with the error), resume and history lists, and
    opening a match file (with why it could not be opened, or the match it made and what the import changed)."""
    args = request.args if request.method == "GET" else {}
    resume_before, before = fields.parse_before(args.get("resume_before")), fields.parse_before(args.get("before"))
    unfinished, older_unfinished = matches.match_page(START_PAGE_LIST, False, resume_before)
    finished, older_finished = matches.match_page(START_PAGE_LIST, True, before)
    return render_template(
        "index.html",
        unfinished=unfinished,
        finished=finished,
        # each list's older page, the other list staying where it is
        older_unfinished=older_unfinished and url_for("sheet.index", resume_before=older_unfinished, before=before),
        older_finished=older_finished and url_for("sheet.index", resume_before=resume_before, before=older_finished),
        resume_before=resume_before,
        before=before,
        newest=(resume_before or before) and url_for("sheet.index"),
        presets=PRESETS,
        values=form_values(form),
        max_name_length=fields.MAX_NAME_LENGTH,
        error=error,
        import_error=import_error,
        imported=imported,
    )


@bp.get("/")
def index() -> str:
    """Start page: new match form, unfinished matches to resume, and the history."""
    return setup_page()


@bp.post("/matches")
def create() -> BaseResponse | tuple[str, int]:
    """The set-up form: players, preset, options and the first dealer (blank = drawn at random).

    Every field is checked before the match is made; after an error the form comes back as it was sent.
    """
    form = request.form
    try:
        players = fields.parse_players([name for name in form.getlist("player") if name.strip()])
        rules = fields.parse_rules(form.get("preset", "oklahoma"), options_from_form(form))
        dealer = fields.parse_dealer_seat(form.get("dealer", ""), players)
        match_id = once.made(
            form.get(once.FIELD),
            once.form_asked(form),
            lambda keep_post: matches.create_match(players, rules, dealer, keep_post),
        )
    except fields.InputError as error:
        return setup_page(form, in_form_words(str(error))), 400
    except ApiError as error:  # past the matches one machine may start in an hour: the form comes back as sent
        return setup_page(form, error.message), error.status
    return redirect(url_for("live.table", match_id=match_id), code=303)


def in_form_words(message: str) -> str:
    """A rule's error in the set-up form's words: the rules name their options as the API does ("rules: gin_bonus
    must be a whole number 0-1000, not 5000"), the form by its boxes' labels ("Gin bonus must be ...").

    >>> in_form_words("rules: gin_bonus must be a whole number 0-1000, not 5000")
    'Gin bonus must be a whole number 0-1000, not 5000'
    """
    if not message.startswith(RULES_SAID):
        return message
    for option, _kind, label in RULE_OPTIONS:
        message = re.sub(rf"\b{option}\b", label, message)
    return message.removeprefix(RULES_SAID)


@bp.post("/matches/import")
def import_file() -> BaseResponse | str | tuple[str, int]:
    """Open a match file (what a match's JSON link saves) as a new match (``web.transfer``): its table page, or the
    start page saying what the import changed, or why the file cannot be opened."""
    upload = request.files.get("file")
    try:
        if upload is None or not upload.filename:
            raise fields.InputError('choose a match file to open (one saved with a match\'s "JSON" link)')
        content = upload.read()
        if content.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"round,dealer,"):  # the other export, picked by mistake
            raise fields.InputError(
                f"{file_name_shown(upload.filename)} is a match's CSV, for spreadsheets: okgin opens the file the"
                " match's \u201cJSON\u201d link saves"
            )
        imported = matches.read_imported(parse_json(content, "the file"))
        match_id = once.made(
            request.form.get(once.FIELD), content, lambda keep_post: matches.store_imported(imported, keep_post)
        )
    except (fields.InputError, ApiError) as error:
        return setup_page(import_error=str(error)), error.status if isinstance(error, ApiError) else 400
    if imported.notes:
        return setup_page(imported=(match_id, imported.notes))
    # nothing to report on the start page: the table says, on arrival, that this match is a copy from a file
    copy = f"Opened from {file_name_shown(upload.filename)}: a copy of the match, kept here as match #{match_id}."
    keep_arrival_notice(match_id, copy)
    return redirect(url_for("live.table", match_id=match_id), code=303)


def _arrival_key(match_id: int) -> str:
    return f"arrival-{match_id}"


def keep_arrival_notice(match_id: int, notice: str) -> None:
    """Keep ``notice`` for the next showing of match ``match_id``'s table in this browser (``arrival_notices``): the
    page that sent the players there (a file opened, a rematch) has what to say, the new table looks like any."""
    session[_arrival_key(match_id)] = notice


@bp.app_template_global()
def arrival_notices(match_id: int) -> list[str]:
    """The notices kept for the table page of ``match_id`` on its next showing (``table.html`` shows them), taken
    from the session as they are shown: never shown on another match's table, nor lost when another's shows first
    (Flask's flashed messages are all taken by the first page that asks for any)."""
    notice = session.pop(_arrival_key(match_id), None)
    return [notice] if isinstance(notice, str) else []


FILE_NAME_SHOWN = 60
"""Characters of a file's name said back: enough for any name a match's JSON link gives."""


def file_name_shown(name: str) -> str:
    """A file's name as the page says it back: the browser's name without any folders, shortened when long.

    >>> file_name_shown("/home/ann/okgin-match-3.json"), file_name_shown("x" * 70)[-3:]
    ('okgin-match-3.json', 'xx…')
    """
    base = name.replace("\\", "/").rsplit("/", 1)[-1].strip()
    return base if len(base) <= FILE_NAME_SHOWN else base[: FILE_NAME_SHOWN - 1] + "…"


@bp.get("/players")
def players() -> str:
    """The players' records over every match kept here: matches and rounds won, gins, undercuts, head to head;
    with ``?player=NAME``, only that player's record and opponents, that player first (a club's hundreds of pairs are
    a long page on a phone). A page at a time (``matches.records_page``), ``?offset=N`` the next."""
    player = request.args.get("player")
    offset = fields.parse_offset(request.args.get("offset"))
    page = matches.records_page(player, offset, matches.RECORDS_LISTED)
    return render_template(
        "players.html",
        page=page,
        player=player,
        offset=offset,
        more=page.more is not None and url_for("sheet.players", player=player, offset=page.more),
        first=offset > 0 and url_for("sheet.players", player=player),
        max_name_length=fields.MAX_NAME_LENGTH,
    )


@bp.get("/matches/<int:match_id>/sheet")
def sheet(match_id: int) -> str:
    """The score sheet alone, large and print-friendly."""
    record = matches.load_match(match_id)
    with record.turn():
        title = record.match.rules.title
        return render_template("sheet.html", match=record.to_dict(), rules_title=title, actions=False)


@bp.get("/matches/<int:match_id>/sheet-body")
def sheet_body(match_id: int) -> str:
    """The score sheet's body alone, as the table page fetches it after each change (``?actions=1``: with the
    Edit and Undo buttons). The sheet is drawn here only, never in JavaScript."""
    actions = request.args.get("actions") == "1"
    record = matches.load_match(match_id)
    with record.turn():
        return render_template("_sheet_body.html", match=record.to_dict(), actions=actions)


@bp.get("/matches/<int:match_id>/export.json")
def export_json(match_id: int) -> Response:
    """The match file (``MatchRecord.to_dict()``); for a match that no longer rebuilds, what is stored of it, not
    scored (``matches.stored_file``): the one way its entries still leave the database."""
    try:
        record = matches.load_match(match_id)
    except matches.UnreadableMatchError as error:
        body = json.dumps(matches.stored_file(match_id, str(error.__cause__ or error)), indent=2)
    else:
        with record.turn():
            body = json.dumps(record.to_dict(), indent=2)
    return Response(body, mimetype="application/json", headers=_download(match_id, "json"))


@bp.get("/matches/<int:match_id>/export.csv")
def export_csv(match_id: int) -> Response:
    """One row per round: inputs, outcome, each player's deadwood, points and running total, and what was
    laid as given ("as laid": the knocker's melds, discard and layoffs), blank where the engine chose; a finished
    match's bonuses and final totals in two rows more ("bonuses", "final")."""
    match = matches.load_match(match_id).match
    out = io.StringIO()
    out.write("\ufeff")  # UTF-8's byte-order mark: Excel reads the file as UTF-8 only so ("Zoë", not "ZoÃ«")
    writer = csv.writer(out)

    def write(row: list[Any]) -> None:
        writer.writerow([spreadsheet_safe(cell) for cell in row])

    write(
        ["round", "dealer", "upcard", "knocker", "outcome", "winner"]
        + [f"{name} {column}" for name in match.players for column in ("deadwood", "points", "total")]
        + ["as laid"]
    )
    for line in match.rounds:
        result = line.result
        row: list[Any] = [line.number, line.dealer]
        row += ["", "", "draw", ""] if result is None else [str(result.upcard), result.knocker, result.outcome,
                                                             result.winner]  # fmt: skip
        for name in match.players:
            deadwood = "" if result is None else result.hands[name].deadwood_points
            row += [deadwood, line.points[name], line.totals_after[name]]
        laid = line.entered.laydown if isinstance(line.entered, Knock) else None
        write([*row, str(laid) if laid is not None and laid.given else ""])
    if match.finished:
        bonuses = match.final_bonuses()
        cells = [cell for name in match.players for cell in ("", bonuses[name], "")]
        write(["bonuses", "", "", "", "", "", *cells, ""])
        totals = match.final_totals  # the score the match ended on, bonuses in: the figure players copy out
        cells = [cell for name in match.players for cell in ("", "", totals[name])]
        write(["final", "", "", "", "", match.winner, *cells, ""])
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
