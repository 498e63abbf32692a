"""Procedurally drawn card faces: every choice a deck maker makes about a corner index, drawn at random.

The packaged decks (``faces.py``) share a handful of index fonts, all dark ink on white paper. Players bring
any deck: a rank in any typeface (bold, condensed, thin, serif, sans), pips of many shapes, indices small or
large, two or four corners, dark faces printed in gold, silver or white, faded or worn prints. A detector
trained on a few designs learns those designs; one trained on thousands of drawn styles learns what an index
is. Each style is a pure function of its id, and faces are drawn on demand, so a scene costs only the cards
it shows.

Fonts come from the machine's font packages (``fonts-*`` in ``scripts/system-packages.sh``); every family is
assigned for good to the ``train`` or the ``heldout`` pool by a hash of its name, so validation scenes can
show index styles whose fonts training never saw (leave-styles-out). Pips are drawn from parametric shapes
(lobe size, stem length, waist) or taken from a symbol font.

>>> style = sample_style(7)
>>> style == sample_style(7), style.corners in (2, 4)
(True, True)
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import math
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path

import cv2
import numpy as np

from scorer.cards import DECK, Card
from scorer.synth.faces import Deck, FacesUnavailableError, IndexBox

FONT_DIRS = (Path("/usr/share/fonts"),)
"""Where font packages install their files."""


PROCEDURAL_PREFIX = "procedural-"
"""Deck names of drawn styles: ``procedural-<pool>-<id>``."""

POOLS = ("train", "heldout")
HELDOUT_SHARE = 5
"""One font family in this many goes to the held-out pool."""

FEW_RANK_FONTS = 20
"""A pool with fewer rank fonts than this means a machine without Debian's font packages, whose scenes differ seed
for seed from those of a machine with them: a bare Debian gave 18 train and 4 held-out rank fonts, the same machine
after ``scripts/system-packages.sh`` 363 and 46 (models/HISTORY.md, Session 39)."""

SUIT_CHARACTERS = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}
_RANK_TEXT = {1: "A", 11: "J", 12: "Q", 13: "K"}
_PROBE_TEXT = "AJQK0123456789"
_MISSING_GLYPH = "\U000f0000"  # a private-use code point no text font defines: renders as the font's .notdef
FACE_HEIGHT = 400

BGR = tuple[float, float, float]


def rank_text(card: Card) -> str:
    """The rank as printed in a corner index.

    >>> rank_text(Card.parse("10H")), rank_text(Card.parse("QS"))
    ('10', 'Q')
    """
    return _RANK_TEXT.get(card.rank, str(card.rank))


def family_of(path: Path) -> str:
    """A font file's family, from its file name: ``DejaVuSans-Bold.ttf`` -> ``dejavusans``."""
    stem = path.stem.lower().replace("_", "-")
    for cut in ("-", "regular", "bold", "italic", "oblique", "light", "medium", "semibold", "condensed"):
        stem = stem.split(cut)[0] if cut == "-" else stem.replace(cut, "")
    return stem or path.stem.lower()


def pool_of(path: Path) -> str:
    """The pool a font belongs to, for good: ``heldout`` for one family in ``HELDOUT_SHARE``."""
    return "heldout" if zlib.crc32(family_of(path).encode()) % HELDOUT_SHARE == 0 else "train"


def _font(path: Path, size: int):  # type: ignore[no-untyped-def]
    from PIL import ImageFont

    return ImageFont.truetype(str(path), size)


def _glyph_mask(path: Path, text: str, size: int = 64) -> np.ndarray | None:
    """The glyphs' coverage as a uint8 mask trimmed to their ink, or None when nothing is drawn."""
    try:
        font = _font(path, size)
        mask = font.getmask(text, mode="L")
    except (OSError, ValueError):
        return None
    array = np.asarray(mask, dtype=np.uint8).reshape(mask.size[1], mask.size[0])
    ys, xs = np.nonzero(array > 40)
    if len(xs) == 0:
        return None
    return np.ascontiguousarray(array[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1])


def _draws_glyphs(path: Path, characters: str) -> bool:
    """Whether the font has a real, distinct glyph for each character (not its .notdef box, not blank)."""
    missing = _glyph_mask(path, _MISSING_GLYPH)
    seen = []
    for character in characters:
        mask = _glyph_mask(path, character)
        if mask is None or (missing is not None and mask.shape == missing.shape and np.array_equal(mask, missing)):
            return False
        seen.append(mask.tobytes() + bytes(mask.shape))
    return len(set(seen)) == len(seen)


@functools.cache
def font_files() -> tuple[Path, ...]:
    """Every TrueType/OpenType file installed, sorted (the order styles index into)."""
    files = {
        path
        for folder in FONT_DIRS
        if folder.is_dir()
        for path in folder.rglob("*")
        if path.suffix.lower() in (".ttf", ".otf")
    }
    return tuple(sorted(files))


