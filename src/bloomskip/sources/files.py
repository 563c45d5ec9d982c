"""A lake of Parquet and ORC files: listing it and reading its files, through ``pyarrow.fs``
(local paths, ``file://``, ``s3://``, ``gs://``, ``az://``, ``hdfs://``; made by
:func:`bloomskip.objstore.filesystem`).

A lake is a directory (listed recursively), one file, or a list of files. As Spark and
Hive do, names starting with ``_`` or ``.`` are skipped (``_SUCCESS``, ``_delta_log/``,
``.crc`` files), and so are the files of a bloomskip zone index kept inside the lake;
every other file is data, whatever its name (Spark reads ``events.2024-01-02`` too). A
file that turns out to be no Parquet or ORC file at all is indexed as holding no rows
(:class:`~bloomskip.errors.NotDataFileError`). A local lake is walked here (links
followed, each directory once; names that are not UTF-8 kept), others through
``pyarrow.fs`` or, on object stores, ``obstore``. Each file's format is told by its first
and last bytes (:mod:`bloomskip.formats`).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

from bloomskip import formats
from bloomskip.errors import (
    BloomskipError,
    CorruptFileError,
    NotDataFileError,
    SourceChangedError,
    SourceError,
)
from bloomskip.formats.base import INT96_KEY, JVM_CLOCK_KEY, MARKED_KEY
from bloomskip.hashing.arrow import PhysicalSpec
from bloomskip.objstore import (
    PYARROW_TO_URL,
    azure_account,
    filesystem,
    first_line,
    mtime_ns,
    open_store,
)
from bloomskip.sources.base import IndexRead, Source, SourceFile, local_tag

#: How many files are tried for a schema or a physical type before giving up.
_PROBE_FILES = 20


@dataclass(frozen=True)
class FileSource(Source):
    """A resolved lake: its file system, the URI it was given as, and its root paths."""

    uri: str
    filesystem: pafs.FileSystem
    paths: tuple[str, ...]  # roots: directories or files, in the file system's form

    @property
    def scheme(self) -> str:
        return self.filesystem.type_name  # "local", "s3", "gcs", "hdfs", ...

    def uri_of(self, path: str) -> str:
        """The path as a user (or Spark) writes it: plain for local files, else a URI (on
        Azure in the lake's account: ``abfss://container@account.../path`` when the lake
        was named so, for a reader to read it there and not in the environment's)."""
        if self.scheme == "local":
            return path
        host = self._account_host()
        if host is not None:
            container, _, rest = path.partition("/")
            return f"{urlsplit(self.uri).scheme}://{container}@{host}/{rest}"
        return f"{PYARROW_TO_URL.get(self.scheme, self.scheme)}://{path}"

    def uri_prefix(self) -> str | None:
        """What :meth:`uri_of` puts before every path, if that is all it does (not for an
        abfss lake, whose URIs put the container before the account)."""
        return None if self._account_host() else self.uri_of("")

    def _account_host(self) -> str | None:
        if self.scheme != "abfs":
            return None
        netloc = urlsplit(self.uri.split(",")[0]).netloc
        return netloc.rpartition("@")[2] if "@" in netloc else None

    def to_json(self) -> dict:
        return {"uri": self.uri, "filesystem": self.scheme, "paths": list(self.paths)}

    def same_lake(self, other: Source) -> bool:
        """The same files whatever the lake was called: ``/lake`` and ``file:///lake``,
        ``s3://b/lake`` and ``s3a://b/lake/``; on Azure in the same account (named, or
        the environment's on both sides)."""

        def where(s: FileSource) -> tuple:
            return s.scheme, s.paths, s._account_host()

        return isinstance(other, FileSource) and where(self) == where(other)

    @classmethod
    def from_json(cls, data: dict) -> FileSource:
        paths = data["paths"]
        if (
            not isinstance(data["uri"], str)
            or not isinstance(data["filesystem"], str)
            or not isinstance(paths, list)
            or not paths
            or not all(isinstance(p, str) and p for p in paths)
        ):
            raise CorruptFileError(f"the index's source is malformed: {str(data)[:200]}")
        if data["filesystem"] == "local":
            return cls(uri=data["uri"], filesystem=pafs.LocalFileSystem(), paths=tuple(paths))
        first = data["uri"].split(",")[0]
        if "://" not in first:  # several object-store paths, as older versions named them
            first = f"{PYARROW_TO_URL.get(data['filesystem'], data['filesystem'])}://{paths[0]}"
        f, _ = filesystem(first)
        return cls(uri=data["uri"], filesystem=f, paths=tuple(paths))

    @classmethod
    def resolve(cls, items: Sequence[str | os.PathLike], single: bool) -> FileSource:
        """Paths and URIs (all on one file system) as a lake; ``single``: one item was
        given (a URI is then kept as the lake's name)."""
        fs: pafs.FileSystem | None = None
        paths, texts = [], []
        for item in items:
            text = os.fspath(item)
            if text.startswith("file:/") and not text.startswith("file://"):
                text = "file://" + text[len("file:") :]  # Hadoop's file:/abs, as Spark takes
            if text.startswith("file:") and "%" in text:
                raise SourceError(
                    f"{text}: a file: URI with % means two places - pyarrow decodes %20 "
                    "(a space), Spark and Hadoop take it as written; give the plain path"
                )
            texts.append(text)
            if "://" in text:
                f, p = filesystem(text)
            else:
                f, p = pafs.LocalFileSystem(), os.path.abspath(text)
            if fs is None:
                fs = f
            elif not fs.equals(f):
                raise SourceError(f"{text}: every file of a source must be on one file system")
            paths.append(p.rstrip("/") or "/")
        assert fs is not None
        first = os.fspath(items[0])
        if single and "://" in first:
            uri = first
        elif isinstance(fs, pafs.LocalFileSystem):
            uri = ",".join(paths)  # absolute
        else:  # as given: the scheme and an abfss URI's account say where they are
            uri = ",".join(texts)
        return cls(uri=uri, filesystem=fs, paths=tuple(paths))

    @property
    def on_object_store(self) -> bool:
        return self.scheme in PYARROW_TO_URL

    def list(self) -> list[SourceFile]:
        """Every data file under the roots, sorted by path (with ETags on object stores,
        listed through obstore)."""
        if self.on_object_store:
            return self._list_objects()
        found: dict[str, SourceFile] = {}
        for root in self.paths:
            try:
                info = self.filesystem.get_file_info(root)
            except (OSError, ValueError) as e:
                raise SourceError(f"{self.uri}: cannot stat {root}: {e}") from e
            if info.type == pafs.FileType.NotFound:
                raise SourceError(_missing(self.uri, root))
            if info.type == pafs.FileType.File:
                one = self.stat(info.path)
                if one is not None:
                    found[one.path] = one
                continue
            if self.scheme == "local":
                mine, rels = _walk(root, self.uri)
            else:
                mine, rels = self._list_tree(root)
            kept = _outside_indexes(mine, rels, self.uri_of(root))
            found.update((f.path, f) for f in kept.values())
        return [found[p] for p in sorted(found)]

    def _list_tree(self, root: str) -> tuple[dict[str, SourceFile], list[str]]:
        """The data files under ``root`` through ``pyarrow.fs`` (by path relative to it),
        and every file's relative path."""
        try:
            infos = self.filesystem.get_file_info(pafs.FileSelector(root, recursive=True))
        except (OSError, ValueError) as e:
            raise SourceError(f"{self.uri}: cannot list {root}: {e}") from e
        mine, rels = {}, []
        for fi in infos:
            if fi.type != pafs.FileType.File:
                continue
            rel = fi.path[len(root) :].lstrip("/")
            rels.append(rel)
            if not _hidden(rel):
                mine[rel] = _entry(fi)
        return mine, rels

    def open(self, path: str):
        """A seekable binary file (``pyarrow.NativeFile``) for ``path``."""
        if not _utf8(path):
            raise SourceError(
                f"{self.uri_of(path)}: its name is not UTF-8, and pyarrow opens only UTF-8 "
                "names (rename it)"
            )
        try:
            return self.filesystem.open_input_file(path)
        except (OSError, ValueError) as e:
            raise SourceError(f"{self.uri_of(path)}: cannot open: {e}") from e

    def stat(self, path: str) -> SourceFile | None:
        if self.on_object_store:
            return self._head(path)
        if self.scheme == "local":
            try:
                st = os.stat(path)
            except (FileNotFoundError, NotADirectoryError):
                return None
            except (OSError, ValueError) as e:
                raise SourceError(f"{self.uri_of(path)}: cannot stat: {e}") from None
            if not stat.S_ISREG(st.st_mode):
                return None
            return SourceFile(path, st.st_size, st.st_mtime_ns, local_tag(st))
        info = self.filesystem.get_file_info(path)
        return None if info.type != pafs.FileType.File else _entry(info)

    # -- object stores: listings with ETags -------------------------------------------

    def _store(self, bucket: str):
        account = azure_account(self.uri.split(",")[0]) if self.scheme == "abfs" else None
        config = {"account_name": account} if account else {}
        return open_store(f"{PYARROW_TO_URL[self.scheme]}://{bucket}", **config)

    def _head(self, path: str) -> SourceFile | None:
        import obstore

        bucket, _, key = path.partition("/")
        if not key:
            return None
        try:
            meta = obstore.head(self._store(bucket), key)
        except FileNotFoundError:
            return None
        except Exception as e:
            raise SourceError(f"{self.uri_of(path)}: cannot stat: {first_line(e)}") from None
        return _object_entry(bucket, meta)

    def _list_objects(self) -> list[SourceFile]:
        import obstore

        found: dict[str, SourceFile] = {}
        for root in self.paths:
            single = self._head(root)
            if single is not None:
                found[single.path] = single
                continue
            bucket, _, key = root.partition("/")
            prefix = key.rstrip("/")
            try:
                metas = obstore.list(self._store(bucket), prefix=prefix or None).collect()
            except Exception as e:
                raise SourceError(f"{self.uri}: cannot list {root}: {first_line(e)}") from None
            if not metas:
                raise SourceError(_missing(self.uri, root))
            mine: dict[str, SourceFile] = {}
            rels = []
            for meta in metas:
                name = str(meta["path"])
                rel = name[len(prefix) :].lstrip("/") if prefix else name
                if not rel or name.endswith("/"):
                    continue  # a "directory" marker object, as some clients write
                rels.append(rel)
                if _hidden(rel) or not int(meta["size"]):  # an empty object has no rows;
                    continue  # a "directory" marker listed without its slash (obstore) is one
                mine[rel] = _object_entry(bucket, meta)
            kept = _outside_indexes(mine, rels, self.uri_of(root))
            found.update((f.path, f) for f in kept.values())
        return [found[p] for p in sorted(found)]

    def reader(self, fh, path: str) -> formats.FileReader:
        return formats.open_reader(fh, self.uri_of(path))

    # -- indexing --------------------------------------------------------------------

    def read_for_index(self, file: SourceFile, names: Sequence[str]) -> IndexRead:
        with self.open(file.path) as fh:
            try:
                r = self.reader(fh, file.path)
            except NotDataFileError as e:  # no rows - unless it was being replaced then:
                after = self.stat(file.path)  # the bytes judged must be the file listed
                if e.size != file.size or after is None or after.identity != file.identity:
                    raise SourceChangedError("changed while it was being indexed") from None
                raise
            present = [n for n in names if n in r.schema.names]
            if present:
                table = r.read(present)
            else:  # none: the row count alone, as the footer says (what groups add up to)
                table = pa.table({"rows": pa.nulls(r.num_rows)}).select([])
            doubts = dict(r.doubts(table))  # may read the file again
            for n in names:
                if n not in present:  # readers see nulls, or a column of another case
                    doubts[n] = "not a column of this file"
        after = self.stat(file.path)
        if after is None or after.identity != file.identity:
            raise SourceChangedError("changed while it was being indexed")
        shadowed = self._partition_keys(file.path)
        micro = r.microsecond_columns() & set(names)
        return IndexRead(
            r.format, table, r.unit_rows, shadowed=shadowed, microseconds=micro, doubts=doubts
        )

    @staticmethod
    def _partition_keys(path: str) -> frozenset[str]:
        """The keys of the ``key=value`` directories above ``path``, case folded: below
        the root, as Spark's reader discovers them (matched to columns ignoring case), and
        above it too, as DuckDB's hive detection reads a path (``.../c=DE/`` loaded)."""
        return frozenset(k.casefold() for k, _ in hive_pairs(path))

    def arrow_schema(self, listing: Sequence[SourceFile]) -> pa.Schema:
        """The schema of the first readable file; its INT96 and ORC TIMESTAMP columns are
        marked (:data:`~bloomskip.formats.base.INT96_KEY`, ``JVM_CLOCK_KEY``)."""
        errors = []
        for f in listing[:_PROBE_FILES]:
            try:
                with self.open(f.path) as fh:
                    r = self.reader(fh, f.path)
                    return _mark(r.schema, r)
            except (OSError, pa.ArrowException, BloomskipError) as e:
                errors.append(f"{f.path}: {e}")
        detail = f" ({'; '.join(errors[:3])})" if errors else ""
        raise SourceError(
            f"{self.uri}: no readable Parquet or ORC file to take a schema from{detail}"
        )

    def column_field(self, name: str, listing: Sequence[SourceFile]) -> pa.Field | None:
        """``name`` in the first of the first and last files of the lake (columns are
        added over time) that holds it with a type."""
        for f in _probed(listing):
            try:
                with self.open(f.path) as fh:
                    r = self.reader(fh, f.path)
                    schema = _mark(r.schema, r)
            except (OSError, pa.ArrowException, BloomskipError):
                continue
            i = schema.get_field_index(name)
            if i >= 0 and not pa.types.is_null(schema.field(i).type):
                return schema.field(i)
        return None

    def physical_spec(
        self, column: str, arrow_type: pa.DataType, listing: Sequence[SourceFile]
    ) -> PhysicalSpec | None:
        """How the first readable file holding ``column`` stores it (only Parquet files
        say)."""
        for f in _probed(listing):
            try:
                with self.open(f.path) as fh:
                    return self.reader(fh, f.path).physical_spec(column, arrow_type)
            except (OSError, pa.ArrowException, BloomskipError, KeyError):
                continue
        return None


def _mark(schema: pa.Schema, r: formats.FileReader) -> pa.Schema:
    """``schema`` (of ``r``'s file) with its INT96 and JVM-clock columns marked, and
    itself marked as such (:data:`~bloomskip.formats.base.MARKED_KEY`)."""
    int96, clocks = r.microsecond_columns(), r.jvm_clock_columns()
    for i, f in enumerate(schema):
        keys = {INT96_KEY: b"true"} if f.name in int96 else {}
        keys |= {JVM_CLOCK_KEY: b"true"} if f.name in clocks else {}
        if keys:
            schema = schema.set(i, f.with_metadata({**(f.metadata or {}), **keys}))
    return schema.with_metadata({**(schema.metadata or {}), MARKED_KEY: b"int96,jvm_clock"})


def _probed(listing: Sequence[SourceFile]) -> list[SourceFile]:
    """The files tried for a column: the first and the last :data:`_PROBE_FILES`."""
    if len(listing) <= 2 * _PROBE_FILES:
        return list(listing)
    return [*listing[:_PROBE_FILES], *listing[-_PROBE_FILES:]]


def _missing(uri: str, root: str) -> str:
    return (
        f"{uri} does not exist"
        if uri.rstrip("/").endswith(root)
        else f"{uri}: {root} does not exist"
    )


def _object_entry(bucket: str, meta) -> SourceFile:
    return SourceFile(
        f"{bucket}/{meta['path']}",
        int(meta["size"]),
        mtime_ns(meta["last_modified"]),
        etag(meta.get("e_tag")),
    )


def etag(value: str | None) -> str | None:
    """An ETag in one form, quoted as HTTP writes it: Azure's List Blobs gives ETags
    without their quotes (by design) where a HEAD gives them quoted, and an object must
    look the same both ways, or every file would seem to change while it is read."""
    if value is None or value.startswith(('"', 'W/"')):
        return value
    return f'"{value}"'


def _entry(info: pafs.FileInfo) -> SourceFile:
    return SourceFile(info.path, int(info.size or 0), int(info.mtime_ns or 0))


def _utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _walk(root: str, uri: str) -> tuple[dict[str, SourceFile], list[str]]:
    """The data files under the local directory ``root`` (by path relative to it), and
    every file's relative path (hidden directories are not entered, but for an index's
    ``_manifests``). Symbolic links are followed, as ``pyarrow.fs`` does, but each
    directory is entered once: a link loop (``a -> .``, twice) made pyarrow's listing
    grow exponentially - a hang. Names that are not UTF-8 are kept (undecodable bytes as
    lone surrogates; pyarrow cannot list them), so an index lists them as not indexed."""
    mine: dict[str, SourceFile] = {}
    rels: list[str] = []
    seen: set[tuple[int, int]] = set()
    stack = [(root.rstrip("/"), "", False)]  # (path, path relative to root, hidden)
    while stack:
        path, rel, hidden = stack.pop()
        try:
            st = os.stat(path or "/")
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            with os.scandir(path or "/") as it:
                entries = list(it)
        except OSError as e:
            if not rel:
                raise SourceError(f"{uri}: cannot list {root}: {e.strerror or e}") from None
            continue  # a directory that vanished or cannot be read: as pyarrow, skipped
        prefix = f"{path}/", f"{rel}/" if rel else ""
        for entry in entries:
            name = entry.name
            try:
                if entry.is_dir():
                    if not hidden_name(name) or name == "_manifests":
                        inside = hidden or hidden_name(name)
                        stack.append((prefix[0] + name, prefix[1] + name, inside))
                    continue
                if not entry.is_file():
                    continue  # FIFOs, sockets, devices, dangling links: not data
                child_rel = prefix[1] + name
                rels.append(child_rel)
                if hidden or hidden_name(name):
                    continue
                info = entry.stat()
            except OSError:
                continue
            mine[child_rel] = SourceFile(
                prefix[0] + name, info.st_size, info.st_mtime_ns, local_tag(info)
            )
    return mine, rels


#: A bloomskip index's marker and manifests (``bloomskip.index.layout``): a directory
#: holding one is an index, whose tables are not the lake's data.
_INDEX_FILE = re.compile(r"(?:^|/)(?:_bloomskip_index\.json|_manifests/v\d{20}\.json)\Z")


def _outside_indexes(
    found: dict[str, SourceFile], rels: list[str], where: str
) -> dict[str, SourceFile]:
    """``found`` (by path relative to a listed root, ``where``) without the files of zone
    indexes kept in the lake (of another lake, or of this one): their fragment tables
    are Parquet but not data."""
    roots = {rel[: m.start()] for rel in rels if (m := _INDEX_FILE.search(rel))}
    if not roots:
        return found
    if "" in roots:
        raise SourceError(f"{where} is a bloomskip zone index, not a lake")
    return {r: f for r, f in found.items() if not any(r.startswith(x + "/") for x in roots)}


def hidden_name(name: str) -> bool:
    """Whether a file or directory named ``name`` is no part of a lake, by Spark's rule
    (``HadoopFSUtils.shouldFilterOutPathName``): a name starting with ``.``, or with
    ``_`` unless it holds ``=`` (``_x=1/`` is a partition directory), or a copy in
    progress (``._COPYING_``)."""
    return (
        name.startswith(".")
        or (name.startswith("_") and "=" not in name)
        or name.endswith("._COPYING_")
    )


#: How a partition directory names a null value (Hive's, and Spark's).
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def hive_pairs(path: str) -> tuple[tuple[str, str | None], ...]:
    """The ``key=value`` directories of ``path`` (a file's: its last part is not one), in
    order: ``(key, value)``, both %-unescaped as Spark does, the value None for
    :data:`HIVE_NULL`."""
    out = []
    for part in path.split("/")[:-1]:
        key, eq, value = part.partition("=")
        if eq and key:
            v = unescape(value)
            out.append((unescape(key), None if v == HIVE_NULL else v))
    return tuple(out)


#: ``%`` and the two characters Java's ``Integer.parseInt(s, 16)`` takes (a sign too).
_ESCAPE = re.compile(r"%([+-][0-9A-Fa-f]|[0-9A-Fa-f]{2})")


def unescape(name: str) -> str:
    """A partition directory's key or value as Spark reads it
    (``ExternalCatalogUtils.unescapePathName``): each ``%XX`` is the one character of
    code ``XX`` (``%C3%A9`` is two characters, as Spark has it, not the UTF-8 of one)."""

    def char(m: re.Match) -> str:
        code = int(m.group(1), 16)
        return chr(code) if code >= 0 else m.group(0)

    return _ESCAPE.sub(char, name)


def _hidden(rel: str) -> bool:
    return any(hidden_name(part) for part in rel.split("/"))


__all__ = ["HIVE_NULL", "FileSource", "hive_pairs"]
