"""Rendered table scenes with exact truth: which card lies where, and which corner indices a camera can see.

A scene is a pure function of ``(seed, config)``. Cards are laid out on a flat table (hands as overlapping
rows, fans and cascades per seat, a stock of backs, a discard pile, the upcard, strays), seen through a tilted
camera, then degraded like a webcam frame. Every face's index boxes (``faces.calibrate``) are carried through
the same transforms; an index is labelled only when at least ``min_visible`` of it is in the frame and not
under a later card or an object over the cards.

Seats follow the scoring app: seat 1 sits at the bottom of the frame (its cards upright to the camera), seat 2
at the top (upside down), seats 3 and 4 at the left and right.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scorer.cards import DECK, Card, ensure_distinct
from scorer.synth import clutter
from scorer.synth.backgrounds import make_background
from scorer.synth.camera import apply_camera
from scorer.synth.faces import (
    DEFAULT_FACES_DIR,
    Deck,
    FacesUnavailableError,
    IndexBox,
    available_decks,
    four_index_variant,
    load_deck,
)
from scorer.synth.geometry import bounding_box, camera_homography, polygon_mask, project, rotation, scaling, translation
from scorer.synth.procedural import is_dark_style, parse_procedural_name, procedural_deck
from scorer.vision.labels import label_line

CARD_WIDTH_CM = 6.3
SEAT_ANGLES = {1: 0.0, 2: 180.0, 3: 90.0, 4: -90.0}
"""Rotation of a seat's cards on screen: each player's cards read upright from that player's side."""

ZONES = ("hand", "upcard", "discard", "stock", "stray", "closeup", "distractor")


@dataclasses.dataclass(frozen=True)
class SceneConfig:
    """Everything a scene depends on besides its seed."""

    faces_dir: Path = DEFAULT_FACES_DIR
    decks: tuple[str, ...] | None = None  # None: every rendered deck
    width_range: tuple[int, int] = (640, 1920)
    closeup_fraction: float = 0.25
    min_visible: float = 0.6
    max_tilt: float = 40.0
    min_box_pixels: float = 5.0  # index boxes narrower or shorter than this are too small to read, so unlabelled
    four_index_chance: float = 0.3  # share of scenes whose deck repeats its indices in all four corners
    squeeze_chance: float = 0.3  # share of scenes squeezed along one axis, like photos exported to a square
    procedural_fraction: float = 0.6  # share of scenes drawn in a procedural index style (see procedural.py)
    style_pool: str = "train"  # font pool of procedural styles: "train", or "heldout" for leave-styles-out val
    dark_fraction: float | None = None  # share of procedural scenes printed on a dark face; None: DARK_SHARE
    macro_fraction: float = 0.4  # share of close-ups showing one or two cards filling the frame
    keyboard_fraction: float = 0.0  # share of table scenes given one more keyboard under the cards (hard negatives)
    reversed_share: float = 0.0  # share of laid groups spread from the other end (0: none, and no draw for it)


DEFAULT_CONFIG = SceneConfig()


@dataclasses.dataclass(frozen=True)
class IndexLabel:
    """One corner index as the camera sees it."""

    card: Card
    corner: str
    quad: tuple[tuple[float, float], ...]  # the index zone's 4 corners in image pixels
    box: tuple[float, float, float, float]  # its axis-aligned box, clipped to the frame
    visible: float  # share of the zone inside the frame and not covered
    labelled: bool


@dataclasses.dataclass(frozen=True)
class PlacedCard:
    """One card (or back, or joker) in a scene, with its outline as seen and its role at the table."""

    name: str  # "AS", "back", "joker"
    card: Card | None
    outline: tuple[
        tuple[float, float], ...
    ]  # corners of the upright face: top-left, top-right, bottom-right, bottom-left
    z: int  # drawing order, 0 lowest
    zone: str  # one of ZONES
    seat: int | None
    group: int | None  # meld/deadwood group within a seat's laid-down hand
    indices: tuple[IndexLabel, ...]


