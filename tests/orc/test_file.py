"""ORC file structure from our own parse, against the writers' and readers' own views.

* **wire and framing units**: varints, zigzag, packed and unpacked repeated fields,
  unknown fields, merged singular messages; compression chunks of every codec, with
  sizes taken from pyarrow's own compressors.
* **real files** from pyarrow (ORC C++ 2.2), pyorc (ORC C++ 2.3) and Spark (ORC Java
  2.3), for every codec each writes: tail, writer, stripes and schema agree with
  pyarrow's and pyorc's readers; row groups tile every row and line up with the row
  index statistics; every bloom filter column has one filter per row group with ORC's
  own sizing for the writer's fpp; nested types get pre-order ids and ORC Java's names.
* **hostile files**: targeted edits of the tail, stripe footers and compression chunks,
  and a seeded fuzz over mutated small files in two spawned workers; only typed
  :class:`~bloomskip.errors.BloomskipError` s or results are accepted.
"""

from __future__ import annotations

import glob
import io
import itertools
import json
import math
import os
import random
import signal
import struct
import time
import traceback
import zlib
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from decimal import Decimal
from multiprocessing import get_context
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as po
import pytest

from bloomskip.errors import BloomskipError, CorruptFileError, UnsupportedFileError
from bloomskip.orc import proto, read_orc
from bloomskip.orc.compression import (
    LZ4,
    NONE,
    SNAPPY,
    ZLIB,
    ZSTD,
    Compression,
    compression_of,
    decompress,
    lz4_block_size,
    zstd_content_size,
)
from bloomskip.orc.file import BLOOM_FILTER, BLOOM_FILTER_UTF8, MAX_DEPTH, OrcFile
from bloomskip.orc.inspect import inspect_orc
from tests.support.orc_wire import (
    Seed,
    Tail,
    encode,
    fields,
    frame_deflate,
    frame_original,
    lfield,
    mutate,
    occurrences,
    set_field,
    tag,
    uvarint,
    vfield,
)

pyorc = pytest.importorskip("pyorc")

# ------------------------------------------------------------------------- writers

CODECS = ["uncompressed", "zlib", "snappy", "lz4", "zstd"]
PYORC_CODECS = {
    "uncompressed": "NONE",
    "zlib": "ZLIB",
    "snappy": "SNAPPY",
    "lz4": "LZ4",
    "zstd": "ZSTD",
}
CODEC_KINDS = {"uncompressed": NONE, "zlib": ZLIB, "snappy": SNAPPY, "lz4": LZ4, "zstd": ZSTD}


def orc_sizing(n: int, fpp: float) -> tuple[int, int]:
    """(k, bytes) of ORC's filter for ``n`` expected entries (Java BloomFilter sizing)."""
    nb = int(-n * math.log(fpp) / (math.log(2) * math.log(2)))
    m = nb + (64 - nb % 64)
    return max(1, math.floor(m / n * math.log(2) + 0.5)), m // 8


def nested_table(n: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "name": pa.array([None if i % 11 == 0 else f"n-{i:05d}-é" for i in range(n)]),
            "rec": pa.array(
                [{"x": i % 97, "tags": [f"t{i % 5}", f"u{i % 3}"]} for i in range(n)],
                pa.struct([("x", pa.int32()), ("tags", pa.list_(pa.string()))]),
            ),
            "attrs": pa.array(
                [[(f"k{i % 4}", float(i))] for i in range(n)], pa.map_(pa.string(), pa.float64())
            ),
            "d": pa.array([i % 365 for i in range(n)], pa.int32()).cast(pa.date32()),
        }
    )


#: pre-order ids and ORC Java names of ``nested_table``
NESTED_COLUMNS = [
    (0, "", "STRUCT"),
    (1, "id", "LONG"),
    (2, "name", "STRING"),
    (3, "rec", "STRUCT"),
    (4, "rec.x", "INT"),
    (5, "rec.tags", "LIST"),
    (6, "rec.tags._elem", "STRING"),
    (7, "attrs", "MAP"),
    (8, "attrs._key", "STRING"),
    (9, "attrs._value", "DOUBLE"),
    (10, "d", "DATE"),
]
PYARROW_BLOOM_IDS = [1, 2, 4, 6, 8, 10]


def arrow_preorder(schema: pa.Schema) -> list[tuple[str, pa.DataType]]:
    """(ORC name, Arrow type) of every column, in ORC's pre-order, from Arrow's schema."""
    out: list[tuple[str, pa.DataType]] = [("", pa.struct(list(schema)))]

    def walk(prefix: str, t: pa.DataType) -> None:
        children: list[tuple[str, pa.DataType]] = []
        if pa.types.is_struct(t):
            children = [(t.field(i).name, t.field(i).type) for i in range(t.num_fields)]
        elif pa.types.is_map(t):
            children = [("_key", t.key_type), ("_value", t.item_type)]
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            children = [("_elem", t.value_type)]
        elif pa.types.is_union(t):
            children = [(str(i), t.field(i).type) for i in range(t.num_fields)]
        for name, ct in children:
            full = f"{prefix}.{name}" if prefix else name
            out.append((full, ct))
            walk(full, ct)

    walk("", out[0][1])
    return out


@pytest.fixture(scope="module")
def pyarrow_files(tmp_path_factory) -> dict[str, Path]:
    """Per codec: 25,000 rows in several stripes (row groups of 1,000), nested columns."""
    folder = tmp_path_factory.mktemp("orc-pyarrow")
    out = {}
    for codec in CODECS:
        path = folder / f"{codec}.orc"
        po.write_table(
            nested_table(25_000),
            path,
            compression=codec,
            stripe_size=8 * 1024,
            row_index_stride=1000,
            bloom_filter_columns=PYARROW_BLOOM_IDS,
        )
        out[codec] = path
    return out


def write_pyorc(path: Path, codec: str, rows: int = 12_000, stride: int = 2000) -> None:
    schema = (
        "struct<i:bigint,s:string,u:uniontype<int,string>,m:map<string,array<int>>,"
        "dec:decimal(10,3),ts:timestamp>"
    )
    import datetime as dt
    import decimal
    import zoneinfo

    with open(path, "wb") as fh:
        w = pyorc.Writer(
            fh,
            schema,
            bloom_filter_columns=["i", "s", "dec", "ts"],
            bloom_filter_fpp=0.01,
            compression=getattr(pyorc.CompressionKind, PYORC_CODECS[codec]),
            row_index_stride=stride,
            stripe_size=32 * 1024,
            timezone=zoneinfo.ZoneInfo("America/Los_Angeles"),
        )
        base = dt.datetime(2020, 3, 7, tzinfo=dt.UTC)
        for k in range(rows):
            w.write(
                (
                    k,
                    f"s{k}",
                    k if k % 2 == 0 else str(k),
                    {str(k % 7): [k, k + 1]},
                    decimal.Decimal(k) / 8,
                    base + dt.timedelta(minutes=17 * k),
                )
            )
        w.close()


