"""spark.read.format("bloomskip"): same rows as Spark's own reader, fewer zones read.

Small lakes (several files, row groups of 40 rows, zones of 64 rows, so zones and row
groups do not line up) are indexed with the local engine, then every query is run through
the data source and through ``spark.read.parquet`` / ``.orc``: the sorted rows must be
equal. The skip report shows what the index ruled out. Tests that need no Spark job call
the reader directly, as Spark's planning and task workers do.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from decimal import Decimal
from urllib.parse import quote

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

pytest.importorskip("pyspark")

from pyspark.sql import datasource as sds
from pyspark.sql import types as st

from bloomskip.demo.native import spark_conf
from bloomskip.errors import (
    BloomskipError,
    CorruptFileError,
    IndexNotFoundError,
    InvalidParameterError,
    UnsupportedFileError,
)
from bloomskip.index import build
from bloomskip.sources.files import HIVE_NULL
from bloomskip.spark.datasource import (
    BloomskipDataSource,
    FilePartition,
    register,
    spark_schema,
    translate,
)

FILES = 4
ROWS = 256
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
INDEXED = ["k", "i", "s", "d", "dec", "ts", "f"]


def _f(f: int, j: int) -> float:
    """Mostly k / 8; one zero per file (-0.0 in odd files) and one NaN."""
    if j == 7:
        return -0.0 if f % 2 else 0.0
    return float("nan") if j == 100 else (f * 10_000 + 3 * j) / 8


def _table(f: int, rows: int = ROWS, shift: int = 0) -> pa.Table:
    k = [f * 10_000 + 3 * j + shift for j in range(rows)]
    return pa.table(
        {
            "k": pa.array(k, pa.int64()),
            "i": pa.array([None if x % 11 == 0 else x % 50 for x in k], pa.int32()),
            "s": [f"u{(x * 7) % 500}" for x in k],
            "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=x % 365) for x in k]),
            "dec": pa.array([Decimal(x % 1000) / 4 for x in k], pa.decimal128(9, 2)),
            "ts": pa.array([EPOCH + dt.timedelta(seconds=x) for x in k], pa.timestamp("us", "UTC")),
            "f": pa.array([_f(f, j) for j in range(rows)]),
        }
    )


def _write_lake(root, files=FILES) -> str:
    os.makedirs(root, exist_ok=True)
    for f in range(files):
        pq.write_table(_table(f), os.path.join(root, f"part-{f}.parquet"), row_group_size=40)
    return str(root)


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    """(source dir, index dir) of a Parquet lake, indexed on every column but ``f``'s NaN."""
    base = tmp_path_factory.mktemp("dslake")
    root = _write_lake(base / "lake")
    idx = str(base / "lake.idx")
    build(root, INDEXED, idx, zone_rows=64)
    return root, idx


@pytest.fixture(scope="module")
def ds(spark):
    register(spark)
    register(spark)  # idempotent
    return spark


def _key(row) -> tuple:
    """A row that compares equal to itself (NaN as text)."""
    return tuple("NaN" if isinstance(x, float) and x != x else x for x in row)


def _sorted(rows) -> list:
    return sorted((_key(r) for r in rows), key=repr)


def _rows(df) -> list:
    return _sorted(df.collect())


def _ours(spark, root, idx, report=None, schema=None):
    r = spark.read.format("bloomskip").option("index", idx)
    if report is not None:
        r = r.option("report", str(report))
    if schema is not None:
        r = r.schema(schema)
    return r.load(root)


def _no_native_pruning(spark):
    """Spark's own readers without filter pushdown: Spark's semantics, nothing pruned.
    (Spark 4.3's Parquet dictionary filter drops row groups holding only -0.0 for
    ``f = 0.0``, which Spark itself evaluates as true; see test_same_rows_as_spark.)"""
    keys = ["spark.sql.parquet.filterPushdown", "spark.sql.orc.filterPushdown"]
    return spark_conf(spark, dict.fromkeys(keys, "false"))


def _same_many(spark, root, idx, queries, reports=None, fmt="parquet"):
    """Each query through the data source and through Spark's own reader (one job per
    query; one job for all is slower): the sorted rows must be equal. ``reports``: a
    directory for the skip report of query n, ``r<n>.json``."""
    from pyspark.sql import functions as F

    out = []
    for n, q in enumerate(queries):
        report = None if reports is None else os.path.join(reports, f"r{n}.json")
        ours = _ours(spark, root, idx, report).where(q)
        theirs = getattr(spark.read, fmt)(root).where(q)
        both = ours.select(F.lit(0).alias("_side"), "*").unionByName(
            theirs.select(F.lit(1).alias("_side"), "*")
        )
        with _no_native_pruning(spark):
            got = both.collect()
        assert _sorted(r[1:] for r in got if r[0] == 0) == _sorted(
            r[1:] for r in got if r[0] == 1
        ), q
        out.append(_sorted(r[1:] for r in got if r[0] == 0))
    return out


def _same(spark, root, idx, q, report=None, fmt="parquet"):
    return _same_many(spark, root, idx, [q], report, fmt)[0]


def _report(path) -> dict:
    with open(path) as fh:
        return json.load(fh)


# ------------------------------------------------------------------ Spark end to end

#: Spark's own values for every type reach pushFilters in query 1: one row matches all.
ONE_ROW_ALL_TYPES = (
    "s = 'u21' AND i = 3 AND d = DATE'2024-05-28' AND dec = 0.75 AND f = 1250.375 "
    "AND ts = TIMESTAMP'1970-01-01 02:46:43'"
)
QUERIES = [
    "k = 10003",
    ONE_ROW_ALL_TYPES,
    "k IN (3, 10006, 30009, 99)",
    "k <=> 20009 AND i <=> NULL",
    "s IN ('u1', 'u2', 'nope')",
    "f = 0.0",
    "f = double('NaN')",
    "k = 3 OR s = 'u42'",
    "k > 30700 AND i IS NOT NULL",
]


@pytest.mark.spark
def test_same_rows_as_spark(ds, lake, tmp_path):
    root, idx = lake
    got = _same_many(ds, root, idx, QUERIES, str(tmp_path))
    assert [len(g) for g in got[:4]] == [1, 1, 4, 1]
    assert len(_report(tmp_path / "r1.json")["pushed"]) == 12  # 6 = and 6 IS NOT NULL
    # a point query read one zone of one file, and said so
    rep = _report(tmp_path / "r0.json")
    assert rep["files_candidate"] == 1 and rep["files_skipped"] == FILES - 1
    assert rep["zones_candidate"] == 1 < rep["zones_total"] == FILES * 4
    assert rep["rows_candidate"] == 64 < rep["rows_total"] == FILES * ROWS
    assert rep["bytes_skipped"] > 0 and rep["skipped_reasons"]
    assert rep["pushed"] == ["k IS NOT NULL", "k = 10003"]
    # -0.0 and +0.0 are both probed; NaN is never ruled out
    zero = QUERIES.index("f = 0.0")
    assert 1 <= _report(tmp_path / f"r{zero}.json")["zones_candidate"] < FILES * 4
    nan = _report(tmp_path / f"r{zero + 1}.json")
    assert nan["zones_candidate"] == nan["zones_total"]
    # Spark 4.3's own Parquet reader loses the -0.0 rows here (dictionary filter); we do not
    ours = got[zero]
    assert any(str(r[-1]) == "-0.0" for r in ours) and len(ours) == FILES + 1
    assert set(_rows(ds.read.parquet(root).where("f = 0.0"))) <= set(ours)