@dataclasses.dataclass(frozen=True)
class SceneTruth:
    """Everything known about a rendered scene."""

    seed: int
    kind: str  # "table" or "closeup"
    deck: str
    width: int
    height: int
    cards: tuple[PlacedCard, ...]
    jpeg_quality: int

    @property
    def labels(self) -> list[IndexLabel]:
        """The labelled (visible) corner indices."""
        return [index for placed in self.cards for index in placed.indices if index.labelled]

    def hands(self) -> dict[int, list[Card]]:
        """Cards laid down per seat, in layout order."""
        result: dict[int, list[Card]] = {}
        for placed in sorted(self.cards, key=lambda placed: placed.z):
            if placed.zone == "hand" and placed.seat is not None and placed.card is not None:
                result.setdefault(placed.seat, []).append(placed.card)
        return result

    @property
    def upcard(self) -> Card | None:
        """The upcard, when the scene has one."""
        return next((placed.card for placed in self.cards if placed.zone == "upcard"), None)

    def yolo_lines(self) -> list[str]:
        """Ultralytics label lines: ``class cx cy w h`` normalised to the frame, one per labelled index."""
        return [label_line(label.card.class_id, label.box, self.width, self.height) for label in self.labels]

    def to_json(self) -> dict[str, Any]:
        """The full truth as plain JSON data (the dataset's ``meta/*.json`` sidecar)."""
        return {
            "seed": self.seed,
            "kind": self.kind,
            "deck": self.deck,
            "width": self.width,
            "height": self.height,
            "jpeg_quality": self.jpeg_quality,
            "cards": [
                {
                    "name": placed.name,
                    "class_id": placed.card.class_id if placed.card else None,
                    "outline": [[round(x, 2), round(y, 2)] for x, y in placed.outline],
                    "z": placed.z,
                    "zone": placed.zone,
                    "seat": placed.seat,
                    "group": placed.group,
                    "indices": [
                        {
                            "corner": index.corner,
                            "quad": [[round(x, 2), round(y, 2)] for x, y in index.quad],
                            "box": [round(value, 2) for value in index.box],
                            "visible": round(index.visible, 3),
                            "labelled": index.labelled,
                        }
                        for index in placed.indices
                    ],
                }
                for placed in self.cards
            ],
        }


@dataclasses.dataclass
class _Item:
    """A card being laid out: its face, where its centre goes on the table, its turn and its role."""

    name: str
    card: Card | None
    face: np.ndarray
    centre: tuple[float, float]
    angle: float
    zone: str
    seat: int | None = None
    group: int | None = None


def _face_item(deck: Deck, card: Card, zone: str, centre: tuple[float, float], angle: float, **role: Any) -> _Item:
    return _Item(str(card), card, deck.faces[card], centre, angle, zone, **role)


def deck_named(name: str, faces_dir: Path = DEFAULT_FACES_DIR) -> Deck:
    """A deck by the name a scene's truth records: a rendered design (``anglo``, ``anglo+4``) or a drawn
    style (``procedural-train-7``).

    :raises FacesUnavailableError: when a design is not rendered or the name is malformed.
    """
    procedural = parse_procedural_name(name)
    return procedural_deck(procedural[1], procedural[0]) if procedural else load_deck(name, Path(faces_dir))


def _style_id(rng: np.random.Generator, config: SceneConfig) -> int:
    """A random procedural style; with ``dark_fraction``, one printed on a dark face that share of the time
    (drawn again until its face is as chosen), else dark as often as styles are (``DARK_SHARE``)."""
    style_id = int(rng.integers(2**31))
    if config.dark_fraction is None:
        return style_id
    dark = rng.random() < config.dark_fraction
    while is_dark_style(style_id, config.style_pool) != dark:
        style_id = int(rng.integers(2**31))
    return style_id


def _choose_deck(rng: np.random.Generator, config: SceneConfig, name: str | None) -> Deck:
    """The named deck, or a random one: a procedural style (``procedural_fraction`` of scenes, or every scene
    when no packaged deck is rendered) or a packaged design, a third of those as a four-index variant."""
    if name is not None:
        return deck_named(name, config.faces_dir)
    names = list(config.decks or available_decks(config.faces_dir))
    if config.procedural_fraction > 0 and (not names or rng.random() < config.procedural_fraction):
        return procedural_deck(_style_id(rng, config), config.style_pool)
    if not names:
        raise FacesUnavailableError(
            f"no rendered decks in {config.faces_dir}; run: okgin data faces --out {config.faces_dir}"
        )
    chosen = names[int(rng.integers(len(names)))]
    if rng.random() < config.four_index_chance:
        return four_index_variant(chosen, Path(config.faces_dir))
    return load_deck(chosen, Path(config.faces_dir))


def _index_extent(deck: Deck) -> tuple[float, float]:
    """How far (as a share of card width, height) the top-left indices reach, over the whole deck."""
    boxes = [box.box for boxes in deck.indices.values() for box in boxes if box.corner == "tl"]
    if not boxes:
        return 0.2, 0.25
    return float(np.percentile([b[2] for b in boxes], 90)), float(np.percentile([b[3] for b in boxes], 90))


