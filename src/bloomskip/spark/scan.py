"""Reading a lake with Spark through a zone index: only the files that may match.

:func:`plan_read` asks the index which files may hold rows matching ``where`` and
returns a DataFrame over *those files only*, with ``where`` itself still applied - so the
rows are exactly those of ``spark.read.parquet(source).where(where)``.

How: the index answers with its candidates (:meth:`~bloomskip.index.ZoneIndex.query`):
files whose zones may match, and - when it checks the source (``check_source=True``, the
default) - every file added or rewritten since indexing, in full; files removed since
are not listed, so never read. Spark is then handed exactly those paths and the lake's
schema, so it lists nothing else: a lookup's planning does not grow with the number of
files in the lake. The schema is inferred by Spark once per :class:`IndexedLake` (one
listing, at the first query), or given. ``check_source=False`` lists nothing at all:
for a lake that is only appended to and refreshed after each append.

When the index cannot answer - missing or unreadable, a predicate it cannot parse, an
index of another source - the DataFrame reads every file, and :attr:`ReadPlan.notes`
says why. The index of a Delta or Iceberg table is refused: Spark's file readers would
return rows its deletes removed (``spark.read.format("bloomskip")`` reads tables).
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections import Counter, OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partialmethod
from typing import Any
from urllib.parse import urlsplit

from bloomskip._json import attributes
from bloomskip.errors import BloomskipError, InvalidParameterError, UnsupportedFileError
from bloomskip.expr.bind import without_unknown
from bloomskip.expr.sql import parse
from bloomskip.index import store
from bloomskip.index.layout import NOT_DATA
from bloomskip.index.query import MAX_IN_FPP, QueryResult, ZoneIndex, open_index
from bloomskip.index.storage import open_storage
from bloomskip.spark.local import LOCAL_ROWS, read_local, why_not_local
from bloomskip.spark.session import require_pyspark, session_zone
from bloomskip.units import human_bytes

log = logging.getLogger("bloomskip.spark")


@dataclass
class ReadPlan:
    """A DataFrame over the files that may match, and what was skipped and why."""

    df: Any  # pyspark.sql.DataFrame
    where: str
    source: str
    index: str
    files_total: int = 0
    files_skipped: int = 0
    bytes_total: int = 0
    bytes_skipped: int = 0
    zones_total: int = 0
    zones_candidate: int = 0
    read_reasons: dict[str, int] = field(default_factory=dict)  # why files are read
    skip_reasons: dict[str, int] = field(default_factory=dict)  # why files are skipped
    notes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # files left out
    query: QueryResult | None = None
    seconds: float = 0.0  # planning: the index query and the DataFrame over candidates
    #: Who reads the candidates: "spark" (the files) or "driver" (their zones' rows,
    #: narrowed by hash, as a local relation: :mod:`bloomskip.spark.local`).
    way: str = "spark"
    way_why: str | None = None  # why Spark reads them, when the driver could have
    rows_read: int = 0  # on the driver: rows of the candidate zones read
    rows_kept: int = 0  # on the driver: rows that may match, handed to Spark

    @property
    def files_read(self) -> int:
        return self.files_total - self.files_skipped

    @property
    def bytes_read(self) -> int:
        return self.bytes_total - self.bytes_skipped

    def summary(self) -> str:
        """One paragraph: what is read, what is skipped and why."""
        text = (
            f"bloomskip: reading {self.files_read:,} of {self.files_total:,} files "
            f"({human_bytes(self.bytes_read)} of {human_bytes(self.bytes_total)})"
        )
        if self.zones_total:
            text += f"; {self.zones_candidate:,} of {self.zones_total:,} zones may match"
        if self.skip_reasons:
            why = ", ".join(f"{r} ({n:,})" for r, n in self.skip_reasons.items())
            text += f"; skipped: {why}"
        if self.read_reasons:
            why = ", ".join(f"{r} ({n:,})" for r, n in self.read_reasons.items())
            text += f"; read: {why}"
        if self.way == "driver":
            text += (
                f"; read on the driver: {self.rows_read:,} rows of the candidate zones, "
                f"{self.rows_kept:,} may match"
            )
        text += f"; planned in {self.seconds * 1000:.0f} ms"
        for note in self.notes:
            text += f"\n  note: {note}"
        return text

    #: What ``plan_read`` decided, as JSON.
    to_json = partialmethod(
        attributes,
        "where source index files_total files_read files_skipped bytes_total bytes_read "
        "bytes_skipped zones_total zones_candidate read_reasons skip_reasons way rows_read "
        "rows_kept notes seconds:6",
    )


def read(
    spark,
    source: str | os.PathLike | Sequence[str | os.PathLike],
    index_path: str | os.PathLike,
    where: str,
    **kwargs: Any,
):
    """A DataFrame of the rows of ``source`` matching ``where`` that opens only the files
    the index at ``index_path`` cannot rule out (see :func:`plan_read`)."""
    return plan_read(spark, source, index_path, where, **kwargs).df


def plan_read(
    spark,
    source: str | os.PathLike | Sequence[str | os.PathLike],
    index_path: str | os.PathLike,
    where: str,
    *,
    format: str | None = None,
    options: Mapping[str, Any] | None = None,
    schema: Any = None,
    max_in_fpp: float = MAX_IN_FPP,
    local_rows: int = LOCAL_ROWS,
) -> ReadPlan:
    """Plan a read of ``source`` (read as ``format``, by default the index's: parquet or
    orc) for the Spark SQL predicate ``where``; ``options`` and ``schema`` go to Spark's
    reader. The plan's ``df`` equals ``spark.read.format(format).load(source)
    .where(where)`` row for row; ``summary()`` says what it skips and why.

    For many queries over one lake, :func:`open_lake` once and ``plan`` each query: the
    schema is then inferred once, not per query."""
    lake = IndexedLake(spark, source, index_path, format=format, options=options, schema=schema)
    return lake.plan(where, max_in_fpp=max_in_fpp, local_rows=local_rows)


class IndexedLake:
    """A lake and its index, opened for many queries (:meth:`plan`, :meth:`read`);
    :func:`open_lake` is another name for it. Spark infers the schema here, once (unless
    ``schema`` is given), as a catalog table holds one; every query lists the files
    afresh, so files added, rewritten or deleted since are seen."""

    def __init__(
        self,
        spark,
        source: str | os.PathLike | Sequence[str | os.PathLike],
        index_path: str | os.PathLike,
        *,
        format: str | None = None,
        options: Mapping[str, Any] | None = None,
        schema: Any = None,
    ) -> None:
        require_pyspark()
        paths = [source] if isinstance(source, str | os.PathLike) else list(source)
        self.spark = spark
        self.paths = [os.fspath(p) for p in paths]
        self.index_path = os.fspath(index_path)
        self.options = {k: str(v) for k, v in (options or {}).items()}
        self.schema = schema
        self._format = format
        self._none = None  # no rows, with the lake's schema

    def _index(self, notes: list[str]) -> ZoneIndex | None:
        try:
            return _open(self.index_path)
        except (BloomskipError, OSError) as e:
            notes.append(f"index not used: {e}")
            return None

    def _dataframe(self, fmt: str):
        """Every file of the source, as Spark lists them (the schema is kept)."""
        reader = self.spark.read.format(fmt).options(**self.options)
        if self.schema is not None:
            reader = reader.schema(self.schema)
        df = reader.load(self.paths[0] if len(self.paths) == 1 else self.paths)
        if self.schema is None:  # inferred once: later queries pass it and list nothing
            self.schema = df.schema
        return df

    def _files(self, fmt: str, paths: list[str]):
        """Exactly ``paths``, with the lake's schema (and its partition columns: the
        lake's root is Spark's ``basePath``); Spark lists nothing else."""
        if self.schema is None:
            self._dataframe(fmt)
        if not paths:
            return self._empty()
        reader = self.spark.read.format(fmt).options(**self.options).schema(self.schema)
        base = _base_path(self.paths, paths)
        if base is not None:
            reader = reader.option("basePath", base)
        conf = self.spark.conf
        key = "spark.sql.sources.parallelPartitionDiscovery.threshold"
        before = conf.get(key, None)
        conf.set(key, str(max(len(paths) + 1, 32)))  # a listing job per read costs ~0.1 s
        try:
            return reader.load([_glob_escaped(_spark_path(p)) for p in paths])
        finally:
            conf.set(key, before) if before is not None else conf.unset(key)

    def _unseen(self, index: ZoneIndex, fmt: str, files) -> set[str]:
        """The candidates Spark's reader of this lake would not read (see
        :func:`_unseen_by_spark`); Spark's schema says whether it has partitions."""
        if len(self.paths) != 1 or not files:
            return set()
        if self.schema is None:
            self._dataframe(fmt)
        assert self.schema is not None
        in_files = {n.lower() for n in index.manifest.schema.names}
        partitioned = any(n.lower() not in in_files for n in self.schema.fieldNames())
        return _unseen_by_spark(index, self.options, files, partitioned)

    def _local(self, plan: ReadPlan, index, expr, fmt: str, max_in_fpp: float, limit: int):
        """The candidates' rows read on the driver (a local relation), or None: Spark
        reads the candidate files (``plan.notes`` says why, where it is not plain)."""
        result = plan.query
        assert result is not None and index is not None
        if not result.files:
            return None
        if self.schema is None:
            self._dataframe(fmt)
        why = why_not_local(result, index, self.schema, fmt, self.options, plan.where, limit, expr)
        if why is None:
            try:
                got = read_local(
                    self.spark, index, result, expr, self.schema, max_in_fpp, self._empty()
                )
            except Exception as e:  # any doubt: Spark reads the files
                why = f"read by Spark: the driver could not read the candidates exactly ({e})"
                plan.notes.append(why)
            else:
                plan.way = "driver"
                plan.rows_read, plan.rows_kept = got.rows_read, got.rows_kept
                plan.notes.extend(n for n in got.notes if n not in plan.notes)
                return got.df
        plan.way_why = why
        return None

    def _empty(self):
        """No rows, with the lake's schema (~20 ms to make: made once per lake)."""
        if self._none is None:
            self._none = _empty(self.spark, self.schema)
        return self._none

    def read(self, where: str, **kwargs: Any):
        """The DataFrame of :meth:`plan`."""
        return self.plan(where, **kwargs).df

    def plan(
        self,
        where: str,
        *,
        max_in_fpp: float = MAX_IN_FPP,
        check_source: bool = True,
        local_rows: int = LOCAL_ROWS,
    ) -> ReadPlan:
        """The rows matching the Spark SQL predicate ``where``, from only the files the
        index cannot rule out, and what was skipped and why. ``check_source=False``:
        trust the index and list nothing (files added since the last refresh are not
        seen). Candidates of at most ``local_rows`` rows are read on the driver and
        handed to Spark as a local relation (:mod:`bloomskip.spark.local`; 0: never)."""
        if isinstance(local_rows, bool) or not isinstance(local_rows, int) or local_rows < 0:
            raise InvalidParameterError(
                f"local_rows must be a whole number of rows >= 0 (0: never), not {local_rows!r}"
            )
        t0 = time.perf_counter()
        notes: list[str] = []
        index = self._index(notes)
        kind = index.manifest.source.get("filesystem") if index is not None else None
        if kind in ("delta", "iceberg"):
            raise UnsupportedFileError(
                f"{self.index_path} indexes the {kind} table {index.manifest.source.get('uri')}:"
                " Spark's file readers cannot apply its deletes; read it with "
                'spark.read.format("bloomskip") (docs/tables.md)'
            )
        fmt = self._format or (_index_format(index) if index is not None else "parquet")
        plan = ReadPlan(None, where, ", ".join(self.paths), self.index_path, notes=notes)
        result = None
        if index is not None and not _covers(index, self.paths):
            notes.append(
                f"the index covers {index.source.uri}, not {', '.join(self.paths)}: "
                "every file is read"
            )
        elif index is not None:
            try:
                expr, unknown, dropped = without_unknown(
                    parse(where, dialect="spark"), index.schema()
                )
                if unknown:  # a partition directory's: Spark applies them, the index cannot
                    notes.append(
                        f"not used for pruning: {', '.join(unknown)} (no column of the "
                        "indexed files)"
                    )
                result = index.query(
                    expr,
                    check_source=check_source,
                    max_in_fpp=max_in_fpp,
                    zone=session_zone(self.spark),
                )
                said = {f"{text}: not used for pruning" for text in dropped}  # said above
                result.notes = [n for n in result.notes if n not in said]
                unseen = self._unseen(index, fmt, result.files)
                if unseen:  # not candidates: counted as skipped
                    result.skip_reasons[UNSEEN] = len(unseen)
                    result.files = [f for f in result.files if f.path not in unseen]
                    notes.append(
                        f"{len(unseen):,} candidate {'file' if len(unseen) == 1 else 'files'}"
                        " in subdirectories not read: Spark reads only the files directly in "
                        "a lake without partitions (all of them with recursiveFileLookup)"
                    )
            except (BloomskipError, OSError) as e:
                notes.append(f"index not used: {e}")
        df = None
        if result is None:
            df = self._dataframe(fmt)
            plan.files_total = len(df.inputFiles())
            plan.read_reasons = {"index not used": plan.files_total}
        else:
            plan.query = result
            _tally(plan, result)
            df = self._local(plan, index, expr, fmt, max_in_fpp, local_rows)
            if df is None:
                df = self._files(fmt, [f.path for f in result.files])
        plan.df = df.where(where)
        plan.seconds = time.perf_counter() - t0
        log.info("%s", plan.summary())
        return plan


