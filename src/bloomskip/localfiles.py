"""Opening local files that a user named: regular files only.

``open()`` on a FIFO or a character device blocks until a writer appears (or reads
forever), so every entry point that opens a path given by a user goes through
:func:`open_regular`: anything but a regular file is refused with a one-line typed error
before it is opened.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from bloomskip.errors import SourceError


def check_regular(path: str | os.PathLike) -> str:
    """``path`` as text if it names a regular file (symlinks followed); else raise
    :class:`~bloomskip.errors.SourceError` saying what it is."""
    name = os.fspath(path)
    try:
        mode = os.stat(name).st_mode
    except FileNotFoundError:
        raise SourceError(f"{name}: no such file") from None
    except OSError as e:
        raise SourceError(f"{name}: cannot stat: {e.strerror or e}") from None
    if stat.S_ISREG(mode):
        return name
    kind = (
        "a directory"
        if stat.S_ISDIR(mode)
        else "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "not a regular file"
    )
    raise SourceError(f"{name}: is {kind}, not a regular file")


def open_regular(path: str | os.PathLike) -> BinaryIO:
    """Open a regular file for reading in binary mode (see :func:`check_regular`)."""
    return open(check_regular(path), "rb")


__all__ = ["check_regular", "open_regular"]