def _group_positions(
    rng: np.random.Generator, count: int, card_size: tuple[float, float], extent: tuple[float, float], style: str
) -> list[tuple[float, float, float]]:
    """Local (x, y, angle) of each card of one laid-down group; later cards lie on top of earlier ones.

    Each card covers 70-85% of the one before but leaves that card's top-left index in view, as players lay
    melds; the overlap shrinks for decks with large indices.
    """
    card_width, card_height = card_size
    if style == "cascade":
        cover = min(rng.uniform(0.70, 0.85), 1 - 1.12 * extent[1])
        step = (1 - cover) * card_height
        return [(rng.normal(0, 0.015 * card_width), k * step, rng.normal(0, 1.0)) for k in range(count)]
    cover = min(rng.uniform(0.70, 0.85), 1 - 1.12 * extent[0])
    step = (1 - cover) * card_width
    if style == "fan":
        radius = rng.uniform(1.2, 2.2) * card_height
        spread = math.degrees(step / radius)
        angles = [(k - (count - 1) / 2) * spread for k in range(count)]
        return [(radius * math.sin(math.radians(a)), radius * (1 - math.cos(math.radians(a))), a) for a in angles]
    return [(k * step, rng.normal(0, 0.01 * card_height), rng.normal(0, 1.0)) for k in range(count)]


def _spread_from_other_end(
    positions: Sequence[tuple[float, float, float]], style: str
) -> list[tuple[float, float, float]]:
    """A group's positions mirrored in the space it takes, later cards still on top: a row or fan leftwards, a
    cascade upwards."""
    if style == "cascade":
        lowest = max(y for _, y, _ in positions)
        return [(x, lowest - y, angle) for x, y, angle in positions]
    return [(-x, y, -angle) for x, y, angle in positions]


def _split_groups(rng: np.random.Generator, cards: Sequence[Card]) -> list[list[Card]]:
    """Cut a hand into laid-down groups of 3-5 (melds) with a remainder (deadwood), keeping the order."""
    groups, rest = [], list(cards)
    while len(rest) > 4 and rng.random() < 0.85:
        size = int(rng.integers(3, 6))
        groups.append(rest[:size])
        rest = rest[size:]
    if rest:
        groups.append(rest)
    return groups


def _seat_items(
    rng: np.random.Generator,
    deck: Deck,
    seat: int,
    cards: Sequence[Card],
    canvas: tuple[int, int],
    card_size: tuple[float, float],
    mild: bool,
    reversed_share: float = 0.0,
) -> list[_Item]:
    """A player's laid-down hand: groups side by side along the player's table edge, wrapping to a second line.

    A share ``reversed_share`` of the groups is spread from the other end, each card put on top to the left of
    the one before (above it in a cascade), as some players spread their cards: the covered cards then show
    their bottom-right index only.
    """
    width, height = canvas
    card_width, card_height = card_size
    extent = _index_extent(deck)
    along = width if seat in (1, 2) else height
    margin = 0.5 * card_height + (0.1 if mild else rng.uniform(0.01, 0.08)) * min(width, height)
    centre = {
        1: (width / 2, height - margin),
        2: (width / 2, margin),
        3: (margin, height / 2),
        4: (width - margin, height / 2),
    }[seat]
    jitter = 0.03 * min(width, height)
    centre = (centre[0] + rng.uniform(-jitter, jitter), centre[1] + rng.uniform(-jitter, jitter))
    seat_angle = SEAT_ANGLES[seat] + rng.uniform(-3, 3) * (0.5 if mild else 2)

    local: list[tuple[float, float, float, Card, int]] = []
    cursor_x, line_y, line_start = 0.0, 0.0, 0
    lines: list[tuple[int, int, float]] = []  # (first item, end item, line length)
    for group_number, group in enumerate(_split_groups(rng, cards)):
        style = "row" if mild else str(rng.choice(["row", "fan", "cascade"], p=[0.6, 0.2, 0.2]))
        positions = _group_positions(rng, len(group), card_size, extent, style)
        if reversed_share > 0 and rng.random() < reversed_share:
            positions = _spread_from_other_end(positions, style)
        xs = [x for x, _, _ in positions]
        group_width = max(xs) - min(xs) + card_width
        if cursor_x > 0 and cursor_x + group_width > 0.92 * along:
            lines.append((line_start, len(local), cursor_x))
            cursor_x, line_y, line_start = 0.0, line_y - 1.15 * card_height, len(local)
        for (x, y, angle), card in zip(positions, group, strict=True):
            local.append((cursor_x + x - min(xs) + card_width / 2, line_y + y, angle, card, group_number))
        cursor_x += group_width + rng.uniform(0.12, 0.4) * card_width
    lines.append((line_start, len(local), cursor_x))

    to_canvas = translation(*centre) @ rotation(seat_angle)
    items = []
    for first, end, length in lines:
        for x, y, angle, card, group_number in local[first:end]:
            point = project(to_canvas, np.array([[x - length / 2, y]]))[0]
            item = _face_item(
                deck,
                card,
                "hand",
                (float(point[0]), float(point[1])),
                seat_angle + angle,
                seat=seat,
                group=group_number,
            )
            items.append(item)
    return items


