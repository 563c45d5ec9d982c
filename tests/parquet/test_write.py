"""Writing bloom filters: add_bloom_filters, write_table and ``bloomskip add-bloom``.

What is proved here:

* the rewritten file keeps every byte before the old footer and reads back as the same
  table; each new filter is found by our reader *and* by an independent header parser
  (``tests/support/peers.py``) and is bit-identical to a rebuild from the file's own values,
  hashed as the file's schema says (for every type pyarrow, DuckDB and Spark write);
* hypothesis-chosen values are never absent from the filters (no false negatives);
* failures leave the source byte-identical and no temporary file behind; encrypted and
  damaged files raise typed errors and are not touched;
* DuckDB, DataFusion and Spark use the filters: they skip row groups for absent values
  that min/max statistics cannot exclude, and still return the right rows.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import glob
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bloomskip.parquet.write as write
from bloomskip import Sbbf
from bloomskip.cli import main
from bloomskip.errors import (
    CorruptFileError,
    InvalidFilterSizeError,
    InvalidParameterError,
    MissingKeyError,
    UnsupportedTypeError,
)
from bloomskip.hashing import hash_int96, hash_values
from bloomskip.parquet import add_bloom_filters, thrift, write_table
from bloomskip.parquet.bloom import encode_header, parse_header, read_bloom_filters
from bloomskip.parquet.footer import read_footer
from bloomskip.sbbf.sizing import num_bytes_for
from tests.support import peers

FPP = 0.01


# ---------------------------------------------------------------------------- helpers


def flat(values: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A leaf's values below lists, maps and single-field structs (independent of write.py)."""
    arr = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    while True:
        t = arr.type
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
            arr = arr.flatten()
        elif pa.types.is_struct(t):
            assert t.num_fields == 1, "one leaf is read at a time"
            arr = arr.flatten()[0]
        else:
            return arr


def file_values(path, row_group: int, column: int) -> pa.Array:
    """What the file stores in one column chunk, read by pyarrow (durations as int64)."""
    pf = pq.ParquetFile(path)
    name = pf.metadata.schema.column(column).path
    values = flat(pf.read_row_group(row_group, columns=[name]).column(0))
    if pa.types.is_duration(values.type):
        values = values.cast(pa.int64())
    return values


def rebuild(path, row_group: int, column: int, fpp: float = FPP) -> Sbbf:
    """The filter a writer would build for a chunk, from the file's values and schema."""
    values = file_values(path, row_group, column)
    spec = peers.file_physical_spec(path, column)
    ndv = np.unique(hash_values(values, physical=spec)).shape[0]
    f = Sbbf(num_bytes_for(int(ndv), fpp))
    f.insert(values, physical=spec)  # the fused hash+insert path, not insert_hashes
    return f


def prefix(path, length: int) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(length)


def assert_filters_exact(path, result, fpp: float = FPP) -> None:
    """Every added filter: loaded ok by us and by the peer parser, equal to a rebuild."""
    ours = {(f.row_group, f.column): f for f in read_bloom_filters(path)}
    theirs = {(f.row_group, f.column): f for f in peers.read_bloom_filters(path)}
    meta = pq.ParquetFile(path).metadata
    names = {meta.schema.column(c).path: c for c in range(meta.num_columns)}
    assert result.added
    for added in result.added:
        c = names[added.column]
        key = (added.row_group, c)
        loaded = ours[key]
        assert loaded.status == "ok", loaded.reason
        assert (loaded.offset, loaded.length) == (added.offset, added.length)
        chunk = meta.row_group(added.row_group).column(c)
        assert (chunk.bloom_filter_offset, chunk.bloom_filter_length) == (
            added.offset,
            added.length,
        )
        assert theirs[key].raw_header == encode_header(added.num_bytes)
        expected = rebuild(path, added.row_group, c, fpp)
        assert loaded.filter.to_bytes() == theirs[key].bitset == expected.to_bytes(), (
            f"row group {added.row_group} column {added.column}"
        )


def assert_same_table(a: pa.Table, b: pa.Table) -> None:
    """Tables with the same schema and values (NaN equal to NaN, unlike Table.equals)."""
    assert a.schema == b.schema
    for name in a.column_names:
        x, y = a[name].combine_chunks(), b[name].combine_chunks()
        if pa.types.is_floating(x.type):
            assert x.is_null().equals(y.is_null()), name
            fx = x.to_numpy(zero_copy_only=False)
            fy = y.to_numpy(zero_copy_only=False)
            assert np.array_equal(fx.view(f"u{fx.itemsize}"), fy.view(f"u{fy.itemsize}")), name
        else:
            assert x.equals(y), name


def footer_without_bloom_fields(path) -> bytes:
    """The footer's FileMetaData re-encoded with ColumnMetaData fields 14 and 15 removed."""
    footer = read_footer(path)
    for rg in footer.row_groups:
        for chunk in rg.columns:
            chunk.meta.remove(14)
            chunk.meta.remove(15)
    return thrift.encode_struct(footer.metadata)


def listing(directory) -> list[str]:
    return sorted(os.listdir(directory))


# ---------------------------------------------------------------------------- header


@pytest.mark.parametrize(
    ("num_bytes", "length"),
    [(32, 15), (64, 16), (4096, 16), (8192, 17), (1 << 19, 17), (1 << 20, 18), (1 << 27, 19)],
)
def test_encode_header_round_trips(num_bytes, length):
    raw = encode_header(num_bytes)
    assert len(raw) == length
    assert parse_header(raw) == (num_bytes, length)
    assert raw[:1] == b"\x15" and raw[-13:] == bytes.fromhex("1c1c00001c1c00001c1c000000")


def test_encode_header_equals_pyarrows(tmp_path):
    path = tmp_path / "pa.parquet"
    t = pa.table({"a": pa.array(range(50_000)), "b": pa.array(range(50_000)) * 2})
    opts = {"a": {"ndv": 20, "fpp": 0.01}, "b": {"ndv": 50_000, "fpp": 0.01}}
    pq.write_table(t, path, bloom_filter_options=opts)
    filters = peers.read_bloom_filters(path)
    assert len({ff.header.num_bytes for ff in filters}) == 2
    for ff in filters:
        assert ff.raw_header == encode_header(ff.header.num_bytes)