@pytest.mark.spark
def test_user_schema_two_columns(ds, lake, tmp_path):
    root, idx = lake
    rep = tmp_path / "r.json"
    df = _ours(ds, root, idx, rep, "s string, k bigint").where("s = 'u42'")
    assert df.columns == ["s", "k"]
    want = _rows(ds.read.parquet(root).where("s = 'u42'").select("s", "k"))
    assert _rows(df) == want and want
    assert _report(rep)["zones_candidate"] < _report(rep)["zones_total"]
    # declared with another type than the files': read (cast) but never pushed
    df = _ours(ds, root, idx, rep, "k string, i bigint").where("k = '10003'")
    assert _rows(df) == [("10003", 3)]
    assert _report(rep)["pushed"] == []


@pytest.mark.spark
def test_files_added_rewritten_deleted(ds, tmp_path):
    root = _write_lake(tmp_path / "lake")
    idx = str(tmp_path / "idx")
    build(root, ["k", "s"], idx, zone_rows=64)
    os.remove(os.path.join(root, "part-0.parquet"))  # deleted
    pq.write_table(_table(1, shift=1), os.path.join(root, "part-1.parquet"), row_group_size=40)
    pq.write_table(_table(7), os.path.join(root, "part-7.parquet"), row_group_size=40)  # added
    queries = ["k = 20003", "k IN (10004, 70003, 3)", "k = 3 OR s = 'u42'"]
    got = _same_many(ds, root, idx, queries, str(tmp_path))
    assert [len(g) for g in got[:2]] == [1, 2]
    r = _report(tmp_path / "r0.json")
    assert r["files_total"] == 4 and r["files_candidate"] == 3  # 1 and 7 in full, 2 by zones
    assert r["zones_candidate"] == 1 and r["files_skipped"] == 1
    assert r["read_in_full"] == {"changed since indexing": 1, "not indexed": 1}
    r = _report(tmp_path / "r1.json")  # 3 was in the deleted file, the others are new
    assert r["files_candidate"] == 2 and r["skipped_reasons"] == {"every zone ruled out": 2}


@pytest.mark.spark
def test_orc_lake(ds, tmp_path):
    root = tmp_path / "orc"
    root.mkdir()
    for f in range(3):
        t = _table(f).select(["k", "i", "s", "d", "dec"])
        orc.write_table(t, str(root / f"part-{f}.orc"), stripe_size=1024, batch_size=40)
    assert orc.ORCFile(str(root / "part-0.orc")).nstripes > 1
    idx = str(tmp_path / "idx")
    build(str(root), ["k", "s", "i", "d"], idx, zone_rows=64)
    queries = ["k IN (20006, 9)", "s = 'u42' AND d = DATE'2024-02-01'", "k < 99 OR i IS NULL"]
    _same_many(ds, str(root), idx, queries, str(tmp_path), fmt="orc")
    r = _report(tmp_path / "r0.json")
    assert r["files_candidate"] == 2 and r["zones_candidate"] == 2 < r["zones_total"]


@pytest.mark.spark
def test_corrupt_index_reads_everything(ds, lake, tmp_path):
    root, idx = lake
    bad = tmp_path / "idx"
    shutil.copytree(idx, bad)
    for dirpath, _, names in os.walk(bad / "columns"):
        for n in names:
            with open(os.path.join(dirpath, n), "wb") as fh:
                fh.write(b"PAR1 not a table PAR1")
    rep = tmp_path / "r.json"
    schema = "k bigint, s string, i int"
    got = _rows(_ours(ds, root, str(bad), rep, schema).where("k = 10003"))
    assert got == _rows(ds.read.parquet(root).where("k = 10003").select("k", "s", "i"))
    r = _report(rep)
    assert "index query failed" in r["fallback"] and r["files_candidate"] == FILES
    # no schema to take: a typed error, not a crash
    with open(bad / "_manifests" / os.listdir(bad / "_manifests")[0], "w") as fh:
        fh.write("{not json")
    with pytest.raises(Exception, match="CorruptFileError"):
        _ours(ds, root, str(bad)).where("k = 1").collect()


@pytest.mark.spark
def test_missing_index_option_is_a_typed_error(ds, lake):
    with pytest.raises(Exception, match=r'InvalidParameterError.*option\("index"'):
        ds.read.format("bloomskip").load(lake[0]).collect()


def test_a_misspelt_option_or_a_version_of_a_plain_lake_is_refused(ds, lake):
    """Found (Spark walkthrough): option("reprot", ...) and .load([a, b]) were ignored
    (no report; the index's whole source read instead of the two paths), and asOf on a
    lake of files silently read the latest files."""
    root, idx = lake
    with pytest.raises(Exception, match="has no option 'reprot'"):
        ds.read.format("bloomskip").option("index", idx).option("reprot", "/tmp/r").load(root)
    with pytest.raises(Exception, match="has no option 'paths'"):
        ds.read.format("bloomskip").option("index", idx).load([root, root])
    with pytest.raises(Exception, match="option asOf reads a Delta or Iceberg table"):
        ds.read.format("bloomskip").option("index", idx).option("asOf", 1).load(root).where(
            "k = 3"
        ).collect()
    with pytest.raises(Exception, match="option asOf is empty"):  # was the latest files
        ds.read.format("bloomskip").option("index", idx).option("asOf", "").load(root).where(
            "k = 3"
        ).collect()
    opts = {"index": idx, "Report": "/tmp/r", "asOF": "1", "catalog.URI": "x"}
    assert BloomskipDataSource({k: v for k, v in opts.items() if v}).index == idx


def test_a_lake_given_as_hadoops_file_uri_is_the_local_directory(ds, lake):
    """``.load("file:/abs/lake")``, a form Spark takes, was read as a relative path."""
    root, idx = lake
    want = ds.read.format("bloomskip").option("index", idx).load(root).where("k = 3").count()
    got = ds.read.format("bloomskip").option("index", idx).load("file:" + root).where("k = 3")
    assert got.count() == want > 0


# --------------------------------------------------------- property: always as Spark

_VALUES = {
    "k": hst.sampled_from([3, 4, 10003, 20006, 30765, 99999, -1]),
    "s": hst.sampled_from(["'u42'", "'u0'", "'u499'", "'zz'", "''"]),
    "i": hst.sampled_from([0, 7, 49, 50]),
    "d": hst.sampled_from(["DATE'2024-01-01'", "DATE'2024-12-30'", "DATE'1999-01-01'"]),
}


