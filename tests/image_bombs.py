"""Decompression bombs: small files that claim, or cost, far more than they weigh once decoded.

Shared by the tests (``test_images``, ``test_web_bad_input``, ``test_cli_errors``) and the abuse benchmark
(``benchmarks/bench_abuse.py``), so each bomb is built one way wherever it is thrown.
"""

from __future__ import annotations

import struct
import zlib

import cv2
import numpy as np


def png_claiming(width: int, height: int, body_bytes: int = 0) -> bytes:
    """A valid PNG header for a ``width`` x ``height`` RGB picture, with about ``body_bytes`` of its compressed rows
    of zeros behind it (what a real bomb carries; a few bytes by default).

    >>> len(png_claiming(20000, 20000)) < 100, len(png_claiming(20000, 20000, body_bytes=1000)) > 1000
    (True, True)
    """

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    compressor, rows, left = zlib.compressobj(9), b"", (width * 3 + 1) * height
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


def tiff_in_one_tile(tile: int) -> bytes:
    """A 2x2 grey TIFF stored in one ``tile`` x ``tile`` tile, uncompressed and cut short (only the header matters)."""
    entries = [(256, 4, 2), (257, 4, 2), (258, 3, 8), (259, 3, 1), (262, 3, 1), (277, 3, 1)]
    entries += [(322, 4, tile), (323, 4, tile), (324, 4, 200), (325, 4, tile * tile)]
    directory = struct.pack("<H", len(entries)) + b"".join(
        struct.pack("<HHI", tag, kind, 1)
        + struct.pack("<I" if kind == 4 else "<HH", value, *([0] if kind == 3 else []))
        for tag, kind, value in entries
    )
    return b"II*\x00" + struct.pack("<I", 8) + directory + b"\0" * 64
