"""bloomskip's filters are byte-identical to the ones real Parquet writers put in files.

Each peer writes a small file with bloom filters at test time: pyarrow (Arrow C++),
DuckDB, Spark (parquet-java), DataFusion and deltalake (both arrow-rs). For every
(row group, column) filter in the file, the test reads the bitset (:mod:`tests.support.peers`),
takes the row group's values with pyarrow and the column's physical type from the
file's schema, rebuilds the filter with bloomskip and compares bytes. A mismatch
reports whether the peer hashed other bytes (values of the row group absent from its
filter) or only set other bits.

Peer facts the tests rely on (``../shared/reference/parquet-sbbf.md`` §1-5):

* pyarrow sizes from ``ndv``/``fpp`` and then folds to the fpp, like arrow-rs; it
  writes decimals as FIXED_LEN_BYTE_ARRAY unless ``store_decimal_as_integer=True``.
* DuckDB writes filters only for dictionary-encoded chunks, sized from the exact
  dictionary size (so no folding); never for BOOLEAN or FLBA decimals.
* parquet-java sizes from ``expected.ndv#col`` and never folds; it skips chunks that
  are only dictionary-encoded, and writes an all-zero filter for BOOLEAN columns.
* arrow-rs (DataFusion, deltalake) sizes from ``ndv`` (default: the row group size) and
  folds to the fpp, writes each row group's filters right after it, and writes real
  filters for BOOLEAN columns and for every leaf of lists, structs and maps.

Every file is also read by bloomskip's own reader (:mod:`bloomskip.parquet.bloom`),
which must load each filter bit for bit; and hypothesis-chosen small tables, written by
each peer, must give filters identical to a rebuild with no false negative.
"""

from __future__ import annotations

import glob
import math
import tempfile
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bloomskip import PhysicalSpec, PhysicalType, Sbbf, parquet_spec
from bloomskip.parquet import bloom
from bloomskip.sbbf.sizing import num_bytes_for
from tests.support.peers import (
    FileFilter,
    file_physical_spec,
    leaf_values,
    mismatch_report,
    parse_bloom_header,
    read_bloom_filters,
    row_group_values,
)

FPP = 0.01
ROWS_PER_GROUP = 5_000
NUM_ROWS = 2 * ROWS_PER_GROUP
NDV = ROWS_PER_GROUP  # the ndv each peer is told (one row group's rows)

P = PhysicalType
INT32 = PhysicalSpec(P.INT32)
INT64 = PhysicalSpec(P.INT64)
BYTE_ARRAY = PhysicalSpec(P.BYTE_ARRAY)


def flba(n: int) -> PhysicalSpec:
    return PhysicalSpec(P.FIXED_LEN_BYTE_ARRAY, type_length=n)


def timed(physical: PhysicalType, unit: str) -> PhysicalSpec:
    return PhysicalSpec(physical, time_unit=unit)


def exact_decimal(unscaled: int, scale: int) -> Decimal:
    """``unscaled * 10**-scale`` exactly (``Decimal.scaleb`` rounds to 28 digits)."""
    return Decimal(f"{unscaled}e-{scale}")


def canonical_header(num_bytes: int) -> bytes:
    """The header every peer writes: numBytes, then BLOCK / XXHASH / UNCOMPRESSED."""
    out = bytearray([0x15])
    v = num_bytes << 1  # zigzag of a positive i32
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out) + bytes.fromhex("1c1c00001c1c00001c1c000000")


def built(num_bytes: int, values, spec: PhysicalSpec | None) -> Sbbf:
    f = Sbbf(num_bytes)
    f.insert(values, physical=spec)
    return f


def check_filter(path, ff: FileFilter, expected: PhysicalSpec) -> pa.ChunkedArray:
    """Rebuild ``ff`` at its size from the row group's values hashed as the file's type.

    Returns the row group's values for further checks.
    """
    spec = file_physical_spec(path, ff.column)
    assert spec == expected, f"{ff.name}: the file stores {spec}, expected {expected}"
    assert ff.raw_header == canonical_header(ff.header.num_bytes)
    values = row_group_values(path, ff.row_group, ff.name)
    ours = built(ff.header.num_bytes, values, spec)
    assert ours.to_bytes() == ff.bitset, (
        f"{ff.name} (row group {ff.row_group}): " + mismatch_report(ours, ff.bitset, values, spec)
    )
    return values


def filters_by_column(path) -> dict[str, list[FileFilter]]:
    out: dict[str, list[FileFilter]] = {}
    for ff in read_bloom_filters(path):
        out.setdefault(ff.name, []).append(ff)
    return out


def distinct_count(values: pa.ChunkedArray) -> int:
    chunks = [c.storage if isinstance(c, pa.ExtensionArray) else c for c in values.chunks]
    return pc.count_distinct(pa.chunked_array(chunks), mode="only_valid").as_py()


# ---------------------------------------------------------------------------- the parser


@pytest.mark.parametrize(
    ("num_bytes", "header_len"),
    [(32, 15), (64, 16), (4096, 16), (8192, 17), (512 << 10, 17), (1 << 20, 18), (1 << 27, 19)],
)
def test_header_parser_reads_canonical_headers(num_bytes, header_len):
    raw = canonical_header(num_bytes)
    h = parse_bloom_header(raw + b"\xff" * 8)  # the bitset follows
    assert (h.num_bytes, h.header_len) == (num_bytes, header_len)
    assert (h.algorithm, h.hash, h.compression) == (1, 1, 1)


def test_header_parser_skips_unknown_fields():
    raw = (
        canonical_header(64)[:-1]  # without the stop byte
        + b"\x58\x03abc"  # field 9: binary "abc"
        + b"\x19\x25\x02\x04"  # field 10: list<i32> [1, 2]
        + b"\x0c\xc8\x01\x11\x00"  # field 100 (long form): struct {1: true}
        + b"\x00"
    )
    h = parse_bloom_header(raw + b"\x00" * 64)
    assert (h.num_bytes, h.header_len) == (64, len(raw))
    assert (h.algorithm, h.hash, h.compression) == (1, 1, 1)


# ---------------------------------------------------------------------------- pyarrow