@hst.composite
def _leaf(draw):
    col = draw(hst.sampled_from(sorted(_VALUES)))
    kind = draw(hst.sampled_from(["=", "in", "null", "notnull", "range", "<=>"]))
    v = draw(_VALUES[col])
    if kind == "in":
        vs = draw(hst.lists(_VALUES[col], min_size=1, max_size=4))
        return f"{col} IN ({', '.join(map(str, vs))})"
    if kind == "null":
        return f"{col} IS NULL"
    if kind == "notnull":
        return f"{col} IS NOT NULL"
    if kind == "range":
        return f"{col} >= {v}"
    return f"{col} {kind} {v}"


_PREDICATES = hst.recursive(
    _leaf(),
    lambda c: hst.tuples(c, hst.sampled_from(["AND", "OR"]), c).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})"
    ),
    max_leaves=4,
)


@pytest.mark.spark
@settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(q=_PREDICATES)
def test_property_same_rows_as_spark(ds, lake, q):
    _same(ds, *lake, q)


# ------------------------------------------------- the reader, without a Spark job


def _plan(idx, schema, filters, path=None, report=None):
    """What Spark's planning worker does: reader, pushFilters, partitions."""
    opts = {"index": idx, "path": path, "report": report}
    source = BloomskipDataSource({k: v for k, v in opts.items() if v})
    reader = source.reader(schema)
    back = list(reader.pushFilters(filters))
    assert all(a is b for a, b in zip(back, filters, strict=True))  # every filter back
    return reader, reader.partitions()


def _read(reader, parts) -> pa.Table:
    import pickle

    reader = pickle.loads(pickle.dumps(reader))  # as Spark ships it to a task
    batches = [b for p in parts for b in reader.read(pickle.loads(pickle.dumps(p)))]
    return pa.Table.from_batches(batches) if batches else None


def test_reads_only_candidate_zones(lake):
    root, idx = lake
    schema = spark_schema(pq.read_schema(os.path.join(root, "part-0.parquet")))
    assert schema == BloomskipDataSource({"index": idx}).schema()
    reader, parts = _plan(idx, schema, [sds.EqualTo(("k",), 20006)], root)
    assert len(parts) == 1 and parts[0].zones == ((0, 64),)
    t = _read(reader, parts)  # the zone's rows, narrowed by hash to the one that matches
    assert t.column("k").to_pylist() == [20006]
    assert t.schema.field("ts").type == pa.timestamp("us", "UTC")  # what Spark expects
    p = parts[0]
    whole_zone = FilePartition(p.path, p.zones, p.size, p.mtime_ns, p.etag)  # no row filter
    assert _read(reader, [whole_zone]).num_rows == 64
    # a file rewritten after planning is read in full, not by stale offsets
    moved = FilePartition(p.path, p.zones, p.size + 1, p.mtime_ns)
    assert _read(reader, [moved]).num_rows == ROWS
    # Spark's stand-in partition when nothing may match
    assert _read(reader, [sds.InputPartition(None)]) is None
    # a declared name in another case: pushed and read as the file's column
    upper = st.StructType(
        [st.StructField("K", st.LongType()), st.StructField("x", st.IntegerType())]
    )
    reader, parts = _plan(idx, upper, [sds.EqualTo(("K",), 20006)])
    assert [str(e) for e in reader.pushed] == ["k = 20006"] and len(parts) == 1
    t = _read(reader, parts)
    assert t.schema.names == ["K", "x"] and t.column("x").null_count == t.num_rows == 1


def _spark_value(v):
    """A value as Spark hands it to pushFilters (UTC datetimes as zoneinfo's UTC)."""
    if isinstance(v, dt.datetime):
        from zoneinfo import ZoneInfo

        return v.astimezone(ZoneInfo("UTC"))
    return v


def _equal(a, b) -> bool:
    """Spark's = on the values read: -0.0 = 0.0 and NaN = NaN."""
    if isinstance(a, float) and isinstance(b, float) and a != a:
        return b != b
    return a == b


def test_every_type_keeps_every_matching_row(lake):
    """The rows read for ``col = v`` (v as Spark delivers it) hold every row equal to
    v, for values in every zone and of every indexed type; and zones are skipped."""
    root, idx = lake
    schema = BloomskipDataSource({"index": idx}).schema()
    full = pq.read_table(root)
    skipped = probed = 0
    for col in INDEXED:
        values = full.column(col).to_pylist()
        probes = [values[j] for j in (0, 7, 100, 300, 700, len(values) - 1)]
        probes += {"f": [-0.0, 0.0, float("nan")], "k": [5, 2**62]}.get(col, [])
        for v in probes:
            reader, parts = _plan(idx, schema, [sds.EqualTo((col,), _spark_value(v))], root)
            t = _read(reader, parts)
            got = [] if t is None else t.column(col).to_pylist()
            want = sum(_equal(x, v) for x in values)
            assert sum(_equal(x, v) for x in got) == want, (col, v)
            skipped += full.num_rows - (0 if t is None else t.num_rows)
            probed += full.num_rows
    assert skipped > 0.5 * probed
    # IN and IS NULL, ANDed
    reader, parts = _plan(
        idx, schema, [sds.In(("k",), (3, 20006, 7)), sds.IsNull(("i",)), sds.IsNotNull(("k",))]
    )
    got = [(os.path.basename(p.path), p.zones) for p in parts]
    assert got == [("part-0.parquet", ((0, 64),)), ("part-2.parquet", ((0, 64),))]
    zones = [FilePartition(p.path, p.zones, p.size, p.mtime_ns, p.etag) for p in parts]
    assert _read(reader, zones).num_rows == 128  # the zones' rows, no row filter
    assert _read(reader, parts) is None  # i is null where k % 11 == 0: none of 3, 20006, 7
    reader, parts = _plan(idx, schema, [sds.In(("k",), (3, 33)), sds.IsNull(("i",))])
    assert _read(reader, parts).column("k").to_pylist() == [33]


def test_translate():
    a = ("a",)
    assert str(translate(sds.EqualTo(a, 5))) == "a = 5"
    assert str(translate(sds.EqualNullSafe(a, "x"))) == "a = 'x'"
    assert str(translate(sds.EqualNullSafe(a, None))) == "a IS NULL"
    assert str(translate(sds.In(a, (1, None)))) == "a IN (1, NULL)"
    assert str(translate(sds.IsNotNull(a))) == "a IS NOT NULL"
    assert str(translate(sds.EqualTo(a, dt.date(2024, 1, 2)))) == "a = DATE '2024-01-02'"
    utc = dt.datetime(2024, 1, 1, 5, tzinfo=dt.UTC)
    assert "+00:00" in str(translate(sds.EqualTo(a, utc)))
    for f in [
        sds.EqualTo(a, [1, 2]),  # array literal
        sds.EqualTo(a, dt.timedelta(1)),
        sds.EqualTo(a, None),
        sds.EqualTo(("a", "b"), 1),  # nested field
        sds.In(a, ()),
        sds.GreaterThan(a, 1),
        sds.Not(sds.EqualTo(a, 1)),
        sds.StringStartsWith(a, "x"),
    ]:
        assert translate(f) is None, f


