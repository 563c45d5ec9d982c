"""ORC pruning: **no false negatives**, proven against pyarrow, pyorc and Spark files.

Files are written at test time by pyarrow (ORC C++ 2.2), pyorc (ORC C++ 2.3, writer
zone America/Los_Angeles) and Spark (ORC Java 2.3, JVM and session zone
America/Los_Angeles, timestamps across the 2020 DST changes), several row groups each,
with a bloom filter on every column. Hypothesis chooses the data (for pyarrow and pyorc)
and predicates - the generators of the Parquet properties (``=``, ``IN``, ``!=``,
``NOT IN``, ``IS [NOT] NULL``, ``IS [NOT] DISTINCT FROM``, AND / OR / NOT; present values,
near misses and edges in every SQL literal form).

The truth never involves ORC pruning: the file is read whole with ``pyarrow.orc``, which
returns an ORC ``TIMESTAMP`` as the writer's wall clock and a ``TIMESTAMP_INSTANT`` as
a UTC instant - the semantics bloomskip binds literals with - and the same WHERE runs in
DuckDB (``TimeZone='UTC'``) over that table, united with the exact-semantics oracle of the
Parquet properties. Every row group holding a matching row must say ``may_match``.

Then: pruning is useful (absent values inside min/max ruled out by bloom filters for
every writer, at least as many row groups as ORC C++'s and ORC Java's own readers skip);
the trust policy refuses the filters writers are known to get wrong; mutated files give
typed errors or answers, never a crash or a hang.
"""

from __future__ import annotations

import datetime as dt
import glob
import io
import random
import signal
import tempfile
import zoneinfo
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from bloomskip.errors import BloomskipError, InvalidParameterError, PredicateError
from bloomskip.expr.expressions import Literal
from bloomskip.orc import OrcBloomFilter, probe, prune, read_orc
from bloomskip.orc.prune import STAGES, schema_of
from tests.support.predicates import (
    SETTINGS,
    Col,
    Truth,
    _column_keys,
    _ns_text,
    build_table,
    check_tiling,
    examples,
    palettes_for,
    predicates,
    seeded_palettes,
    tree_columns,
)

duckdb = pytest.importorskip("duckdb")
pyorc = pytest.importorskip("pyorc")

LA = zoneinfo.ZoneInfo("America/Los_Angeles")
_EPOCH = dt.date(1970, 1, 1)
_EPOCH_DT = dt.datetime(1970, 1, 1)
PREDICATES_PER_FILE = 8

# ---------------------------------------------------------------------------- columns


def _c(name: str, kind: str, t: pa.DataType) -> Col:
    return Col(name, kind, t)


#: pyarrow writes every Arrow type it maps to ORC: naive timestamps as TIMESTAMP (zone
#: GMT), UTC ones as TIMESTAMP_INSTANT.
PYARROW_COLUMNS = [
    _c("i8", "int", pa.int8()),
    _c("i16", "int", pa.int16()),
    _c("i32", "int", pa.int32()),
    _c("i64", "int", pa.int64()),
    _c("f32", "float", pa.float32()),
    _c("f64", "float", pa.float64()),
    _c("dt", "date", pa.date32()),
    _c("ts", "ts", pa.timestamp("ns")),
    _c("tsi", "ts", pa.timestamp("ns", tz="UTC")),
    _c("d5", "decimal", pa.decimal128(5, 2)),
    _c("d19", "decimal", pa.decimal128(19, 4)),
    _c("d38", "decimal", pa.decimal128(38, 10)),
    _c("s", "string", pa.string()),
    _c("bin", "binary", pa.binary()),
    _c("b", "bool", pa.bool_()),
    _c("st.x", "int", pa.int32()),
]

#: pyorc takes Python values: timestamps to the microsecond; VARCHAR and CHAR too.
PYORC_COLUMNS = [c for c in PYARROW_COLUMNS if c.name not in ("ts", "tsi")] + [
    _c("ts", "ts", pa.timestamp("us")),
    _c("tsi", "ts", pa.timestamp("us", tz="UTC")),
    _c("vc", "string", pa.string()),
    _c("ch", "string", pa.string()),
]
PYORC_TYPES = {
    "i8": "tinyint",
    "i16": "smallint",
    "i32": "int",
    "i64": "bigint",
    "f32": "float",
    "f64": "double",
    "dt": "date",
    "ts": "timestamp",
    "tsi": "timestamp with local time zone",
    "d5": "decimal(5,2)",
    "d19": "decimal(19,4)",
    "d38": "decimal(38,10)",
    "s": "string",
    "vc": "varchar(3)",
    "ch": "char(4)",
    "bin": "binary",
    "b": "boolean",
    "st": "struct<x:int>",
}

#: Spark: TimestampType (ORC TIMESTAMP, the JVM zone's wall clock) and TIMESTAMP_NTZ (an
#: ORC bigint of microseconds); decimals of every precision class.
SPARK_COLUMNS = [
    c for c in PYARROW_COLUMNS if c.name not in ("ts", "tsi", "d5", "d19", "d38", "tsi")
] + [
    _c("ts", "ts", pa.timestamp("us")),
    _c("ts_ntz", "ts", pa.timestamp("us")),
    _c("d9", "decimal", pa.decimal128(9, 2)),
    _c("d18", "decimal", pa.decimal128(18, 2)),
    _c("d19", "decimal", pa.decimal128(19, 4)),
    _c("d38", "decimal", pa.decimal128(38, 10)),
]

#: Timestamps pyarrow can read back as nanoseconds (1677-09-22 .. 2262-04-11, a day in).
_NS_LO, _NS_HI = -(2**63) + 86_400 * 10**9, 2**63 - 1 - 86_400 * 10**9
#: Around the 2020 US DST changes, as wall clock: 02:00-03:00 on 03-08 does not exist in
#: Los Angeles, 01:00-02:00 on 11-01 happens twice.
DST_WALL_US = [
    1583632800_000000,  # 2020-03-08 02:00
    1583634600_000000,  # 2020-03-08 02:30 (in the gap)
    1583636400_000000,  # 2020-03-08 03:00
    1604192400_000000,  # 2020-11-01 01:00
    1604194200_000000,  # 2020-11-01 01:30 (twice)
    1604196000_000000,  # 2020-11-01 02:00
]


