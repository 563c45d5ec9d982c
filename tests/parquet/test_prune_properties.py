"""The iron rule of pruning, proven against every real writer: **no false negatives**.

Files are written at test time by pyarrow (with and without dictionaries, decimals as
FLBA or as integers, INT96), DuckDB, DataFusion, deltalake and Spark, with several row
groups each. Hypothesis chooses the data (for the fast writers), then predicates built
as SQL text from column references and literals in every SQL form (quote doubling,
``-0.0``, ``1e3``, decimals with more scale than the column, integers outside the
column's range, ``DATE``/``TIMESTAMP`` literals, ``X'hex'``, ``NULL``...), mixing present
values, near misses and edge values, combined with AND / OR / NOT.

The truth never involves Parquet pruning: the file is read whole with pyarrow, a row
number is added, and the same WHERE runs in DuckDB over that in-memory table. A second,
independent oracle in this module evaluates the predicate in exact SQL semantics
(rational arithmetic, IEEE floats: NaN equals nothing, -0.0 = 0.0), with literals rounded
to the column's float width as well. A row matches if *either* says so: prune must be
safe under any engine's reading of the predicate.

Every row group holding a matching row must say ``may_match``; units must tile the
file's rows in order; reasons are never empty; ``probe`` never calls a present value
absent. Deterministic tests per writer show pruning is also useful (an absent value
inside min/max is ruled out by a bloom filter or a dictionary), and that Spark's
all-zero BOOLEAN filters are never trusted.
"""

from __future__ import annotations

import glob
import math
import tempfile
import time
from dataclasses import dataclass
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomskip.errors import PredicateError
from bloomskip.parquet import probe, prune
from bloomskip.parquet.prune import STAGES
from tests.support.predicates import (
    ALL_COLUMNS,
    BY_NAME,
    SETTINGS,
    SPARK_COLUMNS,
    UNSIGNED,
    Leaf,
    Lit,
    Truth,
    build_table,
    check_file,
    check_predicates,
    check_prune,
    examples,
    one_row_per_group,
    palettes_for,
    seeded_palettes,
)

duckdb = pytest.importorskip("duckdb")


# ---------------------------------------------------------------------------- writers


def write_pyarrow(table: pa.Table, path: str, rows: int, options: dict) -> None:
    options = dict(options)
    fpp = options.pop("fpp")
    leaves_ = [
        ("st.x" if name == "st" else name)
        for name in table.column_names
        if not pa.types.is_boolean(table.schema.field(name).type)
    ]
    bloom = {c: {"ndv": rows, "fpp": fpp} for c in leaves_}
    pq.write_table(table, path, row_group_size=rows, bloom_filter_options=bloom, **options)


pyarrow_options = st.fixed_dictionaries(
    {
        "fpp": st.sampled_from([0.01, 0.3]),
        "use_dictionary": st.booleans(),
        "store_decimal_as_integer": st.booleans(),
        "write_statistics": st.sampled_from([True, True, False]),
        "compression": st.sampled_from(["snappy", "zstd", "none", "gzip"]),
        "data_page_version": st.sampled_from(["1.0", "2.0"]),
        # A tiny dictionary page limit makes chunks fall back to PLAIN part way.
        "dictionary_pagesize_limit": st.sampled_from([1 << 20, 64]),
        "data_page_size": st.sampled_from([1 << 20, 256]),
        "use_deprecated_int96_timestamps": st.sampled_from([False, False, False, True]),
    }
)


def write_duckdb(table: pa.Table, path: str, dictionary_limit: int, fpp: float) -> None:
    con = duckdb.connect()
    try:
        con.register("src", table)
        con.execute(
            f"COPY src TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 2048, "
            f"DICTIONARY_SIZE_LIMIT {dictionary_limit}, BLOOM_FILTER_FALSE_POSITIVE_RATIO {fpp})"
        )
    finally:
        con.close()


def write_datafusion(table: pa.Table, path: str, rows: int, options: dict) -> None:
    datafusion = pytest.importorskip("datafusion")
    opts = datafusion.ParquetWriterOptions(
        bloom_filter_on_write=True, max_row_group_size=rows, **options
    )
    datafusion.SessionContext().from_arrow(table).write_parquet_with_options(path, opts)