def test_unconvertible_literals_may_match(lake):
    idx = lake[1]
    schema = BloomskipDataSource({"index": idx}).schema()
    nan = float("nan")
    _, parts = _plan(idx, schema, [sds.EqualTo(("f",), nan), sds.In(("k",), ("x", 3))])
    assert len(parts) == FILES and all(p.zones is not None for p in parts)
    # a literal that no value of the column can equal rules everything out
    _, parts = _plan(idx, schema, [sds.EqualTo(("dec",), Decimal("0.001"))])
    assert parts == []


def test_lossy_columns_are_not_pushed(tmp_path):
    root = tmp_path / "lake"
    root.mkdir()
    ns = pa.array([1, 2_000_000_001], pa.timestamp("ns"))
    pq.write_table(pa.table({"t": ns, "u": pa.array([1, 2], pa.uint64())}), root / "a.parquet")
    idx = str(tmp_path / "idx")
    build(str(root), ["t", "u"], idx, zone_rows=64)
    schema = BloomskipDataSource({"index": idx}).schema()
    assert [f.dataType for f in schema] == [st.TimestampNTZType(), st.DecimalType(20, 0)]
    reader, parts = _plan(
        idx, schema, [sds.EqualTo(("t",), dt.datetime(1970, 1, 1)), sds.EqualTo(("u",), 2)]
    )
    assert [str(e) for e in reader.pushed] == ["u = 2"]  # ns are truncated by Spark
    t = _read(reader, parts)  # the zone holds both rows, the row filter keeps u = 2
    assert t.column("u").to_pylist() == [Decimal(2)]
    assert t.column("t").type == pa.timestamp("us") and t.column("t")[0].value == 2_000_000


def test_fallbacks_and_typed_errors(lake, tmp_path):
    root, idx = lake
    schema = BloomskipDataSource({"index": idx}).schema()
    for opts in [{}, {"index": ""}, {"path": root}]:
        with pytest.raises(InvalidParameterError):
            BloomskipDataSource(opts)
    missing = str(tmp_path / "nothing")
    with pytest.raises(IndexNotFoundError):
        BloomskipDataSource({"index": missing}).schema()
    # an unreadable index with a path: every file, in full, and the report says why
    rep = str(tmp_path / "r.json")
    reader, parts = _plan(missing, schema, [sds.EqualTo(("k",), 3)], root, rep)
    assert len(parts) == FILES and all(p.zones is None for p in parts)
    assert "index unreadable" in _report(rep)["fallback"]
    assert _read(reader, parts).num_rows == FILES * ROWS
    # without a path there is nothing to fall back to
    reader = BloomskipDataSource({"index": missing}).reader(schema)
    list(reader.pushFilters([]))
    with pytest.raises(IndexNotFoundError):
        reader.partitions()
    # hostile manifests: typed errors from schema(), a full read from partitions()
    bad = tmp_path / "bad"
    shutil.copytree(idx, bad)
    (manifest,) = os.listdir(bad / "_manifests")
    good = _report(os.path.join(idx, "_manifests", manifest))
    del good["checksum"]  # edited below: as a writer that computes none would
    not_an_object = json.dumps(good | {"source": []})
    for body in [
        "[]",
        '{"format": "bloomskip.zone-index", "format_version": 1}',
        "\x00" * 9,
        not_an_object,
    ]:
        with open(bad / "_manifests" / manifest, "w") as fh:
            fh.write(body)
        with pytest.raises(BloomskipError):
            BloomskipDataSource({"index": str(bad)}).schema()
        _, parts = _plan(str(bad), schema, [sds.EqualTo(("k",), 3)], root)
        assert len(parts) == FILES and all(p.zones is None for p in parts)
    # a manifest that parses but whose source or tables are nonsense
    frags = os.path.join(bad, good["fragments"])
    for source in [{"filesystem": "local"}, {"filesystem": "zz", "uri": "zz://x"}, None]:
        body = good | ({"source": source} if source is not None else {})
        with open(bad / "_manifests" / manifest, "w") as fh:
            json.dump(body, fh)
        if source is None:  # the manifest is fine, the fragment table is not
            pq.write_table(pa.table({"fragment_id": [1], "path": [3]}), frags)
        assert BloomskipDataSource({"index": str(bad)}).schema() == schema
        reader, parts = _plan(str(bad), schema, [sds.EqualTo(("k",), 3)], root)
        assert len(parts) == FILES and all(p.zones is None for p in parts), source
        assert reader.pushed  # pushed, then the query failed: the report says so


def test_a_subdirectory_and_files_outside_the_index(lake, tmp_path):
    root, idx = lake
    schema = BloomskipDataSource({"index": idx}).schema()
    sub = tmp_path / "lake"
    shutil.copytree(root, sub)
    # the index covers another directory: every file under the path is read in full
    _, parts = _plan(idx, schema, [sds.EqualTo(("k",), 3)], str(sub))
    assert len(parts) == FILES and all(p.zones is None for p in parts)
    # one file of the indexed source: the index answers for it
    one = os.path.join(root, "part-1.parquet")
    _, parts = _plan(idx, schema, [sds.EqualTo(("k",), 10003)], one)
    assert [(p.path, p.zones) for p in parts] == [(one, ((0, 64),))]
    _, parts = _plan(idx, schema, [sds.EqualTo(("k",), 3)], one)
    assert parts == []


def test_a_hive_partitioned_lake_reads_its_partition_values(ds, tmp_path):
    """Found (Spark walkthrough): a lake of ``country=DE/`` directories read through the
    data source with ``country`` declared gave it as null - ``country = 'DE'`` found no
    row (a false negative). Declared partition columns take their directory's value, cast
    to the declared type, as Spark's reader gives them; a null partition is Hive's."""
    root = tmp_path / "hive"
    layout = [("DE", "2024"), ("FR", "2024"), ("DE", "2025"), ("a b%", "2025"), (None, "2025")]
    for i, (country, year) in enumerate(layout):
        d = root / f"country={HIVE_NULL if country is None else quote(country)}" / f"year={year}"
        d.mkdir(parents=True)
        ids = pa.array(range(i * 100, i * 100 + 100), pa.int64())
        pq.write_table(pa.table({"user_id": ids}), d / "part-0.parquet")
    idx = str(tmp_path / "hive.idx")
    build(str(root), ["user_id"], idx, zone_rows=32)
    schema = "user_id bigint, country string, year int"
    queries = [
        "country = 'DE'", "user_id = 205", "user_id = 305 AND country = 'a b%'",
        "year = 2025 AND user_id IN (1, 250, 460)", "country IS NULL", "year > 2024",
    ]  # fmt: skip
    for q in queries:
        ours = _rows(_ours(ds, str(root), idx, schema=schema).where(q))
        theirs = _rows(ds.read.schema(schema).parquet(str(root)).where(q))
        assert ours == theirs and ours, q
    with pytest.raises(Exception, match="is not a date"):
        _ours(ds, str(root), idx, schema="user_id bigint, country date").collect()