PYORC_COLUMNS = [
    (0, "", "STRUCT"),
    (1, "i", "LONG"),
    (2, "s", "STRING"),
    (3, "u", "UNION"),
    (4, "u.0", "INT"),
    (5, "u.1", "STRING"),
    (6, "m", "MAP"),
    (7, "m._key", "STRING"),
    (8, "m._value", "LIST"),
    (9, "m._value._elem", "INT"),
    (10, "dec", "DECIMAL"),
    (11, "ts", "TIMESTAMP"),
]


@pytest.fixture(scope="module")
def pyorc_files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("orc-pyorc")
    out = {}
    for codec in CODECS:
        out[codec] = folder / f"{codec}.orc"
        write_pyorc(out[codec], codec)
    return out


# --------------------------------------------------------------- agreement checks


def check_against_readers(path: Path, f: OrcFile) -> None:
    """Tail, writer, stripes and schema as pyarrow's and pyorc's readers see them."""
    ref = po.ORCFile(path)
    assert f.file_size == ref.file_length == path.stat().st_size
    assert f.postscript.footer_length == ref.file_footer_length
    assert f.postscript.metadata_length == ref.stripe_statistics_length
    assert f.footer.content_length == ref.content_length
    assert f.num_rows == ref.nrows and len(f.stripes) == ref.nstripes
    assert f.row_index_stride == ref.row_index_stride
    assert f.compression.block_size == ref.compression_size
    assert ".".join(map(str, f.writer.file_version)) == ref.file_version
    assert f.writer.writer_name == {"ORC_CPP": "ORC_CPP", "ORC_JAVA": "ORC_JAVA"}[ref.writer]
    assert f.writer.writer_version_name.replace("-", "_") == ref.writer_version
    assert ref.software_version.endswith(" " + f.writer.software_version)
    with open(path, "rb") as fh:
        r = pyorc.Reader(fh)
        assert int(r.compression) == f.compression.kind
        stripes = list(r.iter_stripes())
        assert len(stripes) == len(f.stripes)
        for s, theirs in zip(f.stripes, stripes, strict=True):
            assert (s.offset, s.first_row, s.num_rows) == (
                theirs.bytes_offset,
                theirs.row_offset,
                len(theirs),
            )
            assert s.index_length + s.data_length + s.footer_length == theirs.bytes_length
            assert f.writer_timezone(s.index) == (theirs.writer_timezone or None)
            with_filters = {c.id for c in f.columns if f.bloom_filters(s.index, c.id)}
            assert with_filters == set(theirs.bloom_filter_columns)
    for s in f.stripes[:3]:
        assert ref.read_stripe(s.index).num_rows == s.num_rows
    # Schema: pyarrow's Arrow schema walked in ORC's pre-order gives our names.
    names = [name for name, _ in arrow_preorder(ref.schema)]
    assert [c.name for c in f.columns] == names


def check_tree(f: OrcFile) -> None:
    """Pre-order ids: a parent precedes its subtree, which is contiguous."""
    for c in f.columns:
        assert f.column(c.name) is c and f.column(c.id) is c
        for child in c.children:
            assert f.columns[child].parent == c.id
            assert f.columns[child].path[:-1] == c.path
        if c.children:
            assert c.children[0] == c.id + 1


def check_row_groups(f: OrcFile) -> None:
    """Row groups tile every row, stripe by stripe, and match each row index."""
    groups = f.row_groups()
    assert groups[0].first_row == 0
    for a, b in itertools.pairwise(groups):
        assert b.first_row == a.first_row + a.num_rows
    assert sum(g.num_rows for g in groups) == f.num_rows
    stride = f.row_index_stride
    for s in f.stripes:
        mine = f.row_groups(s.index)
        assert len(mine) == math.ceil(s.num_rows / stride)
        assert all(g.num_rows == stride for g in mine[:-1])
        assert 0 < mine[-1].num_rows <= stride
        root = f.row_index(s.index, 0)
        assert root is not None and len(root) == len(mine)
        for g, entry in zip(mine, root, strict=True):
            assert entry.statistics.number_of_values == g.num_rows


def check_blooms(f: OrcFile, columns: list[int], fpp: float) -> None:
    """Each listed column has one filter per row group, of ORC's size for ``fpp``."""
    k, nbytes = orc_sizing(f.row_index_stride, fpp)
    for s in f.stripes:
        for cid in range(len(f.columns)):
            bf = f.bloom_filters(s.index, cid)
            if cid not in columns:
                assert bf is None, (s.index, cid)
                continue
            assert bf is not None, (s.index, cid)
            assert bf.stream_kind == BLOOM_FILTER_UTF8 and bf.kind == "BLOOM_FILTER_UTF8"
            assert bf.bloom_encoding == 1
            assert len(bf.filters) == f.num_row_groups(s.index)
            for j in range(len(bf.filters)):
                assert bf.num_hash_functions(j) == k
                assert len(bf.bitset(j)) == nbytes
                assert bf.filters[j].bitset == b""  # no legacy words in kind 8
            assert any(any(bf.bitset(j)) for j in range(len(bf.filters)))


def check_int_stats(f: OrcFile, column: int) -> None:
    """A column holding its row number: each row group's min/max are its first/last row."""
    for g in f.row_groups():
        entry = f.row_index(g.stripe, column)[g.index]
        st = entry.statistics.int_statistics
        assert (st.minimum, st.maximum) == (g.first_row, g.first_row + g.num_rows - 1)
        assert entry.statistics.has_null is False


# ------------------------------------------------------------------------ pyarrow


@pytest.mark.parametrize("codec", CODECS)
def test_pyarrow_files(pyarrow_files, codec):
    path = pyarrow_files[codec]
    f = read_orc(path)
    assert f.compression.kind == CODEC_KINDS[codec]
    assert f.writer.writer == 1 and f.writer.writer_version == 6
    assert f.writer.software_version == "2.2.2" and f.writer.calendar is None
    assert len(f.stripes) >= 2
    assert [(c.id, c.name, c.kind_name) for c in f.columns] == NESTED_COLUMNS
    check_tree(f)
    check_against_readers(path, f)
    check_row_groups(f)
    check_blooms(f, PYARROW_BLOOM_IDS, 0.05)
    check_int_stats(f, 1)
    # statistics of other types decode as their kinds
    entry = f.row_index(0, 2)[0].statistics
    assert entry.has_null is True and entry.string_statistics.minimum.startswith(b"n-")
    assert f.row_index(0, 10)[0].statistics.date_statistics.minimum == 0
    meta = f.metadata().stripe_statistics
    assert len(meta) == len(f.stripes)
    assert [m[1].number_of_values for m in meta] == [s.num_rows for s in f.stripes]
    assert all(f.writer_timezone(s.index) == "GMT" for s in f.stripes)


def test_pyarrow_multi_stripe_and_partial_row_groups(tmp_path):
    """Stripes of odd sizes: row groups restart at each stripe, the last one shorter."""
    path = tmp_path / "odd.orc"
    rng = random.Random(7)
    t = pa.table(
        {
            "id": pa.array(range(30_001), pa.int64()),
            "pad": pa.array([rng.randbytes(8).hex() for _ in range(30_001)]),
        }
    )
    po.write_table(
        t,
        path,
        compression="zstd",
        stripe_size=16 * 1024,
        row_index_stride=777,
        bloom_filter_columns=[1],
    )
    f = read_orc(path)
    assert len(f.stripes) > 2
    assert any(s.num_rows % 777 for s in f.stripes)
    check_row_groups(f)
    check_int_stats(f, 1)
    check_blooms(f, [1], 0.05)


