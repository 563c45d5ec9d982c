"""Hostile ORC files: targeted edits of the tail, stripe footers, streams and compression
chunks of small seed files (:func:`tests.support.orc_files.small_files`). Every one must
give a typed :class:`~bloomskip.errors.BloomskipError` naming the file - never a crash, a
hang or unbounded memory - or a correct answer.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from bloomskip.errors import BloomskipError, CorruptFileError, UnsupportedFileError
from bloomskip.orc import messages_pb2 as pb
from bloomskip.orc import read_orc
from bloomskip.orc.file import MAX_DEPTH
from bloomskip.orc.inspect import inspect_orc
from tests.support.orc_files import small_files as make_small_files
from tests.support.orc_files import walk
from tests.support.orc_wire import (
    Tail,
    frame_deflate,
    frame_original,
    lfield,
    parse,
    stripe_footer_edit,
    uvarint,
)

pytest.importorskip("pyorc")


@pytest.fixture(scope="module")
def small_files(tmp_path_factory) -> dict[str, bytes]:
    return make_small_files(tmp_path_factory.mktemp("orc-small"))


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
        ("footer_length", 10**9, "do not fit before the PostScript"),
        ("footer_length", 2**64 - 1, "do not fit"),
        ("metadata_length", 10**9, "do not fit"),
        ("stripe_statistics_length", 10**9, "do not fit"),
        ("footer_length", 0, "."),
        ("compression_block_size", 1 << 23, "block size"),
        ("compression_block_size", 0, "block size"),
        ("compression", 3, "LZO"),
        ("compression", 7, "unknown ORC compression kind 7"),
    ],
)
def test_postscript_fields(small_files, field, value, message):
    tail = Tail(small_files["pyorc-lz4"])
    setattr(tail.ps, field, value)
    ps_raw = tail.ps.SerializeToString()
    data = small_files["pyorc-lz4"]
    edited = data[: -1 - data[-1]] + ps_raw + bytes([len(ps_raw)])
    error = UnsupportedFileError if field == "compression" else BloomskipError
    with pytest.raises(error, match=message) as e:
        walk(edited, "hostile.orc")
    assert str(e.value).startswith("hostile.orc")


def test_magic(small_files):
    data = small_files["pyorc-snappy"]
    tail = Tail(data)
    tail.ps.magic = b"ORK"
    ps_raw = tail.ps.SerializeToString()
    no_magic = data[: -1 - data[-1]] + ps_raw + bytes([len(ps_raw)])
    assert walk(no_magic) >= 3  # the file header still says ORC (as for old files)
    expect_error(b"ORK" + no_magic[3:], "not an ORC file")


def test_footer_lengths_past_the_file(small_files):
    tail = Tail(small_files["pyarrow-zstd"])
    data = tail.build()
    assert walk(data) >= 3
    raw = frame_original(tail.footer.SerializeToString(), 4096)
    tail.ps.footer_length = len(data) * 2
    ps_raw = tail.ps.SerializeToString()
    expect_error(tail.body + raw + ps_raw + bytes([len(ps_raw)]), "do not fit")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("offset", 10**12, "outside the stripes' area"),
        ("offset", 0, "outside the stripes' area"),
        ("index_length", 10**12, "outside"),
        ("data_length", 2**64 - 1, "outside"),
        ("footer_length", 0, "has no footer"),
        ("footer_length", 10**6, "outside"),
        ("number_of_rows", 2**62, "footer says"),
    ],
)
def test_stripe_information(small_files, field, value, message):
    tail = Tail(small_files["pyarrow-uncompressed"])
    setattr(tail.footer.stripes[1], field, value)
    expect_error(tail.build(), message)


def test_absurd_row_counts(small_files):
    """Row counts that would make millions of row groups, or miss the index entries."""
    data = small_files["pyorc-zlib"]
    rows = [s.num_rows for s in read_orc(data).stripes]
    tail = Tail(data)
    tail.footer.stripes[0].number_of_rows = 2**62
    tail.footer.number_of_rows = 2**62 + sum(rows[1:])
    expect_error(tail.build(), "row groups of 300")
    tail = Tail(small_files["pyorc-zlib"])
    tail.footer.stripes[0].number_of_rows += 300
    tail.footer.number_of_rows += 300
    expect_error(tail.build(), r"entries for \d+ row groups")
    tail.footer.row_index_stride = 1  # stride 1: each stripe would need one entry per row
    expect_error(tail.build(), "entries for")


def types_footer(tail: Tail, types: list[pb.Type]) -> bytes:
    footer = pb.Footer()
    footer.CopyFrom(tail.footer)
    footer.ClearField("types")
    footer.ClearField("statistics")
    footer.types.extend(types)
    return footer.SerializeToString()


def struct_type(children: list[int], names: list[str] | None = None) -> pb.Type:
    names = [f"c{i}" for i in range(len(children))] if names is None else names
    return pb.Type(kind=12, subtypes=children, field_names=[n.encode() for n in names])


LONG = pb.Type(kind=4)


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
        ([pb.Type(kind=10, subtypes=[1, 2]), LONG, LONG], "LIST type 0", CorruptFileError),
        ([pb.Type(kind=11, subtypes=[1]), LONG], "MAP type 0", CorruptFileError),
        ([pb.Type(kind=4, subtypes=[1]), LONG], "kind LONG has children", CorruptFileError),
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
    tail.footer.ClearField("stripes")  # no stripes: nothing to index
    tail.footer.number_of_rows = 0
    f = read_orc(tail.build(footer=types_footer(tail, types)))
    assert len(f.columns) == MAX_DEPTH + 1 and f.columns[-1].name.count(".") == MAX_DEPTH - 1


def test_corrupt_footer_chunks(small_files):
    """The footer's chunks: longer than the block size, than the data, or garbage."""
    data = small_files["pyorc-zlib"]
    tail = Tail(data)
    plain = tail.footer.SerializeToString()
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
    data = tail.build(footer=frame_deflate(tail.footer.SerializeToString(), 4096), frame=False)
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
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "x.orc"
        path.write_bytes(data)
        return inspect_orc(path)


def test_stream_lengths_and_columns(small_files):
    data = small_files["pyarrow-uncompressed"]

    def first_stream(**values):
        def edit(sf) -> None:
            for name, value in values.items():
                setattr(sf.streams[0], name, value)

        return edit

    # same-size varints keep the stripe footer's length
    expect_error(stripe_footer_edit(data, first_stream(column=99), range(1)), "names column 99")
    length = read_orc(data).streams(0)[0].length
    big = 2 ** (7 * len(uvarint(length))) - 1  # the largest varint of the same size
    expect_error(
        stripe_footer_edit(data, first_stream(length=big), range(1)),
        "runs past the stripe's index and data",
    )


def test_bloom_entries_must_match_row_groups(small_files):
    """A bloom filter index with an entry missing is refused (for that column only)."""
    data = small_files["pyarrow-uncompressed"]
    f = read_orc(data)
    bf = f.bloom_filters(0, 1)
    index = parse(pb.BloomFilterIndex, data[bf.offset : bf.offset + bf.length])
    del index.bloom_filter[-1]
    short = index.SerializeToString()
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
    tail.footer.encryption = b""
    f = read_orc(tail.build(), name="hostile.orc")
    assert f.encrypted and f.columns and f.stripes
    with pytest.raises(UnsupportedFileError, match=r"hostile.orc: stripe 0 has encrypted"):
        f.bloom_filters(0, 1)