def _deal(rng: np.random.Generator, exclude: Iterable[Card], count: int) -> list[Card]:
    excluded = set(exclude)
    pool = [card for card in DECK if card not in excluded]
    order = rng.permutation(len(pool))
    return [pool[i] for i in order[:count]]


def _table_items(
    rng: np.random.Generator,
    deck: Deck,
    canvas: tuple[int, int],
    card_size: tuple[float, float],
    hands: dict[int, list[Card]] | None,
    upcard: Card | None,
    mild: bool,
    strays: int | None,
    discards: int | None,
    reversed_share: float = 0.0,
) -> list[_Item]:
    """The end of a round: laid-down hands per seat, the stock, discards, the upcard, strays and distractors."""
    width, height = canvas
    card_width = card_size[0]
    if hands is None:
        seats = [1, 2] if rng.random() < 0.7 else [1, 2, 3] if rng.random() < 0.5 else [1, 2, 3, 4]
        dealt = _deal(rng, [upcard] if upcard else [], sum(int(rng.integers(7, 12)) for _ in seats))
        sizes = np.array_split(np.arange(len(dealt)), len(seats))
        hands = {seat: [dealt[i] for i in chunk] for seat, chunk in zip(seats, sizes, strict=True)}
    used = [card for cards in hands.values() for card in cards] + ([upcard] if upcard else [])
    ensure_distinct(used, "scene")
    if upcard is None and not mild:
        upcard = _deal(rng, used, 1)[0] if rng.random() < 0.8 else None
        used += [upcard] if upcard else []

    items: list[_Item] = []
    middle_y = height / 2 + rng.uniform(-0.04, 0.04) * height
    stock_angle = rng.uniform(-6, 6) + (90 if rng.random() < 0.3 else 0)
    stock_centre = (width * rng.uniform(0.33, 0.42), middle_y)
    for _ in range(int(rng.integers(2, 9))):
        offset = rng.normal(0, 0.015 * card_width, 2)
        back = deck.backs[0] if deck.backs else deck.faces[DECK[0]]
        centre = (stock_centre[0] + offset[0], stock_centre[1] + offset[1])
        items.append(_Item("back", None, back, centre, stock_angle + rng.normal(0, 1.5), "stock"))
    discard_count = (0 if mild else int(rng.integers(0, 6))) if discards is None else discards
    discard_centre = (width * rng.uniform(0.47, 0.55), middle_y)
    for card in _deal(rng, used, discard_count):
        used.append(card)
        offset = rng.normal(0, 0.08 * card_width, 2)
        centre = (discard_centre[0] + offset[0], discard_centre[1] + offset[1])
        items.append(
            _face_item(deck, card, "discard", centre, rng.uniform(-25, 25) + (180 if rng.random() < 0.3 else 0))
        )
    if upcard is not None:
        centre = (width * rng.uniform(0.64, 0.72), middle_y + rng.uniform(-0.03, 0.03) * height)
        items.append(_face_item(deck, upcard, "upcard", centre, rng.uniform(-12, 12) * (0.3 if mild else 1)))
    for seat, cards in sorted(hands.items()):
        items.extend(_seat_items(rng, deck, seat, cards, canvas, card_size, mild, reversed_share))
    stray_count = (0 if mild else int(rng.choice(4, p=[0.4, 0.3, 0.2, 0.1]))) if strays is None else strays
    for card in _deal(rng, used, stray_count):
        used.append(card)
        centre = (rng.uniform(0, width), rng.uniform(0, height))
        items.append(_face_item(deck, card, "stray", centre, rng.uniform(0, 360)))
    if not mild:
        items.extend(_distractor_items(rng, deck, canvas))
    return items


