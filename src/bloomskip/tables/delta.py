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

from bloomskip.errors import (
    BloomskipError,
    CorruptFileError,
    MissingDependencyError,
    SourceError,
    UnsupportedFileError,
)
from bloomskip.objstore import first_line
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

#: Open tables kept between loads: the latest per URI (moved forward with
#: ``update_incremental``, far cheaper than a fresh load), with the identity of the commit
#: file it stands on, and some pinned versions.
_LATEST: OrderedDict[str, tuple[Any, tuple | None]] = OrderedDict()
_PINNED: OrderedDict[tuple[str, int], Any] = OrderedDict()
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


def _pinned(uri: str, version: int | None) -> Any:
    """A table at ``version`` (None: a fresh load of the latest); kept for reuse."""
    if version is None:
        return _open(uri, None)
    with _LOCK:
        dt = _PINNED.get((uri, version))
        if dt is not None:
            _PINNED.move_to_end((uri, version))
            return dt
    dt = _open(uri, version)
    with _LOCK:
        _remember(_PINNED, (uri, version), dt)
    return dt


def require_deltalake() -> Any:
    """The ``deltalake`` module, or a typed error saying how to get it."""
    try:
        import deltalake
    except ImportError as e:
        raise MissingDependencyError(
            f"reading Delta tables needs deltalake: pip install 'bloomskip[tables]' ({e})"
        ) from None
    return deltalake


def is_delta_table(path: str | os.PathLike) -> bool:
    """True if ``path`` is a directory holding ``_delta_log/`` (local or a URI)."""
    text = os.fspath(path)
    if text.startswith("iceberg://") or text.endswith(".metadata.json"):
        return False
    if "://" in text and not text.startswith("file://"):
        try:
            fs, root = pafs.FileSystem.from_uri(text)
            info = fs.get_file_info(root.rstrip("/") + "/" + LOG_DIR)
        except (OSError, ValueError):
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

    @staticmethod
    def claims(path: str | os.PathLike) -> bool:
        return is_delta_table(path)

    @classmethod
    def at(cls, path: str) -> DeltaSource:
        return cls(uri=table_uri(path))

    @classmethod
    def from_json(cls, data: dict) -> DeltaSource:
        return cls.at(data["uri"])

    def files(self) -> FileSource:
        fs = self._state.get("files")
        if fs is None:
            fs = self._state["files"] = FileSource.resolve([self.uri], single=True)
        return fs

    def table(self) -> Any:
        """The ``deltalake.DeltaTable`` at the version this source reads."""
        return _pinned(self.uri, self.loaded().id)

    def _load(self) -> Snapshot:
        if self.version is not None:
            dt = _pinned(self.uri, self.version)
            with _LOCK:
                return self._describe(dt)
        with _LOCK:  # the latest: one table kept per URI, brought forward incrementally
            kept = _LATEST.get(self.uri)
            dt = None
            if kept is not None and self._commit_stamp(kept[0].version()) == kept[1]:
                dt = kept[0]  # the commit it stands on is the one it read: the same table
                try:
                    dt.update_incremental()
                except Exception:
                    dt = None
            if dt is None:
                dt = _open(self.uri, None)
            _remember(_LATEST, self.uri, (dt, self._commit_stamp(dt.version())))
            return self._describe(dt)

    def _commit_stamp(self, version: int) -> tuple | None:
        """The identity (size, mtime, ETag) of the log's commit file of ``version``: a
        table deleted and made again at the same place has other commit files, so a
        table kept open is only moved forward while its last commit is still there."""
        path = f"{self.files().paths[0].rstrip('/')}/{LOG_DIR}/{int(version):020d}.json"
        try:
            found = self.files().stat(path)
        except (OSError, BloomskipError):
            return None
        return None if found is None else (found.size, found.mtime_ns, found.etag)

    def _describe(self, dt: Any) -> Snapshot:
        """The snapshot ``dt`` is at (read at once: ``dt`` may move on later)."""
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
                mapped=mode in ("name", "id"),
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
        self._state["raw_paths"] = by_raw
        ref = {"table": "delta", "version": version}
        return Snapshot(ref, version, schema, columns, tuple(files))

    def _fs_path(self, fs: FileSource, raw: str) -> str:
        """A data file's path in the table's file system, from the add action's path
        (relative and percent-encoded, or an absolute URI)."""
        decoded = urllib.parse.unquote(raw)
        if "://" in decoded or decoded.startswith("file:"):
            try:
                other, path = (
                    (pafs.LocalFileSystem(), decoded.split(":", 1)[1].lstrip("/"))
                    if decoded.startswith("file:")
                    else pafs.FileSystem.from_uri(decoded)
                )
            except (OSError, ValueError) as e:
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
                raise SourceError(f"{self.uri_of(p)}: not a data file of {self.uri} at {snap.ref}")
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
