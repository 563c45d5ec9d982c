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
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
from pyspark.sql import datasource as sds
from pyspark.sql import types as st

from bloomskip.errors import (
    BloomskipError,
    CorruptFileError,
    IndexNotFoundError,
    InvalidParameterError,
    SourceError,
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
    NotNull,
    Reference,
    literal,
)

log = logging.getLogger(__name__)

#: The name the data source is registered under: ``spark.read.format(NAME)``.
NAME = "bloomskip"
#: At most this many skipped files are listed by name in a report (all are counted).
REPORT_EXAMPLES = 20


# ----------------------------------------------------------------------------- types


def spark_type(t: pa.DataType) -> st.DataType:
    """The Spark type a column of Arrow type ``t`` is read as (as Spark's Parquet reader
    does: unsigned integers widen, UINT64 becomes DECIMAL(20,0))."""
    if isinstance(t, pa.BaseExtensionType):
        t = t.storage_type
    if pa.types.is_dictionary(t):
        return spark_type(t.value_type)
    simple: list[tuple[Any, st.DataType]] = [
        (pa.types.is_boolean, st.BooleanType()),
        (pa.types.is_int8, st.ByteType()),
        (pa.types.is_int16, st.ShortType()),
        (pa.types.is_int32, st.IntegerType()),
        (pa.types.is_int64, st.LongType()),
        (pa.types.is_uint8, st.ShortType()),
        (pa.types.is_uint16, st.IntegerType()),
        (pa.types.is_uint32, st.LongType()),
        (pa.types.is_uint64, st.DecimalType(20, 0)),
        (pa.types.is_float16, st.FloatType()),
        (pa.types.is_float32, st.FloatType()),
        (pa.types.is_float64, st.DoubleType()),
        (pa.types.is_date, st.DateType()),
        (pa.types.is_null, st.NullType()),
    ]
    for test, spark in simple:
        if test(t):
            return spark
    if pa.types.is_decimal(t):
        if t.precision > 38:
            raise UnsupportedTypeError(f"{t}: Spark decimals have at most 38 digits")
        return st.DecimalType(t.precision, t.scale)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return st.StringType()
    if (
        pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_binary_view(t)
        or pa.types.is_fixed_size_binary(t)
    ):
        return st.BinaryType()
    if pa.types.is_timestamp(t):
        return st.TimestampNTZType() if t.tz is None else st.TimestampType()
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return st.ArrayType(spark_type(t.value_type), True)
    if pa.types.is_map(t):
        return st.MapType(spark_type(t.key_type), spark_type(t.item_type), True)
    if pa.types.is_struct(t):
        return st.StructType([st.StructField(f.name, spark_type(f.type), True) for f in t])
    raise UnsupportedTypeError(f"{t} has no Spark type this reader converts to")


def spark_schema(schema: pa.Schema) -> st.StructType:
    """The Spark schema of a source with Arrow ``schema``; every field nullable (files
    added later may hold nulls)."""
    fields = []
    for f in schema:
        try:
            fields.append(st.StructField(f.name, spark_type(f.type), True))
        except UnsupportedTypeError as e:
            raise UnsupportedTypeError(
                f"column {f.name!r}: {e}; pass .schema(...) without it to read the others"
            ) from None
    return st.StructType(fields)


def _lossless(t: pa.DataType) -> bool:
    """Whether reading ``t`` as :func:`spark_type` keeps distinct values distinct, so that
    Spark's equality on what is read is the index's equality on what is stored."""
    if pa.types.is_dictionary(t):
        return _lossless(t.value_type)
    if pa.types.is_timestamp(t):
        return t.unit in ("s", "ms", "us")  # Spark keeps microseconds: ns are truncated
    try:
        spark_type(t)
    except UnsupportedTypeError:
        return False
    return not pa.types.is_nested(t)