# column -> (physical spec without / with store_decimal_as_integer)
PYARROW_COLUMNS: dict[str, tuple[PhysicalSpec, PhysicalSpec]] = {
    "int8": (INT32, INT32),
    "int16": (INT32, INT32),
    "int32": (INT32, INT32),
    "int64": (INT64, INT64),
    "uint8": (INT32, INT32),
    "uint16": (INT32, INT32),
    "uint32": (INT32, INT32),
    "uint64": (INT64, INT64),
    "float32": (PhysicalSpec(P.FLOAT),) * 2,
    "float64": (PhysicalSpec(P.DOUBLE),) * 2,
    "float16": (flba(2), flba(2)),
    "date32": (INT32, INT32),
    "date64": (INT32, INT32),
    "timestamp_s": (timed(P.INT64, "ms"),) * 2,  # Parquet has no seconds: coerced to ms
    "timestamp_ms": (timed(P.INT64, "ms"),) * 2,
    "timestamp_us_utc": (timed(P.INT64, "us"),) * 2,
    "timestamp_ns": (timed(P.INT64, "ns"),) * 2,
    "time32_s": (timed(P.INT32, "ms"),) * 2,
    "time32_ms": (timed(P.INT32, "ms"),) * 2,
    "time64_us": (timed(P.INT64, "us"),) * 2,
    "time64_ns": (timed(P.INT64, "ns"),) * 2,
    "decimal_9_2": (flba(4), INT32),
    "decimal_18_2": (flba(8), INT64),
    "decimal_19_2": (flba(9), flba(9)),
    "decimal_38_10": (flba(16), flba(16)),
    "string": (BYTE_ARRAY, BYTE_ARRAY),
    "large_string": (BYTE_ARRAY, BYTE_ARRAY),
    "string_view": (BYTE_ARRAY, BYTE_ARRAY),
    "binary": (BYTE_ARRAY, BYTE_ARRAY),
    "large_binary": (BYTE_ARRAY, BYTE_ARRAY),
    "binary_view": (BYTE_ARRAY, BYTE_ARRAY),
    "fixed_size_binary": (flba(7), flba(7)),
    "dictionary_string": (BYTE_ARRAY, BYTE_ARRAY),
    "all_null": (INT64, INT64),
}


def pyarrow_table() -> pa.Table:
    """Every type pyarrow writes bloom filters for; every 13th row is null."""
    n, rg = NUM_ROWS, ROWS_PER_GROUP
    rng = np.random.default_rng(20_240_601)
    null = np.arange(n) % 13 == 5

    def num(values, type_):
        return pa.array(values, type=type_, mask=null)

    def ints(lo, hi, dtype=np.int64):
        return rng.integers(lo, hi, n, dtype=dtype)

    def nullable(values, type_):
        return pa.array([None if m else v for v, m in zip(values, null, strict=True)], type_)

    def dec(unscaled, precision, scale):
        values = [exact_decimal(int(u), scale) for u in unscaled]
        return nullable(values, pa.decimal128(precision, scale))

    def texts(type_):
        return nullable([f"user_{k:06d}" for k in ints(0, 1_000_000)], type_)

    def blobs(type_, width=None):
        sizes = np.full(n, width) if width else ints(0, 24)
        return nullable([rng.bytes(int(s)) for s in sizes], type_)

    def floats(dtype):
        x = rng.standard_normal(n).astype(dtype)
        for start in (0, rg):  # signed zeros and NaN in both row groups
            x[start : start + 3] = [-0.0, 0.0, np.nan]
        return x

    big = ints(-(10**18) + 1, 10**18)
    digit = ints(0, 10)  # one more digit for the 19- and 38-digit decimals
    wide = [int(b) * 10 + int(d) for b, d in zip(big, digit, strict=True)]
    lookup = pa.array([f"key_{i:04d}" for i in range(1_000)])
    # Row group 0 uses keys 0..99, row group 1 keys 100..399: most entries unreferenced.
    index = np.r_[np.arange(rg) % 100, 100 + np.arange(n - rg) % 300].astype(np.int32)
    columns = {
        "int8": num(ints(-128, 128), pa.int8()),
        "int16": num(ints(-(2**15), 2**15), pa.int16()),
        "int32": num(ints(-(2**31), 2**31), pa.int32()),
        "int64": num(ints(-(2**63), 2**63 - 1), pa.int64()),
        "uint8": num(ints(0, 2**8), pa.uint8()),
        "uint16": num(ints(0, 2**16), pa.uint16()),
        "uint32": num(ints(0, 2**32), pa.uint32()),
        "uint64": num(ints(0, 2**64, np.uint64), pa.uint64()),
        "float32": num(floats(np.float32), pa.float32()),
        "float64": num(floats(np.float64), pa.float64()),
        "float16": num(rng.standard_normal(n).astype(np.float16), pa.float16()),
        "date32": num(ints(-40_000, 40_000).astype(np.int32), pa.date32()),
        "date64": num(ints(-40_000, 40_000) * 86_400_000, pa.date64()),
        "timestamp_s": num(ints(-(2**33), 2**33), pa.timestamp("s")),
        "timestamp_ms": num(ints(-(2**42), 2**42), pa.timestamp("ms")),
        "timestamp_us_utc": num(ints(-(2**52), 2**52), pa.timestamp("us", tz="UTC")),
        "timestamp_ns": num(ints(-(2**62), 2**62), pa.timestamp("ns")),
        "time32_s": num(ints(0, 86_400).astype(np.int32), pa.time32("s")),
        "time32_ms": num(ints(0, 86_400_000).astype(np.int32), pa.time32("ms")),
        "time64_us": num(ints(0, 86_400 * 10**6), pa.time64("us")),
        "time64_ns": num(ints(0, 86_400 * 10**9), pa.time64("ns")),
        "decimal_9_2": dec(big % 10**9 - 5 * 10**8, 9, 2),
        "decimal_18_2": dec(big, 18, 2),
        "decimal_19_2": dec(wide, 19, 2),
        "decimal_38_10": dec([w * 10**18 + 123_456_789 for w in wide], 38, 10),
        "string": texts(pa.string()),
        "large_string": texts(pa.large_string()),
        "string_view": texts(pa.string_view()),
        "binary": blobs(pa.binary()),
        "large_binary": blobs(pa.large_binary()),
        "binary_view": blobs(pa.binary_view()),
        "fixed_size_binary": blobs(pa.binary(7), width=7),
        "dictionary_string": pa.DictionaryArray.from_arrays(
            pa.array(index, pa.int32(), mask=null), lookup
        ),
        "all_null": pa.nulls(n, pa.int64()),
    }
    assert list(columns) == list(PYARROW_COLUMNS)
    return pa.table(columns)


@pytest.fixture(scope="module")
def pyarrow_source() -> pa.Table:
    return pyarrow_table()