def test_partition_directories_are_read_by_spark_s_rules(ds, tmp_path):
    """Found (Spark probe): ``cat=%C3%A9/`` is ``'Ã©'`` to Spark (each ``%XX`` one
    character), and was ``'é'`` here (UTF-8); ``_x=1/`` is a partition directory to
    Spark (a ``_`` name holding ``=``), and was skipped as hidden, with its rows."""
    root = tmp_path / "lake"
    for i, d in enumerate(["cat=a/_x=1", "cat=%C3%A9/_x=2", "cat=%2B/_x=3"]):
        (root / d).mkdir(parents=True)
        ids = pa.array(range(i * 100, i * 100 + 50), pa.int64())
        pq.write_table(pa.table({"k": ids}), root / d / "f.parquet")
    idx = str(tmp_path / "idx")
    build(str(root), ["k"], idx)
    schema = "k bigint, cat string, _x int"
    for q in ["cat = 'Ã©' AND k = 105", "cat = '+' AND _x = 3"]:
        ours = _rows(_ours(ds, str(root), idx, schema=schema).where(q))
        theirs = _rows(ds.read.schema(schema).parquet(str(root)).where(q))
        assert ours == theirs, q


def test_a_column_both_in_the_files_and_in_a_partition_directory_is_the_directorys(ds, tmp_path):
    """Found (Spark probe): ``c=DE/`` holding files with a column ``c`` of ``'de'``.
    Spark's reader gives ``c`` the directory's value; the index answered ``c = 'DE'`` from
    the file's (no row: a false negative) and the data source returned the file's. Such a
    file's ``c`` is not indexed now, and the data source reads the directory's value (the
    index's row filter then does not judge its rows by the file's ``c``)."""
    root = tmp_path / "both"
    (root / "c=DE").mkdir(parents=True)
    (root / "c=FR").mkdir()
    t = pa.table({"k": pa.array(range(10), pa.int64()), "c": ["de"] * 10})
    pq.write_table(t, root / "c=DE" / "p.parquet")
    pq.write_table(t.set_column(1, "c", pa.array(["FR"] * 10)), root / "c=FR" / "p.parquet")
    idx = str(tmp_path / "both.idx")
    rep = build(str(root), ["k", "c"], idx, zone_rows=4)
    assert len(rep.failed) == 2 and all("partition directory" in why for _, why in rep.failed)
    schema = "k bigint, c string"
    for q in ["c = 'DE'", "k = 1 AND c = 'DE'", "c = 'de'", "c IN ('FR', 'x')", "k = 3"]:
        ours = _rows(_ours(ds, str(root), idx, schema=schema).where(q))
        theirs = _rows(ds.read.schema(schema).parquet(str(root)).where(q))
        assert ours == theirs, q


def test_lance_is_refused(tmp_path, lake):
    idx = lake[1]
    fake = tmp_path / "ds.lance"
    (fake / "_versions").mkdir(parents=True)
    with pytest.raises(UnsupportedFileError):
        BloomskipDataSource({"index": idx, "path": str(fake)}).reader(st.StructType([]))
    lance = pytest.importorskip("lance")
    data = str(tmp_path / "real.lance")
    lance.write_dataset(pa.table({"k": pa.array([1, 2, 3], pa.int64())}), data)
    lidx = str(tmp_path / "lidx")
    build(data, ["k"], lidx, zone_rows=64)
    with pytest.raises(UnsupportedFileError, match="Lance"):
        BloomskipDataSource({"index": lidx}).schema()
    reader = BloomskipDataSource({"index": lidx}).reader(st.StructType([]))
    with pytest.raises(UnsupportedFileError):
        reader.partitions()


def test_unsupported_column_types_are_named(tmp_path):
    with pytest.raises(BloomskipError, match="'t'"):
        spark_schema(pa.schema([("a", pa.int8()), ("t", pa.time64("us"))]))
    got = spark_schema(
        pa.schema(
            [
                ("a", pa.dictionary(pa.int32(), pa.large_string())),
                ("b", pa.list_(pa.struct([("x", pa.uint32())]))),
                ("c", pa.map_(pa.string(), pa.float16())),
            ]
        )
    )
    assert got.simpleString() == "struct<a:string,b:array<struct<x:bigint>>,c:map<string,float>>"
    assert isinstance(CorruptFileError("x"), BloomskipError)


def test_a_timestamp_file_under_a_date_column_is_refused_not_truncated():
    """Found (schema probe): a lake typed DATE by its first file, with a file holding
    TIMESTAMP '2024-01-03 12:00': pyarrow's "safe" cast dropped the time of day, so the
    data source and the driver's reads returned 2024-01-03 where Spark refuses the file."""
    from bloomskip.errors import UnsupportedTypeError
    from bloomskip.spark.readfile import _cast

    ts = pa.array([dt.datetime(2024, 1, 3, 12)], pa.timestamp("us"))
    with pytest.raises(UnsupportedTypeError, match="time of day would be lost"):
        _cast(ts, pa.date32(), "f: column 'c'")
    assert _cast(pa.array([1], pa.int32()), pa.int64(), "c").to_pylist() == [1]


def test_zone_ranges_known_answers():
    from bloomskip.spark.readfile import _overlap
    from bloomskip.spark.readfile import merge_ranges as _merge

    assert _merge([(128, 64), (0, 64), (64, 64), (300, 0), (256, 10)]) == [(0, 192), (256, 266)]
    ranges = [(0, 10), (50, 70), (100, 140)]
    assert _overlap(ranges, 0, 40) == [(0, 10)]  # row group [0, 40), relative offsets
    assert _overlap(ranges, 40, 80) == [(10, 30)]
    assert _overlap(ranges, 80, 120) == [(20, 40)]
    assert _overlap(ranges, 120, 160) == [(0, 20)]
    assert _overlap(ranges, 160, 200) == []
    assert _overlap([(0, 10**12)], 40, 80) == [(0, 40)]  # a hostile length is clipped