def _distractor_items(rng: np.random.Generator, deck: Deck, canvas: tuple[int, int]) -> list[_Item]:
    """Jokers and loose backs: card-shaped and printed, but never labelled."""
    width, height = canvas
    items = []
    for images, name, chance in ((deck.jokers, "joker", 0.2), (deck.backs, "back", 0.2)):
        if images and rng.random() < chance:
            image = images[int(rng.integers(len(images)))]
            centre = (rng.uniform(0, width), rng.uniform(0, height))
            items.append(_Item(name, None, image, centre, rng.uniform(0, 360), "distractor"))
    return items


def _closeup_items(rng: np.random.Generator, deck: Deck, canvas: tuple[int, int], card_width: float) -> list[_Item]:
    """A phone photo of a few big cards: scattered at any angle, or held in a fan."""
    width, height = canvas
    count = int(rng.integers(3, 7))
    cards = _deal(rng, [], count)
    items = []
    if rng.random() < 0.35:
        card_height = card_width * deck.size[1] / deck.size[0]
        radius = rng.uniform(1.0, 2.0) * card_height
        spread = rng.uniform(8, 20)
        pivot = (width / 2 + rng.uniform(-0.1, 0.1) * width, height / 2 + radius * rng.uniform(0.6, 1.0))
        base = rng.uniform(-30, 30) + (180 if rng.random() < 0.25 else 0)
        for k, card in enumerate(cards):
            angle = base + (k - (count - 1) / 2) * spread
            point = project(translation(*pivot) @ rotation(angle), np.array([[0.0, -radius]]))[0]
            items.append(_face_item(deck, card, "closeup", (float(point[0]), float(point[1])), angle))
        return items
    for card in cards:
        centre = (rng.uniform(0.12, 0.88) * width, rng.uniform(0.12, 0.88) * height)
        items.append(_face_item(deck, card, "closeup", centre, rng.uniform(0, 360)))
    if deck.jokers and rng.random() < 0.25:
        centre = (rng.uniform(0.1, 0.9) * width, rng.uniform(0.1, 0.9) * height)
        items.insert(
            int(rng.integers(len(items) + 1)),
            _Item("joker", None, deck.jokers[0], centre, rng.uniform(0, 360), "distractor"),
        )
    return items


def _face_to_image(item: _Item, card_width: float, homography: np.ndarray) -> np.ndarray:
    """The homography from a face's pixels to the image: scale to size, turn, place on the table, view."""
    face_height, face_width = item.face.shape[:2]
    to_table = translation(*item.centre) @ rotation(item.angle) @ scaling(card_width / face_width)
    result: np.ndarray = homography @ to_table @ translation(-face_width / 2, -face_height / 2)
    return result


def _composite(
    image: np.ndarray, face: np.ndarray, matrix: np.ndarray, shadow: tuple[float, float, float, float]
) -> None:
    """Warp a BGRA face into ``image`` (float32 BGR, in place) with a soft drop shadow under it.

    Faces much larger than their footprint are first shrunk with area averaging, so small cards keep legible,
    unaliased glyphs.
    """
    height, width = image.shape[:2]
    face_height, face_width = face.shape[:2]
    corners = np.array([[0, 0], [face_width, 0], [face_width, face_height], [0, face_height]], np.float64)
    quad = project(matrix, corners)
    shrink = math.sqrt(cv2.contourArea(quad.astype(np.float32)) / (face_width * face_height))
    if shrink < 0.6:
        size = (max(2, round(face_width * shrink * 1.3)), max(2, round(face_height * shrink * 1.3)))
        face = cv2.resize(face, size, interpolation=cv2.INTER_AREA)
        matrix = matrix @ scaling(face_width / size[0], face_height / size[1])
    offset_x, offset_y, blur, darkness = shadow
    pad = int(abs(offset_x) + abs(offset_y) + 3 * blur) + 2
    x1, y1, x2, y2 = bounding_box(quad)
    left, top = max(0, math.floor(x1) - pad), max(0, math.floor(y1) - pad)
    right, bottom = min(width, math.ceil(x2) + pad), min(height, math.ceil(y2) + pad)
    if right <= left or bottom <= top:
        return
    size = (right - left, bottom - top)
    local = translation(-left, -top) @ matrix
    warped = cv2.warpPerspective(
        face, local, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0
    )
    alpha = warped[:, :, 3].astype(np.float32) / 255
    region = image[top:bottom, left:right]
    if darkness > 0:
        shadow_alpha = cv2.warpAffine(alpha, np.array([[1, 0, offset_x], [0, 1, offset_y]], np.float32), size)
        shadow_alpha = cv2.GaussianBlur(shadow_alpha, (0, 0), max(0.5, blur))
        region *= (1 - darkness * shadow_alpha)[:, :, None]
    region[:] = region * (1 - alpha[:, :, None]) + warped[:, :, :3].astype(np.float32) * alpha[:, :, None]