@pytest.mark.parametrize("num_bytes", [0, 16, 48, 1 << 28])
def test_encode_header_refuses_illegal_sizes(num_bytes):
    with pytest.raises(InvalidFilterSizeError):
        encode_header(num_bytes)


# ---------------------------------------------------------------------------- every type

N = 3000
ROWS_PER_GROUP = 700  # 5 row groups, the last one short


def _nullable(values, type_) -> pa.Array:
    mask = np.arange(len(values)) % 11 == 3
    return pa.array(values, type_, mask=mask)


def _decimals(unscaled, precision: int, scale: int) -> pa.Array:
    values = [decimal.Decimal(int(u)).scaleb(-scale) for u in unscaled]
    t = pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    return _nullable(values, t)


def _floats(dtype) -> np.ndarray:
    x = (np.arange(N) / 7).astype(dtype)
    x[:5] = [-0.0, 0.0, np.nan, np.inf, -np.inf]
    return x


def every_type_table() -> pa.Table:
    i = np.arange(N, dtype=np.int64)
    rng = np.random.default_rng(7)
    texts = [f"user_{k:06d}é" for k in rng.permutation(N)]
    return pa.table(
        {
            "i8": _nullable((i % 256 - 128).astype(np.int8), pa.int8()),
            "i16": _nullable((i * 7 % 65536 - 32768).astype(np.int16), pa.int16()),
            "i32": _nullable((i * 1_431_655 % 2**32 - 2**31).astype(np.int32), pa.int32()),
            "i64": _nullable(i * 3_000_000_000_017 - 4 * 10**15, pa.int64()),
            "u8": _nullable((i % 256).astype(np.uint8), pa.uint8()),
            "u16": _nullable((i * 13 % 65536).astype(np.uint16), pa.uint16()),
            "u32": _nullable((i * 1_431_655 % 2**32).astype(np.uint32), pa.uint32()),
            "u64": _nullable(i.astype(np.uint64) * np.uint64(6_148_914_691_236_517), pa.uint64()),
            "f32": _nullable(_floats(np.float32), pa.float32()),
            "f64": _nullable(_floats(np.float64), pa.float64()),
            "date32": _nullable((i * 3 - 4000).astype(np.int32), pa.date32()),
            "date64": _nullable((i * 3 - 4000) * 86_400_000, pa.date64()),
            "time32_s": _nullable((i * 17 % 86400).astype(np.int32), pa.time32("s")),
            "time32_ms": _nullable((i * 17_001 % 86_400_000).astype(np.int32), pa.time32("ms")),
            "time64_us": _nullable(i * 17_000_001 % 86_400_000_000, pa.time64("us")),
            "time64_ns": _nullable(i * 17_000_000_001 % 86_400_000_000_000, pa.time64("ns")),
            "ts_s": _nullable(i * 1_000_003 - 10**9, pa.timestamp("s")),
            "ts_ms": _nullable(i * 1_000_000_007 - 10**12, pa.timestamp("ms")),
            "ts_us": _nullable(i * 37_000_123 - 10**14, pa.timestamp("us")),
            "ts_ns": _nullable(i * 37_000_123_457 - 10**17, pa.timestamp("ns")),
            "ts_us_utc": _nullable(i * 37_000_123 + 10**15, pa.timestamp("us", tz="UTC")),
            "ts_ns_paris": _nullable(i * 999_999_937, pa.timestamp("ns", tz="Europe/Paris")),
            "dec9": _decimals(i * 12_345 - 10**7, 9, 2),
            "dec18": _decimals(i * 3_000_000_000_017 - 4 * 10**15, 18, 4),
            "dec38": _decimals([int(k) * 10**25 - 10**28 for k in i], 38, 10),
            "dec60": _decimals([int(k) * 10**45 - 10**48 for k in i], 60, 5),
            "str": _nullable(texts, pa.string()),
            "large_str": _nullable(texts, pa.large_string()),
            "bin": _nullable([bytes([k % 256, 0xFF, k // 256]) for k in i], pa.binary()),
            "fsb": _nullable([int(k).to_bytes(5, "big") for k in i], pa.binary(5)),
            "uuid": pa.array([int(k * 7919).to_bytes(16, "little") for k in i], pa.uuid()),
            "dict": _nullable([f"v{k % 97}" for k in i], pa.string()).dictionary_encode(),
            "dur": _nullable(i * 1_000_003, pa.duration("us")),
            "all_null": pa.nulls(N, pa.string()),
            "flag": _nullable(i % 3 == 0, pa.bool_()),
            "half": _nullable(_floats(np.float16), pa.float16()),
            "tags": pa.array(
                [[int(k), None, int(k) * 2] if k % 5 else None for k in i], pa.list_(pa.int64())
            ),
            "point": pa.array([{"x": int(k), "name": f"p{k}"} if k % 7 else None for k in i]),
            "attrs": pa.array(
                [[(f"k{k % 13}", int(k))] for k in i], pa.map_(pa.string(), pa.int32())
            ),
        }
    )


#: Columns that get no filter when none are named, and why.
NO_FILTER = {"flag": "BOOLEAN", "half": "FLOAT16"}


@pytest.fixture(scope="module")
def every_type(tmp_path_factory):
    return every_type_table()


@pytest.fixture(scope="module", params=[False, True], ids=["decimals_flba", "decimals_int"])
def retrofitted(request, every_type, tmp_path_factory):
    """(source, result of add_bloom_filters(source, dst), decimals stored as integers)."""
    d = tmp_path_factory.mktemp("every")
    src = d / "src.parquet"
    pq.write_table(
        every_type, src, row_group_size=ROWS_PER_GROUP, store_decimal_as_integer=request.param
    )
    return src, add_bloom_filters(src, d / "dst.parquet"), request.param


def test_add_keeps_data_and_bytes(retrofitted, every_type):
    src, result, _ = retrofitted
    dst = result.path
    assert_same_table(pq.read_table(dst), pq.read_table(src))
    assert pq.read_table(dst).num_rows == every_type.num_rows
    footer = read_footer(src)
    assert prefix(dst, footer.footer_offset) == prefix(src, footer.footer_offset)
    # The new footer is the old one, byte for byte, but for the filter locations.
    assert (
        footer_without_bloom_fields(dst)
        == prefix(src, os.path.getsize(src))[-8 - footer.footer_length : -8]
    )
    assert result.rewritten and result.source == str(src)
    assert result.bytes_added == os.path.getsize(dst) - os.path.getsize(src)
    assert result.bytes_added > result.filter_bytes > 0
    assert min(f.offset for f in result.added) == footer.footer_offset  # filters follow data


def test_add_covers_every_type(retrofitted, every_type):
    src, result, _ = retrofitted
    skipped = {s.column: s.reason for s in result.skipped}
    assert set(skipped) == set(NO_FILTER)
    for column, word in NO_FILTER.items():
        assert word in skipped[column] and result.skipped[0].row_group is None
    meta = pq.ParquetFile(src).metadata
    leaves = [meta.schema.column(c).path for c in range(meta.num_columns)]
    expected = [c for c in leaves if c not in NO_FILTER]
    assert list(result.filters_added) == expected
    assert set(result.filters_added.values()) == {meta.num_row_groups}
    assert all(f.num_bytes == 32 and f.ndv == 0 for f in result.added if f.column == "all_null")


def test_add_filters_equal_a_rebuild(retrofitted):
    _, result, _ = retrofitted
    assert_filters_exact(result.path, result)


def test_decimal_storage_follows_the_file(retrofitted):
    src, _, as_int = retrofitted
    meta = pq.ParquetFile(src).metadata
    schema = {meta.schema.column(c).path: meta.schema.column(c) for c in range(meta.num_columns)}
    assert schema["dec9"].physical_type == ("INT32" if as_int else "FIXED_LEN_BYTE_ARRAY")
    assert schema["dec18"].physical_type == ("INT64" if as_int else "FIXED_LEN_BYTE_ARRAY")
    assert schema["dec38"].physical_type == "FIXED_LEN_BYTE_ARRAY"


def test_write_table(tmp_path, every_type):
    path = tmp_path / "w.parquet"
    options = {"row_group_size": ROWS_PER_GROUP, "store_decimal_as_integer": True}
    result = write_table(every_type, path, **options)
    assert listing(tmp_path) == ["w.parquet"]
    pq.write_table(every_type, tmp_path / "plain.parquet", **options)
    assert_same_table(pq.read_table(path), pq.read_table(tmp_path / "plain.parquet"))
    assert_filters_exact(path, result)
    meta = pq.ParquetFile(path).metadata
    data_end = max(
        (ch.dictionary_page_offset or ch.data_page_offset) + ch.total_compressed_size
        for r in range(meta.num_row_groups)
        for ch in (meta.row_group(r).column(c) for c in range(meta.num_columns))
    )
    assert min(f.offset for f in result.added) >= data_end  # after the last row group
    assert result.row_groups == meta.num_row_groups == 5


def test_write_table_some_columns_and_fpp(tmp_path, every_type):
    path = tmp_path / "w.parquet"
    result = write_table(every_type, path, ["str", "i64"], fpp=0.001, row_group_size=1000)
    assert result.filters_added == {"i64": 3, "str": 3}
    assert_filters_exact(path, result, fpp=0.001)


def test_write_table_refuses_pyarrow_bloom_options(tmp_path):
    with pytest.raises(InvalidParameterError, match="bloom_filter_columns"):
        write_table(pa.table({"a": [1]}), tmp_path / "x.parquet", bloom_filter_options={"a": True})
    assert listing(tmp_path) == []


def test_empty_row_groups_get_the_smallest_filter(tmp_path):
    t = pa.table({"a": pa.array([5, 6, 7], pa.int64()), "s": pa.array(["x", None, "z"])})
    src = tmp_path / "e.parquet"
    with pq.ParquetWriter(src, t.schema) as w:
        w.write_table(t.slice(0, 0))
        w.write_table(t)
        w.write_table(t.slice(0, 0))
    result = add_bloom_filters(src)
    assert pq.ParquetFile(src).metadata.row_group(0).num_rows == 0
    assert [(f.row_group, f.ndv, f.num_bytes) for f in result.added if f.column == "a"] == [
        (0, 0, 32),
        (1, 3, 32),
        (2, 0, 32),
    ]
    filters = read_bloom_filters(src)
    assert all(f.status == "ok" for f in filters)
    assert not any(filters[0].filter.to_bytes())
    assert pq.read_table(src).equals(t)


def test_many_row_groups(tmp_path):
    t = pa.table({"k": pa.array(np.arange(20_000) % 1500, pa.int64())})
    src = tmp_path / "m.parquet"
    pq.write_table(t, src, row_group_size=100)
    result = add_bloom_filters(src, progress=True)
    assert len(result.added) == 200
    assert_filters_exact(src, result)


def test_adding_filters_without_progress_bar_never_waits_for_tqdm(tmp_path):
    """With progress off, adding filters never touches tqdm (issue 18): a disabled tqdm bar
    still takes tqdm's write lock, shared with every process forked after its first use,
    which a process killed while holding it keeps held for ever. Another thread holds it."""
    import threading

    from tqdm import tqdm

    src = tmp_path / "p.parquet"
    pq.write_table(pa.table({"k": pa.array(np.arange(3000) % 700, pa.int64())}), src)
    lock, results = tqdm.get_lock(), []
    worker = threading.Thread(
        target=lambda: results.append(add_bloom_filters(src, progress=False)), daemon=True
    )
    lock.acquire()
    try:
        worker.start()
        worker.join(120)
        assert not worker.is_alive(), "adding filters without progress waited for tqdm's lock"
    finally:
        lock.release()
    worker.join(120)
    assert_filters_exact(src, results[0])


def test_int96_timestamps_outside_the_nanosecond_range(tmp_path):
    """pyarrow reads INT96 as wrapped nanoseconds outside 1677..2262: hashes stay exact."""
    stamps = [
        dt.datetime(1500, 3, 1, 12, 0, 0, 1),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999_999),
        dt.datetime(3000, 1, 1, 0, 0, 0, 1),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999_999),
    ]
    src = tmp_path / "i96.parquet"
    t = pa.table({"ts": pa.array([*stamps, None], pa.timestamp("us"))})
    pq.write_table(t, src, use_deprecated_int96_timestamps=True)
    ns = pa.table({"ts": pa.array([1_577_836_800_123_456_789, -1], pa.timestamp("ns"))})
    src_ns = tmp_path / "i96ns.parquet"
    pq.write_table(ns, src_ns, use_deprecated_int96_timestamps=True)
    assert pq.ParquetFile(src).schema.column(0).physical_type == "INT96"

    add_bloom_filters(src)
    (loaded,) = read_bloom_filters(src)
    epoch = dt.datetime(1970, 1, 1)
    days = np.array([(s.date() - epoch.date()).days for s in stamps])
    nanos = np.array(
        [
            (s - dt.datetime.combine(s.date(), dt.time())) // dt.timedelta(microseconds=1) * 1000
            for s in stamps
        ]
    )
    assert loaded.filter.check_hashes(hash_int96(nanos, days + 2_440_588)).all()

    add_bloom_filters(src_ns)  # sub-microsecond digits, on both sides of 1970
    (loaded,) = read_bloom_filters(src_ns)
    expected = hash_int96(
        np.array([123_456_789 + 0, 86_400 * 10**9 - 1]), np.array([18262, -1]) + 2_440_588
    )
    assert loaded.filter.check_hashes(expected).all()
    assert loaded.filter.to_bytes() == rebuild(src_ns, 0, 0).to_bytes()


def test_write_table_with_several_int96_columns(tmp_path):
    """INT96 needs a second pyarrow view of the file, opened before the footer is replaced."""
    stamps = [dt.datetime(2020, 1, 1, 0, 0, 0, 5), None, dt.datetime(3000, 1, 1)]
    t = pa.table(
        {
            "a": [1, 2, 3],
            "t1": pa.array(stamps, pa.timestamp("us")),
            "t2": pa.array(stamps[::-1], pa.timestamp("us")),
        }
    )
    path = tmp_path / "i96.parquet"
    result = write_table(t, path, use_deprecated_int96_timestamps=True)
    assert result.filters_added == {"a": 1, "t1": 1, "t2": 1}
    days = np.array([18262, 376200])
    expected = hash_int96(np.array([5000, 0]), days + 2_440_588)
    for f in read_bloom_filters(path, columns=["t1", "t2"]):
        assert f.filter.check_hashes(expected).all()


def test_copy_without_copy_file_range(small_file, monkeypatch):
    def unsupported(*args):
        raise OSError(38, "copy_file_range not supported")

    monkeypatch.setattr(write.os, "copy_file_range", unsupported)
    footer = read_footer(small_file)
    before = prefix(small_file, footer.footer_offset)
    add_bloom_filters(small_file, small_file.parent / "out.parquet")
    assert prefix(small_file.parent / "out.parquet", footer.footer_offset) == before


# ---------------------------------------------------------------------------- no false negatives

_rows = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
        st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
        st.one_of(st.none(), st.text(max_size=20)),
        st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1)),
    ),
    max_size=120,
)


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(rows=_rows, group=st.integers(1, 40), dictionary=st.booleans())
def test_chosen_values_are_never_absent(rows, group, dictionary):
    cols = list(zip(*rows, strict=True)) if rows else [[], [], [], []]
    t = pa.table(
        {
            "i64": pa.array(cols[0], pa.int64()),
            "f64": pa.array(cols[1], pa.float64()),
            "s": pa.array(cols[2], pa.string()),
            "i16": pa.array(
                [None if v is None else v % 65536 - 32768 for v in cols[3]], pa.int16()
            ),
            "d": pa.array(cols[3], pa.int32()).cast(pa.decimal128(12, 2)),
        }
    )
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "h.parquet")
        pq.write_table(t, src, row_group_size=group, use_dictionary=dictionary)
        add_bloom_filters(src)
        found = {(f.row_group, f.column): f for f in peers.read_bloom_filters(src)}
        meta = pq.ParquetFile(src).metadata
        assert len(found) == meta.num_row_groups * meta.num_columns
        for r in range(meta.num_row_groups):
            start = r * group
            for c, name in enumerate(t.column_names):
                values = t[name].slice(start, meta.row_group(r).num_rows)
                f = Sbbf.from_bytes(found[(r, c)].bitset)
                spec = peers.file_physical_spec(src, c)
                hits = f.check(values, physical=spec)
                assert hits.sum() == len(values) - values.null_count, (name, r)


