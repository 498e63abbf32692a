"""The JSON API the page uses, and so can scripts. Thin: check every field, call ``scorer``/``web.matches``, answer.

Every failure answers 4xx/5xx with ``{"error": "..."}`` naming the problem (see ``web.errors``).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Any

from flask import Blueprint, Response, jsonify, request, url_for

from scorer.proposal import table_status
from scorer.rules import IllegalKnockError, IllegalLayoffError, InvalidHandError, Rules
from scorer.vision.images import MIME_TYPES
from web import fields, matches, once
from web.detection import detections_json, reading_json, service, table_layout
from web.errors import ApiError
from web.laydown import score_as_read
from web.request_json import MAX_JSON_VALUES
from web.request_json import json_object as json_body
from web.sheet import keep_arrival_notice

_SERVER_RUN = secrets.token_hex(6)
"""Tags a match's JSON with this run of the server: a restarted server (another database, a newer engine that
writes the same revision out otherwise) never answers a page's kept copy with 304."""

bp = Blueprint("api", __name__, url_prefix="/api")

IMAGE_TYPES = MIME_TYPES | {"application/octet-stream"}


def uploaded_image() -> bytes:
    """The image of a detection request: multipart field ``image`` or a raw ``image/*`` body.

    :raises ApiError: 400 when there is no image.
    """
    if request.mimetype == "multipart/form-data":
        upload = request.files.get("image")
        if upload is None:
            raise ApiError(400, "no image: send a multipart field named 'image' or a raw image/jpeg body")
        data = upload.read()
    elif request.mimetype in IMAGE_TYPES:
        data = request.get_data()
    else:
        accepted = ", ".join(sorted(IMAGE_TYPES))  # an image of another kind (image/gif) is told which kinds are read
        raise ApiError(415, f"expected a body of {accepted} or a multipart field 'image', got {request.mimetype!r}")
    if not data:
        raise ApiError(400, "the image is empty")
    return data


def decode(data: bytes, notes: list[str] | None = None) -> Any:
    """Decode an uploaded image, answering 400 for anything that is not one (413 too large, 503 decoders busy);
    ``notes`` as ``scorer.vision.images.decode_image`` takes them (only an animation's first frame read)."""
    from scorer.vision.images import DecodersBusyError, ImageError, ImageTooLargeError, decode_image

    try:
        return decode_image(data, notes=notes)
    except ImageTooLargeError as error:
        raise ApiError(413, str(error)) from error
    except DecodersBusyError as error:
        raise ApiError(503, str(error)) from error
    except ImageError as error:
        raise ApiError(400, str(error)) from error


def players_arg(default: int = 2) -> int:
    """The ``?players=N`` query argument (2 to 4), checked before any image is decoded."""
    return fields.parse_player_count(request.args.get("players", str(default)))


def stand_alone_rules(body: dict[str, Any]) -> Rules | int:
    """The rules a stand-alone request scores with: a preset and options, or the id of a match whose rules
    to use (checked here, loaded after every other field is checked)."""
    if "match" in body:
        return fields.parse_id(body["match"], "match")
    return fields.parse_rules(body.get("rules", "oklahoma"), body.get("options"))


def made_once(body: dict[str, Any], make: Callable[[once.KeepPost | None], int]) -> int:
    """The match a request of ``body`` makes, made once per ``Idempotency-Key`` (``web.once``): the same request sent
    again with the same key answers the match the first made. "The same" is the same JSON, whatever its keys' order
    (two phones send a rematch from a match they read apart)."""
    asked = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return once.made(request.headers.get(once.HEADER), asked.encode(), make)


@bp.post("/matches")
def create_match() -> tuple[Response, int]:
    body = json_body()
    players = fields.parse_players(body.get("players"))
    rules = fields.parse_rules(body.get("rules", "oklahoma"), body.get("options"))
    dealer = fields.parse_dealer(body.get("dealer"), players)
    match_id = made_once(body, lambda keep_post: matches.create_match(players, rules, dealer, keep_post))
    return jsonify(id=match_id), 201


@bp.post("/matches/<int:match_id>/rematch")
def rematch(match_id: int) -> tuple[Response, int]:
    """A new match of the same players and rules, the next dealer dealing first: ``201 {"id"}``, for a won match (409
    before). One rematch of a match however often, and on however many phones, Rematch is tapped (``web.once``,
    keyed by the match: within a day, the same rematch); the new table says on arrival that it is the rematch, and
    who deals first in it. The body is an empty JSON object."""
    json_body()
    played = matches.load_match(match_id).match
    if not played.finished:
        raise matches.ConflictError(f"match {match_id} is not over yet: a rematch follows a finished match")
    made = once.made(
        f"rematch-of-match-{match_id}",
        b"rematch",
        lambda keep_post: matches.create_match(list(played.players), played.rules, played.dealer, keep_post),
    )
    rematch = matches.load_match(made).match  # made earlier (another phone, an earlier tap), it may be under way
    if played_there := len(rematch.rounds):
        rounds = f"{played_there} round{'' if played_there == 1 else 's'}"
        said = f"Back to the rematch of match #{match_id}: it is under way, {rounds} on its sheet."
    else:
        said = (
            f"Rematch: a new score sheet (match #{match_id} stays under History). {rematch.first_dealer} deals first."
        )
    keep_arrival_notice(made, said)
    return jsonify(id=made), 201