@pytest.fixture(
    scope="module", params=[False, True], ids=["decimals_as_flba", "decimals_as_integers"]
)
def pyarrow_file(request, pyarrow_source, tmp_path_factory):
    """``(path, store_decimal_as_integer)``: the table written by pyarrow with filters."""
    as_integer = request.param
    path = tmp_path_factory.mktemp("pyarrow") / "t.parquet"
    options = {c: {"ndv": NDV, "fpp": FPP} for c in pyarrow_source.column_names}
    pq.write_table(
        pyarrow_source,
        path,
        bloom_filter_options=options,
        row_group_size=ROWS_PER_GROUP,
        store_decimal_as_integer=as_integer,
    )
    return path, as_integer


def test_pyarrow_table_has_the_edge_cases(pyarrow_source):
    t = pyarrow_source
    assert pc.max(t["uint32"]).as_py() >= 2**31
    assert pc.max(t["uint64"]).as_py() >= 2**63
    for name in ("float32", "float64"):
        for start in (0, ROWS_PER_GROUP):
            head = t[name].slice(start, 3).to_numpy()
            assert np.signbit(head[0]) and head[0] == 0
            assert not np.signbit(head[1]) and head[1] == 0
            assert np.isnan(head[2])
    assert all(t[c].null_count for c in t.column_names)


@pytest.mark.parametrize("column", list(PYARROW_COLUMNS))
def test_pyarrow_filters_are_identical(pyarrow_file, pyarrow_source, column):
    path, as_integer = pyarrow_file
    expected = PYARROW_COLUMNS[column][as_integer]
    filters = filters_by_column(path)[column]
    assert [ff.row_group for ff in filters] == [0, 1]
    initial = num_bytes_for(NDV, FPP, "parquet")
    for ff in filters:
        values = check_filter(path, ff, expected)
        # pyarrow sized the filter for NDV and folded it: so does bloomskip.
        folded = built(initial, values, expected).fold_to_fpp(FPP)
        assert folded.to_bytes() == ff.bitset, (
            f"{column}: folded {initial} B -> {folded.num_bytes} B, file {ff.header.num_bytes} B"
        )
        # The values the user wrote (before Parquet's conversions: s -> ms, date64 ->
        # days, dictionary indices -> values) hash to the same filter ...
        start = ff.row_group * ROWS_PER_GROUP
        original = pyarrow_source[column].slice(start, ROWS_PER_GROUP)
        assert built(ff.header.num_bytes, original, expected).to_bytes() == ff.bitset
        # ... and so they do with bloomskip's default physical type, which follows
        # arrow-rs: it differs from pyarrow's only for decimals stored as FLBA.
        default = parquet_spec(original.type)
        if default == expected:
            assert built(ff.header.num_bytes, original, None).to_bytes() == ff.bitset
        else:
            assert not as_integer and column in ("decimal_9_2", "decimal_18_2")


# ---------------------------------------------------------------------------- DuckDB

# column -> (DuckDB expression over k = i % DUCKDB_DISTINCT, physical type DuckDB writes)
DUCKDB_COLUMNS: dict[str, tuple[str, PhysicalSpec]] = {
    "tinyint": ("(k % 200 - 100)::TINYINT", INT32),
    "smallint": ("(k * 21 - 31000)::SMALLINT", INT32),
    "integer": ("(k * 1431653 - 2147000000)::INTEGER", INT32),
    "bigint": ("(k * 3074457345618258 - 4611686018427387000)::BIGINT", INT64),
    "utinyint": ("(k % 250)::UTINYINT", INT32),
    "usmallint": ("(k * 21)::USMALLINT", INT32),
    "uinteger": ("(k * 1431655)::UINTEGER", INT32),  # up to 4.29e9 >= 2**31
    "ubigint": ("k::UBIGINT * 6148914691236517::UBIGINT", INT64),  # up to 1.8e19 >= 2**63
    "float": (
        "CASE k WHEN 0 THEN '-0.0'::FLOAT WHEN 1 THEN 'NaN'::FLOAT ELSE (k / 7 - 100)::FLOAT END",
        PhysicalSpec(P.FLOAT),
    ),
    "double": (
        "CASE k WHEN 0 THEN '-0.0'::DOUBLE WHEN 1 THEN 'NaN'::DOUBLE ELSE k / 7 - 100 END",
        PhysicalSpec(P.DOUBLE),
    ),
    "varchar": ("'user_' || k", BYTE_ARRAY),
    "blob": ("'\\xAA\\xFF\\x00'::BLOB || k::VARCHAR::BLOB", BYTE_ARRAY),
    "date": ("DATE '1960-01-01' + (k * 11)::INTEGER", INT32),
    "timestamp": (
        "TIMESTAMP '1965-01-01' + INTERVAL (k * 123456789) MICROSECOND",
        timed(P.INT64, "us"),
    ),
    "timestamp_ms": (
        "(TIMESTAMP '1965-01-01' + INTERVAL (k * 123456789) MILLISECOND)::TIMESTAMP_MS",
        timed(P.INT64, "ms"),
    ),
    "timestamp_ns": (
        "(TIMESTAMP '1965-01-01' + INTERVAL (k * 123456789) MICROSECOND)::TIMESTAMP_NS",
        timed(P.INT64, "ns"),
    ),
    "timestamptz": (
        "(TIMESTAMP '1965-01-01' + INTERVAL (k * 123456789) MICROSECOND)::TIMESTAMPTZ",
        timed(P.INT64, "us"),
    ),
    "time": ("TIME '00:00:00' + INTERVAL (k * 28799) MILLISECOND", timed(P.INT64, "us")),
    "decimal_9_2": ("(k * 3210.98 - 4000000)::DECIMAL(9,2)", INT32),
    "decimal_18_2": ("(k * 654321987654.32 - 900000000000000)::DECIMAL(18,2)", INT64),
    "uuid": ("md5(k::VARCHAR)::UUID", flba(16)),
    "hugeint": ("k::HUGEINT * 12345678901234567890123::HUGEINT", PhysicalSpec(P.DOUBLE)),
}
DUCKDB_DISTINCT = 3_000  # per column: under DICTIONARY_SIZE_LIMIT, so chunks are dictionaries


@pytest.fixture(scope="module")
def duckdb_file(tmp_path_factory):
    duckdb = pytest.importorskip("duckdb")
    path = tmp_path_factory.mktemp("duckdb") / "t.parquet"
    select = ", ".join(
        f'CASE WHEN i % 13 = 5 THEN NULL ELSE {expr} END AS "{name}"'
        for name, (expr, _) in DUCKDB_COLUMNS.items()
    )
    con = duckdb.connect()
    try:
        con.execute(
            f"CREATE TABLE t AS SELECT {select} FROM "
            f"(SELECT i, i % {DUCKDB_DISTINCT} AS k FROM range({NUM_ROWS}) r(i)) ORDER BY i"
        )
        con.execute(
            f"COPY t TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE {ROWS_PER_GROUP}, "
            f"DICTIONARY_SIZE_LIMIT {NDV}, BLOOM_FILTER_FALSE_POSITIVE_RATIO {FPP})"
        )
    finally:
        con.close()
    return path


