"""Pictures are measured from their header before decoding: a small file claiming a huge picture is
refused without spending the memory, and only a few decode at once."""

from __future__ import annotations

import re
import struct
import threading
import time
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from scorer.vision import images
from scorer.vision.images import ImageError, ImageTooLargeError, decode_image, image_size, load_image


def png_claiming(width: int, height: int) -> bytes:
    """A valid PNG header for a ``width`` x ``height`` RGB picture, with almost no pixel data behind it."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")
    )


def encoded(width: int, height: int, extension: str) -> bytes:
    ok, data = cv2.imencode(extension, np.full((height, width, 3), 90, np.uint8))
    assert ok
    return data.tobytes()


@pytest.mark.parametrize("extension", [".png", ".jpg", ".webp", ".bmp", ".tiff"])
def test_the_size_comes_from_the_header(extension: str) -> None:
    assert image_size(encoded(64, 48, extension)) == (64, 48)
    assert decode_image(encoded(64, 48, extension)).shape == (48, 64, 3)


@pytest.mark.parametrize(
    ("width", "height", "message"),
    [
        (6000, 7000, "is 6000x7000 (42.0 MP): okgin reads images up to 40.0 MP"),
        (20000, 20000, "is 400.0 MP: okgin reads images up to 40.0 MP"),  # Pillow gives no sides past 179 MP
        (30000, 30000, "is 900.0 MP: okgin reads images up to 40.0 MP"),
        (100000, 100000, "is 10000.0 MP: okgin reads images up to 40.0 MP"),  # past OpenCV's own limit: once a 500
    ],
)
def test_a_decompression_bomb_is_refused_before_decoding(width: int, height: int, message: str) -> None:
    bomb = png_claiming(width, height)
    assert len(bomb) < 200
    started = time.perf_counter()
    with pytest.raises(ImageTooLargeError, match=re.escape(f"upload {message}")):
        decode_image(bomb, "upload")
    assert time.perf_counter() - started < 5  # nowhere near the seconds a 400 MP decode takes


def test_the_budget_is_a_parameter() -> None:
    data = encoded(100, 100, ".png")
    assert decode_image(data, max_pixels=10_000).shape == (100, 100, 3)
    with pytest.raises(ImageTooLargeError, match="100x100"):
        decode_image(data, max_pixels=9_999)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "is empty"),
        (b"hello, not a picture", "not a JPEG, PNG, BMP, WEBP or TIFF image"),
        (b"\x89PNG\r\n\x1a\n" + b"\0" * 40, "a damaged or truncated PNG file"),
        (encoded(64, 48, ".jpg")[:300], "a damaged or truncated JPEG file"),
    ],
)
def test_what_is_not_a_picture_is_named(data: bytes, message: str) -> None:
    with pytest.raises(ImageError, match=message):
        decode_image(data)


def test_load_image_refuses_a_huge_file_without_reading_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "huge.jpg"
    path.write_bytes(encoded(64, 48, ".jpg"))
    monkeypatch.setattr(images, "MAX_FILE_BYTES", 100)
    with pytest.raises(ImageTooLargeError, match=re.escape("huge.jpg' is 0 MB: okgin reads image files up to 0 MB")):
        load_image(path)


def test_no_more_than_two_pictures_decode_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    running, most = 0, 0
    lock = threading.Lock()
    real_imdecode = cv2.imdecode

    def slow_imdecode(buffer: np.ndarray, flags: int) -> np.ndarray:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.05)
        with lock:
            running -= 1
        return real_imdecode(buffer, flags)

    monkeypatch.setattr(cv2, "imdecode", slow_imdecode)
    data = encoded(32, 32, ".png")
    threads = [threading.Thread(target=decode_image, args=(data,)) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most == images.MAX_CONCURRENT_DECODES == 2


def test_junk_is_named_even_after_ultralytics_wrapped_pillow(monkeypatch: pytest.MonkeyPatch) -> None:
    from PIL import Image

    real_open = Image.open

    def wrapped(*args: object, **kwargs: object) -> object:  # what ultralytics' patch does without pi-heif
        try:
            return real_open(*args, **kwargs)  # type: ignore[arg-type]
        except Image.UnidentifiedImageError:
            raise ModuleNotFoundError("No module named 'pi_heif'") from None

    monkeypatch.setattr(Image, "open", wrapped)
    with pytest.raises(ImageError, match="not a JPEG, PNG, BMP, WEBP or TIFF image"):
        decode_image(b"junk")
