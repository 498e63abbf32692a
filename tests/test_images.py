"""Pictures are measured from their header before decoding: a small file claiming a huge picture is
refused without spending the memory, and only a few decode at once."""

from __future__ import annotations

import io
import re
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import cv2
import numpy as np
import pytest
from conftest import in_a_child_process, not_utf8
from hypothesis import given, settings
from hypothesis import strategies as st
from image_bombs import (
    jpeg_claiming,
    jpeg_hiding_its_frame,
    png_claiming,
    progressive_jpeg,
    tiff_file,
    tiff_in_one_tile,
    tiff_naming_twice,
    tiff_of_zeros,
)
from PIL import Image, ImageCms

from scorer.vision import images
from scorer.vision.images import (
    DecodersBusyError,
    ImageError,
    ImageTooLargeError,
    decode_image,
    image_size,
    load_image,
)


def encoded(width: int, height: int, extension: str) -> bytes:
    ok, data = cv2.imencode(extension, np.full((height, width, 3), 90, np.uint8))
    assert ok
    return data.tobytes()


@pytest.mark.parametrize(
    ("extension", "channels", "flags"),
    [
        (".png", 3, []),
        (".png", 1, []),  # grey
        (".png", 4, []),  # with alpha
        (".jpg", 3, []),
        (".jpg", 3, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1]),
        (".jpg", 1, []),
        (".webp", 3, [cv2.IMWRITE_WEBP_QUALITY, 80]),  # lossy: VP8
        (".webp", 3, [cv2.IMWRITE_WEBP_QUALITY, 101]),  # lossless: VP8L
        (".webp", 4, [cv2.IMWRITE_WEBP_QUALITY, 80]),  # lossy with alpha: VP8X
        (".bmp", 3, []),
        (".tiff", 3, []),
        (".tiff", 1, []),
    ],
)
def test_the_size_comes_from_the_header(extension: str, channels: int, flags: list[int]) -> None:
    pixels = np.full((48, 64, channels) if channels > 1 else (48, 64), 90, np.uint8)
    ok, data = cv2.imencode(extension, pixels, flags)
    assert ok
    assert image_size(data.tobytes()) == (64, 48)
    assert decode_image(data.tobytes()).shape == (48, 64, 3)


def test_a_jpeg_with_a_thumbnail_is_measured_by_its_own_frame() -> None:
    photo, thumbnail = encoded(640, 480, ".jpg"), encoded(32, 24, ".jpg")
    app1 = b"Exif\0\0" + thumbnail  # an APP1 segment holding a whole smaller JPEG
    segment = b"\xff\xe1" + (len(app1) + 2).to_bytes(2, "big") + app1
    assert image_size(photo[:2] + segment + photo[2:]) == (640, 480)


def test_a_top_down_bmp_is_measured() -> None:
    data = bytearray(encoded(64, 48, ".bmp"))
    data[22:26] = (-48).to_bytes(4, "little", signed=True)
    assert image_size(bytes(data)) == (64, 48)


@pytest.mark.parametrize("extension", [".png", ".jpg", ".webp", ".bmp", ".tiff"])
def test_a_header_cut_short_is_named(extension: str) -> None:
    whole = encoded(64, 48, extension)
    for cut in (12, 20):
        with pytest.raises(ImageError, match="could not decode image: a damaged or truncated"):
            image_size(whole[:cut])


@given(
    data=st.binary(max_size=64),
    kind=st.sampled_from([b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"RIFF", b"BM", b"II*\x00", b"MM\x00*"]),
)
@settings(max_examples=300, derandomize=True, deadline=None)
def test_any_bytes_after_a_signature_are_measured_or_named(data: bytes, kind: bytes) -> None:
    header = kind + data if kind != b"RIFF" else kind + data[:4] + b"WEBP" + data[4:]
    try:
        width, height = image_size(header)
    except ImageError:
        return
    assert width > 0 and height > 0


@pytest.mark.parametrize(
    ("width", "height", "message"),
    [
        (6000, 7000, "is 6000x7000 (42.0 MP): okgin reads images up to 40.0 MP"),
        (20000, 20000, "is 20000x20000 (400.0 MP): okgin reads images up to 40.0 MP"),
        (30000, 30000, "is 30000x30000 (900.0 MP): okgin reads images up to 40.0 MP"),
        (100000, 100000, "is 100000x100000 (10000.0 MP): okgin reads images up to 40.0 MP"),  # past OpenCV's limit
    ],
)
def test_a_decompression_bomb_is_refused_before_decoding(width: int, height: int, message: str) -> None:
    bomb = png_claiming(width, height)
    assert len(bomb) < 200
    started = time.perf_counter()
    with pytest.raises(ImageTooLargeError, match=re.escape(f"upload {message}")):
        decode_image(bomb, "upload")
    assert time.perf_counter() - started < 5  # nowhere near the seconds a 400 MP decode takes


def test_a_frame_header_behind_stray_bytes_is_the_one_measured() -> None:
    bomb = jpeg_hiding_its_frame(16000, 16000)  # 644 bytes; libjpeg decoded it into 1.6 GB in 9 s
    assert len(bomb) < 1000
    with pytest.raises(ImageTooLargeError, match=re.escape("upload is 16000x16000 (256.0 MP)")):
        image_size(bomb, "upload")