def test_pyorc_without_index(tmp_path):
    """A file without row index: one unit per stripe, no indexes, no filters."""
    path = tmp_path / "noindex.orc"
    with open(path, "wb") as fh, pyorc.Writer(fh, "struct<a:bigint>", row_index_stride=0) as w:
        w.writerows((i,) for i in range(5000))
    f = read_orc(path)
    assert f.row_index_stride == 0
    assert [(g.first_row, g.num_rows) for g in f.row_groups()] == [(0, 5000)]
    assert f.row_index(0, 1) is None and f.bloom_filters(0, 1) is None


def test_empty_file(tmp_path):
    path = tmp_path / "empty.orc"
    po.write_table(pa.table({"a": pa.array([], pa.int64())}), path)
    f = read_orc(path)
    assert f.num_rows == 0 and f.stripes == () and f.row_groups() == ()
    assert inspect_orc(path)["row_groups"] == []


# -------------------------------------------------------------------------- pyorc


@pytest.mark.parametrize("codec", CODECS)
def test_pyorc_files(pyorc_files, codec):
    path = pyorc_files[codec]
    f = read_orc(path)
    assert f.compression.kind == CODEC_KINDS[codec]
    assert f.writer.writer == 1 and f.writer.software_version == "2.3.1"
    assert [(c.id, c.name, c.kind_name) for c in f.columns] == PYORC_COLUMNS
    dec = f.column("dec")
    assert (dec.precision, dec.scale, dec.type_name) == (10, 3, "decimal(10,3)")
    check_tree(f)
    check_against_readers(path, f)
    check_row_groups(f)
    check_int_stats(f, 1)
    check_blooms(f, [1, 2, 10, 11], 0.01)
    assert {f.writer_timezone(s.index) for s in f.stripes} == {"America/Los_Angeles"}
    ts = f.row_index(0, 11)[0].statistics.timestamp_statistics
    # 2020-03-07T00:00Z is 2020-03-06 16:00 in Los Angeles: statistics (like the bloom
    # filters) hold the writer-zone wall clock as UTC milliseconds; no zone-local fields
    assert ts.minimum_utc == 1583510400000 and ts.minimum is None
    decs = f.row_index(0, 10)[0].statistics.decimal_statistics
    first = f.row_groups(0)[0]
    assert Decimal(decs.minimum) == 0 and Decimal(decs.maximum) == Decimal(first.num_rows - 1) / 8
    for s in f.stripes:
        enc = f.column_encoding(s.index, 1)
        assert enc.bloom_encoding == 1 and enc.kind in (0, 2)


def test_inspect_orc(pyorc_files, pyarrow_files):
    report = inspect_orc(pyorc_files["zstd"])
    json.dumps(report)
    assert report["format"] == "orc" and report["compression"] == "ZSTD"
    assert report["writer"]["writer_name"] == "ORC_CPP"
    assert report["writer"]["software_version"] == "2.3.1"
    units = report["row_groups"]
    assert [u["row_group"] for u in units] == list(range(len(units)))
    assert sum(u["num_rows"] for u in units) == report["num_rows"] == 12_000
    k, nbytes = orc_sizing(2000, 0.01)
    for u in units:
        by_name = {c["column"]: c for c in u["columns"]}
        assert "" not in by_name  # the root has no filter
        for name in ("i", "s", "dec", "ts"):
            c = by_name[name]
            assert (c["filter"], c["kind"], c["k"], c["bytes"]) == (
                "ok",
                "BLOOM_FILTER_UTF8",
                k,
                nbytes,
            )
            assert c["bloom_encoding"] == 1
        assert by_name["u.0"]["filter"] == "absent"
    other = inspect_orc(pyarrow_files["lz4"])
    assert other["stripes"][0]["writer_timezone"] == "GMT"
    assert other["columns"][7] == {"id": 7, "name": "attrs", "type": "map", "parent": 0}


# -------------------------------------------------------------------------- Spark


def spark_frame(spark, n: int):
    return spark.sql(
        f"""SELECT id AS l, CAST(id AS STRING) AS s,
            named_struct('x', CAST(id % 100 AS INT), 'y', array(id, id + 1)) AS st,
            map(CAST(id % 10 AS STRING), id) AS m,
            CAST(id / 8 AS DECIMAL(12, 3)) AS dec,
            TIMESTAMP '2020-03-08 00:00:00' + make_interval(0, 0, 0, 0, 0, CAST(id AS INT), 0)
              AS ts
            FROM range(0, {n}, 1, 1)"""
    )


SPARK_COLUMNS = [
    (0, "", "STRUCT"),
    (1, "l", "LONG"),
    (2, "s", "STRING"),
    (3, "st", "STRUCT"),
    (4, "st.x", "INT"),
    (5, "st.y", "LIST"),
    (6, "st.y._elem", "LONG"),
    (7, "m", "MAP"),
    (8, "m._key", "STRING"),
    (9, "m._value", "LONG"),
    (10, "dec", "DECIMAL"),
    (11, "ts", "TIMESTAMP"),
]


@pytest.mark.spark
def test_spark_files(spark, tmp_path):
    """ORC Java through Spark, every codec; a map column marks its children too."""
    frame = spark_frame(spark, 30_000)
    jvm_zone = spark.sparkContext._jvm.java.util.TimeZone.getDefault().getID()
    for codec in ["none", "zlib", "snappy", "lz4", "zstd"]:
        out = tmp_path / codec
        (
            frame.write.option("orc.bloom.filter.columns", "l,s,st.x,m,dec,ts")
            .option("orc.row.index.stride", "4000")
            .option("orc.stripe.size", "65536")
            .option("compression", codec)
            .orc(str(out))
        )
        (path,) = glob.glob(str(out / "*.orc"))
        f = read_orc(path)
        assert f.compression.name == {"none": "NONE"}.get(codec, codec.upper())
        assert (f.writer.writer, f.writer.writer_version) == (0, 9)
        assert len(f.stripes) >= 2, len(f.stripes)
        assert f.writer.software_version == "2.3.0" and f.writer.calendar_name == (
            "JULIAN_GREGORIAN"
        )
        assert [(c.id, c.name, c.kind_name) for c in f.columns] == SPARK_COLUMNS
        assert f.column("dec").type_name == "decimal(12,3)"
        assert f.column("ts").attributes == {"spark.sql.catalyst.type": "timestamp"}
        check_tree(f)
        check_against_readers(Path(path), f)
        check_row_groups(f)
        check_int_stats(f, 1)
        check_blooms(f, [1, 2, 4, 7, 8, 9, 10, 11], 0.01)
        # the JVM's default zone, not the session's
        assert {f.writer_timezone(s.index) for s in f.stripes} == {jvm_zone}


