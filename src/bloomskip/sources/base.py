"""What a zone index covers: a *source* lists its files (or what stands for them) and
reads one of them for indexing.

A source is a lake of files (:mod:`.files`), or a dataset whose units are not plain
files (a Lance dataset's fragments, :mod:`bloomskip.lance.source`). Every source
implements :class:`Source`; the index and the Spark pipeline use nothing else of it.

A file's identity is ``(path, size, mtime_ns, etag)``: an index trusts what it knows of a
file only while all of them are unchanged. Object stores give an ETag (a content hash for
whole-object uploads): their modification times have a second's precision, and a
same-size rewrite within that second is told apart by it. A local file's ``etag`` is its
status change time (``ctime:<ns>``, :func:`local_tag`), which no one can set: a rewrite
whose modification time was put back (``cp -p``, ``rsync -t``, ``tar``) still changes it.
A file rewritten to the same size within the file system's timestamp granularity cannot
be told apart; the docs say so.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from bloomskip.hashing.arrow import PhysicalSpec


@dataclass(frozen=True)
class SourceFile:
    """One data file as listed: its path in its file system, size and mtime."""

    path: str
    size: int
    mtime_ns: int
    etag: str | None = None  # object stores: the ETag; local files: local_tag()

    @property
    def identity(self) -> tuple[str, int, int, str | None]:
        return (self.path, self.size, self.mtime_ns, self.etag)


def unchanged(row: Mapping[str, Any], f: SourceFile) -> bool:
    """Whether an index's fragment ``row`` (``size``, ``mtime_ns``, ``etag``) still
    describes the file ``f`` as listed now."""
    indexed = (row["size"], row["mtime_ns"], row.get("etag"))
    return same_identity(indexed, (f.size, f.mtime_ns, f.etag))


#: How a local file's ``etag`` starts: its status change time follows.
LOCAL_TAG = "ctime:"


def local_tag(st: os.stat_result) -> str:
    """A local file's change tag: its status change time, set by the kernel on every
    write, rename into place and ``utime`` (so a restored modification time shows)."""
    return f"{LOCAL_TAG}{st.st_ctime_ns}"


def same_identity(indexed: Sequence[Any], now: Sequence[Any]) -> bool:
    """Whether a file's ``(size, mtime_ns, etag)`` as indexed is what it is ``now``. An
    index made before local files had a change tag holds None for it: such a file is
    trusted on its size and time, as that index was, and takes its tag at the index's
    next commit."""
    if tuple(indexed) == tuple(now):
        return True
    old, new = indexed[2], now[2]
    legacy = old is None and isinstance(new, str) and new.startswith(LOCAL_TAG)
    return legacy and tuple(indexed[:2]) == tuple(now[:2])


@dataclass(frozen=True)
class IndexRead:
    """One file's columns, read for indexing: its format, the table, the rows of each
    unit (row group, stripe; None for sources that are not files) and, for sources whose
    rows have gaps (a Lance fragment with deletions), the row offset of each value."""

    format: str
    table: pa.Table
    groups: Sequence[int] | None = None
    row_offsets: np.ndarray | None = None
    #: Columns (case-folded names) the file holds whose value readers take from a
    #: partition directory (``c=DE/``) instead: the file's values are not what they read.
    shadowed: frozenset[str] = frozenset()
    #: Columns engines read at whole microseconds although they hold nanoseconds
    #: (Parquet INT96): indexed only by an index whose literals allow for it.
    microseconds: frozenset[str] = frozenset()
    #: Columns whose values readers disagree on (ORC CHAR(n), dates before the
    #: Gregorian cutover in a hybrid-calendar file), and why: left unindexed here.
    doubts: Mapping[str, str] = field(default_factory=dict)


class Source(ABC):
    """A source of data for a zone index."""

    #: The value encoding an index uses by default for this source: ``"parquet"``
    #: (PLAIN bytes of the physical type, as Parquet's own filters) or ``"arrow"``.
    default_encoding: ClassVar[str] = "parquet"

    uri: str

    @property
    @abstractmethod
    def scheme(self) -> str:
        """What kind of source and storage it is, as manifests record it ("local",
        "s3", "gcs", "lance", ...)."""

    @abstractmethod
    def list(self) -> list[SourceFile]:
        """Every file (or unit standing for one) of the source, sorted by path."""

    @abstractmethod
    def to_json(self) -> dict:
        """What a manifest records to find the source again
        (:func:`bloomskip.sources.from_json`)."""

    def same_lake(self, other: Source) -> bool:
        """Whether ``other`` names the same data (a lake may have several names)."""
        return self.to_json() == other.to_json()

    @abstractmethod
    def read_for_index(self, file: SourceFile, names: Sequence[str]) -> IndexRead:
        """The columns ``names`` of ``file``, for indexing; raises
        :class:`~bloomskip.errors.BloomskipError` if the file changed since it was
        listed or cannot be read."""

    @abstractmethod
    def arrow_schema(self, listing: Sequence[SourceFile]) -> pa.Schema:
        """The source's Arrow schema (``listing``: its files, as listed now)."""

    def column_field(self, name: str, listing: Sequence[SourceFile]) -> pa.Field | None:
        """``name`` as a file of ``listing`` holds it with a type (not all nulls), for a
        column :meth:`arrow_schema` lacks or has only nulls of; None: not found (a
        table's schema is its own, so a table source never finds one)."""
        return None

    def uri_of(self, path: str) -> str:
        """A path as a user (or Spark) writes it."""
        return path

    def physical_spec(
        self, column: str, arrow_type: pa.DataType, listing: Sequence[SourceFile]
    ) -> PhysicalSpec | None:
        """How the source's files store ``column`` (read as ``arrow_type``), if they say
        (Parquet's physical type), so zone filters equal the filters those files carry."""
        return None

    def fragment_id_of(self, path: str) -> int | None:
        """The fragment id an index should give ``path``, if the source has its own
        (Lance's); None: the index numbers files itself."""
        return None

    # -- tables (Delta Lake, Iceberg): snapshots, partitions ---------------------------

    def snapshot(self) -> dict[str, Any] | None:
        """The table snapshot :meth:`list` reads (``{"table": "delta", "version": N}``,
        ``{"table": "iceberg", "snapshot_id": N}``), as an index manifest records it; None
        for sources that are not tables."""
        return None

    def listing_key(self) -> object | None:
        """An object standing for what :meth:`list` returns while that cannot change (a
        table snapshot, kept and reused by its library layer), so that what is worked out
        from it may be kept with it; None for a listing (a directory changes any time)."""
        return None

    def as_of(self, ref: int) -> Source:
        """The same table at the snapshot ``ref`` (a Delta version, an Iceberg snapshot
        id): time travel. Only tables have snapshots."""
        from bloomskip.errors import InvalidParameterError

        raise InvalidParameterError(
            f"{self.uri} is not a table: it has no versions or snapshots to read as of {ref}"
        )

    def following(self, schema: pa.Schema) -> Source:
        """This source reading the columns of ``schema`` (an index's, from an earlier
        snapshot) under the names they had there: a table column renamed since is found
        by its field id (Iceberg) or physical name (Delta column mapping)."""
        return self

    def unsettled(self) -> dict[str, pa.DataType]:
        """Names a latest read gives another column than the snapshot's schema does, with
        the type it reads (an Iceberg table's current schema, changed since its current
        snapshot): no index answers for them. Empty for most sources."""
        return {}

    def partition_values(self, listing: Sequence[SourceFile]) -> dict[str, pa.Array]:
        """Columns every row of a file holds one value of (a table's identity partition
        columns): per column, an Arrow array with each file's value, in the order of
        ``listing``. Empty for sources without partitions."""
        return {}


class DatasetSource(Source):
    """A dataset kind of :data:`bloomskip.sources.DATASETS` (Lance, Delta, Iceberg): a
    directory or URI it recognises (``recognise``), named by one normalised ``uri``
    (``normalise``), which is also all a manifest records to find it again."""

    #: ``recognise(path) -> bool``: is ``path`` a dataset of this kind?
    recognise: ClassVar[Callable[[str | os.PathLike], bool]]
    #: ``normalise(path) -> str``: the URI the source records for ``path``.
    normalise: ClassVar[Callable[[str], str]]

    @classmethod
    def claims(cls, path: str | os.PathLike) -> bool:
        return cls.recognise(path)

    @classmethod
    def at(cls, path: str) -> Source:
        return cls(uri=cls.normalise(path))  # type: ignore[call-arg]

    @classmethod
    def from_json(cls, data: dict) -> Source:
        return cls.at(data["uri"])


__all__ = [
    "LOCAL_TAG",
    "DatasetSource",
    "IndexRead",
    "Source",
    "SourceFile",
    "local_tag",
    "same_identity",
    "unchanged",
]
