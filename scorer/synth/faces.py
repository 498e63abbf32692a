"""Card faces rendered from the free SVG decks of Debian's card games, with each face's corner indices measured.

Aisleriot's decks (package ``gnome-cards-data``) are one SVG sheet laid out as a 13 x 5 grid: rows clubs,
diamonds, hearts, spades (ace to king), then jokers and backs. Rendering the whole sheet once and cutting the
grid is both faster and more faithful than exporting elements one by one (``rsvg-convert --export-id``
mis-measures elements built from ``<use>`` references in most of these files).

KDE's decks (package ``kdegames-card-data-kf5``) name each card's element (``1_club``, ``queen_heart``) at
arbitrary places on the page; each element is exported on its own, at a zoom fitting the wanted height, and
trimmed to its opaque extent (the export's canvas is often padded).

A detector trained on these faces learns corner indices, so where an index sits must come from the deck's own
ink, never from a guess: index sizes differ threefold between designs. ``measure_indices`` finds, in each corner,
the ink glyph nearest the corner (the rank) and the glyphs stacked under it (the suit pip).

>>> [deck.name for deck in DECKS][:3]
['anglo', 'anglo_poker', 'bellot']
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import json
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cv2
import numpy as np

from scorer.cards import DECK, Card
from scorer.errors import OkginError

FACE_HEIGHT = 350
"""Height in pixels of every rendered face; widths follow each deck's aspect ratio."""

CORNERS: tuple[str, ...] = ("tl", "tr", "br", "bl")
"""Card corners in clockwise order from the top-left of an upright face."""

ROTATED_CORNERS = frozenset({"br", "bl"})
"""Corners whose index is printed upside down (rotated 180 degrees) relative to the upright face."""

REPO_FACES_DIR = Path(__file__).resolve().parents[2] / "datasets" / "faces"
DEFAULT_FACES_DIR = Path(os.environ.get("OKGIN_FACES_DIR") or REPO_FACES_DIR)
"""Where rendered faces live: the checkout's git-ignored ``datasets/faces``, or ``$OKGIN_FACES_DIR``."""
AISLERIOT_DIR = Path("/usr/share/aisleriot/cards")
KDE_DIR = Path("/usr/share/carddecks")
REQUIRED_PACKAGES = ("gnome-cards-data", "kdegames-card-data-kf5", "librsvg2-bin")
INSTALL_COMMAND = "sudo apt-get install -y --no-install-recommends " + " ".join(REQUIRED_PACKAGES)

_GRID_COLUMNS, _GRID_ROWS = 13, 5
_SUIT_ROWS = {"C": 0, "D": 1, "H": 2, "S": 3}
_EXTRA_CELLS = {"joker_black": 0, "joker_red": 1, "back": 2}  # columns of the grid's last row


class FacesUnavailableError(OkginError, RuntimeError):
    """The Debian packages that provide the decks, or the rendered faces, are missing."""


@dataclasses.dataclass(frozen=True)
class DeckSource:
    """One deck design: where its SVG lives and under which licence it may be used."""

    name: str
    svg: Path
    package: str
    licence: str
    extra_backs: int = 0  # further back designs after the first one in the last grid row
    layout: str = "grid"  # "grid": aisleriot's 13 x 5 sheet; "ids": KDE's named elements


_AISLERIOT_LICENCE = "GPL-3+ (gnome-cards-data copyright, Files: *)"
_AISLERIOT_OWN_NOTICES = {  # decks whose SVG states its own terms
    "bellot": "LGPL-3+ (SVG header: 2005 David Bellot)",
    "ornamental": "public domain (SVG metadata: Nicu Buculei, openclipart)",
    "tigullio": "GPL-3+/LGPL-3+ (SVG header: 2004-2008 Luciano Montanaro, 2022 Vincent Bermel)",
}