@functools.cache
def rank_fonts(pool: str) -> tuple[Path, ...]:
    """Fonts of a pool that draw every rank glyph.

    :raises FacesUnavailableError: when the pool has no usable font (no font packages installed).
    """
    fonts = tuple(path for path in font_files() if pool_of(path) == pool and _draws_glyphs(path, _PROBE_TEXT))
    if not fonts:
        raise FacesUnavailableError(
            f"no {pool} fonts for procedural faces under {', '.join(map(str, FONT_DIRS))}; "
            "install Debian's font packages (scripts/system-packages.sh)"
        )
    return fonts


@functools.cache
def suit_fonts(pool: str) -> tuple[Path, ...]:
    """Fonts of a pool that draw all four (filled) suit symbols."""
    return tuple(
        path
        for path in font_files()
        if pool_of(path) == pool and _draws_glyphs(path, "".join(SUIT_CHARACTERS.values()))
    )


@dataclasses.dataclass(frozen=True)
class PipShape:
    """A parametric suit pip: proportions a deck maker varies."""

    lobe: float  # lobe radius as a share of the pip's size (hearts, spades, clubs)
    spread: float  # how far apart the lobes sit
    point: float  # how far down (heart) or up (spade) the point reaches
    stem: float  # stem length of spades and clubs
    flare: float  # stem foot width
    waist: float  # diamond sides: 0 straight, >0 curved in
    aspect: float  # width / height of a diamond
    foot: float = 0.0  # 0: a stem widening evenly to its foot; >0: a trumpet foot, sides curving out (1 to 2)
    round_club: float = 0.0  # 0: a club's lobes just touch; >0: big round lobes, side ones 1.15x this many radii out


@dataclasses.dataclass(frozen=True)
class FaceStyle:
    """Everything that decides how a drawn deck's faces look."""

    style_id: int
    pool: str
    rank_font: Path
    pip_font: Path | None  # None: parametric pips
    pip_shape: PipShape
    aspect: float  # card width / height
    paper: BGR
    black_ink: BGR
    red_ink: BGR
    suit_inks: dict[str, BGR]
    rank_height: float  # rank glyph height as a share of the card's height
    rank_squeeze: float  # horizontal scale of rank glyphs (condensed < 1)
    ten_squeeze: float  # extra squeeze of the two-digit 10
    bold: int  # extra stroke in pixels at face height
    pip_scale: float  # index pip height / rank height
    gap: float  # gap between rank and pip / rank height
    margin: tuple[float, float]  # index offset from the corner: share of card width, height
    side_by_side: bool  # pip right of the rank instead of under it
    centred_pip: bool  # pip centred under the rank, else left-aligned
    corners: int  # 2 or 4 indices
    fade: float  # 0: full ink, up to ~0.55: ink blended toward the paper
    wear: float  # share of ink specks worn off
    gloss: float  # strength of a glossy sheen band
    border: bool
    corner_radius: float
    seed: int
    pip_inset: tuple[float, float] = (0.27, 0.2)  # outer pip centres from the edges: share of width, height
    pip_size: float = 1.0  # centre pips' size against the usual (0.09-0.13 of the card's height)

    @property
    def name(self) -> str:
        return f"{PROCEDURAL_PREFIX}{self.pool}-{self.style_id}"


_LIGHT_PAPERS: tuple[BGR, ...] = ((255, 255, 255), (240, 248, 252), (225, 240, 248), (235, 235, 235), (250, 245, 240))
_DARK_PAPERS: tuple[BGR, ...] = ((20, 20, 20), (10, 10, 10), (60, 30, 20), (30, 45, 20), (25, 20, 70), (50, 25, 45))
_GOLD: BGR = (60, 175, 215)
_SILVER: BGR = (200, 200, 200)
_WHITE: BGR = (245, 245, 245)


DARK_SHARE = 0.22
"""The share of styles printed light on a dark face (black, navy, wine or green foil decks)."""


MONOCHROME_DARK_SHARE = 0.4
"""Of the dark-faced styles, the share printing every suit in one ink. On a real black deck with gold and white
pips (rf-zk7wu-phone) hearts were read as spades and diamonds as clubs: in dark styles whose red suits are red,
colour, not the pip's shape, decides."""


ROUND_CLUB_SHARE = 0.5
"""The share of parametric styles whose clubs have big overlapping lobes on a trumpet foot (their spades on the
same foot), as on most poker decks and the black deck of rf-zk7wu-phone. Trained on clubs with lobes that just
touch and straight stems only, the shipped classifier named half of such clubs and spades the other suit, sharp
and 45 px tall (``scripts/suit-shapes.py``, models/HISTORY.md, Session 20)."""


CROWDED_PIPS_SHARE = 0.25
"""The share of styles whose big centre pips crowd the corner index, as on many foil and jumbo-index decks (and
the black deck of rf-zk7wu-phone): an index must be read beside a pip bigger than its own."""


def _jitter(rng: np.random.Generator, colour: BGR, amount: float) -> BGR:
    values = np.clip(np.array(colour) + rng.normal(0, amount, 3), 0, 255)
    return float(values[0]), float(values[1]), float(values[2])


