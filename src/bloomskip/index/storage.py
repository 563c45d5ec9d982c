"""Where an index lives: a local directory or an object-store prefix, behind one interface.

An index is a set of objects under a root: ``file:///path``, a plain local path, or
``s3://bucket/prefix``, ``gs://...``, ``az://...`` (also ``abfs://``, ``azure://``).
:func:`open_storage` picks the implementation:

* :class:`LocalStorage` - POSIX files. Tables are written to a temporary name, fsynced
  and renamed; :meth:`Storage.create` is an exclusive create (a hard link that fails if
  the name exists), so exactly one of two racing writers creates a name.
* :class:`ObjectStorage` - S3, GCS and Azure through ``obstore`` (the Python binding of
  Rust's ``object_store``). :meth:`Storage.create` is a conditional put (S3
  ``If-None-Match: *``, GCS generation preconditions, Azure ``If-None-Match``).
  Credentials, region and endpoint come from the standard environment variables
  (``AWS_ACCESS_KEY_ID``, ``AWS_ENDPOINT_URL``, ``AWS_ALLOW_HTTP=true`` for a plain-http
  endpoint, ``GOOGLE_APPLICATION_CREDENTIALS``, ``AZURE_STORAGE_ACCOUNT_NAME``...).

Every name an index uses is relative to the root and checked (:func:`check_rel`): plain
segments of ``[A-Za-z0-9_.=-]``, no ``..``, nothing absolute. Locally, no read, write or
delete goes through a symbolic link or leaves the root. Reads count their bytes
(:attr:`Storage.bytes_read`), so benchmarks can say what a query read.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import stat
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from bloomskip.errors import CorruptFileError, SourceError
from bloomskip.index import tables
from bloomskip.objstore import SCHEMES, first_line, open_store

#: What a relative name may look like: segments of safe characters, joined by "/".
_REL = re.compile(r"^[A-Za-z0-9_.=-]+(/[A-Za-z0-9_.=-]+)*\Z")
MAX_REL = 400
#: Buffers per ``preadv`` call (Linux and the BSDs allow 1024).
_IOV_MAX = 1024
#: A local file written at least this big is synced and dropped from the page cache at
#: once, durable or not (a task's part, a slab, a large table): a build writes a gigabyte
#: or more that is read once, or a row at a time, later. Keeping it cached makes the
#: kernel find room for it - evict a lake that a scan may be reading, or, on a VM that
#: hands free memory back to its host, take fresh pages - which cost 2-3 s of system time
#: per GB here, where syncing and dropping each file lets the next one reuse its pages
#: (``bench/writes.py``, 1.25 GiB in 40 MiB files, each fsynced: 2.5-4.5 s kept cached,
#: 1.0-1.1 s dropped). RocksDB drops its compaction output for the same reason.
DROP_BYTES = 1 << 20
#: What :meth:`Storage.write` takes: bytes, or buffers (bytes, memoryviews, contiguous
#: arrays) to write back to back.
Body = bytes | bytearray | memoryview | Sequence[Any]


def check_rel(rel: str) -> str:
    """``rel`` if it is a safe relative name under an index root, else CorruptFileError."""
    if (
        not isinstance(rel, str)
        or len(rel) > MAX_REL
        or not _REL.match(rel)
        or any(part in (".", "..") for part in rel.split("/"))
    ):
        raise CorruptFileError(f"{rel!r} is not a name inside an index (refused)")
    return rel


@dataclass(frozen=True)
class Entry:
    """A listed object: its name under the root, size and age."""

    rel: str
    size: int
    mtime: float  # seconds since the epoch


class Storage(ABC):
    """The objects under one index root."""

    uri: str

    def __init__(self) -> None:
        self.bytes_read = 0
        self.requests = 0

    @property
    @abstractmethod
    def local(self) -> bool:
        """True for a directory of the local file system."""

    @abstractmethod
    def read(self, rel: str) -> bytes:
        """The whole object; :class:`FileNotFoundError` if there is none."""

    @abstractmethod
    def read_ranges(
        self, rel: str, ranges: Sequence[tuple[int, int]], *, once: bool = False
    ) -> list[bytes]:
        """``(start, length)`` byte ranges of one object, in the order asked. ``once``:
        nobody reads these bytes again (a slab job's share of a part), so the local store
        lets the page cache drop them."""

    def read_into(self, rel: str, start: int, buffers: Sequence[memoryview]) -> int:
        """Bytes ``start`` onwards into ``buffers`` (writable byte views), in order; the
        count read, short only where the object ends. This reads one range and copies it;
        the local store reads straight into the buffers."""
        total = sum(b.nbytes for b in buffers)
        (data,) = self.read_ranges(rel, [(start, total)])
        at = 0
        for b in buffers:
            n = max(0, min(b.nbytes, len(data) - at))
            b[:n] = data[at : at + n]
            at += n
        return len(data)

    @abstractmethod
    def size(self, rel: str) -> int | None:
        """The object's size, or None if there is none."""

    @abstractmethod
    def write(self, rel: str, data: Body, *, durable: bool = True) -> None:
        """Write ``data`` under a *new* name (indexes never rewrite a name); whole or not
        at all. ``data`` may be a list of buffers, written back to back (the local store
        writes them as they are, without joining them first). ``durable=False``: an
        intermediate of one build (a task's part, whose rows carry checksums), which need
        not survive a crash of the machine - the local store then skips the ``fsync``,
        unless the file is :data:`DROP_BYTES` or more, which it syncs and drops from the
        page cache."""

    @abstractmethod
    def create(self, rel: str, data: bytes) -> bool:
        """Create ``rel`` only if no object has that name: True if this call created it,
        False if the name was taken (by another writer, or an earlier try of this one)."""

    @abstractmethod
    def list(self, prefix: str = "", *, strict: bool = False) -> list[Entry]:
        """Every object whose name starts with ``prefix`` (a directory: ``"columns/"``).
        Locally, symbolic links and other odd entries are never listed (nor followed);
        ``strict`` refuses them instead, and a directory that cannot be read, with
        CorruptFileError: a listing that must not miss anything (the versions) says so."""

    @abstractmethod
    def delete(self, rel: str) -> None:
        """Remove one object (missing already: no error)."""

    def root_is_object(self) -> bool:
        """Whether a file or object has the root's own name (on an object store, where a
        key can be both an object and a prefix); locally the root is checked on open."""
        return False

    def label(self, rel: str) -> str:
        """The object as a user would name it, for messages."""
        return f"{self.uri.rstrip('/')}/{rel}"

    def _count(self, n: int) -> None:
        self.bytes_read += n
        self.requests += 1

    # -- Parquet tables ---------------------------------------------------------------

    def write_table(self, rel: str, table: pa.Table, **options) -> int:
        """``table`` as Parquet (zstd) under the new name ``rel``, with a checksum per row
        group (:mod:`.tables`); returns its size."""
        buf = tables.encode(table, rel, **options)
        self.write(rel, memoryview(buf))
        return buf.size

    def read_table(
        self,
        rel: str,
        columns: list[str] | None = None,
        *,
        max_bytes: int | None = None,
        max_rows: int | None = None,
    ) -> pa.Table:
        """A whole Parquet table, its checksums and columns checked; CorruptFileError if
        it is missing, unreadable, damaged or (``max_bytes``, ``max_rows``) larger than it
        can be."""
        if max_bytes is not None:
            size = self.size(rel)
            if size is not None and size > max_bytes:
                raise CorruptFileError(
                    f"{self.label(rel)}: {size:,} bytes, more than the index's table can "
                    f"hold ({max_bytes:,}); damaged"
                )
        try:
            data = self.read(rel)
        except FileNotFoundError:
            raise CorruptFileError(
                f"{self.label(rel)}: listed by the index manifest but missing"
            ) from None
        table = tables.decode(data, rel, self.label(rel), max_rows)
        return table.select(columns) if columns is not None else table

    def open_table(self, rel: str, *, max_rows: int | None = None) -> pq.ParquetFile:
        """A Parquet table read lazily through ranged reads (its footer, then only the row
        groups asked for, each checked against its checksum)."""
        size = self.size(rel)
        if size is None:
            raise CorruptFileError(f"{self.label(rel)}: listed by the index manifest but missing")
        return tables.lazy(RangeFile(self, rel, size), rel, self.label(rel), max_rows)


class RangeFile(io.RawIOBase):
    """A read-only, seekable file over one object, reading by ranges (for pyarrow)."""

    def __init__(self, storage: Storage, rel: str, size: int) -> None:
        self.storage, self.rel, self._size, self._pos = storage, rel, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def read(self, n: int = -1) -> bytes:
        end = self._size if n is None or n < 0 else min(self._size, self._pos + n)
        if end <= self._pos:
            return b""
        (data,) = self.storage.read_ranges(self.rel, [(self._pos, end - self._pos)])
        self._pos = end
        return data

    def readinto(self, b) -> int:
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)

    def size(self) -> int:
        return self._size