def test_stray_bytes_and_short_lengths_are_skipped_as_libjpeg_skips_them() -> None:
    photo = encoded(64, 48, ".jpg")
    first = 4 + int.from_bytes(photo[4:6], "big")  # after the first segment
    stray = photo[:first] + b"\x00\x17\xff\x00" + photo[first:]  # libjpeg warns of "extraneous bytes", decodes it
    assert image_size(stray) == (64, 48)
    assert decode_image(stray).shape == (48, 64, 3)
    short = photo[:first] + b"\xff\xfe\x00\x01" + photo[first:]  # a comment whose length counts less than itself
    assert image_size(short) == (64, 48)


def test_a_tiff_whose_tiles_are_a_bomb_is_refused_before_decoding() -> None:
    # a 2x2 picture in one 11008x11008 tile, deflated to 0.9 MB, took 1 GB and 4 s to decode
    with pytest.raises(ImageTooLargeError, match=re.escape("upload is stored in tiles of 11008x11008 (121.2 MP)")):
        image_size(tiff_in_one_tile(11008), "upload")
    assert image_size(tiff_in_one_tile(256)) == (2, 2)  # tiles larger than a small picture are common


@pytest.mark.parametrize(
    ("bomb", "message"),
    [
        # 0.3 MB deflated, and 460 MiB to decode (one 320 MB strip), against 306 MiB for 8-bit RGBA of 40 MP
        (tiff_of_zeros(7300, 5479, bits=16, samples=4), "upload is 7300x5479 of 64 bits a pixel (320 MB decoded)"),
        (tiff_of_zeros(7300, 5479, bits=16, samples=3), "upload is 7300x5479 of 48 bits a pixel (240 MB decoded)"),
        (tiff_of_zeros(5000, 5000, bits=32, samples=3), "upload is 5000x5000 of 96 bits a pixel (300 MB decoded)"),
        (png_claiming(7300, 5479, depth=16, colour=6), "upload is 7300x5479 of 64 bits a pixel (320 MB decoded)"),
        (png_claiming(7300, 5479, depth=16, colour=2), "upload is 7300x5479 of 48 bits a pixel (240 MB decoded)"),
        (jpeg_claiming(7300, 5479, precision=12), "upload is 7300x5479 of 48 bits a pixel (240 MB decoded)"),
        (
            tiff_in_one_tile(6000, bits=16, samples=4),
            "upload is stored in tiles of 6000x6000 of 64 bits a pixel (288 MB decoded), each decoded whole",
        ),
    ],
    ids=[
        "tiff-16-bit-rgba",
        "tiff-16-bit-rgb",
        "tiff-32-bit-rgb",
        "png-16-bit-rgba",
        "png-16-bit-rgb",
        "jpeg-12-bit-rgb",
        "tiff-tile",
    ],
)
def test_a_picture_of_wide_samples_is_refused_by_its_decoded_bytes(bomb: bytes, message: str) -> None:
    with pytest.raises(ImageTooLargeError, match=re.escape(message)) as refused:
        decode_image(bomb, "upload")
    assert str(refused.value).endswith(": okgin decodes images of up to 160 MB (40.0 MP of 8-bit RGBA)")


@pytest.mark.parametrize(
    "header",
    [
        tiff_of_zeros(7300, 5479, bits=8, samples=3),  # an ordinary photo of 40 MP, with alpha or without
        tiff_of_zeros(7300, 5479, bits=8, samples=4),
        png_claiming(7300, 5479, depth=8, colour=6),
        png_claiming(5160, 3875, depth=16, colour=6),  # 20 MP of 16-bit RGBA: 230 MiB to decode
        tiff_of_zeros(5160, 3875, bits=16, samples=4),
        tiff_in_one_tile(4096, bits=16, samples=4),
        jpeg_claiming(7300, 5479),
        jpeg_claiming(4000, 3000, precision=12),  # 12 MP of 12-bit RGB: 144 MB
    ],
    ids=[
        "tiff-8-bit-rgb",
        "tiff-8-bit-rgba",
        "png-8-bit-rgba",
        "png-16-bit-20-mp",
        "tiff-16-bit-20-mp",
        "tiff-tile",
        "jpeg-8-bit-40-mp",
        "jpeg-12-bit-12-mp",
    ],
)
def test_pictures_within_the_byte_budget_are_measured(header: bytes) -> None:
    assert image_size(header) > (1, 1)