def _inks(rng: np.random.Generator, dark: bool) -> tuple[BGR, BGR, BGR, dict[str, BGR]]:
    """Paper, black-suit ink, red-suit ink and per-suit inks (four-colour decks recolour clubs and diamonds)."""
    if dark:
        paper = _jitter(rng, _DARK_PAPERS[int(rng.integers(len(_DARK_PAPERS)))], 6)
        black = _jitter(rng, (_WHITE, _SILVER, _GOLD)[int(rng.integers(3))], 12)
        red_choices = ((70, 70, 235), (90, 120, 250), _GOLD, _WHITE, (150, 140, 240), _SILVER)
        red = _jitter(rng, red_choices[int(rng.integers(len(red_choices)))], 12)
    else:
        paper = _jitter(rng, _LIGHT_PAPERS[int(rng.integers(len(_LIGHT_PAPERS)))], 5)
        black = _jitter(rng, ((15, 15, 15), (40, 40, 40), (70, 40, 20), (30, 30, 30))[int(rng.integers(4))], 8)
        red = _jitter(
            rng, ((30, 30, 200), (40, 20, 170), (60, 60, 225), (50, 70, 210), (70, 20, 150))[int(rng.integers(5))], 10
        )
    inks = {"C": black, "S": black, "H": red, "D": red}
    if rng.random() < 0.07:  # four-colour poker decks: green clubs, blue diamonds
        inks["C"] = _jitter(rng, (40, 140, 30) if not dark else (90, 220, 110), 10)
        inks["D"] = _jitter(rng, (190, 90, 20) if not dark else (250, 180, 90), 10)
    return paper, black, red, inks


def _style_rng(style_id: int, pool: str) -> np.random.Generator:
    """The random stream a style is drawn from: its first draw decides a dark face (``is_dark_style``)."""
    if pool not in POOLS:
        raise ValueError(f"unknown style pool {pool!r}; known: {', '.join(POOLS)}")
    return np.random.default_rng([style_id, zlib.crc32(pool.encode())])


def is_dark_style(style_id: int, pool: str = "train") -> bool:
    """Whether the style with this id prints light on a dark face, without drawing the rest of it.

    >>> all(is_dark_style(i) == (sum(sample_style(i).paper) < 300) for i in range(40))
    True
    """
    return bool(_style_rng(style_id, pool).random() < DARK_SHARE)


def sample_style(style_id: int, pool: str = "train") -> FaceStyle:
    """The face style with this id in a font pool: a pure function of both.

    :raises FacesUnavailableError: when no fonts are installed.
    """
    rng = _style_rng(style_id, pool)
    fonts = rank_fonts(pool)
    symbol_fonts = suit_fonts(pool)
    dark = rng.random() < DARK_SHARE  # the first draw, as is_dark_style makes it
    paper, black, red, inks = _inks(rng, dark)
    shape = PipShape(
        lobe=rng.uniform(0.2, 0.3),
        spread=rng.uniform(0.17, 0.27),
        point=rng.uniform(0.85, 1.0),
        stem=rng.uniform(0.18, 0.35),
        flare=rng.uniform(0.18, 0.45),
        waist=rng.uniform(0.0, 0.18) if rng.random() < 0.5 else 0.0,
        aspect=rng.uniform(0.62, 0.9),
    )
    faded = rng.random() < 0.15
    style = FaceStyle(
        style_id=style_id,
        pool=pool,
        rank_font=fonts[int(rng.integers(len(fonts)))],
        pip_font=symbol_fonts[int(rng.integers(len(symbol_fonts)))] if symbol_fonts and rng.random() < 0.3 else None,
        pip_shape=shape,
        aspect=rng.uniform(0.63, 0.72),
        paper=paper,
        black_ink=black,
        red_ink=red,
        suit_inks=inks,
        rank_height=rng.uniform(0.055, 0.14),
        rank_squeeze=rng.uniform(0.7, 1.15),
        ten_squeeze=rng.uniform(0.6, 1.0),
        bold=int(rng.integers(0, 3)) if rng.random() < 0.25 else 0,
        pip_scale=rng.uniform(0.55, 1.05),
        gap=rng.uniform(0.02, 0.3),
        margin=(rng.uniform(0.03, 0.1), rng.uniform(0.025, 0.07)),
        side_by_side=rng.random() < 0.06,
        centred_pip=rng.random() < 0.8,
        corners=4 if rng.random() < 0.35 else 2,
        fade=rng.uniform(0.25, 0.55) if faded else 0.0,
        wear=rng.uniform(0.02, 0.12) if rng.random() < 0.12 else 0.0,
        gloss=rng.uniform(0.05, 0.25) if rng.random() < 0.3 else 0.0,
        border=rng.random() < 0.35,
        corner_radius=rng.uniform(0.03, 0.08),
        seed=int(rng.integers(2**31)),
    )
    # Drawn last, so that every style drawn before keeps its looks: dark foil decks often print all four suits
    # in one ink (gold on black), where only the pip's shape tells a heart from a spade, not its colour.
    if dark and rng.random() < MONOCHROME_DARK_SHARE:
        ink = style.black_ink if rng.random() < 0.5 else style.red_ink
        style = dataclasses.replace(style, black_ink=ink, red_ink=ink, suit_inks=dict.fromkeys("CDHS", ink))
    if rng.random() < CROWDED_PIPS_SHARE:  # also drawn last, for the same reason
        inset = (rng.uniform(0.12, 0.24), rng.uniform(0.08, 0.17))
        style = dataclasses.replace(style, pip_inset=inset, pip_size=rng.uniform(1.05, 1.4))
    if rng.random() < ROUND_CLUB_SHARE:  # also drawn last
        round_shape = dataclasses.replace(
            shape,
            lobe=rng.uniform(0.2, 0.25),
            spread=rng.uniform(0.13, 0.19),
            point=rng.uniform(0.95, 1.1),
            foot=rng.uniform(1.0, 2.0),
            flare=rng.uniform(0.38, 0.6),
            round_club=rng.uniform(0.7, 0.95),
        )
        style = dataclasses.replace(style, pip_shape=round_shape)
    return style


