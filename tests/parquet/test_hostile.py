"""Hostile Parquet files: every reader entry point gives a typed error or a safe answer.

Two parts:

* **targeted cases**, built by editing real files (footer fields through
  :mod:`bloomskip.parquet.thrift`, or raw bytes): truncated footers, footer lengths of
  4 GiB or past the file, wrong magic, filter offsets and lengths past the data, bloom
  headers with impossible sizes or unknown union members, bitsets cut short, deep
  Thrift nesting, huge container lengths, fields of the wrong Thrift type. A file-level
  problem is a :class:`~bloomskip.errors.BloomskipError` naming the file; a bad filter is
  ``status == "invalid"`` with a reason, and never prunes a row group.
* **a fuzz test** that mutates small real files (pyarrow, DuckDB, DataFusion) - byte
  flips, inserts, deletes and truncations concentrated on the footer, the bloom filters
  and the page headers, plus Thrift-aware edits of footer integers and types - and runs
  every entry point of :data:`OPERATIONS` on each case. Only typed errors or results
  are accepted, each case within :data:`CASE_SECONDS`. Cases run in two spawned worker
  processes, so a native crash or a hang fails the test with the case that caused it
  (its bytes are kept) instead of killing pytest.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import signal
import struct
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bloomskip.errors import BloomskipError, CorruptFileError, UnsupportedFileError
from bloomskip.hashing.physical import PhysicalType
from bloomskip.parquet import prune
from bloomskip.parquet.bloom import parse_header, read_bloom_filters
from bloomskip.parquet.footer import read_footer
from bloomskip.parquet.inspect import inspect_file
from bloomskip.parquet.thrift import (
    BINARY,
    I32,
    I64,
    LIST,
    STRUCT,
    List,
    Struct,
    decode_struct,
    encode_struct,
)
from bloomskip.prune.evidence import Unavailable

# ---------------------------------------------------------------------------- seed files

ROWS = 200
ROWS_PER_GROUP = 100


def seed_table() -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(ROWS), pa.int64()),
            "user": pa.array([None if i % 7 == 3 else f"user_{i:04d}" for i in range(ROWS)]),
            "small": pa.array([i % 5 for i in range(ROWS)], pa.int8()),
        }
    )


def write_pyarrow(path: Path) -> None:
    """Arrow C++: filters after all row groups, dictionary chunks, snappy."""
    opts = {"id": {"ndv": 100, "fpp": 0.05}, "user": {"ndv": 100, "fpp": 0.05}, "small": True}
    pq.write_table(seed_table(), path, row_group_size=ROWS_PER_GROUP, bloom_filter_options=opts)


def write_duckdb(path: Path) -> None:
    """DuckDB: filters of dictionary chunks just before the footer (row groups >= 2048)."""
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    try:
        con.execute(
            f"COPY (SELECT (i % 300)::BIGINT AS id, CASE WHEN i % 7 = 3 THEN NULL "
            f"ELSE 'user_' || lpad((i % 250)::VARCHAR, 4, '0') END AS \"user\", "
            f"(i % 5)::TINYINT AS small FROM range(4500) r(i)) TO '{path}' "
            f"(FORMAT parquet, ROW_GROUP_SIZE 2048)"
        )
    finally:
        con.close()


def write_datafusion(path: Path) -> None:
    """arrow-rs: filters after each row group, a BOOLEAN filter, uncompressed pages."""
    datafusion = pytest.importorskip("datafusion")
    table = seed_table().append_column("flag", pa.array([i % 3 == 0 for i in range(ROWS)]))
    options = datafusion.ParquetWriterOptions(
        bloom_filter_on_write=True,
        bloom_filter_fpp=0.05,
        max_row_group_size=ROWS_PER_GROUP,
        compression="uncompressed",
    )
    datafusion.SessionContext().from_arrow(table).write_parquet_with_options(str(path), options)


WRITERS = {"pyarrow": write_pyarrow, "duckdb": write_duckdb, "datafusion": write_datafusion}


@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> dict[str, Path]:
    """One small file per writer, each with bloom filters in at least two row groups."""
    folder = tmp_path_factory.mktemp("seeds")
    out = {}
    for name, write in WRITERS.items():
        path = folder / f"{name}.parquet"
        write(path)
        loaded = read_bloom_filters(path)
        assert sum(f.status == "ok" for f in loaded) >= 2, name
        out[name] = path
    return out


@pytest.fixture
def pyarrow_seed(seeds) -> bytes:
    return seeds["pyarrow"].read_bytes()


# ---------------------------------------------------------------------------- helpers


def split(data: bytes) -> tuple[int, Struct]:
    """Where the footer starts, and the decoded FileMetaData."""
    (n,) = struct.unpack("<I", data[-8:-4])
    start = len(data) - 8 - n
    meta, _ = decode_struct(data[start:-8])
    return start, meta


def assemble(body: bytes, footer: bytes, length: int | None = None) -> bytes:
    n = len(footer) if length is None else length
    return body + footer + struct.pack("<I", n) + b"PAR1"


def edited(data: bytes, edit: Callable[[Struct], object]) -> bytes:
    """``data`` with ``edit(FileMetaData)`` applied to its footer."""
    start, meta = split(data)
    edit(meta)
    return assemble(data[:start], encode_struct(meta))


def column_meta(meta: Struct, row_group: int, column: int) -> Struct:
    return meta.get(4).items[row_group].get(1).items[column].get(3)


def canonical_header(num_bytes_varint: bytes) -> bytes:
    """BloomFilterHeader with a raw zigzag varint for num_bytes, BLOCK/XXHASH/UNCOMPRESSED."""
    return b"\x15" + num_bytes_varint + bytes.fromhex("1c1c00001c1c00001c1c000000")


def zigzag32(v: int) -> bytes:
    u = ((v << 1) ^ (v >> 31)) & 0xFFFFFFFF
    out = bytearray()
    while u >= 0x80:
        out.append(u & 0x7F | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def uvarint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def with_filter(data: bytes, raw: bytes, *, length: int | str | None = "auto") -> bytes:
    """``data`` with ``raw`` (header + bitset) placed before the footer as the filter of
    row group 0, column 0 (``length``: the bloom_filter_length to set, None for none)."""
    start, meta = split(data)
    md = column_meta(meta, 0, 0)
    md.set(14, I64, start)
    if length is None:
        md.remove(15)
    else:
        md.set(15, I32, len(raw) if length == "auto" else length)
    return assemble(data[:start] + raw, encode_struct(meta))


def write(tmp_path: Path, data: bytes, name: str = "hostile.parquet") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def expect_file_error(path: Path, error=CorruptFileError, match: str | None = None) -> None:
    """Every entry point raises ``error`` naming the file."""
    for op in (read_footer, read_bloom_filters, inspect_file, lambda p: prune(p, "id = 1")):
        with pytest.raises(error, match=match) as info:
            op(path)
        assert path.name in str(info.value)


def expect_invalid_filter(path: Path, reason: str) -> None:
    """Row group 0 column 0's filter is invalid (not absent, not a filter), every other
    chunk is unaffected, inspect reports it, and prune never uses it."""
    loaded = read_bloom_filters(path)
    first = loaded[0]
    assert (first.row_group, first.column) == (0, 0)
    assert first.status == "invalid" and first.filter is None, first
    assert re.search(reason, first.reason), first.reason
    assert path.name in first.reason and "row group 0 column id" in first.reason
    assert all(f.status == "ok" for f in loaded if f.row_group > 0 and f.column == 0)
    report = inspect_file(path)
    assert report["row_groups"][0]["columns"][0]["filter"] == "invalid"
    json.dumps(report)
    decision = prune(path, "id = 1000001", stages=("bloom",)).units[0]
    assert decision.may_match, decision.reason


# ---------------------------------------------------------------------------- truncation


def test_every_truncated_footer_is_a_typed_error(pyarrow_seed):
    """The footer cut at every byte, the length in the tail matching the cut footer."""
    start, _ = split(pyarrow_seed)
    footer = pyarrow_seed[start:-8]
    for cut in range(len(footer)):
        data = assemble(pyarrow_seed[:start], footer[:cut])
        with pytest.raises(CorruptFileError, match=r"cut\.parquet"):
            read_footer(io.BytesIO(data), name="cut.parquet")


def test_every_truncated_file_is_a_typed_error(pyarrow_seed):
    """The file cut at every byte of its last 600: the tail is gone or inconsistent."""
    for cut in range(max(0, len(pyarrow_seed) - 600), len(pyarrow_seed)):
        with pytest.raises(CorruptFileError, match=r"cut\.parquet"):
            read_footer(io.BytesIO(pyarrow_seed[:cut]), name="cut.parquet")


@pytest.mark.parametrize("size", [0, 1, 4, 7, 8, 11])
def test_tiny_files(tmp_path, size):
    expect_file_error(write(tmp_path, b"PAR1PAR1PAR1"[:size]), match="too small")


# ---------------------------------------------------------------------------- footer length


@pytest.mark.parametrize(
    "length",
    [
        lambda n, size: 0xFFFFFFFF,  # 4 GiB
        lambda n, size: 0x80000000,
        lambda n, size: size,  # the whole file and more
        lambda n, size: size - 11,  # one byte into the leading magic
        lambda n, size: size - 12 + 1,
    ],
    ids=["4GiB", "2GiB", "file_size", "into_magic", "one_past"],
)
def test_footer_length_past_the_file(tmp_path, pyarrow_seed, length):
    start, _ = split(pyarrow_seed)
    n = len(pyarrow_seed) - 8 - start
    data = pyarrow_seed[:-8] + struct.pack("<I", length(n, len(pyarrow_seed))) + b"PAR1"
    expect_file_error(write(tmp_path, data), match="footer length")


@pytest.mark.parametrize("delta", [-1, 1, -7, 5, -200])
def test_footer_length_off_by_a_little(tmp_path, pyarrow_seed, delta):
    """The footer starts a few bytes early or late: garbage Thrift, a typed error (which
    one depends on what the garbage decodes to)."""
    start, _ = split(pyarrow_seed)
    n = len(pyarrow_seed) - 8 - start
    data = pyarrow_seed[:-8] + struct.pack("<I", n + delta) + b"PAR1"
    expect_file_error(write(tmp_path, data), BloomskipError)


def test_empty_footer(tmp_path, pyarrow_seed):
    data = pyarrow_seed[:-8] + struct.pack("<I", 0) + b"PAR1"
    expect_file_error(write(tmp_path, data), match="Thrift data ends early")


# ---------------------------------------------------------------------------- magic


@pytest.mark.parametrize(
    ("mutate", "error", "message"),
    [
        (lambda b: b"PAR2" + b[4:], CorruptFileError, "not a Parquet file"),
        (lambda b: b[:-4] + b"PAR2", CorruptFileError, "not a Parquet file"),
        (lambda b: b"\0\0\0\0" + b[4:-4] + b"\0\0\0\0", CorruptFileError, "not a Parquet file"),
        # An encrypted-footer file starts and ends with PARE: one of them is no Parquet.
        (lambda b: b[:-4] + b"PARE", CorruptFileError, "not a Parquet file"),
        (lambda b: b"PARE" + b[4:], CorruptFileError, "not a Parquet file"),
        (
            # encryption_algorithm makes a signed plaintext footer, which this is not
            lambda b: edited(b, lambda m: m.set(8, STRUCT, Struct())),
            CorruptFileError,
            "28-byte signature",
        ),
    ],
    ids=["head", "tail", "zeros", "PARE_tail", "PARE_head", "encryption_algorithm"],
)
def test_wrong_magic(tmp_path, pyarrow_seed, mutate, error, message):
    expect_file_error(write(tmp_path, mutate(pyarrow_seed)), error, message)


# ---------------------------------------------------------------------------- filter location


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (lambda md, start, size: md.set(14, I64, size), "outside the data"),
        (lambda md, start, size: md.set(14, I64, start), "outside the data"),  # the footer
        (lambda md, start, size: md.set(14, I64, 2**63 - 1), "outside the data"),
        (lambda md, start, size: md.set(14, I64, -(2**63)), "outside the data"),
        (lambda md, start, size: md.set(14, I64, 0), "outside the data"),  # the magic
        (lambda md, start, size: md.set(15, I32, 2**31 - 1), "runs past the data"),
        (lambda md, start, size: md.set(15, I32, -(2**31)), "runs past the data"),
        (lambda md, start, size: md.set(15, I32, 0), "runs past the data"),
        (lambda md, start, size: md.set(15, I32, size), "runs past the data"),
        (lambda md, start, size: md.set(15, I32, md.get(15) - 1), "!= header"),
        (lambda md, start, size: md.set(15, I32, md.get(15) + 1), "!= header"),
        (lambda md, start, size: md.set(14, I64, md.get(14) + 1), "algorithm|num_bytes|Thrift|!="),
        (lambda md, start, size: md.set(14, BINARY, b"\x00\x10"), "not an integer"),
        (lambda md, start, size: md.set(14, STRUCT, Struct()), "not an integer"),
        (lambda md, start, size: md.set(15, LIST, List(I32, [1])), "not an integer"),
    ],
)
def test_filter_offset_and_length_past_the_data(tmp_path, pyarrow_seed, edit, reason):
    start, _ = split(pyarrow_seed)
    data = edited(pyarrow_seed, lambda m: edit(column_meta(m, 0, 0), start, len(pyarrow_seed)))
    expect_invalid_filter(write(tmp_path, data), reason)


def test_filter_past_the_data_without_length(tmp_path, pyarrow_seed):
    """No bloom_filter_length (pre-2.10 files): the header and bitset are still checked."""
    # A 1 KiB bitset announced, 100 bytes there before the footer.
    data = with_filter(pyarrow_seed, canonical_header(zigzag32(1024)) + bytes(100), length=None)
    expect_invalid_filter(write(tmp_path, data), "runs past the data")


# ---------------------------------------------------------------------------- bloom header


@pytest.mark.parametrize(
    ("varint", "reason"),
    [
        (zigzag32(-32), "num_bytes -32 is not a power of two"),
        (zigzag32(-1), "num_bytes -1 is not a power of two"),
        (zigzag32(0), "num_bytes 0 is not a power of two"),
        (zigzag32(31), "num_bytes 31 is not a power of two"),
        (zigzag32(33), "num_bytes 33 is not a power of two"),
        (zigzag32(2**31 - 1), "num_bytes 2147483647 is not a power of two"),
        (zigzag32(-(2**31)), "num_bytes -2147483648 is not a power of two"),
        (zigzag32(2**28), "num_bytes 268435456 is not a power of two from 32 B to 128 MiB"),
        (uvarint(2**32), "does not fit in 32 bits"),  # zigzag 2**31
        (uvarint(2**64 - 1), "does not fit in 32 bits"),
        (b"\xff" * 11, "longer than 10 bytes"),
    ],
)
@pytest.mark.parametrize("with_length", [True, False])
def test_bloom_header_num_bytes(tmp_path, pyarrow_seed, varint, reason, with_length):
    raw = canonical_header(varint) + bytes(64)
    data = with_filter(pyarrow_seed, raw, length="auto" if with_length else None)
    expect_invalid_filter(write(tmp_path, data), reason)


H32 = zigzag32(32)


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        (b"\x15" + H32 + bytes.fromhex("1c2c00001c1c00001c1c000000"), "algorithm is member 2"),
        (b"\x15" + H32 + bytes.fromhex("1c1c00001c2c00001c1c000000"), "hash is member 2"),
        (b"\x15" + H32 + bytes.fromhex("1c1c00001c1c00001c2c000000"), "compression is member 2"),
        (b"\x15" + H32 + bytes.fromhex("1c1c001c00001c1c00001c1c000000"), "algorithm is missing"),
        (b"\x15" + H32 + bytes.fromhex("1c001c1c00001c1c000000"), "algorithm is missing"),
        (b"\x15" + H32 + bytes.fromhex("15021c1c00001c1c000000"), "algorithm is missing"),
        (b"\x15" + H32 + bytes.fromhex("1c1c00001c1c000000"), "compression is missing"),
        (bytes.fromhex("1c1c00001c1c00001c1c000000"), "no num_bytes"),
        (b"\x18\x02ab" + bytes.fromhex("1c1c00001c1c00001c1c000000"), "no num_bytes"),
        (b"\x15" + H32 + b"\x1d", "unknown Thrift compact type 13"),
        (b"\x15" + H32, "algorithm is missing"),  # the bitset's first zero ends it
        (b"", "no num_bytes"),
    ],
    ids=[
        "algorithm_2",
        "hash_2",
        "compression_2",
        "two_members",
        "empty_union",
        "union_not_a_struct",
        "no_compression",
        "no_num_bytes",
        "num_bytes_binary",
        "unknown_type",
        "no_stop",
        "empty",
    ],
)
def test_bloom_header_unions(tmp_path, pyarrow_seed, header, reason):
    data = with_filter(pyarrow_seed, header + bytes(32))
    expect_invalid_filter(write(tmp_path, data), reason)
    with pytest.raises(CorruptFileError, match=reason):
        parse_header(header + bytes(32))


@pytest.mark.parametrize("present", [0, 1, 31, 500, 1023])
@pytest.mark.parametrize("with_length", [True, False])
def test_bitset_cut_short(tmp_path, pyarrow_seed, present, with_length):
    """A header announcing 1 KiB followed by fewer bytes, then the footer."""
    raw = canonical_header(zigzag32(1024)) + bytes(present)
    data = with_filter(pyarrow_seed, raw, length="auto" if with_length else None)
    expect_invalid_filter(write(tmp_path, data), "runs past the data|!= header")
    if with_length:  # the length field tells the truth about the bytes, not the header
        data = with_filter(pyarrow_seed, raw, length=len(raw) - present + 1024)
        expect_invalid_filter(write(tmp_path, data), "runs past the data")


@pytest.mark.parametrize("header", [b"\x15" + H32, b"\x15", b"\x15" + H32 + b"\x1c\x1c"])
def test_bloom_header_cut_short(tmp_path, pyarrow_seed, header):
    """Nothing follows the header but the footer (its length says so): it ends early."""
    data = with_filter(pyarrow_seed, header)
    expect_invalid_filter(write(tmp_path, data), "ends early")


def test_a_valid_crafted_filter_is_read(tmp_path, pyarrow_seed):
    """The control for the cases above: the same construction with a sound filter."""
    raw = canonical_header(zigzag32(64)) + bytes(range(64))
    for length in ("auto", None):
        loaded = read_bloom_filters(write(tmp_path, with_filter(pyarrow_seed, raw, length=length)))
        assert loaded[0].status == "ok" and loaded[0].filter.to_bytes() == bytes(range(64))


# ---------------------------------------------------------------------------- Thrift nesting


def with_unknown_field(data: bytes, fid: int, type_code: int, value: bytes) -> bytes:
    """``data`` with a raw unknown field appended to FileMetaData (long field header)."""
    start, _ = split(data)
    footer = data[start:-8]
    assert footer[-1] == 0  # FileMetaData's STOP
    field = bytes([type_code]) + uvarint((fid << 1) ^ (fid >> 15)) + value
    return assemble(data[:start], footer[:-1] + field + b"\x00")


def in_row_group(data: bytes, fid: int, type_code: int, value: bytes) -> bytes:
    """``data`` with a raw unknown field appended to the first RowGroup (a deferred struct,
    checked by the compiled skipper before it is decoded)."""
    start, meta = split(data)
    rg = meta.get(4).items[0]
    raw_rg = encode_struct(rg)
    field = bytes([type_code]) + uvarint((fid << 1) ^ (fid >> 15)) + value
    footer = data[start:-8]
    at = footer.index(raw_rg)
    patched = footer[:at] + raw_rg[:-1] + field + b"\x00" + footer[at + len(raw_rg) :]
    return assemble(data[:start], patched)


DEEP = 20_000
NESTINGS = {
    "structs": (STRUCT, b"\x1c" * DEEP + b"\x00" * (DEEP + 1)),
    "lists": (LIST, b"\x19" * DEEP + b"\x00"),
    "sets": (10, b"\x1a" * DEEP + b"\x00"),
    "maps": (11, b"\x01\xbb" * DEEP + b"\x00"),
    "map_values": (11, b"\x01\x8b" + b"\x00\x01\x8b" * DEEP),
    "lists_of_structs": (LIST, b"\x1c\x1c" * DEEP + b"\x00"),
    "maps_of_lists_of_maps": (11, b"\x01\x9b\x1b" * DEEP),
}


@pytest.mark.parametrize("where", [with_unknown_field, in_row_group])
@pytest.mark.parametrize("nesting", list(NESTINGS))
def test_deep_nesting(tmp_path, pyarrow_seed, nesting, where):
    type_code, value = NESTINGS[nesting]
    data = where(pyarrow_seed, 100, type_code, value)
    expect_file_error(write(tmp_path, data), match="nested deeper")


def test_deep_nesting_in_a_bloom_header(tmp_path, pyarrow_seed):
    header = b"\x15" + H32 + b"\x1c" * 5000 + b"\x00" * 5001 + b"\x00"
    data = with_filter(pyarrow_seed, header + bytes(32))
    expect_invalid_filter(write(tmp_path, data), "nested deeper")


HUGE = {
    "list_2^32": (LIST, b"\xf5" + uvarint(2**32)),
    "list_2^63": (LIST, b"\xfc" + uvarint(2**63)),
    "list_of_bools": (LIST, b"\xf1" + uvarint(10**9)),
    "set_2^40": (10, b"\xf8" + uvarint(2**40)),
    "map_2^32": (11, uvarint(2**32) + b"\x58"),
    "binary_2^62": (BINARY, uvarint(2**62)),
    "binary_4GiB": (BINARY, uvarint(2**32 - 1) + b"abc"),
    "list_varint_too_long": (LIST, b"\xf5" + b"\xff" * 12),
}


@pytest.mark.parametrize("where", [with_unknown_field, in_row_group])
@pytest.mark.parametrize("kind", list(HUGE))
def test_huge_lengths(tmp_path, pyarrow_seed, kind, where):
    type_code, value = HUGE[kind]
    data = where(pyarrow_seed, 100, type_code, value + bytes(16))
    started = time.perf_counter()
    expect_file_error(write(tmp_path, data), match="cannot fit|runs past|longer than 10")
    assert time.perf_counter() - started < 5


def test_huge_row_group_and_schema_counts(tmp_path, pyarrow_seed):
    """The real lists' headers claim 2^31 elements: refused before any allocation."""
    start, meta = split(pyarrow_seed)
    footer = pyarrow_seed[start:-8]
    for fid in (2, 4):  # schema, row_groups
        raw = meta.field(fid).raw_value
        size_nibble = raw[0] >> 4
        body = raw[1:] if size_nibble != 15 else raw[1 + len(uvarint(len(meta.get(fid).items))) :]
        huge = bytes([0xF0 | STRUCT]) + uvarint(2**31) + body
        at = footer.index(raw)
        patched = footer[:at] + huge + footer[at + len(raw) :]
        data = assemble(pyarrow_seed[:start], patched)
        expect_file_error(write(tmp_path, data), match="cannot fit")


