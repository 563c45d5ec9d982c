"""Bloom filters added to ORC files, against ORC Java (through Spark 4, orc-core 2.x).

* Spark writes a file with ORC Java's own filters on every column (JVM in Los Angeles,
  several stripes); the same file with those streams hidden gets bloomskip's: every row
  group's filter is ORC Java's, bit for bit (near the epoch, a superset: bloomskip adds
  the values a second either side, which ORC's readers need there);
* Spark reads the rewritten files as the same table, finds every value it holds, and its
  ORC scan (``spark.sql.orc.filterPushdown``) skips row groups with the new filters:
  fewer rows out of the scan (``numOutputRows``) than before them;
* legacy BLOOM_FILTER streams stay, the new stream is listed after them (ORC Java uses
  the last one listed);
* ``bloomskip.spark.add_bloom_filters`` does the same to every ORC file of a lake.
"""

from __future__ import annotations

import glob
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

from bloomskip.orc import add_bloom_filters, probe, read_orc
from tests.support.orc_write import hide_utf8_streams, parts, stored_filters, stream_kinds

pytestmark = pytest.mark.spark

N = 6000
NEAR_EPOCH_ROWS = 1000  # ts of rows 0..999: -2 s .. +1 s; the others cross a DST change
TS_MICROS = "if(id < 1000, -2000000 + id * 3001, 1583650000000000 + (id - 1000) * 36000001)"
COLUMNS = {
    "l": "id * 7919 - 1000000",
    "i": "cast(id * 31 - 5000 as int)",
    "sm": "cast(id % 3000 - 1500 as smallint)",
    "ti": "cast(id % 256 - 128 as tinyint)",
    "f": "cast(id / 3.0 as float)",
    "d": "id / 7.0 - 100",
    "s": "if(id % 13 = 0, null, concat('é', id % 97, '日本'))",
    "b": "cast(concat('b', id % 50) as binary)",
    "dec": "cast((id - 1250) / 8 as decimal(10,3))",
    "dec30": "cast(id * 123456789.12345 as decimal(30,5))",
    "dt": "date_add(date'1969-12-25', cast(id as int))",
    "ts": f"timestamp_micros({TS_MICROS})",
    "st": "named_struct('x', id * 3, 'y', concat('y', id))",
    "bo": "id % 2 = 0",
}
FILTERED = [c for c in COLUMNS if c not in ("st", "bo")] + ["st.x", "st.y"]


def spark_write(spark, folder: Path, options: dict[str, str]) -> Path:
    """One ORC file by Spark (ORC Java), the JVM's zone Los Angeles, stripes of about
    64 KiB (cut inside row groups of 1,000), uncompressed."""
    df = spark.range(N).selectExpr("id", *[f"{sql} as {name}" for name, sql in COLUMNS.items()])
    tz = spark._jvm.java.util.TimeZone
    before = tz.getDefault()
    tz.setDefault(tz.getTimeZone("America/Los_Angeles"))
    try:
        w = (
            df.coalesce(1)
            .sortWithinPartitions("id")
            .write.option("orc.row.index.stride", "1000")
            .option("orc.stripe.size", "65536")
            .option("orc.rows.between.memory.checks", "500")
            .option("compression", "none")
        )
        for k, v in options.items():
            w = w.option(k, v)
        w.orc(str(folder))
    finally:
        tz.setDefault(before)
    (path,) = glob.glob(str(folder / "*.orc"))
    return Path(path)


@pytest.fixture(scope="module")
def java_files(spark, tmp_path_factory):
    """(ORC Java's file with its filters, the same with them hidden, bloomskip's)."""
    out = tmp_path_factory.mktemp("orc-java")
    java = spark_write(
        spark,
        out / "java",
        {"orc.bloom.filter.columns": ",".join(FILTERED), "orc.bloom.filter.fpp": "0.05"},
    )
    hidden = out / "hidden.orc"
    hidden.write_bytes(hide_utf8_streams(java.read_bytes()))
    ours = out / "ours.orc"
    result = add_bloom_filters(hidden, ours, columns=FILTERED, fpp=0.05)
    assert set(result.filters_added) == set(FILTERED)
    return java, hidden, ours


def test_filters_are_orc_javas_bit_for_bit(java_files):
    java, hidden, ours = java_files
    f = read_orc(java)
    assert (f.writer.writer, f.writer_timezone(0)) == (0, "America/Los_Angeles")
    assert len(f.stripes) >= 3 and f.num_rows == N
    assert all(stored_filters(hidden, c) == [None] * len(f.stripes) for c in FILTERED)
    firsts = [g.first_row for s in f.stripes for g in f.row_groups(s.index)]
    checked = supersets = 0
    for name in FILTERED:
        theirs = [g for s in stored_filters(java, name) for g in s]
        mine = [g for s in stored_filters(ours, name) for g in s]
        assert len(theirs) == len(mine) == len(firsts)
        for first, a, b in zip(firsts, theirs, mine, strict=True):
            if name == "ts" and first < NEAR_EPOCH_ROWS:
                assert (a.words & b.words == a.words).all(), (name, first)  # a superset
                supersets += a != b
            else:
                assert a == b, (name, first)
            checked += 1
    assert supersets > 0 and checked >= len(FILTERED) * 6
    assert parts(ours).data == parts(java).data