def write_deltalake(table: pa.Table, out: str, rows: int, fpp: float) -> list[str]:
    deltalake = pytest.importorskip("deltalake")
    bloom = deltalake.BloomFilterProperties(True, fpp=fpp, ndv=rows)
    deltalake.write_deltalake(
        out,
        table,
        writer_properties=deltalake.WriterProperties(
            max_row_group_size=rows,
            default_column_properties=deltalake.ColumnProperties(bloom_filter_properties=bloom),
        ),
    )
    return [u.removeprefix("file://") for u in deltalake.DeltaTable(out).file_uris()]


def num_row_groups(path: str) -> int:
    return pq.ParquetFile(path).metadata.num_row_groups


# ----------------------------------------------------------------- property tests


@st.composite
def layouts(draw, min_groups=4, max_groups=8):
    rows = draw(st.sampled_from([50, 100, 150]))
    return rows, [rows] * draw(st.integers(min_groups, max_groups))


@settings(max_examples=examples(60), **SETTINGS)
@given(data=st.data())
def test_pyarrow_prune_has_no_false_negatives(data):
    palettes = data.draw(palettes_for(ALL_COLUMNS), label="palettes")
    rows, groups = data.draw(layouts())
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    options = data.draw(pyarrow_options, label="options")
    table = build_table(ALL_COLUMNS, palettes, seed, groups)
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/t.parquet"
        write_pyarrow(table, path, rows, options)
        assert num_row_groups(path) == len(groups)
        check_file(path, ALL_COLUMNS, palettes, data)


@settings(max_examples=examples(25), **SETTINGS)
@given(data=st.data())
def test_duckdb_prune_has_no_false_negatives(data):
    palettes = data.draw(palettes_for(ALL_COLUMNS), label="palettes")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    # DuckDB rounds row groups to 2048 rows; filters only for dictionary chunks.
    groups = [2048] * data.draw(st.integers(2, 3)) + [data.draw(st.integers(1, 900))]
    limit = data.draw(st.sampled_from([4, 100_000]), label="DICTIONARY_SIZE_LIMIT")
    fpp = data.draw(st.sampled_from([0.01, 0.3]))
    table = build_table(ALL_COLUMNS, palettes, seed, groups)
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/t.parquet"
        write_duckdb(table, path, limit, fpp)
        assert num_row_groups(path) == len(groups)
        check_file(path, ALL_COLUMNS, palettes, data)


@settings(max_examples=examples(40), **SETTINGS)
@given(data=st.data())
def test_datafusion_prune_has_no_false_negatives(data):
    palettes = data.draw(palettes_for(ALL_COLUMNS), label="palettes")
    rows, groups = data.draw(layouts())
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    options = data.draw(
        st.fixed_dictionaries(
            {
                "bloom_filter_fpp": st.sampled_from([0.01, 0.3]),
                "dictionary_enabled": st.booleans(),
                "dictionary_page_size_limit": st.sampled_from([1 << 20, 64]),
                "writer_version": st.sampled_from(["1.0", "2.0"]),
                # Truncated string/binary bounds (max rounded up) must stay bounds.
                "statistics_truncate_length": st.sampled_from([None, 3]),
            }
        ),
        label="options",
    )
    table = build_table(ALL_COLUMNS, palettes, seed, groups)
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/t.parquet"
        write_datafusion(table, path, rows, options)
        assert num_row_groups(path) == len(groups)
        check_file(path, ALL_COLUMNS, palettes, data)


DELTA_COLUMNS = [c for c in ALL_COLUMNS if c.name not in UNSIGNED]


@settings(max_examples=examples(20), **SETTINGS)
@given(data=st.data())
def test_deltalake_prune_has_no_false_negatives(data):
    palettes = data.draw(palettes_for(DELTA_COLUMNS), label="palettes")
    rows, groups = data.draw(layouts())
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    fpp = data.draw(st.sampled_from([0.01, 0.3]))
    table = build_table(DELTA_COLUMNS, palettes, seed, groups)
    with tempfile.TemporaryDirectory() as tmp:
        (path,) = write_deltalake(table, f"{tmp}/table", rows, fpp)
        assert num_row_groups(path) == len(groups)
        check_file(path, DELTA_COLUMNS, palettes, data)


