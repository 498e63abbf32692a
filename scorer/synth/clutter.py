"""Things on a card table that are not cards: hands and sleeves over the cards, mugs, keyboards, notes.

Objects under the cards (keyboard, a scoring pad with writing) teach the detector that text and grids are not
corner indices; objects over the cards (a hand, a sleeve, a mug) also hide indices, so they draw into an
occlusion mask that the labeller honours.
"""

from __future__ import annotations

import string
from collections.abc import Iterator

import cv2
import numpy as np

from scorer.synth.geometry import rotation


def _random_point(rng: np.random.Generator, width: int, height: int) -> tuple[int, int]:
    return int(rng.uniform(0, width)), int(rng.uniform(0, height))


def _skin(rng: np.random.Generator) -> tuple[float, float, float]:
    """A skin tone in BGR, from pale to dark."""
    shade = rng.uniform(0, 1)
    light, dark = np.array([170, 195, 235]), np.array([45, 70, 110])
    colour = dark + (light - dark) * shade + rng.normal(0, 8, 3)
    return float(colour[0]), float(colour[1]), float(colour[2])


def _rotated_rect(centre: tuple[float, float], size: tuple[float, float], angle: float) -> np.ndarray:
    half = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * np.array(size) / 2
    points: np.ndarray = half @ rotation(angle)[:2, :2].T + np.array(centre)
    return points


def draw_hand(image: np.ndarray, mask: np.ndarray, rng: np.random.Generator, scale: float) -> None:
    """A hand reaching in from an edge: a sleeve up to the wrist, a palm, fingers and a thumb in a skin tone."""
    height, width = image.shape[:2]
    edge = int(rng.integers(4))
    along = rng.uniform(0.15, 0.85)
    start = np.array([(along * width, height), (along * width, 0), (0, along * height), (width, along * height)][edge])
    angle = float(np.degrees(np.arctan2(*[(-1, 0), (1, 0), (0, 1), (0, -1)][edge]))) + rng.uniform(-35, 35)
    direction = np.array([np.cos(np.radians(angle)), np.sin(np.radians(angle))])
    side = np.array([-direction[1], direction[0]])
    palm = start + direction * rng.uniform(0.8, 1.8) * scale
    wrist = palm - direction * 0.35 * scale
    skin = _skin(rng)
    sleeve_colour = tuple(float(c) for c in rng.uniform(0, 255, 3))
    sleeve_start = start - direction * scale
    sleeve = _rotated_rect(
        tuple((sleeve_start + wrist) / 2), (float(np.linalg.norm(wrist - sleeve_start)), 0.75 * scale), angle
    )
    palm_points = np.asarray(
        cv2.ellipse2Poly((int(palm[0]), int(palm[1])), (int(0.42 * scale), int(0.34 * scale)), int(angle), 0, 360, 10)
    )
    for polygon, colour in ((palm_points, skin), (sleeve, sleeve_colour)):
        cv2.fillPoly(image, [polygon.astype(np.int32)], colour, cv2.LINE_AA)
        cv2.fillPoly(mask, [polygon.astype(np.int32)], 1)
    thickness = max(2, int(0.13 * scale))
    fingers = [(offset, rng.uniform(0.45, 0.7)) for offset in np.linspace(-0.25, 0.25, 4)]
    fingers.append((rng.choice([-0.4, 0.4]), 0.45))  # the thumb, on one side
    curl = rng.uniform(-0.25, 0.25)
    for offset, length in fingers:
        base = palm + direction * 0.25 * scale + side * offset * scale
        tip = base + (direction + side * (curl + offset)) * length * scale
        points = (int(base[0]), int(base[1])), (int(tip[0]), int(tip[1]))
        cv2.line(image, *points, skin, thickness, cv2.LINE_AA)
        cv2.line(mask, *points, 1, thickness)