def _empty(spark, schema):
    """No rows with ``schema``: an empty local relation from an Arrow table (no job, no
    Python worker to start: ~0.05 s against ~0.3 s for ``createDataFrame([], schema)``),
    or, for a schema Arrow cannot carry exactly, an RDD without partitions."""
    try:
        from pyspark.sql.pandas.types import to_arrow_schema

        zone = spark.conf.get("spark.sql.session.timeZone", None)
        df = spark.createDataFrame(to_arrow_schema(schema, timezone=zone).empty_table())
        if df.schema == schema:
            return df
    except Exception as e:  # any conversion gap: the general way below
        log.debug("empty relation through Arrow failed: %s", e)
    return spark.createDataFrame(spark.sparkContext.emptyRDD(), schema)


#: ``open_lake(spark, source, index_path, *, format=None, options=None, schema=None)``: a
#: source read through Spark with a zone index, opened for many queries (an IndexedLake).
open_lake = IndexedLake


def _tally(plan: ReadPlan, result: QueryResult) -> None:
    """The plan's tallies from the index's answer."""
    plan.notes.extend(result.notes)
    plan.zones_total, plan.zones_candidate = result.zones_total, result.zones_candidate
    plan.files_total = result.files_total
    plan.skipped = [p for p, _ in result.skipped]  # named when the source was listed
    plan.files_skipped = result.files_skipped
    plan.bytes_total = result.bytes_total
    plan.bytes_skipped = max(0, result.bytes_total - result.bytes_candidate)
    reasons = Counter(result.skip_reasons)
    reasons.update(why for _, why in result.skipped if why == "empty file")
    plan.skip_reasons = dict(reasons)
    plan.read_reasons = dict(
        Counter("zones may match" if f.zones is not None else f.reason for f in result.files)
    )