# Designs with standard English indices (A, 2-10, J, Q, K) above a French suit pip, red hearts and diamonds,
# black clubs and spades, checked by eye. Left out: German/French/Russian court letters (berlin, lattmann,
# rheinland, tarocco, ancient_french, slavic_costumes, Атласные: B/D/K, R/D/V, T), Swiss suits (swiss-xvii),
# four-colour suits (*_4_color, atlasnye_skat), a rank and suit side by side with no rotated index
# (tango_nuevo), courts with no letter at all (guyenne-classic), and near-duplicates that only differ by
# antialiasing (anglo_bitmap, gnomangelo_bitmap).
DECKS: tuple[DeckSource, ...] = tuple(
    DeckSource(
        name,
        AISLERIOT_DIR / f"{name}.svgz",
        "gnome-cards-data",
        _AISLERIOT_OWN_NOTICES.get(name, _AISLERIOT_LICENCE),
        extra_backs,
    )
    for name, extra_backs in (
        ("anglo", 0),
        ("anglo_poker", 0),
        ("bellot", 0),
        ("dondorf", 0),
        ("gnomangelo", 0),
        ("neoclassical", 0),
        ("orell", 0),
        ("ornamental", 1),
        ("paris", 0),
        ("plastic", 0),
        ("simplistic", 0),
        ("tango", 1),
        ("tigullio", 0),
        ("anglo_modern", 0),
        ("atlasnye", 0),
    )
) + tuple(
    DeckSource(name, KDE_DIR / path, "kdegames-card-data-kf5", licence, layout="ids")
    for name, path, licence in (
        ("kde-standard", "svg-standard/standard.svgz", "GPL-2+ (1997 John Fitzgibbon)"),
        ("kde-nicu-white", "svg-nicu-white/white.svgz", "GPL-2+ (kdegames-card-data-kf5, Files: *)"),
        ("kde-tigullio", "svg-tigullio-international/tigullio-international.svgz", "LGPL-2+ (2007 David Faure)"),
        ("kde-jolly-royal", "svg-jolly-royal/jolly-royal.svgz", "GPL-2+ (kdegames-card-data-kf5, Files: *)"),
        ("kde-penguins", "svg-penguins/penguins.svgz", "GPL-3+ (1998 DJ Delorie)"),
        ("kde-egyptians", "svg-ancient-egyptians/Ancient_Egyptians.svgz", "GPL-2+ (kdegames-card-data-kf5, Files: *)"),
    )
)
"""Every usable design. KDE's oxygen decks (a lone rank, no suit under it), konqi-modern and xskat-french
(render blank), future (not cards) and xskat-german (German suits) are left out, as are KDE copies of the
aisleriot designs above (dondorf, gm-paris, nicu-ornamental)."""

_KDE_RANKS = {1: "1", 11: "jack", 12: "queen", 13: "king"}
_KDE_SUITS = {"C": "club", "D": "diamond", "H": "heart", "S": "spade"}
_KDE_EXTRAS = {"back": "back", "joker_black": "black_joker", "joker_red": "red_joker", "joker_plain": "joker"}


@dataclasses.dataclass(frozen=True)
class IndexBox:
    """One corner index of a face: its corner and its box as fractions of the face's width and height."""

    corner: str
    box: tuple[float, float, float, float]  # x1, y1, x2, y2 in 0..1

    @property
    def rotated(self) -> bool:
        """Whether the glyphs of this index are upside down on the upright face."""
        return self.corner in ROTATED_CORNERS


@dataclasses.dataclass(frozen=True)
class Deck:
    """A rendered deck held in memory: BGRA faces of equal size, their index boxes, and distractor faces."""

    name: str
    faces: Mapping[Card, np.ndarray]  # a procedural deck draws each face when first asked for
    indices: Mapping[Card, tuple[IndexBox, ...]]
    backs: tuple[np.ndarray, ...]
    jokers: tuple[np.ndarray, ...]

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of every face in pixels."""
        height, width = next(iter(self.faces.values())).shape[:2]
        return width, height


def missing_packages() -> list[str]:
    """Names of the Debian packages this module needs that are not installed."""
    missing = []
    if shutil.which("rsvg-convert") is None:
        missing.append("librsvg2-bin")
    for package in ("gnome-cards-data", "kdegames-card-data-kf5"):
        if not any(deck.svg.exists() for deck in DECKS if deck.package == package):
            missing.append(package)
    return missing


def render_sheet(svg: Path, face_height: int = FACE_HEIGHT) -> np.ndarray:
    """Render a whole aisleriot sheet as BGRA so that each grid cell is ``face_height`` pixels tall.

    :raises FacesUnavailableError: when ``rsvg-convert`` fails or is missing.
    """
    return _run_rsvg(["--height", str(face_height * _GRID_ROWS), "--keep-aspect-ratio"], svg)


def cut_cell(sheet: np.ndarray, row: int, column: int) -> np.ndarray:
    """One grid cell of a sheet, trimmed to the card's opaque extent."""
    height, width = sheet.shape[:2]
    y1, y2 = round(row * height / _GRID_ROWS), round((row + 1) * height / _GRID_ROWS)
    x1, x2 = round(column * width / _GRID_COLUMNS), round((column + 1) * width / _GRID_COLUMNS)
    return _trim(sheet[y1:y2, x1:x2])