def clip_timestamps(columns: list[Col], palettes: dict[str, list]) -> dict[str, list]:
    """Palettes with timestamps pyarrow can read (others moved into range), plus DST
    edges for the microsecond columns."""
    out = dict(palettes)
    for c in columns:
        if c.kind != "ts":
            continue
        per = {"ns": 1, "us": 1000}[c.type.unit]
        lo, hi = -(-_NS_LO // per), _NS_HI // per
        vals = [min(max(v, lo), hi) for v in palettes[c.name]]
        if per == 1000:
            vals = vals[:4] + DST_WALL_US + vals[4:]
        out[c.name] = vals
    return out


# ----------------------------------------------------------------------------- truth


class OrcTruth(Truth):
    """The Parquet properties' truth over an ORC file read whole by pyarrow (columns in
    ``ntz``, Spark's TIMESTAMP_NTZ bigints, read as the microsecond wall clock)."""

    def __init__(self, path: str, columns: list[Col], ntz: tuple[str, ...] = ()) -> None:
        table = po.read_table(path)
        for name in ntz:
            i = table.schema.get_field_index(name)
            micros = pc.cast(table.column(name), pa.int64())
            table = table.set_column(i, name, micros.cast(pa.timestamp("us")))
        self.table = table
        self.n = table.num_rows
        self.con = duckdb.connect()
        self.con.execute("SET TimeZone='UTC'")
        self.con.register("t", table.append_column("__row", pa.array(range(self.n))))
        self.keys = {c.name: _column_keys(table, c) for c in columns}
        self.f32 = {
            c.name: c.name != "st.x" and pa.types.is_float32(table.column(c.name).type)
            for c in columns
        }

    def duckdb_rows(self, sql: str) -> np.ndarray | None:
        try:
            return super().duckdb_rows(sql)
        except UnicodeDecodeError:
            # DuckDB 1.x: comparing text with a blob that is not UTF-8 can raise this
            # instead of a duckdb.Error; the exact-semantics oracle decides alone.
            return None


def check_prune(path: str, truth: Truth, tree, stages=STAGES) -> None:
    sql = tree.sql()
    note(f"predicate: {sql}  (stages {stages})")
    result = prune(path, sql, stages=stages)
    check_tiling(result, truth.n)
    rows = truth.rows(tree)
    for u in result.units:
        lo, hi = np.searchsorted(rows, [u.first_row, u.first_row + u.num_rows])
        if hi > lo and not u.may_match:
            row = int(rows[lo])
            values = {c: truth.keys[c][row] for c in dict.fromkeys(tree_columns(tree))}
            raise AssertionError(
                f"FALSE NEGATIVE: {sql!r} (stages {stages}) pruned row group {u.row_group} "
                f"({u.reason!r}) but its row {row} matches: {values}"
            )


def probe_literal(col: Col, v):
    if col.kind == "ts":
        return Literal("timestamp", _ns_text(v, 9))
    if col.kind == "date":
        return _EPOCH + dt.timedelta(days=v)
    return v


def check_probe(path: str, truth: Truth, columns: list[Col]) -> None:
    units = prune(path, "TRUE").units
    for col in columns:
        vals = truth.keys[col.name]
        chosen: dict[str, object] = {}
        for u in units:
            for v in vals[u.first_row : u.first_row + u.num_rows][:50]:
                if col.kind == "date" and v is not None and not -719_162 <= v <= 2_932_896:
                    continue  # Spark's hybrid-calendar days before year 1: no Python date
                if v is not None and len(chosen) < 6:
                    chosen.setdefault(repr(v), v)
        if not chosen:
            continue
        items = list(chosen.values())
        result = probe(path, col.name, [probe_literal(col, v) for v in items])
        assert [(u.first_row, u.num_rows) for u in result.units] == [
            (u.first_row, u.num_rows) for u in units
        ]
        for u in result.units:
            present = set(map(repr, vals[u.first_row : u.first_row + u.num_rows]))
            for v, status in zip(items, u.values, strict=True):
                if repr(v) in present:
                    assert status != "absent", (
                        f"probe {col.name}={v!r}: absent in row group {u.row_group} "
                        f"which holds it ({u.reason})"
                    )


STAGE_SETS = [STAGES, STAGES, STAGES, ("bloom",), ("statistics",)]


def check_predicates(path: str, truth: Truth, columns: list[Col], palettes, data) -> None:
    for _ in range(PREDICATES_PER_FILE):
        tree = data.draw(predicates(columns, palettes))
        check_prune(path, truth, tree, data.draw(st.sampled_from(STAGE_SETS), label="stages"))
    check_probe(path, truth, data.draw(st.lists(st.sampled_from(columns), max_size=3)))


# ---------------------------------------------------------------------------- writers


def arrow_ids(table: pa.Table) -> list[int]:
    """ORC column ids (pre-order, root 0) of every column of an Arrow table."""
    ids, n = [], 0

    def walk(t: pa.DataType) -> None:
        nonlocal n
        n += 1
        ids.append(n)
        for i in range(t.num_fields):
            walk(t.field(i).type)

    for f in table.schema:
        walk(f.type)
    return ids


def write_pyarrow(table: pa.Table, path: str, rows: int, options: dict) -> None:
    po.write_table(
        table, path, row_index_stride=rows, bloom_filter_columns=arrow_ids(table), **options
    )


pyarrow_options = st.fixed_dictionaries(
    {
        "bloom_filter_fpp": st.sampled_from([0.01, 0.05, 0.3]),
        "compression": st.sampled_from(["uncompressed", "zstd", "snappy", "zlib", "lz4"]),
        # small stripes and batches: stripes end part way through a row group
        "stripe_size": st.sampled_from([64 * 1024 * 1024, 4096]),
        "batch_size": st.sampled_from([1024, 70]),
    }
)


def _wall_to_instant(wall_us: int) -> dt.datetime:
    """The instant whose Los Angeles wall clock is ``wall_us`` (the later one in a gap)."""
    naive = _EPOCH_DT + dt.timedelta(microseconds=wall_us)
    return naive.replace(tzinfo=LA).astimezone(dt.UTC)


def pyorc_rows(table: pa.Table, columns: list[Col]) -> list[tuple]:
    names = [c.name for c in columns if c.name != "st.x"] + ["st"]
    cols = []
    for name in names:
        arr = table.column(name).combine_chunks()
        if name in ("ts", "tsi"):
            us = pc.cast(arr, pa.int64()).to_pylist()
            if name == "ts":
                vals = [None if v is None else _wall_to_instant(v) for v in us]
            else:
                vals = [
                    None
                    if v is None
                    else dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(microseconds=v)
                    for v in us
                ]
        elif name == "st":
            vals = [None if r is None else (r["x"],) for r in arr.to_pylist()]
        else:
            vals = arr.to_pylist()
        cols.append(vals)
    return list(zip(*cols, strict=True))


def pyorc_schema(columns: list[Col]) -> str:
    names = [c.name for c in columns if c.name != "st.x"] + ["st"]
    return "struct<" + ",".join(f"{n}:{PYORC_TYPES[n]}" for n in names) + ">"


def write_pyorc(table: pa.Table, path: str, rows: int, columns: list[Col], options: dict) -> None:
    names = [c.name for c in columns if c.name != "st.x"] + ["st", "st.x"]
    with (
        open(path, "wb") as fh,
        pyorc.Writer(
            fh,
            pyorc_schema(columns),
            row_index_stride=rows,
            bloom_filter_columns=names,
            timezone=LA,
            **options,
        ) as w,
    ):
        w.writerows(pyorc_rows(table, columns))


pyorc_options = st.fixed_dictionaries(
    {
        "bloom_filter_fpp": st.sampled_from([0.01, 0.05, 0.3]),
        "compression": st.sampled_from(
            [pyorc.CompressionKind.NONE, pyorc.CompressionKind.ZLIB, pyorc.CompressionKind.ZSTD]
        ),
        "stripe_size": st.sampled_from([64 * 1024 * 1024, 2048]),
        "batch_size": st.sampled_from([1024, 70]),
    }
)


@st.composite
def layouts(draw):
    rows = draw(st.sampled_from([50, 100, 150]))
    return rows, [rows] * draw(st.integers(3, 7))


# ----------------------------------------------------------------- property tests


@settings(max_examples=examples(30), **SETTINGS)
@given(data=st.data())
def test_pyarrow_prune_has_no_false_negatives(data):
    palettes = data.draw(palettes_for(PYARROW_COLUMNS), label="palettes")
    palettes = clip_timestamps(PYARROW_COLUMNS, palettes)
    rows, groups = data.draw(layouts())
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    options = data.draw(pyarrow_options, label="options")
    table = build_table(PYARROW_COLUMNS, palettes, seed, groups)
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/t.orc"
        write_pyarrow(table, path, rows, options)
        f = read_orc(path)
        assert f.writer.writer == 1 and f.row_index_stride == rows
        truth = OrcTruth(path, PYARROW_COLUMNS)
        try:
            check_predicates(path, truth, PYARROW_COLUMNS, palettes, data)
        finally:
            truth.close()


@settings(max_examples=examples(25), **SETTINGS)
@given(data=st.data())
def test_pyorc_prune_has_no_false_negatives(data):
    palettes = data.draw(palettes_for(PYORC_COLUMNS), label="palettes")
    palettes = clip_timestamps(PYORC_COLUMNS, palettes)
    rows, groups = data.draw(layouts())
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    options = data.draw(pyorc_options, label="options")
    table = build_table(PYORC_COLUMNS, palettes, seed, groups)
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/t.orc"
        write_pyorc(table, path, rows, PYORC_COLUMNS, options)
        f = read_orc(path)
        assert f.writer.writer == 1 and f.writer_timezone(0) == "America/Los_Angeles"
        truth = OrcTruth(path, PYORC_COLUMNS)
        try:
            check_predicates(path, truth, PYORC_COLUMNS, palettes, data)
        finally:
            truth.close()


# ------------------------------------------------------------------------------ Spark

K0 = 2**33  # lookups beyond int32, so py4j hands ORC Java a Long
SPARK_ROWS = [1000] * 6
SPARK_BLOOM = ",".join([c.name for c in SPARK_COLUMNS] + ["k", "ks"])


@dataclass
class SparkFiles:
    paths: dict[str, str]
    palettes: dict[str, list]
    truths: dict[str, OrcTruth]


def spark_table() -> tuple[pa.Table, dict[str, list]]:
    palettes = clip_timestamps(SPARK_COLUMNS, seeded_palettes(SPARK_COLUMNS, seed=20260822))
    table = build_table(SPARK_COLUMNS, palettes, seed=12, groups=SPARK_ROWS)
    n = table.num_rows
    # ``ts`` holds wall clocks: Spark gets the instants whose Los Angeles wall clock they are
    wall = pc.cast(table.column("ts"), pa.int64()).to_pylist()
    instants = pa.array(
        [None if v is None else _wall_to_instant(v) for v in wall], pa.timestamp("us", tz="UTC")
    )
    table = table.set_column(table.schema.get_field_index("ts"), "ts", instants)
    k = [K0 + 2 * i for i in range(n)]
    table = table.append_column("k", pa.array(k, pa.int64()))
    table = table.append_column("ks", pa.array([f"k{2 * i:06d}" for i in range(n)]))
    return table, palettes


def legacy_only(data: bytes) -> bytes:
    """An uncompressed file with its BLOOM_FILTER_UTF8 streams turned into
    DICTIONARY_COUNT streams, which no reader of ORC v1 asks for (the same byte count:
    nothing moves), so readers find only the legacy ones."""
    from tests.support.orc_wire import stripe_footer_edit

    def edit(sf) -> None:
        for stream in sf.streams:
            if stream.kind == 8:
                stream.kind = 4

    return stripe_footer_edit(data, edit)


@pytest.fixture(scope="module")
def spark_files(spark, tmp_path_factory):
    """One seeded table written by Spark with the JVM and session zone in Los Angeles:
    ``zstd`` (BLOOM_FILTER_UTF8), ``original`` (legacy BLOOM_FILTER streams too,
    uncompressed) and ``legacy`` (the UTF8 streams of ``original`` hidden)."""
    from pyspark.sql import functions as F

    table, palettes = spark_table()
    out = tmp_path_factory.mktemp("spark-orc-prune")
    # Built in the fixture's UTC session: naive values (TIMESTAMP_NTZ) are taken as UTC
    # and cast to the same wall clock, which may not exist in Los Angeles.
    df = spark.createDataFrame(table).withColumn("ts_ntz", F.col("ts_ntz").cast("timestamp_ntz"))
    tz = spark._jvm.java.util.TimeZone
    before_zone, before_session = tz.getDefault(), spark.conf.get("spark.sql.session.timeZone")
    tz.setDefault(tz.getTimeZone("America/Los_Angeles"))
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    paths = {}
    try:
        for name, codec, version in (("zstd", "zstd", None), ("original", "none", "original")):
            w = (
                df.coalesce(1)
                .write.option("orc.bloom.filter.columns", SPARK_BLOOM)
                .option("orc.bloom.filter.fpp", "0.05")
                .option("orc.row.index.stride", "1000")
                .option("orc.stripe.size", "65536")  # several stripes, row groups cut
                .option("orc.rows.between.memory.checks", "500")
                .option("compression", codec)
            )
            if version:
                w = w.option("orc.bloom.filter.write.version", version)
            w.orc(str(out / name))
            (paths[name],) = glob.glob(str(out / name / "*.orc"))
    finally:
        tz.setDefault(before_zone)
        spark.conf.set("spark.sql.session.timeZone", before_session)
    legacy = out / "legacy.orc"
    legacy.write_bytes(legacy_only(Path(paths["original"]).read_bytes()))
    paths["legacy"] = str(legacy)
    truths = {n: OrcTruth(p, SPARK_COLUMNS, ntz=("ts_ntz",)) for n, p in paths.items()}
    yield SparkFiles(paths, palettes, truths)
    for truth in truths.values():
        truth.close()


@pytest.mark.spark
def test_spark_files_are_what_the_tests_need(spark_files):
    for name, path in spark_files.paths.items():
        f = read_orc(path)
        assert (f.writer.writer, f.writer.writer_version, f.writer.calendar) == (0, 9, 1)
        assert {f.writer_timezone(s.index) for s in f.stripes} == {"America/Los_Angeles"}
        assert len(f.stripes) >= 2 and f.num_rows == sum(SPARK_ROWS), name
        assert f.column("ts").kind_name == "TIMESTAMP"
        assert f.column("ts_ntz").kind_name == "LONG"
        _, infos = schema_of(f)
        assert infos[f.column("ts_ntz").id].ntz
        kinds = {f.bloom_filters(0, f.column(c).id).stream_kind for c in ("k", "ks", "s", "dt")}
        assert kinds == ({7} if name == "legacy" else {8}), name
    # the wall clocks crossing both DST changes are in the file, as pyarrow reads them
    ts = spark_files.truths["zstd"].keys["ts"]
    assert len({v * 1000 for v in DST_WALL_US} & set(ts)) >= 3


@pytest.mark.spark
@settings(max_examples=examples(40), **SETTINGS)
@given(data=st.data())
def test_spark_prune_has_no_false_negatives(spark_files, data):
    name = data.draw(st.sampled_from(sorted(spark_files.paths)), label="file")
    path, truth = spark_files.paths[name], spark_files.truths[name]
    check_predicates(path, truth, SPARK_COLUMNS, spark_files.palettes, data)


# ---------------------------------------------------------------- pruning is useful
#
# ``k`` = K0 + 2 x row number and ``ks`` = 'k<2 x row>': every odd value lies inside some
# row group's min/max without being in it. bloomskip's answers are compared with the row
# groups ORC's own readers read for the same lookup: ORC C++ (pyorc's predicate read),
# ORC Java (a SearchArgument through py4j) and Spark's ORC scan.

USE_ROWS = 4000
LOOKUP_ROWS = [26, 500, 777, 1013, 1999, 2500, 3333, 3998]


def useful_table(n: int = USE_ROWS) -> pa.Table:
    return pa.table(
        {
            "k": pa.array([K0 + 2 * i for i in range(n)], pa.int64()),
            "ks": pa.array([f"k{2 * i:06d}" for i in range(n)]),
        }
    )


def lookups(n: int) -> list[tuple[str, object, str]]:
    """(column, value, what) for present values, absent ones inside a row group's
    min/max, and absent ones outside every min/max."""
    out = []
    for r in (r for r in LOOKUP_ROWS if r < n):
        out += [("k", K0 + 2 * r, "present"), ("k", K0 + 2 * r + 1, "absent")]
        out += [("ks", f"k{2 * r:06d}", "present"), ("ks", f"k{2 * r + 1:06d}", "absent")]
    out += [("k", K0 - 3, "outside"), ("k", K0 + 2 * n + 1, "outside")]
    out += [("ks", "a", "outside"), ("ks", "z", "outside")]
    return out


def sql_of(column: str, value) -> str:
    return f"{column} = {value}" if column == "k" else f"{column} = '{value}'"


def units_of(path: str, column: str, value) -> list:
    return prune(path, sql_of(column, value)).units


def unit_index(units, rows) -> set[int]:
    firsts = [u.first_row for u in units]
    return {int(np.searchsorted(firsts, r, side="right")) - 1 for r in rows}


def rows_of_k(values) -> list[int]:
    return [(int(v) - K0) // 2 for v in values]


def pyorc_read(path: str, column: str, value, units) -> set[int]:
    """Row groups ORC C++ reads for ``column = value`` (pyorc's predicate read)."""
    from pyorc.enums import TypeKind
    from pyorc.predicates import PredicateColumn

    kind = TypeKind.LONG if column == "k" else TypeKind.STRING
    with open(path, "rb") as fh:
        # both columns: ORC C++ reads the index of the selected columns only
        reader = pyorc.Reader(
            fh, column_names=["k", "ks"], predicate=PredicateColumn(kind, column) == value
        )
        ks = [row[0] for row in reader]
    return unit_index(units, rows_of_k(ks))


def check_useful(path: str, reader=None, label: str = "") -> dict:
    """Absent values inside min/max are ruled out by the bloom filter of the row group
    they would be in; everything else outside them by statistics; present values keep
    exactly their row group. With ``reader`` (a function giving the row groups another
    reader reads), bloomskip keeps no row group that reader skips."""
    n = read_orc(path).num_rows
    tally = {"lookups": 0, "units": 0, "ours": 0, "theirs": 0, "by_bloom": 0, "absent": 0}
    for column, value, what in lookups(n):
        units = units_of(path, column, value)
        kept = {i for i, u in enumerate(units) if u.may_match}
        row = (int(value) - K0) // 2 if column == "k" else int(str(value)[1:] or 0) // 2
        home = unit_index(units, [row]).pop() if what != "outside" else None
        if what == "present":
            assert kept == {home}, (label, column, value, units)
        elif what == "absent":
            tally["absent"] += 1
            tally["by_bloom"] += units[home].reason.endswith("bloom filter: absent")
            assert kept <= {home}, (label, column, value, units)
        else:
            assert not kept, (label, column, value, units)
        tally["lookups"] += 1
        tally["units"] += len(units)
        tally["ours"] += len(units) - len(kept)
        if reader is not None:
            theirs = reader(path, column, value, units)
            assert kept <= theirs, (label, column, value, sorted(kept), sorted(theirs))
            tally["theirs"] += len(units) - len(theirs)
    # the bloom filters (fpp 1 % to 5 %) rule out almost every absent value
    assert tally["by_bloom"] >= 0.8 * tally["absent"], (label, tally)
    return tally


def report(label: str, reader: str, t: dict) -> None:
    print(
        f"\n{label}: {t['lookups']} lookups over {t['units'] // t['lookups']} row groups: "
        f"bloomskip skips {t['ours']} of {t['units']} row groups ({t['by_bloom']} of "
        f"{t['absent']} in-range misses by bloom filter); {reader} skips {t['theirs']}"
    )


@pytest.fixture(scope="module")
def useful_files(tmp_path_factory) -> dict[str, str]:
    """The lookup table from pyarrow and pyorc: row groups of 1,000, stripes of 1,500
    rows (pyarrow), filters at fpp 1 %."""
    out = tmp_path_factory.mktemp("orc-useful")
    paths = {"pyarrow": str(out / "pyarrow.orc"), "pyorc": str(out / "pyorc.orc")}
    table = useful_table()
    po.write_table(
        table, paths["pyarrow"], row_index_stride=1000, bloom_filter_columns=[1, 2],
        bloom_filter_fpp=0.01, stripe_size=4096, batch_size=1500, compression="uncompressed",
    )  # fmt: skip
    with open(paths["pyorc"], "wb") as fh, pyorc.Writer(
        fh, "struct<k:bigint,ks:string>", row_index_stride=1000,
        bloom_filter_columns=["k", "ks"], bloom_filter_fpp=0.01, timezone=LA,
    ) as w:  # fmt: skip
        w.writerows(zip(*table.to_pydict().values(), strict=True))
    return paths


def test_pyarrow_pruning_is_useful_and_beats_orc_cpp(useful_files):
    path = useful_files["pyarrow"]
    assert len(read_orc(path).stripes) >= 2
    report("pyarrow file", "ORC C++ (pyorc predicate read)", check_useful(path, pyorc_read))


def test_pyorc_pruning_is_useful_and_beats_orc_cpp(useful_files):
    path = useful_files["pyorc"]
    report("pyorc file", "ORC C++ (pyorc predicate read)", check_useful(path, pyorc_read))


class JavaReader:
    """Row groups ORC Java's reader returns for a SearchArgument (as Spark builds it)."""

    def __init__(self, spark) -> None:
        self.spark = spark
        self.jvm = spark._jvm
        self.conf = self.jvm.org.apache.hadoop.conf.Configuration()
        self.readers: dict[str, object] = {}

    def __call__(self, path: str, column: str, value, units) -> set[int]:
        from py4j.java_gateway import get_field

        jvm = self.jvm
        reader = self.readers.get(path)
        if reader is None:
            orc = jvm.org.apache.orc.OrcFile
            reader = self.readers[path] = orc.createReader(
                jvm.org.apache.hadoop.fs.Path(path), orc.readerOptions(self.conf)
            )
        leaf = jvm.org.apache.hadoop.hive.ql.io.sarg.PredicateLeaf.Type
        kind = leaf.LONG if column == "k" else leaf.STRING
        sarg = (
            jvm.org.apache.hadoop.hive.ql.io.sarg.SearchArgumentFactory.newBuilder()
            .startAnd()
            .equals(column, kind, value)  # value > 2**31: py4j passes a java.lang.Long
            .end()
            .build()
        )
        names = self.spark.sparkContext._gateway.new_array(jvm.java.lang.String, 1)
        names[0] = column
        k = list(reader.getSchema().getFieldNames()).index("k")
        rows = reader.rows(reader.options().searchArgument(sarg, names))
        batch = reader.getSchema().createRowBatch()
        read: set[int] = set()
        try:
            while rows.nextBatch(batch):
                size = get_field(batch, "size")
                vec = get_field(get_field(batch, "cols")[k], "vector")
                first, last = rows_of_k([vec[0], vec[size - 1]])  # a batch is contiguous
                read |= {i for i, u in enumerate(units) if u.first_row <= last}
                read -= {i for i, u in enumerate(units) if u.first_row + u.num_rows <= first}
        finally:
            rows.close()
        return read


def spark_rows_read(spark, path: str, sql: str) -> int:
    """Rows Spark's ORC scan outputs for a filter (whole row groups, before the filter)."""
    df = spark.read.orc(path).filter(sql)
    df.collect()
    plan = df._jdf.queryExecution().executedPlan()
    leaves = plan.collectLeaves()
    total = 0
    for i in range(leaves.size()):
        metrics = leaves.apply(i).metrics()
        if metrics.contains("numOutputRows"):
            total += metrics.apply("numOutputRows").value()
    return total


@pytest.mark.spark
def test_pruning_beats_orc_java_and_spark(spark, spark_files, useful_files):
    """On the Spark file and on the pyarrow and pyorc ones: bloomskip keeps no row group
    ORC Java's reader skips, and no more rows than Spark's ORC scan reads."""
    java = JavaReader(spark)
    paths = {"spark": spark_files.paths["zstd"], **useful_files}
    for label, path in paths.items():
        report(f"{label} file", "ORC Java (SearchArgument)", check_useful(path, java, label))
        ours = theirs = 0
        for column, value, _ in lookups(read_orc(path).num_rows)[::3]:  # a query is slow
            units = units_of(path, column, value)
            ours += sum(u.num_rows for u in units if u.may_match)
            theirs += spark_rows_read(spark, path, sql_of(column, value))
        print(f"{label} file: rows kept over 12 lookups: bloomskip {ours}, Spark scan {theirs}")
        assert ours <= theirs, (label, ours, theirs)


@pytest.mark.spark
def test_spark_legacy_filters(spark_files):
    """Legacy BLOOM_FILTER streams (ORC Java, writer version 9): longs and ASCII strings
    are tested; non-ASCII strings (the JVM's charset), decimals and timestamps are not."""
    path = spark_files.paths["legacy"]
    units = units_of(path, "k", K0 + 51)
    assert units[0].reason.endswith("bloom filter: absent"), units[0]
    units = units_of(path, "ks", "k000051")
    assert units[0].reason.endswith("bloom filter: absent"), units[0]
    for sql, why in (
        ("ks = 'k00005é'", "only ASCII literals"),
        ("d9 = 1.23", "hash another form"),
        ("ts = TIMESTAMP '2020-03-08 03:00:00'", "hash another form"),
    ):
        for u in prune(path, sql).units:
            assert u.may_match or "statistics" in u.reason, (sql, u)
            if u.may_match and "within" in u.reason:
                assert why in u.reason, (sql, u)
    # the same lookups on the file with its UTF8 streams
    units = units_of(spark_files.paths["original"], "ks", "k00005é")
    assert units[0].reason.endswith("bloom filter: absent"), units[0]


@pytest.mark.spark
def test_spark_booleans_and_early_dates(spark_files):
    path = spark_files.paths["zstd"]
    for u in prune(path, "b = true").units:
        assert "bloom filter: absent" not in u.reason
    for u in probe(path, "b", [True, False]).units:
        assert "absent" not in u.values and "BOOLEAN" in u.reason, u
    for u in prune(path, "dt = DATE '1000-01-01'").units:
        assert u.may_match and "proleptic Gregorian" in u.reason, u
    for u in probe(path, "dt", [dt.date(1000, 1, 1)]).units:
        assert u.values == ("maybe",), u


# ------------------------------------------------------------------- trust policy
#
# Each writer bug bloomskip guards against, shown on a real file: the stored filter (or
# statistic) is wrong - trusting it would drop a matching row - and prune keeps the row
# group, saying why.


def stored_filter(path: str, column: str, row_group: int = 0) -> OrcBloomFilter:
    f = read_orc(path)
    bfs = f.bloom_filters(0, f.column(column).id)
    return OrcBloomFilter.from_index(
        bfs.num_hash_functions(row_group), utf8bitset=bfs.bitset(row_group)
    )


def test_cpp_byte_and_boolean_filters_are_refused(tmp_path):
    """ORC C++ hashes BYTE and BOOLEAN values after compacting them in place: a TINYINT
    42 at row 0 is missing from its filter, and ORC C++'s own reader returns no row."""
    from pyorc.enums import TypeKind
    from pyorc.predicates import PredicateColumn

    path = str(tmp_path / "byte.orc")
    table = pa.table(
        {"x": pa.array([42] + [1] * 1999, pa.int8()), "b": pa.array([True, False] * 1000)}
    )
    po.write_table(table, path, row_index_stride=1000, bloom_filter_columns=[1, 2])
    assert not stored_filter(path, "x").test_values(pa.array([42], pa.int8()), "tinyint")[0]
    with open(path, "rb") as fh:
        assert list(pyorc.Reader(fh, predicate=PredicateColumn(TypeKind.BYTE, "x") == 42)) == []
    units = prune(path, "x = 42").units
    assert units[0].may_match and "BYTE filters are corrupted" in units[0].reason
    assert not units[1].may_match and "statistics: outside [1, 1]" in units[1].reason
    for sql in ("b = true", "b = false", "b IN (true, false)"):
        for u in prune(path, sql).units:
            assert u.may_match and "BOOLEAN filters are never trusted" in u.reason, (sql, u)
    assert probe(path, "x", [42]).units[0].values == ("no filter",)


def test_cpp_float_and_char_filters_are_refused(tmp_path):
    """pyorc hands ORC C++ Python floats: a FLOAT filter holds the unrounded doubles, not
    the floats stored; a CHAR(4) filter holds the value without its padding."""
    path = str(tmp_path / "float.orc")
    with open(path, "wb") as fh, pyorc.Writer(
        fh, "struct<f:float,c:char(4)>", row_index_stride=1000, bloom_filter_columns=["f", "c"]
    ) as w:  # fmt: skip
        w.writerows((0.1 * i, f"a{i % 7}") for i in range(2000))
    stored = float(np.float32(0.1 * 3))
    assert po.read_table(path).column("f")[3].as_py() == stored
    assert not stored_filter(path, "f").test_values(pa.array([stored]), "float")[0]
    assert not stored_filter(path, "c").test_strings(["a3  "])[0]
    assert po.read_table(path).column("c")[3].as_py() == "a3  "
    for sql, why in ((f"f = {stored!r}", "FLOAT filters"), ("c = 'a3  '", "CHAR filters")):
        unit = prune(path, sql).units[0]
        assert unit.may_match and why in unit.reason, (sql, unit)


def edited_software_version(data: bytes, version: str | None) -> bytes:
    from tests.support.orc_wire import Tail

    tail = Tail(data)
    if version is None:
        tail.footer.ClearField("software_version")
    else:
        tail.footer.software_version = version.encode()
    return tail.build()


@pytest.mark.parametrize(
    ("version", "trusted"),
    [
        (None, False),  # no software version: a C++ writer before 1.6.11/1.7.0
        ("1.6.0", False),
        ("1.6.11", False),
        ("1.6.11-SNAPSHOT", False),
        ("1.7.0", False),
        ("1.6.12", True),
        ("1.7.1", True),
        ("2.2.2", True),
        ("junk", False),
    ],
)
def test_cpp_software_versions(tmp_path, version, trusted):
    """ORC-1024: ORC C++ 1.6.0 to 1.6.11 and 1.7.0 hashed numbers with logical shifts;
    like ORC's readers, bloomskip ignores every filter of such files (and of C++ files
    without a version); BINARY filters only from 1.7.0 (ORC-773)."""
    src = tmp_path / "src.orc"
    po.write_table(
        pa.table({"k": useful_table(2000).column("k"), "bin": [b"x%d" % i for i in range(2000)]}),
        src, row_index_stride=1000, bloom_filter_columns=[1, 2], compression="zlib",
    )  # fmt: skip
    path = tmp_path / "edited.orc"
    path.write_bytes(edited_software_version(src.read_bytes(), version))
    assert read_orc(path).writer.software_version == version
    unit = units_of(str(path), "k", K0 + 51)[0]
    assert unit.may_match != trusted, unit
    if not trusted:
        assert "ORC-1024" in unit.reason, unit
    unit = prune(str(path), "bin = X'6e6f7065'").units[0]  # b"nope", absent
    binary_ok = trusted and version not in ("1.6.12",)
    assert unit.may_match != binary_ok, unit
    if version == "1.6.12":
        assert "ORC-773" in unit.reason


def test_cpp_string_bounds_with_nul_bytes(tmp_path):
    """ORC C++ compares strings with strncmp: "a\\0a" never lowers a minimum of "a\\0z"."""
    from bloomskip.expr import EqualTo, Reference

    path = str(tmp_path / "nul.orc")
    po.write_table(
        pa.table({"s": ["a\x00z", "a\x00a", "b"] * 10}), path, row_index_stride=1000,
        bloom_filter_columns=[1],
    )  # fmt: skip
    stats = read_orc(path).row_index(0, 1)[0].statistics.string_statistics
    assert stats.minimum == b"a\x00z"  # wrong: "a\x00a" is smaller
    lookup = EqualTo(Reference("s"), Literal("string", "a\x00a"))
    unit = prune(path, lookup, stages=("statistics",)).units[0]
    assert unit.may_match and "NUL bytes" in unit.reason, unit
    assert prune(path, lookup).units[0].may_match


def test_cpp_timestamps_a_second_off_near_the_epoch(tmp_path):
    """ORC C++ adjusts negative seconds by the sign of the instant, its readers by the
    sign of the seconds stored: 07:59:58.932 UTC, 23:59:58.932 in Los Angeles, is
    indexed as such but read back a second earlier; an instant in (-1 s, 0) is read
    back a second later. prune tests a second either side near the epoch."""
    path = str(tmp_path / "ts.orc")
    instant = dt.datetime(1970, 1, 1, 7, 59, 58, 932047, tzinfo=dt.UTC)
    with open(path, "wb") as fh, pyorc.Writer(
        fh, "struct<ts:timestamp>", timezone=LA, row_index_stride=1000, bloom_filter_columns=["ts"]
    ) as w:  # fmt: skip
        w.writerows([(instant,)] + [(instant + dt.timedelta(days=9),)] * 1999)
    read = po.read_table(path).column("ts")[0].as_py()
    assert read == dt.datetime(1969, 12, 31, 23, 59, 57, 932047)  # not :58 as written
    stats = read_orc(path).row_index(0, 1)[0].statistics.timestamp_statistics
    assert stats.minimum_utc == -1068  # the wall clock as written
    assert not stored_filter(path, "ts").test_longs([-2068])[0]
    for sql in ("ts = TIMESTAMP '1969-12-31 23:59:57.932047'", "ts = '1969-12-31 23:59:58.932047'"):
        unit = prune(path, sql).units[0]
        assert unit.may_match, (sql, unit)
    # an instant in (-1 s, 0): indexed as written, read back a second late (any zone)
    path = str(tmp_path / "tsi.orc")
    instant = dt.datetime(1969, 12, 31, 23, 59, 59, 998710, tzinfo=dt.UTC)
    with open(path, "wb") as fh, pyorc.Writer(
        fh, "struct<tsi:timestamp with local time zone>", row_index_stride=1000,
        bloom_filter_columns=["tsi"],
    ) as w:  # fmt: skip
        w.writerows([(instant,)] + [(instant + dt.timedelta(days=9),)] * 1999)
    read = po.read_table(path).column("tsi")[0].as_py()
    assert read == dt.datetime(1970, 1, 1, 0, 0, 0, 998710, tzinfo=dt.UTC)
    assert read_orc(path).row_index(0, 1)[0].statistics.timestamp_statistics.minimum_utc == -2
    assert not stored_filter(path, "tsi").test_longs([998])[0]
    unit = prune(path, "tsi = TIMESTAMP '1970-01-01 00:00:00.99871'").units[0]
    assert unit.may_match, unit


def test_invalid_filters_are_refused(tmp_path):
    """A filter whose k is outside 1..64, or is not what ORC's sizing gives for its
    bitset and stride, answers "may match"."""
    src = tmp_path / "src.orc"
    po.write_table(
        useful_table(2000), src, row_index_stride=1000, bloom_filter_columns=[1],
        compression="uncompressed",
    )  # fmt: skip
    f = read_orc(src)
    bfs = f.bloom_filters(0, 1)
    data = src.read_bytes()
    # entry 0: 0x0a <length> 0x08 <k> ...
    entry = data[bfs.offset : bfs.offset + 8]
    at = bfs.offset + entry.index(b"\x08", 1) + 1
    assert data[at] == bfs.num_hash_functions(0) == 4
    for k, why in ((0, "outside 1..64"), (65, "outside 1..64"), (5, "ORC's sizing")):
        path = tmp_path / f"k{k}.orc"
        path.write_bytes(data[:at] + bytes([k]) + data[at + 1 :])
        units = units_of(str(path), "k", K0 + 51)
        assert units[0].may_match and "bloom filter invalid" in units[0].reason, units[0]
        assert why in units[0].reason, units[0]
        assert units[1].reason.endswith("statistics: outside [8589936592, 8589938590]")
        assert probe(str(path), "k", [K0 + 51]).units[0].values == ("no filter",)


def test_lists_maps_structs_and_files_without_index(tmp_path):
    path = str(tmp_path / "nested.orc")
    table = pa.table(
        {
            "l": pa.array([[i, i + 1] for i in range(2000)], pa.list_(pa.int64())),
            "m": pa.array([[("a", i)] for i in range(2000)], pa.map_(pa.string(), pa.int64())),
            "st": pa.array(
                [None if i % 3 == 0 else {"x": i} for i in range(2000)],
                pa.struct([("x", pa.int64())]),
            ),
        }
    )
    po.write_table(table, path, row_index_stride=1000, bloom_filter_columns=list(range(1, 8)))
    for sql in ("l._elem = 7", "m._value = 7", "m._key = 'a'"):
        for u in prune(path, sql).units:
            assert u.may_match and "inside a" in u.reason, (sql, u)
    # a null struct makes its field null: st.x IS NULL in every row group
    for u in prune(path, "st.x IS NULL").units:
        assert u.may_match, u
    assert [u.may_match for u in prune(path, "st.x = 7").units] == [True, False]
    with pytest.raises(PredicateError, match="no column 'nope'"):
        prune(path, "nope = 1")
    with pytest.raises(InvalidParameterError, match="unknown stages"):
        prune(path, "st.x = 7", stages=("dictionary",))
    # without a row index the units are stripes, decided by stripe statistics
    path = str(tmp_path / "noindex.orc")
    with open(path, "wb") as fh, pyorc.Writer(
        fh, "struct<i:bigint>", row_index_stride=0, stripe_size=1024, batch_size=500
    ) as w:  # fmt: skip
        w.writerows((i,) for i in range(3000))
    units = prune(path, "i = 2999").units
    assert sum(u.num_rows for u in units) == 3000
    assert units[-1].may_match and "no row index" in units[-1].reason
    assert all("statistics: outside" in u.reason for u in units[:-1]), units
    out = prune(path, "i = 2999").to_json()
    assert set(out) == {"file", "units"}
    assert set(out["units"][0]) == {"first_row", "num_rows", "may_match", "reason"}


# ------------------------------------------------------------------- hostile files

FUZZ_CASES = examples(1000)
FUZZ_SECONDS = 3.0
FUZZ_PREDICATES = [
    "i = 7 OR s IN ('s5', 'x') OR ts = TIMESTAMP '2020-03-08 03:00:00'",
    "d = 1.25 AND st.x IS NOT NULL",
    "i != 3 OR s IS NULL OR NOT (st.x = 4)",
]


@pytest.fixture(scope="module")
def fuzz_seeds() -> dict[str, bytes]:
    """Small files with row groups of 300 rows and filters on every column: pyorc
    (zlib, Los Angeles) and pyarrow (uncompressed in 4 stripes, and zstd)."""
    n = 1500
    rows = [
        (
            i,
            None if i % 9 == 0 else f"s{i % 40}",
            Decimal(i % 50) / 4,
            dt.datetime(2020, 3, 8, tzinfo=dt.UTC) + dt.timedelta(minutes=7 * i),
            (i % 11,),
        )
        for i in range(n)
    ]
    schema = "struct<i:bigint,s:string,d:decimal(10,2),ts:timestamp,st:struct<x:smallint>>"
    out = {}
    buf = io.BytesIO()
    with pyorc.Writer(
        buf, schema, bloom_filter_columns=[1, 2, 3, 4, 6], row_index_stride=300,
        stripe_size=4096, batch_size=400, compression=pyorc.CompressionKind.ZLIB,
        compression_block_size=4096, memory_block_size=4096, timezone=LA,
    ) as w:  # fmt: skip
        w.writerows(rows)
    out["pyorc-zlib"] = buf.getvalue()
    table = po.read_table(io.BytesIO(out["pyorc-zlib"]))
    for codec in ("uncompressed", "zstd"):
        buf = io.BytesIO()
        po.write_table(
            table, buf, compression=codec, row_index_stride=300, stripe_size=4096,
            batch_size=400, bloom_filter_columns=[1, 2, 3, 4, 6],
        )  # fmt: skip
        out[f"pyarrow-{codec}"] = buf.getvalue()
    return out


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout


def fuzz_case(path: Path, data: bytes) -> str:
    """prune and probe on one mutated file: "ok", "typed" (a BloomskipError), or raises."""
    path.write_bytes(data)
    try:
        n = read_orc(path).num_rows
        for sql in FUZZ_PREDICATES:
            result = prune(path, sql)
            check_tiling(result, n)
        probe(path, "s", ["s5", "nope"])
        return "ok"
    except BloomskipError:
        return "typed"


def test_mutated_files_never_crash_prune(fuzz_seeds, tmp_path):
    """Mutated seeds (bytes of the tail, stripe footers and indexes flipped, inserted,
    cut; footer integers edited): every prune and probe answers with well-formed units
    or a typed error, within seconds."""
    from tests.support.orc_wire import Seed, mutate

    for name, data in fuzz_seeds.items():
        assert fuzz_case(tmp_path / "seed.orc", data) == "ok", name
    assert len(read_orc(fuzz_seeds["pyarrow-uncompressed"]).stripes) >= 2
    seeds = {n: Seed(d) for n, d in sorted(fuzz_seeds.items())}
    outcomes = {"ok": 0, "typed": 0}
    problems = []
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        for i in range(FUZZ_CASES):
            rng = random.Random(f"orc-prune-fuzz:{i}")
            name = rng.choice(sorted(seeds))
            data = mutate(seeds[name], rng)
            signal.setitimer(signal.ITIMER_REAL, FUZZ_SECONDS)
            try:
                outcomes[fuzz_case(tmp_path / f"case-{i}.orc", data)] += 1
                (tmp_path / f"case-{i}.orc").unlink()
            except _Timeout:
                problems.append(f"case {i} ({name}): no answer within {FUZZ_SECONDS} s")
            except Exception as e:
                problems.append(f"case {i} ({name}): {type(e).__name__}: {str(e)[:200]}")
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert not problems, "\n".join(problems[:20])
    # the mutations reach past the tail: many files still answer
    print(f"\nprune fuzz: {outcomes}")
    assert outcomes["ok"] > FUZZ_CASES // 4 and outcomes["typed"] > FUZZ_CASES // 10, outcomes


def _edited(data: bytes, *, writer=None, writer_version=None) -> bytes:
    from tests.support.orc_wire import Tail

    tail = Tail(data)
    if writer is not None:
        tail.footer.writer = writer
    if writer_version is not None:
        tail.ps.writer_version = writer_version
    return tail.build()


def _without_bloom_encoding(data: bytes) -> bytes:
    """An uncompressed file whose column encodings say bloom_encoding 0 (same size)."""
    from tests.support.orc_wire import stripe_footer_edit

    def edit(sf) -> None:
        for enc in sf.columns:
            if enc.HasField("bloom_encoding"):
                enc.bloom_encoding = 0

    return stripe_footer_edit(data, edit)


def test_writer_ids_versions_and_bloom_encodings(tmp_path):
    """The same pyarrow file presented as other writers: Java filters need ORC-101 for
    BLOOM_FILTER_UTF8 and ORC-135 for timestamps, Java statistics the fixes of their
    type; other writers' filters are not used; kind 8 needs bloom_encoding 1."""
    src = tmp_path / "src.orc"
    n = 2000
    table = useful_table(n).append_column(
        "ts", pa.array([i * 10**12 for i in range(n)], pa.timestamp("ns"))
    )
    table = table.append_column(
        "d", pa.array([Decimal(i) / 4 for i in range(n)], pa.decimal128(10, 2))
    )
    po.write_table(
        table, src, row_index_stride=1000, bloom_filter_columns=[1, 2, 3, 4],
        compression="uncompressed",
    )  # fmt: skip
    data = src.read_bytes()
    lookups_ = {
        "k": f"k = {K0 + 51}",
        "ks": "ks = 'k000051'",
        "ts": "ts = TIMESTAMP '1970-01-01 00:00:51'",  # inside row group 0, absent
        "d": "d = 0.3",
    }
    cases = [
        # (writer, writer version, {column: expected reason fragment or "bloom"})
        (None, None, dict.fromkeys(lookups_, "bloom filter: absent")),
        (0, 9, dict.fromkeys(lookups_, "bloom filter: absent")),
        (4, 6, dict.fromkeys(lookups_, "TRINO are not verified")),
        (
            0,
            4,
            {
                **dict.fromkeys(["k", "ks", "d"], "BLOOM_FILTER_UTF8 from writer version 4"),
                "ts": "TIMESTAMP filters before ORC-135",
            },
        ),
        (0, 5, {"ts": "TIMESTAMP filters before ORC-135", "k": "bloom filter: absent"}),
        (0, 0, {"ks": "string statistics before HIVE-8732"}),
    ]
    for writer, version, expect in cases:
        path = tmp_path / f"w{writer}-{version}.orc"
        path.write_bytes(_edited(data, writer=writer, writer_version=version))
        for column, why in expect.items():
            unit = prune(str(path), lookups_[column]).units[0]
            assert why in unit.reason, (writer, version, column, unit)
            assert unit.may_match == (why != "bloom filter: absent"), (writer, version, unit)
    # Java 1.5.0 to 1.5.5 (ORC-135 exactly): decimal64 statistics are wrong (ORC-517)
    path = tmp_path / "orc517.orc"
    path.write_bytes(_edited(data, writer=0, writer_version=6))
    unit = prune(str(path), "d = 999", stages=("statistics",)).units[0]
    assert unit.may_match and "ORC-517" in unit.reason, unit
    # BLOOM_FILTER_UTF8 without bloom_encoding 1
    path = tmp_path / "encoding0.orc"
    path.write_bytes(_without_bloom_encoding(data))
    for column, sql in lookups_.items():
        unit = prune(str(path), sql).units[0]
        assert unit.may_match and "bloom_encoding 0" in unit.reason, (column, unit)


def test_timestamps_spark_reads_in_its_jvm_s_zone_may_match_at_any_offset(tmp_path):
    """Found (Spark writers probe): Spark reads an ORC TIMESTAMP - a wall clock - as an
    instant in its JVM's default time zone, which need not be the session's or UTC: a
    JVM in New York reads the stored 2023-12-31 19:00 as 2024-01-01 00:00 UTC, and
    ``ts = TIMESTAMP '2024-01-01 00:00:00'`` in a UTC session matches it. With a session
    zone, such a literal now probes its instant's wall clock at every offset (prune, the
    zone index); without one, a wall clock is compared as written."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.orc as po

    from bloomskip import index, orc

    lake = tmp_path / "lake"
    lake.mkdir()
    walls = [dt.datetime(2023, 12, 31, 19) + dt.timedelta(days=30 * i) for i in range(3)]
    po.write_table(pa.table({"ts": walls}), lake / "a.orc", bloom_filter_columns=[1])
    index.build(str(lake), ["ts"], str(tmp_path / "idx"))
    ix = index.open(str(tmp_path / "idx"))
    q = "ts = TIMESTAMP '2024-01-01 00:00:00'"
    for zone in ("UTC", "Asia/Tokyo"):
        assert [u.may_match for u in orc.prune(lake / "a.orc", q, zone=zone).units] == [True]
        assert ix.query(q, zone=zone).files, zone
    assert [u.may_match for u in orc.prune(lake / "a.orc", q).units] == [False]
    assert not ix.query(q).files  # DuckDB's reading: the wall clock as written
    old = "ts = TIMESTAMP '1900-01-01 00:00:00'"  # local mean time: offsets of any minute
    assert [u.may_match for u in orc.prune(lake / "a.orc", old, zone="UTC").units] == [True]


def test_an_index_from_before_the_markers_probes_every_offset(tmp_path, monkeypatch):
    """An index of a lake of files built before bloomskip marked ORC TIMESTAMP columns
    (its schema lacks ``bloomskip.marked``) cannot tell them from Parquet's wall clocks:
    each timestamp column without a zone is probed at every offset, so a JVM in New York
    loses no row; a marked index of Parquet files keeps probing the wall clock only."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.orc as po
    import pyarrow.parquet as pq

    from bloomskip import index
    from bloomskip.sources import files

    lake = tmp_path / "lake"
    lake.mkdir()
    walls = [dt.datetime(2023, 12, 31, 19) + dt.timedelta(days=30 * i) for i in range(3)]
    po.write_table(pa.table({"ts": walls}), lake / "a.orc")
    q = "ts = TIMESTAMP '2024-01-01 00:00:00'"
    with monkeypatch.context() as m:  # the build before markers
        m.setattr(files, "_mark", lambda schema, r: schema)
        index.build(str(lake), ["ts"], str(tmp_path / "old"))
    old = index.open(str(tmp_path / "old"))
    assert old.schema()["ts"].jvm_clock
    assert old.query(q, zone="UTC").files
    assert not old.query(q).files  # no zone: the wall clock as written, as before

    pq_lake = tmp_path / "pq"
    pq_lake.mkdir()
    pq.write_table(pa.table({"ts": walls}), pq_lake / "a.parquet")
    index.build(str(pq_lake), ["ts"], str(tmp_path / "new"))
    new = index.open(str(tmp_path / "new"))
    assert not new.schema()["ts"].jvm_clock
    assert not new.query(q, zone="UTC").files  # a Parquet wall clock: no offsets probed


def test_a_lake_whose_first_file_is_parquet_marks_its_orc_timestamps(tmp_path):
    """A lake's schema is its first file's: with a Parquet file first, an ORC TIMESTAMP
    column of later ORC files went unmarked, and a JVM in New York (its wall clock read
    there) found no file. Any ORC file indexed marks the timestamps without a zone."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.orc as po
    import pyarrow.parquet as pq

    from bloomskip import index

    lake = tmp_path / "lake"
    lake.mkdir()
    pq.write_table(pa.table({"ts": [dt.datetime(2020, 1, 1)]}), lake / "a.parquet")
    q = "ts = TIMESTAMP '2024-01-01 00:00:00'"
    index.build(str(lake), ["ts"], str(tmp_path / "idx"))
    assert not index.open(str(tmp_path / "idx")).query(q, zone="UTC").files
    po.write_table(pa.table({"ts": [dt.datetime(2023, 12, 31, 19)]}), lake / "b.orc")
    index.refresh(str(tmp_path / "idx"))  # New York's 19:00 is 2024-01-01 00:00 UTC
    ix = index.open(str(tmp_path / "idx"))
    assert ix.schema()["ts"].jvm_clock
    assert [p.rsplit("/", 1)[-1] for p in (f.path for f in ix.query(q, zone="UTC").files)] == [
        "b.orc"
    ]