@pytest.mark.spark
def test_spark_legacy_streams(spark, tmp_path):
    """``write.version=original`` adds BLOOM_FILTER streams: UTF8 ones are preferred, and
    the legacy ones (read when the UTF8 stream is gone) hold the same words."""
    out = tmp_path / "original"
    (
        spark_frame(spark, 9_000)
        .select("l", "s")
        .write.option("orc.bloom.filter.columns", "l,s")
        .option("orc.bloom.filter.write.version", "original")
        .option("orc.row.index.stride", "4000")
        .option("compression", "none")
        .orc(str(out))
    )
    (path,) = glob.glob(str(out / "*.orc"))
    data = Path(path).read_bytes()
    f = read_orc(data, name="original")
    assert f.writer_timezone(0) is None  # Java writes a zone only for timestamp schemas
    utf8 = {c: f.bloom_filters(0, c) for c in (1, 2)}
    for bf in utf8.values():
        assert bf.kinds_present == (BLOOM_FILTER, BLOOM_FILTER_UTF8)
        assert bf.stream_kind == BLOOM_FILTER_UTF8 and len(bf.filters) == 3
    # Turn the UTF8 streams into SECONDARY streams (same byte count, so nothing moves).
    s = f.stripes[0]
    sf = fields(data[s.footer_offset : s.footer_offset + s.footer_length])
    for fl in sf:
        if fl[0] == 1:
            st = fields(fl[2])
            if occurrences(st, 1)[0][2] == BLOOM_FILTER_UTF8:
                set_field(st, 1, 5)
                fl[2] = encode(st)
    raw = encode(sf)
    assert len(raw) == s.footer_length
    edited = data[: s.footer_offset] + raw + data[s.footer_offset + len(raw) :]
    g = read_orc(edited, name="legacy")
    for c in (1, 2):
        legacy = g.bloom_filters(0, c)
        assert legacy.stream_kind == BLOOM_FILTER and legacy.kind == "BLOOM_FILTER"
        assert legacy.kinds_present == (BLOOM_FILTER,)
        for j in range(3):
            assert legacy.filters[j].utf8bitset is None
            assert legacy.bitset(j) == utf8[c].bitset(j)
            assert legacy.num_hash_functions(j) == utf8[c].num_hash_functions(j) == 7
            words = orc_sizing(4000, 0.01)[1] // 8
            assert legacy.filters[j].bitset_words == len(legacy.bitset(j)) // 8 == words


# ------------------------------------------------------------------ wire and framing


def test_varints_and_zigzag():
    for n in (0, 1, 127, 128, 300, 2**32, 2**63, 2**64 - 1):
        assert proto.read_varint(uvarint(n), 0, len(uvarint(n)), "t") == (n, len(uvarint(n)))
    assert [proto.zigzag(n) for n in (0, 1, 2, 3, 2**64 - 1)] == [0, -1, 1, -2, -(2**63)]
    assert proto.zigzag32(2**32 + 3) == -2  # only the low 32 bits count
    assert proto.int32(2**64 - 1) == -1 and proto.int64(2**63) == -(2**63)
    # a 10-byte varint with bits past 64 keeps 64; 11 bytes is corrupt
    ten = b"\xff" * 9 + b"\x7f"
    assert proto.read_varint(ten, 0, 10, "t")[0] == 2**64 - 1
    with pytest.raises(CorruptFileError, match="longer than 10 bytes"):
        proto.read_varint(b"\xff" * 10 + b"\x01", 0, 11, "t")
    with pytest.raises(CorruptFileError, match="past the end"):
        proto.read_varint(b"\x80\x80", 0, 2, "t")


def test_messages_decode_like_protobuf():
    # packed and unpacked repeated, unknown fields of every wire type, 64-bit values
    t = (
        vfield(1, 12)
        + lfield(2, uvarint(1) + uvarint(300))
        + vfield(2, 7)
        + lfield(3, b"a")
        + lfield(3, b"b")
        + tag(99, proto.I64)
        + b"\0" * 8
        + tag(98, proto.I32)
        + b"\0" * 4
        + lfield(97, b"\xff" * 3)
        + vfield(96, 2**64 - 1)
        + vfield(5, 38)
        + lfield(7, lfield(1, b"k") + lfield(2, b"v"))
    )
    typ = proto.decode(proto.decode_type, t, "t")
    assert typ == proto.Type(12, (1, 300, 7), ("a", "b"), None, 38, None, (("k", "v"),))
    # a singular scalar seen twice keeps the last; a known field of another wire type is
    # skipped; singular messages seen twice are merged
    stats = (
        vfield(1, 5)
        + vfield(1, 9)
        + lfield(10, b"x")
        + lfield(2, vfield(1, proto_zz(-3)))
        + lfield(2, vfield(2, proto_zz(4)))
    )
    cs = proto.decode(proto.decode_column_statistics, stats, "t")
    assert cs.number_of_values == 9 and cs.has_null is None
    assert cs.int_statistics == proto.IntegerStatistics(-3, 4, None)
    # doubles, int32 nanos, bytes strings
    more = (
        lfield(3, tag(1, proto.I64) + struct.pack("<d", -1.5))
        + lfield(9, vfield(5, 2**64 - 1))
        + lfield(4, lfield(1, "é".encode()) + lfield(4, b"lo"))
        + vfield(10, 1)
    )
    cs = proto.decode(proto.decode_column_statistics, more, "t")
    assert cs.double_statistics.minimum == -1.5
    assert cs.timestamp_statistics.minimum_nanos == -1
    assert (
        cs.string_statistics.minimum == "é".encode() and cs.string_statistics.lower_bound == b"lo"
    )
    assert cs.has_null is True


def proto_zz(n: int) -> int:
    return (n << 1) ^ (n >> 63) if n < 0 else n << 1


def test_bloom_filter_messages():
    words = [3, 2**64 - 1, 0]
    legacy = vfield(1, 4) + b"".join(tag(2, proto.I64) + w.to_bytes(8, "little") for w in words)
    packed = vfield(1, 4) + lfield(2, b"".join(w.to_bytes(8, "little") for w in words))
    utf8 = vfield(1, 4) + lfield(3, b"\x01" * 16)
    index = lfield(1, legacy) + lfield(1, packed) + lfield(1, utf8) + lfield(1, b"")
    bfi = proto.decode(proto.decode_bloom_filter_index, index, "t")
    a, b, c, d = bfi.bloom_filters
    assert a == b and a.bitset == b"".join(w.to_bytes(8, "little") for w in words)
    assert a.bitset_words == 3 and a.words() == tuple(words) and a.utf8bitset is None
    assert c.utf8bitset == b"\x01" * 16 and c.bitset == b""
    assert d == proto.BloomFilter(None, b"", None)
    with pytest.raises(CorruptFileError, match="packed fixed64"):
        proto.decode(proto.decode_bloom_filter_index, lfield(1, lfield(2, b"x" * 7)), "t")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"\x0a\x05abc", "claims 5 bytes but 3 are left"),
        (b"\x0b", "group"),
        (b"\x0c", "group"),
        (b"\x0e", "invalid wire type 6"),
        (b"\x0f", "invalid wire type 7"),
        (b"\x00\x01", "invalid field number 0"),
        (b"\x09\x01\x02", "fixed64 field 1 runs past"),
        (b"\x0d\x01", "fixed32 field 1 runs past"),
        (b"\x08", "varint runs past the end"),
        (b"\x08" + b"\xff" * 11, "longer than 10 bytes"),
        (b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\x7f", "claims"),
    ],
)
def test_corrupt_wire(raw, message):
    for decoder in (proto.decode_footer, proto.decode_row_index, proto.decode_stripe_footer):
        with pytest.raises(CorruptFileError, match=message):
            proto.decode(decoder, raw, "f.orc: part at offset 7")


