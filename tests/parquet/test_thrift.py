"""The Thrift compact codec: byte-identical round trips, edits, and hostile input."""

from __future__ import annotations

import struct

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomskip.errors import CorruptFileError
from bloomskip.parquet import thrift
from bloomskip.parquet.thrift import I32, I64, decode_struct, encode_struct


def _footer(path) -> bytes:
    data = path.read_bytes()
    (n,) = struct.unpack("<I", data[-8:-4])
    return data[-8 - n : -8]


@pytest.fixture(scope="module")
def footer(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("thrift") / "t.parquet"
    t = pa.table({"a": list(range(1000)), "s": [f"v{i}" for i in range(1000)]})
    pq.write_table(t, path, row_group_size=300, bloom_filter_options={"s": True})
    return _footer(path)


def test_round_trip_is_byte_identical(footer):
    s, end = decode_struct(footer)
    assert end == len(footer)
    assert encode_struct(s) == footer


def test_edit_one_nested_field_keeps_everything_else(footer):
    s, _ = decode_struct(footer)
    md = s.get(4).items[1].get(1).items[0].get(3)  # row group 1, column 0, ColumnMetaData
    assert 14 not in md  # column "a" has no filter
    md.set(14, I64, 123_456)
    md.set(15, I32, 99)
    out = encode_struct(s)
    again, _ = decode_struct(out)
    md2 = again.get(4).items[1].get(1).items[0].get(3)
    assert (md2.get(14), md2.get(15)) == (123_456, 99)
    md2.remove(14)
    md2.remove(15)
    assert encode_struct(again) == footer


def test_unknown_fields_and_long_headers_survive():
    # field 1 (i32 = 7), then field 300 (long form header, binary), then field 301 bool.
    raw = bytes([0x15, 0x0E, 0x08]) + thrift._zigzag(300, 16) + b"\x03abc" + b"\x11\x00"
    s, end = decode_struct(raw)
    assert end == len(raw) and s.get(1) == 7 and s.get(300) == b"abc" and s.get(301) is True
    assert encode_struct(s) == raw
    s.set(2, I32, 5)  # a new field between 1 and 300
    t, _ = decode_struct(encode_struct(s))
    assert [f.id for f in t.fields] == [1, 2, 300, 301] and t.get(300) == b"abc"


def test_every_type_round_trips():
    s = thrift.Struct()
    s.set(1, thrift.BYTE, -3)
    s.set(2, thrift.I16, -300)
    s.set(3, I32, 2**31 - 1)
    s.set(4, I64, -(2**63))
    s.set(5, thrift.DOUBLE, 1.5)
    s.set(6, thrift.BINARY, b"\x00\xff")
    s.set(7, thrift.LIST, thrift.List(I32, list(range(20))))
    s.set(8, thrift.SET, thrift.List(thrift.BOOL_TRUE, [True, False], is_set=True))
    s.set(9, thrift.MAP, thrift.Map(thrift.BINARY, I64, [(b"k", 1), (b"l", 2)]))
    s.set(10, thrift.MAP, thrift.Map(0, 0, []))
    s.set(11, thrift.BOOL_FALSE, False)
    inner = thrift.Struct()
    inner.set(1, I32, 1)
    s.set(12, thrift.STRUCT, inner)
    raw = encode_struct(s)
    t, _ = decode_struct(raw)
    assert [t.get(i) for i in range(1, 7)] == [-3, -300, 2**31 - 1, -(2**63), 1.5, b"\x00\xff"]
    assert t.get(7).items == list(range(20)) and t.get(8).items == [True, False]
    assert t.get(9).items == [(b"k", 1), (b"l", 2)] and t.get(11) is False
    assert encode_struct(t) == raw


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", "ends early"),
        (b"\x15", "ends early"),
        (b"\x18\x7f", "runs past the end"),  # binary of 63 bytes, none there
        (b"\x19\xf5\xff\xff\xff\x0f", "cannot fit"),  # list of 2^32 i32s
        (b"\x15" + b"\xff" * 11, "longer than 10 bytes"),
        (b"\x15\x80\x80\x80\x80\x20", "does not fit in 32 bits"),
        (b"\x1d\x00", "unknown Thrift compact type 13"),
        (b"\x1c" * 100, "nested deeper"),
    ],
)
def test_hostile_bytes_raise_typed_errors(raw, message):
    with pytest.raises(CorruptFileError, match=message):
        decode_struct(raw, name="x.parquet footer")


@settings(max_examples=2000, deadline=None)
@given(st.data())
def test_mutated_footers_only_raise_typed_errors(footer, data):
    buf = bytearray(footer)
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(buf) - 1))
        buf[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(buf)))
    try:
        s, _ = decode_struct(bytes(buf[:cut]))
    except CorruptFileError:
        return
    encode_struct(s)  # whatever decodes also encodes


def _force(value) -> None:
    """Decode every deferred struct under ``value`` (raises what decoding raises)."""
    if isinstance(value, thrift.Struct):
        for f in value.fields:
            _force(f.value)
    elif isinstance(value, thrift.List):
        for item in value.items:
            _force(item)
    elif isinstance(value, thrift.Map):
        for k, v in value.items:
            _force(k)
            _force(v)


def test_list_elements_are_deferred_and_decode_on_access(footer):
    s, _ = decode_struct(footer)
    groups = s.get(4).items
    assert not any(g.is_decoded for g in groups)
    assert groups[1].get(3) == 300  # num_rows, decoded now
    assert groups[1].is_decoded and not groups[0].is_decoded
    assert encode_struct(s) == footer


@settings(max_examples=3000, deadline=None)
@given(st.data())
def test_compiled_skipper_agrees_with_the_decoder(footer, data):
    """A deferred struct must decode whenever the skipper accepted it, and end where
    the skipper said; the skipper must reject what the decoder rejects."""
    import numpy as np

    buf = bytearray(footer)
    for _ in range(data.draw(st.integers(0, 6))):
        i = data.draw(st.integers(0, len(buf) - 1))
        buf[i] = data.draw(st.integers(0, 255))
    raw = bytes(buf[: data.draw(st.integers(0, len(buf)))])
    skipped = thrift.kernels.skip_struct(
        np.frombuffer(raw, np.uint8), 0, len(raw), 0, thrift.MAX_DEPTH
    )
    try:
        s, end = decode_struct(raw)
        _force(s)
    except CorruptFileError:
        assert skipped == -1
        return
    assert skipped == end
