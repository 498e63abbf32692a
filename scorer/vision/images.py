"""Reading photos into BGR arrays, with errors that name the file and the problem.

Every entry point that accepts a picture (``okgin detect``, ``okgin score-image``, the
web upload) goes through here, so a bad file always reads the same way to the user.

A picture is measured before it is decoded: a 400 KB PNG may claim 20000x20000 pixels and
decode into 1.2 GB, so the header's size is read first (Pillow opens lazily and reads only the
header) and anything over ``MAX_PIXELS`` is refused before a byte of it is decompressed. At most
``MAX_CONCURRENT_DECODES`` pictures decode at once, so simultaneous uploads cannot add up either.
"""

from __future__ import annotations

import io
import re
import struct
import threading
import warnings
from pathlib import Path

import numpy as np

from scorer.errors import OkginError

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
MAX_FILE_BYTES = 200 * 1024 * 1024
"""The largest image file read from disk; no photo of a card table comes near it."""
MAX_CONCURRENT_DECODES = 2
_decode_slots = threading.BoundedSemaphore(MAX_CONCURRENT_DECODES)


class ImageError(OkginError):
    """A picture that cannot be read: missing, empty, truncated or not an image at all."""


class ImageTooLargeError(ImageError):
    """A picture with more pixels than okgin decodes (``MAX_PIXELS``), refused before decoding."""


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
    return f"{pixels / 1e6:.1f} MP" if pixels < 10**12 else f"{pixels:.2g} pixels"


def image_size(data: bytes, name: str = "image", max_pixels: int = MAX_PIXELS) -> tuple[int, int]:
    """``(width, height)`` read from the image header, without decoding any pixel.

    >>> from PIL import Image
    >>> encoded = io.BytesIO()
    >>> Image.new("RGB", (640, 480)).save(encoded, "PNG")
    >>> image_size(encoded.getvalue())
    (640, 480)
    >>> image_size(encoded.getvalue(), "upload", max_pixels=300_000)
    Traceback (most recent call last):
    ...
    scorer.vision.images.ImageTooLargeError: upload is 640x480 (0.3 MP): okgin reads images up to 0.3 MP

    :raises ImageTooLargeError: when the header claims more than ``max_pixels`` pixels.
    :raises ImageError: when the bytes are not an image Pillow can identify.
    """
    from PIL import Image, UnidentifiedImageError

    limit = f"okgin reads images up to {_megapixels(max_pixels)}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as header:  # lazy: reads the header only
                width, height = header.size
    except Image.DecompressionBombError as error:
        # Pillow will not describe a header past twice its own limit (above ours); its message has the count
        counted = re.search(r"\((\d+) pixels\)", str(error))
        size = _megapixels(int(counted.group(1))) if counted else "too large"
        raise ImageTooLargeError(f"{name} is {size}: {limit}") from None
    # Pillow's ways to say no; ImportError: ultralytics, once imported, wraps Image.open to load a HEIF
    # plugin on files Pillow does not know, and that plugin may not be installed
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, struct.error, ImportError):
        raise ImageError(_undecodable(data, name)) from None
    if width * height > max_pixels:
        raise ImageTooLargeError(f"{name} is {width}x{height} ({_megapixels(width * height)}): {limit}")
    return width, height


def _undecodable(data: bytes, name: str) -> str:
    kind = sniff_format(data)
    why = f"a damaged or truncated {kind} file" if kind else f"not a {SUPPORTED_FORMATS} image"
    return f"could not decode {name}: {why}"


def decode_image(data: bytes, name: str = "image", max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """Decode encoded image bytes into a BGR ``uint8`` array of shape (height, width, 3).

    Grey and alpha images are converted, so callers always get three channels. The size is
    checked from the header first (``image_size``), and at most ``MAX_CONCURRENT_DECODES``
    images decode at the same time.

    :raises ImageTooLargeError: for more than ``max_pixels`` pixels, before decoding.
    :raises ImageError: for empty data or bytes OpenCV cannot decode, naming ``name``.
    """
    import cv2

    if not data:
        raise ImageError(f"{name} is empty (0 bytes)")
    width, height = image_size(data, name, max_pixels)
    buffer = np.frombuffer(data, dtype=np.uint8)
    with _decode_slots:
        try:
            image = cv2.imdecode(buffer, cv2.IMREAD_COLOR)
        except cv2.error:
            image = None
    if image is None or image.size == 0:
        raise ImageError(_undecodable(data, name))
    if sorted(image.shape[:2]) != sorted((width, height)):  # EXIF orientation may swap the sides
        raise ImageError(f"could not decode {name}: its header says {width}x{height}, its pixels do not")
    return image


def load_image(path: str | Path, max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """Read an image file into a BGR array.

    :raises ImageTooLargeError: when the file or its pixel count is beyond what okgin reads.
    :raises ImageError: when the file is missing, is a directory, is unreadable or is not an image.
    """
    file = Path(path)
    try:
        if file.is_file() and file.stat().st_size > MAX_FILE_BYTES:
            size, limit = file.stat().st_size // 1024**2, MAX_FILE_BYTES // 1024**2
            raise ImageTooLargeError(f"image {str(file)!r} is {size} MB: okgin reads image files up to {limit} MB")
        data = file.read_bytes()
    except FileNotFoundError:
        raise ImageError(f"image {str(file)!r} does not exist") from None
    except IsADirectoryError:
        raise ImageError(f"image {str(file)!r} is a directory, not a file") from None
    except OSError as error:
        raise ImageError(f"could not read image {str(file)!r}: {error.strerror or error}") from None
    return decode_image(data, name=f"image {str(file)!r}", max_pixels=max_pixels)