def test_corrupt_nested_wire_names_the_message():
    bad = lfield(1, lfield(2, b"\x0a\x09"))  # entry 0 -> statistics -> truncated field
    with pytest.raises(CorruptFileError, match=r"f.orc: row index entry 0 statistics"):
        proto.decode(proto.decode_row_index, bad, "f.orc: row index")


DATA = b"".join(f"row {i:06d} value {i * 7919 % 1000:03d};".encode() for i in range(20_000))


def codec_chunks(kind: int, data: bytes, block: int) -> bytes:
    """``data`` framed in compressed chunks made by pyarrow's (or zlib's) compressors."""
    out = bytearray()
    for i in range(0, len(data), block):
        piece = data[i : i + block]
        if kind == ZLIB:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            comp = c.compress(piece) + c.flush()
        else:
            name = {SNAPPY: "snappy", LZ4: "lz4_raw", ZSTD: "zstd"}[kind]
            comp = pa.Codec(name).compress(piece, asbytes=True)
        out += (len(comp) << 1).to_bytes(3, "little") + comp
    return bytes(out)


@pytest.mark.parametrize("kind", [ZLIB, SNAPPY, LZ4, ZSTD])
@pytest.mark.parametrize("block", [1000, 65536, 262144])
def test_codec_round_trips(kind, block):
    comp = Compression(kind, block)
    framed = codec_chunks(kind, DATA, block)
    assert len(framed) < len(DATA)
    assert decompress(framed, comp, name="t") == DATA
    # stored ("original") chunks mix with compressed ones
    mixed = frame_original(DATA[:block], block) + codec_chunks(kind, DATA[block:], block)
    assert decompress(mixed, comp, name="t") == DATA
    assert decompress(b"", comp, name="t") == b""


def test_lz4_block_sizes():
    for data in (b"", b"a", DATA[:70_000], bytes(70_000), os.urandom(5000)):
        block = pa.Codec("lz4_raw").compress(data, asbytes=True)
        assert lz4_block_size(block, 1 << 23, "t") == len(data)
    for bad, message in [
        (b"", "ends inside a sequence"),
        (b"\x10", "literals run past"),
        (b"\x00\x01\x00", "match offset 1 with 0 bytes"),
        (b"\x10a\x00", "match offset cut short"),
        (b"\xf0" + b"\xff" * 50, "length runs past"),
        (b"\x1fa\x01\x00" + b"\xff" * 30 + b"\x10", "ends inside"),
    ]:
        with pytest.raises(CorruptFileError, match=message):
            lz4_block_size(bad, 1 << 23, "t")
    # a long match claims more than the block holds
    with pytest.raises(CorruptFileError, match="more than 1,000"):
        lz4_block_size(b"\x1fa\x01\x00" + b"\xff" * 10 + b"\x00", 1000, "t")


def test_zstd_without_content_size_and_brotli():
    """Frames without a content size take the streaming path, bounded the same way."""
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as s:
        s.write(DATA[:50_000])
    frame = sink.getvalue().to_pybytes()
    assert zstd_content_size(frame) is None
    assert zstd_content_size(pa.Codec("zstd").compress(DATA[:50_000], asbytes=True)) == 50_000
    chunk = (len(frame) << 1).to_bytes(3, "little") + frame
    assert decompress(chunk, Compression(ZSTD, 65536), name="t") == DATA[:50_000]
    with pytest.raises(CorruptFileError, match="more than the block size 40,000"):
        decompress(chunk, Compression(ZSTD, 40_000), name="t")
    br = pa.Codec("brotli").compress(DATA[:50_000], asbytes=True)
    chunk = (len(br) << 1).to_bytes(3, "little") + br
    assert decompress(chunk, Compression(6, 65536), name="t") == DATA[:50_000]


@pytest.mark.parametrize("kind", [ZLIB, SNAPPY, LZ4, ZSTD])
def test_corrupt_chunks(kind):
    block = 4096
    good = codec_chunks(kind, DATA[:block], block)
    comp = Compression(kind, block)
    name = "f.orc: stripe 0 footer"
    cases = [
        (good[:2], "chunk header at file offset 100 cut short"),
        (good[:-1], "claims"),
        (((block + 1) << 1).to_bytes(3, "little") + b"\0" * (block + 1), "more than the block"),
        ((((1 << 23) - 1) << 1).to_bytes(3, "little"), "more than the block size"),
        (good[:3] + bytes(len(good) - 3), "cannot decompress|LZ4|Snappy|deflate"),
        (good[:3] + bytes([good[3] ^ 0x55]) + good[4:], "."),
    ]
    for raw, message in cases:
        with pytest.raises(CorruptFileError, match=message) as e:
            decompress(raw, comp, name=name, offset=100)
        assert str(e.value).startswith(name)
    # a chunk that fits in the block size but decompresses to more than it
    big = codec_chunks(kind, bytes(4 * block), 4 * block)
    assert len(big) - 3 <= block
    with pytest.raises(CorruptFileError, match=r"block size 4,096|more than 4,096"):
        decompress(big, comp, name=name)
    # total output is bounded
    many = codec_chunks(kind, DATA[: 8 * block], block)
    with pytest.raises(CorruptFileError, match="more than 10,000 bytes"):
        decompress(many, comp, name=name, limit=10_000)


def test_zlib_trailing_bytes_and_incomplete_streams():
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    comp = c.compress(DATA[:1000]) + c.flush()
    for raw in (comp + b"junk", comp[:-2]):
        chunk = (len(raw) << 1).to_bytes(3, "little") + raw
        with pytest.raises(CorruptFileError, match=r"deflate|cannot decompress"):
            decompress(chunk, Compression(ZLIB, 4096), name="t")


def test_compression_kinds_and_block_sizes():
    assert compression_of(None, None, "f").kind == NONE
    assert compression_of(ZLIB, None, "f").block_size == 256 * 1024
    with pytest.raises(UnsupportedFileError, match=r"f.orc: LZO"):
        compression_of(3, 65536, "f.orc")
    with pytest.raises(UnsupportedFileError, match="unknown ORC compression kind 9"):
        compression_of(9, 65536, "f.orc")
    for size in (0, 1 << 23, 2**64 - 1):
        with pytest.raises(CorruptFileError, match="block size"):
            compression_of(ZSTD, size, "f.orc")
    assert compression_of(NONE, 0, "f").kind == NONE  # the block size is unused


# ------------------------------------------------------------------- hostile files