# ---------------------------------------------------------------------------- safety


@pytest.fixture
def small_file(tmp_path):
    src = tmp_path / "src.parquet"
    t = pa.table(
        {
            "a": pa.array(np.arange(5000), pa.int64()),
            "s": pa.array([f"u{k}" for k in range(5000)]),
            "flag": pa.array(np.arange(5000) % 2 == 0),
        }
    )
    pq.write_table(t, src, row_group_size=1000)
    return src


def _fail_on_call(n: int, real):
    calls = {"n": 0}

    def wrapper(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == n:
            raise RuntimeError("injected failure")
        return real(*args, **kwargs)

    return wrapper


#: function that fails -> on which call (the third filter, or the only footer/rename)
FAILURES = {"chunk_hashes": 3, "_write_filter": 3, "_write_footer": 1, "replace": 1}


@pytest.mark.parametrize("where", list(FAILURES))
@pytest.mark.parametrize("in_place", [True, False])
def test_failure_leaves_source_untouched(small_file, monkeypatch, where, in_place):
    before = small_file.read_bytes()
    target = write.os if where == "replace" else write
    monkeypatch.setattr(target, where, _fail_on_call(FAILURES[where], getattr(target, where)))
    dst = None if in_place else small_file.parent / "out.parquet"
    with pytest.raises(RuntimeError, match="injected"):
        add_bloom_filters(small_file, dst, columns=["a", "s"])
    monkeypatch.undo()
    assert small_file.read_bytes() == before
    assert listing(small_file.parent) == ["src.parquet"]


def test_failure_in_write_table_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(write, "_write_filter", _fail_on_call(2, write._write_filter))
    with pytest.raises(RuntimeError, match="injected"):
        write_table(pa.table({"a": [1, 2, 3]}), tmp_path / "w.parquet", row_group_size=1)
    assert listing(tmp_path) == []


def test_in_place_replaces_atomically_and_keeps_mode(small_file):
    os.chmod(small_file, 0o640)
    original = small_file.read_bytes()
    footer = read_footer(small_file)
    result = add_bloom_filters(small_file, columns=["a"])
    assert result.path == str(small_file) and result.rewritten
    assert listing(small_file.parent) == ["src.parquet"]
    assert os.stat(small_file).st_mode & 0o777 == 0o640
    assert small_file.read_bytes()[: footer.footer_offset] == original[: footer.footer_offset]
    assert result.filters_added == {"a": 5}
    # Nothing left to do: the file is not rewritten at all.
    again = add_bloom_filters(small_file, columns=["a"])
    assert not again.rewritten and not again.added and len(again.skipped) == 5


def test_dst_leaves_source_untouched(small_file):
    before = small_file.read_bytes()
    mtime = os.stat(small_file).st_mtime_ns
    dst = small_file.parent / "sub" / "dst.parquet"
    dst.parent.mkdir()
    result = add_bloom_filters(small_file, dst)
    assert small_file.read_bytes() == before and os.stat(small_file).st_mtime_ns == mtime
    assert result.path == str(dst) and result.filters_added == {"a": 5, "s": 5}
    assert listing(dst.parent) == ["dst.parquet"]


def test_same_file_as_dst_is_in_place(small_file):
    link = small_file.parent / "link.parquet"
    os.symlink(small_file.name, link)
    add_bloom_filters(link, small_file, columns=["s"])
    assert os.path.islink(link)  # the link still points at the rewritten file
    assert len(read_bloom_filters(link, columns=["s"])) == 5
    assert listing(small_file.parent) == ["link.parquet", "src.parquet"]


def test_existing_filters_are_kept_unless_replace(tmp_path):
    src = tmp_path / "src.parquet"
    t = pa.table({"a": pa.array(np.arange(4000) * 3), "s": [f"u{k}" for k in range(4000)]})
    pq.write_table(
        t, src, row_group_size=2000, bloom_filter_options={"s": {"ndv": 100_000, "fpp": 1e-4}}
    )
    before = {f.row_group: f for f in peers.read_bloom_filters(src)}
    old_footer = read_footer(src)

    kept = add_bloom_filters(src)
    assert kept.filters_added == {"a": 2}
    assert [(s.row_group, s.column) for s in kept.skipped] == [(0, "s"), (1, "s")]
    assert all("has a bloom filter" in s.reason for s in kept.skipped)
    after = {f.row_group: f for f in peers.read_bloom_filters(src) if f.name == "s"}
    assert {r: (f.raw_header, f.bitset) for r, f in after.items()} == {
        r: (f.raw_header, f.bitset) for r, f in before.items()
    }
    meta = pq.ParquetFile(src).metadata
    assert [meta.row_group(r).column(1).bloom_filter_offset for r in (0, 1)] == [
        old_footer.row_groups[r].columns[1].bloom_filter_offset for r in (0, 1)
    ]

    mid = read_footer(src)
    mid_bytes = prefix(src, mid.footer_offset)
    replaced = add_bloom_filters(src, columns=["s"], replace=True)
    assert replaced.filters_added == {"s": 2} and all(f.replaced for f in replaced.added)
    assert min(f.offset for f in replaced.added) == mid.footer_offset
    assert prefix(src, mid.footer_offset) == mid_bytes  # old filters stay, unreferenced
    # pyarrow's were sized for FPP 1e-4 (8 KiB); ours for 2,000 values at 1 % (4 KiB).
    assert all(
        f.num_bytes == num_bytes_for(2000, FPP) < before[0].header.num_bytes for f in replaced.added
    )
    assert_filters_exact(src, replaced)
    assert pq.read_table(src).equals(t)


def _kms_factory():
    import pyarrow.parquet.encryption as pe

    class InMemoryKms(pe.KmsClient):
        def __init__(self, config):
            super().__init__()

        def wrap_key(self, key_bytes, master_key_identifier):
            return base64.b64encode(key_bytes)

        def unwrap_key(self, wrapped_key, master_key_identifier):
            return base64.b64decode(wrapped_key)

    return pe, pe.CryptoFactory(InMemoryKms)


@pytest.mark.parametrize("plaintext_footer", [False, True], ids=["PARE", "plaintext_footer"])
def test_encrypted_files_without_keys_are_refused_and_untouched(tmp_path, plaintext_footer):
    """Without the footer key the footer can be neither encrypted nor signed again (the
    encrypted round trip is in tests/parquet/test_crypto.py)."""
    pe, factory = _kms_factory()
    config = pe.EncryptionConfiguration(
        footer_key="k1",
        column_keys={"k2": ["a"]},
        plaintext_footer=plaintext_footer,
        double_wrapping=False,
    )
    props = factory.file_encryption_properties(pe.KmsConnectionConfig(), config)
    src = tmp_path / "enc.parquet"
    pq.write_table(
        pa.table({"a": [1, 2, 3], "b": ["x", "y", "z"]}), src, encryption_properties=props
    )
    data = src.read_bytes()
    assert data[-4:] == (b"PAR1" if plaintext_footer else b"PARE")
    for dst in (None, tmp_path / "out.parquet"):
        with pytest.raises(MissingKeyError, match=r"enc\.parquet: .*footer key"):
            add_bloom_filters(src, dst, columns=["a"])
    assert src.read_bytes() == data
    assert listing(tmp_path) == ["enc.parquet"]


def _corrupt(small_file, how: str) -> None:
    data = bytearray(small_file.read_bytes())
    if how == "truncated":
        del data[-100:]
    elif how == "not_parquet":
        data[-4:] = b"ORC!"
    elif how == "footer_length":
        data[-8:-4] = (2**32 - 1).to_bytes(4, "little")
    elif how == "page_header":
        data[4:40] = b"\xff" * 36  # the first page header of column a
    small_file.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["truncated", "not_parquet", "footer_length", "page_header"])