def _index_quad(matrix: np.ndarray, face: np.ndarray, index: IndexBox) -> np.ndarray:
    face_height, face_width = face.shape[:2]
    x1, y1, x2, y2 = index.box
    corners = np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]]) * np.array([face_width, face_height])
    return project(matrix, corners)


def _visible_share(quad: np.ndarray, covers: list[np.ndarray], occluded: np.ndarray) -> float:
    """The share of an index zone inside the frame and under none of the covering outlines or objects."""
    height, width = occluded.shape
    x1, y1, x2, y2 = bounding_box(quad)
    left, top = math.floor(x1), math.floor(y1)
    size = (math.ceil(x2) - left + 1, math.ceil(y2) - top + 1)
    if not np.isfinite(quad).all() or size[0] > 2 * width or size[1] > 2 * height:
        return 0.0  # projected past the horizon of a steep view: no readable index, and no huge mask
    zone = polygon_mask(quad, (left, top), size)
    total = int(zone.sum())
    if total == 0:
        return 0.0
    seen = zone.copy()
    for cover in covers:
        cx1, cy1, cx2, cy2 = bounding_box(cover)
        if cx2 < x1 or cx1 > x2 or cy2 < y1 or cy1 > y2:
            continue
        seen &= 1 - polygon_mask(cover, (left, top), size)
    frame = np.zeros_like(seen)
    fy1, fy2 = max(0, top), min(height, top + size[1])
    fx1, fx2 = max(0, left), min(width, left + size[0])
    if fy2 > fy1 and fx2 > fx1:
        frame[fy1 - top : fy2 - top, fx1 - left : fx2 - left] = 1 - occluded[fy1:fy2, fx1:fx2]
    return float((seen & frame).sum()) / total


def _render(
    rng: np.random.Generator,
    items: list[_Item],
    deck: Deck,
    size: tuple[int, int],
    card_width: float,
    homography: np.ndarray,
    config: SceneConfig,
    mild: bool,
) -> tuple[np.ndarray, list[PlacedCard]]:
    """Draw the table, cards and clutter, then label each index by what stays visible; camera effects last."""
    width, height = size
    image = make_background(rng, width, height)
    card_pixels = card_width * float(np.sqrt(abs(np.linalg.det(homography[:2, :2]))))
    if not mild and rng.random() < 0.4:
        clutter.draw_under_clutter(image, rng, card_pixels, int(rng.integers(1, 3)))
    if not mild and config.keyboard_fraction > 0 and rng.random() < config.keyboard_fraction:
        clutter.draw_keyboard(image, rng, card_pixels)  # drawn only when asked: the default scenes stay as they were
    light = rng.uniform(0, 2 * math.pi)
    shadow_length = rng.uniform(0.01, 0.05) * card_pixels
    shadow = (
        math.cos(light) * shadow_length,
        math.sin(light) * shadow_length,
        rng.uniform(0.01, 0.05) * card_pixels,
        rng.uniform(0.15, 0.5),
    )
    matrices = [_face_to_image(item, card_width, homography) for item in items]
    for item, matrix in zip(items, matrices, strict=True):
        tint = 1 + rng.normal(0, 0.03)
        face = (
            item.face
            if abs(tint - 1) < 0.01
            else np.dstack([np.clip(item.face[:, :, :3] * tint, 0, 255).astype(np.uint8), item.face[:, :, 3]])
        )
        _composite(image, face, matrix, shadow)
    occluded = np.zeros((height, width), np.uint8)
    if not mild and rng.random() < 0.3:
        clutter.draw_over_clutter(image, occluded, rng, card_pixels, int(rng.integers(1, 3)))

    outlines = []
    for item, matrix in zip(items, matrices, strict=True):
        face_height, face_width = item.face.shape[:2]
        outlines.append(
            project(
                matrix, np.array([[0, 0], [face_width, 0], [face_width, face_height], [0, face_height]], np.float64)
            )
        )
    placed = []
    for z, (item, matrix, outline) in enumerate(zip(items, matrices, outlines, strict=True)):
        labels = []
        if item.card is not None:
            for index in deck.indices[item.card]:
                quad = _index_quad(matrix, item.face, index)
                share = _visible_share(quad, outlines[z + 1 :], occluded)
                x1, y1, x2, y2 = bounding_box(quad)
                box = (max(0.0, x1), max(0.0, y1), min(float(width), x2), min(float(height), y2))
                big_enough = min(box[2] - box[0], box[3] - box[1]) >= config.min_box_pixels
                labels.append(
                    IndexLabel(
                        item.card, index.corner, _points(quad), box, share, share >= config.min_visible and big_enough
                    )
                )
        placed.append(
            PlacedCard(item.name, item.card, _points(outline), z, item.zone, item.seat, item.group, tuple(labels))
        )
    image = apply_camera(image, rng, 0.3 if mild else 1.0)
    return np.clip(image, 0, 255).astype(np.uint8), placed