@bp.get("/matches")
def list_matches() -> Response:
    """The matches, newest first, a page at a time: ``?limit=`` (1-100, default 100), ``?finished=true|false``,
    ``?before=ID`` (the page after the one ending at that match); ``"older"`` is the next page's URL, or null."""
    limit = fields.parse_limit(request.args.get("limit"), matches.MOST_LISTED)
    finished = fields.parse_finished(request.args.get("finished"))
    page, older = matches.match_page(limit, finished, fields.parse_before(request.args.get("before")))
    return jsonify(
        matches=[summary.to_dict() for summary in page],
        older=None
        if older is None
        else url_for(  # the same list, from the match after this page's last
            "api.list_matches", before=older, limit=limit, finished=request.args.get("finished")
        ),
    )


@bp.post("/matches/import")
def import_match() -> tuple[Response, int]:
    """A match file (the JSON ``/matches/<id>/export.json`` writes) stored as a new match, its rounds scored again
    (``web.transfer``): ``201 {"id", "notes"}``, notes saying where the file's totals differ from the rescored."""
    body = json_body(max_values=MAX_JSON_VALUES)  # a file of a long match: its values are read once, here
    imported = matches.read_imported(body)
    match_id = made_once(body, lambda keep_post: matches.store_imported(imported, keep_post))
    return jsonify(id=match_id, notes=list(imported.notes)), 201


@bp.get("/players")
def players() -> Response:
    """The players' records (``scorer.records``) over every match kept here (``matches.records``), a page at a time
    (``matches.records_page``: ``?limit=`` 1-100, default 100, ``?offset=``; ``"more"`` is the next page's URL, or
    null), or one player's (``?player=NAME``), and how many matches are still waiting to be counted (kept before
    okgin stored outlines: counted in the background)."""
    player = request.args.get("player")
    limit = fields.parse_limit(request.args.get("limit"), matches.RECORDS_LISTED)
    page = matches.records_page(player, fields.parse_offset(request.args.get("offset")), limit)
    return jsonify(
        players=[record.to_dict() for record in page.players],
        head_to_head=[pair.to_dict() for pair in page.pairs],
        players_total=page.players_total,
        head_to_head_total=page.pairs_total,
        more=None if page.more is None else url_for("api.players", player=player, offset=page.more, limit=limit),
        matches_counted=page.counted,
        matches_waiting=page.waiting,
    )


@bp.get("/matches/<int:match_id>")
def get_match(match_id: int) -> Response:
    """The match as JSON, tagged with its revision: each device at the table asks for it every few seconds, and
    an unchanged match is a ``304`` with no body (``Cache-Control: no-cache`` has the browser ask so, and ``fetch``
    gives the page the body it kept), rather than a long match written out again."""
    record = matches.load_match(match_id)
    tag = f"match-{_SERVER_RUN}-{record.id}-{record.revision}"
    fresh = not request.if_none_match.contains_weak(tag)  # If-None-Match compares weakly: W/"tag" is the tag
    response = Response(record.json_for_reader(), mimetype="application/json") if fresh else Response(status=304)
    response.set_etag(tag)
    response.headers["Cache-Control"] = "private, no-cache"
    return response


@bp.post("/matches/<int:match_id>/rounds")
def add_round(match_id: int) -> tuple[Response, int]:
    """The next round: ``{"number"?: N, "revision"?: R, "upcard", "knocker", "hands"}`` or ``{"number"?: N,
    "revision"?: R, "draw": true}``; with ``"revision"``, only if the match is still at that revision (a round sent
    again after it was undone is not brought back)."""
    body = json_body()
    number = fields.parse_round_number(body.get("number"))
    revision = None if body.get("revision") is None else fields.parse_body_revision(body["revision"])
    entered = fields.parse_round(body)
    record, played = matches.add_round(match_id, entered, number, revision)
    return jsonify(round=played.to_dict(), match=record.to_dict()), 201


@bp.delete("/matches/<int:match_id>/rounds/last")
def undo_last_round(match_id: int) -> Response:
    """Undo the last round of the match at ``?revision=N`` (required: "the last round", sent twice, would
    otherwise undo two)."""
    revision = fields.parse_revision(request.args.get("revision"))
    if revision is None:
        raise fields.InputError(
            "name the match's revision (?revision=N, from the match's JSON) or the round (/rounds/N) to undo:"
            " an undo of 'the last round' sent twice would undo two rounds"
        )
    return jsonify(matches.undo_round(match_id, revision=revision).to_dict())


@bp.delete("/matches/<int:match_id>/rounds/<int:number>")
def undo_round(match_id: int, number: int) -> Response:
    """Undo round ``number`` if it is still the last one: sent twice, it undoes one round, not two. With
    ``?revision=N``, only if the match is still at that revision: sent before the round was entered again and
    arriving after, it undoes nothing."""
    revision = fields.parse_revision(request.args.get("revision"))
    return jsonify(matches.undo_round(match_id, number, revision).to_dict())