# ------------------------------------------------------------------------------ Spark

#: (spark.sql.parquet.outputTimestampType, dictionary encoding, legacy format with v2
#: pages) per Spark file. Without dictionaries every column gets a filter (BOOLEAN ones
#: all zeros); with them, and a tiny dictionary page, low-cardinality chunks are
#: dictionary-only and the others fall back to PLAIN part way through the chunk. The
#: legacy format stores every decimal as FIXED_LEN_BYTE_ARRAY (DECIMAL(9,2) in 4 bytes).
SPARK_VARIANTS = {
    "int96": ("INT96", False, False),
    "micros": ("TIMESTAMP_MICROS", False, False),
    "millis_dictionary": ("TIMESTAMP_MILLIS", True, False),
    "legacy_v2_dictionary": ("TIMESTAMP_MICROS", True, True),
}
SPARK_ROWS = [250] * 8


@dataclass
class SparkFiles:
    paths: dict[str, str]
    palettes: dict[str, list]
    truths: dict[str, Truth]


@pytest.fixture(scope="module")
def spark_files(spark, tmp_path_factory):
    """Three files written once by Spark from one seeded table (edge values included),
    with a filter on every column; ``k`` (2 x row number) is for the usefulness test."""
    from pyspark.sql import functions as F

    palettes = seeded_palettes(SPARK_COLUMNS, seed=20260821)
    table = build_table(SPARK_COLUMNS, palettes, seed=11, groups=SPARK_ROWS)
    table = table.append_column("k", pa.array(range(0, 2 * table.num_rows, 2), pa.int64()))
    df = spark.createDataFrame(table).withColumn("ts_ntz", F.col("ts_ntz").cast("timestamp_ntz"))
    leaves_ = [c.name for c in SPARK_COLUMNS] + ["k"]
    out = tmp_path_factory.mktemp("spark-prune")
    conf = {
        "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",  # years 1..1582 as is
        "spark.sql.parquet.datetimeRebaseModeInWrite": "CORRECTED",
    }
    paths = {}
    for name, (ts_type, dictionary, legacy) in SPARK_VARIANTS.items():
        settings_ = {
            **conf,
            "spark.sql.parquet.outputTimestampType": ts_type,
            "spark.sql.parquet.writeLegacyFormat": str(legacy).lower(),
        }
        previous = {key: spark.conf.get(key, None) for key in settings_}
        for key, value in settings_.items():
            spark.conf.set(key, value)
        try:
            writer = (
                df.coalesce(1)
                .write.option("parquet.enable.dictionary", str(dictionary).lower())
                .option("parquet.dictionary.page.size", "512")
                .option("parquet.block.size", "16384")  # row groups of a few hundred rows
                .option("parquet.block.size.row.check.min", "50")
                .option("parquet.block.size.row.check.max", "200")
                .option("parquet.writer.version", "v2" if legacy else "v1")
                # Truncated string/binary statistics (max rounded up) must stay bounds.
                .option("parquet.statistics.truncate.length", "3" if legacy else "2147483647")
            )
            for leaf in leaves_:
                writer = writer.option(f"parquet.bloom.filter.enabled#{leaf}", "true")
                writer = writer.option(f"parquet.bloom.filter.expected.ndv#{leaf}", "300")
            writer.parquet(str(out / name))
        finally:
            for key, value in previous.items():
                if value is None:
                    spark.conf.unset(key)
                else:
                    spark.conf.set(key, value)
        (paths[name],) = glob.glob(str(out / name / "part-*.parquet"))
    truths = {name: Truth(path, SPARK_COLUMNS) for name, path in paths.items()}
    yield SparkFiles(paths, palettes, truths)
    for truth in truths.values():
        truth.close()


