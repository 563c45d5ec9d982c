"""Reading bloom filters from Parquet files: every writer's layout, and hostile files."""

from __future__ import annotations

import re
import struct

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bloomskip.errors import CorruptFileError
from bloomskip.parquet.bloom import parse_header, read_bloom_filters
from bloomskip.parquet.footer import read_footer
from bloomskip.parquet.thrift import I32, I64, decode_struct, encode_struct
from tests.support import peers


def _table(n: int = 4000) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "user": pa.array([f"user_{i:06d}" for i in range(n)]),
            "small": pa.array([i % 7 for i in range(n)], pa.int8()),
        }
    )


@pytest.fixture(scope="module")
def pyarrow_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("read") / "pa.parquet"
    opts = {"id": {"ndv": 1000, "fpp": 0.01}, "user": True, "small": True}
    pq.write_table(_table(), path, row_group_size=1000, bloom_filter_options=opts)
    return path


@pytest.fixture(scope="module")
def duckdb_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("read") / "duck.parquet"
    con = duckdb.connect()
    con.register("t", _table())
    con.execute(
        f"COPY t TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 2048, DICTIONARY_SIZE_LIMIT 4000)"
    )
    return path


def _rewrite_footer(src, dst, edit) -> None:
    """Copy ``src`` to ``dst`` with ``edit(FileMetaData)`` applied to the footer."""
    data = src.read_bytes()
    (n,) = struct.unpack("<I", data[-8:-4])
    meta, _ = decode_struct(data[-8 - n : -8])
    edit(meta)
    footer = encode_struct(meta)
    dst.write_bytes(data[: -8 - n] + footer + struct.pack("<I", len(footer)) + b"PAR1")


def _chunks(meta):
    for rg in meta.get(4).items:
        for cc in rg.get(1).items:
            yield cc.get(3)


@pytest.mark.parametrize("fixture", ["pyarrow_file", "duckdb_file"])
def test_reader_agrees_with_independent_parser(fixture, request):
    path = request.getfixturevalue(fixture)
    ours = {(f.row_group, f.column): f for f in read_bloom_filters(path) if f.status == "ok"}
    theirs = {(f.row_group, f.column): f for f in peers.read_bloom_filters(path)}
    assert ours.keys() == theirs.keys() and ours
    for key, f in ours.items():
        assert f.filter.to_bytes() == theirs[key].bitset
        assert f.header_length == theirs[key].header.header_len


def test_footer_schema_and_row_groups(pyarrow_file):
    ft = read_footer(pyarrow_file)
    assert [leaf.name for leaf in ft.leaves] == ["id", "user", "small"]
    assert [leaf.physical_type.value for leaf in ft.leaves] == ["INT64", "BYTE_ARRAY", "INT32"]
    assert [(g.first_row, g.num_rows) for g in ft.row_groups] == [
        (0, 1000), (1000, 1000), (2000, 1000), (3000, 1000),
    ]  # fmt: skip
    assert ft.num_rows == 4000 and "parquet-cpp" in ft.created_by
    with pytest.raises(KeyError, match="no column 'nope'"):
        ft.leaf("nope")


def test_filters_without_length_field_are_read(pyarrow_file, tmp_path):
    # Files from before parquet-format 2.10 have no bloom_filter_length.
    dst = tmp_path / "nolength.parquet"
    _rewrite_footer(pyarrow_file, dst, lambda m: [md.remove(15) for md in _chunks(m)])
    assert pq.read_table(dst).equals(pq.read_table(pyarrow_file))
    got = [(f.row_group, f.column, f.status, f.filter) for f in read_bloom_filters(dst)]
    want = [(f.row_group, f.column, f.status, f.filter) for f in read_bloom_filters(pyarrow_file)]
    assert got == want


def _poison(pyarrow_file, tmp_path, edit):
    dst = tmp_path / "bad.parquet"
    _rewrite_footer(pyarrow_file, dst, edit)
    return read_bloom_filters(dst)