def spark_lookup(spark, path: Path, where: str, pushdown: bool) -> tuple[int, int]:
    """(rows found, rows output by the ORC scan: whole row groups)."""
    spark.conf.set("spark.sql.orc.filterPushdown", str(pushdown).lower())
    try:
        df = spark.read.orc(str(path)).where(where)
        found = len(df.collect())
        plan = df._jdf.queryExecution().executedPlan()
        if plan.nodeName().startswith("AdaptiveSparkPlan"):
            plan = plan.executedPlan()
        leaves = plan.collectLeaves()
        scanned = sum(
            int(leaves.apply(i).metrics().apply("numOutputRows").value())
            for i in range(leaves.size())
            if "Scan" in leaves.apply(i).nodeName()
        )
    finally:
        spark.conf.unset("spark.sql.orc.filterPushdown")
    return found, scanned


def test_spark_reads_the_table_and_finds_every_value(spark, java_files):
    """Every value as Spark reads it back is found with the filters as without them, near
    the epoch too (where ORC Java reads instants in (-1 s, 0) a second late)."""
    java, _, ours = java_files
    assert spark.read.orc(str(ours)).orderBy("id").collect() == (
        spark.read.orc(str(java)).orderBy("id").collect()
    )
    assert po.read_table(ours).equals(po.read_table(java))
    values = (
        spark.read.orc(str(ours))
        .selectExpr("id", "l", "s", "cast(dec as string) as dec", "st.y", "unix_micros(ts) as us")
        .orderBy("id")
        .collect()
    )
    for r in (0, 1, 333, 500, 665, 666, 667, 999, 1000, 2345, 5999):  # 334..666: (-1 s, 0)
        row = values[r]
        for where in (
            f"ts = timestamp_micros({row.us})",
            f"s = '{row.s}'" if row.s is not None else f"l = {row.l}",
            f"dec = {row.dec}",
            f"l = {row.l}",
            f"st.y = '{row.y}'",
        ):
            on = spark_lookup(spark, ours, where, pushdown=True)
            off = spark_lookup(spark, ours, where, pushdown=False)
            assert on[0] == off[0] >= 1 and on[1] <= off[1], (r, where, on, off)


def test_spark_skips_row_groups_with_the_new_filters(spark, java_files):
    _, hidden, ours = java_files
    for r in (10, 2500, 5555):
        value = r * 7919 - 1000000 + 1  # between two values of l: inside min/max
        before = spark_lookup(spark, hidden, f"l = {value}", pushdown=True)
        after = spark_lookup(spark, ours, f"l = {value}", pushdown=True)
        off = spark_lookup(spark, ours, f"l = {value}", pushdown=False)
        assert before[0] == after[0] == off[0] == 0
        assert off[1] == N and before[1] > 0 and after[1] == 0, (r, before, after)
        present = spark_lookup(spark, ours, f"l = {value - 1}", pushdown=True)
        assert present[0] == 1 and 0 < present[1] <= 1000


def test_legacy_streams_stay_and_the_new_one_comes_last(spark, tmp_path):
    original = spark_write(
        spark,
        tmp_path / "original",
        {
            "orc.bloom.filter.columns": "l,s",
            "orc.bloom.filter.write.version": "original",
        },
    )
    legacy = tmp_path / "legacy.orc"
    legacy.write_bytes(hide_utf8_streams(original.read_bytes()))  # kind 7 only
    assert all(kinds == [6, 7] for kinds in stream_kinds(legacy, "s"))
    add_bloom_filters(legacy, columns=["l", "s"])
    assert all(kinds == [6, 7, 8] for kinds in stream_kinds(legacy, "s"))
    units = probe(legacy, "s", ["é5日本", "not there"]).units
    assert any(u.result == "maybe" for u in units)
    assert spark_lookup(spark, legacy, "s = 'é5日本'", pushdown=True)[0] == sum(
        1 for i in range(N) if i % 13 and i % 97 == 5
    )
    assert spark_lookup(spark, legacy, "s = 'not there'", pushdown=True) == (0, 0)


def test_spark_adds_filters_to_every_orc_file_of_a_lake(spark, tmp_path):
    from bloomskip.spark import add_bloom_filters as retrofit

    lake = tmp_path / "lake"
    lake.mkdir()
    codecs = ["zlib", "snappy", "lz4", "zstd"]  # ORC Java decompresses what bloomskip wrote
    for i, codec in enumerate(codecs):
        k = np.arange(4000) * 2 + i * 10**6
        po.write_table(
            pa.table({"k": k, "v": [f"v{x}" for x in k]}),
            lake / f"p{i}.orc",
            row_index_stride=1000,
            stripe_size=16 * 1024,
            compression=codec,
        )
    pq.write_table(pa.table({"k": np.arange(100)}), lake / "p.parquet")
    before = {p.name: parts(p).data for p in lake.glob("*.orc")}
    files = [read_orc(lake / p) for p in before]
    groups = sum(f.num_row_groups(s.index) for f in files for s in f.stripes)
    rep = retrofit(spark, lake, ["k"])
    assert rep.files_changed == 5 and not rep.failed and rep.fpp is None
    assert rep.filters_added == groups + 1  # a filter per ORC row group, and the Parquet one
    assert {p.name: parts(p).data for p in lake.glob("*.orc")} == before
    f = read_orc(lake / "p1.orc")
    assert f.bloom_filters(0, f.column("k").id).filters[0].num_hash_functions == 4  # fpp 0.05
    again = retrofit(spark, lake, ["k"])
    assert again.files_changed == 0 and again.files_unchanged == 5
    for i in range(len(codecs)):
        path = lake / f"p{i}.orc"
        assert spark_lookup(spark, path, f"k = {i * 10**6 + 2003}", pushdown=True) == (0, 0)
        found, scanned = spark_lookup(spark, path, f"k = {i * 10**6 + 2002}", pushdown=True)
        assert found == 1 and 0 < scanned <= 1000