@pytest.mark.spark
def test_spark_files_are_what_the_tests_need(spark_files):
    for name, path in spark_files.paths.items():
        meta = pq.ParquetFile(path).metadata
        assert meta.created_by.startswith("parquet-mr"), meta.created_by
        assert meta.num_row_groups >= 4, name
        assert pq.read_table(path).num_rows == sum(SPARK_ROWS)
        schema = pq.ParquetFile(path).schema
        physical = {
            schema.column(i).path: schema.column(i).physical_type for i in range(meta.num_columns)
        }
        assert physical["ts"] == ("INT96" if name == "int96" else "INT64")
        assert physical["ts_ntz"] == "INT64"
        legacy = SPARK_VARIANTS[name][2]
        integers = ("FIXED_LEN_BYTE_ARRAY",) * 2 if legacy else ("INT32", "INT64")
        assert (physical["d9"], physical["d18"]) == integers
        assert physical["d19"] == physical["d38"] == "FIXED_LEN_BYTE_ARRAY"
        if not SPARK_VARIANTS[name][1]:  # every chunk has a filter, booleans too
            rg = meta.row_group(0)
            assert all(rg.column(i).bloom_filter_offset for i in range(meta.num_columns))


@pytest.mark.spark
@settings(max_examples=examples(80), **SETTINGS)
@given(data=st.data())
def test_spark_prune_has_no_false_negatives(spark_files, data):
    name = data.draw(st.sampled_from(sorted(spark_files.paths)), label="file")
    path, truth = spark_files.paths[name], spark_files.truths[name]
    check_predicates(path, truth, SPARK_COLUMNS, spark_files.palettes, data)


@pytest.mark.spark
def test_spark_boolean_filters_are_never_trusted(spark_files):
    """parquet-java writes all-zero BOOLEAN filters: "absent" for every value."""
    for name, path in spark_files.paths.items():
        truth = spark_files.truths[name]
        for sql in ["b = true", "b = false", "b", "NOT b", "b IN (true, false)", "b IS TRUE"]:
            for stages in (STAGES, ("bloom",)):
                result = prune(path, sql, stages=stages)
                for u in result.units:
                    assert "bloom filter: absent" not in u.reason, (name, sql, u)
            leaf = Leaf("=", BY_NAME["b"], (Lit("true", ("bool", True)),))
            check_prune(path, truth, leaf)
        for u in probe(path, "b", [True, False]).units:
            assert "absent" not in u.values, (name, u)


# ---------------------------------------------------------------- pruning is useful


def useful_table(groups: int = 4, rows: int = 100) -> pa.Table:
    """``k`` = 2 x row number, ``s`` = 'k<k>': every odd number lies inside some row
    group's min/max without being in it."""
    k = list(range(0, 2 * groups * rows, 2))
    return pa.table({"k": pa.array(k, pa.int64()), "s": pa.array([f"k{v:06d}" for v in k])})


def assert_useful(path: str, stages=STAGES, expect: str = "bloom filter: absent") -> None:
    """A point lookup of absent values inside row group 0's [min, max] is ruled out
    there by ``expect`` (a bloom filter or a dictionary) for most of them; the row group
    holding a present value is kept."""
    for sql_of in (lambda v: f"k = {v}", lambda v: f"s = 'k{v:06d}'"):
        ruled_out = 0
        for v in (51, 77, 101, 133, 157):
            units = prune(path, sql_of(v), stages=stages).units
            assert units[0].may_match or expect in units[0].reason, units[0]
            ruled_out += not units[0].may_match
            assert all(not u.may_match for u in units[1:]), units  # outside their min/max
        assert ruled_out >= 4, (path, sql_of(0), ruled_out)
        units = prune(path, sql_of(52), stages=stages).units
        assert units[0].may_match and not any(u.may_match for u in units[1:])


def test_pyarrow_pruning_is_useful(tmp_path):
    table = useful_table()
    path = str(tmp_path / "plain.parquet")
    bloom = {"k": {"ndv": 100, "fpp": 0.01}, "s": {"ndv": 100, "fpp": 0.01}}
    pq.write_table(
        table, path, row_group_size=100, use_dictionary=False, bloom_filter_options=bloom
    )
    assert_useful(path)
    path = str(tmp_path / "dictionary.parquet")
    pq.write_table(table, path, row_group_size=100, bloom_filter_options=bloom)
    assert_useful(path, expect="dictionary: not among")
    assert_useful(path, stages=("statistics", "bloom"))