def _background_colour(face: np.ndarray) -> np.ndarray:
    """The card's paper colour: the median of a band just inside its left and right edges."""
    height, width = face.shape[:2]
    inset, band = max(2, width // 40), max(3, width // 25)
    rows = slice(height // 4, 3 * height // 4)
    strip = np.concatenate([face[rows, inset : inset + band, :3], face[rows, width - inset - band : width - inset, :3]])
    return np.median(strip.reshape(-1, 3), axis=0)


def ink_mask(face: np.ndarray) -> np.ndarray:
    """Pixels printed in a colour clearly different from the card's paper, away from the card's outline."""
    width = face.shape[1]
    paper = _background_colour(face)
    difference = np.abs(face[:, :, :3].astype(np.int16) - paper.astype(np.int16)).max(axis=2)
    opaque = (face[:, :, 3] > 200).astype(np.uint8)
    margin = max(3, round(0.022 * width))
    kernel = np.ones((2 * margin + 1, 2 * margin + 1), np.uint8)
    inner = cv2.erode(opaque, kernel, borderType=cv2.BORDER_CONSTANT, borderValue=0)
    return ((difference > 70) & (inner > 0)).astype(np.uint8)


def _find_top_left_index(ink: np.ndarray, width: int, height: int) -> tuple[int, int, int, int] | None:
    """The box of the index in the top-left corner of an ink mask, or None when there is no index there.

    The rank is the small ink blob nearest the corner plus same-sized blobs beside it (the 0 of 10); the suit
    pip is the nearest blob stacked right under the rank, no larger than about the rank. A corner without such
    a pip holds no index (a lone centre pip, a court picture's frame).
    """
    roi = np.ascontiguousarray(ink[: round(0.42 * height), : round(0.32 * width)])
    count, _, stats, _ = cv2.connectedComponentsWithStats(roi, connectivity=8)
    blobs = [
        (int(x), int(y), int(x + w), int(y + h))
        for x, y, w, h, area in stats[1:count]
        if area >= 4 and w < 0.25 * width and h < 0.2 * height
    ]
    near = [blob for blob in blobs if blob[0] < 0.2 * width and blob[1] < 0.2 * height]
    if not near:
        return None
    seed = min(near, key=lambda blob: np.hypot(blob[0], blob[1]))
    seed_height, seed_width = seed[3] - seed[1], seed[2] - seed[0]
    rank = list(seed)
    for blob in sorted(blobs, key=lambda blob: blob[0]):
        same_size = 0.7 * seed_height <= blob[3] - blob[1] <= 1.4 * seed_height
        same_line = abs(blob[1] - seed[1]) <= 0.3 * seed_height
        if blob != seed and same_size and same_line and 0 <= blob[0] - rank[2] <= 0.6 * seed_width:
            rank = [rank[0], min(rank[1], blob[1]), blob[2], max(rank[3], blob[3])]
    rank_height, rank_width = rank[3] - rank[1], rank[2] - rank[0]
    below = [
        blob
        for blob in blobs
        if blob[1] >= rank[3] - 0.15 * rank_height
        and blob[1] - rank[3] <= max(0.03 * height, 0.6 * rank_height)
        and min(blob[2], rank[2]) - max(blob[0], rank[0]) >= 0.3 * min(blob[2] - blob[0], rank_width)
        and blob[3] - blob[1] <= 1.5 * rank_height
        and blob[2] - blob[0] <= 2.0 * max(rank_width, seed_height)
        and (blob[3] - blob[1]) * (blob[2] - blob[0]) >= 0.08 * rank_height * rank_width
    ]
    if not below:
        return None
    pip = min(below, key=lambda blob: blob[1])
    return min(rank[0], pip[0]), rank[1], max(rank[2], pip[2]), pip[3]


def measure_indices(face: np.ndarray) -> dict[str, tuple[float, float, float, float]]:
    """Index boxes found in each corner of a BGRA face, as fractions of its size; corners without one are absent.

    Each corner is searched by flipping the ink so that corner becomes the top-left one; flipping only serves
    the geometry, the glyphs themselves are never mirrored in any output.
    """
    height, width = face.shape[:2]
    ink = ink_mask(face)
    found: dict[str, tuple[float, float, float, float]] = {}
    for corner in CORNERS:
        flip_x, flip_y = corner in ("tr", "br"), corner in ("br", "bl")
        view = ink[:: -1 if flip_y else 1, :: -1 if flip_x else 1]
        box = _find_top_left_index(view, width, height)
        if box is None:
            continue
        x1, y1, x2, y2 = box
        if flip_x:
            x1, x2 = width - x2, width - x1
        if flip_y:
            y1, y2 = height - y2, height - y1
        found[corner] = (x1 / width, y1 / height, x2 / width, y2 / height)
    return found


def calibrate(faces: dict[Card, np.ndarray], min_share: float = 0.75) -> dict[Card, tuple[IndexBox, ...]]:
    """Per-card index boxes for the corners where this deck prints an index.

    A corner counts when an index is found there on at least ``min_share`` of the faces. A card whose own
    measurement is missing or implausible (area beyond 0.4x..2.5x the deck's median) takes the median box.
    """
    measured = {card: measure_indices(face) for card, face in faces.items()}
    result: dict[Card, list[IndexBox]] = {card: [] for card in faces}
    for corner in CORNERS:
        boxes = [found[corner] for found in measured.values() if corner in found]
        if len(boxes) < min_share * len(faces):
            continue
        median = tuple(float(value) for value in np.median(np.array(boxes), axis=0))
        median_area = (median[2] - median[0]) * (median[3] - median[1])
        for card, found in measured.items():
            box = found.get(corner)
            area = (box[2] - box[0]) * (box[3] - box[1]) if box else 0.0
            chosen = box if box is not None and 0.4 * median_area <= area <= 2.5 * median_area else median
            result[card].append(IndexBox(corner, (chosen[0], chosen[1], chosen[2], chosen[3])))
    return {card: tuple(boxes) for card, boxes in result.items()}


def _fit(image: np.ndarray, width: int, height: int) -> np.ndarray:
    if image.shape[1] == width and image.shape[0] == height:
        return image
    return cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA)


def _run_rsvg(arguments: list[str], svg: Path) -> np.ndarray:
    """Run ``rsvg-convert`` and decode its PNG as BGRA.

    :raises FacesUnavailableError: when rsvg-convert is missing, fails, or returns no RGBA image.
    """
    try:
        result = subprocess.run(["rsvg-convert", *arguments, str(svg)], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError) as error:
        raise FacesUnavailableError(f"cannot render {svg}: {error}; install with: {INSTALL_COMMAND}") from error
    image = cv2.imdecode(np.frombuffer(result.stdout, np.uint8), cv2.IMREAD_UNCHANGED)
    if image is None or image.ndim != 3 or image.shape[2] != 4:
        raise FacesUnavailableError(f"rsvg-convert gave no RGBA image for {svg} ({' '.join(arguments)})")
    return image


def _trim(image: np.ndarray) -> np.ndarray:
    """The image cut to its opaque extent."""
    ys, xs = np.nonzero(image[:, :, 3] > 127)
    if len(xs) == 0:
        return image
    return image[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


def _grid_cells(source: DeckSource, face_height: int) -> tuple[dict[Card, np.ndarray], dict[str, np.ndarray]]:
    """Faces and extras (backs, jokers) cut from an aisleriot sheet."""
    sheet = render_sheet(source.svg, face_height)
    cells = {card: cut_cell(sheet, _SUIT_ROWS[card.suit], card.rank - 1) for card in DECK}
    extras = {name: cut_cell(sheet, _GRID_ROWS - 1, column) for name, column in _EXTRA_CELLS.items()}
    for number in range(source.extra_backs):
        extras[f"back{number + 2}"] = cut_cell(sheet, _GRID_ROWS - 1, 3 + number)
    return cells, extras


def _kde_id(card: Card) -> str:
    return f"{_KDE_RANKS.get(card.rank, str(card.rank))}_{_KDE_SUITS[card.suit]}"


def _id_cells(source: DeckSource, face_height: int) -> tuple[dict[Card, np.ndarray], dict[str, np.ndarray]]:
    """Faces and extras exported element by element from a KDE deck, two renderer processes at a time."""
    text = gzip.decompress(source.svg.read_bytes()).decode("utf-8", "replace")
    natural_height = _trim(_run_rsvg(["--export-id", _kde_id(DECK[0])], source.svg)).shape[0]
    zoom = f"{face_height / natural_height:.4f}"
    names = {str(card): _kde_id(card) for card in DECK}
    names.update({name: element for name, element in _KDE_EXTRAS.items() if f'id="{element}"' in text})
    with ThreadPoolExecutor(max_workers=2) as pool:
        images = dict(
            zip(
                names,
                pool.map(lambda e: _trim(_run_rsvg(["--export-id", e, "--zoom", zoom], source.svg)), names.values()),
                strict=True,
            )
        )
    cells = {card: images[str(card)] for card in DECK}
    extras = {name: image for name, image in images.items() if name in _KDE_EXTRAS}
    return cells, extras


def render_deck(source: DeckSource, out_dir: Path, face_height: int = FACE_HEIGHT) -> Path:
    """Render one deck's 52 faces, backs and jokers as PNGs plus ``calibration.json`` under ``out_dir/name``.

    :raises FacesUnavailableError: when the deck's SVG is missing or cannot be rendered.
    """
    if not source.svg.exists():
        raise FacesUnavailableError(f"deck {source.name}: {source.svg} is missing; install with: {INSTALL_COMMAND}")
    cells, extra_cells = (_grid_cells if source.layout == "grid" else _id_cells)(source, face_height)
    width = int(np.median([cell.shape[1] for cell in cells.values()]))
    height = int(np.median([cell.shape[0] for cell in cells.values()]))
    faces = {card: _fit(cell, width, height) for card, cell in cells.items()}
    extras = {name: _fit(cell, width, height) for name, cell in extra_cells.items()}
    indices = calibrate(faces)

    deck_dir = out_dir / source.name
    deck_dir.mkdir(parents=True, exist_ok=True)
    for name, image in {**{str(card): face for card, face in faces.items()}, **extras}.items():
        _replace_file(deck_dir / f"{name}.png", cv2.imencode(".png", image)[1].tobytes())
    calibration = {
        "deck": source.name,
        "source": str(source.svg),
        "package": source.package,
        "licence": source.licence,
        "width": width,
        "height": height,
        "corners": sorted({box.corner for boxes in indices.values() for box in boxes}, key=CORNERS.index),
        "indices": {
            str(card): {box.corner: [round(v, 4) for v in box.box] for box in boxes} for card, boxes in indices.items()
        },
    }
    _replace_file(deck_dir / "calibration.json", json.dumps(calibration, indent=1).encode())
    return deck_dir


def _replace_file(path: Path, data: bytes) -> None:
    """Write a file atomically, so a generator reading the faces while they are re-rendered never sees half a file."""
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    os.replace(partial, path)


def available_decks(faces_dir: Path = DEFAULT_FACES_DIR) -> list[str]:
    """Names of the rendered decks under ``faces_dir`` (those with a calibration), sorted."""
    return sorted(path.parent.name for path in Path(faces_dir).glob("*/calibration.json"))


@functools.cache
def load_deck(name: str, faces_dir: Path = DEFAULT_FACES_DIR) -> Deck:
    """A rendered deck, read once per process and kept in memory.

    A name ending in ``+4`` is the deck's four-index variant (see ``four_index_variant``).

    :raises FacesUnavailableError: when the deck has not been rendered (run ``okgin data faces``).
    """
    if name.endswith(FOUR_INDEX_SUFFIX):
        return four_index_variant(name.removesuffix(FOUR_INDEX_SUFFIX), faces_dir)
    deck_dir = Path(faces_dir) / name
    calibration_path = deck_dir / "calibration.json"
    if not calibration_path.exists():
        raise FacesUnavailableError(
            f"no rendered deck {name!r} in {faces_dir}; run: okgin data faces --out {faces_dir}"
        )
    calibration = json.loads(calibration_path.read_text())
    faces = {card: _read_bgra(deck_dir / f"{card}.png") for card in DECK}
    indices = {
        Card.parse(text): tuple(IndexBox(corner, (box[0], box[1], box[2], box[3])) for corner, box in corners.items())
        for text, corners in calibration["indices"].items()
    }
    backs = tuple(_read_bgra(path) for path in sorted(deck_dir.glob("back*.png")))
    jokers = tuple(_read_bgra(path) for path in sorted(deck_dir.glob("joker_*.png")))
    return Deck(name, faces, indices, backs, jokers)


FOUR_INDEX_SUFFIX = "+4"
MIRRORED_CORNER = {"tl": "tr", "br": "bl"}
"""Where a four-index deck repeats each index: the same glyphs (never mirrored) in the opposite corner."""


@functools.cache
def four_index_variant(name: str, faces_dir: Path = DEFAULT_FACES_DIR) -> Deck:
    """The deck as a four-index (poker) deck: each corner index also printed in the other top or
    bottom corner, as many real decks do. A copy is made only where that corner is blank paper,
    so court cards whose art reaches the corner keep two indices."""
    deck = load_deck(name, faces_dir)
    faces: dict[Card, np.ndarray] = {}
    indices: dict[Card, tuple[IndexBox, ...]] = {}
    for card, face in deck.faces.items():
        face = face.copy()
        height, width = face.shape[:2]
        ink = ink_mask(face)
        boxes = list(deck.indices[card])
        present = {index.corner for index in boxes}
        for index in deck.indices[card]:
            target = MIRRORED_CORNER.get(index.corner)
            if target is None or target in present:
                continue
            x1, y1, x2, y2 = (round(index.box[0] * width), round(index.box[1] * height),
                              round(index.box[2] * width), round(index.box[3] * height))  # fmt: skip
            tx1, tx2 = width - x2, width - x1
            if ink[y1:y2, tx1:tx2].mean() > 0.01:
                continue  # the corner is not blank: this design prints something there
            face[y1:y2, tx1:tx2] = face[y1:y2, x1:x2]
            boxes.append(IndexBox(target, (tx1 / width, index.box[1], tx2 / width, index.box[3])))
        faces[card], indices[card] = face, tuple(boxes)
    return Deck(name + FOUR_INDEX_SUFFIX, faces, indices, deck.backs, deck.jokers)


def _read_bgra(path: Path) -> np.ndarray:
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if image is None:
        raise FacesUnavailableError(f"cannot read {path}; re-run okgin data faces")
    if image.shape[2] == 3:
        image = cv2.cvtColor(image, cv2.COLOR_BGR2BGRA)
    return image


def render_decks(out_dir: Path, names: Iterable[str] | None = None, face_height: int = FACE_HEIGHT) -> list[Path]:
    """Render the chosen decks (all of ``DECKS`` by default) into ``out_dir``.

    :raises FacesUnavailableError: for an unknown deck name or missing packages.
    """
    chosen = select_decks(names)
    load_deck.cache_clear()
    return [render_deck(source, Path(out_dir), face_height) for source in chosen]


def select_decks(names: Iterable[str] | None) -> Sequence[DeckSource]:
    """The deck sources with these names, in the given order; all decks for None.

    :raises FacesUnavailableError: naming an unknown deck and listing the known ones.
    """
    if names is None:
        return DECKS
    names = list(names)
    by_name = {deck.name: deck for deck in DECKS}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        raise FacesUnavailableError(f"unknown deck(s) {', '.join(unknown)}; known: {', '.join(by_name)}")
    return [by_name[name] for name in names]
