"""Reading photos into BGR arrays, with errors that name the file and the problem.

Every entry point that accepts a picture (``okgin detect``, ``okgin score-image``, the
web upload) goes through here, so a bad file always reads the same way to the user.

A picture is measured before it is decoded: a 400 KB PNG may claim 20000x20000 pixels and
decode into 1.2 GB, so the size is read from the header first (a few bytes of it, read here) and
anything over ``MAX_PIXELS`` is refused before a byte of it is decompressed; so is a PNG, TIFF or 12-bit JPEG
whose samples (16 bits each, say) would take more than ``MAX_DECODED_BYTES`` as stored, as decoders hold them. At most
``MAX_CONCURRENT_DECODES`` pictures decode at once, so simultaneous uploads cannot add up either, and a few
more wait for a while (``MAX_DECODES_WAITING``, ``DECODE_WAIT_SECONDS``): past those a picture is refused as busy.

Colours are read as sRGB, as the detector was trained on: a JPEG, PNG or WebP holding another colour profile (an
iPhone's Display P3, a camera's Adobe RGB, a CMYK JPEG's printer profile) is converted by Little CMS (Pillow's
``ImageCms``, which reads every kind of ICC profile, matrix or table), a band of rows at a time. A picture without a
profile, as a webcam's frame, costs a walk over its header's segments (20 µs); a 12 MP Display P3 photo took about
0.45 s of CPU more to decode than the 0.11 s it takes without a profile, a 12 MP CMYK one about 1.3 s more than OpenCV's
conversion without its profile, on the development machine.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import io
import os
import re
import struct
import sys
import tempfile
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from scorer.errors import OkginError
from scorer.files import FileTooLargeError, read_regular_file, why_not_a_file

if TYPE_CHECKING:
    from PIL.ImageCms import ImageCmsTransform

# leading bytes of the formats people actually upload; used only to word the error
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\xff\xd8\xff", "JPEG"),
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"GIF8", "GIF"),
    (b"BM", "BMP"),
    (b"RIFF", "WEBP"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
)
SUPPORTED_FORMATS = "JPEG, PNG, BMP, WEBP or TIFF"
MAX_PIXELS = 40_000_000
"""The largest picture decoded: 40 megapixels (a 7300x5500 photo), 120 MB as a BGR array."""
MAX_DECODED_BYTES = 4 * MAX_PIXELS
"""The most bytes a picture's samples may take as stored (160 MB): every 8-bit picture of up to ``MAX_PIXELS``, grey to
RGBA, fits, and a 16-bit RGBA one of up to 20 MP. OpenCV reads a TIFF strip or tile whole before converting it to
8-bit BGR: a 40 MP 16-bit RGBA TIFF in one strip (0.3 MB deflated) took 460 MiB to decode, an 8-bit RGBA one
306 MiB and a 20 MP 16-bit RGBA one 230 MiB (``tests/image_bombs.py`` ``tiff_of_zeros``, peak RSS). PNG is held to
the same budget, though OpenCV's libpng takes 16-bit rows down to 8 bits as it reads them (a 40 MP 16-bit RGBA PNG
took the 230 MiB of an 8-bit one): the rule is what the header says, not what one decoder build does with it."""
MAX_FILE_BYTES = 200 * 1024 * 1024
"""The largest image file read from disk; no photo of a card table comes near it."""
MAX_JPEG_SCANS = 100
"""The most scans a JPEG may hold: a camera or an editor writes 1 to 3, or about 10 progressive ones."""
MAX_CONCURRENT_DECODES = 2
MAX_DECODES_WAITING = 4
"""Pictures that may wait for a decoding slot; one more is refused at once (``DecodersBusyError``): each waiting
picture holds a server thread, so this bounds how many threads decoding can take."""
DECODE_WAIT_SECONDS = 10.0
"""The longest a picture waits for a slot (a 40 MP JPEG decodes in under 2 s on a busy 2-core machine)."""
_decode_slots = threading.BoundedSemaphore(MAX_CONCURRENT_DECODES)
_decode_places = threading.BoundedSemaphore(MAX_CONCURRENT_DECODES + MAX_DECODES_WAITING)


class ImageError(OkginError):
    """A picture that cannot be read: missing, empty, truncated or not an image at all."""


class ImageTooLargeError(ImageError):
    """A picture with more pixels (``MAX_PIXELS``) or bytes (``MAX_DECODED_BYTES``) than okgin decodes, refused before
    decoding."""


class DecodersBusyError(ImageError):
    """Every decoding slot is taken and enough pictures wait for one (or this one waited too long): try again."""


def sniff_format(data: bytes) -> str | None:
    """The image format named by the leading bytes, or None when they match none.

    >>> sniff_format(b"\\x89PNG\\r\\n\\x1a\\n...."), sniff_format(b"hello")
    ('PNG', None)
    """
    for signature, name in _SIGNATURES:
        if data.startswith(signature):
            return name
    return None


_FILE_TYPES = {
    "JPEG": (".jpg", "image/jpeg"),
    "PNG": (".png", "image/png"),
    "WEBP": (".webp", "image/webp"),
    "BMP": (".bmp", "image/bmp"),
    "TIFF": (".tif", "image/tiff"),
}


MIME_TYPES = frozenset(mime for _, mime in _FILE_TYPES.values())
"""The media types of the formats okgin reads."""


def file_type(data: bytes) -> tuple[str, str] | None:
    """The file suffix and MIME type that name these image bytes truthfully, or None for another format.

    >>> file_type(b"\\x89PNG\\r\\n\\x1a\\n...."), file_type(b"RIFF....WAVEfmt "), file_type(b"GIF89a")
    (('.png', 'image/png'), None, None)
    """
    kind = sniff_format(data)
    if kind == "WEBP" and data[8:12] != b"WEBP":
        return None
    return _FILE_TYPES.get(kind or "")


def _megapixels(pixels: int) -> str:
    return f"{pixels / 1e6:.1f} MP"


class _Truncated(Exception):
    """The header ends before it says how large the picture is."""


@dataclasses.dataclass(frozen=True)
class _Header:
    """What a picture's header says it decodes into, read once per picture."""

    width: int
    height: int
    pixel_bits: int | None = None
    """Bits a pixel takes as stored, where samples may be wider than 8 bits; None: at most four 8-bit samples."""
    tile: tuple[int, int] | None = None
    """A tiled TIFF's tile sides: OpenCV decodes a tile at a time into a buffer of the tile's size, whatever the
    picture's (a 2x2 picture in one 11008x11008 tile, deflated to 0.9 MB, took 1 GB to decode)."""