def test_duckdb_table_has_the_edge_cases(duckdb_file):
    t = pq.read_table(duckdb_file)
    assert pc.max(t["uinteger"]).as_py() >= 2**31
    assert pc.max(t["ubigint"]).as_py() >= 2**63
    for name in ("float", "double"):
        x = t[name].drop_null().to_numpy()
        assert np.any((x == 0) & np.signbit(x)) and np.any((x == 0) & ~np.signbit(x))
        assert np.any(np.isnan(x))
    assert b"\xff" in t["blob"][0].as_py()
    assert all(t[c].null_count for c in t.column_names)


@pytest.mark.parametrize("column", list(DUCKDB_COLUMNS))
def test_duckdb_filters_are_identical(duckdb_file, column):
    expected = DUCKDB_COLUMNS[column][1]
    num_row_groups = pq.ParquetFile(duckdb_file).metadata.num_row_groups
    assert num_row_groups >= 2
    filters = filters_by_column(duckdb_file).get(column, [])
    assert [ff.row_group for ff in filters] == list(range(num_row_groups)), (
        f"DuckDB wrote no filter for some row groups of {column} (not dictionary-encoded?)"
    )
    for ff in filters:
        values = check_filter(duckdb_file, ff, expected)
        # DuckDB sizes from the exact dictionary size, with the same formula.
        assert ff.header.num_bytes == num_bytes_for(distinct_count(values), FPP)


# ---------------------------------------------------------------------------- Spark

# column -> (Spark SQL expression over id in 0..NUM_ROWS, physical type Spark writes;
# None for the timestamp, whose type depends on spark.sql.parquet.outputTimestampType)
SPARK_COLUMNS: dict[str, tuple[str, PhysicalSpec | None]] = {
    "byte": ("CAST(id % 256 - 128 AS TINYINT)", INT32),
    "short": ("CAST(id * 7 % 65536 - 32768 AS SMALLINT)", INT32),
    "int": ("CAST(id * 429497 % 4294967296 - 2147483648 AS INT)", INT32),
    "long": ("id * 3000000000017 - 4000000000000000", INT64),
    "float": (
        "CASE id WHEN 0 THEN CAST('-0.0' AS FLOAT) WHEN 1 THEN CAST('NaN' AS FLOAT) "
        "WHEN 2 THEN CAST(0.0 AS FLOAT) ELSE CAST(id / 7 AS FLOAT) END",
        PhysicalSpec(P.FLOAT),
    ),
    "double": (
        "CASE id WHEN 0 THEN CAST('-0.0' AS DOUBLE) WHEN 1 THEN CAST('NaN' AS DOUBLE) "
        "WHEN 2 THEN 0.0D ELSE id / 7 END",
        PhysicalSpec(P.DOUBLE),
    ),
    "string": ("concat('user_', id)", BYTE_ARRAY),
    "binary": ("CAST(concat('blob', id) AS BINARY)", BYTE_ARRAY),
    "date": ("date_add(DATE'1950-01-01', CAST(id * 3 AS INT))", INT32),
    # 1966..1978 with microseconds: INT96 days and nanos of day on both sides of 1970
    "timestamp": ("timestamp_micros(-100000000000000 + id * 37000123)", None),
    "decimal_9_2": ("CAST(id / 7 - 500 AS DECIMAL(9,2))", INT32),
    "decimal_18_2": ("CAST(id * 1234567.89 - 6e9 AS DECIMAL(18,2))", INT64),
    "decimal_38_10": ("CAST(id * 1234567.891 - 5e9 AS DECIMAL(38,10))", flba(16)),
    "boolean": ("id % 3 = 0", PhysicalSpec(P.BOOLEAN)),
}
SPARK_TIMESTAMP_SPECS = {
    "INT96": PhysicalSpec(P.INT96),
    "TIMESTAMP_MICROS": timed(P.INT64, "us"),
}


@pytest.fixture(scope="module", params=list(SPARK_TIMESTAMP_SPECS))
def spark_file(request, spark, tmp_path_factory):
    """``(path, outputTimestampType)``: one file written by Spark with a filter per column."""
    ts_type = request.param
    out = tmp_path_factory.mktemp("spark") / "t"
    df = spark.range(NUM_ROWS).selectExpr(
        *(
            f"CASE WHEN id % 13 = 5 THEN NULL ELSE {expr} END AS `{name}`"
            for name, (expr, _) in SPARK_COLUMNS.items()
        )
    )
    writer = (
        df.coalesce(1)
        .write.option("parquet.enable.dictionary", "false")
        .option("parquet.block.size", str(512 * 1024))  # a few row groups
    )
    for name in SPARK_COLUMNS:
        writer = writer.option(f"parquet.bloom.filter.enabled#{name}", "true")
        writer = writer.option(f"parquet.bloom.filter.expected.ndv#{name}", str(NDV))
        writer = writer.option(f"parquet.bloom.filter.fpp#{name}", str(FPP))
    key = "spark.sql.parquet.outputTimestampType"
    previous = spark.conf.get(key)
    spark.conf.set(key, ts_type)
    try:
        writer.parquet(str(out))
    finally:
        spark.conf.set(key, previous)
    (path,) = glob.glob(str(out / "part-*.parquet"))
    return path, ts_type


@pytest.mark.spark
@pytest.mark.parametrize("column", list(SPARK_COLUMNS))
def test_spark_filters_are_identical(spark_file, column):
    path, ts_type = spark_file
    expected = SPARK_COLUMNS[column][1] or SPARK_TIMESTAMP_SPECS[ts_type]
    num_row_groups = pq.ParquetFile(path).metadata.num_row_groups
    assert num_row_groups >= 2
    filters = filters_by_column(path)[column]
    assert [ff.row_group for ff in filters] == list(range(num_row_groups))
    for ff in filters:
        # parquet-java sizes from expected.ndv#col with the same formula, no folding.
        assert ff.header.num_bytes == num_bytes_for(NDV, FPP)
        if column == "boolean":
            # parquet-java never inserts booleans: its filter is all zeros, and one built
            # from the values is not, so readers must never trust it.
            assert not any(ff.bitset)
            spec = file_physical_spec(path, ff.column)
            assert spec == expected
            values = row_group_values(path, ff.row_group, column)
            assert built(ff.header.num_bytes, values, spec).popcount() > 0
            continue
        check_filter(path, ff, expected)


