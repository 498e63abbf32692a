"""Decompression bombs: small files that claim, or cost, far more than they weigh once decoded.

Shared by the tests (``test_images``, ``test_web_bad_input``, ``test_cli_errors``) and the abuse benchmark
(``benchmarks/bench_abuse.py``), so each bomb is built one way wherever it is thrown.
"""

from __future__ import annotations

import struct
import zlib

import cv2
import numpy as np

PNG_SAMPLES = {0: 1, 2: 3, 4: 2, 6: 4}
"""Samples per pixel of the PNG colour types: grey, RGB, grey and alpha, RGBA."""


def png_claiming(width: int, height: int, body_bytes: int = 0, depth: int = 8, colour: int = 2) -> bytes:
    """A valid PNG header for a ``width`` x ``height`` picture of ``depth``-bit samples (RGB unless ``colour`` names
    another colour type), with about ``body_bytes`` of its compressed rows of zeros behind it (what a real bomb
    carries; a few bytes by default).

    >>> len(png_claiming(20000, 20000)) < 100, len(png_claiming(20000, 20000, body_bytes=1000)) > 1000
    (True, True)
    """

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    compressor, rows, left = zlib.compressobj(9), b"", (width * PNG_SAMPLES[colour] * depth // 8 + 1) * height
    zeros = b"\0" * 2**20
    while left > 0 and len(rows) < body_bytes:
        rows += compressor.compress(zeros[: min(left, len(zeros))])
        left -= len(zeros)
    rows += compressor.flush()
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")


def jpeg_segments(data: bytes) -> list[bytes]:
    """The segments of a JPEG after its start marker, up to and including the first scan (with its data)."""
    segments, offset = [], 2
    while data[offset + 1] != 0xDA:
        length = int.from_bytes(data[offset + 2 : offset + 4], "big")
        segments.append(data[offset : offset + 2 + length])
        offset += 2 + length
    return [*segments, data[offset:]]


def jpeg_hiding_its_frame(width: int, height: int) -> bytes:
    """An 8x8 JPEG whose frame header libjpeg reads says ``width`` x ``height``: it follows 0xFF 0x00, which libjpeg
    skips as stray bytes, and whose next two bytes a reader taking it for a segment reads as a length that jumps to
    the 8x8 frame header inside an APP1 segment (which libjpeg skips)."""
    ok, small_jpeg = cv2.imencode(".jpg", np.full((8, 8, 3), 90, np.uint8))
    assert ok
    segments = jpeg_segments(small_jpeg.tobytes())
    small = next(segment for segment in segments if segment[1] == 0xC0)
    large = small[:5] + struct.pack(">HH", height, width) + small[9:]
    app1 = b"\xff\xe1" + (len(small) + 8).to_bytes(2, "big") + b"Exif\0\0"
    hidden = large + app1
    rest = b"".join(segment for segment in segments if segment[1] != 0xC0)
    return b"\xff\xd8\xff\x00" + (len(hidden) + 2).to_bytes(2, "big") + hidden + small + rest


def jpeg_claiming(width: int, height: int, precision: int = 8) -> bytes:
    """An 8x8 colour JPEG whose frame header says ``width`` x ``height`` of ``precision``-bit samples (a 12-bit one is
    an extended-sequential frame, as libjpeg writes it)."""
    ok, small_jpeg = cv2.imencode(".jpg", np.full((8, 8, 3), 90, np.uint8))
    assert ok
    segments = jpeg_segments(small_jpeg.tobytes())
    marker = b"\xff\xc0" if precision == 8 else b"\xff\xc1"
    frames = [
        marker + segment[2:4] + bytes([precision]) + struct.pack(">HH", height, width) + segment[9:]
        if segment[1] == 0xC0
        else segment
        for segment in segments
    ]
    return b"\xff\xd8" + b"".join(frames)


def progressive_jpeg(scans: int, side: int = 6000) -> bytes:
    """A grey ``side`` x ``side`` progressive JPEG of ``scans`` scans holding (almost) no data: a few bytes each
    (for its header only: the Huffman tables of the AC scans are left out)."""
    grey = np.random.default_rng(0).integers(0, 255, (64, 64), np.uint8)
    ok, data = cv2.imencode(".jpg", grey, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
    assert ok
    segments = jpeg_segments(data.tobytes())
    frame = next(segment for segment in segments if segment[1] == 0xC2)
    frame = frame[:5] + struct.pack(">HH", side, side) + frame[9:]
    tables = b"".join(segment for segment in segments if segment[1] in (0xDB, 0xC4))
    component = frame[10]
    dc = b"\xff\xda\x00\x08\x01" + bytes([component, 0x00, 0, 0, 0x00]) + b"\x00"
    ac = b"\xff\xda\x00\x08\x01" + bytes([component, 0x00, 1, 63, 0x00]) + b"\x00"
    return b"\xff\xd8" + tables + frame + dc + ac * (scans - 1) + b"\xff\xd9"


_TIFF_BYTE, _TIFF_SHORT, _TIFF_LONG = 1, 3, 4


def tiff_file(fields: dict[int, tuple[int, int | tuple[int, ...]]], body: bytes = b"") -> bytes:
    """A little-endian TIFF of one directory: ``fields`` maps each tag to (its kind, BYTE, SHORT or LONG, and its
    value or values), ``body`` follows the directory and its out-of-line values (tag 273, the strip offsets, is set
    to point at it when present).

    >>> len(tiff_file({256: (4, 2), 257: (4, 2)}))  # the header, two entries, the end of the directory chain
    38
    """
    entries = sorted(
        (tag, kind, value if isinstance(value, tuple) else (value,)) for tag, (kind, value) in fields.items()
    )
    directory_end = 8 + 2 + 12 * len(entries) + 4
    code = {_TIFF_BYTE: "B", _TIFF_SHORT: "H", _TIFF_LONG: "I"}
    packed = {tag: struct.pack(f"<{len(values)}{code[kind]}", *values) for tag, kind, values in entries}
    outside = {tag: data for tag, data in packed.items() if len(data) > 4}
    body_at = directory_end + sum(map(len, outside.values()))
    if 273 in packed:  # one strip: its offset fits the entry
        packed[273] = struct.pack("<I", body_at)
    directory, at = struct.pack("<H", len(entries)), directory_end
    for tag, kind, values in entries:
        if tag in outside:
            directory += struct.pack("<HHII", tag, kind, len(values), at)
            at += len(outside[tag])
        else:
            directory += struct.pack("<HHI", tag, kind, len(values)) + packed[tag].ljust(4, b"\0")
    return b"II*\x00" + struct.pack("<I", 8) + directory + b"\0" * 4 + b"".join(outside.values()) + body


def tiff_in_one_tile(tile: int, bits: int = 8, samples: int = 1) -> bytes:
    """A 2x2 TIFF (grey, or RGB and alpha) stored in one ``tile`` x ``tile`` tile, uncompressed and cut short (only
    the header matters)."""
    fields = {256: (_TIFF_LONG, 2), 257: (_TIFF_LONG, 2), 258: (_TIFF_SHORT, (bits,) * samples), 259: (_TIFF_SHORT, 1)}
    fields |= {262: (_TIFF_SHORT, 2 if samples >= 3 else 1), 277: (_TIFF_SHORT, samples)}
    fields |= {322: (_TIFF_LONG, tile), 323: (_TIFF_LONG, tile)}
    fields |= {324: (_TIFF_LONG, 200), 325: (_TIFF_LONG, tile * tile)}
    return tiff_file(fields, b"\0" * 64)


def tiff_of_zeros(width: int, height: int, bits: int = 16, samples: int = 4, whole: bool = False) -> bytes:
    """A ``width`` x ``height`` TIFF of ``samples`` samples (RGB, then alpha) of ``bits`` bits each, in one
    deflated strip of zeros: whole (a 40 MP 16-bit RGBA one is 0.3 MB, and decodes into a 320 MB strip buffer), or
    cut short after its first bytes (only the header matters to a check before decoding)."""
    return tiff_file(*_zeros_in_one_strip(width, height, bits, samples, whole))


def _zeros_in_one_strip(
    width: int, height: int, bits: int, samples: int, whole: bool
) -> tuple[dict[int, tuple[int, int | tuple[int, ...]]], bytes]:
    """``tiff_of_zeros``' fields and strip."""
    row = b"\0" * (width * samples * bits // 8)
    compressor = zlib.compressobj(9)
    strip = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush() if whole else b"\0" * 64
    fields = {256: (_TIFF_LONG, width), 257: (_TIFF_LONG, height), 258: (_TIFF_SHORT, (bits,) * samples)}
    fields |= {259: (_TIFF_SHORT, 8), 262: (_TIFF_SHORT, 2 if samples >= 3 else 1), 273: (_TIFF_LONG, 0)}
    fields |= {277: (_TIFF_SHORT, samples), 278: (_TIFF_LONG, height), 279: (_TIFF_LONG, len(strip))}
    fields |= {284: (_TIFF_SHORT, 1)} | ({338: (_TIFF_SHORT, 2)} if samples in (2, 4) else {})
    return fields, strip


def tiff_naming_twice(tag: int, whole: bool = False) -> bytes:
    """``tiff_of_zeros``' 7000x7000 16-bit RGBA picture (392 MB of samples) whose directory names its width (tag
    256) or bits per sample (258) a second time, last, as 60 px or 8 bits: libtiff decodes the first entry, a header
    reader keeping the last would be told a small picture (in session 43's probe such a file of 303 KB took 517 MiB to
    decode)."""
    fields, strip = _zeros_in_one_strip(7000, 7000, 16, 4, whole)
    later = {256: (_TIFF_LONG, 60), 258: (_TIFF_SHORT, (8, 8, 8, 8))}[tag]
    header = tiff_file({**fields, 65000: later}, strip)  # the entry after the others, then named as one of them
    entry = header.index(struct.pack("<HH", 65000, later[0]))
    return header[:entry] + struct.pack("<H", tag) + header[entry + 2 :]