def _unpack(layout: str, data: bytes, offset: int) -> tuple[int, ...]:
    try:
        return struct.unpack_from(layout, data, offset)
    except struct.error:
        raise _Truncated from None


# JPEG frame headers (SOF0-15 but DHT, JPG and DAC) carry the size; every other segment is skipped by its length
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_JPEG_STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})


def _jpeg_segments(data: bytes) -> Iterator[tuple[int, int, int]]:
    """The marker, and where the data starts and ends, of each segment before the first scan, found as libjpeg finds
    them (``next_marker``), so that no frame header or profile can hide from this reader where libjpeg reads it.

    :raises _Truncated: for a segment whose length is cut off.
    """
    offset = 2
    while True:
        # libjpeg skips any bytes before a marker's 0xFF (warning of "extraneous bytes"), then fill 0xFFs, and
        # takes 0xFF 0x00 for more of them: reading a length there skipped the frame header it decodes
        offset = data.find(b"\xff", offset)
        if offset < 0:
            return
        while offset < len(data) and data[offset] == 0xFF:
            offset += 1
        if offset >= len(data):
            return
        marker, offset = data[offset], offset + 1
        if marker == 0x00 or marker in _JPEG_STANDALONE:
            continue
        if marker in (0xD9, 0xDA):  # the end, or the pixels
            return
        (length,) = _unpack(">H", data, offset)
        yield marker, offset + 2, offset + length
        offset += max(length, 2)  # a length under 2 counts its own two bytes only, as libjpeg skips it


def _jpeg_header(data: bytes) -> _Header:
    """The size, sample precision and components in the frame header libjpeg reads. A 12-bit JPEG's samples are
    decoded 16 bits wide."""
    for marker, start, _ in _jpeg_segments(data):
        if marker in _JPEG_FRAMES:
            precision, height, width, components = _unpack(">BHHB", data, start)
            return _Header(width, height, (16 if precision > 8 else 8) * components)
    raise _Truncated  # the end, or the pixels, before any frame header


def _jpeg_scans(data: bytes) -> int:
    """How many scans (start-of-scan markers) a JPEG holds, thumbnails' included. A progressive JPEG's decoder
    passes over every block of the picture once per scan, so scans cost time as pixels cost memory: 2,000
    empty scans of a 36 MP picture fit in 22 KB and took 11 s to decode. In the entropy-coded data an 0xFF byte
    is always followed by 0x00 or a marker, so every 0xFF 0xDA there is one."""
    return data.count(b"\xff\xda")