def _points(points: np.ndarray) -> tuple[tuple[float, float], ...]:
    return tuple((float(x), float(y)) for x, y in points)


def _camera(rng: np.random.Generator, size: tuple[int, int], max_tilt: float, tilt: float | None) -> np.ndarray:
    width, height = size
    tilt = float(rng.uniform(0, max_tilt) if tilt is None else tilt) * (1 if rng.random() < 0.8 else -1)
    yaw = rng.uniform(-0.3, 0.3) * max_tilt
    roll = rng.uniform(-8, 8)
    return camera_homography(width, height, tilt, yaw, roll, focal=rng.uniform(1.0, 2.0) * width)


def _squeeze(rng: np.random.Generator, size: tuple[int, int], chance: float) -> np.ndarray:
    """Squeeze the view along x or y by up to 45%, about the frame's centre, or leave it (identity).

    Photo datasets are often resized to a square without keeping the aspect ratio (the real yardstick photos
    are), so card shapes and glyphs get squashed; the detector should take that in its stride.
    """
    if rng.random() >= chance:
        return np.eye(3)
    factor = rng.uniform(0.55, 0.95)  # up to 1.8x: a 16:9 frame stretched square
    width, height = size
    scale = scaling(factor, 1.0) if rng.random() < 0.5 else scaling(1.0, factor)
    result: np.ndarray = translation(width / 2, height / 2) @ scale @ translation(-width / 2, -height / 2)
    return result


def _frame_size(rng: np.random.Generator, width_range: tuple[int, int]) -> tuple[int, int]:
    width = int(rng.integers(width_range[0], width_range[1] + 1)) // 2 * 2
    aspect = (16 / 9, 4 / 3, 1.0)[int(rng.choice(3, p=[0.5, 0.35, 0.15]))]
    return width, round(width / aspect) // 2 * 2


def _macro_items(rng: np.random.Generator, deck: Deck, canvas: tuple[int, int]) -> list[_Item]:
    """A phone held close over one or two cards (sometimes beside a joker): they fill the frame, and their
    indices reach 250 px; corners may fall outside the picture."""
    width, height = canvas
    items = []
    for card in _deal(rng, [], int(rng.integers(1, 3))):
        centre = (rng.uniform(0.3, 0.7) * width, rng.uniform(0.3, 0.7) * height)
        items.append(
            _face_item(deck, card, "closeup", centre, rng.uniform(-25, 25) + float(rng.choice([0, 90, 180, 270])))
        )
    if deck.jokers and rng.random() < 0.25:
        centre = (rng.uniform(0.1, 0.9) * width, rng.uniform(0.1, 0.9) * height)
        joker = _Item("joker", None, deck.jokers[0], centre, rng.uniform(0, 360), "distractor")
        items.insert(int(rng.integers(len(items) + 1)), joker)
    return items