@bp.put("/matches/<int:match_id>/rounds/<int:number>")
def edit_round(match_id: int, number: int) -> Response:
    """Replace round ``number``; with ``?revision=N``, only if the match is still at that revision (an edit
    arriving after a later one does not undo it)."""
    revision = fields.parse_revision(request.args.get("revision"))
    entered = fields.parse_round(json_body())
    return jsonify(matches.edit_round(match_id, number, entered, revision).to_dict())


@bp.post("/matches/<int:match_id>/earlier-versions/<int:version_id>/restore")
def restore_version(match_id: int, version_id: int) -> Response:
    """Put back an earlier version of a round (one of the match's ``"earlier_versions"``): ``{"revision": R}``, the
    match as the player saw it (required: a tap sent twice, or arriving after another change, changes nothing)."""
    revision = fields.parse_body_revision(json_body().get("revision"))
    return jsonify(matches.restore_version(match_id, version_id, revision).to_dict())


@bp.put("/matches/<int:match_id>/players/<int:seat>")
def rename_player(match_id: int, seat: int) -> Response:
    """Rename the player in ``seat`` (1 for the first player): ``{"name": "Ann", "revision": R}``, the match as the
    player saw it (required: a rename arriving after another change changes nothing); everywhere the match holds the
    name, its scores unchanged (``matches.rename_player``). A seat that holds the name already changes nothing."""
    body = json_body()
    name = fields.parse_player_name(body.get("name"))
    revision = fields.parse_body_revision(body.get("revision"))
    return jsonify(matches.rename_player(match_id, seat, name, revision).to_dict())


@bp.post("/score")
def score() -> Response:
    """Score one round without recording it: ``{"upcard", "knocker", "hands", "rules"?, "options"?, "match"?}``,
    as laid where ``knocker_melds``, ``discard`` or ``layoffs`` are given.

    With ``match``, the match's rules are used and the hands must be its players' (put in seating order).
    ``"groups": {name: [[card, ...], ...]}`` gives the cards as they lie (``hands`` may then be left out):
    the hands and the lay-down are read from them (``web.laydown``; parts given explicitly win), and the
    answer adds ``"read": {"hands", "laydown", "notes"}``.
    """
    body = json_body()
    groups = None if body.get("groups") is None else fields.parse_groups(body["groups"])
    if groups is not None:  # the hands are the cards in the groups, until the groups are read
        body = {
            **body,
            "hands": {name: [str(card) for group in laid for card in group] for name, laid in groups.items()},
        }
    knock = fields.parse_knock(body)
    source = stand_alone_rules(body)
    if isinstance(source, int):
        match = matches.load_match(source).match
        rules = match.rules
        try:
            knock = match.seated(knock)
        except InvalidHandError as error:
            raise fields.InputError(str(error)) from error
    else:
        rules = source
    read = None
    try:
        if groups is None:
            result = knock.score(rules)
        else:
            result, read = score_as_read(knock, groups, rules)
    except (InvalidHandError, IllegalKnockError, IllegalLayoffError) as error:
        raise fields.InputError(str(error)) from error
    return jsonify(result.to_dict() | ({} if read is None else {"read": read}))


@bp.post("/arrange")
def arrange() -> Response:
    """Before a knock: each hand's best melds and deadwood, who may knock, and the knock to propose."""
    body = json_body()
    hands = fields.parse_hands(body.get("hands"))
    upcard = fields.parse_upcard(body.get("upcard"))
    source = stand_alone_rules(body)
    winner = None
    if isinstance(source, int):  # the match's rules, its players in seating order, nothing once it is won
        match = matches.load_match(source).match
        try:
            match.refuse_strangers(hands)
        except InvalidHandError as error:
            raise fields.InputError(str(error)) from error
        rules, winner = match.rules, match.winner
        hands = {name: hands.get(name, ()) for name in match.players}
    else:
        rules = source
    try:
        status = table_status(rules, upcard, hands, winner)
    except InvalidHandError as error:
        raise fields.InputError(str(error)) from error
    return jsonify(status.to_dict())


@bp.post("/cards")
def cards() -> Response:
    """Cards typed in a box, read the one way the server reads them: ``{"text": "ace of clubs, 10h"}``."""
    return jsonify(cards=[str(card) for card in fields.parse_card_text(json_body().get("text"))])


@bp.post("/detect")
def detect() -> Response:
    """Recognise the cards in one image: each card once, the seat zones, any conflicts, and what the caller should be
    told of how the picture was read (``notes``: an animated picture was read by its first frame without a word, as
    ``okgin detect`` says it)."""
    players = players_arg()
    notes: list[str] = []
    image = decode(uploaded_image(), notes)
    detections = service().detect(image)
    reading = table_layout(players).assign(detections)
    zones = reading_json(reading)
    return jsonify(
        cards=detections_json(detections.cards),
        zones=zones["zones"],
        conflicts=zones["conflicts"],  # the reading carries the detector's conflicts and adds the layout's
        width=detections.width,
        height=detections.height,
        notes=notes,
    )