# ---------------------------------------------------------------------------- wrong types
# Regressions: a footer field of another Thrift type than parquet.thrift says used to
# escape as AttributeError / TypeError (found by the fuzz test below).


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.set(2, I32, 7), "schema is not a list of structs"),
        (lambda m: m.set(2, LIST, List(I32, [1, 2])), "schema is not a list of structs"),
        (lambda m: m.set(4, BINARY, b"x"), "row_groups is not a list of structs"),
        (lambda m: m.set(4, LIST, List(I64, [1])), "row_groups is not a list of structs"),
        (
            lambda m: m.get(4).items[0].set(1, I32, 1),
            "row group 0 columns is not a list of structs",
        ),
        (lambda m: m.get(4).items[1].set(3, BINARY, b"100"), "row group 1 has no valid num_rows"),
        (lambda m: m.remove(2), "no schema"),
        (lambda m: m.set(2, LIST, List(STRUCT, [])), "no schema"),
    ],
)
def test_footer_fields_of_the_wrong_type(tmp_path, pyarrow_seed, edit, message):
    expect_file_error(write(tmp_path, edited(pyarrow_seed, edit)), match=message)


def test_chunk_fields_of_the_wrong_type_read_as_absent(tmp_path, pyarrow_seed):
    """Offsets and sizes that are not integers: no crash in inspect or prune."""

    def edit(meta: Struct) -> None:
        md = column_meta(meta, 0, 1)
        md.set(7, LIST, List(I32, [1]))  # total_compressed_size
        md.set(9, BINARY, b"\x04")  # data_page_offset
        md.set(11, STRUCT, Struct())  # dictionary_page_offset
        md.set(4, BINARY, b"zstd")  # codec
        meta.set(3, STRUCT, Struct())  # FileMetaData.num_rows

    path = write(tmp_path, edited(pyarrow_seed, edit))
    footer = read_footer(path)
    chunk = footer.row_groups[0].columns[1]
    assert chunk.total_compressed_size is None and chunk.data_page_offset is None
    assert chunk.dictionary_page_offset is None and chunk.codec == "codec None"
    assert footer.num_rows == 0
    json.dumps(inspect_file(path))
    result = prune(path, "user = 'user_0001'")
    assert result.units[0].may_match