def _first_md(meta):
    return next(iter(_chunks(meta)))


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (lambda md: md.set(15, I32, 10**9), "runs past the data"),
        (lambda md: md.set(15, I32, -5), "runs past the data"),
        (lambda md: md.set(14, I64, 2**40), "outside the data"),
        (lambda md: md.set(14, I64, -1), "outside the data"),
        (lambda md: md.set(15, I32, 17), "!= header"),
        (lambda md: md.set(14, I64, 4), "algorithm|num_bytes|Thrift|header"),  # not a header
    ],
)
def test_bad_locations_make_the_filter_invalid_not_absent_values(
    pyarrow_file, tmp_path, edit, reason
):
    loaded = _poison(pyarrow_file, tmp_path, lambda m: edit(_first_md(m)))
    first = loaded[0]
    assert first.status == "invalid" and first.filter is None
    assert re.search(reason, first.reason), first.reason
    assert "row group 0 column id" in first.reason
    assert all(f.status == "ok" for f in loaded[1:] if f.column == 1)


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (bytes.fromhex("15011c1c00001c1c00001c1c000000"), "num_bytes -1"),
        (bytes.fromhex("1580808080101c1c00001c1c00001c1c000000"), "does not fit in 32 bits"),
        (bytes.fromhex("15ffffffff0f1c1c00001c1c00001c1c000000"), "num_bytes -2147483648"),
        (bytes.fromhex("1580808080081c1c00001c1c00001c1c000000"), "1073741824 is not a power"),
        (bytes.fromhex("15401c2c00001c1c00001c1c000000"), "algorithm is member 2"),
        (bytes.fromhex("15401c1c00001c2c00001c1c000000"), "hash is member 2"),
        (bytes.fromhex("15401c1c00001c1c00001c3c000000"), "compression is member 3"),
        (bytes.fromhex("15401c1c00001c1c000000"), "compression is missing"),
        (bytes.fromhex("15c0011c1c00001c1c00001c1c000000"), "not a power of two"),
    ],
)
def test_hostile_headers(header, message):
    with pytest.raises(CorruptFileError, match=message):
        parse_header(header)


def test_header_sizes_known_answers():
    assert parse_header(bytes.fromhex("15401c1c00001c1c00001c1c000000")) == (32, 15)
    assert parse_header(bytes.fromhex("158080021c1c00001c1c00001c1c000000")) == (16384, 17)


@pytest.mark.parametrize(
    ("mutate", "error", "message"),
    [
        (lambda b: b[:7], CorruptFileError, "too small"),
        (lambda b: b"XXXX" + b[4:], CorruptFileError, "not a Parquet file"),
        (
            lambda b: b[:-8] + struct.pack("<I", 2**32 - 1) + b"PAR1",
            CorruptFileError,
            "footer length",
        ),
        (lambda b: b[:-8] + struct.pack("<I", len(b)) + b"PAR1", CorruptFileError, "footer length"),
        (lambda b: b[:-8] + b"\x05\x00\x00\x00PAR1", CorruptFileError, "Thrift|no schema"),
        (lambda b: b[:-4] + b"PARE", CorruptFileError, "not a Parquet file"),
    ],
)
def test_hostile_files(pyarrow_file, tmp_path, mutate, error, message):
    bad = tmp_path / "hostile.parquet"
    bad.write_bytes(mutate(pyarrow_file.read_bytes()))
    with pytest.raises(error, match=message) as info:
        read_footer(bad)
    assert "hostile.parquet" in str(info.value)


def test_inspect_reports_every_chunk(pyarrow_file, capsys):
    import json

    from bloomskip.cli import main

    assert main(["inspect", str(pyarrow_file), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["num_rows"] == 4000 and len(report["row_groups"]) == 4
    for rg in report["row_groups"]:
        by_col = {c["column"]: c for c in rg["columns"]}
        assert by_col["id"]["filter"] == "ok" and by_col["id"]["bytes"] >= 32
        assert 0 < by_col["user"]["fill_ratio"] < 1
        assert by_col["user"]["estimated_ndv"] == pytest.approx(1000, rel=0.1)
        assert by_col["id"]["placement"] == "after all row groups"  # Arrow C++ layout
    assert main(["inspect", str(pyarrow_file)]) == 0
    assert "user" in capsys.readouterr().out


def test_inspect_missing_file_is_exit_2(tmp_path, capsys):
    from bloomskip.cli import main

    assert main(["inspect", str(tmp_path / "missing.parquet")]) == 2
    assert "missing.parquet" in capsys.readouterr().err
