"""Reading a file a person names on the command line, bounded: a pipe, a device or a huge file must not
hang a command or fill the memory (``okgin detect /dev/zero`` once read until it ran out)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class FileTooLargeError(OSError):
    """A regular file over the size read there; ``size`` is its size in bytes."""

    def __init__(self, path: str | Path, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"larger than {_size(limit)}, the most okgin reads there", str(path))
        self.size = size


def read_regular_file(path: str | Path, limit: int) -> bytes:
    """The bytes of the regular file at ``path``, of at most ``limit`` bytes.

    It is opened without waiting (a named pipe with no writer would block the open) and checked to be a
    regular file before anything is read.

    :raises FileNotFoundError, IsADirectoryError, PermissionError: as ``open`` does.
    :raises OSError: with ``strerror`` "not a regular file ..." for a pipe, socket or device.
    :raises FileTooLargeError: for a file over ``limit`` bytes, before it is read.
    """
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        status = os.fstat(descriptor)
        if stat.S_ISDIR(status.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        if not stat.S_ISREG(status.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a pipe, socket or device)", str(path))
        if status.st_size > limit:
            raise FileTooLargeError(path, status.st_size, limit)
        with os.fdopen(descriptor, "rb", closefd=False) as file:
            data = file.read(limit + 1)
    finally:
        os.close(descriptor)
    if len(data) > limit:  # it grew since it was looked at
        raise FileTooLargeError(path, len(data), limit)
    return data


def read_regular_text(path: str | Path, limit: int) -> str:
    """``read_regular_file`` as UTF-8 text, less the byte-order mark Windows Notepad may put first: kept, it
    became part of the first line, and class 0 of a ``classes.txt`` ("10C") was taken for a class that is no card.

    :raises UnicodeDecodeError: for bytes that are not UTF-8.
    """
    return read_regular_file(path, limit).decode("utf-8-sig")


def why_not_a_folder(path: str | Path) -> str:
    """How a message says why ``path``, named as a folder, is none.

    >>> why_not_a_folder("/no/such/place"), why_not_a_folder(__file__)
    ('does not exist', 'is a file, not a folder')
    """
    return "is a file, not a folder" if Path(path).exists() else "does not exist"


def why_not_a_file(path: str | Path) -> str:
    """How a message says why ``path``, named as a file to read, is none (or not a regular one).

    >>> why_not_a_file("/no/such/file"), why_not_a_file("/"), why_not_a_file("/dev/null")
    ('does not exist', 'is a folder, not a file', 'is not a regular file (a pipe, socket or device)')
    """
    file = Path(path)
    if file.is_dir():
        return "is a folder, not a file"
    return "is not a regular file (a pipe, socket or device)" if file.exists() else "does not exist"


def is_utf8(name: str) -> bool:
    """Whether a file name can be written as UTF-8, as OpenCV, ONNX Runtime and OpenVINO take names: one read from a
    Linux command line with bytes that are no UTF-8 holds them as lone surrogates, which cannot (OpenCV crashed on
    it with a segmentation fault).

    >>> is_utf8("clip.mp4"), is_utf8(b"clip\\xff.mp4".decode("utf-8", "surrogateescape"))
    (True, False)
    """
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _size(count: int) -> str:
    return f"{count // 1024**2} MB" if count >= 1024**2 else f"{count} bytes"
