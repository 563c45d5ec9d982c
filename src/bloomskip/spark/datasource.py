"""``spark.read.format("bloomskip")``: a Spark Python data source that reads only the files,
and the zones inside them, that a zone index says may match.

::

    from bloomskip.spark import register
    register(spark)
    df = (spark.read.format("bloomskip")
          .option("index", "lake.idx")
          .option("report", "/tmp/skip.json")      # optional: what was skipped and why
          .load("lake/"))
    df.where("user_id = 'u-42'").show()

How a query flows (Spark 4.1+, ``spark.sql.python.filterPushdown.enabled=true``):

1. :meth:`BloomskipReader.pushFilters` receives the top-level conjuncts of the WHERE clause
   that Spark can express as data source filters. ``=``, ``<=>``, ``IN``,
   ``IS NULL`` and ``IS NOT NULL`` on indexed columns become bloomskip expression trees
   (never SQL text), ANDed together. *Every* filter is handed back: a Bloom answer is only
   "maybe", so Spark applies all of them again to the rows read. ``OR`` never reaches a
   Python data source.
2. :meth:`BloomskipReader.partitions` opens the index from storage (the reader runs in a
   Python worker, not the driver process), asks :meth:`~bloomskip.index.ZoneIndex.query`
   for candidates and returns one partition per candidate file with its candidate zones.
   Files the index does not know, or that changed since indexing, are read in full.
3. :meth:`BloomskipReader.read` reads, with pyarrow, only the Parquet row groups (ORC
   stripes) that overlap candidate zones, then only the rows inside them, and yields
   Arrow batches of exactly the declared Spark schema.

Dropping rows outside candidate zones is exact only because each pushed filter is a
top-level conjunct: a row outside every candidate zone fails at least one of them, so it
fails the WHERE clause. Nothing else is ever pushed.

Never a false negative: a filter is pushed only when the column is read without loss (its
declared Spark type is the one the source's Arrow type maps to, and that mapping keeps
every value apart); literals bloomskip cannot convert may match; and if planning fails
(index missing or corrupt, unreadable tables), every file is a candidate and the report
says why.

No column pruning exists for Python data sources in Spark 4.3: pass ``.schema(...)`` with
only the columns you need, and only those are read.

The index of a Delta or Iceberg table is read through the table's library instead, one
snapshot (the latest, or ``option("asOf", N)``), deletes applied: :mod:`.tables`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

import pyarrow as pa
from pyspark.sql import datasource as sds
from pyspark.sql import types as st

from bloomskip.errors import (
    BloomskipError,
    CorruptFileError,
    IndexNotFoundError,
    InvalidParameterError,
    UnsupportedFileError,
    UnsupportedTypeError,
)
from bloomskip.expr.expressions import (
    AlwaysTrue,
    And,
    EqualTo,
    Expression,
    In,
    IsNull,
    Literal,
    NotNull,
    Reference,
    literal,
)
from bloomskip.index.listing import table_names
from bloomskip.index.results import unknown_rows_text
from bloomskip.index.rows import RowFilter
from bloomskip.spark import tables
from bloomskip.spark.readfile import merge_ranges, partition_values, read_file
from bloomskip.spark.types import lossless, match_column, spark_schema, spark_type

log = logging.getLogger(__name__)

#: The name the data source is registered under: ``spark.read.format(NAME)``.
NAME = "bloomskip"
#: At most this many skipped files are listed by name in a report (all are counted).
REPORT_EXAMPLES = 20


# --------------------------------------------------------------------------- filters


def translate(f: sds.Filter) -> Expression | None:
    """The bloomskip expression for one Spark filter on column ``f.attribute[0]``, or
    None when it is not one bloomskip answers (then it is simply not pushed)."""
    attr = getattr(f, "attribute", None)
    if not attr or len(attr) != 1:
        return None
    ref = Reference(attr[0])
    try:
        if isinstance(f, sds.IsNull):
            return IsNull(ref)
        if isinstance(f, sds.IsNotNull):
            return NotNull(ref)
        if isinstance(f, sds.EqualNullSafe):  # a <=> NULL holds exactly for nulls
            return IsNull(ref) if f.value is None else EqualTo(ref, _literal(f.value))
        if isinstance(f, sds.EqualTo):
            return None if f.value is None else EqualTo(ref, _literal(f.value))
        if isinstance(f, sds.In):
            values = tuple(f.value)
            return In(ref, tuple(_literal(v) for v in values)) if values else None
    except (TypeError, ValueError, ArithmeticError):  # no literal form: not pushed
        return None
    return None


def _literal(value: Any) -> Literal:
    """A pushed value as a literal. pyspark builds a DECIMAL's value in Python's default
    context, 28 digits: one of 28 digits or more may be rounded (Spark's
    ``-123456789012345678901234567890.123456`` arrives as ``-1.234…679E+29``), so it is
    not pushed."""
    if isinstance(value, Decimal) and len(value.as_tuple().digits) >= 28:
        raise ValueError(f"{value} may be rounded")
    return literal(value)


def _conjunction(parts: Sequence[Expression]) -> Expression:
    if not parts:
        return AlwaysTrue()
    out = parts[0]
    for p in parts[1:]:
        out = And(out, p)
    return out


# ------------------------------------------------------------------------ partitions


@dataclass(frozen=True)
class FilePartition(sds.InputPartition):
    """One file to read: its URI; its candidate zones as sorted, disjoint (start, length)
    row ranges, adjacent zones merged (None = every row); and, when zones are given, the
    (size, mtime) the index had for the file, so that a file rewritten since planning is
    read in full rather than by stale offsets; and the index's rule per row for the
    pushed filters (:class:`~bloomskip.index.rows.RowFilter`), so that only the rows it
    cannot rule out go to Spark (which applies every filter again)."""

    path: str
    zones: tuple[tuple[int, int], ...] | None = None
    size: int | None = None
    mtime_ns: int | None = None
    etag: str | None = None
    keep: RowFilter | None = None
    #: Its ``key=value`` directories under the path read (what a declared column the file
    #: lacks takes, as Spark's reader gives hive-style partition columns).
    values: tuple[tuple[str, str | None], ...] = ()


# --------------------------------------------------------------------------- source


#: The options the data source takes (lower case: Spark's are case-insensitive), and
#: ``catalog.<property>``.
OPTIONS = frozenset({"index", "path", "report", "asof", "jvmtimezone"})


class BloomskipDataSource(sds.DataSource):
    """``spark.read.format("bloomskip").option("index", IDX).load(SOURCE)``.

    Options: ``index`` (required) the zone index directory; ``path`` the Parquet/ORC
    source (given by ``.load(path)``; default: the source the index was built on);
    ``report`` a local file to write the skip report to (JSON) at planning time;
    ``jvmTimeZone`` the time zone Spark's ORC reader takes ORC TIMESTAMP wall clocks in
    (its JVM's default; :func:`register` reads the driver's).
    """

    #: The driver JVM's default time zone, as :func:`register` read it (None: unknown).
    jvm_zone: str | None = None

    def __init__(self, options: dict[str, str]) -> None:
        super().__init__(options)
        index = options.get("index")
        if not index:
            raise InvalidParameterError(
                'the bloomskip data source needs option("index", <zone index directory>); '
                "build one with bloomskip.index.build(source, columns, index)"
            )
        unknown = sorted(
            str(k)
            for k in options
            if str(k).lower() not in OPTIONS and not str(k).lower().startswith("catalog.")
        )
        if unknown:  # a misspelt option must not silently read something else
            raise InvalidParameterError(
                f"the bloomskip data source has no option {', '.join(map(repr, unknown))} "
                "(it takes index, path - one, from .load(path) - report, asOf, "
                "jvmTimeZone and catalog.<property>)"
            )
        given = {str(k).lower(): v for k, v in options.items()}.get("jvmtimezone")
        self.jvm_zone = _zone_id(str(given)) if given else type(self).jvm_zone
        self.index = str(index)
        self.path = options.get("path") or None
        self.report = options.get("report") or None
        self.options = {str(k): str(v) for k, v in options.items()}

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> st.StructType:
        manifest = _open_index(self.index).manifest
        _refuse_lance(_source_kind(manifest), self.index)
        if self.path is not None:
            _refuse_lance_path(self.path)
        if _source_kind(manifest) in tables.TABLE_KINDS:  # the snapshot's schema
            return spark_schema(tables.arrow_schema(manifest.source, self.options))
        return spark_schema(manifest.schema)

    def reader(self, schema: st.StructType) -> BloomskipReader:
        if self.path is not None:
            _refuse_lance_path(self.path)
        return BloomskipReader(
            self.index, self.path, self.report, schema, self.options, self.jvm_zone
        )


def register(spark: Any) -> None:
    """Register ``spark.read.format("bloomskip")`` on ``spark``; calling it again re-registers
    the same class, which changes nothing. The class registered knows the driver JVM's
    default time zone, in which Spark's ORC reader takes ORC TIMESTAMP wall clocks."""
    cls = BloomskipDataSource
    zone = jvm_time_zone(spark)
    if zone is not None:
        with contextlib.suppress(InvalidParameterError):  # a zone pyarrow does not know
            cls = _in_zone(zone)
    spark.dataSource.register(cls)