@pytest.mark.spark
def test_int96_timestamps_read_as_spark_reads_them(ds, tmp_path):
    """Found (Spark probe): pyarrow read INT96 as nanoseconds, which wrap outside the years
    1677-2262 (9999-12-31, a common "no end" date, came back as 1816) and were cut to
    microseconds toward zero (-1 ns as 1970-01-01, where Spark floors to 23:59:59.999999):
    wrong values, and rows missed. They are now read at microseconds, floored, as Spark."""
    from bloomskip.spark import open_lake

    root = tmp_path / "int96"
    root.mkdir()
    when = [
        dt.datetime(1650, 6, 1),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
        dt.datetime(1970, 1, 1),
    ]
    pq.write_table(
        pa.table({"id": [1, 2, 3], "ts": pa.array(when, pa.timestamp("us"))}),
        root / "a.parquet",
        use_deprecated_int96_timestamps=True,
    )
    ns = pa.array([-1, -1500, 1706702400123456789], pa.timestamp("ns"))
    pq.write_table(
        pa.table({"id": [4, 5, 6], "ts": ns}),
        root / "b.parquet",
        use_deprecated_int96_timestamps=True,
    )
    idx = str(tmp_path / "int96.idx")
    build(str(root), ["ts"], idx, zone_rows=2)
    schema = "id bigint, ts timestamp"
    theirs_all = _rows(ds.read.schema(schema).parquet(str(root)))
    assert _rows(_ours(ds, str(root), idx, schema=schema)) == theirs_all
    for q in [
        "ts = TIMESTAMP '9999-12-31 23:59:59.999999'",
        "ts = TIMESTAMP '1969-12-31 23:59:59.999999'",
        "ts = TIMESTAMP '1969-12-31 23:59:59.999998'",
        "ts = TIMESTAMP '2024-01-31 12:00:00.123456'",
        "ts < TIMESTAMP '1700-01-01'",
    ]:
        theirs = _rows(ds.read.schema(schema).parquet(str(root)).where(q))
        assert _rows(_ours(ds, str(root), idx, schema=schema).where(q)) == theirs and theirs, q
        assert _rows(open_lake(ds, str(root), idx).plan(q).df) == theirs, q


@pytest.mark.spark
def test_dates_before_1582_in_hybrid_calendar_files_read_as_spark_reads_them(ds, tmp_path):
    """Found (ORC probe): ORC Java (Spark's writer) stores dates before 1582-10-15 as
    Julian calendar days, and so did Spark 2 in Parquet (``legacyDateTime``); pyarrow
    returns the raw days, so ``DATE '0001-01-01'`` came back as 0000-12-30 and
    ``d = DATE '0001-01-01'`` found nothing. They are now rebased as Spark rebases them;
    a file marked proleptic Gregorian is read as it is. An INT96 timestamp of a file whose
    dates only are legacy is read as written, as Spark reads it."""
    from bloomskip.spark import open_lake

    rows = (
        "(0, date'0001-01-01'), (1, date'1580-01-13'), (2, date'1582-10-04'), (3, null), "
        "(4, date'1582-10-15'), (5, date'2020-01-01')"
    )
    made = ds.sql(f"SELECT * FROM VALUES {rows} AS t(k, d)").coalesce(1)
    lakes = {}
    for proleptic in ("false", "true"):
        path = str(tmp_path / f"orc-{proleptic}")
        made.write.option("orc.proleptic.gregorian", proleptic).orc(path)
        lakes[path] = ds.read.orc
    path = str(tmp_path / "legacy-parquet")
    with spark_conf(ds, {"spark.sql.parquet.datetimeRebaseModeInWrite": "LEGACY"}):
        made.write.parquet(path)
        ds.sql("SELECT timestamp'1500-01-01 00:00:00' ts").write.parquet(str(tmp_path / "old-ts"))
    lakes[path] = ds.read.parquet
    for path, read in lakes.items():
        idx = path + ".idx"
        build(path, ["d"], idx, zone_rows=2)
        assert _rows(_ours(ds, path, idx)) == _rows(read(path)), path
        for q in ["d = DATE '0001-01-01'", "d IN (DATE '1580-01-13', DATE '1582-10-04')"]:
            theirs = _rows(read(path).where(q))
            assert theirs and _rows(_ours(ds, path, idx).where(q)) == theirs, (path, q)
            assert _rows(open_lake(ds, path, idx).plan(q).df) == theirs, (path, q)
    old = str(tmp_path / "old-ts")  # INT96, which datetimeRebaseModeInWrite leaves alone
    build(old, ["ts"], old + ".idx")
    schema = "ts timestamp"
    assert _rows(_ours(ds, old, old + ".idx", schema=schema)) == _rows(ds.read.parquet(old))


@pytest.mark.spark
def test_spark_written_lakes_read_as_spark_reads_them_in_another_time_zone(ds, tmp_path):
    """Found (tables and time zones probe):
    * INT96 (Spark's default timestamps) was inferred as TIMESTAMP_NTZ holding the UTC
      clock: in a New York session ``ts = TIMESTAMP '2024-07-01 12:00:00'`` found nothing
      (and 16:00 found the row). It is an instant, TIMESTAMP, as in Spark's reader.
    * A DECIMAL(38,6) literal of 36 digits reached ``pushFilters`` rounded to 28 (pyspark
      builds it in Python's default context) and ruled the row out; it is not pushed.
    * An ORC file of valid timestamps pyarrow cannot read (9999-12-31) failed as
      "corrupt", and with no file indexed ``plan_read`` read the ORC lake as Parquet."""
    from bloomskip.spark import plan_read

    d38 = Decimal("-123456789012345678901234567890.123456")
    with spark_conf(ds, {"spark.sql.session.timeZone": "America/New_York"}):
        lake = str(tmp_path / "int96")
        ds.sql(
            "SELECT 1L id, TIMESTAMP '2024-03-10 01:59:59.999999' ts, CAST(1.5 AS DECIMAL(38,6)) d"
            f" UNION ALL SELECT 2L, TIMESTAMP '2024-07-01 12:00:00', CAST('{d38}' AS DECIMAL(38,6))"
        ).coalesce(1).write.parquet(lake)
        build(lake, ["ts", "d"], lake + ".idx")
        ours = _ours(ds, lake, lake + ".idx")
        assert ours.schema["ts"].dataType == st.TimestampType()
        for q in [
            "ts = TIMESTAMP '2024-07-01 12:00:00'",
            "ts = TIMESTAMP '2024-07-01 16:00:00'",
            "ts IN (TIMESTAMP '2024-03-10 01:59:59.999999')",
            f"d = {d38}",
            f"d IN ({d38}, 7)",
        ]:
            theirs = _rows(ds.read.parquet(lake).where(q))
            assert _rows(ours.where(q)) == theirs, q
        assert _rows(ours.where(f"d = {d38}"))  # the row is there
        orc_lake = str(tmp_path / "orc")
        ds.sql(
            "SELECT 1L id, TIMESTAMP '9999-12-31 23:59:59.999999' ts "
            "UNION ALL SELECT 2L, TIMESTAMP '2024-07-01 12:00:00'"
        ).coalesce(1).write.orc(orc_lake)
        rep = build(orc_lake, ["id", "ts"], orc_lake + ".idx")
        assert rep.files_indexed == 0 and "out of range" in rep.failed[0][1]
        want = _rows(ds.read.orc(orc_lake).where("id = 2"))
        assert _rows(plan_read(ds, orc_lake, orc_lake + ".idx", "id = 2").df) == want
        with pytest.raises(Exception, match="pyarrow cannot read row group 0"):
            _ours(ds, orc_lake, orc_lake + ".idx").where("id = 2").collect()


