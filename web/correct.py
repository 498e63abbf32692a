"""Click-to-correct: a corrected frame becomes a labelled training example.

The browser corrects cards locally (rank, suit, delete, add, move to another seat) and rescoring goes
through ``/api/score``; this blueprint saves the corrected frame. Layout of the corrections folder
(``<data dir>/corrections/``), an ultralytics dataset that ``okgin train`` can take as extra data::

    data.yaml            names 0..51 = scorer.cards.CLASS_NAMES, train/val = images
    images/<stem>.jpg    the frame exactly as the detector saw it (.png, .webp ... for such uploads)
    labels/<stem>.txt    one line per card: "class_id cx cy w h" (normalised) of the CARD box the page
                         shows (the union of its corner boxes), class ids of the CORRECTED cards
    meta/<stem>.json     the corrected cards with pixel boxes and seats, and what the detector said

File names are generated here (UTC time + random suffix); nothing from the request names a file.
The folder is bounded (``MAX_CORRECTIONS`` examples, ``MAX_CORRECTIONS_BYTES``): once full, a new example is refused
(507) until some are moved out of it; nothing saved is ever deleted here.
A save is atomic with its database row: the files are written under partial names, the row commits,
then the files take their names; ``recover_corrections`` finishes or clears what a kill interrupted.
"""

from __future__ import annotations

import collections
import datetime
import json
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, current_app, jsonify

from scorer.cards import CLASS_NAMES, Card, ensure_distinct
from scorer.errors import OkginError
from scorer.vision.boxes import clip_box
from scorer.vision.labels import dataset_yaml, label_line, write_label_file
from web.db import connect, transaction
from web.detection import service
from web.errors import ApiError
from web.request_json import json_object, pixel

bp = Blueprint("correct", __name__, url_prefix="/correct")

MAX_CARDS_PER_FRAME = 60
PARTIAL_SUFFIX = ".partial"
MAX_CORRECTIONS = 5000
"""The most examples the corrections folder holds (``MAX_CORRECTIONS`` in the app config overrides it): thousands of
corrected frames are more than a retraining takes, and any client on the LAN may save them. Beyond it a new example
is refused, never made room for: the examples are the players' work, so only they move some out of the folder."""
MAX_CORRECTIONS_BYTES = 2 * 1024**3
"""The most bytes the corrections folder's images take (``MAX_CORRECTIONS_BYTES`` in the app config): a camera frame
is about 200 KB, so 5,000 of them fit in 1 GB, but an uploaded frame may be 10 MB, and 200 of those reach 2 GB."""


def corrections_dir() -> Path:
    return Path(current_app.config["CORRECTIONS_DIR"])


def corrections_usage(root: Path) -> tuple[int, int]:
    """How many examples the corrections folder holds and how many bytes their images take (their labels and meta
    files are a few hundred bytes each, not worth a ``stat`` of each at every save).

    Read from the folder at each save, so examples moved out of it count no more.
    """
    examples = size = 0
    try:
        with os.scandir(root / "images") as entries:
            for entry in entries:
                if entry.is_file(follow_symlinks=False):
                    size += entry.stat(follow_symlinks=False).st_size
                    examples += not entry.name.endswith(PARTIAL_SUFFIX)
    except OSError:  # no folder yet (or none readable: writing it will say so)
        pass
    return examples, size


def ensure_room(root: Path, adding: int) -> None:
    """Refuse a new example of ``adding`` bytes when the folder holds ``MAX_CORRECTIONS`` examples, or would pass
    ``MAX_CORRECTIONS_BYTES`` with it. Nothing is deleted to make room. (Saves at the same moment may each pass the
    check, so the folder may go past its limits by as many examples as there are server threads.)

    :raises ApiError: 507 naming what the folder holds, its limits, and the folder to move examples out of.
    """
    most = int(current_app.config.get("MAX_CORRECTIONS", MAX_CORRECTIONS))
    most_bytes = int(current_app.config.get("MAX_CORRECTIONS_BYTES", MAX_CORRECTIONS_BYTES))
    examples, size = corrections_usage(root)
    if examples >= most or size + adding > most_bytes:
        raise ApiError(
            507,
            f"the corrections folder is full: it holds {examples} examples ({_file_size(size)}) and keeps at most"
            f" {most} ({_file_size(most_bytes)}); this correction was not saved. Move examples out of {root}"
            " (to train on them, say) to save more",
        )


