"""Replacing a user's file safely: only if it is still the file that was read, through a
temporary file that never outlives the run (short of SIGKILL), renamed over it atomically.

Used by every writer that rewrites a user's file (adding bloom filters to Parquet and ORC
files; ``write_table`` writes its new file the same way). The life of one replacement
(:func:`atomic_path`)::

    sweep    remove our stale temporary files of the same target (see below)
    guard    SIGINT, SIGTERM, SIGHUP raise Interrupted (main thread only)
    create   .NAME.<8 random chars>.bloomskip.tmp next to the target (mkstemp, 0600)
    write    the caller writes and closes it
    fsync    the temporary file; chmod to the target's mode
    check    stat(target) is still the file read at the start: same st_dev, st_ino,
             size and st_mtime_ns (FileIdentity), else FileChangedError
    rename   os.replace(temporary, target); fsync of the directory
    restore  the previous signal handlers

On any exception (an error, Ctrl-C, SIGTERM, SIGHUP) before the rename the temporary file
is removed and the target is untouched. Signals are held back (recorded, then raised as
:class:`~bloomskip.errors.Interrupted`) while the temporary file is created, while it is
removed, and from the check to the end of the rename, so a second signal cannot leave a
file behind and the rename is either done or not.

Limits, said plainly:

* **No check-then-rename is atomic on POSIX.** A writer that replaces the target between
  the check and ``os.replace`` (a few system calls: one ``stat``, one ``rename``) still
  loses its update. The check runs after everything else (the fsync too), so that window
  is as small as it can be without a lock every writer agrees to take.
* **The identity is (st_dev, st_ino, size, st_mtime_ns).** A file renamed over the target
  always has another inode while ours is open; an in-place write that keeps the size
  *and* lands within the file system's timestamp granularity of the last one is the one
  change it cannot see.
* **SIGKILL (and a power cut) cannot be caught.** It can leave one temporary file, up to
  the size of the target, named ``.NAME.<random>.bloomskip.tmp``; the target itself is
  always either the old file or the new one, whole. The next replacement of the same
  target sweeps such files once they are older than ``stale_after`` (an hour by default:
  a younger one may belong to a run still in progress): regular files only (``lstat``,
  symbolic links are never followed), owned by this user, whose name matches exactly.
* **Signal handlers can only be set in the main thread**, and only where the current
  handler is the default one (a handler of the application, or SIG_IGN as under
  ``nohup``, is left alone). A call from another thread (a Spark task, a thread pool)
  relies on the cleanup on exceptions and on the sweep.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from bloomskip.errors import CorruptFileError, FileChangedError, Interrupted

_COPY_CHUNK = 8 * 1024 * 1024
_KERNEL_PIECE = 64 * 1024 * 1024  # a stop request waits for one piece at most
#: Suffix of every temporary file bloomskip writes next to a target.
TEMP_SUFFIX = ".bloomskip.tmp"
#: Our temporary files older than this (seconds since their last write) are swept.
STALE_AFTER_S = 3600.0
#: The signals that remove the temporary file and raise Interrupted while a file is written.
SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
# tempfile.mkstemp's random part: 8 characters of tempfile._RandomNameSequence.characters
# (a test checks that the names it makes match, should CPython ever change them).
_RANDOM_PART = r"[a-z0-9_]{8}"


# ----------------------------------------------------------------------------- identity


@dataclass(frozen=True)
class FileIdentity:
    """What says a file is still the one that was read: device, inode, size, mtime."""

    dev: int
    ino: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileIdentity:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    @classmethod
    def of_file(cls, fh: BinaryIO) -> FileIdentity:
        """The identity of an open file (``fstat``): the file actually being read."""
        return cls.of(os.fstat(fh.fileno()))

    def change(self, now: FileIdentity) -> str | None:
        """How ``now`` differs from this identity, in words, or None if it does not."""
        if (now.dev, now.ino) != (self.dev, self.ino):
            return "another file was put in its place"
        if now.size != self.size:
            return f"its size changed from {self.size:,} B to {now.size:,} B"
        if now.mtime_ns != self.mtime_ns:
            return "it was modified (its mtime changed)"
        return None


def require_unchanged(
    file: str | BinaryIO, expected: FileIdentity, *, label: str | None = None
) -> None:
    """Raise :class:`FileChangedError` unless ``file`` is still the file ``expected`` names.

    A path is checked with ``stat`` (is it still that file?), an open file with ``fstat``
    (was the file being read modified in place?).
    """
    name = file if isinstance(file, str) else getattr(file, "name", "file")
    try:
        st = os.stat(file) if isinstance(file, str) else os.fstat(file.fileno())
    except FileNotFoundError:
        why: str | None = "it was deleted or renamed"
    else:
        why = expected.change(FileIdentity.of(st))
    if why is not None:
        raise _changed(label or name, why)


def open_unchanged(path: str, expected: FileIdentity | None, *, label: str | None = None):
    """``open(path, "rb")``, checked (``fstat``) to be the file ``expected`` names.

    For a second view of a file opened earlier by path: if the path now names another
    file, reading it would mix two files' bytes.
    """
    fh = open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
    if expected is not None:
        why = expected.change(FileIdentity.of_file(fh))
        if why is not None:
            fh.close()
            raise _changed(label or path, why)
    return fh


def _changed(name: str, why: str) -> FileChangedError:
    return FileChangedError(
        f"{name}: the file changed while bloomskip was working on it ({why}); nothing was "
        "written - run again to work on the file as it is now"
    )


def same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def copy_prefix(src: BinaryIO, dst: BinaryIO, length: int, label: str, stop=None) -> None:
    """Copy ``src[0:length]`` to ``dst[0:length]``.

    Neither file's position is used or moved (``copy_file_range`` in the kernel with
    explicit offsets, else ``pread``/``pwrite``), so another thread may write ``dst``
    past ``length`` meanwhile. ``stop()``, asked between pieces of 64 MiB, ends the copy
    early. A source shorter than ``length`` raises :class:`CorruptFileError`.
    """
    copy_range(src, 0, dst, 0, length, label, stop)


def copy_range(
    src: BinaryIO, src_at: int, dst: BinaryIO, dst_at: int, length: int, label: str, stop=None
) -> None:
    """Copy ``src[src_at:src_at+length]`` to ``dst[dst_at:dst_at+length]``, as
    :func:`copy_prefix` copies (file positions unused, ``stop()`` between pieces)."""
    fin, fout = src.fileno(), dst.fileno()
    done = 0
    with contextlib.suppress(OSError, AttributeError):  # in-kernel copy when possible
        while done < length and not (stop and stop()):
            n = os.copy_file_range(
                fin, fout, min(length - done, _KERNEL_PIECE), src_at + done, dst_at + done
            )
            if n == 0:
                break
            done += n
    while done < length and not (stop and stop()):
        chunk = os.pread(fin, min(_COPY_CHUNK, length - done), src_at + done)
        if not chunk:
            raise CorruptFileError(
                f"{label}: file ended at byte {src_at + done} while being copied"
            )
        view = memoryview(chunk)
        while view:
            written = os.pwrite(fout, view, dst_at + done)
            done += written
            view = view[written:]


class BackgroundCopy:
    """:func:`copy_prefix` on a thread of its own, while the caller writes the rest of
    ``dst`` (from ``length`` on), then the copied bytes flushed to disk (``fdatasync``,
    so the final fsync of the file only waits for what was written after them).
    :meth:`wait` joins it and raises its error; leaving the ``with`` block stops it
    (between pieces) and joins it in any case, so the files are never closed under it.
    """

    def __init__(self, src: BinaryIO, dst: BinaryIO, length: int, label: str) -> None:
        self._stop = threading.Event()
        self._error: BaseException | None = None

        def run() -> None:
            try:
                copy_prefix(src, dst, length, label, stop=self._stop.is_set)
                if not self._stop.is_set():  # an error here is raised by wait(), never lost
                    getattr(os, "fdatasync", os.fsync)(dst.fileno())
            except BaseException as e:  # handed to wait()
                self._error = e

        self._thread = threading.Thread(target=run, name="bloomskip-copy", daemon=True)

    def __enter__(self) -> BackgroundCopy:
        self._thread.start()
        return self

    def wait(self) -> None:
        self._thread.join()
        if self._error is not None:
            raise self._error

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None:
            self._stop.set()
        interrupted: BaseException | None = None
        while self._thread.is_alive():  # never let the files close under the copy
            try:
                self._thread.join()
            except BaseException as e:  # a signal handler's exception: join first
                self._stop.set()
                interrupted = interrupted or e
        if interrupted is not None:
            raise interrupted


# ----------------------------------------------------------------------------- replacing


@contextlib.contextmanager
def atomic_path(
    target: str,
    *,
    mode_from: str | None,
    expected: FileIdentity | None = None,
    stale_after: float = STALE_AFTER_S,
) -> Iterator[str]:
    """The path of a new empty temporary file next to ``target``, which replaces it.

    The caller writes the file and closes it inside the block. On leaving the block
    normally the file is fsynced, given the mode of ``target`` (or of ``mode_from``, or
    the umask default), and - if ``expected`` is given and ``target`` is still that file
    (else :class:`FileChangedError`) - renamed over ``target``, and the directory
    fsynced. On any exception, and on SIGINT/SIGTERM/SIGHUP (raised as
    :class:`Interrupted` where handlers can be set), the temporary file is removed and
    ``target`` is untouched. Our temporary files of ``target`` older than
    ``stale_after`` seconds are swept first. The module doc says what this cannot do.
    """
    directory = os.path.dirname(os.path.abspath(target))
    name = os.path.basename(target)
    sweep_stale(directory, name, stale_after)
    with _SignalGuard() as guard:
        try:
            with guard.held():
                fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=TEMP_SUFFIX, dir=directory)
                os.close(fd)
                guard.temporary = tmp
            yield tmp
            fsync_path(tmp, os.O_RDWR)
            os.chmod(tmp, _mode_for(target, mode_from))
            with guard.held():
                if expected is not None:
                    require_unchanged(target, expected)
                guard.checkpoint()  # a signal that came before the rename: do not rename
                os.replace(tmp, target)
                guard.temporary = None
                fsync_path(directory, os.O_RDONLY)
        except BaseException:
            guard.discard()
            raise


def sweep_stale(directory: str, name: str, stale_after: float = STALE_AFTER_S) -> list[str]:
    """Remove our temporary files of ``name`` in ``directory`` older than ``stale_after`` s.

    Only entries named exactly ``.NAME.<8 random chars>.bloomskip.tmp`` that are regular
    files (never a symbolic link, never followed), owned by this user and last written
    more than ``stale_after`` seconds ago. Returns the names removed; errors (a directory
    that cannot be listed, a file removed meanwhile) are ignored.
    """
    pattern = temp_pattern(name)
    removed: list[str] = []
    try:
        dir_fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return removed
    try:
        now = time.time()
        uid = os.geteuid() if hasattr(os, "geteuid") else None
        with os.scandir(dir_fd) as entries:
            candidates = [e.name for e in entries if pattern.fullmatch(e.name)]
        for entry in candidates:
            with contextlib.suppress(OSError):
                st = os.stat(entry, dir_fd=dir_fd, follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode) or (uid is not None and st.st_uid != uid):
                    continue
                if now - st.st_mtime <= stale_after:
                    continue
                os.unlink(entry, dir_fd=dir_fd)  # removes the name, never follows a link
                removed.append(entry)
    finally:
        os.close(dir_fd)
    return removed


def temp_pattern(name: str) -> re.Pattern[str]:
    """The exact names of our temporary files of ``name`` (``fullmatch`` them)."""
    return re.compile(re.escape(f".{name}.") + _RANDOM_PART + re.escape(TEMP_SUFFIX))


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


# ----------------------------------------------------------------------------- signals


class _SignalGuard:
    """While active (main thread only), SIGINT, SIGTERM and SIGHUP remove the temporary
    file and raise :class:`Interrupted` - once; later signals are ignored, so the cleanup
    on the way out finishes. Inside :meth:`held` the first signal is only recorded, and
    raised when the section ends (or at :meth:`checkpoint`). The previous handlers come
    back on exit, and a signal still pending then is raised.

    Only signals whose handler is the default (SIG_DFL, or Python's KeyboardInterrupt
    handler for SIGINT) are taken over.
    """

    def __init__(self) -> None:
        self.temporary: str | None = None  # removed on a signal or by discard()
        self._previous: dict[int, object] = {}
        self._pending: int | None = None
        self._raised = False
        self._holding = 0

    def __enter__(self) -> _SignalGuard:
        if threading.current_thread() is not threading.main_thread():
            return self
        for signum in SIGNALS:
            try:
                current = signal.getsignal(signum)
                if current in (signal.SIG_DFL, signal.default_int_handler):
                    self._previous[signum] = current
                    signal.signal(signum, self._handle)
            except (ValueError, OSError):  # not settable here (embedded interpreter)
                continue
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self._previous.items():
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signum, previous)  # type: ignore[arg-type]
        self._previous.clear()
        self.checkpoint()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """A section no signal interrupts: one that arrives is raised when it ends."""
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1
        if not self._holding:
            self.checkpoint()

    def checkpoint(self) -> None:
        """Raise the signal recorded in a held section, if any (once)."""
        if self._pending is not None and not self._raised:
            self._raised = True
            raise Interrupted(self._pending)

    def discard(self) -> None:
        """Remove the temporary file, if it still has to be; no signal interrupts this."""
        self._holding += 1
        try:
            tmp, self.temporary = self.temporary, None
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        finally:
            self._holding -= 1

    def _handle(self, signum: int, frame: object) -> None:
        if self._raised or self._pending is not None:
            return  # already on the way out: let the cleanup finish
        if self._holding:
            self._pending = signum
            return
        self._raised = True
        self.discard()
        raise Interrupted(signum)