def test_corrupt_files_raise_typed_errors_and_are_untouched(small_file, how):
    _corrupt(small_file, how)
    data = small_file.read_bytes()
    with pytest.raises(CorruptFileError, match=r"src\.parquet"):
        add_bloom_filters(small_file, columns=["a"])
    assert small_file.read_bytes() == data
    assert listing(small_file.parent) == ["src.parquet"]


def test_bad_columns_and_parameters(small_file):
    data = small_file.read_bytes()
    with pytest.raises(InvalidParameterError, match=r"no column 'nope'; columns are: a, s, flag"):
        add_bloom_filters(small_file, columns=["a", "nope"])
    with pytest.raises(UnsupportedTypeError, match="no reader uses boolean bloom filters"):
        add_bloom_filters(small_file, columns=["flag"])
    with pytest.raises(InvalidParameterError, match="fpp"):
        add_bloom_filters(small_file, fpp=1.5)
    with pytest.raises(InvalidParameterError, match="policy"):
        add_bloom_filters(small_file, policy="guess")
    assert small_file.read_bytes() == data
    assert listing(small_file.parent) == ["src.parquet"]


def test_putze_policy_meets_the_target(tmp_path):
    src = tmp_path / "p.parquet"
    pq.write_table(pa.table({"a": pa.array(np.arange(100), pa.int64())}), src)
    result = add_bloom_filters(src, policy="putze")
    assert result.added[0].num_bytes == num_bytes_for(100, FPP, "putze") == 256