# ---------------------------------------------------------------------------- arrow-rs
#
# DataFusion and deltalake write through arrow-rs: filters after each row group
# (AfterRowGroup), sized for ``ndv`` (default: the row group size) and folded to the fpp
# (``fold_to_target_fpp``), booleans included (real 2-value filters, not parquet-java's
# zeros). Every leaf of a nested column (list element, struct field, map key and value)
# gets its own filter.


def arrow_rs_extra_columns(n: int) -> dict[str, pa.Array]:
    """Columns pyarrow cannot write filters for, added for the arrow-rs writers.

    ``boolean`` holds both values in row group 0 and only ``True`` in row group 1.
    """
    rng = np.random.default_rng(20_240_602)
    null = np.arange(n) % 13 == 5
    flags = (np.arange(n) % 3 == 0) | (np.arange(n) >= ROWS_PER_GROUP)
    wide = rng.integers(-(10**18), 10**18, n)
    lists = [
        None if m else [int(x) for x in rng.integers(-(2**31), 2**31, int(k))]
        for m, k in zip(null, rng.integers(0, 4, n), strict=True)
    ]
    structs = [
        None if m else {"x": None if i % 11 == 3 else f"s{i % 3_000}"} for i, m in enumerate(null)
    ]
    maps = [None if m else [(f"k{i % 50}", i * 7), (f"j{i}", None)] for i, m in enumerate(null)]
    return {
        "boolean": pa.array(flags, pa.bool_(), mask=null),
        "decimal256_40_5": pa.array(
            [
                None if m else exact_decimal(int(w) * 10**21 + 7, 5)
                for w, m in zip(wide, null, strict=True)
            ],
            pa.decimal256(40, 5),
        ),
        "list_int32": pa.array(lists, pa.list_(pa.int32())),
        "struct_string": pa.array(structs, pa.struct([("x", pa.string())])),
        "map_string_int64": pa.array(maps, pa.map_(pa.string(), pa.int64())),
    }


@pytest.fixture(scope="module")
def arrow_rs_source(pyarrow_source) -> pa.Table:
    table = pyarrow_source
    for name, column in arrow_rs_extra_columns(table.num_rows).items():
        table = table.append_column(name, column)
    return table


# Parquet leaf path -> the physical type arrow-rs writes. It keeps an Arrow unit Parquet
# has no logical type for: timestamp[s] and time32[s] are plain INT64 / INT32 seconds,
# date64 plain INT64 milliseconds, all without a logical type (pyarrow converts them).
ARROW_RS_COLUMNS: dict[str, PhysicalSpec] = {
    "int8": INT32,
    "int16": INT32,
    "int32": INT32,
    "int64": INT64,
    "uint8": INT32,
    "uint16": INT32,
    "uint32": INT32,
    "uint64": INT64,
    "float32": PhysicalSpec(P.FLOAT),
    "float64": PhysicalSpec(P.DOUBLE),
    "float16": flba(2),
    "date32": INT32,
    "date64": INT64,
    "timestamp_s": INT64,
    "timestamp_ms": timed(P.INT64, "ms"),
    "timestamp_us_utc": timed(P.INT64, "us"),
    "timestamp_ns": timed(P.INT64, "ns"),
    "time32_s": INT32,
    "time32_ms": timed(P.INT32, "ms"),
    "time64_us": timed(P.INT64, "us"),
    "time64_ns": timed(P.INT64, "ns"),
    "decimal_9_2": INT32,
    "decimal_18_2": INT64,
    "decimal_19_2": flba(9),
    "decimal_38_10": flba(16),
    "string": BYTE_ARRAY,
    "large_string": BYTE_ARRAY,
    "string_view": BYTE_ARRAY,
    "binary": BYTE_ARRAY,
    "large_binary": BYTE_ARRAY,
    "binary_view": BYTE_ARRAY,
    "fixed_size_binary": flba(7),
    "dictionary_string": BYTE_ARRAY,
    "all_null": INT64,
    "boolean": PhysicalSpec(P.BOOLEAN),
    "decimal256_40_5": flba(17),
    "list_int32.list.item": INT32,
    "struct_string.x": BYTE_ARRAY,
    "map_string_int64.entries.key": BYTE_ARRAY,
    "map_string_int64.entries.value": INT64,
}
# Columns whose Parquet values are the Arrow storage integers (no unit conversion).
ARROW_RS_RAW_UNITS = {"date64": pa.int64(), "timestamp_s": pa.int64(), "time32_s": pa.int32()}

# deltalake casts to Delta's types first: no unsigned integers, float16, times or
# decimal256 (refused); timestamps become microseconds, date64 date32 and
# fixed_size_binary binary.
DELTALAKE_REFUSED = {"uint8", "uint16", "uint32", "uint64", "float16", "decimal256_40_5"}
DELTALAKE_REFUSED |= {c for c in ARROW_RS_COLUMNS if c.startswith("time") and "stamp" not in c}
DELTALAKE_COLUMNS: dict[str, PhysicalSpec] = {
    **{c: s for c, s in ARROW_RS_COLUMNS.items() if c not in DELTALAKE_REFUSED},
    "date64": INT32,
    "timestamp_s": timed(P.INT64, "us"),
    "timestamp_ms": timed(P.INT64, "us"),
    "timestamp_ns": timed(P.INT64, "us"),
    "fixed_size_binary": BYTE_ARRAY,
}


def source_leaf(table: pa.Table, leaf: str, row_group: int) -> pa.Array:
    """One row group's values of a leaf column, from the table the writer was given."""
    top, *rest = leaf.split(".")
    chunk = table[top].slice(row_group * ROWS_PER_GROUP, ROWS_PER_GROUP).combine_chunks()
    return leaf_values(chunk, rest)


def check_after_each_row_group(path) -> None:
    """arrow-rs AfterRowGroup: a row group's filters lie between its pages and the next's."""
    meta = pq.ParquetFile(path).metadata
    spans = []
    for r in range(meta.num_row_groups):
        chunks = [meta.row_group(r).column(c) for c in range(meta.num_columns)]
        starts = [c.dictionary_page_offset or c.data_page_offset for c in chunks]
        ends = [s + c.total_compressed_size for s, c in zip(starts, chunks, strict=True)]
        spans.append((min(starts), max(ends)))
    for ff in read_bloom_filters(path):
        chunk = meta.row_group(ff.row_group).column(ff.column)
        begin, end = (
            chunk.bloom_filter_offset,
            chunk.bloom_filter_offset + chunk.bloom_filter_length,
        )
        assert begin >= spans[ff.row_group][1], f"{ff.name}: filter inside the row group"
        if ff.row_group + 1 < len(spans):
            assert end <= spans[ff.row_group + 1][0], f"{ff.name}: filter after the next group"


