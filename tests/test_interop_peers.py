"""bloomskip's filters are byte-identical to the ones real Parquet writers put in files.

Each peer writes a small file with bloom filters at test time: pyarrow (Arrow C++),
DuckDB and Spark (parquet-java). For every (row group, column) filter in the file, the
test reads the bitset (:mod:`tests.peers`), takes the row group's values with pyarrow and the
column's physical type from the file's schema, rebuilds the filter with bloomskip and
compares bytes. A mismatch reports whether the peer hashed other bytes (values of the
row group absent from its filter) or only set other bits.

Peer facts the tests rely on (``../shared/reference/parquet-sbbf.md`` §2-4):

* pyarrow sizes from ``ndv``/``fpp`` and then folds to the fpp, like arrow-rs; it
  writes decimals as FIXED_LEN_BYTE_ARRAY unless ``store_decimal_as_integer=True``.
* DuckDB writes filters only for dictionary-encoded chunks, sized from the exact
  dictionary size (so no folding); never for BOOLEAN or FLBA decimals.
* parquet-java sizes from ``expected.ndv#col`` and never folds; it skips chunks that
  are only dictionary-encoded, and writes an all-zero filter for BOOLEAN columns.
"""

from __future__ import annotations

import glob
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from bloomskip import PhysicalSpec, PhysicalType, Sbbf, parquet_spec
from bloomskip.sbbf.sizing import num_bytes_for
from tests.peers import (
    FileFilter,
    file_physical_spec,
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
        values = [Decimal(int(u)).scaleb(-scale) for u in unscaled]
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
