"""Adding bloom filters to existing ORC files: ``bloomskip.orc.add_bloom_filters`` and
``bloomskip add-bloom FILE.orc``.

What is proved here (Spark and ORC Java: ``test_write_spark.py``):

* every data stream, every index stream that was there and the Metadata are copied byte
  for byte; pyarrow (ORC C++ 2.2) and pyorc (ORC C++ 2.3) read the same table;
* the filters are the ones pyarrow writes itself for the same data (ORC C++ builds ORC
  Java's filters for these types), bit for bit, under every codec;
* ORC C++ (pyorc's predicate read) and bloomskip's own pruning skip row groups with
  them; hypothesis-chosen values are never ruled out (no false negatives);
* filters already there are kept, or replaced; a second run changes nothing;
* files without a row index, ORC C++ files whose filters readers ignore, damaged files
  and columns that cannot have a filter give typed one-line errors, and the source is
  never touched; the command line does the same on .orc files.
"""

from __future__ import annotations

import datetime as dt
import decimal
import glob
import json
import os
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bloomskip.orc.write as write
from bloomskip.cli import main
from bloomskip.errors import (
    BloomskipError,
    CorruptFileError,
    FileChangedError,
    InvalidParameterError,
    UnsupportedFileError,
    UnsupportedTypeError,
)
from bloomskip.orc import OrcBloomFilter, add_bloom_filters, probe, prune, read_orc
from tests.support.orc_wire import Tail, stripe_footer_edit
from tests.support.orc_write import parts, pyorc_rows, stored_filters, stream_kinds

CODECS = ["uncompressed", "zlib", "snappy", "lz4", "zstd"]
K0 = 10**12
DAY_NS = 86_400 * 10**9


def agreeing_table(n: int = 12_000) -> pa.Table:
    """Types whose filters ORC C++ builds as ORC Java does (timestamps away from the
    epoch, none negative with sub-millisecond digits), nulls and a struct among them."""
    i = np.arange(n, dtype=np.int64)
    return pa.table(
        {
            "k": pa.array(K0 + 2 * i),
            "i": pa.array((i * 31 - 5000).astype(np.int32)),
            "sm": pa.array((i % 3000 - 1500).astype(np.int16)),
            "d": pa.array(i / 7.0 - 100),
            "s": pa.array([None if j % 13 == 0 else f"é{j % 997}日本" for j in range(n)]),
            "b": pa.array([bytes([j % 256, 255, 0]) for j in range(n)]),
            "dec": pa.array(
                [decimal.Decimal(j * 25 - 30000).scaleb(-2) for j in range(n)], pa.decimal128(12, 2)
            ),
            "dec30": pa.array(
                [decimal.Decimal(j * 10**9 + 7).scaleb(-5) for j in range(n)], pa.decimal128(30, 5)
            ),
            "dt": pa.array((i - 1200).astype(np.int32), pa.date32()),
            "ts": pa.array(1_600_000_000 * 10**9 + i * 3_600_000_123, pa.timestamp("ns")),
            "tsi": pa.array(-(10**15) + i * 77_000_000, pa.timestamp("us", tz="UTC")),
            "st": pa.array(
                [None if j % 11 == 0 else {"x": j * 3, "y": f"y{j}"} for j in range(n)],
                pa.struct([("x", pa.int64()), ("y", pa.string())]),
            ),
        }
    )


AGREEING = ["k", "i", "sm", "d", "s", "b", "dec", "dec30", "dt", "ts", "tsi", "st.x", "st.y"]
#: their ORC column ids (pyarrow names filter columns by id; 12 is the struct)
AGREEING_IDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14]
#: several stripes (a batch each when uncompressed), several row groups in each
LAYOUT = {"row_index_stride": 500, "stripe_size": 8 * 1024, "batch_size": 1100}


def temp_files(folder: Path) -> list[str]:
    return glob.glob(str(folder / ".*.bloomskip.tmp"))


def pyorc_table(path) -> list:
    import pyorc

    with open(path, "rb") as fh:
        return list(pyorc.Reader(fh))