def check_boolean_filters(path) -> None:
    """arrow-rs inserts booleans: 32 B filters holding exactly the values present."""
    for ff in filters_by_column(path)["boolean"]:
        assert ff.header.num_bytes == 32
        f = Sbbf.from_bytes(ff.bitset)
        assert f.popcount() > 0
        values = set(row_group_values(path, ff.row_group, "boolean").drop_null().to_pylist())
        assert values == ({True, False} if ff.row_group == 0 else {True})
        assert list(f.check([True, False])) == [True, False in values]


# ---------------------------------------------------------------------------- DataFusion


@pytest.fixture(scope="module", params=["write_parquet", "sql_copy"])
def datafusion_file(request, arrow_rs_source, tmp_path_factory):
    """``(path, ndv)``: the table written by DataFusion, through the DataFrame API (ndv
    left to arrow-rs's default, the row group size) or SQL ``COPY`` (ndv given)."""
    datafusion = pytest.importorskip("datafusion")
    path = tmp_path_factory.mktemp("datafusion") / "t.parquet"
    ctx = datafusion.SessionContext()
    if request.param == "write_parquet":
        options = datafusion.ParquetWriterOptions(
            bloom_filter_on_write=True, bloom_filter_fpp=FPP, max_row_group_size=ROWS_PER_GROUP
        )
        ctx.from_arrow(arrow_rs_source).write_parquet_with_options(str(path), options)
        return path, ROWS_PER_GROUP
    ndv = 3 * NDV
    ctx.from_arrow(arrow_rs_source, name="t")
    ctx.sql(
        f"COPY t TO '{path}' STORED AS PARQUET OPTIONS ("
        f"'format.bloom_filter_on_write' 'true', 'format.bloom_filter_fpp' '{FPP}', "
        f"'format.bloom_filter_ndv' '{ndv}', 'format.max_row_group_size' '{ROWS_PER_GROUP}')"
    ).collect()
    return path, ndv


def test_datafusion_file_layout(datafusion_file, arrow_rs_source):
    path, _ = datafusion_file
    meta = pq.ParquetFile(path).metadata
    assert "datafusion" in meta.created_by
    assert [meta.row_group(r).num_rows for r in range(meta.num_row_groups)] == [ROWS_PER_GROUP] * 2
    assert pq.read_table(path, columns=["int64", "string"]).equals(
        arrow_rs_source.select(["int64", "string"])
    )
    assert sorted(filters_by_column(path)) == sorted(ARROW_RS_COLUMNS)
    check_after_each_row_group(path)
    check_boolean_filters(path)


@pytest.mark.parametrize("column", list(ARROW_RS_COLUMNS))
def test_datafusion_filters_are_identical(datafusion_file, arrow_rs_source, column):
    path, ndv = datafusion_file
    expected = ARROW_RS_COLUMNS[column]
    filters = filters_by_column(path)[column]
    assert [ff.row_group for ff in filters] == [0, 1]
    initial = num_bytes_for(ndv, FPP)
    for ff in filters:
        values = check_filter(path, ff, expected)
        folded = built(initial, values, expected).fold_to_fpp(FPP)
        assert folded.to_bytes() == ff.bitset, (
            f"{column}: folded {initial} B -> {folded.num_bytes} B, file {ff.header.num_bytes} B"
        )
        # The values the user wrote hash to the same filter, converted as arrow-rs does.
        original = source_leaf(arrow_rs_source, column, ff.row_group)
        if column in ARROW_RS_RAW_UNITS:
            original = original.cast(ARROW_RS_RAW_UNITS[column])
        assert built(ff.header.num_bytes, original, expected).to_bytes() == ff.bitset
        # bloomskip's default physical type is arrow-rs's for every other flat column.
        if "." not in column and column not in ARROW_RS_RAW_UNITS:
            assert parquet_spec(original.type) == expected
            assert built(ff.header.num_bytes, original, None).to_bytes() == ff.bitset


# ---------------------------------------------------------------------------- deltalake


def delta_parquet_files(table_dir) -> list[str]:
    from deltalake import DeltaTable

    return [u.removeprefix("file://") for u in DeltaTable(str(table_dir)).file_uris()]


@pytest.fixture(scope="module")
def deltalake_file(arrow_rs_source, tmp_path_factory):
    """The one parquet file of a Delta table written by deltalake with filters on."""
    deltalake = pytest.importorskip("deltalake")
    top = {c.split(".")[0] for c in DELTALAKE_COLUMNS}
    table = arrow_rs_source.select([c for c in arrow_rs_source.column_names if c in top])
    out = tmp_path_factory.mktemp("deltalake") / "table"
    bloom = deltalake.BloomFilterProperties(True, fpp=FPP, ndv=NDV)
    deltalake.write_deltalake(
        str(out),
        table,
        writer_properties=deltalake.WriterProperties(
            max_row_group_size=ROWS_PER_GROUP,
            default_column_properties=deltalake.ColumnProperties(bloom_filter_properties=bloom),
        ),
    )
    (path,) = delta_parquet_files(out)
    return path


def test_deltalake_file_layout(deltalake_file):
    meta = pq.ParquetFile(deltalake_file).metadata
    assert meta.created_by.startswith("parquet-rs")
    assert [meta.row_group(r).num_rows for r in range(meta.num_row_groups)] == [ROWS_PER_GROUP] * 2
    assert sorted(filters_by_column(deltalake_file)) == sorted(DELTALAKE_COLUMNS)
    check_after_each_row_group(deltalake_file)
    check_boolean_filters(deltalake_file)


@pytest.mark.parametrize("column", list(DELTALAKE_COLUMNS))
def test_deltalake_filters_are_identical(deltalake_file, column):
    expected = DELTALAKE_COLUMNS[column]
    filters = filters_by_column(deltalake_file)[column]
    assert [ff.row_group for ff in filters] == [0, 1]
    initial = num_bytes_for(NDV, FPP)
    for ff in filters:
        values = check_filter(deltalake_file, ff, expected)
        folded = built(initial, values, expected).fold_to_fpp(FPP)
        assert folded.to_bytes() == ff.bitset


# ---------------------------------------------------------------------------- bloomskip's reader


