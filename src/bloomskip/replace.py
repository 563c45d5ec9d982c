"""Replacing a file atomically: a new file is written next to the old one, flushed and
fsynced, given the old file's mode, renamed over it, and the directory fsynced. If
anything fails the target is untouched and the temporary file removed.

Used by every writer that rewrites a user's file in place (adding bloom filters to
Parquet files).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import BinaryIO

from bloomskip.errors import CorruptFileError

_COPY_CHUNK = 8 * 1024 * 1024


def same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def copy_prefix(src: BinaryIO, dst: BinaryIO, length: int, label: str) -> None:
    """Copy ``src[0:length]`` to the start of ``dst``; leave ``dst`` positioned at ``length``."""
    done = 0
    with contextlib.suppress(OSError, AttributeError):  # in-kernel copy when possible
        while done < length:
            n = os.copy_file_range(
                src.fileno(), dst.fileno(), min(length - done, 1 << 30), done, done
            )
            if n == 0:
                break
            done += n
    src.seek(done)
    dst.seek(done)
    while done < length:
        chunk = src.read(min(_COPY_CHUNK, length - done))
        if not chunk:
            raise CorruptFileError(f"{label}: file ended at byte {done} while being copied")
        dst.write(chunk)
        done += len(chunk)


@contextlib.contextmanager
def atomic_path(target: str, *, mode_from: str | None) -> Iterator[str]:
    """The path of a new empty temporary file next to ``target``, which replaces it.

    The caller writes the file and closes it inside the block. On leaving the block
    normally the file is fsynced, given the mode of ``target`` (or of ``mode_from``, or
    the umask default), renamed over ``target`` and the directory fsynced. On any
    exception the temporary file is removed and ``target`` is untouched.
    """
    directory = os.path.dirname(os.path.abspath(target))
    fd, tmp = tempfile.mkstemp(
        prefix=f".{os.path.basename(target)}.", suffix=".bloomskip.tmp", dir=directory
    )
    os.close(fd)
    try:
        yield tmp
        fsync_path(tmp, os.O_RDWR)
        os.chmod(tmp, _mode_for(target, mode_from))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_path(directory, os.O_RDONLY)


def _mode_for(target: str, mode_from: str | None) -> int:
    for candidate in (target, mode_from):
        if candidate is not None:
            with contextlib.suppress(OSError):
                return os.stat(candidate).st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def fsync_path(path: str, flags: int) -> None:
    """fsync a file or directory by path (fsync acts on the inode, whichever descriptor)."""
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