# ---------------------------------------------------------------------------- peers read our files

PEER_ROWS = 40_000
PEER_GROUP = 5_000


def peer_table() -> pa.Table:
    """Even keys shuffled across row groups: every row group's min/max spans the odd ones."""
    rng = np.random.default_rng(3)
    keys = rng.permutation(PEER_ROWS).astype(np.int64) * 2
    return pa.table(
        {
            "a": pa.array(keys),
            "s": pa.array([f"user_{k:07d}" for k in keys]),
            "x": pa.array(keys / 4.0),
            "dec": pa.array(keys.astype(np.int32)).cast(pa.decimal128(18, 0)),
            "day": pa.array((keys % 20_000).astype(np.int32), pa.date32()),
        }
    )


@pytest.fixture(scope="module", params=["write_table", "add_bloom_filters"])
def peer_file(request, tmp_path_factory):
    """A file whose filters are the only way to skip row groups for an absent key."""
    path = tmp_path_factory.mktemp("peers") / "p.parquet"
    t = peer_table()
    # PLAIN pages: no dictionary a reader could prune with instead.
    opts = {"row_group_size": PEER_GROUP, "use_dictionary": False, "store_decimal_as_integer": True}
    if request.param == "write_table":
        write_table(t, path, **opts)
    else:
        pq.write_table(t, path, **opts)
        add_bloom_filters(path)
    return path, t


