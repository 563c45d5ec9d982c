"""ORC file structure from our own parse, against the writers' and readers' own views.

Real files from pyarrow (ORC C++ 2.2), pyorc (ORC C++ 2.3) and Spark (ORC Java 2.3), for
every codec each writes: tail, writer, stripes and schema agree with pyarrow's and pyorc's
readers; row groups tile every row and line up with the row index statistics; every bloom
filter column has one filter per row group with ORC's own sizing for the writer's fpp;
nested types get pre-order ids and ORC Java's names; ``inspect`` reports the same.
"""

from __future__ import annotations

import glob
import itertools
import json
import math
import random
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as po
import pytest

from bloomskip.orc import read_orc
from bloomskip.orc.compression import LZ4, NONE, SNAPPY, ZLIB, ZSTD
from bloomskip.orc.file import OrcFile
from bloomskip.orc.inspect import inspect_orc
from bloomskip.orc.stripes import BLOOM_FILTER, BLOOM_FILTER_UTF8
from tests.support.orc_files import CODECS, write_pyorc
from tests.support.orc_wire import stripe_footer_edit

pyorc = pytest.importorskip("pyorc")

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

    def to_secondary(sf) -> None:
        for st in sf.streams:
            if st.kind == BLOOM_FILTER_UTF8:
                st.kind = 5

    edited = stripe_footer_edit(data, to_secondary, range(1))
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


def test_dates_of_a_hybrid_calendar_file(tmp_path):
    """Julian calendar days (as ORC Java writes dates before 1582-10-15) rebased to the
    same year, month and day, as Spark reads them; a Julian-only day (1500-02-29) moves
    to the next; before the cutover only. And a raw day Python's dates cannot hold (the
    Julian 0001-01-01 is the proleptic 0000-12-30) no longer crashes an index build: it
    was an OverflowError in the calendar check."""
    import datetime as dt

    import numpy as np
    import pyarrow as pa
    import pyarrow.orc as po
    from hypothesis import given
    from hypothesis import strategies as st

    from bloomskip import index
    from bloomskip.formats.calendar import CUTOVER_DAY, julian_to_gregorian_days

    def julian(y: int, m: int, d: int) -> int:  # days since 1970 of a Julian date
        a = (14 - m) // 12
        yy, mm = y + 4800 - a, m + 12 * a - 3
        return d + (153 * mm + 2) // 5 + 365 * yy + yy // 4 - 32083 - 2_440_588

    def day(d: dt.date) -> int:
        return (d - dt.date(1970, 1, 1)).days

    raw = np.array([julian(1, 1, 1), julian(1500, 2, 29), julian(1582, 10, 4), CUTOVER_DAY])
    want = [dt.date(1, 1, 1), dt.date(1500, 3, 1), dt.date(1582, 10, 4), dt.date(1582, 10, 15)]
    assert julian_to_gregorian_days(raw).tolist() == [day(d) for d in want]

    @given(st.dates(max_value=dt.date(1582, 10, 4)))
    def same_date(d):
        got = julian_to_gregorian_days(np.array([julian(d.year, d.month, d.day)], np.int32))
        assert got.tolist() == [day(d)]

    same_date()
    lake = tmp_path / "lake"
    lake.mkdir()
    days = pa.array([julian(1, 1, 1), 18_262, None], pa.int32()).cast(pa.date32())
    po.write_table(pa.table({"d": days}), lake / "a.orc")
    report = index.build(str(lake), ["d"], str(tmp_path / "idx"))
    assert [why for _, why in report.failed] == [
        "d: before 1582-10-16 in a file not in the proleptic Gregorian calendar, "
        "which readers rebase differently"
    ]
    assert index.open(str(tmp_path / "idx")).query("d = DATE '1999-01-01'").files