# --- pips ---------------------------------------------------------------------------------------------------


def _circle(mask: np.ndarray, centre: tuple[float, float], radius: float) -> None:
    size = mask.shape[0]
    cv2.circle(
        mask, (round(centre[0] * size), round(centre[1] * size)), max(1, round(radius * size)), 255, -1, cv2.LINE_AA
    )


def _polygon(mask: np.ndarray, points: list[tuple[float, float]]) -> None:
    size = mask.shape[0]
    cv2.fillPoly(mask, [np.round(np.array(points) * size).astype(np.int32)], 255, cv2.LINE_AA)


def _heart(mask: np.ndarray, shape: PipShape, flip: bool = False) -> None:
    """Two lobes over a point; flipped (point up) it is the body of a spade."""
    lobe, spread = shape.lobe, shape.spread
    lobe_y = 0.05 + lobe
    tip = 0.05 + shape.point * 0.9
    body = np.zeros_like(mask)
    _circle(body, (0.5 - spread, lobe_y), lobe)
    _circle(body, (0.5 + spread, lobe_y), lobe)
    left, right = 0.5 - spread - lobe * 0.97, 0.5 + spread + lobe * 0.97
    _polygon(body, [(left, lobe_y + 0.02), (right, lobe_y + 0.02), (0.5, tip)])
    _polygon(body, [(0.5 - spread, lobe_y), (0.5 + spread, lobe_y), (0.5, lobe_y - lobe * 0.4)])
    mask |= body[::-1] if flip else body


def _stem(mask: np.ndarray, shape: PipShape, top: float, length: float | None = None) -> None:
    """A spade's or club's stem from ``top`` down: straight sides, or with ``shape.foot`` a trumpet's."""
    bottom = min(0.97, top + (shape.stem if length is None else length))
    if not shape.foot:
        _polygon(
            mask,
            [(0.5 - 0.035, top), (0.5 + 0.035, top), (0.5 + shape.flare / 2, bottom), (0.5 - shape.flare / 2, bottom)],
        )
        return
    steps = np.linspace(0, 1, 24)
    half_widths = 0.035 + (shape.flare / 2 - 0.035) * steps ** (1 + shape.foot)  # sides curving out
    heights = top + (bottom - top) * steps
    left, right = zip(0.5 - half_widths, heights, strict=True), zip(0.5 + half_widths, heights, strict=True)
    _polygon(mask, [*left, *reversed(list(right))])


def draw_pip_mask(suit: str, shape: PipShape, size: int) -> np.ndarray:
    """A suit pip drawn from its parameters, as a uint8 coverage mask trimmed to its ink.

    >>> int(draw_pip_mask("S", sample_style(1).pip_shape, 64).max())
    255
    """
    big = 4 * size
    mask = np.zeros((big, big), np.uint8)
    if suit == "H":
        _heart(mask, shape)
    elif suit == "D":
        half_width = shape.aspect * 0.45
        vertices = np.array([(0.5, 0.03), (0.5 + half_width, 0.5), (0.5, 0.97), (0.5 - half_width, 0.5)])
        outline = []
        for start, stop in zip(vertices, np.roll(vertices, -1, axis=0), strict=True):
            control = (start + stop) / 2 + ((0.5, 0.5) - (start + stop) / 2) * shape.waist * 2  # sides bowed in
            for t in np.linspace(0, 1, 16, endpoint=False):
                outline.append(tuple((1 - t) ** 2 * start + 2 * (1 - t) * t * control + t**2 * stop))
        _polygon(mask, outline)
    elif suit == "S":
        body = dataclasses.replace(shape, point=shape.point * 0.8, waist=0, aspect=1)
        body_mask = np.zeros_like(mask)
        _heart(body_mask, body, flip=True)
        squat = cv2.resize(body_mask, (big, round(big * (0.85 if shape.round_club else 0.78))))
        mask[: squat.shape[0]] = np.maximum(mask[: squat.shape[0]], squat)
        _stem(mask, shape, 0.7 if shape.round_club else 0.62)
    elif suit == "C":
        if shape.round_club:
            radius = min(shape.lobe, 0.47 / (1 + 1.15 * shape.round_club))  # the side lobes inside the mask
            top_y = 0.03 + radius
            side_x, side_y = radius * shape.round_club * 1.15, top_y + radius * shape.round_club * 1.2
        else:
            radius = 0.15 + (shape.lobe - 0.2) * 0.7
            top_y = 0.04 + radius
            side_x, side_y = radius * (0.95 + shape.spread), top_y + radius * shape.spread * 7
        _circle(mask, (0.5, top_y), radius)
        _circle(mask, (0.5 - side_x, side_y), radius)
        _circle(mask, (0.5 + side_x, side_y), radius)
        _polygon(mask, [(0.5, top_y), (0.5 - side_x, side_y), (0.5 + side_x, side_y)])
        _stem(mask, shape, side_y, shape.stem + radius * 0.6 if shape.round_club else None)
    else:
        raise ValueError(f"unknown suit {suit!r}")
    small = cv2.resize(mask, (size, size), interpolation=cv2.INTER_AREA)
    return _trim_mask(small)