@pytest.fixture(scope="module")
def small_files(tmp_path_factory) -> dict[str, bytes]:
    """Small seeds of 2,500 rows in 2-10 stripes, row groups of 300 rows, filters on three
    columns: pyorc with 4 KiB compression chunks for every codec, pyarrow uncompressed and
    zstd, and a pyorc file of nested and logical types."""
    folder = tmp_path_factory.mktemp("orc-small")
    rng = random.Random(3)
    rows = [(i, None if i % 9 == 0 else rng.randbytes(6).hex(), (i % 50,)) for i in range(2500)]
    out = {}
    for codec in CODECS:
        buf = io.BytesIO()
        with pyorc.Writer(
            buf,
            "struct<id:bigint,s:string,st:struct<x:smallint>>",
            bloom_filter_columns=[1, 2, 4],
            compression=getattr(pyorc.CompressionKind, PYORC_CODECS[codec]),
            row_index_stride=300,
            stripe_size=8192,
            compression_block_size=4096,
            memory_block_size=4096,
        ) as w:
            w.writerows(rows)
        out[f"pyorc-{codec}"] = buf.getvalue()
    table = pa.table(
        {
            "id": pa.array([r[0] for r in rows], pa.int64()),
            "s": pa.array([r[1] for r in rows]),
            "st": pa.array([{"x": r[2][0]} for r in rows], pa.struct([("x", pa.int16())])),
        }
    )
    for codec in ("uncompressed", "zstd"):
        path = folder / f"{codec}.orc"
        po.write_table(
            table,
            path,
            compression=codec,
            row_index_stride=300,
            bloom_filter_columns=[1, 2, 4],
            stripe_size=8 * 1024,
            batch_size=256,
        )
        out[f"pyarrow-{codec}"] = path.read_bytes()
    path = folder / "nested.orc"
    write_pyorc(path, "zlib", rows=1500, stride=400)
    out["pyorc-nested"] = path.read_bytes()
    return out


def walk(data: bytes, name: str = "case.orc") -> int:
    """Every entry point of the structure layer on one file; the number of filters read."""
    f = read_orc(data, name=name)
    f.metadata()
    seen = 0
    for s in f.stripes:
        f.stripe_footer(s.index)
        f.row_groups(s.index)
        for c in f.columns:
            f.column_encoding(s.index, c.id)
            f.row_index(s.index, c.id)
            bf = f.bloom_filters(s.index, c.id)
            seen += bf is not None
    return seen


def expect_error(data: bytes, match: str, error=CorruptFileError) -> None:
    with pytest.raises(error, match=match) as e:
        walk(data, "hostile.orc")
    assert str(e.value).startswith("hostile.orc: ")


def test_seeds_are_readable(small_files):
    for name, data in small_files.items():
        assert len(read_orc(data).stripes) >= 2 or name in ("pyarrow-zstd", "pyorc-nested")
        assert walk(data) >= 3


def test_every_truncation_of_the_tail(small_files):
    for key in ("pyarrow-zstd", "pyarrow-uncompressed"):
        data = small_files[key]
        for cut in range(1, 600):
            with pytest.raises(BloomskipError):
                walk(data[:-cut])


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 8])
def test_tiny_files(size):
    for data in (b"ORC\x00\x00\x00\x00\x00"[:size], bytes(size), b"\xff" * size):
        with pytest.raises(CorruptFileError):
            walk(data)


def test_zero_byte_file_is_empty(tmp_path):
    """Hive writes empty ORC tables as 0-byte files; ORC Java reads them as empty."""
    path = tmp_path / "zero.orc"
    path.write_bytes(b"")
    f = read_orc(path)
    assert f.num_rows == 0 and f.stripes == () and f.row_groups() == ()
    assert [c.kind_name for c in f.columns] == ["STRUCT"] and f.metadata().stripe_statistics == ()
    report = inspect_orc(path)
    assert report["row_groups"] == [] and report["num_rows"] == 0


def test_postscript_length_byte(small_files):
    data = small_files["pyorc-zlib"]
    expect_error(data[:-1] + b"\x00", "PostScript length 0")
    expect_error(data[:200] + b"\xff", "PostScript length 255")
    refused = 0
    for ps_len in range(1, 256):
        if ps_len != data[-1]:
            try:
                walk(data[:-1] + bytes([ps_len]))
            except BloomskipError:
                refused += 1
    assert refused == 254  # every wrong length


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (1, 10**9, "do not fit before the PostScript"),
        (1, 2**64 - 1, "do not fit"),
        (5, 10**9, "do not fit"),
        (7, 10**9, "do not fit"),
        (1, 0, "."),
        (3, 1 << 23, "block size"),
        (3, 0, "block size"),
        (2, 3, "LZO"),
        (2, 7, "unknown ORC compression kind 7"),
    ],
)
def test_postscript_fields(small_files, field, value, message):
    tail = Tail(small_files["pyorc-lz4"])
    set_field(tail.ps, field, value)
    ps_raw = encode(tail.ps)
    data = small_files["pyorc-lz4"]
    edited = data[: -1 - data[-1]] + ps_raw + bytes([len(ps_raw)])
    error = UnsupportedFileError if field == 2 else BloomskipError
    with pytest.raises(error, match=message) as e:
        walk(edited, "hostile.orc")
    assert str(e.value).startswith("hostile.orc")


def test_magic(small_files):
    data = small_files["pyorc-snappy"]
    tail = Tail(data)
    set_field(tail.ps, 8000, b"ORK", proto.LEN)
    ps_raw = encode(tail.ps)
    no_magic = data[: -1 - data[-1]] + ps_raw + bytes([len(ps_raw)])
    assert walk(no_magic) >= 3  # the file header still says ORC (as for old files)
    expect_error(b"ORK" + no_magic[3:], "not an ORC file")


def test_footer_lengths_past_the_file(small_files):
    tail = Tail(small_files["pyarrow-zstd"])
    data = tail.build()
    assert walk(data) >= 3
    raw = frame_original(encode(tail.footer), 4096)
    ps = list(tail.ps)
    set_field(ps, 1, len(data) * 2)
    ps_raw = encode(ps)
    expect_error(tail.body + raw + ps_raw + bytes([len(ps_raw)]), "do not fit")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (1, 10**12, "outside the stripes' area"),  # offset
        (1, 0, "outside the stripes' area"),
        (2, 10**12, "outside"),  # index length
        (3, 2**64 - 1, "outside"),  # data length
        (4, 0, "has no footer"),
        (4, 10**6, "outside"),
        (5, 2**62, "footer says"),  # rows
    ],
)
def test_stripe_information(small_files, field, value, message):
    tail = Tail(small_files["pyarrow-uncompressed"])
    stripe = tail.stripe(1)
    set_field(stripe, field, value)
    tail.set_stripe(1, stripe)
    expect_error(tail.build(), message)


