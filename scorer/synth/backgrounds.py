"""Table surfaces: textures from installed Debian packages, and procedural felt, wood, cloth, paper and plain tops.

A detector that only ever saw green felt fails on a kitchen table, so every scene draws its surface from a
wide mix. Textures come from ``gimp-data`` patterns, ``mate-backgrounds`` and ``pokerth-data`` when present;
the procedural surfaces need nothing installed.

>>> import numpy as np
>>> make_background(np.random.default_rng(0), 64, 48).shape
(48, 64, 3)
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

TEXTURE_GLOBS: tuple[tuple[str, str], ...] = (
    ("/usr/share/gimp/2.0/patterns", "*/*.pat"),
    ("/usr/share/backgrounds/mate", "*/*.jpg"),
    ("/usr/share/backgrounds/mate", "*/*.png"),
    ("/usr/share/games/pokerth/gfx/gui/table", "*/table*.png"),
)
"""Where texture files are looked for: (folder, glob) pairs; missing folders are skipped."""

_MAX_TEXTURE_BYTES = 3_000_000  # the 16 MB wallpapers would cost seconds per process to decode


def read_gimp_pattern(path: Path) -> np.ndarray | None:
    """Decode a GIMP ``.pat`` pattern (a big-endian header, a name, then raw pixels) into BGR; None if unusable."""
    data = path.read_bytes()
    if len(data) < 24 or data[20:24] != b"GPAT":
        return None
    header_size, _version, width, height, depth = struct.unpack(">5I", data[:20])
    pixels = np.frombuffer(data[header_size : header_size + width * height * depth], np.uint8)
    if depth not in (1, 2, 3, 4) or pixels.size != width * height * depth:
        return None
    image = pixels.reshape(height, width, depth)
    if depth <= 2:
        return cv2.cvtColor(image[:, :, 0], cv2.COLOR_GRAY2BGR)
    return cv2.cvtColor(image[:, :, :3], cv2.COLOR_RGB2BGR)


@functools.lru_cache(maxsize=1)
def texture_paths() -> tuple[Path, ...]:
    """Texture files found on this machine, sorted so that a seed picks the same file everywhere."""
    found: list[Path] = []
    for folder, pattern in TEXTURE_GLOBS:
        found.extend(path for path in Path(folder).glob(pattern) if path.stat().st_size <= _MAX_TEXTURE_BYTES)
    return tuple(sorted(found))


@functools.lru_cache(maxsize=64)
def load_texture(path: Path) -> np.ndarray | None:
    """A texture as BGR, at most about a megapixel (decoded once per process)."""
    if path.suffix == ".pat":
        return read_gimp_pattern(path)
    image = cv2.imread(str(path), cv2.IMREAD_REDUCED_COLOR_2 if path.stat().st_size > 400_000 else cv2.IMREAD_COLOR)
    return image


def _noise(rng: np.random.Generator, width: int, height: int, cell: float) -> np.ndarray:
    """Smooth value noise in about -1..1 with features ``cell`` pixels wide (random grid, bicubic upsampling)."""
    grid = rng.standard_normal((max(2, int(height / cell) + 2), max(2, int(width / cell) + 2))).astype(np.float32)
    return cv2.resize(grid, (width, height), interpolation=cv2.INTER_CUBIC)


def _colour(
    rng: np.random.Generator, hues: tuple[float, float], saturation: tuple[float, float], value: tuple[float, float]
) -> np.ndarray:
    """A BGR colour (0..255 floats) drawn from ranges of OpenCV hue (0..180), saturation and value (0..255)."""
    hsv = np.array([[[rng.uniform(*hues) % 180, rng.uniform(*saturation), rng.uniform(*value)]]], np.float32)
    return cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR)[0, 0].astype(np.float32)


def felt(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    """Card-table felt: green, blue, red or grey with mottling and fine fibres."""
    hues = [(50, 80), (95, 115), (170, 185), (0, 180)][rng.integers(4)]
    base = _colour(rng, hues, (60, 220) if hues != (0, 180) else (0, 30), (50, 170))
    shade = 1 + 0.08 * _noise(rng, width, height, rng.uniform(40, 200)) + 0.05 * _noise(rng, width, height, 3)
    return base[None, None, :] * shade[:, :, None]


def wood(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    """Wood grain: stretched noise bands in browns (or painted/bleached wood)."""
    base = _colour(rng, (5, 25), (40, 200), (60, 230))
    stretch = rng.uniform(6, 25)
    grain = cv2.resize(_noise(rng, max(8, int(width / stretch)), height, rng.uniform(2, 8)), (width, height))
    warp = _noise(rng, width, height, rng.uniform(100, 300))
    bands = np.sin((grain * 2 + warp * 3) * rng.uniform(2, 6))
    image = base[None, None, :] * (1 + 0.15 * bands[:, :, None])
    if rng.random() < 0.5:
        image = np.ascontiguousarray(np.rot90(cv2.resize(image, (height, width))))
    return image


def cloth(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    """A woven tablecloth: any colour, a fine weave and sometimes a checked pattern."""
    base = _colour(rng, (0, 180), (0, 200), (60, 250))
    period = rng.uniform(2.5, 6)
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    weave = np.sin(xs * np.pi / period) * np.sin(ys * np.pi / period)
    image = base[None, None, :] * (1 + 0.06 * weave[:, :, None] + 0.04 * _noise(rng, width, height, 30)[:, :, None])
    if rng.random() < 0.3:
        check = rng.uniform(30, 120)
        other = _colour(rng, (0, 180), (0, 200), (150, 255))
        mask = ((xs // check + ys // check) % 2)[:, :, None].astype(np.float32)
        image = image * (1 - 0.5 * mask) + other[None, None, :] * 0.5 * mask
    return image


def paper(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    """Light, nearly plain surfaces: paper, laminate, a white table."""
    base = _colour(rng, (0, 180), (0, 40), (180, 255))
    return base[None, None, :] * (1 + 0.03 * _noise(rng, width, height, rng.uniform(5, 80))[:, :, None])


def plain(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    """A plain table of any colour, white and black included, with a faint gradient."""
    base = _colour(rng, (0, 180), (0, 255), (20, 255))
    ramp = np.linspace(-1, 1, width, dtype=np.float32)[None, :] * rng.uniform(-0.1, 0.1)
    return base[None, None, :] * (1 + ramp[:, :, None] + 0.015 * _noise(rng, width, height, 4)[:, :, None])


def textured(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    """A texture file, randomly scaled, tiled, cropped, rotated by quarter turns and recoloured."""
    paths = texture_paths()
    texture = load_texture(paths[rng.integers(len(paths))]) if paths else None
    if texture is None:
        return felt(rng, width, height)
    scale = rng.uniform(0.5, 2.0)
    texture = cv2.resize(texture, (max(8, int(texture.shape[1] * scale)), max(8, int(texture.shape[0] * scale))))
    texture = np.rot90(texture, int(rng.integers(4)))
    reps_y, reps_x = -(-height // texture.shape[0]) + 1, -(-width // texture.shape[1]) + 1
    tiled = np.tile(texture, (reps_y, reps_x, 1))
    y0 = int(rng.integers(0, tiled.shape[0] - height + 1))
    x0 = int(rng.integers(0, tiled.shape[1] - width + 1))
    image = np.ascontiguousarray(tiled[y0 : y0 + height, x0 : x0 + width])
    if rng.random() < 0.5:
        hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV).astype(np.int16)
        hsv[:, :, 0] = (hsv[:, :, 0] + int(rng.integers(180))) % 180
        image = cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR)
    return image.astype(np.float32)


SURFACES: tuple[tuple[Callable[[np.random.Generator, int, int], np.ndarray], float], ...] = (
    (felt, 0.25),
    (wood, 0.2),
    (cloth, 0.15),
    (paper, 0.1),
    (plain, 0.1),
    (textured, 0.2),
)
"""Surface makers and how often each is drawn."""


def make_background(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    """A table surface of ``width`` x ``height`` as float32 BGR in 0..255."""
    makers, weights = zip(*SURFACES, strict=True)
    maker = makers[rng.choice(len(makers), p=np.array(weights) / sum(weights))]
    image = maker(rng, width, height)
    return np.clip(image, 0, 255).astype(np.float32)