def jvm_time_zone(spark: Any) -> str | None:
    """The default time zone of ``spark``'s driver JVM (None: it cannot be read, as on
    Spark Connect)."""
    try:
        return str(spark.sparkContext._jvm.java.util.TimeZone.getDefault().getID())
    except Exception:
        return None


@functools.cache
def _in_zone(zone: str) -> type[BloomskipDataSource]:
    """:class:`BloomskipDataSource` knowing ``zone``: a class made here, which pickles by
    value (with its zone) into Spark's Python workers."""
    return type(
        "BloomskipDataSource",
        (BloomskipDataSource,),
        {"jvm_zone": _zone_id(zone), "__qualname__": "_in_zone.<locals>.BloomskipDataSource"},
    )


def _zone_id(zone: str) -> str:
    """A time zone as Java names one (a tz database id, ``GMT+05:30``), or an error."""
    from bloomskip.orc import zones

    try:
        zones.tzinfo(zone)
    except InvalidParameterError:
        raise InvalidParameterError(f"jvmTimeZone: {zone!r} is not a time zone") from None
    return zone


def _open_index(index: str):
    """The index, or a typed error saying why not."""
    from bloomskip.index import open_index

    try:
        return open_index(index)
    except BloomskipError:
        raise
    except Exception as e:  # hostile files: never an untyped crash
        raise CorruptFileError(f"{index}: unreadable zone index: {e!r}") from e