@pytest.mark.parametrize(("extension", "channels"), [(".png", 4), (".png", 3), (".tiff", 4), (".tiff", 1)])
def test_the_bits_of_a_written_16_bit_picture_are_read(
    extension: str, channels: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    pixels = np.full((48, 64, channels), 9000, np.uint16)
    data = cv2.imencode(extension, pixels if channels > 1 else pixels[:, :, 0])[1].tobytes()
    assert decode_image(data).shape == (48, 64, 3)
    monkeypatch.setattr(images, "MAX_DECODED_BYTES", 48 * 64 * channels * 2 - 1)  # one byte short of its samples
    with pytest.raises(ImageTooLargeError, match=f"is 64x48 of {16 * channels} bits a pixel"):
        decode_image(data)


def test_a_jpeg_of_thousands_of_scans_is_refused_before_decoding() -> None:
    bomb = progressive_jpeg(2000)  # 22 KB that took 11 s to decode: each scan passes over all 36 MP
    assert len(bomb) < 30_000
    started = time.perf_counter()
    with pytest.raises(ImageError, match="it holds 2000 scans, each a pass over every pixel; okgin reads JPEGs of up"):
        decode_image(bomb, "upload")
    assert time.perf_counter() - started < 1
    progressive = cv2.imencode(".jpg", np.full((48, 64, 3), 90, np.uint8), [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])[1]
    assert decode_image(progressive.tobytes()).shape == (48, 64, 3)  # libjpeg's own progression: 10 scans


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
        # a phone's photos: said to be no picture at all
        (b"\0\0\0\x18ftypheic\0\0\0\0mif1heic" + b"\0" * 64, "HEIC images are not read; send JPEG, PNG"),
        (b"\0\0\0\x1cftypavif\0\0\0\0avifmif1miaf" + b"\0" * 64, "AVIF images are not read"),
        (b"GIF89a" + b"\0" * 64, "GIF images are not read"),
        # a clip where a photo is wanted: said to be no picture at all
        (b"\0\0\0\x18ftypmp42\0\0\0\0isommp42" + b"\0" * 64, "it is an MP4 or QuickTime video, not a picture; send"),
        (b"YUV4MPEG2 W640 H480 F30:1 Ip A1:1 C420jpeg\nFRAME\n", "it is a Y4M video, not a picture"),
        (b"RIFF\0\0\0\0AVI LIST" + b"\0" * 64, "it is an AVI video, not a picture"),
        (b"\x1a\x45\xdf\xa3" + b"\0" * 64, "it is a Matroska or WebM video, not a picture"),
        (b"RIFF\0\0\0\0WAVEfmt " + b"\0" * 64, "could not decode image: not a JPEG, PNG, BMP, WEBP or TIFF image"),
        # whole, but of 32-bit float samples (HDR, scientific): not "damaged or truncated"
        (cv2.imencode(".tiff", np.ones((20, 30, 3), np.float32))[1].tobytes(), "a TIFF of floating-point samples"),
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


@pytest.fixture
def decoders_busy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Both decoding slots held (by two uploads that take their time), a short wait for one."""
    slots = threading.BoundedSemaphore(images.MAX_CONCURRENT_DECODES)
    places = threading.BoundedSemaphore(images.MAX_CONCURRENT_DECODES + images.MAX_DECODES_WAITING)
    monkeypatch.setattr(images, "_decode_slots", slots)
    monkeypatch.setattr(images, "_decode_places", places)
    monkeypatch.setattr(images, "DECODE_WAIT_SECONDS", 0.2)
    for _ in range(images.MAX_CONCURRENT_DECODES):
        places.acquire()
        slots.acquire()
    yield
    for _ in range(images.MAX_CONCURRENT_DECODES):
        slots.release()
        places.release()


def test_a_picture_waits_for_a_decoding_slot_only_so_long(decoders_busy: None) -> None:
    outcome: list[BaseException] = []

    def upload() -> None:
        try:
            decode_image(encoded(32, 32, ".png"), "upload")
        except ImageError as error:
            outcome.append(error)

    waiting = threading.Thread(target=upload, daemon=True)  # it once waited for ever, holding a server thread
    waiting.start()
    waiting.join(5)
    assert not waiting.is_alive()
    assert [type(error) for error in outcome] == [DecodersBusyError]
    assert (
        str(outcome[0]) == "could not decode upload: the server is busy decoding other pictures; try again in a moment"
    )


def test_pictures_beyond_those_waiting_for_a_slot_are_refused_at_once(
    decoders_busy: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(images, "DECODE_WAIT_SECONDS", 5.0)
    data = encoded(32, 32, ".png")
    waiting = [threading.Thread(target=decode_image, args=(data,)) for _ in range(images.MAX_DECODES_WAITING)]
    for thread in waiting:
        thread.start()
    time.sleep(0.2)  # each now waits for a slot
    started = time.perf_counter()
    with pytest.raises(DecodersBusyError, match="busy decoding other pictures"):
        decode_image(data)
    assert time.perf_counter() - started < 2  # not the 5 s the waiting ones may wait
    images._decode_slots.release()  # one upload finishes: the waiting ones decode in turn
    for thread in waiting:
        thread.join(5)
    images._decode_slots.acquire()
    assert not any(thread.is_alive() for thread in waiting)


@pytest.mark.parametrize(("tag", "what"), [(256, "width"), (258, "bits per sample")], ids=["width", "bits"])
def test_a_tiff_giving_a_size_twice_is_refused_before_decoding(tag: int, what: str) -> None:
    """libtiff takes a directory's first entry of a tag: a header read by its last was told 60 px where 7000 are
    decoded, or 8 bits a sample where 16 are (a 303 KB file then took 517 MiB)."""
    with pytest.raises(ImageError, match=f"gives its {what} twice"):
        image_size(tiff_naming_twice(tag), "upload", max_pixels=1_000_000_000)


def test_tiff_sizes_in_bytes_are_read() -> None:
    header = tiff_file({256: (1, 200), 257: (1, 100), 258: (1, 8), 277: (1, 3)})  # all BYTEs
    assert image_size(header) == (200, 100)


def test_a_picture_is_written_under_any_name_and_a_suffix_that_is_no_format_named(tmp_path: Path) -> None:
    """``cv2.imwrite`` died of a segmentation fault on a name whose bytes are no UTF-8 (``okgin detect --annotate``)."""
    picture = np.full((8, 8, 3), 200, np.uint8)
    target = not_utf8(tmp_path, "boxed.jpg")

    def write() -> None:
        images.write_image(target, picture)

    in_a_child_process(write)
    assert decode_image(target.read_bytes()).shape == (8, 8, 3)
    with pytest.raises(OSError, match=r"its suffix '\.txt' names no picture format") as error:
        images.write_image(tmp_path / "boxed.txt", picture)
    assert error.value.filename == str(tmp_path / "boxed.txt")


# --- pictures as phones and editors save them ---------------------------------------------------------------------


def quadrants(width: int = 96, height: int = 64) -> np.ndarray:
    """A picture whose every turn and mirror image differs from it: four quadrants of four colours."""
    picture = np.zeros((height, width, 3), np.uint8)
    picture[: height // 2, : width // 2] = (0, 0, 255)
    picture[: height // 2, width // 2 :] = (0, 255, 0)
    picture[height // 2 :, : width // 2] = (255, 0, 0)
    picture[height // 2 :, width // 2 :] = (255, 255, 255)
    return picture


STORED_FROM_UPRIGHT = {
    1: lambda upright: upright,
    2: lambda upright: cv2.flip(upright, 1),
    3: lambda upright: cv2.rotate(upright, cv2.ROTATE_180),
    4: lambda upright: cv2.flip(upright, 0),
    5: lambda upright: cv2.transpose(upright),
    6: lambda upright: cv2.rotate(upright, cv2.ROTATE_90_COUNTERCLOCKWISE),
    7: lambda upright: cv2.rotate(cv2.transpose(upright), cv2.ROTATE_180),
    8: lambda upright: cv2.rotate(upright, cv2.ROTATE_90_CLOCKWISE),
}
"""The pixels a camera stores for an upright picture under each EXIF orientation (TIFF tag 274's eight values):
the orientation says how to turn (and mirror) them back."""


def with_segment(jpeg: bytes, marker: int, body: bytes) -> bytes:
    """``jpeg`` with one more segment right after its start marker, where a phone writes its EXIF and profile."""
    return jpeg[:2] + bytes([0xFF, marker]) + struct.pack(">H", len(body) + 2) + body + jpeg[2:]


def with_orientation(jpeg: bytes, orientation: int) -> bytes:
    """``jpeg`` with an EXIF block (APP1, right after the start marker, as a phone writes it) giving one orientation
    entry."""
    directory = struct.pack("<HHHIHH", 1, 0x0112, 3, 1, orientation, 0) + b"\0" * 4
    return with_segment(jpeg, 0xE1, b"Exif\0\0" + b"II*\0" + struct.pack("<I", 8) + directory)


def faithful_jpeg(picture: np.ndarray) -> bytes:
    """A BGR picture as a JPEG of quality 100 and colour at full resolution (4:4:4), so that its squares of colour
    stay flat to their edges."""
    flags = [cv2.IMWRITE_JPEG_QUALITY, 100, cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444]
    return cv2.imencode(".jpg", picture, flags)[1].tobytes()


def jpeg_with_orientation(stored: np.ndarray, orientation: int) -> bytes:
    """``stored`` as a JPEG saying how it was held (``with_orientation``)."""
    return with_orientation(faithful_jpeg(stored), orientation)


@pytest.mark.parametrize("orientation", range(1, 9))
def test_a_phone_photo_is_turned_upright(orientation: int) -> None:
    """A phone held sideways stores its pixels as the sensor lies and says how to turn them: the detector and the
    seats (1 at the bottom) must see the table as the players do."""
    upright = quadrants()
    decoded = decode_image(jpeg_with_orientation(STORED_FROM_UPRIGHT[orientation](upright), orientation))
    assert decoded.shape == upright.shape
    assert np.abs(decoded.astype(int) - upright).mean() < 3


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_pixels(picture: np.ndarray) -> bytes:
    """The compressed rows of ``picture`` as OpenCV writes them to a PNG: its IDAT chunks' data, joined."""
    still, offset, pixels = cv2.imencode(".png", picture)[1].tobytes(), 8, b""
    while offset < len(still):
        (length,) = struct.unpack_from(">I", still, offset)
        pixels += still[offset + 8 : offset + 8 + length] if still[offset + 4 : offset + 8] == b"IDAT" else b""
        offset += 12 + length
    return pixels


def animated_png(frames: list[np.ndarray]) -> bytes:
    """An APNG of RGB ``frames`` of one size, the first its default picture (IDAT), the others in fdAT chunks, as a
    browser or Pillow writes one: acTL says how many frames, an fcTL before each its place and time."""
    height, width = frames[0].shape[:2]
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunks = [png_chunk(b"IHDR", header), png_chunk(b"acTL", struct.pack(">II", len(frames), 0))]
    sequence = 0
    for index, frame in enumerate(frames):
        chunks.append(png_chunk(b"fcTL", struct.pack(">IIIIIHHBB", sequence, width, height, 0, 0, 1, 2, 0, 0)))
        if index == 0:
            chunks.append(png_chunk(b"IDAT", png_pixels(frame)))
            sequence += 1
        else:
            chunks.append(png_chunk(b"fdAT", struct.pack(">I", sequence + 1) + png_pixels(frame)))
            sequence += 2
    return b"\x89PNG\r\n\x1a\n" + b"".join(chunks) + png_chunk(b"IEND", b"")


def webp_chunk(kind: bytes, data: bytes) -> bytes:
    return kind + struct.pack("<I", len(data)) + data + b"\0" * (len(data) & 1)


def webp_extended(flags: int, width: int, height: int, chunks: bytes) -> bytes:
    """A WebP of the extended kind: its VP8X chunk (``flags``, the canvas's sides), then ``chunks``."""
    sides = (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    body = webp_chunk(b"VP8X", bytes([flags, 0, 0, 0]) + sides) + chunks
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body


def animated_webp(frames: list[np.ndarray]) -> bytes:
    """An animated WebP (VP8X with the animation flag, ANIM, then an ANMF chunk a frame) of lossless ``frames``."""
    height, width = frames[0].shape[:2]
    sides = (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    chunks = webp_chunk(b"ANIM", b"\0" * 4 + b"\0\0")
    for frame in frames:
        still = cv2.imencode(".webp", frame, [cv2.IMWRITE_WEBP_QUALITY, 101])[1].tobytes()
        chunks += webp_chunk(b"ANMF", b"\0" * 6 + sides + (100).to_bytes(3, "little") + b"\0" + still[12:])
    return webp_extended(0x02, width, height, chunks)


BLACK, WHITE = np.zeros((32, 48, 3), np.uint8), np.full((32, 48, 3), 255, np.uint8)


@pytest.mark.parametrize(
    ("data", "note"),
    [
        (animated_png([BLACK, WHITE, WHITE]), "an animated PNG of 3 frames: only its first is read"),
        (animated_webp([BLACK, WHITE]), "an animated WEBP of 2 frames: only its first is read"),
        (cv2.imencodemulti(".tiff", [BLACK, WHITE])[1].tobytes(), "a TIFF of 2 pages: only its first is read"),
    ],
    ids=["apng", "webp", "tiff"],
)
def test_a_picture_of_several_is_read_by_its_first_saying_so(data: bytes, note: str) -> None:
    """An animated picture was read by its first frame without a word: a blank first frame read as an empty table."""
    notes: list[str] = []
    assert decode_image(data, notes=notes).max() == 0  # the first, black
    assert notes == [note]


@pytest.mark.parametrize("extension", [".png", ".webp", ".tiff", ".jpg"])
def test_a_still_picture_has_no_note(extension: str) -> None:
    notes: list[str] = []
    decode_image(cv2.imencode(extension, quadrants())[1].tobytes(), notes=notes)
    assert notes == []


def test_a_tiff_whose_pages_loop_is_counted_once() -> None:
    """A directory naming an earlier one as the next page would be counted forever."""
    data = bytearray(cv2.imencodemulti(".tiff", [BLACK, WHITE])[1].tobytes())
    first = struct.unpack_from("<I", data, 4)[0]
    second_at = first + 2 + 12 * struct.unpack_from("<H", data, first)[0]
    second = struct.unpack_from("<I", data, second_at)[0]
    end = second + 2 + 12 * struct.unpack_from("<H", data, second)[0]
    data[end : end + 4] = struct.pack("<I", first)
    assert images.picture_notes(bytes(data)) == ["a TIFF of 2 pages: only its first is read"]


# --- colour profiles ------------------------------------------------------------------------------------------------

D65, D50 = (0.3127, 0.3290), np.array([0.9642, 1.0, 0.8249])
SRGB_PRIMARIES = ((0.640, 0.330), (0.300, 0.600), (0.150, 0.060))
DISPLAY_P3_PRIMARIES = ((0.680, 0.320), (0.265, 0.690), (0.150, 0.060))  # an iPhone's photos
BRADFORD = np.array([[0.8951, 0.2664, -0.1614], [-0.7502, 1.7135, 0.0367], [0.0389, -0.0685, 1.0296]])


def xyz(chromaticity: tuple[float, float]) -> np.ndarray:
    x, y = chromaticity
    return np.array([x / y, 1.0, (1 - x - y) / y])


def rgb_to_xyz(primaries: tuple[tuple[float, float], ...]) -> np.ndarray:
    """The matrix taking linear RGB of these primaries (white D65) to CIE XYZ."""
    columns = np.stack([xyz(primary) for primary in primaries], axis=1)
    return columns * np.linalg.solve(columns, xyz(D65))


D65_TO_D50 = np.linalg.inv(BRADFORD) @ np.diag(BRADFORD @ D50 / (BRADFORD @ xyz(D65))) @ BRADFORD
"""Bradford's adaptation of XYZ under daylight (D65, a display's white) to D50, a profile's white."""


def srgb_decoded(levels: np.ndarray) -> np.ndarray:
    """8-bit levels of sRGB's (and Display P3's) transfer curve, as linear light from 0 to 1."""
    encoded = levels / 255
    return np.where(encoded <= 0.04045, encoded / 12.92, ((encoded + 0.055) / 1.055) ** 2.4)


def srgb_encoded(linear: np.ndarray) -> np.ndarray:
    linear = np.clip(linear, 0, 1)
    return 255 * np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)


def p3_in_srgb(rgb: tuple[int, int, int]) -> np.ndarray:
    """The sRGB levels of a Display P3 colour, out-of-gamut parts clipped: the arithmetic, not Little CMS."""
    linear = np.linalg.solve(rgb_to_xyz(SRGB_PRIMARIES), rgb_to_xyz(DISPLAY_P3_PRIMARIES) @ srgb_decoded(np.array(rgb)))
    return srgb_encoded(linear)


def s15f16(*values: float) -> bytes:
    return b"".join(struct.pack(">i", round(value * 65536)) for value in values)


def icc_profile(space: bytes, tags: dict[bytes, bytes], device: bytes = b"mntr") -> bytes:
    """An ICC v4 profile of a ``device`` (a display, b"prtr" a printer) of ``space`` colours (b"RGB ", b"GRAY",
    b"CMYK") holding ``tags``, signature -> data."""
    table, body = b"", b""
    offset = 128 + 4 + 12 * len(tags)
    for signature, data in tags.items():
        table += signature + struct.pack(">II", offset + len(body), len(data))
        body += data + b"\0" * (-len(data) % 4)
    header = struct.pack(">I4sI4s4s4s", 128 + 4 + len(table) + len(body), b"\0" * 4, 0x04300000, device, space, b"XYZ ")
    header += b"\0" * 12 + b"acsp" + b"\0" * 28 + s15f16(*D50) + b"\0" * 48
    return header + struct.pack(">I", len(tags)) + table + body


def xyz_tag(values: np.ndarray) -> bytes:
    return b"XYZ \0\0\0\0" + s15f16(*values)


def gamma_tag(gamma: float) -> bytes:
    return b"para\0\0\0\0\0\0\0\0" + s15f16(gamma)  # Y = X ** gamma


SRGB_CURVE = b"para\0\0\0\0\0\3\0\0" + s15f16(2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045)
"""sRGB's transfer curve, which Display P3 shares: Y = (aX + b) ** 2.4 above 0.04045, X / 12.92 below."""


def description_tag(text: str) -> bytes:
    utf16 = text.encode("utf-16-be")
    return b"mluc\0\0\0\0" + struct.pack(">II2s2sII", 1, 12, b"en", b"US", len(utf16), 28) + utf16


def rgb_profile(primaries: tuple[tuple[float, float], ...], description: str) -> bytes:
    """A matrix/TRC profile of these primaries, white D65 and sRGB's curve, as Apple writes Display P3's: each
    primary's XYZ adapted to the profile connection space's D50 (Bradford)."""
    columns = D65_TO_D50 @ rgb_to_xyz(primaries)
    tags = {b"desc": description_tag(description), b"wtpt": xyz_tag(D50)}
    tags |= {name: xyz_tag(columns[:, index]) for index, name in enumerate((b"rXYZ", b"gXYZ", b"bXYZ"))}
    return icc_profile(b"RGB ", tags | {b"rTRC": SRGB_CURVE, b"gTRC": SRGB_CURVE, b"bTRC": SRGB_CURVE})


DISPLAY_P3 = rgb_profile(DISPLAY_P3_PRIMARIES, "Display P3")
LINEAR_GREY = icc_profile(
    b"GRAY", {b"desc": description_tag("Grey, gamma 1"), b"wtpt": xyz_tag(D50)} | {b"kTRC": gamma_tag(1.0)}
)
P3_COLOURS = ((255, 0, 0), (200, 100, 90), (180, 40, 60), (60, 160, 90), (40, 70, 170), (128, 128, 128))
"""Display P3 levels: its pure red (beyond sRGB's, so clipped to sRGB's red), reds of a card's suit, a green, a blue
and a grey (the same in both)."""


def swatches(colours: Sequence[Sequence[float]]) -> np.ndarray:
    """A picture of 16x16 squares of ``colours`` (RGB, CMYK: as given), a JPEG's blocks each flat: a row of them,
    then the same row in reverse, so that no turn or mirror image, nor a row of it out of its place, looks the same."""
    row = np.concatenate([np.full((16, 16, len(colour)), colour, float) for colour in colours], axis=1)
    return np.concatenate([row, row[:, ::-1]])


def bgr(picture: np.ndarray) -> np.ndarray:
    """An RGB picture as OpenCV orders its pixels."""
    return np.ascontiguousarray(picture[..., ::-1].astype(np.uint8))


def p3_swatches_in_srgb(colours: Sequence[tuple[int, int, int]]) -> np.ndarray:
    """What ``swatches`` of these Display P3 colours are in sRGB, as OpenCV orders the levels."""
    return swatches([p3_in_srgb(colour) for colour in colours])[..., ::-1]


def jpeg_with_profile(picture: np.ndarray, profile: bytes, pieces: int = 1) -> bytes:
    """``picture`` as a JPEG holding ``profile``, as ``with_profile_segments`` adds it."""
    return with_profile_segments(faithful_jpeg(picture), profile, pieces)


def with_profile_segments(jpeg: bytes, profile: bytes, pieces: int = 1) -> bytes:
    """``jpeg`` holding ``profile`` in ``pieces`` APP2 segments after its start marker, the last piece first (readers
    join them by their sequence numbers)."""
    size = -(-len(profile) // pieces)
    for index in range(pieces):
        piece = profile[index * size : (index + 1) * size]
        jpeg = with_segment(jpeg, 0xE2, b"ICC_PROFILE\0" + bytes([index + 1, pieces]) + piece)
    return jpeg


def png_with_profile(picture: np.ndarray, profile: bytes) -> bytes:
    """``picture`` as a PNG with an iCCP chunk (name, compression method 0, deflated profile) after its IHDR."""
    png = cv2.imencode(".png", picture)[1].tobytes()
    return png[:33] + png_chunk(b"iCCP", b"profile\0\0" + zlib.compress(profile)) + png[33:]


def webp_with_profile(picture: np.ndarray, profile: bytes) -> bytes:
    """``picture`` as a lossless WebP of the extended kind, its ICC flag set and an ICCP chunk before its pixels."""
    still = cv2.imencode(".webp", picture, [cv2.IMWRITE_WEBP_QUALITY, 101])[1].tobytes()
    height, width = picture.shape[:2]
    return webp_extended(0x20, width, height, webp_chunk(b"ICCP", profile) + still[12:])


def as_stored(data: bytes) -> np.ndarray:
    """The levels a picture stores, as OpenCV reads them (ignoring any profile)."""
    return cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)


PROFILED = {
    "jpeg": jpeg_with_profile,
    "jpeg-in-two-segments": lambda picture, profile: jpeg_with_profile(picture, profile, pieces=2),
    "png": png_with_profile,
    "webp": webp_with_profile,
}


@pytest.fixture
def in_bands_of_5_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pictures 96 pixels wide converted 5 rows at a time, as a photo is in bands of a megapixel: a swatch spans bands,
    and the last band is short."""
    monkeypatch.setattr(images, "_PROFILE_ROWS_PIXELS", 5 * 96)


@pytest.mark.parametrize("embed", PROFILED.values(), ids=PROFILED.keys())
def test_a_display_p3_picture_is_read_in_srgb(
    embed: Callable[[np.ndarray, bytes], bytes], in_bands_of_5_rows: None
) -> None:
    """OpenCV ignores colour profiles: an iPhone's Display P3 photo reached the detector (trained on sRGB pictures)
    with the levels of its reds read as sRGB's, duller and of another hue."""
    notes: list[str] = []
    decoded = decode_image(embed(bgr(swatches(P3_COLOURS)), DISPLAY_P3), notes=notes)
    assert np.abs(decoded - p3_swatches_in_srgb(P3_COLOURS)).max() <= 3
    assert notes == []


def test_a_grey_picture_is_read_by_its_grey_profile() -> None:
    """A grey profile of gamma 1 stores light as it is: half the light, level 128, is sRGB's level 188."""
    grey = np.full((16, 16), 128, np.uint8)
    decoded = decode_image(jpeg_with_profile(grey, LINEAR_GREY))
    assert np.abs(decoded[8, 8].astype(float) - srgb_encoded(np.array(128 / 255))).max() <= 2


@pytest.mark.parametrize("embed", PROFILED.values(), ids=PROFILED.keys())
def test_an_srgb_picture_is_read_as_it_is(
    embed: Callable[[np.ndarray, bytes], bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Most cameras and Android phones embed sRGB's profile: not a level changed, nor the time of a conversion spent
    (a few tenths of a second for a phone's photo)."""

    def convert(conversion: object, image: np.ndarray) -> None:
        raise AssertionError("an sRGB picture was converted")

    monkeypatch.setattr(images._ToSrgb, "apply", convert)
    picture = cv2.resize(quadrants(), (512, 256)) + np.arange(256, dtype=np.uint8)[:, None, None] // 4
    srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    notes: list[str] = []
    assert np.array_equal(decode_image(embed(picture, srgb), notes=notes), as_stored(embed(picture, srgb)))
    assert notes == []


@pytest.mark.parametrize(
    ("profile", "note"),
    [
        (b"not a colour profile", "a colour profile that could not be read: its colours are read unconverted"),
        (DISPLAY_P3[:200], "a colour profile that could not be read: its colours are read unconverted"),  # cut short
        (LINEAR_GREY, "a colour profile of grey colours, on RGB pixels: its colours are read unconverted"),
        (
            DISPLAY_P3[:16] + b"Lab " + DISPLAY_P3[20:],
            "a colour profile of Lab colours, on RGB pixels: its colours are read unconverted",
        ),
    ],
    ids=["garbage", "cut-short", "grey-on-rgb", "lab"],
)
@pytest.mark.parametrize("embed", PROFILED.values(), ids=PROFILED.keys())
def test_a_profile_that_cannot_be_used_is_ignored_saying_so(
    profile: bytes, note: str, embed: Callable[[np.ndarray, bytes], bytes]
) -> None:
    notes: list[str] = []
    data = embed(bgr(swatches(P3_COLOURS)), profile)
    assert np.array_equal(decode_image(data, notes=notes), as_stored(data))
    assert notes == [note]


def test_a_png_profile_inflating_past_the_limit_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    """A few KB of deflated zeros inflate into many MB: the profile is not inflated past ``MAX_PROFILE_BYTES``."""
    monkeypatch.setattr(images, "MAX_PROFILE_BYTES", 1000)
    notes: list[str] = []
    decode_image(png_with_profile(bgr(swatches(P3_COLOURS)), DISPLAY_P3 + b"\0" * 1000), notes=notes)
    assert notes == ["a colour profile of over 0.001 MB: its colours are read unconverted"]


@pytest.mark.parametrize("orientation", [3, 6])
def test_a_profiled_phone_photo_is_turned_upright_too(orientation: int) -> None:
    stored = STORED_FROM_UPRIGHT[orientation](bgr(swatches(P3_COLOURS)))
    decoded = decode_image(with_profile_segments(jpeg_with_orientation(stored, orientation), DISPLAY_P3))
    expected = p3_swatches_in_srgb(P3_COLOURS)
    assert decoded.shape == expected.shape
    assert np.abs(decoded - expected).max() <= 3


INKS = {"C": (0, 160, 230), "M": (230, 0, 140), "Y": (255, 235, 0), "K": (35, 31, 32)}
"""The sRGB colour of each ink alone on white paper, in the made-up printer ``printer_profile`` describes."""
CMYK_SWATCHES = ((255, 0, 0, 0), (0, 255, 0, 0), (0, 0, 255, 0), (0, 0, 0, 255), (255, 0, 255, 0), (0, 0, 0, 0))


def printed(cmyk: tuple[int, ...]) -> np.ndarray:
    """The linear sRGB light of full-strength inks (``cmyk``'s 255s) printed over one another on white paper: each
    lets through the light of its colour alone."""
    light = np.ones(3)
    for ink, amount in zip(INKS.values(), cmyk, strict=True):
        light *= srgb_decoded(np.array(ink)) if amount else 1
    return light


def printer_profile() -> bytes:
    """A CMYK profile of ``printed``'s printer: its A2B0 table (lut16Type) gives the XYZ (D50) of the 16 corners of
    CMYK, each ink at 0 or full, to interpolate between."""
    corners = [
        D65_TO_D50 @ rgb_to_xyz(SRGB_PRIMARIES) @ printed(corner) for corner in np.ndindex(2, 2, 2, 2)
    ]  # the first ink varies slowest
    identity = s15f16(1, 0, 0, 0, 1, 0, 0, 0, 1)
    a2b0 = b"mft2\0\0\0\0" + bytes([4, 3, 2, 0]) + identity + struct.pack(">HH", 2, 2)
    a2b0 += struct.pack(">8H", *[0, 65535] * 4)  # each ink's input curve: as it is
    a2b0 += b"".join(struct.pack(">3H", *np.round(np.clip(corner, 0, 1.99) * 32768).astype(int)) for corner in corners)
    a2b0 += struct.pack(">6H", *[0, 65535] * 3)  # the output curves: as they are
    tags = {b"desc": description_tag("Four inks"), b"wtpt": xyz_tag(D50), b"A2B0": a2b0}
    return icc_profile(b"CMYK", tags, device=b"prtr")


@pytest.mark.parametrize("orientation", range(1, 9))
def test_a_cmyk_jpeg_is_read_by_its_profile_and_turned_upright(orientation: int, in_bands_of_5_rows: None) -> None:
    """OpenCV turns CMYK into RGB by a formula of its own, ignoring the profile, which says what the inks look like:
    a CMYK JPEG's samples are converted by its profile (and turned as OpenCV turns a picture it decodes)."""
    stored = STORED_FROM_UPRIGHT[orientation](swatches(CMYK_SWATCHES).astype(np.uint8))
    jpeg = io.BytesIO()
    Image.fromarray(stored, "CMYK").save(jpeg, "JPEG", quality=100)
    decoded = decode_image(with_profile_segments(with_orientation(jpeg.getvalue(), orientation), printer_profile()))
    expected = swatches([srgb_encoded(printed(colour)) for colour in CMYK_SWATCHES])[..., ::-1]
    assert decoded.shape == expected.shape
    assert np.abs(decoded - expected).max() <= 3