def test_absurd_row_counts(small_files):
    """Row counts that would make millions of row groups, or miss the index entries."""
    data = small_files["pyorc-zlib"]
    rows = [s.num_rows for s in read_orc(data).stripes]
    tail = Tail(data)
    stripe = tail.stripe(0)
    set_field(stripe, 5, 2**62)
    tail.set_stripe(0, stripe)
    set_field(tail.footer, 6, 2**62 + sum(rows[1:]))
    expect_error(tail.build(), "row groups of 300")
    tail = Tail(small_files["pyorc-zlib"])
    stripe = tail.stripe(0)
    rows = occurrences(stripe, 5)[0][2]
    set_field(stripe, 5, rows + 300)
    tail.set_stripe(0, stripe)
    set_field(tail.footer, 6, occurrences(tail.footer, 6)[0][2] + 300)
    expect_error(tail.build(), r"entries for \d+ row groups")
    set_field(tail.footer, 8, 1)  # stride 1: each stripe would need one entry per row
    expect_error(tail.build(), "entries for")


def types_footer(tail: Tail, types: list[bytes]) -> bytes:
    fs = [f for f in tail.footer if f[0] not in (4, 7)]
    fs += [[4, proto.LEN, t] for t in types]
    return encode(fs)


def struct_type(children: list[int], names: list[str] | None = None) -> bytes:
    names = [f"c{i}" for i in range(len(children))] if names is None else names
    return (
        vfield(1, 12)
        + lfield(2, b"".join(uvarint(c) for c in children))
        + b"".join(lfield(3, n.encode()) for n in names)
    )


LONG = vfield(1, 4)


@pytest.mark.parametrize(
    ("types", "message", "error"),
    [
        ([struct_type([1]), struct_type([1])], "type 1 lists child 1", CorruptFileError),
        ([struct_type([1, 1]), LONG], "child 1 where the pre-order id is 2", CorruptFileError),
        (
            [struct_type([2, 1]), LONG, LONG],
            "child 2 where the pre-order id is 1",
            CorruptFileError,
        ),
        ([struct_type([5])], "lists child 5", CorruptFileError),
        ([struct_type([0])], "lists child 0", CorruptFileError),
        (
            [struct_type([1]), LONG, LONG],
            "1 of 3 types are not in the column tree",
            CorruptFileError,
        ),
        ([struct_type([1], []), LONG], "1 children and 0 field names", CorruptFileError),
        ([vfield(1, 10) + lfield(2, b"\x01\x02"), LONG, LONG], "LIST type 0", CorruptFileError),
        ([vfield(1, 11) + lfield(2, b"\x01"), LONG], "MAP type 0", CorruptFileError),
        ([vfield(1, 4) + lfield(2, b"\x01"), LONG], "kind LONG has children", CorruptFileError),
        ([], "no types", CorruptFileError),
        (
            [struct_type([i + 1]) for i in range(MAX_DEPTH + 1)] + [LONG],
            "nests deeper than",
            UnsupportedFileError,
        ),
        (
            [struct_type([i + 1]) for i in range(20_000)] + [LONG],
            "nests deeper than",
            UnsupportedFileError,
        ),
        ([struct_type(list(range(1, 200_001)))], "lists child 1", CorruptFileError),
    ],
)
def test_hostile_column_trees(small_files, types, message, error):
    tail = Tail(small_files["pyarrow-uncompressed"])
    expect_error(tail.build(footer=types_footer(tail, types)), message, error)


def test_deep_but_allowed_nesting(small_files):
    tail = Tail(small_files["pyarrow-uncompressed"])
    types = [struct_type([i + 1]) for i in range(MAX_DEPTH)] + [LONG]
    tail.footer = [f for f in tail.footer if f[0] != 3]  # no stripes: nothing to index
    set_field(tail.footer, 6, 0)
    f = read_orc(tail.build(footer=types_footer(tail, types)))
    assert len(f.columns) == MAX_DEPTH + 1 and f.columns[-1].name.count(".") == MAX_DEPTH - 1


def test_corrupt_footer_chunks(small_files):
    """The footer's chunks: longer than the block size, than the data, or garbage."""
    data = small_files["pyorc-zlib"]
    tail = Tail(data)
    plain = encode(tail.footer)
    block = tail.compression.block_size
    too_long = ((block + 1) << 1 | 1).to_bytes(3, "little") + plain.ljust(block + 1, b"\0")
    expect_error(tail.build(footer=too_long, frame=False), f"more than the block size {block:,}")
    past = ((len(plain) + 10) << 1 | 1).to_bytes(3, "little") + plain
    expect_error(tail.build(footer=past, frame=False), r"claims \d+ bytes but \d+ are left")
    garbage = (len(plain) << 1).to_bytes(3, "little") + plain
    expect_error(tail.build(footer=garbage, frame=False), "cannot decompress|deflate")
    assert walk(tail.build(footer=frame_deflate(plain, block), frame=False)) >= 3


def test_footer_output_is_bounded(small_files, monkeypatch):
    """Footers decompress to at most ``MAX_FOOTER_BYTES`` (a zlib bomb stops there)."""
    import bloomskip.orc.file as orc_file

    tail = Tail(small_files["pyorc-zlib"])
    data = tail.build(footer=frame_deflate(encode(tail.footer), 4096), frame=False)
    assert walk(data) >= 6
    monkeypatch.setattr(orc_file, "MAX_FOOTER_BYTES", 100)
    expect_error(data, "footer at offset .* decompresses to more than 100 bytes")
    # 1,000 chunks of 4 KiB of zeros: 4 MB from 23 KB on disk
    bomb = frame_deflate(bytes(4096 * 1000), 4096)
    assert len(bomb) < 25_000
    expect_error(tail.build(footer=bomb, frame=False), "more than 100 bytes")


def test_corrupt_stream_chunks(small_files):
    """A bloom filter stream whose chunk header claims more than the stream holds."""
    data = small_files["pyorc-zstd"]
    f = read_orc(data)
    bf = f.bloom_filters(1, 2)
    edited = bytearray(data)
    edited[bf.offset : bf.offset + 3] = ((bf.length + 5) << 1).to_bytes(3, "little")
    g = read_orc(bytes(edited), name="hostile.orc")
    assert g.bloom_filters(1, 1) is not None and g.row_index(1, 2) is not None
    with pytest.raises(CorruptFileError, match=r"hostile.orc: stripe 1 BLOOM_FILTER_UTF8"):
        g.bloom_filters(1, 2)
    assert "invalid" in json.dumps(_inspect_bytes(bytes(edited)))


def _inspect_bytes(data: bytes) -> dict:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "x.orc"
        path.write_bytes(data)
        return inspect_orc(path)


def stripe_footer_edit(data: bytes, edit) -> bytes:
    """Edit stripe 0's footer of an uncompressed file, keeping its length."""
    f = read_orc(data)
    s = f.stripes[0]
    sf = fields(data[s.footer_offset : s.footer_offset + s.footer_length])
    edit(sf)
    raw = encode(sf)
    assert len(raw) == s.footer_length
    return data[: s.footer_offset] + raw + data[s.footer_offset + len(raw) :]