# ----------------------------------------------------------------------------- local


class LocalStorage(Storage):
    """An index in a local (or mounted) directory."""

    def __init__(self, root: str) -> None:
        super().__init__()
        self.root = os.path.abspath(root)
        self.uri = self.root

    @property
    def local(self) -> bool:
        return True

    def root_is_object(self) -> bool:
        return os.path.lexists(self.root) and not os.path.isdir(self.root)

    def _dir(self, parts: Sequence[str], rel: str, *, create: bool = False) -> int:
        """A descriptor of the directory ``parts`` under the root, each step opened
        relative to the one before and never through a symbolic link, so that no swap
        of a directory for a link, even between two calls, leads an operation outside
        the root; ``create``: make the missing ones (the root too)."""
        if create:
            os.makedirs(self.root, exist_ok=True)
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            for part in parts:
                try:
                    nxt = self._step(fd, part, rel)
                except FileNotFoundError:
                    if not create:
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, dir_fd=fd)
                    nxt = self._step(fd, part, rel)
                os.close(fd)
                fd = nxt
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _step(self, fd: int, part: str, rel: str) -> int:
        """The directory ``part`` in the directory ``fd``, not through a link."""
        try:
            return os.open(part, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
        except OSError as e:
            if e.errno not in _NOT_A_DIR:
                raise
            try:
                link = stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode)
            except OSError:
                link = False
            what = "a symbolic link" if link else "not a directory"
            raise CorruptFileError(f"{self.label(rel)}: {part} is {what} (refused)") from None

    def _parent(self, rel: str, *, create: bool = False) -> tuple[int, str]:
        """The descriptor of ``rel``'s directory (see :meth:`_dir`) and its last name."""
        check_rel(rel)
        *parts, name = rel.split("/")
        return self._dir(parts, rel, create=create), name

    @contextlib.contextmanager
    def _errors(self, rel: str, what: str):
        """OS errors as one-line SourceErrors naming the object (a missing one stays a
        FileNotFoundError: callers say what it means)."""
        try:
            yield
        except (FileNotFoundError, CorruptFileError):
            raise
        except OSError as e:
            raise SourceError(f"{self.label(rel)}: cannot {what}: {e.strerror or e}") from None

    def _open(self, rel: str) -> int:
        """A descriptor for reading ``rel``: never through a link, never blocking (a FIFO
        in an index must not hang its reader), and only of a regular file."""
        dfd, name = self._parent(rel)
        try:
            fd = os.open(name, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
        except OSError as e:
            if e.errno in _NOT_A_DIR:  # O_NOFOLLOW's answer to a link
                raise CorruptFileError(f"{self.label(rel)}: is a symbolic link (refused)") from None
            raise
        finally:
            os.close(dfd)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise CorruptFileError(f"{self.label(rel)}: not a regular file")
        return fd

    def read(self, rel: str) -> bytes:
        with self._errors(rel, "read"):
            return self._read(rel)

    def _read(self, rel: str) -> bytes:
        fd = self._open(rel)
        try:
            with os.fdopen(fd, "rb", closefd=False) as fh:
                data = fh.read()
        finally:
            os.close(fd)
        self._count(len(data))
        return data

    def read_ranges(
        self, rel: str, ranges: Sequence[tuple[int, int]], *, once: bool = False
    ) -> list[bytes]:
        with self._errors(rel, "read"):
            return self._read_ranges(rel, ranges, once)

    def _read_ranges(
        self, rel: str, ranges: Sequence[tuple[int, int]], once: bool = False
    ) -> list[bytes]:
        fd = self._open(rel)
        try:
            size = os.fstat(fd).st_size
            out = []
            if len(ranges) > 1 and hasattr(os, "posix_fadvise"):
                # several small ranges (a lookup's bit planes): ask for all of them at
                # once, so that those not in the page cache are read from disk together
                try:
                    for start, n in ranges:
                        if 0 <= int(start) < size and int(n) > 0:
                            os.posix_fadvise(fd, int(start), int(n), os.POSIX_FADV_WILLNEED)
                except OSError:  # advice only
                    pass
            for start, n in ranges:
                start, n = int(start), int(n)
                if start < 0 or n < 0:
                    raise CorruptFileError(f"{self.label(rel)}: a read at {start}+{n} (refused)")
                # never more than the file holds: a damaged length must not allocate it
                out.append(os.pread(fd, max(0, min(n, size - start)), start) if n else b"")
                if once and n:
                    _drop(fd, start, n)
        finally:
            os.close(fd)
        self.bytes_read += sum(len(b) for b in out)
        self.requests += len(out)
        return out

    def read_into(self, rel: str, start: int, buffers: Sequence[memoryview]) -> int:
        if not hasattr(os, "preadv"):  # pragma: no cover - not on Linux
            return super().read_into(rel, start, buffers)
        with self._errors(rel, "read"):
            if start < 0:
                raise CorruptFileError(f"{self.label(rel)}: a read at {start} (refused)")
            fd = self._open(rel)
            try:
                got, at, todo = 0, int(start), [b for b in buffers if b.nbytes]
                while todo:
                    batch = todo[:_IOV_MAX]
                    n = os.preadv(fd, batch, at)
                    got, at = got + n, at + n
                    if n < sum(b.nbytes for b in batch):
                        break  # the file ends (a regular file reads short nowhere else)
                    todo = todo[_IOV_MAX:]
            finally:
                os.close(fd)
        self._count(got)
        return got

    def size(self, rel: str) -> int | None:
        try:
            with self._errors(rel, "stat"):
                dfd, name = self._parent(rel)
                try:
                    st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                finally:
                    os.close(dfd)
        except FileNotFoundError:
            return None
        return st.st_size if stat.S_ISREG(st.st_mode) else None

    def write(self, rel: str, data: Body, *, durable: bool = True) -> None:
        with self._errors(rel, "write"):
            self._write(rel, data, durable)

    def _write(self, rel: str, data: Body, durable: bool = True) -> None:
        dfd, name = self._parent(rel, create=True)
        try:
            with contextlib.suppress(FileNotFoundError):
                if stat.S_ISLNK(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode):
                    raise CorruptFileError(f"{self.label(rel)}: is a symbolic link (refused)")
            tmp = f"{name}.tmp-{uuid.uuid4().hex}"
            _write_new(dfd, tmp, data, durable)
            try:
                # a link put there since the check is replaced, never followed
                os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=dfd)
                raise
        finally:
            os.close(dfd)

    def create(self, rel: str, data: bytes) -> bool:
        with self._errors(rel, "create"):
            return self._create(rel, data)

    def _create(self, rel: str, data: bytes) -> bool:
        dfd, name = self._parent(rel, create=True)
        try:
            tmp = f".tmp-{uuid.uuid4().hex}.json"
            _write_new(dfd, tmp, data, True)
            try:
                os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
            except FileExistsError:
                return False
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=dfd)
            os.fsync(dfd)
            return True
        finally:
            os.close(dfd)

    def list(self, prefix: str = "", *, strict: bool = False) -> list[Entry]:
        parts = prefix.rstrip("/").split("/") if prefix else []
        if parts:
            check_rel("/".join(parts))
        try:  # the top must be a real directory under the root (not a link)
            top = self._dir(parts, prefix)
        except CorruptFileError:
            if strict:
                raise
            return []
        except (FileNotFoundError, NotADirectoryError):  # or the root is no directory
            return []
        except OSError as e:
            raise SourceError(f"{self.label(prefix)}: cannot be listed: {e.strerror}") from None

        def unreadable(e: OSError) -> None:
            if strict:
                raise CorruptFileError(f"{e.filename}: cannot be listed: {e.strerror}")

        out, base = [], "/".join(parts)
        try:
            # fwalk: every directory entered by descriptor, never through a link
            for dirpath, dirnames, filenames, dfd in os.fwalk(
                ".", dir_fd=top, onerror=unreadable, follow_symlinks=False
            ):
                if strict and dirnames:
                    raise CorruptFileError(
                        f"{self.label(_join(base, dirpath, dirnames[0]))}: unexpected here"
                    )
                for name in filenames:
                    try:
                        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                    except FileNotFoundError:
                        continue
                    rel = _join(base, dirpath, name)
                    if not stat.S_ISREG(st.st_mode):
                        if strict:
                            raise CorruptFileError(
                                f"{self.label(rel)}: not a regular file (refused)"
                            )
                        continue  # symbolic links and anything odd: never ours
                    if _REL.match(rel):
                        out.append(Entry(rel, st.st_size, st.st_mtime))
        finally:
            os.close(top)
        return sorted(out, key=lambda e: e.rel)

    def delete(self, rel: str) -> None:
        with self._errors(rel, "delete"), contextlib.suppress(FileNotFoundError):
            dfd, name = self._parent(rel)
            try:
                # a name swapped for a link after this check: unlink removes the link
                if stat.S_ISREG(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode):
                    os.unlink(name, dir_fd=dfd)
            finally:
                os.close(dfd)


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
#: What opening a symbolic link (or a file) as a directory, without following, raises.
_NOT_A_DIR = (errno.ELOOP, errno.ENOTDIR)