def _trim_mask(mask: np.ndarray) -> np.ndarray:
    ys, xs = np.nonzero(mask > 40)
    if len(xs) == 0:
        return mask
    return np.ascontiguousarray(mask[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1])


def _resize_mask(mask: np.ndarray, width: int, height: int) -> np.ndarray:
    width, height = max(1, width), max(1, height)
    interpolation = cv2.INTER_AREA if width < mask.shape[1] else cv2.INTER_LINEAR
    return cv2.resize(mask, (width, height), interpolation=interpolation)


class _Painter:
    """Draws one style's glyphs (ranks and pips) at any size, caching what it has drawn."""

    def __init__(self, style: FaceStyle) -> None:
        self.style = style
        self._cache: dict[tuple[str, str, int], np.ndarray] = {}

    def rank(self, text: str, height: int) -> np.ndarray:
        key = ("rank", text, height)
        if key not in self._cache:
            glyphs = _glyph_mask(self.style.rank_font, text, size=max(8, round(height * 1.45)))
            if glyphs is None:
                glyphs = np.full((height, height // 2), 255, np.uint8)
            squeeze = self.style.rank_squeeze * (self.style.ten_squeeze if len(text) > 1 else 1.0)
            width = round(glyphs.shape[1] * height / glyphs.shape[0] * squeeze)
            glyphs = _resize_mask(glyphs, width, height)
            if self.style.bold:
                kernel = np.ones((self.style.bold + 1, self.style.bold + 1), np.uint8)
                glyphs = cv2.dilate(glyphs, kernel)
            self._cache[key] = glyphs
        return self._cache[key]

    def pip(self, suit: str, height: int) -> np.ndarray:
        key = ("pip", suit, height)
        if key not in self._cache:
            mask = None
            if self.style.pip_font is not None:
                mask = _glyph_mask(self.style.pip_font, SUIT_CHARACTERS[suit], size=max(8, round(height * 1.5)))
            if mask is None:
                mask = draw_pip_mask(suit, self.style.pip_shape, max(8, round(height * 1.2)))
            width = round(mask.shape[1] * height / mask.shape[0])
            self._cache[key] = _resize_mask(mask, width, height)
        return self._cache[key]


# --- faces --------------------------------------------------------------------------------------------------


def _stamp(
    canvas: np.ndarray, mask: np.ndarray, x: int, y: int, colour: BGR, rotate: bool = False
) -> tuple[int, int, int, int]:
    """Paint ``colour`` through ``mask`` with its top-left at (x, y); returns the painted box (clipped)."""
    if rotate:
        mask = mask[::-1, ::-1]
    height, width = canvas.shape[:2]
    x1, y1, x2, y2 = max(0, x), max(0, y), min(width, x + mask.shape[1]), min(height, y + mask.shape[0])
    if x2 <= x1 or y2 <= y1:
        return x1, y1, x1, y1
    alpha = mask[y1 - y : y2 - y, x1 - x : x2 - x].astype(np.float32)[:, :, None] / 255.0
    region = canvas[y1:y2, x1:x2, :3].astype(np.float32)
    canvas[y1:y2, x1:x2, :3] = (region * (1 - alpha) + np.array(colour, np.float32) * alpha).astype(np.uint8)
    return x1, y1, x2, y2


def _index_masks(painter: _Painter, card: Card, face_height: int) -> np.ndarray:
    """The index (rank over pip, or beside it) drawn upright as one mask."""
    style = painter.style
    rank_h = max(6, round(style.rank_height * face_height))
    rank = painter.rank(rank_text(card), rank_h)
    pip = painter.pip(card.suit, max(5, round(rank_h * style.pip_scale)))
    gap = round(style.gap * rank_h)
    if style.side_by_side:
        width, height = rank.shape[1] + gap + pip.shape[1], max(rank.shape[0], pip.shape[0])
        rank_at, pip_at = (
            (0, 0),
            (rank.shape[1] + gap, (rank.shape[0] - pip.shape[0]) // 2 if pip.shape[0] < rank.shape[0] else 0),
        )
    else:
        width, height = max(rank.shape[1], pip.shape[1]), rank.shape[0] + gap + pip.shape[0]
        if style.centred_pip:
            rank_at, pip_at = ((width - rank.shape[1]) // 2, 0), ((width - pip.shape[1]) // 2, rank.shape[0] + gap)
        else:
            rank_at, pip_at = (0, 0), (0, rank.shape[0] + gap)
    mask = np.zeros((height, width), np.uint8)
    for glyph, (gx, gy) in ((rank, rank_at), (pip, pip_at)):
        region = mask[gy : gy + glyph.shape[0], gx : gx + glyph.shape[1]]
        np.maximum(region, glyph[: region.shape[0], : region.shape[1]], out=region)
    return mask


# Pip centres of number cards on a 3 x 7 grid (column 0..2, row 0..6); rows 4-6 are drawn upside down.
_PIP_LAYOUTS: dict[int, tuple[tuple[int, float], ...]] = {
    2: ((1, 0), (1, 6)),
    3: ((1, 0), (1, 3), (1, 6)),
    4: ((0, 0), (2, 0), (0, 6), (2, 6)),
    5: ((0, 0), (2, 0), (1, 3), (0, 6), (2, 6)),
    6: ((0, 0), (2, 0), (0, 3), (2, 3), (0, 6), (2, 6)),
    7: ((0, 0), (2, 0), (1, 1.5), (0, 3), (2, 3), (0, 6), (2, 6)),
    8: ((0, 0), (2, 0), (1, 1.5), (0, 3), (2, 3), (1, 4.5), (0, 6), (2, 6)),
    9: ((0, 0), (2, 0), (0, 2), (2, 2), (1, 3), (0, 4), (2, 4), (0, 6), (2, 6)),
    10: ((0, 0), (2, 0), (1, 1), (0, 2), (2, 2), (0, 4), (2, 4), (1, 5), (0, 6), (2, 6)),
}


def _court_art(canvas: np.ndarray, rng: np.random.Generator, box: tuple[int, int, int, int], inks: list[BGR]) -> None:
    """A court card's picture: a framed panel of coloured shapes, robes and ornaments (no index in it)."""
    x1, y1, x2, y2 = box
    palette = [*inks, *(tuple(float(c) for c in rng.uniform(0, 255, 3)) for _ in range(3))]
    panel = np.ascontiguousarray(canvas[y1:y2, x1:x2, :3])
    height, width = panel.shape[:2]
    for _ in range(int(rng.integers(8, 22))):
        colour = palette[int(rng.integers(len(palette)))]
        kind = rng.random()
        if kind < 0.35:
            points = rng.uniform(0, 1, (int(rng.integers(3, 7)), 2)) * [width, height]
            cv2.fillPoly(panel, [points.astype(np.int32)], colour, cv2.LINE_AA)
        elif kind < 0.65:
            centre = (int(rng.uniform(0, width)), int(rng.uniform(0, height)))
            axes = (int(rng.uniform(0.05, 0.3) * width), int(rng.uniform(0.05, 0.3) * height))
            cv2.ellipse(
                panel, centre, axes, rng.uniform(0, 180), 0, 360, colour, -1 if rng.random() < 0.7 else 2, cv2.LINE_AA
            )
        else:
            start = (int(rng.uniform(0, width)), int(rng.uniform(0, height)))
            end = (int(rng.uniform(0, width)), int(rng.uniform(0, height)))
            cv2.line(panel, start, end, colour, int(rng.integers(1, 5)), cv2.LINE_AA)
    mirrored = panel[: height // 2][::-1, ::-1].copy()  # courts are printed head to head
    panel[height - mirrored.shape[0] :] = mirrored
    canvas[y1:y2, x1:x2, :3] = panel
    cv2.rectangle(canvas, (x1, y1), (x2 - 1, y2 - 1), (*inks[0], 255), max(1, width // 60), cv2.LINE_AA)


def _card_outline(style: FaceStyle, width: int, height: int) -> np.ndarray:
    alpha = np.zeros((height, width), np.uint8)
    radius = max(2, round(style.corner_radius * width))
    cv2.rectangle(alpha, (radius, 0), (width - 1 - radius, height - 1), 255, -1)
    cv2.rectangle(alpha, (0, radius), (width - 1, height - 1 - radius), 255, -1)
    for cx, cy in (
        (radius, radius),
        (width - 1 - radius, radius),
        (radius, height - 1 - radius),
        (width - 1 - radius, height - 1 - radius),
    ):
        cv2.circle(alpha, (cx, cy), radius, 255, -1, cv2.LINE_AA)
    return alpha


def _finish(face: np.ndarray, style: FaceStyle, rng: np.random.Generator, unprinted: np.ndarray | None) -> None:
    """Fade, wear and gloss: what printing and handling do to a face (``unprinted``: the blank face, for wear)."""
    if not (style.fade or style.wear or style.gloss):
        return
    colour = face[:, :, :3].astype(np.float32)
    paper = np.array(style.paper, np.float32)
    if style.fade:
        colour = colour * (1 - style.fade) + paper * style.fade
    if style.wear and unprinted is not None:
        ink = np.abs(face[:, :, :3].astype(np.int16) - unprinted.astype(np.int16)).max(axis=2) > 30
        specks = (rng.random(ink.shape) < style.wear) & ink
        specks = cv2.dilate(specks.astype(np.uint8), np.ones((2, 2), np.uint8)) > 0
        colour[specks] = colour[specks] * 0.3 + paper * 0.7
    if style.gloss:
        height, width = face.shape[:2]
        ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
        angle = rng.uniform(0, math.pi)
        distance = (xs / width - rng.uniform(0.2, 0.8)) * math.cos(angle) + (ys / height - 0.5) * math.sin(angle)
        band = np.exp(-((distance / rng.uniform(0.05, 0.2)) ** 2)) * style.gloss * 255
        colour = colour + band[:, :, None]
    face[:, :, :3] = np.clip(colour, 0, 255).astype(np.uint8)


def draw_face(
    style: FaceStyle,
    card: Card | None,
    kind: str = "face",
    face_height: int = FACE_HEIGHT,
    painter: _Painter | None = None,
) -> tuple[np.ndarray, tuple[IndexBox, ...]]:
    """One BGRA face of a style and the boxes of its corner indices (as fractions of the face).

    ``kind`` is ``face`` for a card, ``joker`` or ``back`` for the deck's distractors.
    """
    width = round(face_height * style.aspect)
    rng = np.random.default_rng([style.seed, card.class_id if card else 99, len(kind)])
    face = np.zeros((face_height, width, 4), np.uint8)
    face[:, :, :3] = np.array(style.paper, np.uint8)
    face[:, :, 3] = _card_outline(style, width, face_height)
    painter = painter or _Painter(style)
    before = face[:, :, :3].copy() if style.wear else None
    if kind == "back":
        _draw_back(face, style, rng)
        return face, ()
    if style.border:
        inset = round(0.04 * width)
        cv2.rectangle(
            face, (inset, inset), (width - 1 - inset, face_height - 1 - inset), (*style.black_ink, 255), 1, cv2.LINE_AA
        )
    boxes: list[IndexBox] = []
    if kind == "joker":
        _draw_joker(face, style, rng, painter)
    elif card is not None:
        ink = style.suit_inks[card.suit]
        index = _index_masks(painter, card, face_height)
        margin_x, margin_y = round(style.margin[0] * width), round(style.margin[1] * face_height)
        h, w = index.shape
        _draw_centre(face, style, card, rng, painter, ink, index_right=margin_x + w)
        spots = [("tl", margin_x, margin_y, False), ("br", width - margin_x - w, face_height - margin_y - h, True)]
        if style.corners == 4:
            spots += [("tr", width - margin_x - w, margin_y, False), ("bl", margin_x, face_height - margin_y - h, True)]
        for corner, x, y, rotate in spots:
            x1, y1, x2, y2 = _stamp(face, index, x, y, ink, rotate)
            boxes.append(IndexBox(corner, (x1 / width, y1 / face_height, x2 / width, y2 / face_height)))
    _finish(face, style, rng, before)
    return face, tuple(boxes)


def _draw_centre(
    face: np.ndarray,
    style: FaceStyle,
    card: Card,
    rng: np.random.Generator,
    painter: _Painter,
    ink: BGR,
    index_right: int,
) -> None:
    """The middle of the card: pips in the standard layout, one large ace pip, or a court picture.

    ``index_right`` is where the corner index ends, in face pixels from the left edge: the pips keep clear
    of it, as a printer's would (big ones crowd it in ``CROWDED_PIPS_SHARE`` of the styles).
    """
    height, width = face.shape[:2]
    inset_x, inset_y = style.pip_inset
    top = inset_y * height
    if card.rank == 1:
        pip = painter.pip(card.suit, round(height * rng.uniform(0.14, 0.3)))
        _stamp(face, pip, (width - pip.shape[1]) // 2, (height - pip.shape[0]) // 2, ink)
    elif card.rank <= 10:
        size = height * rng.uniform(0.09, 0.13) * style.pip_size
        while True:  # clear of the index, and a pip's width apart, shrinking the pips until they fit
            pip = painter.pip(card.suit, round(size))
            left = max(inset_x * width, index_right + 0.02 * width + pip.shape[1] / 2)
            if (width - 2 * left) / 2 >= 1.15 * pip.shape[1] or size < 0.05 * height:
                break
            size *= 0.9
        right, bottom = width - left, height - top
        for column, row in _PIP_LAYOUTS[card.rank]:
            cx = left + (right - left) * column / 2
            cy = top + (bottom - top) * row / 6
            _stamp(face, pip, round(cx - pip.shape[1] / 2), round(cy - pip.shape[0] / 2), ink, rotate=row > 3)
    else:
        art_x, art_y = round(rng.uniform(0.16, 0.24) * width), round(rng.uniform(0.12, 0.17) * height)
        _court_art(face, rng, (art_x, art_y, width - art_x, height - art_y), [ink, style.black_ink, style.red_ink])


def _draw_joker(face: np.ndarray, style: FaceStyle, rng: np.random.Generator, painter: _Painter) -> None:
    """A joker: the word JOKER stacked in the corners (letters a detector must not read as a J) and a picture."""
    height, width = face.shape[:2]
    ink = style.black_ink if rng.random() < 0.5 else style.red_ink
    letter_h = max(5, round(style.rank_height * height * rng.uniform(0.45, 0.8)))
    x, y = round(style.margin[0] * width), round(style.margin[1] * height)
    for k, letter in enumerate("JOKER"):
        glyph = painter.rank(letter, letter_h)
        _stamp(face, glyph, x, y + k * round(letter_h * 1.15), ink)
        _stamp(face, glyph, width - x - glyph.shape[1], height - y - (k + 1) * round(letter_h * 1.15), ink, rotate=True)
    inset_x, inset_y = round(0.2 * width), round(0.15 * height)
    _court_art(face, rng, (inset_x, inset_y, width - inset_x, height - inset_y), [ink, style.black_ink, style.red_ink])


def _draw_back(face: np.ndarray, style: FaceStyle, rng: np.random.Generator) -> None:
    """A card back: a border and a repeating lattice of lines or dots in one or two colours."""
    height, width = face.shape[:2]
    colour = tuple(float(c) for c in rng.uniform(0, 200, 3))
    inset = round(rng.uniform(0.03, 0.08) * width)
    face[inset : height - inset, inset : width - inset, :3] = np.array(colour, np.uint8)
    step = int(rng.integers(6, 20))
    accent = tuple(float(c) for c in rng.uniform(100, 255, 3))
    for offset in range(-height, width + height, step):
        if rng.random() < 0.5:
            cv2.line(face, (offset, inset), (offset + height, height - inset), (*accent, 255), 1, cv2.LINE_AA)
        else:
            cv2.circle(face, (offset % max(1, width), (offset * 7) % max(1, height)), 2, (*accent, 255), -1)
    face[:inset] = np.array([*style.paper, 255], np.uint8)
    face[height - inset :] = np.array([*style.paper, 255], np.uint8)
    face[:, :inset] = np.array([*style.paper, 255], np.uint8)
    face[:, width - inset :] = np.array([*style.paper, 255], np.uint8)
    face[:, :, 3] = _card_outline(style, width, height)


class _LazyFaces(Mapping[Card, np.ndarray]):
    """A deck's faces, each drawn the first time a scene asks for it."""

    def __init__(self, style: FaceStyle, face_height: int) -> None:
        self.style, self.face_height = style, face_height
        self.painter = _Painter(style)
        self._faces: dict[Card, np.ndarray] = {}
        self._boxes: dict[Card, tuple[IndexBox, ...]] = {}

    def __getitem__(self, card: Card) -> np.ndarray:
        if card not in self._faces:
            self._faces[card], self._boxes[card] = draw_face(
                self.style, card, face_height=self.face_height, painter=self.painter
            )
        return self._faces[card]

    def __iter__(self) -> Iterator[Card]:
        return iter(DECK)

    def __len__(self) -> int:
        return len(DECK)

    def boxes(self, card: Card) -> tuple[IndexBox, ...]:
        self[card]
        return self._boxes[card]


class _LazyIndices(Mapping[Card, tuple[IndexBox, ...]]):
    def __init__(self, faces: _LazyFaces) -> None:
        self.faces = faces

    def __getitem__(self, card: Card) -> tuple[IndexBox, ...]:
        return self.faces.boxes(card)

    def __iter__(self) -> Iterator[Card]:
        return iter(DECK)

    def __len__(self) -> int:
        return len(DECK)


_RECENT: collections.OrderedDict[tuple[str, int, int], Deck] = collections.OrderedDict()
_RECENT_SIZE = 6


def procedural_deck(style_id: int, pool: str = "train", face_height: int = FACE_HEIGHT) -> Deck:
    """The deck drawn in one style, faces drawn on demand; the last few decks are kept in memory.

    :raises FacesUnavailableError: when no fonts are installed.
    """
    key = (pool, style_id, face_height)
    if key in _RECENT:
        _RECENT.move_to_end(key)
        return _RECENT[key]
    style = sample_style(style_id, pool)
    faces = _LazyFaces(style, face_height)
    backs = tuple(draw_face(style, None, "back", face_height)[0] for _ in range(1))
    jokers = (draw_face(style, None, "joker", face_height)[0],)
    deck = Deck(style.name, faces, _LazyIndices(faces), backs, jokers)
    _RECENT[key] = deck
    if len(_RECENT) > _RECENT_SIZE:
        _RECENT.popitem(last=False)
    return deck


def parse_procedural_name(name: str) -> tuple[str, int] | None:
    """``procedural-heldout-12`` -> ("heldout", 12); None for a packaged deck's name.

    >>> parse_procedural_name("procedural-train-5"), parse_procedural_name("anglo")
    (('train', 5), None)
    """
    if not name.startswith(PROCEDURAL_PREFIX):
        return None
    pool, _, number = name.removeprefix(PROCEDURAL_PREFIX).rpartition("-")
    if pool not in POOLS or not number.isdigit():
        raise FacesUnavailableError(f"bad procedural deck name {name!r}: use procedural-<train|heldout>-<id>")
    return pool, int(number)