@pytest.mark.parametrize("keep_stats", [True, False])
def test_encoding_stats_of_the_wrong_type_never_prune(tmp_path, pyarrow_seed, keep_stats):
    """Regression: a dictionary is trusted only with well-formed encoding_stats (or,
    without them, encodings); malformed ones raised TypeError in prune."""
    assert not all(u.may_match for u in prune_dictionary(write(tmp_path, pyarrow_seed)))

    def edit(meta: Struct) -> None:
        for rg in meta.get(4).items:
            md = rg.get(1).items[1].get(3)
            for entry in md.get(13).items:
                entry.set(3, LIST, List(I32, [1]))  # count
            md.set(2, LIST, List(LIST, [List(I32, [0])]))  # encodings
            if not keep_stats:
                md.remove(13)

    units = prune_dictionary(write(tmp_path, edited(pyarrow_seed, edit)))
    assert all(u.may_match for u in units), units


def prune_dictionary(path: Path) -> list:
    """Row groups that may hold an absent string, by the dictionary alone."""
    return prune(path, "user = 'user_0001x'", stages=("dictionary",)).units


@pytest.mark.parametrize("value", [Struct(), List(I32, [1]), b"\x01"])
def test_converted_type_of_the_wrong_type(tmp_path, pyarrow_seed, value):
    """Regression: a SchemaElement.converted_type that is not an integer raised
    TypeError (unhashable) in prune's schema mapping; now it is ignored."""
    type_code = STRUCT if isinstance(value, Struct) else LIST if isinstance(value, List) else BINARY

    def edit(meta: Struct) -> None:
        for element in meta.get(2).items[1:]:
            element.set(6, type_code, value)

    path = write(tmp_path, edited(pyarrow_seed, edit))
    assert all(u.may_match for u in prune(path, "small = 1 OR user = 'user_0001'").units)
    json.dumps(inspect_file(path))