@pytest.mark.spark
def test_orc_timestamps_declared_timestamp_are_read_in_the_jvm_s_zone(ds, tmp_path):
    """Found (an earlier session's note): declared ``timestamp``, an ORC TIMESTAMP's wall
    clock was taken as UTC, where Spark's ORC reader takes it in its JVM's default time
    zone: on a JVM in New York every row came back four or five hours off, and
    ``ts = TIMESTAMP '2024-07-01 12:00:00'`` found nothing. ``register`` now reads the
    driver JVM's zone; a wall clock that zone holds twice is an error, not a guess."""
    jtz = ds.sparkContext._jvm.java.util.TimeZone
    before = jtz.getDefault()
    lake = str(tmp_path / "orc")
    jtz.setDefault(jtz.getTimeZone("America/New_York"))
    try:
        register(ds)  # the driver JVM's zone: New York
        ds.sql(
            "SELECT 1L id, TIMESTAMP '2024-07-01 12:00:00' ts UNION ALL "
            "SELECT 2L, TIMESTAMP '2024-01-15 08:30:00.123456' UNION ALL SELECT 3L, NULL "
            "UNION ALL SELECT 4L, TIMESTAMP '2079-06-30 16:43:26.614007'"  # past 2037's rules
        ).coalesce(1).write.orc(lake)
        build(lake, ["id", "ts"], lake + ".idx")
        ours = _ours(ds, lake, lake + ".idx", schema="id bigint, ts timestamp")
        for q in [
            "id > 0",
            "ts = TIMESTAMP '2024-07-01 12:00:00'",
            "ts IN (TIMESTAMP '2024-01-15 08:30:00.123456', TIMESTAMP '2024-01-15 03:30:00')",
            "ts IS NULL",
        ]:
            want = _rows(ds.read.orc(lake).where(q))
            assert want and _rows(ours.where(q)) == want, q
        told = (
            ds.read.format("bloomskip")
            .option("index", lake + ".idx")
            .option("jvmTimeZone", "UTC")
            .schema("id bigint, ts timestamp")
            .load(lake)
        )  # told another zone, it reads in that one
        assert _rows(told.where("id = 1")) != _rows(ds.read.orc(lake).where("id = 1"))
        twice = str(tmp_path / "twice")  # 01:30 on 2024-11-03 happened twice in New York
        ds.sql("SELECT 1L id, TIMESTAMP '2024-11-03 05:30:00' ts").coalesce(1).write.orc(twice)
        build(twice, ["id"], twice + ".idx")
        with pytest.raises(Exception, match="daylight-saving"):
            _ours(ds, twice, twice + ".idx", schema="id bigint, ts timestamp").collect()
        ntz = _ours(ds, twice, twice + ".idx", schema="id bigint, ts timestamp_ntz").collect()
        assert ntz[0].ts == dt.datetime(2024, 11, 3, 1, 30)  # the wall clock as written
    finally:
        jtz.setDefault(before)
        register(ds)


@pytest.mark.spark
@pytest.mark.parametrize("zone", ["America/New_York", "Australia/Lord_Howe", "Europe/Dublin"])
def test_orc_timestamps_of_random_instants_read_as_spark_s_orc_reader(ds, tmp_path, zone):
    """Random instants from 1920 to 2100 (the zones' DST rules, Lord Howe's half hour,
    Dublin's negative "winter time", years past 2037), written by Spark under a JVM in
    ``zone`` and read back declared ``timestamp``: the rows of Spark's ORC reader."""
    import random

    rng = random.Random(zone)
    lo = int(dt.datetime(1920, 1, 1, tzinfo=dt.UTC).timestamp())
    hi = int(dt.datetime(2100, 1, 1, tzinfo=dt.UTC).timestamp())
    micros = [
        rng.randint(lo, hi) * 10**6 + rng.choice([0, rng.randint(1, 999_999)]) for _ in range(200)
    ]
    jtz = ds.sparkContext._jvm.java.util.TimeZone
    before = jtz.getDefault()
    lake = str(tmp_path / "orc")
    jtz.setDefault(jtz.getTimeZone(zone))
    try:
        register(ds)
        ds.createDataFrame(
            [(i, m) for i, m in enumerate(micros)], "id bigint, m bigint"
        ).selectExpr("id", "timestamp_micros(m) ts").coalesce(1).write.orc(lake)
        build(lake, ["ts"], lake + ".idx")
        ours = _ours(ds, lake, lake + ".idx", schema="id bigint, ts timestamp")
        try:
            got = _rows(ours)
        except Exception as e:  # only a wall clock a DST change made ambiguous
            assert "daylight-saving" in str(e), str(e)[-500:]
            return
        assert got == _rows(ds.read.orc(lake))
        value = ds.read.orc(lake).where("id = 7").collect()[0].ts
        q = f"ts = TIMESTAMP '{value}'"  # a lookup through the index, in the session's UTC
        assert _rows(ours.where(q)) == _rows(ds.read.orc(lake).where(q))
    finally:
        jtz.setDefault(before)
        register(ds)


def test_a_data_source_that_does_not_know_the_jvm_zone_refuses_orc_timestamps(tmp_path):
    """Registered without :func:`register` (or on Spark Connect), the JVM's zone is not
    known: an ORC TIMESTAMP declared ``timestamp`` is an error rather than UTC's guess."""
    import pyarrow.compute as pc

    from bloomskip.errors import InvalidParameterError, UnsupportedTypeError
    from bloomskip.formats.base import JVM_CLOCK_KEY
    from bloomskip.spark.readfile import conform

    clock = pa.field("ts", pa.timestamp("ns"), metadata={JVM_CLOCK_KEY: b"true"})
    table = pa.table(
        [pa.array([dt.datetime(2024, 7, 1, 8)], pa.timestamp("ns"))], schema=pa.schema([clock])
    )
    target = pa.schema([pa.field("ts", pa.timestamp("us", "UTC"))])
    with pytest.raises(UnsupportedTypeError, match="not known here"):
        conform(table, target, {"ts": "ts"}, "f.orc")
    got = conform(table, target, {"ts": "ts"}, "f.orc", jvm_zone="America/New_York")
    assert got.column(0).cast(pa.int64()).to_pylist() == [
        pc.assume_timezone(table.column(0), "America/New_York").cast(pa.int64())[0].as_py() // 1000
    ]
    ntz = pa.schema([pa.field("ts", pa.timestamp("us"))])
    assert conform(table, ntz, {"ts": "ts"}, "f.orc").column(0)[0].as_py() == dt.datetime(
        2024, 7, 1, 8
    )
    late = pa.array([dt.datetime(2079, 6, 30, 12, 43)], pa.timestamp("ns"))
    got = conform(
        pa.table([late], schema=pa.schema([clock])),
        target,
        {"ts": "ts"},
        "f.orc",
        (),
        "America/New_York",
    )  # pyarrow's own rules end in 2037 (standard time after): zoneinfo's summer time
    assert got.column(0)[0].as_py() == dt.datetime(2079, 6, 30, 16, 43, tzinfo=dt.UTC)
    lmt = pa.table(
        [pa.array([dt.datetime(1909, 6, 20, 12)], pa.timestamp("ns"))], schema=pa.schema([clock])
    )
    with pytest.raises(UnsupportedTypeError, match=r"local mean time, .* America/Sao_Paulo"):
        conform(lmt, target, {"ts": "ts"}, "f.orc", (), "America/Sao_Paulo")
    old = pa.table(
        [pa.array([dt.datetime(1901, 6, 20, 12)], pa.timestamp("ns"))], schema=lmt.schema
    )
    madras = conform(old, target, {"ts": "ts"}, "f.orc", (), "Asia/Kolkata")  # +5:21:10 then
    assert madras.column(0)[0].as_py() == dt.datetime(1901, 6, 20, 6, 38, 50, tzinfo=dt.UTC)
    near = pa.table(
        [pa.array([dt.datetime(1969, 12, 31, 18, 59, 59, 500000)], pa.timestamp("ns"))],
        schema=lmt.schema,
    )  # ORC's C++ and Java readers read it a second apart (found by the time-zone probe)
    for declared in (target, ntz):
        with pytest.raises(UnsupportedTypeError, match="within a day of 1970"):
            conform(near, declared, {"ts": "ts"}, "f.orc", (), "UTC")
    whole = pa.table(
        [pa.array([dt.datetime(1969, 12, 31, 19)], pa.timestamp("ns"))], schema=lmt.schema
    )
    assert conform(whole, ntz, {"ts": "ts"}, "f.orc").column(0)[0].as_py() == dt.datetime(
        1969, 12, 31, 19
    )
    assert BloomskipDataSource({"index": "i", "jvmTimeZone": "GMT+05:30"}).jvm_zone == "GMT+05:30"
    with pytest.raises(InvalidParameterError, match="not a time zone"):
        BloomskipDataSource({"index": "i", "jvmTimeZone": "Mars/Olympus"})