def _source_kind(manifest) -> str | None:
    """The file system kind the manifest records for its source ("lance" for a Lance
    dataset), or None if it records none readable."""
    source = manifest.source
    return source.get("filesystem") if isinstance(source, dict) else None


def _refuse_lance(filesystem: str | None, where: str) -> None:
    if filesystem == "lance":
        raise UnsupportedFileError(
            f"{where} indexes a Lance dataset; the bloomskip Spark data source reads "
            "Parquet and ORC files only (query Lance with bloomskip.lance)"
        )


def _refuse_lance_path(path: str) -> None:
    from bloomskip.lance.dataset import is_lance_dataset

    if is_lance_dataset(path):
        _refuse_lance("lance", path)


# --------------------------------------------------------------------------- reader


class BloomskipReader(sds.DataSourceReader):
    """Plans with the zone index (:meth:`pushFilters`, :meth:`partitions`), then reads
    candidate zones (:meth:`read`). Pickled into Spark's Python workers: it holds only
    options and the pushed predicate, never the opened index."""

    def __init__(
        self,
        index: str,
        path: str | None,
        report: str | None,
        schema,
        options: dict[str, str] | None = None,
        jvm_zone: str | None = None,
    ) -> None:
        self.index = index
        self.path = path
        self.report = report
        self.schema = schema
        self.options = dict(options or {})
        self.jvm_zone = jvm_zone
        self.pushed: list[Expression] = []
        self.failure: str | None = None  # why the index is not used, if it is not
        self._zi: Any = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_zi"] = None  # loaded zone tables stay in the planning worker
        return state

    # -- planning -----------------------------------------------------------------

    def _index(self):
        if self._zi is None:
            self._zi = _open_index(self.index)
        return self._zi

    def pushable(self) -> dict[str, str]:
        """Declared column -> source column, for indexed columns read without loss (and,
        for a table, its other columns read without loss: partition values answer
        them; a column neither indexed nor partitioned may match)."""
        zi = self._index()
        fields = {f.name: f.type for f in zi.manifest.schema}
        table = _source_kind(zi.manifest) in tables.TABLE_KINDS
        renamed, taken = (
            table_names(zi.manifest.schema, tables.arrow_schema(zi.manifest.source, self.options))
            if table
            else ({}, set())
        )  # a table's names now -> indexed names; indexed names now another column's
        out = {}
        for f in self.schema.fields:
            name = match_column(f.name, [*(n for n in fields if n not in taken), *renamed])
            indexed = renamed.get(name, name)
            if name is None or (indexed not in zi.columns and not table):
                continue
            t = fields[indexed]
            try:
                natural = spark_type(t)
            except UnsupportedTypeError:
                continue
            col = zi.columns.get(indexed)
            if f.dataType == natural and lossless(t) and (col is None or lossless(col.arrow_type)):
                out[f.name] = name  # the query binds a renamed column by its name now
        return out

    def pushFilters(self, filters: list[sds.Filter]) -> Iterator[sds.Filter]:
        """Remember the filters bloomskip answers; yield every filter back (a Bloom
        answer is "maybe": Spark re-applies them all)."""
        try:
            columns = self.pushable()
        except Exception as e:  # the index is unusable: push nothing, read everything
            self.failure = f"index unreadable: {e}"
            columns = {}
        for f in filters:
            attr = getattr(f, "attribute", None)
            if attr and len(attr) == 1 and attr[0] in columns:
                e = translate(f)
                if e is not None:
                    self.pushed.append(_rename(e, columns[attr[0]]))
            yield f

    @property
    def predicate(self) -> Expression:
        return _conjunction(self.pushed)

    def partitions(self) -> list[sds.InputPartition]:
        t0 = time.perf_counter()
        parts, report = self.plan()
        if parts and isinstance(parts[0], FilePartition):
            roots = self._roots()
            parts = [replace(p, values=partition_values(p.path, roots)) for p in parts]
        report["seconds"] = round(time.perf_counter() - t0, 6)
        log.info(_summary(report))
        if self.report:
            _write_json(self.report, report)
        return parts

    def _roots(self) -> list[str]:
        """The directories read (the path loaded, or the index's source), as URIs."""
        from bloomskip.sources import resolve

        src = resolve(self.path) if self.path is not None else self._index().source
        return [src.uri_of(r) for r in src.paths]

    def plan(self) -> tuple[list[FilePartition], dict[str, Any]]:
        """The partitions to read and the skip report."""
        report: dict[str, Any] = {
            "index": self.index,
            "path": self.path,
            "predicate": str(self.predicate),
            "pushed": [str(e) for e in self.pushed],
            "fallback": None,
        }
        zi, res, failure = None, None, self.failure
        if failure is None:
            try:
                zi = self._index()
            except Exception as e:
                failure = f"index unreadable: {e}"
        if zi is not None:
            _refuse_lance(_source_kind(zi.manifest), self.index)
            if _source_kind(zi.manifest) in tables.TABLE_KINDS:
                return self._plan_table(zi, report)
            if tables.as_of_option(self.options) is not None:  # never the latest instead
                raise InvalidParameterError(
                    f"option asOf reads a Delta or Iceberg table as of a version; "
                    f"{self.index} indexes a lake of files, which has no versions"
                )
            try:
                res = zi.query(self.predicate)
                same = self.path is None or _same_source(self.path, zi.source)
                report.update(version=res.version, source=zi.manifest.source["uri"])
            except Exception as e:
                res, failure = None, f"index query failed: {e}"
        if res is None:
            return self._fallback(zi, failure or "no index answer", report)
        sizes = _fragment_identity(zi)
        candidates = [(f.path, f.zones, f.reason) for f in res.files]
        skipped = list(res.skipped)
        if not same:
            candidates, skipped, note = _restrict(self.path, zi, candidates, skipped)
            res.notes.append(note)
        parts = []
        try:
            keep = zi.row_filter(self.predicate) if self.pushed else None
        except Exception as e:  # rows are then read as before, a zone at a time
            keep = None
            res.notes.append(f"rows not narrowed by the index: {e}")
        for path, zones, _ in candidates:
            ident = sizes.get(path) if zones is not None else None
            parts.append(
                FilePartition(
                    path,
                    None if zones is None else tuple((a, b - a) for a, b in merge_ranges(zones)),
                    None if ident is None else ident[0],
                    None if ident is None else ident[1],
                    None if ident is None else ident[2],
                    keep,
                )
            )
        cand_paths = {p for p, _, _ in candidates}
        zone_files = [f for f in res.files if f.path in cand_paths]
        in_full = Counter(why for _, zones, why in candidates if zones is None)
        report.update(
            files_total=len(candidates) + len(skipped),
            files_candidate=len(candidates),
            files_skipped=len(skipped),
            zones_total=res.zones_total,
            zones_candidate=res.zones_candidate,
            rows_total=res.rows_total,
            rows_candidate=sum(f.rows or 0 for f in zone_files),
            files_rows_unknown=sum(1 for f in zone_files if f.rows is None),
            bytes_skipped=sum(sizes.get(p, (0, 0, None))[0] for p, _ in skipped),
            skipped_reasons=dict(Counter(why for _, why in skipped)),
            skipped=[{"path": p, "reason": why} for p, why in skipped[:REPORT_EXAMPLES]],
            read_in_full=dict(in_full),
            notes=list(res.notes),
        )
        return parts, report

    def _plan_table(self, zi, report: dict[str, Any]):
        """A Delta or Iceberg table: its snapshot's candidate files, deletes applied."""
        uri = zi.manifest.source.get("uri")
        if self.path is not None:
            given = tables.table_source(self.path, {}).to_json() if _is_table(self.path) else None
            if given != zi.manifest.source:
                return self._fallback(None, f"the index covers {uri}, not {self.path}", report)
        try:
            parts, res = tables.plan(zi, self.predicate, self.options)
        except UnsupportedFileError:
            raise  # deletes the library cannot apply: never read around them
        except Exception as e:
            return self._fallback(zi, f"index query failed: {e}", report)
        sizes = dict(res.sizes)
        in_full = Counter(f.reason for f in res.files if f.zones is None)
        report.update(
            version=res.version,
            source=uri,
            snapshot=res.snapshot,
            files_total=len(res.files) + len(res.skipped),
            files_candidate=len(res.files),
            files_skipped=len(res.skipped),
            zones_total=res.zones_total,
            zones_candidate=res.zones_candidate,
            rows_total=res.rows_total,
            rows_candidate=sum(f.rows or 0 for f in res.files),
            files_rows_unknown=res.files_rows_unknown,
            bytes_skipped=sum(sizes.get(p, 0) for p, _ in res.skipped),
            skipped_reasons=dict(Counter(why for _, why in res.skipped)),
            skipped=[{"path": p, "reason": why} for p, why in res.skipped[:REPORT_EXAMPLES]],
            read_in_full=dict(in_full),
            notes=list(res.notes),
        )
        return parts, report

    def _fallback(self, zi, why: str, report: dict[str, Any]):
        """Every file a candidate, read in full: the index could not answer."""
        from bloomskip.sources import from_json, resolve

        log.warning("bloomskip: %s; reading every file of the source", why)
        table = self.path if self.path is not None and _is_table(self.path) else None
        if self.path is None and zi is not None and _source_kind(zi.manifest) in tables.TABLE_KINDS:
            table = zi.manifest.source
        if table is not None:
            parts = tables.every_file(tables.table_source(table, self.options))
            report.update(
                fallback=why, files_total=len(parts), files_candidate=len(parts),
                files_skipped=0, zones_total=0, zones_candidate=0, rows_total=None,
                rows_candidate=None, bytes_skipped=0, skipped_reasons={}, skipped=[],
                read_in_full={why: len(parts)}, notes=[f"{why}: every file is read"],
            )  # fmt: skip
            return parts, report
        if self.path is not None:
            src = resolve(self.path)
        else:
            try:
                src = from_json(zi.manifest.source)
            except Exception:
                src = None
        if src is None:
            raise IndexNotFoundError(
                f"{why}; and no path was given to read without it (.load(<source>))"
            )
        _refuse_lance(src.scheme, self.path or self.index)
        files = src.list()
        report.update(
            fallback=why,
            files_total=len(files),
            files_candidate=len(files),
            files_skipped=0,
            zones_total=0,
            zones_candidate=0,
            rows_total=None,
            rows_candidate=None,
            bytes_skipped=0,
            skipped_reasons={},
            skipped=[],
            read_in_full={why: len(files)},
            notes=[f"{why}: every file is read"],
        )
        return [FilePartition(src.uri_of(f.path)) for f in files], report

    # -- reading ------------------------------------------------------------------

    def read(self, partition: sds.InputPartition) -> Iterator[pa.RecordBatch]:
        if isinstance(partition, tables.TablePartition):
            yield from tables.read(partition, self.schema)
            return
        if not isinstance(partition, FilePartition):  # Spark's stand-in for "no partitions"
            return
        p = partition
        identity = None if p.size is None else (p.size, p.mtime_ns, p.etag)
        yield from read_file(
            p.path, p.zones, identity, self.schema, p.keep, p.values, self.jvm_zone
        )