def _match(name: str, names: Sequence[str]) -> str | None:
    """``name`` among ``names``: exactly, else the one equal ignoring case (as Spark)."""
    if name in names:
        return name
    folded = [n for n in names if n.lower() == name.lower()]
    return folded[0] if len(folded) == 1 else None


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
            return IsNull(ref) if f.value is None else EqualTo(ref, literal(f.value))
        if isinstance(f, sds.EqualTo):
            return None if f.value is None else EqualTo(ref, literal(f.value))
        if isinstance(f, sds.In):
            values = tuple(f.value)
            return In(ref, tuple(literal(v) for v in values)) if values else None
    except (TypeError, ValueError, ArithmeticError):  # no literal form: not pushed
        return None
    return None


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
    read in full rather than by stale offsets."""

    path: str
    zones: tuple[tuple[int, int], ...] | None = None
    size: int | None = None
    mtime_ns: int | None = None


# --------------------------------------------------------------------------- source


class BloomskipDataSource(sds.DataSource):
    """``spark.read.format("bloomskip").option("index", IDX).load(SOURCE)``.

    Options: ``index`` (required) the zone index directory; ``path`` the Parquet/ORC
    source (given by ``.load(path)``; default: the source the index was built on);
    ``report`` a local file to write the skip report to (JSON) at planning time.
    """

    def __init__(self, options: dict[str, str]) -> None:
        super().__init__(options)
        index = options.get("index")
        if not index:
            raise InvalidParameterError(
                'the bloomskip data source needs option("index", <zone index directory>); '
                "build one with bloomskip.index.build(source, columns, index)"
            )
        self.index = str(index)
        self.path = options.get("path") or None
        self.report = options.get("report") or None

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> st.StructType:
        manifest = _open_index(self.index).manifest
        _refuse_lance(_source_kind(manifest), self.index)
        if self.path is not None:
            _refuse_lance_path(self.path)
        return spark_schema(manifest.schema)

    def reader(self, schema: st.StructType) -> BloomskipReader:
        if self.path is not None:
            _refuse_lance_path(self.path)
        return BloomskipReader(self.index, self.path, self.report, schema)


def register(spark: Any) -> None:
    """Register ``spark.read.format("bloomskip")`` on ``spark``; calling it again re-registers
    the same class, which changes nothing."""
    spark.dataSource.register(BloomskipDataSource)


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

    def __init__(self, index: str, path: str | None, report: str | None, schema) -> None:
        self.index = index
        self.path = path
        self.report = report
        self.schema = schema
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
        """Declared column -> source column, for indexed columns read without loss."""
        zi = self._index()
        fields = {f.name: f.type for f in zi.manifest.schema}
        out = {}
        for f in self.schema.fields:
            name = _match(f.name, list(fields))
            if name is None or name not in zi.columns:
                continue
            t = fields[name]
            try:
                natural = spark_type(t)
            except UnsupportedTypeError:
                continue
            if f.dataType == natural and _lossless(t) and _lossless(zi.columns[name].arrow_type):
                out[f.name] = name
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
        report["seconds"] = round(time.perf_counter() - t0, 6)
        log.info(_summary(report))
        if self.report:
            _write_json(self.report, report)
        return parts

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
        for path, zones, _ in candidates:
            ident = sizes.get(path) if zones is not None else None
            parts.append(
                FilePartition(
                    path,
                    None if zones is None else tuple((a, b - a) for a, b in _merge(zones)),
                    None if ident is None else ident[0],
                    None if ident is None else ident[1],
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
            bytes_skipped=sum(sizes.get(p, (0, 0))[0] for p, _ in skipped),
            skipped_reasons=dict(Counter(why for _, why in skipped)),
            skipped=[{"path": p, "reason": why} for p, why in skipped[:REPORT_EXAMPLES]],
            read_in_full=dict(in_full),
            notes=list(res.notes),
        )
        return parts, report

    def _fallback(self, zi, why: str, report: dict[str, Any]):
        """Every file a candidate, read in full: the index could not answer."""
        from bloomskip.index.sources import from_json, resolve

        log.warning("bloomskip: %s; reading every file of the source", why)
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
        if not isinstance(partition, FilePartition):  # Spark's stand-in for "no partitions"
            return
        yield from read_file(partition, self.schema)


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


def _fragment_identity(zi) -> dict[str, tuple[int, int]]:
    """URI -> (size, mtime_ns) of every indexed file."""
    try:
        frags = zi.fragments()
        uri_of = zi.source.uri_of
        return {
            uri_of(p): (int(s), int(m))
            for p, s, m in zip(
                frags.column("path").to_pylist(),
                frags.column("size").to_pylist(),
                frags.column("mtime_ns").to_pylist(),
                strict=True,
            )
        }
    except Exception:  # report sizes and re-checks are a convenience, never a failure
        return {}


def _same_source(path: str, src) -> bool:
    from bloomskip.index.sources import resolve

    given = resolve(path)
    return given.scheme == src.scheme and tuple(given.paths) == tuple(src.paths)


def _restrict(path: str, zi, candidates, skipped):
    """Answers for exactly the files under ``path`` (what Spark's own reader would read):
    the index's answer for the files it covers, every other listed file in full."""
    from bloomskip.index.sources import resolve

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
        f"{r['predicate']}; {r.get('files_skipped')} files "
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


# --------------------------------------------------------------------------- reading


def _filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    if "://" in uri and not uri.startswith("file://"):
        try:
            return pafs.FileSystem.from_uri(uri)
        except (OSError, ValueError) as e:
            raise SourceError(f"{uri}: not a file system URI pyarrow can open: {e}") from e
    return pafs.LocalFileSystem(), uri.removeprefix("file://")


def read_file(part: FilePartition, schema: st.StructType) -> Iterator[pa.RecordBatch]:
    """The rows of ``part`` (only its candidate zones), as batches of ``schema``."""
    from pyspark.sql.pandas.types import to_arrow_schema

    target = to_arrow_schema(schema, timezone="UTC")
    fs, path = _filesystem(part.path)
    zones = part.zones
    if zones is not None and part.size is not None:
        info = fs.get_file_info(path)
        if (int(info.size or 0), int(info.mtime_ns or 0)) != (part.size, part.mtime_ns):
            zones = None  # rewritten since it was indexed: offsets no longer apply
    try:
        fh = fs.open_input_file(path)
    except (OSError, ValueError) as e:
        raise SourceError(f"{part.path}: cannot open: {e}") from e
    with fh:
        head = fh.read(4)
        fh.seek(0)
        if head[:3] == b"ORC":
            counts, names, read_group = _orc(fh, part.path)
        else:
            counts, names, read_group = _parquet(fh, part.path)
        columns = {f.name: _match(f.name, names) for f in target}
        wanted = sorted({c for c in columns.values() if c is not None}, key=names.index)
        ranges = None if zones is None else _merge(zones)
        start = 0
        for i, n in enumerate(counts):
            local = [(0, n)] if ranges is None else _overlap(ranges, start, start + n)
            start += n
            if not local:
                continue
            try:  # no wanted column: read one to count rows (ORC returns none for [])
                table = read_group(i, wanted or names[:1])
            except (OSError, pa.ArrowException) as e:
                raise CorruptFileError(f"{part.path}: cannot read row group {i}: {e}") from e
            if local != [(0, n)]:
                table = pa.concat_tables([table.slice(a, b - a) for a, b in local])
            if table.num_rows:
                yield _conform(table, target, columns, part.path)


def _merge(zones: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Zones (start, length) as sorted, disjoint [start, end) ranges."""
    out: list[list[int]] = []
    for a, n in sorted((int(a), int(n)) for a, n in zones):
        if n <= 0:
            continue
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], a + n)
        else:
            out.append([a, a + n])
    return [(a, b) for a, b in out]


def _overlap(ranges: list[tuple[int, int]], lo: int, hi: int) -> list[tuple[int, int]]:
    """The parts of ``ranges`` inside [lo, hi), relative to ``lo``."""
    import bisect

    i = bisect.bisect_right(ranges, (lo, float("inf"))) - 1
    i = max(i, 0)
    out = []
    for a, b in ranges[i:]:
        if a >= hi:
            break
        if b > lo:
            out.append((max(a, lo) - lo, min(b, hi) - lo))
    return out


def _parquet(fh, label: str):
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(fh)
    except (OSError, pa.ArrowException) as e:
        raise CorruptFileError(f"{label}: not a readable Parquet file: {e}") from e
    meta = pf.metadata
    counts = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    names = pf.schema_arrow.names

    def read_group(i: int, columns: list[str]) -> pa.Table:
        return pf.read_row_group(i, columns=columns, use_threads=False)

    return counts, names, read_group


def _orc(fh, label: str):
    import pyarrow.orc as orc

    from bloomskip.orc.file import read_orc

    counts = [s.num_rows for s in read_orc(fh, name=label).stripes]
    fh.seek(0)
    try:
        of = orc.ORCFile(fh)
        names = of.schema.names
    except (OSError, pa.ArrowException) as e:
        raise CorruptFileError(f"{label}: not a readable ORC file: {e}") from e

    def read_group(i: int, columns: list[str]) -> pa.Table:
        return pa.Table.from_batches([of.read_stripe(i, columns=columns)])

    return counts, names, read_group


def _conform(
    table: pa.Table, target: pa.Schema, columns: dict[str, str | None], label: str
) -> pa.RecordBatch:
    """``table`` as one batch of exactly ``target`` (Spark checks types and widths)."""
    table = table.combine_chunks()
    arrays = []
    for f in target:
        name = columns[f.name]
        if name is None:  # a file without the column: nulls, as Spark reads it
            arrays.append(pa.nulls(table.num_rows, f.type))
            continue
        col = table.column(name)
        arr = col.chunk(0) if col.num_chunks == 1 else pa.concat_arrays(col.chunks)
        arrays.append(_cast(arr, f.type, f"{label}: column {name!r}"))
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def _cast(arr: pa.Array, t: pa.DataType, what: str) -> pa.Array:
    if arr.type == t:
        return arr
    # Timestamps finer than Spark's microseconds are truncated (the reader never pushes
    # equality on them); every other cast must be exact.
    safe = not (pa.types.is_timestamp(arr.type) and pa.types.is_timestamp(t))
    try:
        return arr.cast(t, safe=safe)
    except (pa.ArrowException, ValueError) as e:
        raise UnsupportedTypeError(f"{what}: {arr.type} does not convert to {t}: {e}") from e


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