def _file_size(size: int) -> str:
    return f"{size / 1024**3:.1f} GB" if size >= 1024**3 else f"{size / 1024**2:.1f} MB"


def parse_corrected_cards(value: object, width: int, height: int) -> list[dict[str, Any]]:
    """Validate ``[{"card": "QH", "box": [x1, y1, x2, y2], "seat": "1"?, "detected": "QD"?}, ...]``.

    :raises ApiError: 400 naming the first bad entry.
    """
    if not isinstance(value, list) or len(value) > MAX_CARDS_PER_FRAME:
        raise ApiError(400, f"cards must be a list of at most {MAX_CARDS_PER_FRAME} {{card, box}} objects")
    cards: list[dict[str, Any]] = []
    for index, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise ApiError(400, f"cards[{index}] must be an object with card and box")
        try:
            card = Card.parse(str(entry.get("card", "")))
        except OkginError as error:
            raise ApiError(400, f"cards[{index}]: {error}") from error
        box = entry.get("box")
        corners = [number for number in map(pixel, box) if number is not None] if isinstance(box, list) else []
        if not isinstance(box, list) or len(box) != 4 or len(corners) != 4:
            raise ApiError(400, f"cards[{index}].box must be [x1, y1, x2, y2] in pixels")
        x1, y1, x2, y2 = corners
        if not (x2 > x1 and y2 > y1 and x2 > 0 and y2 > 0 and x1 < width and y1 < height):
            raise ApiError(400, f"cards[{index}].box {box} is empty or outside the {width}x{height} frame")
        seat = entry.get("seat")
        detected = entry.get("detected")
        cards.append(
            {
                "card": card,
                "box": (x1, y1, x2, y2),
                "seat": seat if isinstance(seat, str) and len(seat) <= 16 else None,
                "detected": detected if isinstance(detected, str) and len(detected) <= 8 else None,
            }
        )
    try:
        ensure_distinct((entry["card"] for entry in cards), where="the corrected frame")
    except OkginError as error:
        raise ApiError(400, str(error)) from error
    return cards


def ensure_dataset_yaml(root: Path) -> None:
    """Write the dataset description once, so the folder trains as it is."""
    path = root / "data.yaml"
    if path.exists():
        return
    comment = (
        "Frames corrected by players in the okgin web app (click-to-correct).\n"
        "Boxes are whole-card boxes (union of the card's corner boxes) with corrected class ids."
    )
    path.write_text(dataset_yaml(root, CLASS_NAMES, "images", "images", comment), encoding="utf-8")