def check_own_reader(path) -> int:
    """bloomskip's reader loads every filter a peer wrote, bit for bit; nothing else.

    Compared with the independent parser of :mod:`tests.support.peers`: same chunks, status
    "ok", same offset, length, header length and bitset; chunks without a filter are
    "absent". Returns the number of filters.
    """
    theirs = {(ff.row_group, ff.column): ff for ff in read_bloom_filters(path)}
    meta = pq.ParquetFile(path).metadata
    ours = bloom.read_bloom_filters(path)
    assert len(ours) == meta.num_row_groups * meta.num_columns
    for lf in ours:
        ff = theirs.get((lf.row_group, lf.column))
        if ff is None:
            assert lf.status == "absent" and lf.filter is None, lf
            continue
        assert lf.status == "ok", f"{ff.name} row group {ff.row_group}: {lf.reason}"
        chunk = meta.row_group(lf.row_group).column(lf.column)
        assert (lf.offset, lf.length) == (chunk.bloom_filter_offset, chunk.bloom_filter_length)
        assert lf.header_length == ff.header.header_len
        assert lf.filter.num_bytes == ff.header.num_bytes
        assert lf.filter.to_bytes() == ff.bitset
    return len(theirs)


def test_own_reader_loads_pyarrow_filters(pyarrow_file):
    assert check_own_reader(pyarrow_file[0]) == 2 * len(PYARROW_COLUMNS)


def test_own_reader_loads_duckdb_filters(duckdb_file):
    assert check_own_reader(duckdb_file) >= 2 * len(DUCKDB_COLUMNS)


@pytest.mark.spark
def test_own_reader_loads_spark_filters(spark_file):
    path, _ = spark_file
    assert check_own_reader(path) >= 2 * len(SPARK_COLUMNS)


def test_own_reader_loads_datafusion_filters(datafusion_file):
    assert check_own_reader(datafusion_file[0]) == 2 * len(ARROW_RS_COLUMNS)


def test_own_reader_loads_deltalake_filters(deltalake_file):
    assert check_own_reader(deltalake_file) == 2 * len(DELTALAKE_COLUMNS)


# ---------------------------------------------------------------------------- hypothesis
#
# Small tables of hypothesis-chosen values (signed zeros, NaN, infinities, empty and
# non-ASCII strings, extreme integers and decimals, nulls, all-null columns), written by
# each peer with small row groups. Every filter in the file must be identical to a
# rebuild from its row group's values, be loaded by bloomskip bit for bit, and report
# every value of its row group as present.

SPECIAL_FLOATS = st.sampled_from([0.0, -0.0, math.nan, -math.nan, math.inf, -math.inf])
CANONICAL_SPECIAL_FLOATS = st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf])


@st.composite
def small_tables(
    draw,
    *,
    unsigned: bool = True,
    boolean: bool = True,
    microseconds: int = 2**62,
    nan_payloads: bool = True,
) -> pa.Table:
    """A table of 1-40 rows of every common type; timestamps within +-``microseconds``;
    NaNs of any sign and payload, or only the canonical one."""
    n = draw(st.integers(1, 40))

    def column(elements, type_) -> pa.Array:
        values = draw(st.lists(st.none() | elements, min_size=n, max_size=n))
        return pa.array(values, type_)

    def decimals(precision: int, scale: int):
        bound = 10**precision - 1
        return st.integers(-bound, bound).map(lambda u: exact_decimal(u, scale))

    instants = st.integers(-microseconds, microseconds)
    specials = SPECIAL_FLOATS if nan_payloads else CANONICAL_SPECIAL_FLOATS
    columns = {
        "i8": column(st.integers(-(2**7), 2**7 - 1), pa.int8()),
        "i16": column(st.integers(-(2**15), 2**15 - 1), pa.int16()),
        "i32": column(st.integers(-(2**31), 2**31 - 1), pa.int32()),
        "i64": column(st.integers(-(2**63), 2**63 - 1), pa.int64()),
        "f32": column(st.floats(width=32, allow_nan=nan_payloads) | specials, pa.float32()),
        "f64": column(st.floats(allow_nan=nan_payloads) | specials, pa.float64()),
        "s": column(st.text(max_size=12), pa.string()),
        "bin": column(st.binary(max_size=12), pa.binary()),
        "d9": column(decimals(9, 2), pa.decimal128(9, 2)),
        "d18": column(decimals(18, 4), pa.decimal128(18, 4)),
        "d38": column(decimals(38, 10), pa.decimal128(38, 10)),
        "date": column(st.integers(-(10**6), 10**6), pa.int32()).cast(pa.date32()),
        "ts": column(instants, pa.int64()).cast(pa.timestamp("us", "UTC")),
        "ts_local": column(instants, pa.int64()).cast(pa.timestamp("us")),
    }
    if unsigned:
        columns["u32"] = column(st.integers(0, 2**32 - 1), pa.uint32())
        columns["u64"] = column(st.integers(0, 2**64 - 1), pa.uint64())
    if boolean:
        columns["b"] = column(st.booleans(), pa.bool_())
    return pa.table(columns)


ROW_GROUP_SIZES = st.integers(1, 16)
FPPS = st.sampled_from([0.01, 0.05, 0.3])
HYPOTHESIS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_every_filter(path, *, initial: int | None, fpp: float) -> int:
    """Every filter of ``path`` against a rebuild, bloomskip's reader and its values.

    ``initial``: the size the writer built at before folding to ``fpp`` (None for
    writers that size exactly). Returns the number of filters checked.
    """
    loaded = {(lf.row_group, lf.column): lf for lf in bloom.read_bloom_filters(path)}
    filters = read_bloom_filters(path)
    for ff in filters:
        spec = file_physical_spec(path, ff.column)
        values = row_group_values(path, ff.row_group, ff.name)
        label = f"{ff.name} (row group {ff.row_group}, {len(values)} rows)"
        rebuilt = built(ff.header.num_bytes, values, spec)
        assert rebuilt.to_bytes() == ff.bitset, f"{label}: " + mismatch_report(
            rebuilt, ff.bitset, values, spec
        )
        if initial is not None:
            folded = built(initial, values, spec).fold_to_fpp(fpp)
            assert folded.to_bytes() == ff.bitset, f"{label}: fold from {initial} B differs"
        lf = loaded[(ff.row_group, ff.column)]
        assert lf.status == "ok" and lf.filter.to_bytes() == ff.bitset, f"{label}: {lf.reason}"
        found = lf.filter.check(values, physical=spec)
        valid = ~values.is_null().to_numpy(zero_copy_only=False)
        assert found[valid].all(), f"{label}: false negative"
    return len(filters)


