"""A Delta Lake table as a source of a zone index, read with ``deltalake`` (delta-rs).

Owns: telling a Delta table from a directory (it holds ``_delta_log/``), loading one
version with ``DeltaTable(uri, version=...)``, and describing it as a
:class:`~.base.Snapshot`: the add actions of ``get_add_actions(flatten=True)`` are the
data files (path relative to the table and percent-encoded as the Delta protocol writes
it, size, ``modificationTime``, row count, typed partition values); the schema is
``DeltaTable.schema()`` as Arrow; with column mapping (``delta.columnMapping.mode`` name
or id) each column is found in the files under ``delta.columnMapping.physicalName``.

Reading rows: ``deltalake``'s own reader (``to_pyarrow_dataset``) refuses tables with
deletion vectors. So a data file is read directly (:func:`~.base.read_file_rows`: the
row groups its candidate zones overlap, partition columns filled from the add action)
and the rows its deletion vector removes are dropped: ``DeltaTable.deletion_vectors()``
decodes them (a keep mask per file, in file row order; rows past the end of a mask are
kept). A deletion vector that matches no data file of the snapshot is an error, never
ignored. The rows equal those of ``DeltaTable.scan()`` (tests compare them).

Loads are cheap when nothing changed: an opened table and its snapshot are kept per
URI and version. The latest is reused while the commit file it read is unchanged and
the log has no next commit file (a commit creates it, put-if-absent) - one stat each;
otherwise it is moved forward with ``DeltaTable.update_incremental()``. A table deleted
and written again at the same place has other commit files, so it is read afresh.

Storage: local paths, ``file://`` and the object stores both delta-rs and pyarrow open
from the same environment variables (``AWS_ENDPOINT_URL``, ``AWS_ALLOW_HTTP``, ...).
"""

from __future__ import annotations

import os
import threading
import urllib.parse
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs

from bloomskip._lazy import require
from bloomskip.errors import (
    BloomskipError,
    CorruptFileError,
    SourceError,
    UnsupportedFileError,
)
from bloomskip.objstore import filesystem, first_line
from bloomskip.sources.files import FileSource
from bloomskip.tables.base import (
    ReadTask,
    Snapshot,
    TableColumn,
    TableFile,
    TableSource,
    normalize_schema,
    read_file_rows,
)

LOG_DIR = "_delta_log"


@dataclass
class _Kept:
    """An open ``DeltaTable``, the commit file identity of its version, its snapshot."""

    dt: Any
    stamp: tuple | None
    described: tuple[Snapshot, dict[str, str]] | None = None  # (snapshot, raw paths)


#: Open tables kept between loads, each with the identity of the commit file its version
#: stands on and, once described, its snapshot: the latest per URI (moved forward with
#: ``update_incremental``, far cheaper than a fresh load) and some pinned versions.
_LATEST: OrderedDict[str, _Kept] = OrderedDict()
_PINNED: OrderedDict[tuple[str, int], _Kept] = OrderedDict()
_KEEP = 16
_LOCK = threading.Lock()


def _remember(cache: OrderedDict, key: Any, value: Any) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > _KEEP:
        cache.popitem(last=False)


def _open(uri: str, version: int | None) -> Any:
    deltalake = require_deltalake()
    try:
        return deltalake.DeltaTable(uri, version=version)
    except Exception as e:  # TableNotFoundError, DeltaError, OSError...
        at = "" if version is None else f" at version {version}"
        raise SourceError(f"{uri}: cannot open the Delta table{at}: {first_line(e)}") from None


def require_deltalake() -> Any:
    """The ``deltalake`` module, or a typed error saying how to get it."""
    return require("deltalake", "reading Delta tables", "tables")


def is_delta_table(path: str | os.PathLike) -> bool:
    """True if ``path`` is a directory holding ``_delta_log/`` (local or a URI)."""
    text = os.fspath(path)
    if text.startswith("iceberg://") or text.endswith(".metadata.json"):
        return False
    if "://" in text and not text.startswith("file://"):
        try:
            fs, root = filesystem(text)
            info = fs.get_file_info(root.rstrip("/") + "/" + LOG_DIR)
        except (SourceError, OSError, ValueError, pa.ArrowException):
            return False
        return info.type == pafs.FileType.Directory
    if text.startswith("file://"):
        text = text[len("file://") :]
    return os.path.isdir(os.path.join(text, LOG_DIR))


def table_uri(path: str | os.PathLike) -> str:
    """The table as delta-rs opens it: local paths absolute, URIs as given."""
    text = os.fspath(path)
    if text.startswith("file://"):
        text = text[len("file://") :]
    return text.rstrip("/") if "://" in text else os.path.abspath(text)


