"""The JSON API the page uses, and so can scripts. Thin: parse, call ``scorer``/``web.store``, answer.

Every failure answers 4xx/5xx with ``{"error": "..."}`` naming the problem (see ``web.errors``).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request

from scorer.cards import Card
from scorer.errors import OkginError
from scorer.rules import KnockOption, Rules, knock_option, knock_to_propose, score_round
from web import store
from web.detection import detections_json, reading_json, service, table_layout
from web.errors import ApiError
from web.request_json import json_object as json_body

bp = Blueprint("api", __name__, url_prefix="/api")

IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/webp", "image/bmp", "application/octet-stream"})


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
        raise ApiError(415, f"expected an image (image/jpeg or multipart field 'image'), got {request.mimetype!r}")
    if not data:
        raise ApiError(400, "the image is empty")
    return data


def decode(data: bytes) -> Any:
    """Decode an uploaded image, answering 400 for anything that is not one."""
    from scorer.vision.images import ImageError, ImageTooLargeError, decode_image

    try:
        return decode_image(data)
    except ImageTooLargeError as error:
        raise ApiError(413, str(error)) from error
    except ImageError as error:
        raise ApiError(400, str(error)) from error


def players_arg(default: int = 2) -> int:
    value = request.args.get("players", str(default))
    if (
        not (value.isascii() and value.isdigit() and len(value) <= 2)
        or not store.MIN_PLAYERS <= int(value) <= store.MAX_PLAYERS
    ):
        raise ApiError(400, f"players must be {store.MIN_PLAYERS} to {store.MAX_PLAYERS}, got {value!r}")
    return int(value)


def rules_for(body: dict[str, Any]) -> Rules:
    """The rules a stand-alone request scores with: a match's own rules, or a preset and options."""
    if "match" in body:
        match_id = body["match"]
        if not isinstance(match_id, int):
            raise ApiError(400, f"match must be a match id (a number), got {match_id!r}")
        return store.load_match(match_id).match.rules
    return store.build_rules(body.get("rules", "oklahoma"), body.get("options"))


@bp.post("/matches")
def create_match() -> tuple[Response, int]:
    body = json_body()
    players = store.parse_players(body.get("players"))
    rules = store.build_rules(body.get("rules", "oklahoma"), body.get("options"))
    dealer = body.get("dealer")
    if dealer is not None and not isinstance(dealer, str):
        raise ApiError(400, f"dealer must be a player's name, got {dealer!r}")
    match_id = store.create_match(players, rules, dealer or None)
    return jsonify(id=match_id), 201


@bp.get("/matches")
def list_matches() -> Response:
    return jsonify(matches=store.list_matches())


@bp.get("/matches/<int:match_id>")
def get_match(match_id: int) -> Response:
    return jsonify(store.load_match(match_id).to_json())


@bp.post("/matches/<int:match_id>/rounds")
def add_round(match_id: int) -> tuple[Response, int]:
    stored, played = store.add_round(match_id, json_body())
    state = stored.to_json()
    return jsonify(round=state["rounds"][played.number - 1], totals=state["totals"], winner=state["winner"],
                   match=state), 201  # fmt: skip


@bp.delete("/matches/<int:match_id>/rounds/last")
def undo_round(match_id: int) -> Response:
    return jsonify(store.undo_last_round(match_id).to_json())


@bp.put("/matches/<int:match_id>/rounds/<int:number>")
def edit_round(match_id: int, number: int) -> Response:
    return jsonify(store.edit_round(match_id, number, json_body()).to_json())


@bp.post("/score")
def score() -> Response:
    """Score one round without a match: ``{"upcard", "knocker", "hands", "rules"?, "options"?, "match"?}``."""
    body = json_body()
    hands = body.get("hands")
    if not isinstance(hands, dict) or not hands:
        raise ApiError(400, 'hands must be an object like {"Ann": ["QH", ...], "Bob": [...]}')
    given = store.RoundInput.from_json(body | {"draw": False}, list(hands))
    rules = rules_for(body)
    assert given.upcard is not None and given.hands is not None and given.knocker is not None
    try:
        result = score_round(rules, given.upcard, given.hands, given.knocker)
    except OkginError as error:
        raise ApiError(400, str(error)) from error
    return jsonify(store.result_json(result))


@bp.post("/arrange")
def arrange() -> Response:
    """Each hand's best melds and deadwood before anyone knocks, and who may knock under this upcard.

    A hand of one card more than dealt shows its least deadwood after the best discard (``discard``);
    a hand of another size may not knock (``problem`` says why). ``proposed_knocker`` is the knock a camera
    table proposes by itself, ``reason`` why there is none.
    """
    body = json_body()
    hands = body.get("hands")
    if not isinstance(hands, dict):
        raise ApiError(400, 'hands must be an object like {"Ann": ["QH", ...]}')
    rules = rules_for(body)
    upcard = None if body.get("upcard") in (None, "") else store.parse_card_field(body["upcard"], "upcard")
    limit = None if upcard is None else rules.knock_limit_for(upcard)
    seen: dict[Card, str] = {}
    options: dict[str, KnockOption] = {}
    match = store.load_match(body["match"]).match if "match" in body else None
    seated = len(hands) if match is None else len(match.players)
    try:
        rules.hand_size(seated)
    except OkginError as error:
        raise ApiError(400, str(error)) from error
    for name, cards_json in hands.items():
        cards = store.parse_hand_field(cards_json, name)
        for card in cards:
            if card in seen:
                raise ApiError(400, f"{card} is in both {seen[card]}'s and {name}'s hands")
            seen[card] = name
        options[name] = knock_option(rules, cards, seated, upcard)
    finished = None if match is None or not match.finished else f"the match is over: {match.winner} won"
    knocker, reason = knock_to_propose(rules, upcard, options, seated)
    players = {
        name: {
            "cards": [str(card) for card in option.cards],
            "melds": [[str(card) for card in meld.cards] for meld in option.melds],
            "deadwood": [str(card) for card in option.deadwood],
            "deadwood_points": option.points,
            "discard": None if option.discard is None else str(option.discard),
            "can_knock": option.can_knock,
            "problem": option.problem,
        }
        for name, option in options.items()
    }
    return jsonify(
        upcard=None if upcard is None else str(upcard),
        knock_limit=limit,
        players=players,
        proposed_knocker=None if finished else knocker,
        reason=finished or reason,
    )


@bp.post("/detect")
def detect() -> Response:
    """Recognise the cards in one image: each card once, the seat zones, and any conflicts."""
    players = players_arg()  # before any work: a bad count is refused before decoding and inference
    image = decode(uploaded_image())
    detections = service().detect(image)
    reading = table_layout(players).assign(detections)
    zones = reading_json(reading)
    return jsonify(
        cards=detections_json(detections.cards),
        zones=zones["zones"],
        conflicts=zones["conflicts"],  # the reading carries the detector's conflicts and adds the layout's
        width=detections.width,
        height=detections.height,
    )