def _covers(index: ZoneIndex, paths: list[str]) -> bool:
    """Whether the index's source is the lake at ``paths``."""
    from bloomskip.sources import resolve

    try:
        return resolve(paths[0] if len(paths) == 1 else paths).same_lake(index.source)
    except (BloomskipError, OSError):
        return False


UNSEEN = "in a subdirectory Spark does not read"


def _unseen_by_spark(
    index: ZoneIndex, options: Mapping[str, str], files, partitioned: bool
) -> set[str]:
    """The candidates Spark's reader of the lake's directory does not read: in a lake
    without partitions, the files of its subdirectories (unless ``recursiveFileLookup``).
    Spark then reads the root's files only; a lake with partitions (columns Spark found in
    ``k=v`` directories, or a candidate under one) is read whole, ``day=1/sub/`` with
    ``day = 1``, so nothing is left out. bloomskip indexes every file under the root."""
    recursive = {k.lower(): v for k, v in options.items()}.get("recursivefilelookup", "")
    src = index.source
    paths = getattr(src, "paths", ())  # a lake of files (a Lance dataset has none)
    if partitioned or recursive.strip().lower() == "true" or len(paths) != 1:
        return set()
    root = src.uri_of(paths[0]).rstrip("/") + "/"
    nested = set()
    for f in files:
        if f.path.startswith(root):
            dirs = f.path[len(root) :].split("/")[:-1]
            if any("=" in d for d in dirs):
                return set()  # partitions after all: Spark reads them all
            if dirs:
                nested.add(f.path)
    return nested


