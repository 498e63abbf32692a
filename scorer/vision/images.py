"""Reading photos into BGR arrays, with errors that name the file and the problem.

Every entry point that accepts a picture (``okgin detect``, ``okgin score-image``, the
web upload) goes through here, so a bad file always reads the same way to the user.
"""

from __future__ import annotations

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


class ImageError(OkginError):
    """A picture that cannot be read: missing, empty, truncated or not an image at all."""


def sniff_format(data: bytes) -> str | None:
    """The image format named by the leading bytes, or None when they match none.

    >>> sniff_format(b"\\x89PNG\\r\\n\\x1a\\n...."), sniff_format(b"hello")
    ('PNG', None)
    """
    for signature, name in _SIGNATURES:
        if data.startswith(signature):
            return name
    return None


def decode_image(data: bytes, name: str = "image") -> np.ndarray:
    """Decode encoded image bytes into a BGR ``uint8`` array of shape (height, width, 3).

    Grey and alpha images are converted, so callers always get three channels.

    :raises ImageError: for empty data or bytes OpenCV cannot decode, naming ``name``.
    """
    import cv2

    if not data:
        raise ImageError(f"{name} is empty (0 bytes)")
    buffer = np.frombuffer(data, dtype=np.uint8)
    image = cv2.imdecode(buffer, cv2.IMREAD_COLOR)
    if image is None or image.size == 0:
        kind = sniff_format(data)
        why = f"a damaged or truncated {kind} file" if kind else f"not a {SUPPORTED_FORMATS} image"
        raise ImageError(f"could not decode {name}: {why}")
    return image


def load_image(path: str | Path) -> np.ndarray:
    """Read an image file into a BGR array.

    :raises ImageError: when the file is missing, is a directory, is unreadable or is not an image.
    """
    file = Path(path)
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise ImageError(f"image {str(file)!r} does not exist") from None
    except IsADirectoryError:
        raise ImageError(f"image {str(file)!r} is a directory, not a file") from None
    except OSError as error:
        raise ImageError(f"could not read image {str(file)!r}: {error.strerror or error}") from None
    return decode_image(data, name=f"image {str(file)!r}")
