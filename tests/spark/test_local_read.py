"""Lookups answered on the driver (:mod:`bloomskip.spark.local`): the candidate zones'
rows, narrowed by hash, handed to Spark as a local relation.

* Every column type the driver reads gives exactly Spark's rows, in two session time
  zones; the relation is a ``LocalTableScan`` (collecting it runs no Spark job).
* Whatever the driver cannot read exactly as Spark goes to Spark, and the plan says why:
  a partition column, reader options, INT96 timestamps, dates before 1900, a predicate
  on file metadata, more candidate rows than ``local_rows``.
* A file rewritten after indexing, with the index trusted (``check_source=False``), is
  Spark's to read: its zones' row offsets no longer apply.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bloomskip import index
from bloomskip.errors import InvalidParameterError
from bloomskip.spark import open_lake, plan_read

pytestmark = pytest.mark.spark

_UTC = dt.UTC
N = 600


def _typed(i: int, n: int = N) -> pa.Table:
    """Row ``r`` of file ``i`` holds ``v = i * 1000 + r`` in every type (every 7th null)."""
    vs = [i * 1000 + r for r in range(n)]
    mask = [v % 7 == 0 for v in vs]

    def col(values, t):
        return pa.array([None if m else x for x, m in zip(values, mask, strict=True)], t)

    return pa.table(
        {
            "i8": col([v % 100 for v in vs], pa.int8()),
            "i16": col([v % 30000 for v in vs], pa.int16()),
            "i32": col(vs, pa.int32()),
            "i64": col([v * 10**9 for v in vs], pa.int64()),
            "f32": col([float(v) / 4 for v in vs], pa.float32()),
            "f64": col([-0.0 if v % 11 == 0 else float(v) / 8 for v in vs], pa.float64()),
            "dec": col([decimal.Decimal(v) / 100 for v in vs], pa.decimal128(12, 2)),
            "d": col([dt.date(2000, 1, 1) + dt.timedelta(days=v) for v in vs], pa.date32()),
            "ts": col(
                [dt.datetime(2020, 3, 8, tzinfo=_UTC) + dt.timedelta(minutes=v) for v in vs],
                pa.timestamp("us", tz="UTC"),
            ),
            "ntz": col(
                [dt.datetime(2020, 11, 1) + dt.timedelta(seconds=v) for v in vs],
                pa.timestamp("us"),
            ),
            "b": col([f"b{v}".encode() for v in vs], pa.binary()),
            "bo": col([v % 2 == 0 for v in vs], pa.bool_()),
            "s": col([f"ünï-{v:06d}" for v in vs], pa.string()),
        }
    )


def _rows(df) -> list:
    rows = [tuple(r) for r in df.collect()]
    return sorted(rows, key=lambda r: [(v is None, str(v)) for v in r])


def _local_scan(df) -> bool:
    plan = df._jdf.queryExecution().executedPlan().toString()
    return "LocalTableScan" in plan and "FileScan" not in plan


@pytest.fixture
def typed(tmp_path):
    lake = tmp_path / "lake"
    lake.mkdir()
    for i in range(4):
        pq.write_table(_typed(i), lake / f"p{i}.parquet", row_group_size=250)
    cols = ["i8", "i16", "i32", "i64", "f64", "dec", "d", "ts", "ntz", "b", "s"]
    index.build(lake, cols, tmp_path / "idx", zone_rows=100)
    return lake, tmp_path / "idx"


QUERIES = [
    "i32 = 2005",
    "i32 = 2007",  # a null row
    "i8 = 5",
    "i16 IN (1005, 3010, -1)",
    "i64 = 1005000000000",
    "f64 = 0.0",  # -0.0 rows
    "f64 = 250.625",
    "dec = 20.05",
    "dec = '30.10'",
    "d = DATE'2005-06-28'",
    "ts = TIMESTAMP'2020-03-09 09:25:00+00:00'",
    "ntz = TIMESTAMP_NTZ'2020-11-01 00:50:05'",
    "b = X'6231303035'",
    "s = 'ünï-002005' OR s = 'ünï-003999'",
    "s IN ('ünï-001003', 'ünï-001004') AND bo",
    "i32 IS NULL AND s IS NULL",
    "i32 = 1005 AND f32 > 0",
    "S = 'ünï-000010'",
]


@pytest.mark.parametrize("zone", ["UTC", "America/Los_Angeles"])
def test_every_type_equals_plain_spark(spark, typed, zone):
    """The truth is Spark's scan without Parquet filter pushdown: with it, Spark drops
    ``-0.0`` rows for ``f64 = 0.0`` (its row group statistics order -0.0 below 0.0),
    rows that Spark's own filter keeps."""
    lake, idx = typed
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    spark.conf.set("spark.sql.parquet.filterPushdown", "false")
    try:
        plain = spark.read.parquet(str(lake))
        lookups = open_lake(spark, lake, idx)
        for q in QUERIES:
            plan = lookups.plan(q)
            assert _rows(plan.df) == _rows(plain.where(q)), q
            if plan.files_read:
                assert plan.way == "driver" and _local_scan(plan.df), (q, plan.summary())
                assert plan.rows_kept <= plan.rows_read
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
        spark.conf.unset("spark.sql.parquet.filterPushdown")