def render_table_scene(
    seed: int,
    hands: dict[int, list[Card]] | None = None,
    upcard: Card | None = None,
    deck: str | None = None,
    width: int = 1280,
    height: int = 720,
    tilt: float | None = None,
    mild: bool = False,
    table_cm: float | None = None,
    strays: int | None = None,
    discards: int | None = None,
    config: SceneConfig = DEFAULT_CONFIG,
) -> tuple[np.ndarray, SceneTruth]:
    """Render the end of a round at a table: a BGR image and its truth.

    ``hands`` maps seats (1 bottom, 2 top, 3 left, 4 right) to the cards they laid down; None deals at random.
    ``mild`` keeps the view easy to read (tilt under 15 degrees, no strays, clutter or discards unless asked,
    light camera effects), for testing a recogniser end to end.

    :raises DuplicateCardError: when a card is in two hands or is also the upcard.
    :raises FacesUnavailableError: when no deck has been rendered.
    """
    rng = np.random.default_rng(seed)
    chosen = _choose_deck(rng, config, deck)
    if table_cm is None:
        table_cm = rng.uniform(80, 110) if mild else rng.uniform(50, min(120.0, CARD_WIDTH_CM * width / 38))
    card_width = CARD_WIDTH_CM * width / table_cm
    card_size = (card_width, card_width * chosen.size[1] / chosen.size[0])
    if tilt is None and mild:
        tilt = rng.uniform(0, 15)
    homography = _camera(rng, (width, height), config.max_tilt, tilt)
    if not mild:
        homography = _squeeze(rng, (width, height), config.squeeze_chance) @ homography
    items = _table_items(
        rng, chosen, (width, height), card_size, hands, upcard, mild, strays, discards, config.reversed_share
    )
    image, placed = _render(rng, items, chosen, (width, height), card_width, homography, config, mild)
    quality = int(rng.integers(40, 96)) if not mild else 95
    return image, SceneTruth(seed, "table", chosen.name, width, height, tuple(placed), quality)


@dataclasses.dataclass(frozen=True)
class Placement:
    """A card put on the table by hand: its centre in untilted frame pixels and its clockwise turn in degrees."""

    card: Card
    centre: tuple[float, float]
    angle: float = 0.0
    zone: str = "stray"
    seat: int | None = None


def render_cards(
    seed: int,
    placements: Sequence[Placement],
    deck: str | None = None,
    width: int = 1280,
    height: int = 720,
    card_width: float = 120.0,
    tilt: float = 0.0,
    config: SceneConfig = DEFAULT_CONFIG,
) -> tuple[np.ndarray, SceneTruth]:
    """Render exactly these cards, later ones on top, with mild camera effects and no clutter.

    With ``tilt`` 0 the camera looks straight down, so ``centre`` is where the card's centre lands in the image.

    :raises DuplicateCardError: when a card is placed twice.
    """
    ensure_distinct([placement.card for placement in placements], "placements")
    rng = np.random.default_rng(seed)
    chosen = _choose_deck(rng, config, deck)
    items = [
        _face_item(chosen, placement.card, placement.zone, placement.centre, placement.angle, seat=placement.seat)
        for placement in placements
    ]
    homography = np.eye(3) if tilt == 0 else camera_homography(width, height, tilt, 0.0, 0.0, focal=1.5 * width)
    image, placed = _render(rng, items, chosen, (width, height), card_width, homography, config, mild=True)
    return image, SceneTruth(seed, "table", chosen.name, width, height, tuple(placed), 95)


def render_closeup_scene(
    seed: int, width: int = 1280, height: int = 960, deck: str | None = None, config: SceneConfig = DEFAULT_CONFIG
) -> tuple[np.ndarray, SceneTruth]:
    """Render a phone-style photo of 3-6 large, partly overlapping cards at any angle."""
    rng = np.random.default_rng(seed)
    chosen = _choose_deck(rng, config, deck)
    macro = rng.random() < config.macro_fraction
    card_width = (
        rng.uniform(0.4, 1.1 if width > height else 0.9) * min(width, height)
        if macro
        else rng.uniform(0.2, 0.45) * width
    )
    homography = _camera(rng, (width, height), min(30.0, config.max_tilt), None)
    homography = _squeeze(rng, (width, height), config.squeeze_chance) @ homography
    items = (
        _macro_items(rng, chosen, (width, height))
        if macro
        else _closeup_items(rng, chosen, (width, height), card_width)
    )
    image, placed = _render(rng, items, chosen, (width, height), card_width, homography, config, mild=False)
    return image, SceneTruth(seed, "closeup", chosen.name, width, height, tuple(placed), int(rng.integers(40, 96)))


def render_scene(seed: int, config: SceneConfig = DEFAULT_CONFIG) -> tuple[np.ndarray, SceneTruth]:
    """One training scene: a table view or (``closeup_fraction`` of the time) a close-up photo, of random size."""
    rng = np.random.default_rng([seed, 0x5CE7E])
    width, height = _frame_size(rng, config.width_range)
    if rng.random() < config.closeup_fraction:
        return render_closeup_scene(seed, width, height, config=config)
    return render_table_scene(seed, width=width, height=height, config=config)
