"""The data files an index covers: listing a source and opening its files, through
``pyarrow.fs`` (so local paths, ``file://``, ``s3://``, ``gs://`` and ``hdfs://`` work).

A *source* is a directory (listed recursively), one file, or a list of files. As Spark
and Hive do, names starting with ``_`` or ``.`` are skipped (``_SUCCESS``,
``_delta_log/``, ``.crc`` files), as are files whose extension is not a Parquet or ORC
one (``.parquet``, ``.parq``, ``.pq``, ``.orc``; files without an extension are kept).

A Lance dataset directory is a source too (:mod:`bloomskip.lance.source`): its
fragments are listed as files named ``fragment:<id>``.

A file's identity is ``(path, size, mtime_ns)``: an index trusts what it knows of a file
only while both size and modification time are unchanged. A file rewritten to the same
size within the file system's timestamp granularity cannot be told apart; the README
says so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyarrow.fs as pafs

from bloomskip.errors import SourceError

DATA_EXTENSIONS = (".parquet", ".parq", ".pq", ".orc")


@dataclass(frozen=True)
class SourceFile:
    """One data file as listed: its path in its file system, size and mtime."""

    path: str
    size: int
    mtime_ns: int

    @property
    def identity(self) -> tuple[str, int, int]:
        return (self.path, self.size, self.mtime_ns)


@dataclass(frozen=True)
class Source:
    """A resolved source: its file system, the URI it was given as, and its root path."""

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


_URI_SCHEME = {"gcs": "gs"}


def resolve(source: str | os.PathLike | Sequence[str | os.PathLike]) -> Source:
    """Resolve a path, URI or list of them (all on one file system) to a :class:`Source`.

    A Lance dataset directory (it holds ``_versions/``) resolves to a
    :class:`bloomskip.lance.source.LanceSource`, whose fragments stand for files."""
    items: Iterable[str | os.PathLike]
    if isinstance(source, str | os.PathLike):
        from bloomskip.lance.dataset import is_lance_dataset

        if is_lance_dataset(source):
            from bloomskip.lance.source import LanceSource

            return LanceSource.at(os.fspath(source))
        items = [source]
    else:
        items = list(source)
        if not items:
            raise SourceError("an empty list of files is not a source")
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
    single = isinstance(source, str | os.PathLike) and "://" in os.fspath(source)
    uri = os.fspath(source) if single else ",".join(paths)  # local paths: absolute
    return Source(uri=uri, filesystem=fs, paths=tuple(paths))


def from_json(data: dict) -> Source:
    """The :class:`Source` an index manifest recorded."""
    if data["filesystem"] == "lance":
        from bloomskip.lance.source import LanceSource

        return LanceSource.from_json(data)
    paths = data["paths"]
    if data["filesystem"] == "local":
        return Source(uri=data["uri"], filesystem=pafs.LocalFileSystem(), paths=tuple(paths))
    f, _ = pafs.FileSystem.from_uri(data["uri"].split(",")[0])
    return Source(uri=data["uri"], filesystem=f, paths=tuple(paths))


def _entry(info: pafs.FileInfo) -> SourceFile:
    return SourceFile(info.path, int(info.size or 0), int(info.mtime_ns or 0))


def _hidden(rel: str) -> bool:
    return any(part.startswith(("_", ".")) for part in rel.split("/"))


def _data_file(name: str) -> bool:
    ext = os.path.splitext(name)[1].lower()
    return ext == "" or ext in DATA_EXTENSIONS or name.lower().endswith(DATA_EXTENSIONS)