def test_a_point_lookup_keeps_only_rows_whose_hash_matches(spark, typed):
    lake, idx = typed
    plan = plan_read(spark, lake, idx, "s = 'ünï-002005'")
    assert plan.way == "driver" and plan.rows_read >= 100 and plan.rows_kept == 1
    assert "read on the driver" in plan.summary()
    assert plan.to_json()["way"] == "driver"
    assert [r.s for r in plan.df.collect()] == ["ünï-002005"]


def test_what_the_driver_cannot_read_exactly_goes_to_spark(spark, typed, tmp_path):
    lake, idx = typed
    plain = spark.read.parquet(str(lake))

    def spark_reads(q: str, why: str, **kw) -> None:
        plan = plan_read(spark, lake, idx, q, **kw)
        assert plan.way == "spark" and why in (plan.way_why or ""), (q, plan.way_why)
        assert _rows(plan.df) == _rows(plain.where(q)), q

    spark_reads("i32 = 2005", "local_rows=0", local_rows=0)
    spark_reads("i32 > 0", "candidate rows > local_rows", local_rows=1000)
    spark_reads("i32 = 2005 AND input_file_name() LIKE '%p2%'", "file metadata")
    for bad in (-1, 1.5, "10", True):
        with pytest.raises(InvalidParameterError, match="local_rows"):
            plan_read(spark, lake, idx, "i32 = 2005", local_rows=bad)
    with_options = plan_read(spark, lake, idx, "i32 = 2005", options={"mergeSchema": "false"})
    assert with_options.way == "spark" and "options" in with_options.way_why

    old = tmp_path / "old"
    old.mkdir()
    t = pa.table({"k": pa.array([1, 2, 3], pa.int64()), "d": pa.array([0, -25568, 5], pa.date32())})
    pq.write_table(t, old / "a.parquet")
    index.build(old, ["k"], tmp_path / "oidx")
    got = plan_read(spark, old, tmp_path / "oidx", "k = 2")  # 1899-12-31
    assert got.way == "spark" and "before 1900" in " ".join(got.notes)
    assert _rows(got.df) == _rows(spark.read.parquet(str(old)).where("k = 2"))


def test_int96_timestamps_are_spark_s(spark, tmp_path):
    """Spark writes INT96 timestamps, which pyarrow reads as nanoseconds (wrapping outside
    1677-2262) unless asked for microseconds: the driver reads them as Spark does (it
    left them to Spark before)."""
    lake = tmp_path / "int96"
    df = spark.sql(
        "SELECT id AS k, IF(id = 7, TIMESTAMP'9999-12-31 23:59:59.999999', "
        "TIMESTAMP'2021-05-06 07:08:09') AS t FROM range(50)"
    )
    df.coalesce(1).write.option("compression", "none").parquet(str(lake))
    index.build(lake, ["k"], tmp_path / "idx")
    plan = plan_read(spark, lake, tmp_path / "idx", "k = 7")
    assert plan.way == "driver"
    assert _rows(plan.df) == _rows(spark.read.parquet(str(lake)).where("k = 7"))


def test_partition_columns_are_spark_s(spark, tmp_path):
    lake = tmp_path / "lake"
    for day in ("2024-01-01", "2024-01-02"):
        (lake / f"day={day}").mkdir(parents=True)
        pq.write_table(_typed(int(day[-1])), lake / f"day={day}" / "p.parquet")
    index.build(lake, ["i32"], tmp_path / "idx", zone_rows=100)
    plan = plan_read(spark, lake, tmp_path / "idx", "i32 = 2005")
    assert plan.way == "spark" and "day" in plan.way_why
    assert _rows(plan.df) == _rows(spark.read.parquet(str(lake)).where("i32 = 2005"))


def test_a_column_a_partition_directory_also_names_is_spark_s(spark, tmp_path):
    """``c=DE/`` holding files with a column ``c``: Spark gives ``c`` the directory's
    value, so the driver does not read such a lookup (it would give the file's)."""
    lake = tmp_path / "lake"
    (lake / "c=DE").mkdir(parents=True)
    t = pa.table({"k": pa.array(range(10), pa.int64()), "c": ["de"] * 10})
    pq.write_table(t, lake / "c=DE" / "p.parquet")
    index.build(lake, ["k"], tmp_path / "idx", zone_rows=4)
    plan = plan_read(spark, lake, tmp_path / "idx", "k = 3")
    assert plan.way == "spark" and "partition directory names column c" in plan.way_why
    assert _rows(plan.df) == _rows(spark.read.parquet(str(lake)).where("k = 3"))


def test_a_file_rewritten_since_indexing_is_read_whole_when_the_index_is_trusted(spark, typed):
    lake, idx = typed
    path = lake / "p2.parquet"
    st = os.stat(path)
    moved = _typed(2).take(list(range(N - 1, -1, -1)))  # the same rows, reversed
    pq.write_table(moved, path, row_group_size=250)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    lookups = open_lake(spark, lake, idx)
    q = "i32 = 2005"
    plan = lookups.plan(q, check_source=False)  # zones of the old file's row offsets
    assert plan.way == "spark" and "changed since it was indexed" in " ".join(plan.notes)
    assert _rows(plan.df) == _rows(spark.read.parquet(str(lake)).where(q))