@dataclass(frozen=True)
class DeltaSource(TableSource):
    """A Delta table at one version (``version`` None: the latest, when first used)."""

    kind = "delta"

    recognise = staticmethod(is_delta_table)
    normalise = staticmethod(table_uri)

    def files(self) -> FileSource:
        fs = self._state.get("files")
        if fs is None:
            fs = self._state["files"] = FileSource.resolve([self.uri], single=True)
        return fs

    def table(self) -> Any:
        """The ``deltalake.DeltaTable`` at the version this source reads."""
        return self._pinned(self.loaded().id).dt

    def _pinned(self, version: int) -> _Kept:
        """The table at ``version``, kept for reuse while its commit file is the same."""
        stamp = self._commit_stamp(version)
        with _LOCK:
            kept = _PINNED.get((self.uri, version))
            if kept is not None and stamp is not None and kept.stamp == stamp:
                _PINNED.move_to_end((self.uri, version))
                return kept
        kept = _Kept(_open(self.uri, version), stamp)
        with _LOCK:
            _remember(_PINNED, (self.uri, version), kept)
        return kept

    def _load(self) -> Snapshot:
        if self.version is not None:
            kept = self._pinned(self.version)
            with _LOCK:
                return self._use(kept)
        with _LOCK:  # the latest: one table kept per URI, brought forward incrementally
            kept = _LATEST.get(self.uri)
            if (
                kept is not None
                and kept.stamp is not None
                and kept.stamp == self._commit_stamp(kept.dt.version())
            ):
                # The commit it stands on is the one it read: the same table. No commit
                # file after it (a commit creates the next one, put-if-absent): the latest.
                version = kept.dt.version()
                if kept.described is None or not self._no_commit(version + 1):
                    try:
                        kept.dt.update_incremental()
                    except Exception:
                        kept = None
                if kept is not None and kept.dt.version() != version:
                    kept = _Kept(kept.dt, self._commit_stamp(kept.dt.version()))
            else:
                kept = None
            if kept is None:
                dt = _open(self.uri, None)
                kept = _Kept(dt, self._commit_stamp(dt.version()))
            _remember(_LATEST, self.uri, kept)
            return self._use(kept)

    def _use(self, kept: _Kept) -> Snapshot:
        """``kept``'s snapshot (described once per version), now this source's."""
        if kept.described is None:
            kept.described = self._describe(kept.dt)
        snap, raw_paths = kept.described
        self._state["raw_paths"] = raw_paths
        return snap

    def _no_commit(self, version: int) -> bool:
        """True only if the log has no commit file of ``version`` (an error: not known)."""
        path = f"{self.files().paths[0].rstrip('/')}/{LOG_DIR}/{int(version):020d}.json"
        try:
            return self.files().stat(path) is None
        except (OSError, BloomskipError):
            return False

    def _commit_stamp(self, version: int) -> tuple | None:
        """The identity (size, mtime, ETag) of the log's commit file of ``version`` (None:
        absent): a table deleted and made again at the same place has other commit
        files, so a table kept open is only reused while its commit is still there."""
        path = f"{self.files().paths[0].rstrip('/')}/{LOG_DIR}/{int(version):020d}.json"
        try:
            found = self.files().stat(path)
        except (OSError, BloomskipError):
            return None
        return None if found is None else (found.size, found.mtime_ns, found.etag)

    def _describe(self, dt: Any) -> tuple[Snapshot, dict[str, str]]:
        """The snapshot ``dt`` is at (read at once: ``dt`` may move on later), and each
        data file's path as its add action writes it."""
        try:
            version = int(dt.version())
            schema = pa.schema(dt.schema().to_arrow())
            meta = dt.metadata()
            actions = dt.get_add_actions(flatten=True)
            parts_of = list(meta.partition_columns)

            def column(name: str) -> list:  # one column at a time: whole tables convert slowly
                return pa.chunked_array(actions.column(name)).to_pylist()

            raw_paths, sizes = column("path"), column("size_bytes")
            mtimes, counts = column("modification_time"), column("num_records")
            values = [column(f"partition.{c}") for c in parts_of]
        except Exception as e:
            raise SourceError(f"{self.uri}: cannot read the Delta log: {first_line(e)}") from None
        mode = (meta.configuration or {}).get("delta.columnMapping.mode", "none")
        parts = set(parts_of)
        columns = {}
        for f in schema:
            physical = f.name
            if mode in ("name", "id"):
                raw = (f.metadata or {}).get(b"delta.columnMapping.physicalName")
                if raw is None:
                    raise UnsupportedFileError(
                        f"{self.uri}: column mapping {mode}, but {f.name} has no physical name"
                    )
                physical = raw.decode()
            columns[f.name] = TableColumn(
                f.name,
                _plain(f.type),
                None if f.name in parts else physical,
                partition=f.name in parts,
                mapping=physical if mode in ("name", "id") else None,
            )
        schema = normalize_schema(schema)
        fs = self.files()
        root = fs.paths[0].rstrip("/") + "/"
        files, by_raw = [], {}
        for i, raw in enumerate(raw_paths):
            plain = "%" not in raw and ":" not in raw  # relative, nothing encoded
            path = root + raw.lstrip("/") if plain else self._fs_path(fs, raw)
            by_raw[path] = raw
            nrec = counts[i]
            files.append(
                TableFile(
                    path,
                    int(sizes[i]),
                    int(mtimes[i] or 0) * 1_000_000,
                    None if nrec is None else int(nrec),
                    "parquet",
                    tuple((c, v[i]) for c, v in zip(parts_of, values, strict=True)),
                )
            )
        files.sort(key=lambda f: f.path)
        ref = {"table": "delta", "version": version}
        return Snapshot(ref, version, schema, columns, tuple(files)), by_raw

    def _fs_path(self, fs: FileSource, raw: str) -> str:
        """A data file's path in the table's file system, from the add action's path
        (relative and percent-encoded, or an absolute URI)."""
        decoded = urllib.parse.unquote(raw)
        if "://" in decoded or decoded.startswith("file:"):
            try:
                other, path = (
                    (pafs.LocalFileSystem(), decoded.split(":", 1)[1].lstrip("/"))
                    if decoded.startswith("file:")
                    else filesystem(decoded)
                )
            except (SourceError, OSError, ValueError) as e:
                raise CorruptFileError(f"{self.uri}: data file {raw!r}: {e}") from None
            if not other.equals(fs.filesystem):
                raise UnsupportedFileError(
                    f"{self.uri}: data file {decoded} is on another file system than the table"
                )
            return "/" + path if isinstance(other, pafs.LocalFileSystem) else path
        return fs.paths[0].rstrip("/") + "/" + decoded.lstrip("/")

    # -- reading rows -------------------------------------------------------------------

    def read_tasks(self, paths: Sequence[str] | None = None) -> list[DeltaReadTask]:
        snap = self.loaded()
        by_path = snap.by_path()
        wanted = list(by_path) if paths is None else list(paths)
        for p in wanted:
            if p not in by_path:
                shown = p if "://" in p else self.uri_of(p)
                raise SourceError(f"{shown}: not a data file of {self.uri} at {snap.ref}")
        deleted = self._deleted(set(wanted))
        fs = self.files()
        return [
            DeltaReadTask(
                self.uri,
                p,
                self.uri_of(p),
                by_path[p].size,
                fs,
                snap.columns,
                dict(by_path[p].partition),
                deleted.get(p),
            )
            for p in wanted
        ]

    def _deleted(self, wanted: set[str]) -> dict[str, np.ndarray]:
        """Row positions deletion vectors remove, per data file of ``wanted``."""
        self.loaded()
        dt = self.table()
        try:
            protocol = dt.protocol()
            features = set(protocol.reader_features or ())
        except Exception:
            features = set()
        if "deletionVectors" not in features:
            return {}
        raw_paths = self._state.get("raw_paths") or {}
        by_raw = {raw: path for path, raw in raw_paths.items()}
        out: dict[str, np.ndarray] = {}
        try:
            batches = list(dt.deletion_vectors())
        except Exception as e:
            raise SourceError(
                f"{self.uri}: cannot read its deletion vectors: {first_line(e)}"
            ) from None
        root = self.uri if "://" in self.uri else "file://" + self.uri
        for b in batches:
            batch = pa.record_batch(b)
            uris = batch.column("filepath").to_pylist()
            masks = batch.column("selection_vector")
            for i, uri in enumerate(uris):
                path = _match(uri, root.rstrip("/") + "/", by_raw)
                if path is None:
                    raise CorruptFileError(
                        f"{self.uri}: a deletion vector of {uri} matches no data file of "
                        f"version {self.loaded().id}; rows cannot be read exactly"
                    )
                if path not in wanted:
                    continue
                keep = np.asarray(masks[i].values.to_numpy(zero_copy_only=False), dtype=np.bool_)
                out[path] = np.flatnonzero(~keep).astype(np.int64)
        return out