def _is_table(path: str) -> bool:
    try:
        return tables.is_table_path(path)
    except Exception:
        return False


def _rename(e: Expression, column: str) -> Expression:
    """``e`` on the source's spelling of its column."""
    ref = Reference(column)
    if isinstance(e, EqualTo):
        return EqualTo(ref, e.literal)
    if isinstance(e, In):
        return In(ref, e.literals)
    if isinstance(e, IsNull):
        return IsNull(ref)
    if isinstance(e, NotNull):
        return NotNull(ref)
    raise TypeError(f"unexpected pushed expression {e}")


def _fragment_identity(zi) -> dict[str, tuple[int, int, str | None]]:
    """URI -> (size, mtime_ns, etag) of every indexed file."""
    try:
        uri_of = zi.source.uri_of
        return {
            uri_of(r["path"]): (int(r["size"]), int(r["mtime_ns"]), r.get("etag"))
            for r in zi.fragments().to_pylist()
        }
    except Exception:  # report sizes and re-checks are a convenience, never a failure
        return {}


def _same_source(path: str, src) -> bool:
    from bloomskip.sources import resolve

    given = resolve(path)
    return given.scheme == src.scheme and tuple(given.paths) == tuple(src.paths)


def _restrict(path: str, zi, candidates, skipped):
    """Answers for exactly the files under ``path`` (what Spark's own reader would read):
    the index's answer for the files it covers, every other listed file in full."""
    from bloomskip.sources import resolve

    src = resolve(path)
    files = [src.uri_of(f.path) for f in src.list()]
    wanted = set(files)
    known = {p for p, _, _ in candidates} | {p for p, _ in skipped}
    kept = [c for c in candidates if c[0] in wanted]
    skipped = [s for s in skipped if s[0] in wanted]
    extra = [(p, None, "not in the index's source") for p in files if p not in known]
    note = (
        f"read {path}, part of the index's source {zi.manifest.source.get('uri')}: zone and "
        "row totals are the whole source's"
    )
    if extra:
        note = (
            f"{len(extra)} of {len(files)} files under {path} are not in the index's source "
            f"({zi.manifest.source.get('uri')}): read in full"
        )
    return sorted(kept + extra), skipped, note


def _summary(r: dict[str, Any]) -> str:
    text = (
        f"bloomskip: {r.get('files_candidate')} of {r.get('files_total')} files, "
        f"{r.get('zones_candidate')} of {r.get('zones_total')} zones, "
        f"{r.get('rows_candidate')} of {r.get('rows_total')} rows may match "
        f"{r['predicate']}{unknown_rows_text(r.get('files_rows_unknown') or 0)}; "
        f"{r.get('files_skipped')} files "
        f"({r.get('bytes_skipped')} bytes) skipped [{r.get('seconds')} s]"
    )
    if r.get("fallback"):
        text += f"; index not used: {r['fallback']}"
    return text


def _write_json(path: str, data: dict[str, Any]) -> None:
    """Write the report atomically (temp + rename); a failure is logged, not raised."""
    try:
        directory = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".bloomskip-report-", dir=directory)
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump(data, fh, indent=1, default=str)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as e:
        log.warning("bloomskip: cannot write the skip report to %s: %s", path, e)


__all__ = [
    "NAME",
    "BloomskipDataSource",
    "BloomskipReader",
    "FilePartition",
    "register",
    "spark_schema",
    "spark_type",
    "translate",
]