def test_maps_of_maps_cannot_recurse():
    """Regression: map keys and values that are maps recursed without a depth limit
    (RecursionError), in the decoder and through the compiled skipper."""
    nested = b"\x01\xbb" * 3000 + b"\x00"
    for raw in (b"\x0b\xc8\x01" + nested, b"\x19\x1c" + b"\x0b\xc8\x01" + nested):
        with pytest.raises(CorruptFileError, match="nested deeper"):
            decode_struct(raw + b"\x00" * 8, name="maps")


def _uncompressed_dictionary_file(path: Path) -> None:
    pq.write_table(seed_table(), path, row_group_size=ROWS_PER_GROUP, compression="none")


def test_dictionary_byte_array_lengths_cannot_overrun(tmp_path):
    """Regression: a BYTE_ARRAY dictionary entry whose length reaches past the room left
    for the others was copied past the end of the output buffer (heap corruption)."""
    from bloomskip.parquet.dictionary import _decode_plain, dictionary_hashes

    payload = np.frombuffer(struct.pack("<I", 996) + bytes(996), np.uint8)
    with pytest.raises(CorruptFileError, match="overrun"):
        _decode_plain(payload, 200, PhysicalType.BYTE_ARRAY, None, "x")

    # The same in a real file: the first entry of row group 0's "user" dictionary
    # claims every byte of the page.
    path = tmp_path / "dictionary.parquet"
    _uncompressed_dictionary_file(path)
    data = bytearray(path.read_bytes())
    md = column_meta(split(bytes(data))[1], 0, 1)
    page_at = md.get(11)
    header, payload_at = decode_struct(bytes(data), page_at)
    size = header.get(3)
    data[payload_at : payload_at + 4] = struct.pack("<I", size - 4)
    path.write_bytes(bytes(data))
    footer = read_footer(path)
    with open(path, "rb") as fh:
        chunk = footer.row_groups[0].columns[1]
        why = dictionary_hashes(fh, footer, chunk, PhysicalType.BYTE_ARRAY, None)
    assert isinstance(why, Unavailable) and "overrun" in why.reason, why
    unit = prune(path, "user = 'nobody'", stages=("dictionary",)).units[0]
    assert unit.may_match, unit