def _webp_header(data: bytes) -> _Header:
    chunk = data[12:16]
    if chunk == b"VP8 ":  # lossy: 14-bit sides after the key frame's start code
        width, height = _unpack("<HH", data, 26)
        return _Header(width & 0x3FFF, height & 0x3FFF)
    if chunk == b"VP8L":  # lossless: 14-bit sides minus one, packed after the signature byte
        (bits,) = _unpack("<I", data, 21)
        return _Header((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X":  # extended: 24-bit canvas sides minus one
        if len(data) < 30:
            raise _Truncated
        width, height = (int.from_bytes(data[at : at + 3], "little") + 1 for at in (24, 27))
        return _Header(width, height)
    raise _Truncated


def _bmp_header(data: bytes) -> _Header:
    (header,) = _unpack("<I", data, 14)
    if header == 12:  # OS/2 core header: 16-bit sides
        width, height = _unpack("<HH", data, 18)
        return _Header(width, height)
    width, height = _unpack("<ii", data, 18)
    return _Header(abs(width), abs(height))  # a negative height means top-down rows


_PNG_SAMPLES = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
"""Samples per pixel of each PNG colour type: grey, RGB, palette index, grey and alpha, RGBA."""


def _png_header(data: bytes) -> _Header:
    """The IHDR's sides, and bits per pixel as stored: its bit depth (1 to 16) times the colour type's samples (4 for
    an unknown one, which libpng refuses anyway)."""
    if data[12:16] != b"IHDR":  # the first chunk, after the signature and its length
        raise _Truncated
    width, height, depth, colour = _unpack(">IIBB", data, 16)
    return _Header(width, height, depth * _PNG_SAMPLES.get(colour, 4))


_TIFF_WIDTH, _TIFF_LENGTH, _TIFF_BITS, _TIFF_SAMPLES, _TIFF_TILE_WIDTH, _TIFF_TILE_LENGTH = 256, 257, 258, 277, 322, 323
_TIFF_SAMPLE_FORMAT, _TIFF_FLOATS = 339, 3
_TIFF_FIELD_NAMES = {
    _TIFF_SAMPLE_FORMAT: "sample format",
    _TIFF_WIDTH: "width",
    _TIFF_LENGTH: "height",
    _TIFF_BITS: "bits per sample",
    _TIFF_SAMPLES: "samples per pixel",
    _TIFF_TILE_WIDTH: "tile width",
    _TIFF_TILE_LENGTH: "tile height",
}
_TIFF_VALUES_READ = 8
"""The most values read of one field: bits per sample has one value per sample, and a pixel has a few samples."""


_TIFF_KINDS = {1: "B", 3: "H", 4: "I", 6: "b", 8: "h", 9: "i"}
"""The struct codes of the TIFF field types a size can be written in: BYTE, SHORT, LONG and their signed kinds."""


class _DuplicateTiffField(ValueError):
    """A TIFF directory naming one of its sizes twice: libtiff takes the first, a reader keeping the last would be
    told another size than the decoder allocates."""


def _tiff_fields(data: bytes) -> dict[int, tuple[int, ...]]:
    """The fields of the first TIFF directory (the page OpenCV decodes) that say how much it decodes into: image
    width and length, bits per sample and samples per pixel, and tile width and length for a tiled picture, and
    whether its samples are whole numbers or floating-point ones (sample format). Each is
    held in the entry when it fits in its four bytes, else where the entry points.

    :raises _DuplicateTiffField: for a directory that names one of them twice.
    :raises _Truncated: for a field of another type than the integers ``_TIFF_KINDS``, or bytes ending too soon.
    """
    order = "<" if data.startswith(b"II") else ">"
    (version, directory) = _unpack(order + "HI", data, 2)
    if version != 42:  # BigTIFF and the like: not read here
        raise _Truncated
    (entries,) = _unpack(order + "H", data, directory)
    fields: dict[int, tuple[int, ...]] = {}
    for entry in range(entries):
        at = directory + 2 + 12 * entry
        tag, kind, count = _unpack(order + "HHI", data, at)
        if tag in _TIFF_FIELD_NAMES and count > 0:
            if tag in fields:
                raise _DuplicateTiffField(tag)
            if kind not in _TIFF_KINDS:
                raise _Truncated
            code = _TIFF_KINDS[kind]
            values_at = at + 8 if count * struct.calcsize(code) <= 4 else _unpack(order + "I", data, at + 8)[0]
            fields[tag] = _unpack(f"{order}{min(count, _TIFF_VALUES_READ)}{code}", data, values_at)
    return fields


def _tiff_header(data: bytes) -> _Header:
    """The first directory's sides, bits per pixel as stored (bits per sample, the largest where each sample names
    its own, as libtiff wants one value for all, times samples per pixel; each 1 when absent, as the TIFF standard
    says) and its tile sides when it is tiled."""
    fields = _tiff_fields(data)
    if _TIFF_WIDTH not in fields or _TIFF_LENGTH not in fields:
        raise _Truncated
    pixel_bits = max(fields.get(_TIFF_BITS, (1,))) * fields.get(_TIFF_SAMPLES, (1,))[0]
    tiled = _TIFF_TILE_WIDTH in fields and _TIFF_TILE_LENGTH in fields
    tile = (fields[_TIFF_TILE_WIDTH][0], fields[_TIFF_TILE_LENGTH][0]) if tiled else None
    return _Header(fields[_TIFF_WIDTH][0], fields[_TIFF_LENGTH][0], pixel_bits, tile)


_HEADER_READERS = {
    "JPEG": _jpeg_header,
    "PNG": _png_header,
    "WEBP": _webp_header,
    "BMP": _bmp_header,
    "TIFF": _tiff_header,
}


def image_size(data: bytes, name: str = "image", max_pixels: int = MAX_PIXELS) -> tuple[int, int]:
    """``(width, height)`` read from the image header, without decoding any pixel.

    The header is read here rather than by a decoder, so that a picture is measured before any
    decoder allocates it: JPEG frame headers, the PNG IHDR, the three WebP kinds, BMP and the first
    TIFF directory (the page OpenCV decodes).

    >>> ihdr = bytes.fromhex("89504e470d0a1a0a0000000d49484452")  # the signature, then IHDR: sides, depth, colour
    >>> png = ihdr + (640).to_bytes(4, "big") + (480).to_bytes(4, "big") + bytes([8, 2])
    >>> image_size(png)
    (640, 480)
    >>> image_size(png, "upload", max_pixels=300_000)
    Traceback (most recent call last):
    ...
    scorer.vision.images.ImageTooLargeError: upload is 640x480 (0.3 MP): okgin reads images up to 0.3 MP

    :raises ImageTooLargeError: when the header claims more than ``max_pixels`` pixels (or a TIFF's tiles do: each
        is decoded whole), or samples taking more than ``MAX_DECODED_BYTES`` (a 16-bit PNG or TIFF of 40 MP).
    :raises ImageError: when the bytes are no JPEG, PNG, WebP, BMP or TIFF, end before their size, are a TIFF that
        gives a size twice, or are a JPEG of more than ``MAX_JPEG_SCANS`` scans.
    """
    if file_type(data) is None:
        raise ImageError(_undecodable(data, name))
    kind = sniff_format(data) or ""
    try:
        header = _HEADER_READERS[kind](data)
    except _Truncated:
        raise ImageError(_undecodable(data, name)) from None
    except _DuplicateTiffField as twice:
        what = _TIFF_FIELD_NAMES[twice.args[0]]
        raise ImageError(
            f"could not decode {name}: its TIFF header gives its {what} twice, so its size is not known"
        ) from None
    width, height, pixel_bits = header.width, header.height, header.pixel_bits
    if width <= 0 or height <= 0:
        raise ImageError(f"could not decode {name}: its header says it is {width}x{height}")
    _ensure_within(f"{name} is", width, height, pixel_bits, max_pixels)
    if header.tile is not None:
        _ensure_within(f"{name} is stored in tiles of", *header.tile, pixel_bits, max_pixels, ", each decoded whole")
    scans = _jpeg_scans(data) if kind == "JPEG" else 0
    if scans > MAX_JPEG_SCANS:
        raise ImageError(
            f"could not decode {name}: it holds {scans} scans, each a pass over every pixel;"
            f" okgin reads JPEGs of up to {MAX_JPEG_SCANS}"
        )
    return width, height


def _ensure_within(
    lead: str, width: int, height: int, pixel_bits: int | None, max_pixels: int, trail: str = ""
) -> None:
    """Refuse a picture (or one of its tiles) of more than ``max_pixels`` pixels, or whose samples, ``pixel_bits`` a
    pixel as stored (None: at most four 8-bit ones), take more than ``MAX_DECODED_BYTES``.

    :raises ImageTooLargeError: ``"{lead} {its size}{trail}: {the limit}"``.
    """
    if width * height > max_pixels:
        size = f"{width}x{height} ({_megapixels(width * height)})"
        raise ImageTooLargeError(f"{lead} {size}{trail}: okgin reads images up to {_megapixels(max_pixels)}")
    decoded = 0 if pixel_bits is None else (width * height * pixel_bits + 7) // 8
    if decoded > MAX_DECODED_BYTES:
        size = f"{width}x{height} of {pixel_bits} bits a pixel ({decoded / 1e6:.0f} MB decoded)"
        limit = f"{MAX_DECODED_BYTES / 1e6:.0f} MB ({_megapixels(MAX_DECODED_BYTES // 4)} of 8-bit RGBA)"
        raise ImageTooLargeError(f"{lead} {size}{trail}: okgin decodes images of up to {limit}")


_HEIF_BRANDS = {b"heic": "HEIC", b"heix": "HEIC", b"heim": "HEIC", b"heis": "HEIC", b"mif1": "HEIF", b"msf1": "HEIF"}
_HEIF_BRANDS |= {b"avif": "AVIF", b"avis": "AVIF"}
"""The major brands of the ISO media files phones save photos as (``....ftypheic``): a phone's HEIC photo was
called "not a JPEG, PNG, BMP, WEBP or TIFF image", as if it were no picture at all."""


_VIDEO_BRANDS = frozenset({b"isom", b"iso2", b"iso4", b"iso5", b"iso6", b"mp41", b"mp42", b"avc1", b"qt  ", b"M4V "})
_VIDEO_BRANDS |= {b"M4VH", b"3gp4", b"3gp5", b"3gp6", b"3g2a", b"dash", b"MSNV"}
"""The major brands of the ISO media files cameras and phones record video in (``....ftypmp42``)."""


def _video_kind(data: bytes) -> str | None:
    """The kind of video these bytes begin, or None: a clip given where a photo is wanted was called "not a JPEG,
    PNG, BMP, WEBP or TIFF image", as if it were a damaged file."""
    if data[4:8] == b"ftyp" and data[8:12] in _VIDEO_BRANDS:
        return "an MP4 or QuickTime video"
    if data.startswith(b"RIFF") and data[8:12] == b"AVI ":
        return "an AVI video"
    if data.startswith(b"\x1a\x45\xdf\xa3"):
        return "a Matroska or WebM video"
    return "a Y4M video" if data.startswith(b"YUV4MPEG2") else None


def _undecodable(data: bytes, name: str) -> str:
    kind = sniff_format(data) or (_HEIF_BRANDS.get(data[8:12]) if data[4:8] == b"ftyp" else None)
    if kind == "WEBP" and data[8:12] != b"WEBP":  # another RIFF file (a WAV sound) was "a damaged WEBP file"
        kind = None
    if kind is not None and kind not in _FILE_TYPES:  # a format people upload that okgin does not read (GIF, HEIC)
        return f"could not decode {name}: {kind} images are not read; send {SUPPORTED_FORMATS}"
    video = _video_kind(data)
    if video is not None:
        return f"could not decode {name}: it is {video}, not a picture; send {SUPPORTED_FORMATS}"
    if kind == "TIFF" and _tiff_of_floats(data):  # HDR and scientific pictures: whole, but not read
        return f"could not decode {name}: a TIFF of floating-point samples is not read; save it with 8- or 16-bit ones"
    why = f"a damaged or truncated {kind} file" if kind else f"not a {SUPPORTED_FORMATS} image"
    return f"could not decode {name}: {why}"


def _tiff_of_floats(data: bytes) -> bool:
    """Whether a TIFF's first directory says its samples are floating-point numbers (OpenCV decodes none)."""
    try:
        return _TIFF_FLOATS in _tiff_fields(data).get(_TIFF_SAMPLE_FORMAT, ())
    except (_Truncated, _DuplicateTiffField):
        return False


_MAX_PAGES_COUNTED = 1000
"""The most TIFF directories followed when counting pages: a chain that loops (or a file of thousands) is "1000"."""


def _apng_frames(data: bytes) -> int:
    """The frames an animated PNG's acTL chunk announces (it precedes the first IDAT); 1 for a still PNG."""
    offset = 8
    while offset + 8 <= len(data):
        length, kind = struct.unpack_from(">I4s", data, offset)
        if kind == b"acTL" and length >= 8:
            return max(1, _unpack(">I", data, offset + 8)[0])
        if kind in (b"IDAT", b"IEND"):
            break
        offset += 12 + length
    return 1


def _webp_frames(data: bytes) -> int:
    """The ANMF (frame) chunks of an animated WebP, whose VP8X chunk sets the animation flag; 1 for a still one."""
    if data[12:16] != b"VP8X" or len(data) < 21 or not data[20] & 0x02:
        return 1
    frames, offset = 0, 12
    while offset + 8 <= len(data):
        kind, length = data[offset : offset + 4], int.from_bytes(data[offset + 4 : offset + 8], "little")
        frames += kind == b"ANMF"
        offset += 8 + length + (length & 1)  # chunks are padded to an even length
    return max(1, frames)


def _tiff_pages(data: bytes) -> int:
    """The directories (pages) chained from a TIFF's first, each naming the next; at most ``_MAX_PAGES_COUNTED``."""
    order = "<" if data.startswith(b"II") else ">"
    pages, seen = 0, set()
    try:
        (directory,) = _unpack(order + "I", data, 4)
        while directory and directory not in seen and pages < _MAX_PAGES_COUNTED:
            seen.add(directory)
            (entries,) = _unpack(order + "H", data, directory)
            (directory,) = _unpack(order + "I", data, directory + 2 + 12 * entries)
            pages += 1
    except _Truncated:
        pass
    return max(1, pages)


def picture_notes(data: bytes) -> list[str]:
    """What a reader should be told about how these image bytes are read, where they hold more than one picture: an
    animated PNG or WebP, or a TIFF of several pages, of which OpenCV decodes the first alone. An animated picture was
    read by its first frame without a word (a blank first frame read as a table with no cards).

    >>> picture_notes(b"\\x89PNG\\r\\n\\x1a\\n" + bytes.fromhex("00000008 6163544c 00000003 00000000"))
    ['an animated PNG of 3 frames: only its first is read']
    """
    kind = sniff_format(data)
    if kind == "PNG":
        frames = _apng_frames(data)
        return [f"an animated PNG of {frames} frames: only its first is read"] if frames > 1 else []
    if kind == "WEBP":
        frames = _webp_frames(data)
        return [f"an animated WEBP of {frames} frames: only its first is read"] if frames > 1 else []
    if kind == "TIFF":
        pages = _tiff_pages(data)
        counted = f"{pages}" if pages < _MAX_PAGES_COUNTED else f"{pages} or more"
        return [f"a TIFF of {counted} pages: only its first is read"] if pages > 1 else []
    return []


MAX_PROFILE_BYTES = 16_000_000
"""The largest colour profile read (16 MB, about the most a JPEG's 255 profile segments hold): a printer's CMYK
profile takes a few MB, a camera's or a phone's RGB one under 4 KB. A larger one, or a PNG's that inflates past it,
is ignored with a note."""
_ICC_SEGMENT = b"ICC_PROFILE\0"
"""How a JPEG's APP2 segment holding a piece of a colour profile begins, before its sequence number and count."""
_ICC_SPACES = {b"RGB ": "RGB", b"GRAY": "L", b"CMYK": "CMYK"}
"""The colour spaces of the profiles converted (ICC header bytes 16-19), as Pillow names the pixels they describe."""
_SPACE_NAMES = {"RGB": "RGB", "L": "grey", "CMYK": "CMYK"}
_OTHER_SPACES = {b"XYZ ": "XYZ", b"Lab ": "Lab", b"Luv ": "Luv", b"YCbr": "YCbCr", b"Yxy ": "Yxy", b"HSV ": "HSV"}
_OTHER_SPACES |= {b"HLS ": "HLS", b"CMY ": "CMY"} | {f"{n:X}CLR".encode(): f"{n}-colour" for n in range(2, 16)}
"""The other colour spaces ICC names, which a picture's note names; a profile naming none is one not read."""
_PROFILE_ROWS_PIXELS = 1 << 20
"""Pixels converted at a time: the conversion's copies of the picture take a few MB, not as much as the picture."""


class _ProfileIgnored(Exception):
    """A colour profile that is not applied; its message is the note that says so."""


def _embedded_profile(data: bytes) -> bytes | None:
    """The ICC colour profile a JPEG (APP2 segments, joined in their sequence), PNG (iCCP, inflated) or WebP (ICCP)
    holds, or None.

    :raises _ProfileIgnored: for a profile larger than ``MAX_PROFILE_BYTES``.
    """
    kind = sniff_format(data)
    try:
        if kind == "JPEG":
            pieces = sorted(
                (data[start + 12 : start + 13], data[start + 14 : end])
                for marker, start, end in _jpeg_segments(data)
                if marker == 0xE2 and data.startswith(_ICC_SEGMENT, start) and end >= start + 14
            )
            return b"".join(piece for _, piece in pieces) if pieces else None
        if kind == "PNG":
            return _png_profile(data)
        if kind == "WEBP" and data[12:16] == b"VP8X":
            offset = 12
            while offset + 8 <= len(data):
                chunk, length = data[offset : offset + 4], int.from_bytes(data[offset + 4 : offset + 8], "little")
                if chunk == b"ICCP":
                    return data[offset + 8 : offset + 8 + length]
                offset += 8 + length + (length & 1)
    except _Truncated:  # the decoder says what is wrong with the picture
        pass
    return None


def _png_profile(data: bytes) -> bytes | None:
    """The profile of a PNG's iCCP chunk (a name, a compression method, deflated bytes), which precedes its pixels.

    :raises _ProfileIgnored: when it inflates to more than ``MAX_PROFILE_BYTES`` or is no zlib stream.
    """
    offset = 8
    while offset + 8 <= len(data):
        length, kind = _unpack(">I4s", data, offset)
        if kind == b"iCCP":
            chunk = data[offset + 8 : offset + 8 + length]
            deflated = chunk[chunk.find(b"\0") + 2 :]  # after the name's end and the compression method
            inflater = zlib.decompressobj()
            try:
                profile = inflater.decompress(deflated, MAX_PROFILE_BYTES)
            except zlib.error:
                raise _ProfileIgnored(_PROFILE_UNREAD) from None
            if inflater.unconsumed_tail:
                too_large = f"a colour profile of over {MAX_PROFILE_BYTES / 1e6:g} MB"
                raise _ProfileIgnored(f"{too_large}: its colours are read unconverted")
            return profile
        if kind in (b"IDAT", b"IEND"):
            break
        offset += 12 + length
    return None


_PROFILE_UNREAD = "a colour profile that could not be read: its colours are read unconverted"


def _stored_colours(data: bytes) -> str:
    """The colours a picture's samples are stored in, as Pillow names them: "L" (grey), "RGB" or "CMYK"."""
    kind = sniff_format(data)
    if kind == "JPEG":
        for marker, start, _ in _jpeg_segments(data):
            if marker in _JPEG_FRAMES:
                return {1: "L", 4: "CMYK"}.get(_unpack(">B", data, start + 5)[0], "RGB")
    if kind == "PNG" and data[25:26] in (b"\0", b"\4"):  # the IHDR's colour type: grey, grey and alpha
        return "L"
    return "RGB"


_PROBE = np.stack(np.meshgrid(*[np.arange(0, 256, 15, dtype=np.uint8)] * 3), axis=-1).reshape(1, -1, 3)
"""18 levels of each primary, in every mixture (5832 colours, black and white among them): a profile that moves none
of them by more than a level is sRGB's."""
_GREY_LEVELS = np.arange(256, dtype=np.uint8).reshape(1, 256)
_PILLOW_MODES = {"RGB": "RGBA", "L": "L", "CMYK": "CMYK"}
"""The Pillow mode each kind of samples is converted from: RGB as RGBA, four bytes a pixel, which Pillow reads
from and writes to an array's memory where it copies three-byte RGB."""


def _bands(image: np.ndarray) -> Iterator[slice]:
    """The picture's rows, ``_PROFILE_ROWS_PIXELS`` pixels of them at a time."""
    rows = max(1, _PROFILE_ROWS_PIXELS // image.shape[1])
    return (slice(top, top + rows) for top in range(0, image.shape[0], rows))


@dataclasses.dataclass(frozen=True)
class _ToSrgb:
    """A conversion of a picture's colours from its profile to sRGB, as the detector was trained on.

    An RGB picture's converts OpenCV's pixels, a grey picture's is a table of its 256 levels, a CMYK JPEG's converts
    the samples Pillow decodes (OpenCV converts CMYK to RGB by a formula, without the profile)."""

    stored: str
    transform: ImageCmsTransform
    """Little CMS's conversion of ``stored`` colours, in ``_PILLOW_MODES``' layout, to sRGB as RGBA."""

    @classmethod
    def from_profile(cls, profile: bytes, stored: str) -> _ToSrgb | None:
        """The conversion of ``stored`` colours described by ``profile``, or None where it is sRGB's already (it
        changes no colour by more than one level).

        :raises _ProfileIgnored: for a profile Little CMS cannot read or use, or one describing other colours than
            the picture's samples (an RGB profile of a grey JPEG, a Lab one).
        """
        from PIL import ImageCms

        space = _ICC_SPACES.get(profile[16:20])
        described = _SPACE_NAMES[space] if space else _OTHER_SPACES.get(profile[16:20])
        if described and space != stored:
            raise _ProfileIgnored(
                f"a colour profile of {described} colours, on {_SPACE_NAMES[stored]} pixels:"
                " its colours are read unconverted"
            )
        try:
            source = ImageCms.ImageCmsProfile(io.BytesIO(profile))
            srgb = ImageCms.createProfile("sRGB")
            mode, intent = _PILLOW_MODES[stored], ImageCms.Intent.RELATIVE_COLORIMETRIC
            conversion = cls(stored, ImageCms.buildTransform(source, srgb, mode, "RGBA", intent))
        except (OSError, ValueError, TypeError, ImageCms.PyCMSError):
            raise _ProfileIgnored(_PROFILE_UNREAD) from None
        if stored == "CMYK":
            return conversion
        if stored == "L":
            probe, unchanged = _GREY_LEVELS, np.repeat(_GREY_LEVELS[..., None], 3, axis=2)
        else:
            probe, unchanged = np.dstack([_PROBE, np.full(_PROBE.shape[:2], 255, np.uint8)]), _PROBE[..., ::-1]
        converted = np.empty_like(unchanged)
        conversion.convert(probe, converted)
        return None if np.abs(converted.astype(int) - unchanged).max() <= 1 else conversion

    def convert(self, samples: np.ndarray, bgr: np.ndarray) -> None:
        """Write the colours of ``samples`` (rows of them, as ``_PILLOW_MODES`` lays them out) into ``bgr`` in sRGB."""
        import cv2
        from PIL import Image

        height, width = samples.shape[:2]
        mode, rgba = self.transform.input_mode, np.empty((height, width, 4), np.uint8)
        source = Image.frombuffer(mode, (width, height), np.ascontiguousarray(samples), "raw", mode, 0, 1)
        self.transform.apply(source, Image.frombuffer("RGBA", (width, height), rgba, "raw", "RGBA", 0, 1))
        cv2.cvtColor(rgba, cv2.COLOR_RGBA2BGR, dst=bgr)

    def apply(self, image: np.ndarray) -> None:
        """Convert OpenCV's BGR ``image`` of an RGB or grey picture in place, a band of rows at a time: the copies
        take a few MB, however large the picture."""
        import cv2

        if self.stored == "L":
            table = np.empty((1, 256, 3), np.uint8)
            self.convert(_GREY_LEVELS, table)
            cv2.LUT(image, table, dst=image)  # each of OpenCV's three channels holds the level
            return
        for band in _bands(image):
            self.convert(cv2.cvtColor(image[band], cv2.COLOR_BGR2RGBA), image[band])


def _decode_cmyk(data: bytes, conversion: _ToSrgb) -> np.ndarray | None:
    """A CMYK JPEG decoded by Pillow, whose CMYK samples are converted by the profile a band at a time (a 40 MP
    picture's take 160 MB), then turned as its EXIF orientation says (as OpenCV turns what it decodes); None for one
    that Pillow cannot decode."""
    from PIL import Image

    try:
        picture = Image.open(io.BytesIO(data))
        picture.load()
    except (OSError, ValueError, Image.DecompressionBombError):
        return None
    with picture:
        if picture.mode != "CMYK":
            return None
        width, height = picture.size
        image = np.empty((height, width, 3), np.uint8)
        for band in _bands(image):
            rows = picture.crop((0, band.start, width, min(band.stop, height)))
            conversion.convert(np.asarray(rows), image[band])
        return _turned_upright(image, picture.getexif().get(_EXIF_ORIENTATION, 1))


_EXIF_ORIENTATION = 0x0112


def _turned_upright(image: np.ndarray, orientation: int) -> np.ndarray:
    """Pixels stored as a camera held under EXIF ``orientation`` (1 to 8) holds them, turned (and mirrored) upright."""
    import cv2

    turns = {
        2: lambda: cv2.flip(image, 1),
        3: lambda: cv2.rotate(image, cv2.ROTATE_180),
        4: lambda: cv2.flip(image, 0),
        5: lambda: cv2.transpose(image),
        6: lambda: cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE),
        7: lambda: cv2.rotate(cv2.transpose(image), cv2.ROTATE_180),
        8: lambda: cv2.rotate(image, cv2.ROTATE_90_COUNTERCLOCKWISE),
    }
    return turns[orientation]() if orientation in turns else image


def _decode_in_srgb(data: bytes, notes: list[str]) -> np.ndarray | None:
    """OpenCV's BGR pixels of a picture, its colours converted to sRGB where it holds another colour profile (OpenCV
    ignores profiles: a phone's Display P3 photo, a camera's Adobe RGB one, reached the detector with its reds dulled);
    None where it cannot be decoded. A profile that is not applied is ignored, with a note why."""
    import cv2

    conversion = None
    try:
        profile = _embedded_profile(data)
        if profile is not None:
            conversion = _ToSrgb.from_profile(profile, _stored_colours(data))
    except _ProfileIgnored as ignored:
        notes.append(str(ignored))
    if conversion is not None and conversion.stored == "CMYK":
        return _decode_cmyk(data, conversion)
    try:
        image = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR)
    except cv2.error:
        return None
    if image is not None and image.size and conversion is not None:
        conversion.apply(image)
    return image


@contextlib.contextmanager
def _decode_slot(name: str) -> Iterator[None]:
    """Hold one of the ``MAX_CONCURRENT_DECODES`` slots while decoding; wait among at most ``MAX_DECODES_WAITING``
    others, for at most ``DECODE_WAIT_SECONDS``."""
    busy = f"could not decode {name}: the server is busy decoding other pictures; try again in a moment"
    if not _decode_places.acquire(blocking=False):
        raise DecodersBusyError(busy)
    try:
        if not _decode_slots.acquire(timeout=DECODE_WAIT_SECONDS):
            raise DecodersBusyError(busy)
        try:
            yield
        finally:
            _decode_slots.release()
    finally:
        _decode_places.release()


def decode_image(
    data: bytes, name: str = "image", max_pixels: int = MAX_PIXELS, notes: list[str] | None = None
) -> np.ndarray:
    """Decode encoded image bytes into a BGR ``uint8`` array of shape (height, width, 3).

    Grey and alpha images are converted, so callers always get three channels. The size is
    checked from the header first (``image_size``), and at most ``MAX_CONCURRENT_DECODES``
    images decode at the same time. Colours are converted to sRGB where the picture holds another colour profile.
    Where ``notes`` is given, what the reader should be told of a picture that was read (``picture_notes``: only the
    first frame of an animation; a colour profile that could not be applied) is added to it.

    :raises ImageTooLargeError: for more than ``max_pixels`` pixels or ``MAX_DECODED_BYTES`` bytes, before decoding.
    :raises DecodersBusyError: when every slot is taken and ``MAX_DECODES_WAITING`` pictures wait already, or this
        one waited ``DECODE_WAIT_SECONDS``.
    :raises ImageError: for empty data or bytes OpenCV cannot decode, naming ``name``.
    """
    if not data:
        raise ImageError(f"{name} is empty (0 bytes)")
    width, height = image_size(data, name, max_pixels)
    colour_notes: list[str] = []
    with _decode_slot(name):
        image = _decode_in_srgb(data, colour_notes)
    if image is None or image.size == 0:
        raise ImageError(_undecodable(data, name))
    if sorted(image.shape[:2]) != sorted((width, height)):  # EXIF orientation may swap the sides
        raise ImageError(f"could not decode {name}: its header says {width}x{height}, its pixels do not")
    if notes is not None:
        notes += picture_notes(data) + colour_notes
    return image


_DECODER_ADDRESS = re.compile(r"^\[[^]]* @ 0x[0-9a-f]+\] ")
"""FFmpeg's prefix to a line (``[http @ 0x55b0...] ``): the part of it that names a place in memory."""


@contextlib.contextmanager
def decoder_output() -> Iterator[list[str]]:
    """The lines C libraries print on stderr while the block runs (libpng, libjpeg, FFmpeg: "libpng error: IDAT: CRC
    error", "[mov,mp4 @ 0x55...] moov atom not found"), given in the list once it ends instead of printed beside
    okgin's own message; FFmpeg's memory addresses left out. The caller prints them, or what they say, as it decides.

    It takes the process's stderr (file descriptor 2) for the block: for a command's own reads, before its threads
    start, never a server's, whose other threads' lines it would take too.
    """
    lines: list[str] = []
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to take: nothing is printed on it either
        yield lines
        return
    try:
        with tempfile.TemporaryFile() as said:
            os.dup2(said.fileno(), 2)
            try:
                yield lines
            finally:
                os.dup2(saved, 2)
                said.seek(0)
                text = said.read().decode("utf-8", "replace")
                lines += [_DECODER_ADDRESS.sub("", line).strip() for line in text.splitlines() if line.strip()]
    finally:
        os.close(saved)


def write_image(path: str | Path, image: np.ndarray) -> Path:
    """Write a BGR array as the kind of picture its file name's suffix names (``.jpg``, ``.png`` ...).

    The picture is encoded by OpenCV and written by Python: ``cv2.imwrite`` takes the name as UTF-8 text, and a
    name that is none (a Linux file name's stray bytes, which Python holds as surrogates) crashed the whole
    process with a segmentation fault (``okgin detect --annotate``, ``okgin eval --plots``).

    :raises OSError: naming the file, when it cannot be written or its suffix names no format OpenCV writes.
    """
    import cv2

    target = Path(path)
    try:
        encoded, data = cv2.imencode(target.suffix, image)
    except cv2.error:
        encoded = False
    if not encoded:
        raise OSError(errno.EINVAL, f"its suffix {target.suffix!r} names no picture format OpenCV writes", str(target))
    target.write_bytes(data.tobytes())
    return target


def load_image(path: str | Path, max_pixels: int = MAX_PIXELS, notes: list[str] | None = None) -> np.ndarray:
    """Read an image file into a BGR array; ``notes`` as ``decode_image`` takes them.

    :raises ImageTooLargeError: when the file or its pixel count is beyond what okgin reads.
    :raises ImageError: when the file is missing, is a directory, is unreadable or is not an image.
    """
    file = Path(path)
    try:
        data = read_regular_file(file, MAX_FILE_BYTES)
    except FileTooLargeError as error:
        size, limit = error.size // 1024**2, MAX_FILE_BYTES // 1024**2
        too_large = f"image {str(file)!r} is {size} MB: okgin reads image files up to {limit} MB"
        raise ImageTooLargeError(too_large) from None
    except FileNotFoundError:
        raise ImageError(f"image {str(file)!r} does not exist") from None
    except IsADirectoryError:
        raise ImageError(f"image {str(file)!r} {why_not_a_file(file)}") from None
    except OSError as error:
        raise ImageError(f"could not read image {str(file)!r}: {error.strerror or error}") from None
    return decode_image(data, name=f"image {str(file)!r}", max_pixels=max_pixels, notes=notes)