def test_stream_lengths_and_columns(small_files):
    data = small_files["pyarrow-uncompressed"]

    def stream(edit_stream):
        def edit(sf):
            first = next(fl for fl in sf if fl[0] == 1)
            st = fields(first[2])
            edit_stream(st)
            new = encode(st)
            first[2] = new

        return edit

    # same-size varints keep the stripe footer's length
    expect_error(
        stripe_footer_edit(data, stream(lambda st: set_field(st, 2, 99))), "names column 99"
    )
    length = read_orc(data).streams(0)[0].length
    big = 2 ** (7 * len(uvarint(length))) - 1  # the largest varint of the same size
    expect_error(
        stripe_footer_edit(data, stream(lambda st: set_field(st, 3, big))),
        "runs past the stripe's index and data",
    )


def test_bloom_entries_must_match_row_groups(small_files):
    """A bloom filter index with an entry missing is refused (for that column only)."""
    data = small_files["pyarrow-uncompressed"]
    f = read_orc(data)
    bf = f.bloom_filters(0, 1)
    raw = data[bf.offset : bf.offset + bf.length]
    entries = fields(raw)
    short = encode(entries[:-1])
    pad = bf.length - len(short)
    # keep the stream's length: add an unknown field that fills the gap
    filler = lfield(15, b"\0" * (pad - 3)) if pad > 130 else b""
    assert len(short + filler) == bf.length
    edited = data[: bf.offset] + short + filler + data[bf.offset + bf.length :]
    g = read_orc(edited, name="hostile.orc")
    with pytest.raises(CorruptFileError, match=r"entries for \d+ row groups"):
        g.bloom_filters(0, 1)
    assert g.bloom_filters(0, 2) is not None


def test_encrypted_files_are_refused(small_files):
    tail = Tail(small_files["pyarrow-uncompressed"])
    tail.footer.append([10, proto.LEN, b""])
    f = read_orc(tail.build(), name="hostile.orc")
    assert f.encrypted and f.columns and f.stripes
    with pytest.raises(UnsupportedFileError, match=r"hostile.orc: stripe 0 has encrypted"):
        f.bloom_filters(0, 1)


# ----------------------------------------------------------------------------- fuzz

FUZZ_CASES = 2400
CASE_SECONDS = 2.0


class _Timeout(Exception):
    pass


class _Misnamed(Exception):
    pass


def fuzz_walk(data: bytes, label: str) -> tuple[int, int, int]:
    """Each entry point on its own: (operations that answered, typed errors, filters)."""
    counts = [0, 0, 0]

    def attempt(op):
        try:
            out = op()
            counts[0] += 1
            return out
        except BloomskipError as e:
            counts[1] += 1
            if not str(e).startswith(label):
                raise _Misnamed(str(e)) from None
            return None

    f = attempt(lambda: read_orc(data, name=label))
    if f is None:
        return counts[0], counts[1], counts[2]
    attempt(f.metadata)
    attempt(f.row_groups)
    for s in f.stripes:
        if attempt(lambda s=s: f.streams(s.index)) is None:
            continue
        for c in f.columns:
            attempt(lambda s=s, c=c: f.row_index(s.index, c.id))
            bf = attempt(lambda s=s, c=c: f.bloom_filters(s.index, c.id))
            counts[2] += bf is not None
    return counts[0], counts[1], counts[2]


def _on_alarm(signum, frame):
    raise _Timeout


def fuzz_batch(seeds: dict[str, bytes], start: int, cases: int, workdir: str) -> dict:
    """Cases ``start..start+cases`` (each a seed chosen and mutated by a seeded RNG)."""
    names = sorted(seeds)
    prepared = {n: Seed(seeds[n]) for n in names}
    signal.signal(signal.SIGALRM, _on_alarm)
    current = os.path.join(workdir, f"running-{start}.orc")
    problems: list[str] = []
    outcomes = {"ok": 0, "typed": 0, "filters": 0}
    for i in range(start, start + cases):
        rng = random.Random(f"orc-fuzz:{i}")
        name = rng.choice(names)
        data = mutate(prepared[name], rng)
        with open(current, "wb") as fh:
            fh.write(data)
        problem = None
        label = f"case-{i}.orc"
        began = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
        try:
            ok, typed, filters = fuzz_walk(data, label)
            outcomes["ok"] += ok
            outcomes["typed"] += typed
            outcomes["filters"] += filters
        except _Misnamed as e:
            problem = f"error does not name the file: {e}"
        except _Timeout:
            problem = f"no answer within {CASE_SECONDS} s"
        except Exception as e:
            frames = traceback.extract_tb(e.__traceback__)[-3:]
            where = " <- ".join(f"{Path(fr.filename).name}:{fr.lineno}" for fr in frames[::-1])
            problem = f"{type(e).__name__}: {str(e)[:200]} at {where}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if problem is None and time.perf_counter() - began > CASE_SECONDS:
            problem = "slow"
        if problem:
            keep = os.path.join(workdir, f"failure-{i}.orc")
            Path(keep).write_bytes(data)
            problems.append(f"case {i} ({name}): {problem} [{keep}]")
    return {"cases": cases, "problems": problems, **outcomes}


def test_fuzz_mutated_files(small_files, tmp_path):
    """2,400 mutated seed files through every entry point, in two spawned workers: only
    results or typed errors naming the file, each within two seconds; a worker that dies
    leaves the case it was running on disk."""
    started = time.perf_counter()
    half = FUZZ_CASES // 2
    with ProcessPoolExecutor(max_workers=2, mp_context=get_context("spawn")) as pool:
        futures = [
            pool.submit(fuzz_batch, small_files, start, half, str(tmp_path)) for start in (0, half)
        ]
        results, died = [], []
        for k, fut in enumerate(futures):
            try:
                results.append(fut.result(timeout=300))
            except BrokenProcessPool:
                died.append(str(tmp_path / f"running-{k * half}.orc"))
    assert not died, f"a fuzz worker died while running {died}"
    problems = [p for r in results for p in r["problems"]]
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:20])
    ok = sum(r["ok"] for r in results)
    typed = sum(r["typed"] for r in results)
    filters = sum(r["filters"] for r in results)
    # the mutations reach past the first checks: many operations answer, many refuse,
    # and most cases still reach bloom filters
    assert ok > 5 * FUZZ_CASES and typed > FUZZ_CASES // 2 and filters > 3 * FUZZ_CASES
    elapsed = time.perf_counter() - started
    print(f"orc fuzz: {ok} answers, {typed} typed errors, {filters} filters in {elapsed:.1f} s")


def test_fuzz_is_reproducible(small_files):
    seed = Seed(small_files["pyorc-zstd"])
    a = [mutate(seed, random.Random(f"x{i}")) for i in range(40)]
    b = [mutate(seed, random.Random(f"x{i}")) for i in range(40)]
    assert a == b and len(set(a)) == 40


def test_structural_edits_keep_files_consistent(small_files):
    """An edit that changes nothing in effect leaves a readable file: the splicing of
    stripe footers and tails is right, so the fuzz reaches deep."""
    for name in ("pyorc-zstd", "pyarrow-uncompressed", "pyorc-nested"):
        seed = Seed(small_files[name])
        readable = 0
        for i in range(60):
            try:
                walk(seed.edited(random.Random(f"{name}:{i}")))
                readable += 1
            except BloomskipError:
                pass
        assert readable > 10
