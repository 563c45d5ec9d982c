"""A lake of Parquet and ORC files: listing it and reading its files, through ``pyarrow.fs``
(local paths, ``file://``, ``s3://``, ``gs://``, ``hdfs://``).

A lake is a directory (listed recursively), one file, or a list of files. As Spark and
Hive do, names starting with ``_`` or ``.`` are skipped (``_SUCCESS``, ``_delta_log/``,
``.crc`` files), as are files whose extension is not one of a format bloomskip reads
(:data:`bloomskip.formats.EXTENSIONS`; files without an extension are kept). Each file's
format is told by its first bytes (:mod:`bloomskip.formats`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs

from bloomskip import formats
from bloomskip.errors import BloomskipError, SourceChangedError, SourceError
from bloomskip.hashing.arrow import PhysicalSpec
from bloomskip.sources.base import IndexRead, Source, SourceFile

#: How many files are tried for a schema or a physical type before giving up.
_PROBE_FILES = 20
_URI_SCHEME = {"gcs": "gs"}


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
        """The path as a user (or Spark) writes it: plain for local files, else a URI."""
        if self.scheme == "local":
            return path
        return f"{_URI_SCHEME.get(self.scheme, self.scheme)}://{path}"

    def to_json(self) -> dict:
        return {"uri": self.uri, "filesystem": self.scheme, "paths": list(self.paths)}

    @classmethod
    def from_json(cls, data: dict) -> FileSource:
        paths = data["paths"]
        if data["filesystem"] == "local":
            return cls(uri=data["uri"], filesystem=pafs.LocalFileSystem(), paths=tuple(paths))
        f, _ = pafs.FileSystem.from_uri(data["uri"].split(",")[0])
        return cls(uri=data["uri"], filesystem=f, paths=tuple(paths))

    @classmethod
    def resolve(cls, items: Sequence[str | os.PathLike], single: bool) -> FileSource:
        """Paths and URIs (all on one file system) as a lake; ``single``: one item was
        given (a URI is then kept as the lake's name)."""
        fs: pafs.FileSystem | None = None
        paths = []
        for item in items:
            text = os.fspath(item)
            if "://" in text:
                try:
                    f, p = pafs.FileSystem.from_uri(text)
                except (OSError, ValueError) as e:
                    raise SourceError(f"{text}: not a file system URI pyarrow can open: {e}") from e
            else:
                f, p = pafs.LocalFileSystem(), os.path.abspath(text)
            if fs is None:
                fs = f
            elif not fs.equals(f):
                raise SourceError(f"{text}: every file of a source must be on one file system")
            paths.append(p.rstrip("/") or "/")
        assert fs is not None
        first = os.fspath(items[0])
        uri = first if single and "://" in first else ",".join(paths)  # local: absolute
        return cls(uri=uri, filesystem=fs, paths=tuple(paths))

    def list(self) -> list[SourceFile]:
        """Every data file under the roots, sorted by path."""
        found: dict[str, SourceFile] = {}
        for root in self.paths:
            try:
                info = self.filesystem.get_file_info(root)
            except (OSError, ValueError) as e:
                raise SourceError(f"{self.uri}: cannot stat {root}: {e}") from e
            if info.type == pafs.FileType.NotFound:
                raise SourceError(f"{self.uri}: {root} does not exist")
            if info.type == pafs.FileType.File:
                found[info.path] = _entry(info)
                continue
            try:
                infos = self.filesystem.get_file_info(pafs.FileSelector(root, recursive=True))
            except (OSError, ValueError) as e:
                raise SourceError(f"{self.uri}: cannot list {root}: {e}") from e
            for fi in infos:
                if fi.type != pafs.FileType.File:
                    continue
                rel = fi.path[len(root) :].lstrip("/")
                if _hidden(rel) or not _data_file(fi.base_name):
                    continue
                found[fi.path] = _entry(fi)
        return [found[p] for p in sorted(found)]

    def open(self, path: str):
        """A seekable binary file (``pyarrow.NativeFile``) for ``path``."""
        try:
            return self.filesystem.open_input_file(path)
        except (OSError, ValueError) as e:
            raise SourceError(f"{self.uri_of(path)}: cannot open: {e}") from e

    def stat(self, path: str) -> SourceFile | None:
        info = self.filesystem.get_file_info(path)
        return None if info.type != pafs.FileType.File else _entry(info)

    def reader(self, fh, path: str) -> formats.FileReader:
        return formats.open_reader(fh, self.uri_of(path))

    # -- indexing --------------------------------------------------------------------

    def read_for_index(self, file: SourceFile, names: Sequence[str]) -> IndexRead:
        label = self.uri_of(file.path)
        with self.open(file.path) as fh:
            r = self.reader(fh, file.path)
            missing = [n for n in names if n not in r.schema.names]
            if missing:
                raise BloomskipError(f"{label}: no column {', '.join(missing)}")
            table = r.read(names)
        after = self.stat(file.path)
        if after is None or after.identity != file.identity:
            raise SourceChangedError("changed while it was being indexed")
        return IndexRead(r.format, table, r.unit_rows)

    def arrow_schema(self, listing: Sequence[SourceFile]) -> pa.Schema:
        """The schema of the first readable file."""
        errors = []
        for f in listing[:_PROBE_FILES]:
            try:
                with self.open(f.path) as fh:
                    return self.reader(fh, f.path).schema
            except (OSError, pa.ArrowException, BloomskipError) as e:
                errors.append(f"{f.path}: {e}")
        detail = f" ({'; '.join(errors[:3])})" if errors else ""
        raise SourceError(
            f"{self.uri}: no readable Parquet or ORC file to take a schema from{detail}"
        )

    def physical_spec(
        self, column: str, arrow_type: pa.DataType, listing: Sequence[SourceFile]
    ) -> PhysicalSpec | None:
        """How the first readable file stores ``column`` (only Parquet files say)."""
        for f in listing[:_PROBE_FILES]:
            try:
                with self.open(f.path) as fh:
                    return self.reader(fh, f.path).physical_spec(column, arrow_type)
            except (OSError, pa.ArrowException, BloomskipError, KeyError):
                continue
        return None


def _entry(info: pafs.FileInfo) -> SourceFile:
    return SourceFile(info.path, int(info.size or 0), int(info.mtime_ns or 0))


def _hidden(rel: str) -> bool:
    return any(part.startswith(("_", ".")) for part in rel.split("/"))


def _data_file(name: str) -> bool:
    ext = os.path.splitext(name)[1].lower()
    return ext == "" or name.lower().endswith(formats.EXTENSIONS)


__all__ = ["FileSource"]