@bp.post("/examples")
def save_example() -> tuple[Response, int]:
    """Save a frame the page showed, with the corrected cards, as a labelled training example."""
    body = json_object()
    frame_id = body.get("frame_id")
    frame = service().frame(frame_id) if isinstance(frame_id, str) else None
    if frame is None or not isinstance(frame_id, str):
        raise ApiError(404, "that frame is no longer kept (only the last few are); correct the current frame")
    cards = parse_corrected_cards(body.get("cards"), frame.width, frame.height)
    now = datetime.datetime.now(datetime.UTC)
    stem = service().example_stem(frame_id, lambda: f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(4)}")
    created_at = now.isoformat(timespec="microseconds")
    width, height = frame.width, frame.height
    lines = [label_line(e["card"].class_id, clip_box(e["box"], width, height), width, height) for e in cards]
    meta = {
        "created_at": created_at,
        "width": frame.width,
        "height": frame.height,
        "box_kind": "card",
        "cards": [
            {"card": str(e["card"]), "box": list(e["box"]), "seat": e["seat"], "detected": e["detected"]} for e in cards
        ],
    }
    root = corrections_dir()
    if not (root / "images" / f"{stem}{frame.suffix}").exists():  # correcting a saved frame again replaces it
        ensure_room(root, len(frame.encoded))
    files: dict[Path, Callable[[Path], object]] = {  # meta last: recovery reads it to tell a committed save
        root / "images" / f"{stem}{frame.suffix}": lambda path: path.write_bytes(frame.encoded),
        root / "labels" / f"{stem}.txt": lambda path: write_label_file(path, lines),
        root / "meta" / f"{stem}.json": lambda path: path.write_text(json.dumps(meta, indent=1), encoding="utf-8"),
    }
    staged = stage_example(root, files)
    try:
        with transaction() as db:
            db.execute(
                "INSERT INTO corrections (created_at, stem, cards) VALUES (?, ?, ?)"
                " ON CONFLICT (stem) DO UPDATE SET created_at = excluded.created_at, cards = excluded.cards",
                (created_at, stem, " ".join(str(e["card"]) for e in cards)),
            )
    except BaseException:
        for partial, _ in staged:
            partial.unlink(missing_ok=True)
        raise
    for partial, final in staged:  # committed: the files take their names (recover_corrections finishes this)
        os.replace(partial, final)
    return jsonify(saved=stem, cards=len(cards)), 201


def stage_example(root: Path, files: dict[Path, Callable[[Path], object]]) -> list[tuple[Path, Path]]:
    """Write each file (``files`` maps its name to what writes it) under a partial name
    (``<name>.<token>.partial``), flushed to disk; return (partial, final) pairs.

    The example exists once its row commits; only then do the files take their names, so a kill at any
    moment leaves either a complete example or partial files that ``recover_corrections`` clears.

    :raises ApiError: 507 when the corrections folder cannot be written (nothing is left behind).
    """
    token = secrets.token_hex(4)
    staged: list[tuple[Path, Path]] = []
    try:
        for folder in ("images", "labels", "meta"):
            (root / folder).mkdir(parents=True, exist_ok=True)
        ensure_dataset_yaml(root)
        for final, write in files.items():
            partial = final.with_name(f"{final.name}.{token}{PARTIAL_SUFFIX}")
            staged.append((partial, final))
            write(partial)
            with partial.open("rb+") as file:
                os.fsync(file.fileno())
    except OSError as error:
        for partial, _ in staged:
            partial.unlink(missing_ok=True)
        raise ApiError(507, f"cannot write the corrections folder {root}: {error.strerror}") from error
    return staged


def recover_corrections(root: Path, database: Path) -> int:
    """Finish or discard what a killed save left; return how many partial files were handled.

    A save whose row committed (the row's ``created_at`` is the partial meta file's) gets its files moved
    into place; any other partial files are deleted. Runs when the app starts, before it serves.
    """
    partials = sorted(root.glob(f"*/*{PARTIAL_SUFFIX}"))
    if not partials:
        return 0
    connection = connect(database)
    try:
        committed = dict(connection.execute("SELECT stem, created_at FROM corrections").fetchall())
    finally:
        connection.close()
    saves: dict[str, list[Path]] = collections.defaultdict(list)  # "<stem>.<token>" -> its partial files
    for partial in partials:
        final_name, _, token = partial.name.removesuffix(PARTIAL_SUFFIX).rpartition(".")
        saves[f"{final_name.split('.')[0]}.{token}"].append(partial)
    for save, files in saves.items():
        stem = save.split(".")[0]
        meta = next((file for file in files if file.parent.name == "meta"), None)
        keep = meta is not None and committed.get(stem) == _created_at(meta)
        for partial in sorted(files, key=lambda file: file.parent.name == "meta"):
            if keep:
                os.replace(partial, partial.with_name(partial.name.removesuffix(PARTIAL_SUFFIX).rpartition(".")[0]))
            else:
                partial.unlink(missing_ok=True)
    return len(partials)


def _created_at(meta: Path) -> str | None:
    try:
        created = json.loads(meta.read_text(encoding="utf-8")).get("created_at")
    except (OSError, ValueError, AttributeError):
        return None
    return created if isinstance(created, str) else None