def _join(base: str, dirpath: str, name: str) -> str:
    """``name`` in ``fwalk``'s ``dirpath`` (``./a/b``), under ``base``, as a relative name."""
    sub = dirpath[2:] if dirpath.startswith("./") else "" if dirpath == "." else dirpath
    return "/".join(p for p in (base, sub, name) if p)


def _write_new(dfd: int, name: str, data: Body, durable: bool) -> None:
    """A new file ``name`` in the directory ``dfd`` holding ``data`` (never through a link)."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666, dir_fd=dfd)
    try:
        if isinstance(data, bytes | bytearray | memoryview):
            with os.fdopen(fd, "wb", closefd=False) as fh:
                fh.write(data)
                fh.flush()
        else:
            _write_all(fd, data)
        big = os.fstat(fd).st_size >= DROP_BYTES
        if durable or big:
            os.fsync(fd)
        if big:
            _drop(fd, 0, 0)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dfd)
        raise
    os.close(fd)


def _drop(fd: int, start: int, n: int) -> None:
    """Let the page cache drop bytes ``[start, start + n)`` of ``fd`` (``n`` 0: to the
    end); only clean pages go, so a file is synced first."""
    if hasattr(os, "posix_fadvise"):
        with contextlib.suppress(OSError):  # advice only
            os.posix_fadvise(fd, start, n, os.POSIX_FADV_DONTNEED)


def _write_all(fd: int, buffers: Sequence) -> None:
    """``buffers`` back to back (``writev``, :data:`_IOV_MAX` at a time; a short write
    goes on where it stopped)."""
    todo = [b for b in buffers if memoryview(b).nbytes]
    todo.reverse()  # popped from the end
    while todo:
        batch = todo[-1 : -_IOV_MAX - 1 : -1]
        n = os.writev(fd, batch)
        while todo and n >= memoryview(todo[-1]).nbytes:
            n -= memoryview(todo.pop()).nbytes
        if n:
            todo[-1] = memoryview(todo[-1]).cast("B")[n:]


# ---------------------------------------------------------------------------- objects


class ObjectStorage(Storage):
    """An index under an object-store prefix, through obstore."""

    def __init__(self, uri: str) -> None:
        super().__init__()
        self.uri = uri.rstrip("/")
        self._store = open_store(self.uri)

    @property
    def local(self) -> bool:
        return False

    def root_is_object(self) -> bool:
        import obstore

        parent, _, name = self.uri.rpartition("/")
        if not name or parent.endswith(":/"):  # a bucket's root
            return False
        try:
            obstore.head(open_store(parent), name)
        except FileNotFoundError:
            return False
        except Exception as e:
            raise SourceError(f"{self.uri}: cannot stat: {first_line(e)}") from None
        return True

    def _call(self, what: str, rel: str, fn):
        import obstore.exceptions as oe

        try:
            return fn()
        except FileNotFoundError:
            raise
        except oe.NotFoundError:
            raise FileNotFoundError(self.label(rel)) from None
        except oe.BaseError as e:
            raise SourceError(f"{self.label(rel)}: cannot {what}: {first_line(e)}") from None

    def read(self, rel: str) -> bytes:
        import obstore

        check_rel(rel)
        data = bytes(self._call("read", rel, lambda: obstore.get(self._store, rel).bytes()))
        self._count(len(data))
        return data

    def read_ranges(
        self, rel: str, ranges: Sequence[tuple[int, int]], *, once: bool = False
    ) -> list[bytes]:
        import obstore

        check_rel(rel)
        asked = [(int(s), int(n)) for s, n in ranges]
        if any(s < 0 or n < 0 for s, n in asked):
            raise CorruptFileError(f"{self.label(rel)}: a read at a negative offset (refused)")
        wanted = [(s, n) for s, n in asked if n]
        if not wanted:
            return [b"" for _ in asked]
        starts = [s for s, _ in wanted]
        ends = [s + n for s, n in wanted]
        try:
            got = self._call(
                "read", rel, lambda: obstore.get_ranges(self._store, rel, starts=starts, ends=ends)
            )
        except SourceError as e:
            if "416" not in str(e):
                raise
            raise CorruptFileError(  # a range starting past the end: the object is short
                f"{self.label(rel)}: shorter than the index says (nothing at byte {max(starts)})"
            ) from None
        data = iter(bytes(b) for b in got)
        out = [next(data) if n else b"" for _, n in asked]
        self.bytes_read += sum(len(b) for b in out)
        self.requests += 1
        return out

    def size(self, rel: str) -> int | None:
        import obstore

        check_rel(rel)
        try:
            return int(self._call("stat", rel, lambda: obstore.head(self._store, rel))["size"])
        except FileNotFoundError:
            return None

    def write(self, rel: str, data: Body, *, durable: bool = True) -> None:
        import obstore

        check_rel(rel)
        if isinstance(data, bytes):
            body = data
        elif isinstance(data, bytearray | memoryview):
            body = bytes(data)  # obstore iterates others
        else:
            body = b"".join(data)
        self._call("write", rel, lambda: obstore.put(self._store, rel, body))

    def create(self, rel: str, data: bytes) -> bool:
        import obstore
        import obstore.exceptions as oe

        check_rel(rel)
        try:
            obstore.put(self._store, rel, data, mode="create")
        except (oe.AlreadyExistsError, oe.PreconditionError):
            return False
        except oe.BaseError as e:
            raise SourceError(f"{self.label(rel)}: cannot create: {first_line(e)}") from None
        return True

    def list(self, prefix: str = "", *, strict: bool = False) -> list[Entry]:
        import obstore

        if prefix:
            check_rel(prefix.rstrip("/"))
        found = self._call(
            "list", prefix, lambda: obstore.list(self._store, prefix=prefix or None).collect()
        )
        out = []
        for meta in found:
            rel = str(meta["path"])
            if _REL.match(rel):
                out.append(Entry(rel, int(meta["size"]), meta["last_modified"].timestamp()))
        return sorted(out, key=lambda e: e.rel)

    def delete(self, rel: str) -> None:
        import obstore

        check_rel(rel)
        with contextlib.suppress(FileNotFoundError):
            self._call("delete", rel, lambda: obstore.delete(self._store, rel))


def is_object_uri(text: str) -> bool:
    """Whether ``text`` names an object store (not a local path or ``file://``)."""
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme.lower() in SCHEMES


def open_storage(index_path: str | os.PathLike) -> Storage:
    """The storage of an index: a local directory (a path or ``file://``), or an object
    store prefix (``s3://``, ``gs://``, ``az://``...)."""
    text = os.fspath(index_path)
    if text.startswith("file://"):
        return LocalStorage(text[len("file://") :])
    if "://" in text:
        if not is_object_uri(text):
            scheme = text.partition("://")[0]
            raise SourceError(
                f"{text}: {scheme}:// is not a store for an index (a local path, file://, "
                "s3://, gs:// or az://)"
            )
        return ObjectStorage(text)
    return LocalStorage(text)


def age_s(entry: Entry) -> float:
    """Seconds since ``entry`` was last written."""
    return time.time() - entry.mtime


__all__ = [
    "Entry",
    "LocalStorage",
    "ObjectStorage",
    "RangeFile",
    "Storage",
    "age_s",
    "check_rel",
    "is_object_uri",
    "open_storage",
]