# ---------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("codec", CODECS)
def test_filters_are_pyarrows_own_and_the_data_is_untouched(tmp_path, codec):
    table = agreeing_table()
    plain, theirs, out = tmp_path / "plain.orc", tmp_path / "theirs.orc", tmp_path / "out.orc"
    po.write_table(table, plain, compression=codec, **LAYOUT)
    po.write_table(
        table, theirs, compression=codec, bloom_filter_columns=AGREEING_IDS,
        bloom_filter_fpp=0.05, **LAYOUT,
    )  # fmt: skip
    result = add_bloom_filters(plain, out)  # fpp 0.05 by default, as pyarrow's
    assert result.rewritten and result.path == str(out) and result.source == str(plain)
    before, after, pyarrows = parts(plain), parts(out), parts(theirs)
    assert len(before.rows) >= 2 and before.rows == after.rows == pyarrows.rows
    assert after.data == before.data == pyarrows.data  # byte for byte
    assert after.metadata == before.metadata
    for kept, now in zip(before.index, after.index, strict=True):
        assert {k: now[k] for k in kept} == kept  # every index stream, as it was
        assert {k for k in now if k not in kept} == {(8, c) for c in AGREEING_IDS}
    assert result.filters_added == dict.fromkeys(AGREEING, result.row_groups)
    assert result.row_groups == sum(-(-rows // 500) for rows in before.rows) > len(before.rows)
    assert not result.skipped
    for name in AGREEING:
        assert stored_filters(out, name) == stored_filters(theirs, name), name
    assert po.read_table(out).equals(po.read_table(plain))
    assert pyorc_table(out) == pyorc_table(plain)
    # the Footer and the stripes' statistics are the same but for where stripes are
    a, b = read_orc(plain), read_orc(out)
    assert a.footer.statistics == b.footer.statistics and a.writer == b.writer
    assert [(s.num_rows, s.data_length) for s in a.stripes] == [
        (s.num_rows, s.data_length) for s in b.stripes
    ]
    assert result.bytes_added == os.path.getsize(out) - os.path.getsize(plain)
    assert result.filter_bytes == sum(x.length for x in result.added)


def lookup_file(tmp_path: Path, **options) -> Path:
    """k = K0 + 2 x row and ks = 'k<2 x row>': odd keys lie inside some row group's
    min/max without being there. Four stripes of row groups of 1,000, no filters."""
    n = 8000
    table = pa.table(
        {"k": pa.array(K0 + 2 * np.arange(n)), "ks": [f"k{2 * i:06d}" for i in range(n)]}
    )
    path = tmp_path / "lookup.orc"
    opts = {"row_index_stride": 1000, "stripe_size": 16 * 1024, "batch_size": 2000} | options
    po.write_table(table, path, **opts)
    return path


@pytest.mark.parametrize("codec", CODECS)
def test_orc_cpp_and_bloomskip_skip_row_groups_with_the_new_filters(tmp_path, codec):
    path = lookup_file(tmp_path, compression=codec)
    before = {
        r: len(pyorc_rows(path, "k", "LONG", K0 + 2 * r + 1, ["k"])) for r in (10, 3333, 7500)
    }
    assert all(rows == 1000 for rows in before.values())  # statistics cannot rule them out
    add_bloom_filters(path, columns=["k", "ks"], fpp=0.01)
    for r in (10, 3333, 7500):
        assert pyorc_rows(path, "k", "LONG", K0 + 2 * r + 1, ["k"]) == []
        assert pyorc_rows(path, "ks", "STRING", f"k{2 * r + 1:06d}", ["ks"]) == []
        rows = pyorc_rows(path, "k", "LONG", K0 + 2 * r, ["k"])
        assert len(rows) == 1000 and (K0 + 2 * r,) in rows  # only its own row group
        units = prune(path, f"k = {K0 + 2 * r + 1} OR ks = 'k{2 * r + 1:06d}'").units
        assert not any(u.may_match for u in units)
        kept = [u for u in prune(path, f"ks = 'k{2 * r:06d}'").units if u.may_match]
        assert len(kept) == 1 and kept[0].first_row <= r < kept[0].first_row + 1000


@pytest.mark.parametrize("zone", ["UTC", "America/Los_Angeles"])
def test_orc_cpp_finds_timestamps_near_the_epoch(tmp_path, zone):
    """ORC C++ reads instants in (-1 s, 0) a second late (pyarrow as pyorc) but tests
    literals as given: bloomskip's filters hold the values a second either side, so ORC
    C++ keeps every row group it kept without them - and still skips by them."""
    import zoneinfo

    import pyorc

    tz = zoneinfo.ZoneInfo(zone)
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    near = [epoch + dt.timedelta(milliseconds=m) for m in (-1500, -999, -500, -1, 0, 1, 999)]
    far = [dt.datetime(2000, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i) for i in range(2000)]
    plain, out = tmp_path / "plain.orc", tmp_path / "out.orc"
    with open(plain, "wb") as fh, pyorc.Writer(
        fh, "struct<t:timestamp,ti:timestamp with local time zone>", row_index_stride=1000,
        timezone=tz,
    ) as w:  # fmt: skip
        w.writerows((v, v) for v in [near[i % len(near)] for i in range(1000)] + far)
    add_bloom_filters(plain, out)
    absent = dt.datetime(2000, 1, 1, 0, 5, 0, 500000, tzinfo=dt.UTC)  # inside min/max
    for column, kind in (("t", "TIMESTAMP"), ("ti", "TIMESTAMP_INSTANT")):
        for value in [*near, far[7]]:
            before = pyorc_rows(plain, column, kind, value, [column], timezone=tz)
            assert pyorc_rows(out, column, kind, value, [column], timezone=tz) == before
        if column == "ti":  # pyorc's TIMESTAMP literals are off by the zone in Los Angeles
            assert len(pyorc_rows(plain, column, kind, absent, [column], timezone=tz)) == 1000
            assert pyorc_rows(out, column, kind, absent, [column], timezone=tz) == []
    assert len(pyorc_rows(out, "ti", "TIMESTAMP_INSTANT", near[2], ["ti"], timezone=tz)) == 1000


# ---------------------------------------------------------------------------- no false negatives

KINDS = {
    "int8": (pa.int8(), st.integers(-128, 127)),
    "int16": (pa.int16(), st.integers(-(2**15), 2**15 - 1)),
    "int32": (pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    "int64": (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    "float32": (pa.float32(), st.floats(width=32, allow_nan=False)),
    "float64": (pa.float64(), st.floats(allow_nan=False)),
    "string": (pa.string(), st.text(max_size=12)),
    "binary": (pa.binary(), st.binary(max_size=12)),
    "date": (pa.date32(), st.integers(-200_000, 200_000)),
    "decimal": (pa.decimal128(18, 3), st.integers(-(10**17), 10**17)),
    # near the epoch (where ORC's writers and readers disagree by a second) and anywhere
    "timestamp": (
        pa.timestamp("us"),
        st.one_of(st.integers(-3 * 10**6, 3 * 10**6), st.integers(-9 * 10**15, 9 * 10**15)),
    ),
    "timestamp_utc": (pa.timestamp("us", tz="UTC"), st.integers(-3 * 10**6, 3 * 10**6)),
}


def _column(kind: str, raw: list) -> pa.Array:
    t = KINDS[kind][0]
    if kind == "decimal":
        return pa.array([None if v is None else decimal.Decimal(v).scaleb(-3) for v in raw], t)
    if kind == "date":
        return pa.array(raw, pa.int32()).cast(t)
    if kind.startswith("timestamp"):
        return pa.array(raw, pa.int64()).cast(t)
    return pa.array(raw, t)


@st.composite
def lake_files(draw):
    kind = draw(st.sampled_from(sorted(KINDS)))
    values = draw(st.lists(st.one_of(st.none(), KINDS[kind][1]), min_size=1, max_size=2500))
    stride = draw(st.sampled_from([1000, 1500, 10_000]))
    codec = draw(st.sampled_from(CODECS))
    return kind, values, stride, codec


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(case=lake_files())
def test_values_in_the_file_are_never_ruled_out(tmp_path_factory, case):
    kind, raw, stride, codec = case
    folder = tmp_path_factory.mktemp("nfn")
    path = folder / "f.orc"
    arr = _column(kind, raw)
    po.write_table(pa.table({"v": arr}), path, row_index_stride=stride, compression=codec)
    add_bloom_filters(path, columns=["v"], fpp=0.05)
    f = read_orc(path)
    orc_kind = f.column("v").type_name
    filters = [g for s in stored_filters(path, "v") for g in s]
    units = [g for s in f.stripes for g in f.row_groups(s.index)]
    read = po.read_table(path).column("v").combine_chunks()  # as ORC C++ reads them
    assert len(filters) == len(units)
    for row in random.Random(len(raw)).sample(range(len(raw)), min(60, len(raw))):
        if raw[row] is None:
            continue
        unit = next(i for i, u in enumerate(units) if u.first_row <= row < u.first_row + u.num_rows)
        for value in (arr.slice(row, 1), read.slice(row, 1)):
            assert filters[unit].test_values(value, orc_kind, writer="java")[0], (kind, row)
        literal = read[row].as_py()
        if kind.startswith("timestamp"):
            literal = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=raw[row])
            if kind == "timestamp_utc":
                literal = literal.replace(tzinfo=dt.UTC)
        if kind in ("float32", "float64") or kind == "int8":
            continue  # ORC C++ files' BYTE and FLOAT filters: bloomskip never prunes with them
        result = probe(path, "v", [literal]).units[unit].result
        assert result != "absent", (kind, row, literal)


# ---------------------------------------------------------------------------- filters already there


def test_filters_there_are_kept_or_replaced_and_a_second_run_changes_nothing(tmp_path):
    path = lookup_file(tmp_path, bloom_filter_columns=[2], bloom_filter_fpp=0.05)
    theirs = stored_filters(path, "ks")
    data_sections = parts(path).data
    result = add_bloom_filters(path, fpp=0.01)  # every column: ks keeps pyarrow's
    assert set(result.filters_added) == {"k"}
    assert {(s.column, s.reason) for s in result.skipped} == {
        ("ks", "has a bloom filter, kept (replace rebuilds it)")
    }
    assert len(result.skipped) == len(read_orc(path).stripes)
    assert stored_filters(path, "ks") == theirs
    data = path.read_bytes()
    again = add_bloom_filters(path, fpp=0.01)
    assert not again.rewritten and not again.added and path.read_bytes() == data
    assert "nothing to do, file unchanged" in again.to_text()
    replaced = add_bloom_filters(path, columns=["ks"], fpp=0.01, replace=True)
    assert all(a.replaced for a in replaced.added)
    assert all(kinds == [6, 8] for kinds in stream_kinds(path, "ks"))  # the old one dropped
    ours = stored_filters(path, "ks")
    assert ours != theirs and ours[0][0].num_bits == OrcBloomFilter(1000, 0.01).num_bits
    assert parts(path).data == data_sections


def test_bytes_between_stripes_are_dropped(tmp_path):
    """ORC Java pads stripes to HDFS blocks: the same file with 77 bytes before each
    stripe but the first gives the same new file, byte for byte."""
    path = lookup_file(tmp_path)
    data = path.read_bytes()
    f = read_orc(data)
    tail = Tail(data)

    def end(s) -> int:
        return s.offset + s.index_length + s.data_length + s.footer_length

    body = bytearray(data[: f.stripes[1].offset])
    for i, s in enumerate(f.stripes[1:], start=1):
        body += b"\0" * 77 + data[s.offset : end(s)]
        tail.footer.stripes[i].offset = s.offset + 77 * i
    body += data[end(f.stripes[-1]) : tail.footer_start]
    tail.footer.content_length += 77 * (len(f.stripes) - 1)
    tail.body = bytes(body)
    padded = tmp_path / "padded.orc"
    padded.write_bytes(tail.build(frame=False))
    assert po.read_table(padded).equals(po.read_table(path))
    add_bloom_filters(path, tmp_path / "a.orc", columns=["k"])
    add_bloom_filters(padded, tmp_path / "b.orc", columns=["k"])
    assert (tmp_path / "a.orc").read_bytes() == (tmp_path / "b.orc").read_bytes()


def test_in_place_keeps_the_mode_and_copies_when_nothing_is_added(tmp_path):
    path = lookup_file(tmp_path)
    os.chmod(path, 0o640)
    add_bloom_filters(path, columns=["k"])
    assert os.stat(path).st_mode & 0o777 == 0o640
    out = tmp_path / "copy.orc"
    result = add_bloom_filters(path, out, columns=["k"])  # k has its filters: a plain copy
    assert result.rewritten and not result.added and out.read_bytes() == path.read_bytes()
    assert temp_files(tmp_path) == []


# ---------------------------------------------------------------------------- refusals


def without_index(tmp_path: Path) -> Path:
    import pyorc

    path = tmp_path / "noindex.orc"
    with open(path, "wb") as fh, pyorc.Writer(fh, "struct<k:bigint>", row_index_stride=0) as w:
        w.writerows((i,) for i in range(3000))
    return path


def edited_version(src: Path, dst: Path, version: str | None) -> Path:
    tail = Tail(src.read_bytes())
    if version is None:
        tail.footer.ClearField("software_version")
    else:
        tail.footer.software_version = version.encode()
    dst.write_bytes(tail.build())
    return dst


def nested_file(tmp_path: Path) -> Path:
    path = tmp_path / "nested.orc"
    table = pa.table(
        {
            "flag": [True, False] * 1000,
            "tags": [[1, 2]] * 2000,
            "m": pa.array([[("a", 1)]] * 2000, pa.map_(pa.string(), pa.int64())),
            "k": list(range(2000)),
        }
    )
    po.write_table(table, path, row_index_stride=1000)
    return path


def marked_encrypted(src: Path, dst: Path) -> Path:
    tail = Tail(src.read_bytes())
    tail.footer.encryption = b""  # an (empty) Encryption message: the file says it has one
    dst.write_bytes(tail.build())
    return dst


def index_listed_last(src: Path, dst: Path) -> Path:
    """An uncompressed file whose first stripe lists its first stream (a ROW_INDEX) last."""

    def edit(sf) -> None:
        first = type(sf.streams[0])()
        first.CopyFrom(sf.streams[0])
        del sf.streams[0]
        sf.streams.append(first)

    dst.write_bytes(stripe_footer_edit(src.read_bytes(), edit, range(1)))
    return dst


def refusals(tmp_path: Path) -> list[tuple[Path, dict, type, str]]:
    nested = nested_file(tmp_path)
    garbage = tmp_path / "garbage.orc"
    garbage.write_bytes(b"ORC" + bytes(range(256)) * 4)
    lookup = lookup_file(tmp_path)
    cut = tmp_path / "cut.orc"
    cut.write_bytes(lookup.read_bytes()[:-20])
    bad_cpp = edited_version(lookup, tmp_path / "cpp160.orc", "1.6.5")
    no_version = edited_version(lookup, tmp_path / "cppnone.orc", None)
    odd = index_listed_last(lookup, tmp_path / "odd.orc")
    encrypted = marked_encrypted(lookup, tmp_path / "encrypted.orc")
    return [
        (encrypted, {}, UnsupportedFileError, "encrypted"),
        (odd, {}, UnsupportedFileError, "index stream after data streams"),
        (without_index(tmp_path), {}, UnsupportedFileError, "no row index"),
        (bad_cpp, {}, UnsupportedFileError, "ORC-1024"),
        (no_version, {}, UnsupportedFileError, "without a software version"),
        (garbage, {}, CorruptFileError, "garbage.orc"),
        (cut, {}, CorruptFileError, "cut.orc"),
        (lookup, {"columns": ["nope"]}, InvalidParameterError, "no column 'nope'; columns are"),
        (nested, {"columns": ["flag"]}, UnsupportedTypeError, "BOOLEAN"),
        (nested, {"columns": ["tags"]}, UnsupportedTypeError, "LIST columns"),
        (nested, {"columns": ["m._value"]}, UnsupportedTypeError, "inside a map"),
        (lookup, {"fpp": 0.0}, InvalidParameterError, "fpp"),
        (lookup, {"fpp": True}, InvalidParameterError, "fpp"),
        (lookup, {"fpp": 1e-300}, InvalidParameterError, "1e-300"),
    ]


def test_refusals_are_typed_and_touch_nothing(tmp_path):
    for path, options, error, match in refusals(tmp_path):
        data = path.read_bytes()
        dst = tmp_path / f"out-{path.name}"
        for target in (None, dst):
            with pytest.raises(error, match=match):
                add_bloom_filters(path, target, **options)
            assert path.read_bytes() == data and not dst.exists()
    assert temp_files(tmp_path) == []


def test_columns_that_cannot_have_filters_are_skipped_with_the_reason(tmp_path):
    result = add_bloom_filters(nested_file(tmp_path))
    assert set(result.filters_added) == {"k"}
    reasons = {s.column: s.reason for s in result.skipped}
    assert set(reasons) == {"flag", "tags", "tags._elem", "m", "m._key", "m._value"}
    assert reasons["flag"].startswith("BOOLEAN") and "LIST columns" in reasons["tags"]
    assert reasons["m._key"].startswith("inside a map") and "MAP columns" in reasons["m"]
    assert reasons["tags._elem"].startswith("inside a list")


def test_stripes_without_a_row_index_for_the_column_are_skipped(tmp_path):
    path = lookup_file(tmp_path)
    k = read_orc(path).column("k").id

    def edit(sf) -> None:  # stripe 1 loses the row index of k (the bytes stay, unread)
        for stream in sf.streams:
            if (stream.kind, stream.column) == (6, k):
                stream.kind = 4

    path.write_bytes(stripe_footer_edit(path.read_bytes(), edit, range(1, 2)))
    result = add_bloom_filters(path, columns=["k"])
    assert [(s.stripe, s.reason) for s in result.skipped] == [
        (1, "the stripe has no row index for it")
    ]
    assert [f is None for f in stored_filters(path, "k")] == [False, True, False, False]


def test_timestamps_pyarrow_cannot_read_are_refused(tmp_path):
    import pyorc

    path = tmp_path / "far.orc"
    with open(path, "wb") as fh, pyorc.Writer(fh, "struct<t:timestamp,k:bigint>") as w:
        w.write((dt.datetime(3000, 1, 1, tzinfo=dt.UTC), 1))
    add_bloom_filters(path, columns=["k"])
    with pytest.raises(UnsupportedFileError, match="pyarrow's ORC reader cannot read columns t"):
        add_bloom_filters(path, columns=["t"])
    assert temp_files(tmp_path) == []


def test_a_source_changed_meanwhile_is_not_overwritten(tmp_path, monkeypatch):
    path = lookup_file(tmp_path)
    real = write.bloom_index

    def bloom_index(*args, **kwargs):
        with open(path, "ab") as fh:  # another writer appends meanwhile
            fh.write(b"x")
        return real(*args, **kwargs)

    monkeypatch.setattr(write, "bloom_index", bloom_index)
    with pytest.raises(FileChangedError, match=r"lookup\.orc"):
        add_bloom_filters(path, columns=["k"])
    assert path.read_bytes().endswith(b"x") and temp_files(tmp_path) == []


def test_mutated_files_give_typed_errors(tmp_path):
    """Random bytes changed in the stripe footers and the tail: the rewrite works or
    raises a BloomskipError; it never raises anything else and never changes the source."""
    path = lookup_file(tmp_path, compression="zlib")
    seed = path.read_bytes()
    f = read_orc(seed)
    spots = [o for s in f.stripes for o in range(s.footer_offset, s.offset + s.footer_length)]
    spots += list(range(f.metadata_range[0], len(seed)))
    rng = random.Random(7)
    case = tmp_path / "case.orc"
    outcomes = {"ok": 0, "refused": 0}
    for _ in range(150):
        data = bytearray(seed)
        for at in rng.sample(spots, rng.randint(1, 3)):
            data[at] = rng.randrange(256)
        case.write_bytes(bytes(data))
        try:
            add_bloom_filters(case, tmp_path / "case-out.orc", columns=None)
            outcomes["ok"] += 1
        except BloomskipError:
            outcomes["refused"] += 1
        assert case.read_bytes() == bytes(data)
    assert outcomes["refused"] > 0 and temp_files(tmp_path) == []


# ---------------------------------------------------------------------------- command line


def test_cli_adds_filters_to_orc_files(tmp_path, capsys):
    path = lookup_file(tmp_path)
    out = tmp_path / "out.orc"
    assert main(["add-bloom", str(path), str(out), "-c", "k", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["format"] == "orc" and report["filters_added"] == {"k": 8}
    assert report["added"][0]["num_bits"] == OrcBloomFilter(1000, 0.05).num_bits  # default fpp
    assert main(["add-bloom", str(path), "-c", "ks", "--fpp", "0.01"]) == 0
    text = capsys.readouterr().out
    assert "8 bloom filters added" in text and "in place" in text and "ks" in text
    assert main(["add-bloom", str(path), "-c", "k", "--policy", "putze"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bloomskip: error:") and "--policy" in err and "Parquet" in err
    assert main(["add-bloom", str(without_index(tmp_path))]) == 2
    assert "no row index" in capsys.readouterr().err