def _match(uri: str, prefix: str, by_raw: dict[str, str]) -> str | None:
    """The data file a deletion vector's file URI names: the table root joined with the
    add action's (still encoded) path, or that path itself when absolute."""
    if uri in by_raw:
        return by_raw[uri]
    if uri.startswith(prefix) and uri[len(prefix) :] in by_raw:
        return by_raw[uri[len(prefix) :]]
    for raw, path in by_raw.items():
        if uri.endswith("/" + raw.lstrip("/")):
            return path
    return None


def _plain(t: pa.DataType) -> pa.DataType:
    return normalize_schema(pa.schema([pa.field("x", t)])).field(0).type


@dataclass(frozen=True)
class DeltaReadTask(ReadTask):
    """A Delta data file: read directly, its deletion vector's rows dropped."""

    fs: FileSource | None = None
    columns: dict[str, TableColumn] | None = None
    partition: dict[str, Any] | None = None
    deleted: np.ndarray | None = None  # sorted row positions the deletion vector removes

    def read(
        self, zones: Sequence[tuple[int, int]] | None, names: Sequence[str]
    ) -> Iterator[pa.Table]:
        assert self.fs is not None and self.columns is not None
        missing = [n for n in names if n not in self.columns]
        if missing:
            raise BloomskipError(f"{self.table}: no column {', '.join(missing)}")
        yield from read_file_rows(
            self.fs, self, self.columns, self.partition or {}, self.deleted, zones, names
        )


__all__ = ["DeltaReadTask", "DeltaSource", "is_delta_table", "require_deltalake", "table_uri"]