def _base_path(lake: list[str], files: list[str]) -> str | None:
    """Spark's ``basePath`` for reading ``files`` of ``lake``: its root, when it is one
    directory (local, ``file://`` or an object store's prefix). Without it, Spark would
    take each file's own folder for the lake's root and see no partition directory: a
    partition column would be null, and a condition on it would drop every row."""
    if len(lake) != 1:
        return None
    root = lake[0]
    parts = urlsplit(root)
    scheme = parts.scheme.lower()
    if len(scheme) <= 1 or scheme == "file":  # a local path (or a drive letter's), file://
        return _spark_path(root) if os.path.isdir(parts.path if scheme else root) else None
    top = _spark_path(root).rstrip("/")
    return top if any(_spark_path(f).rstrip("/") != top for f in files) else None


def _spark_path(path: str) -> str:
    """A path as Spark's Hadoop file systems name it (``s3://`` is ``s3a://`` there)."""
    if path.startswith("s3://"):
        return "s3a://" + path[len("s3://") :]
    return path


_GLOB = re.compile(r"([{}\[\]*?\\])")


def _glob_escaped(path: str) -> str:
    """``path`` with Hadoop's glob characters escaped: Spark globs the paths it loads,
    so ``a[1].parquet`` would otherwise name nothing (or something else)."""
    return _GLOB.sub(r"\\\1", path)