def draw_mug(image: np.ndarray, mask: np.ndarray, rng: np.random.Generator, scale: float) -> None:
    """A mug seen from above: a rim ellipse, a darker drink inside, a handle."""
    height, width = image.shape[:2]
    centre = _random_point(rng, width, height)
    radius = int(rng.uniform(0.35, 0.65) * scale)
    axes = (radius, int(radius * rng.uniform(0.75, 1.0)))
    angle = int(rng.uniform(0, 180))
    body = tuple(float(c) for c in rng.uniform(0, 255, 3))
    handle_end = (
        int(centre[0] + 1.4 * radius * np.cos(np.radians(angle))),
        int(centre[1] + 1.4 * radius * np.sin(np.radians(angle))),
    )
    cv2.line(image, centre, handle_end, body, max(2, radius // 4), cv2.LINE_AA)
    cv2.line(mask, centre, handle_end, 1, max(2, radius // 4))
    cv2.ellipse(image, centre, axes, angle, 0, 360, body, -1, cv2.LINE_AA)
    cv2.ellipse(mask, centre, axes, angle, 0, 360, 1, -1)
    drink = tuple(float(c) for c in rng.uniform(10, 90, 3))
    cv2.ellipse(image, centre, (int(axes[0] * 0.8), int(axes[1] * 0.8)), angle, 0, 360, drink, -1, cv2.LINE_AA)


KEY_LEGENDS = string.ascii_uppercase + string.digits + "~!@#$%&*+-=?<>"
"""What keys print: digits and capitals are what a corner index is made of, so they teach the classifier most."""

KEY_WORDS = ("SHIFT", "CTRL", "ALT", "ENTER", "TAB", "ESC", "FN", "DEL", "HOME", "END", "PGUP", "CAPS", "F5", "F10")
"""Modifier and function keys, printed small: a glowing "F5" or "ALT" is as much like an index as a digit."""

HERSHEY_FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_PLAIN,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
)


def _key_legend(rng: np.random.Generator) -> str:
    return KEY_WORDS[int(rng.integers(len(KEY_WORDS)))] if rng.random() < 0.15 else str(rng.choice(list(KEY_LEGENDS)))


def _backlight_colours(rng: np.random.Generator, rows: int, columns: int) -> np.ndarray:
    """A gaming keyboard's per-key light (BGR, rows x columns x 3): one colour, or a rainbow wave across it."""
    hue = np.full((rows, columns), rng.uniform(0, 180))
    if rng.random() < 0.7:
        hue = hue + np.arange(columns)[None, :] * rng.uniform(4, 15) + np.arange(rows)[:, None] * rng.uniform(-10, 10)
    hsv = np.dstack([hue % 180, np.full_like(hue, rng.uniform(170, 255)), np.full_like(hue, rng.uniform(190, 255))])
    return cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR).astype(np.float32)


KEYBOARD_STYLES = ("light", "plain", "coloured", "backlit", "grazing")
"""Light keys with dark legends; dark keys with white legends, coloured legends, lit from below (gaming), or a
lit gaming keyboard seen almost edge-on."""


def _keyboard_size(rows: int, columns: int, key: float, pitch: float) -> tuple[int, int]:
    """(width, height) of a keyboard's patch: its keys and half a key's margin round them."""
    return int(columns * pitch + key), int(rows * pitch + key)


def _key_places(rows: int, columns: int, key: float, pitch: float) -> Iterator[tuple[int, int, float, float]]:
    """Each key's row, column and top-left corner (x, y) in the keyboard's patch, row by row."""
    for row in range(rows):
        for column in range(columns):
            yield row, column, key / 2 + column * pitch, key / 2 + row * pitch


def _grazing_keys(rng: np.random.Generator, rows: int, columns: int, key: float, pitch: float) -> np.ndarray:
    """A lit gaming keyboard seen almost edge-on from across a desk (BGR patch, float32).

    From there the keycaps are dark blocks; what shows is each cap's edge catching the room light, a thin grey
    stroke leaning the same way on every key, and the light under the cap, a coloured smear at its foot. A
    stroke over a smear reads like a "J" or a "7" over a pip: the black-deck photos' lit keyboards were read as
    jacks and sevens of hearts and spades until such keys were drawn.
    """
    width, height = _keyboard_size(rows, columns, key, pitch)
    patch = np.full((height, width, 3), rng.uniform(5, 25), np.float32)
    glow = np.zeros_like(patch)
    colours = _backlight_colours(rng, rows, columns)
    lean = rng.uniform(np.radians(70), np.radians(88)) * rng.choice([-1, 1])
    stroke = np.array([np.cos(lean), -abs(np.sin(lean))]) * key * rng.uniform(0.6, 1.1)
    grey = rng.uniform(90, 200)
    thickness = max(1, round(key * rng.uniform(0.03, 0.08)))
    for row, column, x, y in _key_places(rows, columns, key, pitch):
        cap = rng.uniform(15, 35)
        cv2.rectangle(patch, (int(x), int(y)), (int(x + key * 0.92), int(y + key * 0.92)), (cap, cap, cap), -1)
        foot = np.array([x + key * rng.uniform(0.3, 0.7), y + key * rng.uniform(0.75, 0.95)])
        axes = (max(1, int(key * rng.uniform(0.1, 0.25))), max(1, int(key * rng.uniform(0.12, 0.3))))
        smear = (foot + rng.normal(0, 0.04, 2) * key).astype(int)
        cv2.ellipse(glow, (int(smear[0]), int(smear[1])), axes, 0, 0, 360, colours[row, column].tolist(), -1)
        if rng.random() < 0.85:
            top = foot - np.array([0, axes[1] * rng.uniform(0.5, 1.0)])  # from the smear's top edge
            shade = grey * rng.uniform(0.7, 1.1)
            end = top + stroke
            cv2.line(patch, tuple(top.astype(int)), tuple(end.astype(int)), (shade,) * 3, thickness, cv2.LINE_AA)
    spread = cv2.GaussianBlur(glow, (0, 0), max(0.6, key * rng.uniform(0.03, 0.08)))
    return np.maximum(patch, spread * rng.uniform(0.7, 1.0))


def draw_keyboard(image: np.ndarray, rng: np.random.Generator, scale: float, style: str | None = None) -> None:
    """A keyboard (or calculator): a dark or light slab of keys, each printed with a letter, digit or sign.

    Real photos put cards on laptops and beside gaming keyboards, and a key's "8" or "2" was read as a card
    there; so the keys carry legends, drawn upright and turned into place. A gaming keyboard's keys were read
    as cards too (ten of the twenty cards invented in rf-zk7wu-phone's black-deck photos): there light leaks
    round each dark keycap in its own colour, the caps' side walls catch it and the legends glow, so 3 in 10
    dark keyboards are lit so and a quarter lit and seen edge-on (``_grazing_keys``); half of the others are seen
    at a slant. ``style`` (one of ``KEYBOARD_STYLES``) is drawn at random when not given.
    """
    rows, columns = int(rng.integers(4, 7)), int(rng.integers(10, 19))
    key = rng.uniform(0.1, 0.3) * scale
    pitch = key * rng.uniform(1.05, 1.2)
    patch_width, patch_height = _keyboard_size(rows, columns, key, pitch)
    if key < 4 or patch_width < 8 or patch_height < 8:
        return
    dark_styles, shares = ["plain", "coloured", "backlit", "grazing"], [0.25, 0.2, 0.3, 0.25]
    style = style or ("light" if rng.random() >= 0.5 else str(rng.choice(dark_styles, p=shares)))
    if style not in KEYBOARD_STYLES:
        raise ValueError(f"unknown keyboard style {style!r}; one of {', '.join(KEYBOARD_STYLES)}")
    if style == "grazing":
        edge_on, seen = _seen_obliquely(_grazing_keys(rng, rows, columns, key, pitch), rng, blur=0.5, squash=0.5)
        _paste_turned(image, None, edge_on, _random_point(rng, *image.shape[1::-1]), rng.uniform(-30, 30), seen)
        return
    dark = style != "light"
    slab = np.array((30.0, 30.0, 35.0) if dark else (210.0, 210.0, 205.0), np.float32)
    keys = np.array((60.0, 60.0, 65.0) if dark else (240.0, 240.0, 240.0), np.float32)
    light = np.zeros((rows, columns, 3), np.float32)
    if style == "backlit":
        slab = np.full(3, rng.uniform(5, 25), np.float32)
        keys = np.full(3, rng.uniform(25, 55), np.float32)
        light = _backlight_colours(rng, rows, columns)
    elif style == "coloured":  # legends lit in one colour, no light round the keys
        light[:] = rng.uniform(80, 255, 3)
    elif style == "light":  # one grey ink for every legend
        light[:] = rng.uniform(20, 90)
    font = HERSHEY_FONTS[int(rng.integers(len(HERSHEY_FONTS)))]
    font_scale = cv2.getFontScaleFromHeight(font, max(3, int(key * rng.uniform(0.3, 0.55))))
    thickness = max(1, round(key / 25))
    cap = key * 0.92
    tilt = rng.uniform(0, 2 * np.pi)  # the caps' tops are seen shifted off their bases: side walls show
    wall = rng.uniform(0.05, 0.15) * key * np.array([np.cos(tilt), np.sin(tilt)])
    patch = np.empty((patch_height, patch_width, 3), np.uint8)
    patch[:] = slab
    if style == "backlit":  # the light between the keys, spread by the plate under them
        glow = np.zeros(patch.shape, np.float32)
        for row, column, x, y in _key_places(rows, columns, key, pitch):
            spill = rng.uniform(0.03, 0.1) * key
            corners = (int(x - spill), int(y - spill)), (int(x + cap + spill), int(y + cap + spill))
            cv2.rectangle(glow, *corners, light[row, column].tolist(), -1, cv2.LINE_AA)
        spread = cv2.GaussianBlur(glow, (0, 0), max(0.8, key * rng.uniform(0.04, 0.1)))
        patch = np.maximum(patch, np.clip(spread * rng.uniform(0.5, 1.0), 0, 255).astype(np.uint8))
    for row, column, x, y in _key_places(rows, columns, key, pitch):
        lit = light[row, column]
        side = keys * 0.75 + (lit * rng.uniform(0.15, 0.45) if style == "backlit" else 0)
        cv2.rectangle(patch, (int(x), int(y)), (int(x + cap), int(y + cap)), side.tolist(), -1, cv2.LINE_AA)
        top = (x + wall[0] + key * 0.08, y + wall[1] + key * 0.08)
        cv2.rectangle(
            patch,
            (int(top[0]), int(top[1])),
            (int(top[0] + cap * 0.84), int(top[1] + cap * 0.84)),
            keys.tolist(),
            -1,
            cv2.LINE_AA,
        )
        text = _key_legend(rng)
        size = font_scale * (0.5 if len(text) > 2 else 1.0)
        where = (int(top[0] + key * rng.uniform(0.05, 0.3)), int(top[1] + key * rng.uniform(0.4, 0.65)))
        ink = (225.0, 225.0, 225.0) if style == "plain" else lit.tolist()
        cv2.putText(patch, text, where, font, size, ink, thickness, cv2.LINE_AA)
    cover: np.ndarray | None = None
    if rng.random() < 0.5:
        patch, cover = _seen_obliquely(patch, rng, blur=max(0.5, key * rng.uniform(0.0, 0.06)))
    _paste_turned(image, None, patch, _random_point(rng, *image.shape[1::-1]), rng.uniform(0, 360), cover)


def _seen_obliquely(
    patch: np.ndarray, rng: np.random.Generator, blur: float, squash: float = 0.8
) -> tuple[np.ndarray, np.ndarray]:
    """The patch as a phone sees a keyboard behind the cards: rows squashed, the far edge narrower, out of focus.

    The lit keyboards read as cards in real photos lie at the back of the desk, seen at a slant and blurred,
    where their legends are specks and strokes in a dark band rather than letters on square keys.
    Rows keep at most ``squash`` of their height. Returns the warped patch and how much of each of its pixels
    the keyboard covers (0 to 1).
    """
    height, width = patch.shape[:2]
    squashed = max(4, round(height * rng.uniform(0.3, squash)))
    # blurred along the rows' squash first, so that thin strokes do not alias into dashes
    patch = cv2.GaussianBlur(patch.astype(np.float32), (0, 0), sigmaX=0.5, sigmaY=0.4 * height / squashed)
    taper = rng.uniform(0.0, 0.2) * width
    square = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    slanted = np.array([[taper, 0], [width - taper, 0], [width, squashed], [0, squashed]], np.float32)
    warp = cv2.getPerspectiveTransform(square, slanted)
    seen = cv2.warpPerspective(patch, warp, (width, squashed), flags=cv2.INTER_LINEAR)
    cover = cv2.warpPerspective(np.ones((height, width), np.float32), warp, (width, squashed), flags=cv2.INTER_AREA)
    return cv2.GaussianBlur(seen, (0, 0), blur), cover


def _paste_turned(
    image: np.ndarray,
    mask: np.ndarray | None,
    patch: np.ndarray,
    centre: tuple[int, int],
    angle: float,
    cover: np.ndarray | None = None,
) -> None:
    """Paste an upright patch into ``image`` turned by ``angle`` degrees about ``centre``; mark it in ``mask``.

    ``cover`` (the patch's shape, 0 to 1) says how much of each patch pixel is the object; all of it by default.
    """
    height, width = image.shape[:2]
    patch_height, patch_width = patch.shape[:2]
    place = cv2.getRotationMatrix2D((patch_width / 2, patch_height / 2), angle, 1.0)
    place[:, 2] += np.array(centre) - np.array([patch_width / 2, patch_height / 2])
    warped = cv2.warpAffine(patch.astype(np.float32), place, (width, height))
    opaque = np.ones((patch_height, patch_width), np.float32) if cover is None else cover.astype(np.float32)
    coverage = cv2.warpAffine(opaque, place, (width, height))
    image[:] = image * (1 - coverage[:, :, None]) + warped * coverage[:, :, None]
    if mask is not None:
        mask[coverage > 0.5] = 1


def draw_note(image: np.ndarray, mask: np.ndarray | None, rng: np.random.Generator, scale: float) -> None:
    """A paper note or score pad with ruled lines and scribbled letters and digits (much like indices).

    The note is written upright on its own 8-bit patch, then turned into place, so its text turns with it.
    """
    height, width = image.shape[:2]
    note_width, note_height = int(rng.uniform(1.5, 3.5) * scale), int(rng.uniform(1.5, 4.0) * scale)
    if note_width < 8 or note_height < 8:
        return
    paper = tuple(float(c) for c in rng.uniform(200, 255, 3))
    patch = np.empty((note_height, note_width, 3), np.uint8)
    patch[:] = paper
    ink = (float(rng.uniform(0, 120)), float(rng.uniform(0, 80)), float(rng.uniform(0, 80)))
    line_gap = max(6.0, 0.18 * scale)
    font_scale = line_gap / 30
    alphabet = list(string.ascii_uppercase + string.digits + "  ")
    for row in range(1, int(note_height / line_gap)):
        y = int(row * line_gap)
        if rng.random() < 0.3:
            cv2.line(patch, (0, y + 2), (note_width, y + 2), (200.0, 170.0, 140.0), 1, cv2.LINE_AA)
        text = "".join(rng.choice(alphabet) for _ in range(int(rng.integers(2, 10))))
        cv2.putText(patch, text, (int(0.08 * note_width), y), cv2.FONT_HERSHEY_SIMPLEX, font_scale, ink, 1, cv2.LINE_AA)
    _paste_turned(image, mask, patch, _random_point(rng, width, height), rng.uniform(0, 360))


def draw_under_clutter(image: np.ndarray, rng: np.random.Generator, scale: float, count: int) -> None:
    """Objects lying under the cards: keyboards and notes."""
    for _ in range(count):
        if rng.random() < 0.4:
            draw_keyboard(image, rng, scale)
        else:
            draw_note(image, None, rng, scale)


def draw_over_clutter(image: np.ndarray, mask: np.ndarray, rng: np.random.Generator, scale: float, count: int) -> None:
    """Objects over the cards (hands, mugs, notes), shaded, soft-edged and casting a shadow.

    They are drawn flat on a layer first, then composited with feathered edges; every pixel they cover is set
    in ``mask`` (uint8, 1 = hidden) so that the labeller drops indices under them.
    """
    height, width = image.shape[:2]
    layer = np.zeros_like(image)
    cover = np.zeros((height, width), np.uint8)
    for _ in range(count):
        choice = rng.random()
        if choice < 0.5:
            draw_hand(layer, cover, rng, scale)
        elif choice < 0.8:
            draw_mug(layer, cover, rng, scale)
        else:
            draw_note(layer, cover, rng, scale)
    alpha = cv2.GaussianBlur(cover.astype(np.float32), (0, 0), max(0.8, 0.02 * scale))
    offset = rng.uniform(0.05, 0.25) * scale
    angle = rng.uniform(0, 2 * np.pi)
    shift = np.array([[1, 0, offset * np.cos(angle)], [0, 1, offset * np.sin(angle)]], np.float32)
    shadow = cv2.GaussianBlur(cv2.warpAffine(alpha, shift, (width, height)), (0, 0), max(1.0, 0.15 * scale))
    shading = 1 + 0.12 * cv2.resize(rng.standard_normal((4, 4)).astype(np.float32), (width, height))
    image *= (1 - rng.uniform(0.2, 0.5) * shadow)[:, :, None]
    image[:] = image * (1 - alpha[:, :, None]) + layer * (shading * alpha)[:, :, None]
    np.maximum(mask, cover, out=mask)