def _row_group_of(t: pa.Table) -> np.ndarray:
    return np.arange(t.num_rows) // PEER_GROUP


def test_duckdb_bloom_probe(peer_file):
    duckdb = pytest.importorskip("duckdb")
    path, t = peer_file
    con = duckdb.connect()
    probe = "SELECT row_group_id, bloom_filter_excludes FROM parquet_bloom_probe(?, ?, ?::{})"
    keys = t["a"].to_numpy()
    groups = _row_group_of(t)
    cases = {  # column -> (SQL type, literal for key k)
        "a": ("BIGINT", int),
        "s": ("VARCHAR", lambda k: f"user_{k:07d}"),
        "x": ("DOUBLE", lambda k: k / 4.0),
        "dec": ("DECIMAL(18,0)", int),
    }
    for column, (sql_type, literal) in cases.items():
        q = probe.format(sql_type)
        for k, g in zip(keys[:: PEER_ROWS // 60], groups[:: PEER_ROWS // 60], strict=True):
            rows = dict(con.execute(q, [str(path), column, literal(int(k))]).fetchall())
            assert rows[int(g)] is False, (column, int(k))  # never excludes a present value
        excluded = total = 0
        for k in range(1, 2 * PEER_ROWS, 2 * PEER_ROWS // 120):  # odd: absent, within min/max
            rows = con.execute(q, [str(path), column, literal(k)]).fetchall()
            excluded += sum(bool(e) for _, e in rows)
            total += len(rows)
        assert excluded >= 0.95 * total, (column, excluded, total)


def _datafusion_pruning(ctx, sql: str) -> tuple[int, int]:
    """(row groups total, row groups matched) after bloom filter pruning, from EXPLAIN ANALYZE."""
    batches = ctx.sql("EXPLAIN ANALYZE " + sql).collect()
    text = "\n".join(str(v) for b in batches for v in b.column(1).to_pylist())
    m = re.search(r"row_groups_pruned_bloom_filter=(\d+) total → (\d+) matched", text)
    assert m, text
    return int(m.group(1)), int(m.group(2))


def test_datafusion_prunes_with_our_filters(peer_file):
    datafusion = pytest.importorskip("datafusion")
    path, t = peer_file
    groups = t.num_rows // PEER_GROUP
    ctx = datafusion.SessionContext()
    ctx.register_parquet("t", str(path))
    absent = ["a = 10001", "s = 'user_0010001'", "a IN (10001, 20003)"]
    for where in absent:
        assert _datafusion_pruning(ctx, f"SELECT * FROM t WHERE {where}") == (groups, 0)
        assert ctx.sql(f"SELECT * FROM t WHERE {where}").to_arrow_table().num_rows == 0
    key = int(t["a"][12_345].as_py())
    total, matched = _datafusion_pruning(ctx, f"SELECT * FROM t WHERE a = {key}")
    assert (total, matched) == (groups, 1)
    got = ctx.sql(f"SELECT s FROM t WHERE a = {key}").to_arrow_table()
    assert got["s"].to_pylist() == [f"user_{key:07d}"]
    off = datafusion.SessionContext()
    off.sql("SET datafusion.execution.parquet.bloom_filter_on_read = false").collect()
    off.register_parquet("t", str(path))
    # Filters off: statistics alone keep every row group.
    assert _datafusion_pruning(off, "SELECT * FROM t WHERE a = 10001") == (groups, groups)


def spark_scan_rows(spark, path: str, where: str, bloom: bool, column: str) -> tuple[list, int]:
    """(``column`` of the rows found, rows output by the Parquet scan), filters on or off.

    The vectorized Parquet scan outputs every row of each row group it reads (rows are
    filtered afterwards), so its ``numOutputRows`` counts the row groups not skipped.
    """
    df = (
        spark.read.option("parquet.filter.bloom.enabled", str(bloom).lower())
        .parquet(path)
        .where(where)
        .select(column)
    )
    rows = [r[0] for r in df.collect()]
    plan = df._jdf.queryExecution().executedPlan()
    if plan.nodeName().startswith("AdaptiveSparkPlan"):
        plan = plan.executedPlan()
    leaves = plan.collectLeaves()
    scans = [leaves.apply(i) for i in range(leaves.size())]
    (scan,) = [n for n in scans if "Scan" in n.nodeName()]
    return rows, int(scan.metrics().apply("numOutputRows").value())


@pytest.mark.spark
def test_spark_skips_row_groups_with_our_filters(spark, peer_file):
    path, t = peer_file
    key = int(t["a"][12_345].as_py())
    for where, expected in [
        ("a = 10001", []),
        (f"a = {key}", [key]),
        ("s = 'user_0010001'", []),
        ("a IN (10001, 20003)", []),
    ]:
        on_rows, on_scanned = spark_scan_rows(spark, str(path), where, True, "a")
        off_rows, off_scanned = spark_scan_rows(spark, str(path), where, False, "a")
        assert on_rows == off_rows == expected
        assert off_scanned == PEER_ROWS  # statistics alone skip nothing
        assert on_scanned == PEER_GROUP * len(expected), (where, on_scanned)


# ---------------------------------------------------------------------------- other writers' files


def test_duckdb_file_gets_exact_filters(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    src = tmp_path / "duck.parquet"
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT "
        "CASE WHEN i % 13 = 5 THEN NULL ELSE i * 2 END AS big, "
        "CAST(i % 200 - 100 AS TINYINT) AS tiny, "
        "CAST(i * 7 AS UINTEGER) + 2147483000 AS uint, "
        "'user_' || (i * 2) AS str, "
        "DATE '1990-01-01' + CAST(i AS INTEGER) AS day, "
        "TIMESTAMP '2020-01-01' + INTERVAL (i * 1234567) MICROSECOND AS ts, "
        "CAST(i * 2 AS DECIMAL(18,3)) AS dec18, "
        "CAST(i * 2 AS DECIMAL(9,2)) AS dec9, "
        "CAST(i * 2 AS DECIMAL(38,5)) AS dec38, "
        "CAST(i AS DOUBLE) / 8 AS dbl, "
        "md5(i::VARCHAR)::UUID AS id, "
        "encode('blob' || i) AS blob, "
        "i % 2 = 0 AS flag "
        "FROM range(30000) r(i)"
    )
    con.execute(
        f"COPY t TO '{src}' (FORMAT parquet, ROW_GROUP_SIZE 10240, WRITE_BLOOM_FILTER false)"
    )
    assert not peers.read_bloom_filters(src)
    result = add_bloom_filters(src)
    assert set(result.filters_added) == set(pq.read_schema(src).names) - {"flag"}
    assert_filters_exact(src, result)
    # DuckDB probes our filters: absent even keys inside min/max are excluded.
    q = "SELECT bool_and(bloom_filter_excludes) FROM parquet_bloom_probe(?, 'big', ?::BIGINT)"
    keys = [2 * i for i in range(0, 30_000, 997) if i % 13 != 5]  # not NULL
    present = [con.execute(q, [str(src), k]).fetchone()[0] for k in keys]
    absent = [con.execute(q, [str(src), k]).fetchone()[0] for k in range(1, 60_000, 2 * 997)]
    assert not any(present) and sum(absent) >= 0.9 * len(absent)


SPARK_COLUMNS = {
    "byte": "CAST(id % 256 - 128 AS TINYINT)",
    "short": "CAST(id * 7 % 65536 - 32768 AS SMALLINT)",
    "int": "CAST(id * 429497 % 4294967296 - 2147483648 AS INT)",
    "long": "id * 2",
    # A permutation of the even numbers below 60,000: every row group's min/max spans it.
    "key": "(id * 7919) % 30000 * 2",
    "key_str": "concat('k', (id * 7919) % 30000 * 2)",
    "float": "CASE id WHEN 0 THEN CAST('-0.0' AS FLOAT) WHEN 1 THEN CAST('NaN' AS FLOAT) "
    "ELSE CAST(id / 7 AS FLOAT) END",
    "double": "CASE id WHEN 0 THEN CAST('-0.0' AS DOUBLE) ELSE id / 7 END",
    "string": "concat('user_', id)",
    "binary": "CAST(concat('blob', id) AS BINARY)",
    "date": "date_add(DATE'1950-01-01', CAST(id * 3 AS INT))",
    # INT96: 1966..1978 with microseconds, days and nanos of day on both sides of 1970
    "ts": "timestamp_micros(-100000000000000 + id * 37000123)",
    "ts_ancient": "timestamp_micros(-62135596800000000 + id * 1000001)",  # year 1, INT96
    "decimal_9_2": "CAST(id / 7 - 500 AS DECIMAL(9,2))",
    "decimal_18_2": "CAST(id * 1234567.89 - 6e9 AS DECIMAL(18,2))",
    "decimal_38_10": "CAST(id * 1234567.891 - 5e9 AS DECIMAL(38,10))",
    "boolean": "id % 3 = 0",
}


@pytest.fixture(scope="module")
def spark_file(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("spark") / "t"
    df = spark.range(30_000).selectExpr(
        *(
            f"CASE WHEN id % 13 = 5 THEN NULL ELSE {e} END AS `{n}`"
            for n, e in SPARK_COLUMNS.items()
        )
    )
    keys = {
        "spark.sql.parquet.outputTimestampType": "INT96",
        "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",
        "spark.sql.parquet.datetimeRebaseModeInWrite": "CORRECTED",
    }
    previous = {k: spark.conf.get(k, None) for k in keys}
    for k, v in keys.items():
        spark.conf.set(k, v)
    try:
        (
            df.coalesce(1)
            .write.option("parquet.enable.dictionary", "false")
            .option("parquet.block.size", str(256 * 1024))
            .parquet(str(out))
        )
    finally:
        for k, v in previous.items():
            spark.conf.unset(k) if v is None else spark.conf.set(k, v)
    (path,) = glob.glob(str(out / "part-*.parquet"))
    return Path(path)


@pytest.mark.spark
def test_spark_file_gets_exact_filters(spark_file, tmp_path):
    src = tmp_path / "s.parquet"
    shutil.copy(spark_file, src)
    meta = pq.ParquetFile(src).metadata
    assert meta.num_row_groups >= 2 and "parquet-mr" in meta.created_by
    assert meta.schema.column(list(SPARK_COLUMNS).index("ts")).physical_type == "INT96"
    assert not peers.read_bloom_filters(src)
    result = add_bloom_filters(src)
    assert set(result.filters_added) == set(SPARK_COLUMNS) - {"boolean"}
    exact = [a for a in result.added if a.column != "ts_ancient"]
    assert_filters_exact(src, type(result)(str(src), str(src), added=exact))
    # Year-1 INT96 stamps cannot be read as nanoseconds: hash their two parts by hand.
    as_us = pq.ParquetFile(src, coerce_int96_timestamp_unit="us")
    loaded = read_bloom_filters(src, columns=["ts_ancient"])
    assert [f.row_group for f in loaded] == list(range(meta.num_row_groups))
    for f in loaded:
        values = as_us.read_row_group(f.row_group, columns=["ts_ancient"]).column(0)
        micros = values.drop_null().cast(pa.int64()).to_numpy()
        assert micros.min() < -62_000_000_000 * 10**6  # before year 5
        days = np.floor_divide(micros, 86_400 * 10**6)
        nanos = (micros - days * 86_400 * 10**6) * 1000
        assert f.filter.check_hashes(hash_int96(nanos, days + 2_440_588)).all()
        ndv = np.unique(micros).shape[0]
        assert f.filter.num_bytes == num_bytes_for(ndv, FPP)


@pytest.mark.spark
def test_spark_skips_row_groups_of_a_retrofitted_spark_file(spark, spark_file, tmp_path):
    src = tmp_path / "s.parquet"
    add_bloom_filters(spark_file, src, columns=["key", "key_str"])
    meta = pq.ParquetFile(src).metadata
    largest = max(meta.row_group(r).num_rows for r in range(meta.num_row_groups))
    present = (100 * 7919) % 30000 * 2  # id 100
    for where, expected in [
        ("key = 20001", []),
        ("key_str = 'k20001'", []),
        (f"key = {present}", [present]),
        (f"key_str = 'k{present}'", [present]),
    ]:
        on_rows, on_scanned = spark_scan_rows(spark, str(src), where, True, "key")
        off_rows, off_scanned = spark_scan_rows(spark, str(src), where, False, "key")
        assert on_rows == off_rows == expected
        assert off_scanned == meta.num_rows  # statistics alone skip nothing
        assert on_scanned <= largest * len(expected), (where, on_scanned)


# ---------------------------------------------------------------------------- command line


def test_cli_add_bloom(small_file, capsys):
    dst = small_file.parent / "out.parquet"
    assert main(["add-bloom", str(small_file), str(dst), "--column", "a", "-c", "s"]) == 0
    out = capsys.readouterr().out
    assert f"{small_file}: 10 bloom filters added" in out and f"to {dst}" in out
    assert re.search(r"\n  a\s+5\s+[\d,]+\s+1,000\n", out), out
    assert main(["add-bloom", str(dst), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["path"] == str(dst) and report["rewritten"] is False
    assert report["filters_added"] == {}
    reasons = {(s["column"], s["row_group"]): s["reason"] for s in report["skipped"]}
    assert "BOOLEAN" in reasons[("flag", None)] and "has a bloom filter" in reasons[("a", 0)]
    assert main(["add-bloom", str(dst), "-c", "s", "--replace", "--json", "--fpp", "0.001"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["filters_added"] == {"s": 5} and report["rewritten"] is True
    assert all(
        a["num_bytes"] == num_bytes_for(1000, 0.001) and a["replaced"] for a in report["added"]
    )


def test_cli_add_bloom_human_summary_lists_skips(small_file, capsys):
    assert main(["add-bloom", str(small_file)]) == 0
    out = capsys.readouterr().out
    assert "in place" in out and "skipped flag (all row groups): BOOLEAN" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-c", "nope"], "no column 'nope'; columns are: a, s, flag"),
        (["-c", "flag"], "boolean"),
        (["--fpp", "2"], "fpp"),
    ],
)
def test_cli_add_bloom_errors(small_file, capsys, args, message):
    data = small_file.read_bytes()
    assert main(["add-bloom", str(small_file), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bloomskip: error: ") and message in err
    assert small_file.read_bytes() == data


def test_cli_add_bloom_missing_file(tmp_path, capsys):
    assert main(["add-bloom", str(tmp_path / "missing.parquet")]) == 2
    assert "missing.parquet" in capsys.readouterr().err