_OPENED: OrderedDict[tuple[str, int], ZoneIndex] = OrderedDict()
_OPENED_MAX = 4


def _open(index_path: str | os.PathLike) -> ZoneIndex:
    """The latest version of the index, kept open between reads: its directories and the
    block rows read stay in memory, per version."""
    storage = open_storage(index_path)
    found = store.versions(storage)
    if not found:
        return open_index(index_path)  # raises IndexNotFoundError, naming the index
    key = (storage.uri, found[-1])
    zi = _OPENED.get(key)
    if zi is None:
        zi = _OPENED[key] = ZoneIndex(storage, store.read_manifest(storage, found[-1]))
        while len(_OPENED) > _OPENED_MAX:
            _OPENED.popitem(last=False)
    _OPENED.move_to_end(key)
    return zi


def _index_format(index: ZoneIndex) -> str:
    """The Spark format of the lake: what its files are (the manifest's schema came from
    them), ORC only if every indexed file is."""
    formats = set(index.fragments().column("format").to_pylist()) - {NOT_DATA}
    if not formats:  # no file could be indexed: by their names
        names = index.manifest.unreadable
        return "orc" if names and all(n.lower().endswith(".orc") for n in names) else "parquet"
    return "orc" if formats == {"orc"} else "parquet"


__all__ = ["IndexedLake", "ReadPlan", "open_lake", "plan_read", "read"]