@HYPOTHESIS
@given(table=small_tables(), row_group_size=ROW_GROUP_SIZES, fpp=FPPS)
def test_hypothesis_datafusion(table, row_group_size, fpp):
    datafusion = pytest.importorskip("datafusion")
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/t.parquet"
        options = datafusion.ParquetWriterOptions(
            bloom_filter_on_write=True, bloom_filter_fpp=fpp, max_row_group_size=row_group_size
        )
        datafusion.SessionContext().from_arrow(table).write_parquet_with_options(path, options)
        check_after_each_row_group(path)
        count = check_every_filter(path, initial=num_bytes_for(row_group_size, fpp), fpp=fpp)
        meta = pq.ParquetFile(path).metadata
        assert count == meta.num_row_groups * meta.num_columns  # booleans included


@HYPOTHESIS
@given(table=small_tables(unsigned=False), row_group_size=ROW_GROUP_SIZES, fpp=FPPS)
def test_hypothesis_deltalake(table, row_group_size, fpp):
    deltalake = pytest.importorskip("deltalake")
    with tempfile.TemporaryDirectory() as tmp:
        bloom_properties = deltalake.BloomFilterProperties(True, fpp=fpp)  # ndv: the default
        deltalake.write_deltalake(
            tmp,
            table,
            writer_properties=deltalake.WriterProperties(
                max_row_group_size=row_group_size,
                default_column_properties=deltalake.ColumnProperties(
                    bloom_filter_properties=bloom_properties
                ),
            ),
        )
        for path in delta_parquet_files(tmp):
            check_after_each_row_group(path)
            count = check_every_filter(path, initial=num_bytes_for(row_group_size, fpp), fpp=fpp)
            meta = pq.ParquetFile(path).metadata
            assert count == meta.num_row_groups * meta.num_columns


@HYPOTHESIS
@given(table=small_tables(boolean=False), row_group_size=ROW_GROUP_SIZES, fpp=FPPS)
def test_hypothesis_pyarrow(table, row_group_size, fpp):
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/t.parquet"
        options = {c: {"ndv": row_group_size, "fpp": fpp} for c in table.column_names}
        pq.write_table(table, path, row_group_size=row_group_size, bloom_filter_options=options)
        count = check_every_filter(path, initial=num_bytes_for(row_group_size, fpp), fpp=fpp)
        meta = pq.ParquetFile(path).metadata
        assert count == meta.num_row_groups * meta.num_columns


@HYPOTHESIS
@given(table=small_tables(), fpp=FPPS)
def test_hypothesis_duckdb(table, fpp):
    duckdb = pytest.importorskip("duckdb")
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/t.parquet"
        con = duckdb.connect()
        try:
            con.register("source", table)
            con.execute(
                f"COPY source TO '{path}' (FORMAT parquet, BLOOM_FILTER_FALSE_POSITIVE_RATIO {fpp})"
            )
        finally:
            con.close()
        check_every_filter(path, initial=None, fpp=fpp)
        # DuckDB sizes from the exact dictionary size, with the same formula.
        for ff in read_bloom_filters(path):
            values = row_group_values(path, ff.row_group, ff.name)
            assert ff.header.num_bytes == num_bytes_for(max(distinct_count(values), 1), fpp)


@pytest.mark.spark
@HYPOTHESIS
@given(
    table=small_tables(unsigned=False, boolean=False, microseconds=2**52, nan_payloads=False),
    fpp=FPPS,
    timestamps=st.sampled_from(list(SPARK_TIMESTAMP_SPECS)),
)
def test_hypothesis_spark(spark, table, fpp, timestamps):
    """parquet-java: exact sizes from expected.ndv#col, no folding, no dictionary.

    Spark has no unsigned types; its BOOLEAN filters are all zeros (tested above);
    INT96 timestamps are read back through pyarrow's nanoseconds, so they stay within
    +-2^52 us; and only canonical NaNs, see the test below.
    """
    ndv = 16
    key = "spark.sql.parquet.outputTimestampType"
    previous = spark.conf.get(key)
    spark.conf.set(key, timestamps)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            writer = (
                spark.createDataFrame(table)
                .coalesce(1)
                .write.option("parquet.enable.dictionary", "false")
            )
            for name in table.column_names:
                writer = writer.option(f"parquet.bloom.filter.enabled#{name}", "true")
                writer = writer.option(f"parquet.bloom.filter.expected.ndv#{name}", str(ndv))
                writer = writer.option(f"parquet.bloom.filter.fpp#{name}", str(fpp))
            writer.parquet(f"{tmp}/out")
            (path,) = glob.glob(f"{tmp}/out/part-*.parquet")
            count = check_every_filter(path, initial=None, fpp=fpp)
            assert count == pq.ParquetFile(path).metadata.num_columns
            assert all(
                ff.header.num_bytes == num_bytes_for(ndv, fpp) for ff in read_bloom_filters(path)
            )
    finally:
        spark.conf.set(key, previous)


@pytest.mark.spark
def test_spark_filters_hash_nan_payloads_its_pages_do_not_keep(spark, tmp_path):
    """parquet-java writes NaN to the page as the canonical NaN but inserts the NaN's
    own bits in the filter: a NaN with a sign or payload is then missing from the
    filter although the page holds a NaN. Harmless to a reader that never prunes on
    NaN (bloomskip, DuckDB); fatal to one that would.
    """
    f64 = np.array([0xFFF8_0000_0000_0000, 0x7FF8_0000_0000_0123], np.uint64).view(np.float64)
    f32 = np.array([0xFFC0_0000, 0x7FC0_0123], np.uint32).view(np.float32)
    table = pa.table({"f64": pa.array(f64), "f32": pa.array(f32)})
    writer = spark.createDataFrame(table).coalesce(1).write
    for name in table.column_names:
        writer = writer.option(f"parquet.bloom.filter.enabled#{name}", "true")
        writer = writer.option(f"parquet.bloom.filter.expected.ndv#{name}", "4")
    writer.option("parquet.enable.dictionary", "false").parquet(str(tmp_path / "out"))
    (path,) = glob.glob(str(tmp_path / "out" / "part-*.parquet"))
    for ff in read_bloom_filters(path):
        stored = row_group_values(path, ff.row_group, ff.name)
        bits = stored.to_numpy().view(np.uint64 if ff.name == "f64" else np.uint32)
        assert set(bits) == {0x7FF8_0000_0000_0000 if ff.name == "f64" else 0x7FC0_0000}
        file_filter = Sbbf.from_bytes(ff.bitset)
        assert not file_filter.check(stored).any()  # the stored NaN is "absent"
        assert file_filter.check(table[ff.name]).all()  # the values Spark was given