# ---------------------------------------------------------------------------- fuzz

CASE_SECONDS = 2.0  # an operation taking longer (twice) on a case is a failure
HANG_SECONDS = 30.0  # an operation still running is stopped
CASES_PER_BATCH = 1_750
BATCHES = [(name, seed) for seed in range(2) for name in WRITERS]  # 6 x 1,750 = 10,500
PREDICATE = "user IN ('user_0042', 'x') OR id = 250 OR (small IS NULL AND NOT small = 2)"


def _inspect_as_json(path: str) -> object:
    return json.dumps(inspect_file(path))


def _prune_as_json(path: str) -> object:
    result = prune(path, PREDICATE)
    units = result.units
    assert all(isinstance(u.may_match, bool) and u.reason for u in units)
    return json.dumps(result.to_json())


#: Every reader entry point a case runs through; extend here.
OPERATIONS: tuple[tuple[str, Callable[[str], object]], ...] = (
    ("read_footer", read_footer),
    ("read_bloom_filters", read_bloom_filters),
    ("inspect_file", _inspect_as_json),
    ("prune", _prune_as_json),
)

INTERESTING_INTS = (0, 1, -1, 3, 4, 7, 8, 31, 32, 33, 255, 2**15, 2**31 - 1, -(2**31), 2**63 - 1)
INTERESTING_BYTES = (0x00, 0xFF, 0x7F, 0x80, 0x0F, 0xF0, 0x15, 0x19, 0x1B, 0x1C, 0xF9, 0x01)
INSERTS = (
    b"\xff" * 9 + b"\x01",  # a 10-byte varint
    b"\x1c" * 80,  # deep structs
    b"\x19\xfc" + b"\xff" * 4 + b"\x0f",  # a list of 2^32 structs
    b"\x0b\x01\xbb" * 40,  # maps of maps
    b"\x18\xff\xff\xff\xff\x0f",  # a 4 GiB binary
    b"\x00",
)


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang


class Seed:
    """A seed file split for mutation, with the byte ranges worth mutating."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.start, _ = split(data)
        footer = read_footer(io.BytesIO(data), name="seed")
        spans = []
        for rg in footer.row_groups:
            for c in rg.columns:
                if c.bloom_filter_offset is not None:
                    spans.append((c.bloom_filter_offset, c.bloom_filter_length or 64))
                begin = c.dictionary_page_offset or c.data_page_offset
                spans.append((begin, 64))  # the first page header
        self.spans = spans


def _int_fields(s: Struct, out: list) -> None:
    for f in s.fields:
        if f.type in (4, 5, 6):  # i16, i32, i64
            out.append((s, f))
        elif f.type == STRUCT:
            _int_fields(f.value, out)
        elif f.type in (LIST, 10) and f.value.elem_type == STRUCT:
            for item in f.value.items:
                _int_fields(item, out)


def _edit_footer_field(rng: random.Random, footer: bytes, size: int) -> bytes:
    """Set one integer of the footer to an interesting value or to another type."""
    meta, _ = decode_struct(footer)
    fields: list = []
    _int_fields(meta, fields)
    if not fields:
        return footer
    s, f = rng.choice(fields)
    k = rng.random()
    if k < 0.15:
        s.set(f.id, BINARY, rng.randbytes(rng.randrange(4)))
    elif k < 0.25:
        s.set(f.id, STRUCT, Struct())
    elif k < 0.3:
        s.remove(f.id)
    else:
        bits = {4: 16, 5: 32, 6: 64}[f.type]
        v = rng.choice((*INTERESTING_INTS, size, size - 8, rng.randrange(-8, size + 8)))
        v = max(-(2 ** (bits - 1)), min(2 ** (bits - 1) - 1, v))
        s.set(f.id, f.type, v)
    return encode_struct(meta)


def _mutate_bytes(rng: random.Random, buf: bytearray, lo: int, hi: int) -> None:
    """One byte-level mutation of ``buf`` at a position in [lo, hi)."""
    if not buf:
        return
    lo = max(0, min(lo, len(buf) - 1))
    pos = rng.randrange(lo, max(lo + 1, min(hi, len(buf))))
    op = rng.random()
    if op < 0.35:
        buf[pos] ^= 1 << rng.randrange(8)
    elif op < 0.6:
        buf[pos] = rng.choice(INTERESTING_BYTES) if rng.random() < 0.6 else rng.randrange(256)
    elif op < 0.75:
        insert = rng.choice(INSERTS) if rng.random() < 0.5 else rng.randbytes(rng.randint(1, 8))
        buf[pos:pos] = insert
    elif op < 0.92:
        del buf[pos : pos + rng.randint(1, 8)]
    else:
        del buf[pos:]


def mutate(seed: Seed, rng: random.Random) -> bytes:
    """A mutated copy of the seed: 1-4 edits to the footer, the filters and page headers."""
    body = bytearray(seed.data[: seed.start])
    footer = bytes(seed.data[seed.start : -8])
    for _ in range(rng.randint(1, 4)):
        k = rng.random()
        if k < 0.2:
            with contextlib.suppress(BloomskipError):  # an earlier edit broke the footer
                footer = _edit_footer_field(rng, footer, len(seed.data))
        elif k < 0.65:
            buf = bytearray(footer)
            _mutate_bytes(rng, buf, 0, len(buf))
            footer = bytes(buf)
        else:
            offset, length = rng.choice(seed.spans)
            _mutate_bytes(rng, body, offset, offset + length)
    k = rng.random()
    if k < 0.85:
        length = len(footer)  # consistent: the footer is parsed
    elif k < 0.95:
        length = len(seed.data) - 8 - seed.start  # the seed's
    else:
        length = rng.choice((0xFFFFFFFF, len(footer) + 1, len(body) + len(footer) + 1, 0))
    out = bytes(body) + footer + struct.pack("<I", length) + b"PAR1"
    if rng.random() < 0.03:
        out = out[: rng.randrange(len(out))]
    return out


#: When this worker's current operation started ("since", None between operations).
_RUNNING: dict[str, float | None] = {}


def _watchdog() -> None:
    """End the worker if an operation runs far past the alarm (stuck where a signal
    cannot interrupt it, e.g. in compiled code): the parent then reports the case."""
    while True:
        time.sleep(1)
        started = _RUNNING.get("since")
        if started is not None and time.monotonic() - started > 2 * HANG_SECONDS:
            os._exit(70)


def _run(op: Callable[[str], object], path: str, outcomes: dict) -> tuple[str | None, float]:
    """Run one operation: (the problem, if any; seconds taken)."""
    started = time.perf_counter()
    _RUNNING["since"] = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    problem = None
    try:
        op(path)
        outcomes["ok"] += 1
    except BloomskipError as e:
        outcomes["typed"] += 1
        if isinstance(e, CorruptFileError | UnsupportedFileError) and path not in str(e):
            problem = f"the error does not name the file: {e}"
    except _Hang:
        problem = f"hang (stopped after {HANG_SECONDS} s)"
    except Exception as e:
        frames = traceback.extract_tb(e.__traceback__)[-3:]
        where = " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in frames[::-1])
        problem = f"{type(e).__name__}: {str(e)[:200]} at {where}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _RUNNING["since"] = None
    return problem, time.perf_counter() - started


def run_batch(seed_path: str, seed: int, cases: int, workdir: str) -> dict:
    """Run ``cases`` mutations of one seed file through :data:`OPERATIONS`.

    Returns the number of cases run, how many operations gave a result or a typed error,
    and the problems: untyped exceptions, errors that do not name the file, slow cases
    and hangs, each with its case number; the bytes of each failing case are kept in
    ``workdir`` (and ``<seed file>-<seed>.parquet`` there is always the case running,
    should the worker die). Runs in a worker process.
    """
    source = Seed(Path(seed_path).read_bytes())
    name = Path(seed_path).stem
    path = os.path.join(workdir, f"{name}-{seed}.parquet")
    problems: list[str] = []
    outcomes = {"ok": 0, "typed": 0}
    signal.signal(signal.SIGALRM, _alarm)
    if "watchdog" not in _RUNNING:  # one per worker process
        _RUNNING["watchdog"] = 1.0
        threading.Thread(target=_watchdog, daemon=True).start()
    for _, op in OPERATIONS:  # warm up: kernels compile (or load) outside the timing
        op(seed_path)
    for i in range(cases):
        data = mutate(source, random.Random(f"{name}:{seed}:{i}"))
        with open(path, "wb") as fh:
            fh.write(data)
        for op_name, op in OPERATIONS:
            problem, elapsed = _run(op, path, outcomes)
            if problem is None and elapsed > CASE_SECONDS:
                # Slow once may be a kernel compiling for a type the mutation made up.
                problem, elapsed = _run(op, path, outcomes)
                if problem is None and elapsed > CASE_SECONDS:
                    problem = f"took {elapsed:.1f} s twice"
            if problem:
                keep = os.path.join(workdir, f"failure-{name}-{seed}-{i}.parquet")
                with open(keep, "wb") as fh:
                    fh.write(data)
                problems.append(f"{name} seed {seed} case {i} {op_name}: {problem} ({keep})")
    return {"cases": cases, "problems": problems, **outcomes}


@pytest.mark.slow
def test_fuzz_mutated_files_give_typed_errors_or_results(seeds, tmp_path):
    """10,500 mutated files, each through every operation, in two worker processes."""
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=2, mp_context=get_context("spawn")) as pool:
        futures = {
            pool.submit(run_batch, str(seeds[name]), seed, CASES_PER_BATCH, str(tmp_path)): (
                name,
                seed,
            )
            for name, seed in BATCHES
        }
        results, unfinished = [], []
        for future, (name, seed) in futures.items():
            try:
                results.append(future.result(timeout=900))
            except BrokenProcessPool:
                unfinished.append(str(tmp_path / f"{name}-{seed}.parquet"))
    # A worker that dies (a native crash) leaves the case it was running on disk.
    assert not unfinished, "a fuzz worker died; the cases being run: " + ", ".join(unfinished)
    elapsed = time.perf_counter() - started
    problems = [p for r in results for p in r["problems"]]
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:30])
    cases = sum(r["cases"] for r in results)
    assert cases >= 10_000
    ok, typed = sum(r["ok"] for r in results), sum(r["typed"] for r in results)
    # Mutations must reach past the first checks: many cases parse, many are refused.
    assert ok > 0.2 * cases * len(OPERATIONS) and typed > 0.2 * cases * len(OPERATIONS)
    print(f"fuzz: {cases} cases, {ok} results, {typed} typed errors in {elapsed:.1f} s")


def test_mutations_are_reproducible(seeds):
    """A failing case can be rebuilt from its seed file, seed and case number."""
    source = Seed(seeds["pyarrow"].read_bytes())
    first = [mutate(source, random.Random(f"pyarrow:0:{i}")) for i in range(20)]
    again = [mutate(source, random.Random(f"pyarrow:0:{i}")) for i in range(20)]
    assert first == again and len(set(first)) == 20