def test_duckdb_pruning_is_useful(tmp_path):
    path = str(tmp_path / "t.parquet")
    write_duckdb(useful_table(groups=3, rows=2048), path, 100_000, 0.01)
    assert num_row_groups(path) == 3
    assert_useful(path, expect="dictionary: not among")
    assert_useful(path, stages=("statistics", "bloom"))  # DuckDB's own filters


def test_datafusion_pruning_is_useful(tmp_path):
    path = str(tmp_path / "t.parquet")
    write_datafusion(useful_table(), path, 100, {"bloom_filter_fpp": 0.01})
    assert num_row_groups(path) == 4
    assert_useful(path, expect="dictionary: not among")
    assert_useful(path, stages=("statistics", "bloom"))
    write_datafusion(
        useful_table(), path, 100, {"bloom_filter_fpp": 0.01, "dictionary_enabled": False}
    )
    assert_useful(path)


def test_deltalake_pruning_is_useful(tmp_path):
    (path,) = write_deltalake(useful_table(), str(tmp_path / "table"), 100, 0.01)
    assert num_row_groups(path) == 4
    assert_useful(path, stages=("statistics", "bloom"))


@pytest.mark.spark
def test_spark_pruning_is_useful(spark_files):
    """Spark's row groups hold a few hundred consecutive ``k``: an odd ``k`` inside a
    row group's range is ruled out by its filter (dictionaries are off), an even one kept."""
    path = spark_files.paths["micros"]
    units = prune(path, "k = 52").units
    assert [u.may_match for u in units] == [
        u.first_row <= 26 < u.first_row + u.num_rows for u in units
    ]
    ruled_out = 0
    for v in (51, 77, 101, 133, 157):
        unit = prune(path, f"k = {v}").units[0]
        assert unit.may_match or unit.reason.endswith("bloom filter: absent"), unit
        ruled_out += not unit.may_match
    assert ruled_out >= 4


# ------------------------------------------------------------ regression: minimal cases
#
# False negatives the properties above found, each reduced to a file of one row per
# row group. Every case first shows DuckDB returning the row (so the literal means
# that under a real engine's semantics), then that prune keeps its row group.


def assert_kept(path: str, sql: str, rows: list[int]) -> None:
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone='UTC'")
        table = pq.read_table(path)
        con.register("t", table.append_column("__row", pa.array(range(table.num_rows))))
        found = {r for (r,) in con.execute(f"SELECT __row FROM t WHERE {sql}").fetchall()}
    finally:
        con.close()
    assert found == set(rows), f"DuckDB: {sql} matches rows {found}"
    units = prune(path, sql).units
    assert [u.may_match for u in units if u.row_group in rows] == [True] * len(rows), units


def test_regression_approximate_numbers_on_exact_columns(tmp_path):
    """``1e3`` and numbers of 39+ digits are DOUBLEs in DuckDB and Spark: the column is
    compared as DOUBLE too. bloomskip read them exactly and ruled out 2^53, 0.00, 1."""
    path = one_row_per_group(tmp_path, "i", pa.array([2**53, 1], pa.int64()))
    assert_kept(path, "i = 9007199254740993e0", [0])
    assert_kept(path, "i IN (1.000000000000000000000000000000000000001)", [1])
    path = one_row_per_group(
        tmp_path, "d", pa.array([Decimal("0"), Decimal("1.23")], pa.decimal128(5, 2))
    )
    assert_kept(path, "d = 1e-400", [0])
    assert_kept(path, "d = 1.230000000000000000000000000000000000001", [1])
    assert_kept(path, "d = 1.23e0", [1])