@pytest.mark.spark
def test_a_timestamp_against_wall_clocks_over_a_gap_reads_as_spark_s_scan(ds, tmp_path):
    """Found (time-zone interop probe, 2026-11-29): in New York
    ``ntz = TIMESTAMP '2024-03-10 02:30:00'`` is 03:30 to Spark's scan (the skipped hour
    moved on); the index probed 02:30 only and ruled 03:30's file out, and a lookup read
    on the driver (a local relation, where Spark casts the column instead) kept 02:30.
    Samoa skipped 2011-12-30: ``d = TIMESTAMP '2011-12-30 00:00:00'`` is 2011-12-31."""
    from bloomskip import index
    from bloomskip.spark import open_lake, plan_read

    lake = tmp_path / "lake"
    lake.mkdir()
    rows = [
        ("2024-03-10 02:30:00", dt.date(2011, 12, 30)),
        ("2024-03-10 03:30:00", dt.date(2011, 12, 31)),
    ]
    for i, (ntz, d) in enumerate(rows):
        t = pa.table(
            {"ntz": pa.array([dt.datetime.fromisoformat(ntz)], pa.timestamp("us")), "d": [d]}
        )
        pq.write_table(t, lake / f"part-{i}.parquet")
    idx = str(tmp_path / "idx")
    build(str(lake), ["ntz", "d"], idx, zone_rows=1)
    for zone, q in [
        ("America/New_York", "ntz = TIMESTAMP '2024-03-10 02:30:00'"),
        ("Pacific/Apia", "d = TIMESTAMP '2011-12-30 00:00:00'"),
    ]:
        with spark_conf(ds, {"spark.sql.session.timeZone": zone}):
            want = _rows(ds.read.parquet(str(lake)).where(q))
            assert want, q
            assert _rows(_ours(ds, str(lake), idx).where(q)) == want, q
            plan = open_lake(ds, str(lake), idx).plan(q)
            assert _rows(plan.df) == want and plan.way == "spark", (q, plan.way_why)
            assert _rows(plan_read(ds, str(lake), idx, q).df) == want, q
            files = {os.path.basename(f.path) for f in index.open(idx).query(q, zone=zone).files}
            assert "part-1.parquet" in files, (q, files)


def test_decimals_pyspark_may_have_rounded_are_not_pushed():
    wide = Decimal("-1.234567890123456789012345679E+29")  # 28 digits: maybe rounded
    assert translate(sds.EqualTo(("d",), wide)) is None
    assert translate(sds.In(("d",), (Decimal("1.5"), wide))) is None
    assert translate(sds.EqualTo(("d",), Decimal("1.5"))) is not None


@pytest.mark.spark
def test_legacy_calendar_timestamps_before_1900_are_never_ruled_out(ds, tmp_path):
    """Found (Spark writers probe): Spark rebases a legacy (``LEGACY`` rebase mode) file's
    timestamps before 1900 in the writer's time zone (Kolkata's local mean time moved
    1899-12-31 23:59:59.999999Z by 8 min 50 s on disk), not only before 1582; and the
    per-file ``prune`` read no legacy marker (a DATE '1200-03-01' fell outside the raw
    statistics). Those literals may match now, the index leaves such columns
    unindexed, the data source refuses such instants with a typed error, and
    TIMESTAMP_NTZ, which Spark does not rebase, reads as written."""
    from bloomskip import parquet
    from bloomskip.expr.sql import parse
    from bloomskip.spark import plan_read

    zone = "Asia/Kolkata"
    settings = {
        "spark.sql.session.timeZone": zone,
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        "spark.sql.parquet.datetimeRebaseModeInWrite": "LEGACY",
    }
    with spark_conf(ds, settings):
        lake, ntz = str(tmp_path / "legacy"), str(tmp_path / "ntz")
        ds.sql(
            "SELECT id, CASE WHEN id = 7 THEN TIMESTAMP '1900-01-01 05:21:09.999999' "
            "ELSE TIMESTAMP '2024-01-01 00:00:00' END ts, "
            "CASE WHEN id = 9 THEN DATE '1200-03-01' ELSE DATE '2024-01-01' END d FROM range(12)"
        ).coalesce(1).write.option("parquet.bloom.filter.enabled", "true").parquet(lake)
        ds.sql(
            "SELECT 1L id, TIMESTAMP_NTZ '0001-01-01 00:00:00' n UNION ALL "
            "SELECT 2L, TIMESTAMP_NTZ '2024-01-01 00:00:00'"
        ).coalesce(1).write.parquet(ntz)
        build(lake, ["ts", "d"], lake + ".idx", zone_rows=4)
        path = next(os.path.join(lake, f) for f in os.listdir(lake) if f.endswith(".parquet"))
        for q in ["ts = TIMESTAMP '1900-01-01 05:21:09.999999'", "d = DATE '1200-03-01'"]:
            want = _rows(ds.read.parquet(lake).where(q))
            assert want, q
            expr = parse(q, dialect="spark")
            assert all(u.may_match for u in parquet.prune(path, expr, zone=zone).units), q
            assert _rows(plan_read(ds, lake, lake + ".idx", q).df) == want, q
        with pytest.raises(Exception, match="timestamps before 1900 in Spark's legacy calendar"):
            _ours(ds, lake, lake + ".idx", schema="id bigint, ts timestamp").collect()
        build(ntz, ["n"], ntz + ".idx")
        assert _rows(_ours(ds, ntz, ntz + ".idx")) == _rows(ds.read.parquet(ntz))