def test_regression_one_double_makes_the_whole_in_list_double(tmp_path):
    """DuckDB and Spark give an IN list one type: with a DOUBLE in it, every number in
    it (and numeric text) is compared as DOUBLE."""
    path = one_row_per_group(tmp_path, "i", pa.array([2**53, 2**63 - 2], pa.int64()))
    assert_kept(path, "i IN (9007199254740993, 1e0)", [0])
    assert_kept(path, "i IN ('9223372036854775808', -64e0)", [1])
    assert [u.may_match for u in prune(path, "i IN (9007199254740993, 1)").units] == [False] * 2


def test_regression_a_float_literal_that_rounds_to_zero_matches_both_zeros(tmp_path):
    path = one_row_per_group(tmp_path, "g", pa.array([-0.0, 1.0, 0.0], pa.float64()))
    assert_kept(path, "g = 1e-400", [0, 2])
    assert_kept(path, "g = -1e-400", [0, 2])
    path = one_row_per_group(tmp_path, "f", pa.array([-0.0, 1.0], pa.float32()))
    units = prune(path, "f = 1e-46").units  # float32 rounding gives 0: -0.0 may match
    assert units[0].may_match and not units[1].may_match


def test_regression_decimal38_literals_keep_all_digits(tmp_path):
    """Python's default Decimal context has 28 digits: negating or scaling a DECIMAL(38)
    literal rounded it, so the filter was asked for another value."""
    v = Decimal("1234567890123456789012345678.9012345678")
    path = one_row_per_group(tmp_path, "d", pa.array([v, v.copy_negate()], pa.decimal128(38, 10)))
    assert_kept(path, f"d = {v}", [0])
    assert_kept(path, f"d = -{v}", [1])
    assert_kept(path, f"d IN (-{v}, {v})", [0, 1])
    units = prune(path, "d = 1234567890123456789012345678.9012345679").units
    assert not any(u.may_match for u in units)  # and it is still exact


def test_regression_text_cast_to_a_decimal_rounds(tmp_path):
    path = one_row_per_group(
        tmp_path, "d", pa.array([Decimal("1.23"), Decimal("1.24")], pa.decimal128(5, 2))
    )
    assert_kept(path, "d = '1.234'", [0])
    assert_kept(path, "d = '1.235'", [1])  # DuckDB rounds half away from zero


def test_regression_digits_finer_than_microseconds(tmp_path):
    """DuckDB keeps microseconds of a TIMESTAMP literal (PostgreSQL rounds to them)."""
    path = one_row_per_group(tmp_path, "ts", pa.array([1, 5], pa.timestamp("us")))
    assert_kept(path, "ts = TIMESTAMP '1970-01-01 00:00:00.0000019'", [0])
    path = one_row_per_group(tmp_path, "ts", pa.array([1000, 5], pa.timestamp("ns")))
    assert_kept(path, "ts = TIMESTAMP '1970-01-01 00:00:00.000001999'", [0])
    path = one_row_per_group(tmp_path, "dt", pa.array([0, 5], pa.date32()))
    assert_kept(path, "dt = TIMESTAMP '1970-01-01 00:00:00.0000001'", [0])


def test_regression_a_cast_to_a_float_type_rounds(tmp_path):
    """``CAST(9007199254740993 AS DOUBLE)`` is the double 2^53, and the column is compared
    as DOUBLE: bloomskip kept the exact integer and ruled out 2^53. A cast to REAL
    rounds to a float32 first (16777217 -> 16777216), and so does an approximate number
    cast to an integer (``9007199254740993e0`` is 2^53 before the cast)."""
    path = one_row_per_group(tmp_path, "i", pa.array([2**53, 1], pa.int64()))
    assert_kept(path, "i = CAST(9007199254740993 AS DOUBLE)", [0])
    assert_kept(path, "i IN (1, CAST(9007199254740993 AS DOUBLE))", [0, 1])
    assert_kept(path, "i = 9007199254740993::float8", [0])
    assert_kept(path, "i = CAST('9007199254740993' AS DOUBLE)", [0])
    assert_kept(path, "i = CAST(9007199254740993e0 AS BIGINT)", [0])
    path = one_row_per_group(tmp_path, "f", pa.array([16777216.0, 1.0], pa.float64()))
    assert_kept(path, "f = CAST(16777217 AS REAL)", [0])
    assert_kept(path, "f = 16777217::real", [0])
    path = one_row_per_group(tmp_path, "i", pa.array([16777217, 1], pa.int64()))
    assert_kept(path, "i = CAST(16777217 AS REAL)", [0])
    # what stays exact: a whole number cast to an integer or a decimal type
    units = prune(path, "i = CAST(16777218 AS BIGINT)").units
    assert not any(u.may_match for u in units)


def test_regression_a_timestamp_precision_rounds_the_text(tmp_path):
    """DuckDB reads ``TIMESTAMP(3)`` as milliseconds and ``TIMESTAMP(0)`` as seconds,
    rounding the text to them first: ``'… 00:00:00.0015'`` is ``.002``."""
    ms = pa.array([2, 5], pa.timestamp("ms"))
    path = one_row_per_group(tmp_path, "ts", ms)
    assert_kept(path, "ts = CAST('1970-01-01 00:00:00.0015' AS TIMESTAMP(3))", [0])
    path = one_row_per_group(tmp_path, "ts", ms.cast(pa.timestamp("us")))
    assert_kept(path, "ts = CAST('1970-01-01 00:00:00.0015' AS TIMESTAMP(3))", [0])
    assert_kept(path, "ts = TIMESTAMP(3) '1970-01-01 00:00:00.0015'", [0])
    assert_kept(path, "ts = '1970-01-01 00:00:00.0015'::timestamp(3)", [0])
    path = one_row_per_group(tmp_path, "ts", pa.array([10**6, 5], pa.timestamp("us")))
    assert_kept(path, "ts = CAST('1970-01-01 00:00:00.7' AS TIMESTAMP(0))", [0])
    path = one_row_per_group(tmp_path, "dt", pa.array([1, 5], pa.date32()))
    assert_kept(path, "dt = CAST('1970-01-01 23:59:59.9996' AS TIMESTAMP(3))", [0])
    # text no finer than the precision is read as written
    units = prune(path, "dt = CAST('1970-01-03 00:00:00.000' AS TIMESTAMP(3))").units
    assert not any(u.may_match for u in units)


def test_regression_int96_is_read_at_microseconds_by_duckdb_and_spark(tmp_path):
    """DuckDB and Spark read INT96 as microseconds, dropping the nanoseconds below (pyarrow
    keeps them): a microsecond literal matches every stored value in that microsecond.
    bloomskip probed the exact nanosecond, and its dictionary and bloom filter ruled the
    row group out."""
    ns = [1706702400123456789, 0, -1, 5_000]
    path = str(tmp_path / "int96.parquet")
    table = pa.table({"ts": pa.array(ns, pa.timestamp("ns"))})
    options = {"row_group_size": 1, "use_deprecated_int96_timestamps": True}
    for dictionary in (False, True):
        options |= {"use_dictionary": dictionary, "bloom_filter_options": {"ts": {"ndv": 1}}}
        pq.write_table(table, path, **options)
        for sql in (
            "ts = TIMESTAMP '2024-01-31 12:00:00.123456'",
            "ts = '1970-01-01 00:00:00.000000999'",
            "ts = TIMESTAMP '1969-12-31 23:59:59.999999'",
            "ts IN (TIMESTAMP '1970-01-01 00:00:00.000005', TIMESTAMP '2000-01-01')",
        ):
            con = duckdb.connect()
            try:
                con.execute("SET TimeZone='UTC'")
                q = f"SELECT file_row_number FROM read_parquet('{path}', file_row_number=true)"
                found = {r for (r,) in con.execute(f"{q} WHERE {sql}").fetchall()}
            finally:
                con.close()
            assert found, sql  # DuckDB returns a row for each
            units = prune(path, sql).units
            assert all(units[r].may_match for r in found), (sql, dictionary, units)
    # a dictionary still rules out what no value in that microsecond equals
    assert not prune(path, "ts = TIMESTAMP '2000-01-01'").units[0].may_match


def test_regression_text_cast_to_a_timestamp_or_date(tmp_path):
    """Text is cast to the column's type: rounded to milliseconds, or to a date (the
    time of day dropped, as from DATE '… 12:00')."""
    path = one_row_per_group(tmp_path, "ts", pa.array([2, 5], pa.timestamp("ms")))
    assert_kept(path, "ts = '1970-01-01 00:00:00.0015'", [0])
    path = one_row_per_group(tmp_path, "dt", pa.array([0, 5], pa.date32()))
    assert_kept(path, "dt = '1970-01-01 12:34:56'", [0])
    assert_kept(path, "dt = DATE '1970-01-01 12:00'", [0])


def test_regression_timestamp_literal_offset_is_ignored_by_postgres_and_duckdb(tmp_path):
    hours = [2 * 3600 * 10**6, 0]
    path = one_row_per_group(tmp_path, "ts", pa.array(hours, pa.timestamp("us", tz="UTC")))
    assert_kept(path, "ts = TIMESTAMP '1970-01-01 02:00:00+02:00'", [0])
    assert_kept(path, "ts = '1970-01-01 02:00:00+02:00'", [1])  # text: the offset applies


def test_regression_duckdb_reads_escapes_in_text_compared_with_binary(tmp_path):
    path = one_row_per_group(tmp_path, "b", pa.array([b"\xff", b"x"], pa.binary()))
    assert_kept(path, "b = '\\xff'", [0])
    path = one_row_per_group(tmp_path, "b", pa.array([b"\x00\x01\x02", b"xyz"], pa.binary(3)))
    assert_kept(path, "b = '\\x00\\x01\\x02'", [0])
    path = one_row_per_group(tmp_path, "s", pa.array(["\\x78", "y"]))
    assert_kept(path, "s = X'78'", [0])  # the column's text is cast to BLOB


def test_regression_not_equal_is_not_decided_by_an_inexact_literal(tmp_path):
    """Every value is 0 ms; the literal may read as 0 ms (rounded to microseconds) or
    not (-1 ns exactly, -1 µs truncated): `!=` may be true."""
    path = one_row_per_group(tmp_path, "ts", pa.array([0], pa.timestamp("ms")))
    assert_kept(path, "ts != TIMESTAMP '1969-12-31 23:59:59.999999999'", [0])


def test_regression_huge_number_literals_neither_hang_nor_crash(tmp_path):
    """int() refuses integers of 4300+ digits (a ValueError out of parse), and an exact
    rational of 1e100000000 takes minutes: both are clamped, with the same answers."""
    path = one_row_per_group(tmp_path, "f", pa.array([math.inf, 0.0, -0.0, 1.0]))
    cases = {
        "f = 1e100000000": [0],  # a DOUBLE: inf
        "f = -1e-100000000": [1, 2],  # a DOUBLE: -0.0, equal to both zeros
        "f = " + "9" * 5000: [0],
        "f = CAST(1e100000000 AS BIGINT)": [0, 1, 2, 3],  # not understood: may match
    }
    for sql, kept in cases.items():
        start = time.perf_counter()
        units = prune(path, sql).units
        assert time.perf_counter() - start < 5, sql[:40]
        assert [u.row_group for u in units if u.may_match] == kept, sql[:40]


def test_regression_long_and_or_chains_do_not_overflow_the_stack(tmp_path):
    """Generated SQL writes ``a = 1 OR a = 2 OR ...``: sqlglot parses it as a tree as
    deep as it is long, and 1,000 terms raised RecursionError out of prune. Deep
    nesting sqlglot itself cannot parse is a PredicateError, not a RecursionError."""
    path = one_row_per_group(tmp_path, "i", pa.array([5, 7000, 123_456], pa.int64()))
    chain = " OR ".join(f"i = {v}" for v in range(0, 10_000, 5))
    assert [u.may_match for u in prune(path, chain).units] == [True, True, False]
    chain = " AND ".join(f"i != {v}" for v in range(0, 10_000, 5))
    assert [u.may_match for u in prune(path, chain).units] == [False, False, True]
    with pytest.raises(PredicateError, match="nested too deeply"):
        prune(path, "NOT " * 200 + "i = 5")
