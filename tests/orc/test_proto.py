"""ORC's metadata messages through protobuf, seen as bloomskip's typed view.

Messages are written here byte by byte (the raw bytes are the point): integers of every
width and encoding, packed and unpacked repeated fields, unknown fields, merged singular
messages, absent fields; and wire bytes that lie - truncated varints and fields, invalid
wire types and field numbers, unterminated and deeply nested groups - which must give a
:class:`~bloomskip.errors.CorruptFileError` naming the place and the message. The
generated classes round-trip the messages of real files byte for byte.
"""

from __future__ import annotations

import struct

import pytest

from bloomskip.errors import CorruptFileError
from bloomskip.orc import messages_pb2 as pb
from bloomskip.orc import proto, read_orc
from bloomskip.orc.compression import NONE, decompress
from tests.support.orc_files import small_files
from tests.support.orc_wire import I32, I64, Tail, lfield, parse, tag, uvarint, vfield, zigzag


def stats(raw: bytes) -> proto.ColumnStatistics:
    """``raw`` as the ColumnStatistics of a one-entry row index."""
    (entry,) = proto.row_index(lfield(1, lfield(2, raw)), "t")
    assert entry.statistics is not None
    return entry.statistics


def test_integers():
    # uint64 up to 2**64 - 1, from varints of 1 to 10 bytes
    for n in (0, 1, 127, 128, 300, 2**32, 2**63, 2**64 - 1):
        assert proto.postscript(vfield(1, n), "t").footer_length == n
    # a 10-byte varint with bits past 64 keeps 64
    assert proto.postscript(tag(1, 0) + b"\xff" * 9 + b"\x7f", "t").footer_length == 2**64 - 1
    # sint64 (zigzag): IntegerStatistics
    for wire, value in ((0, 0), (1, -1), (2, 1), (3, -2), (2**64 - 1, -(2**63))):
        assert stats(lfield(2, vfield(1, wire))).int_statistics.minimum == value
    # sint32: only the low 32 bits count; int32: the low 32 bits, signed
    assert stats(lfield(7, vfield(1, 2**32 + 3))).date_statistics.minimum == -2
    assert stats(lfield(9, vfield(5, 2**64 - 1))).timestamp_statistics.minimum_nanos == -1
    # uint32 fields (and enums, declared uint32) keep the low 32 bits
    ps = proto.postscript(vfield(2, 2**32 + 9) + vfield(6, 2**64 - 1), "t")
    assert (ps.compression, ps.writer_version) == (9, 2**32 - 1)
    # a bool is any non-zero varint
    assert stats(vfield(10, 5)).has_null is True and stats(vfield(10, 0)).has_null is False


def test_absent_fields_are_none():
    f = proto.footer(b"", "t")
    assert f == proto.Footer(None, None, (), (), (), None, (), None, None, False, None, None)
    ps = proto.postscript(b"", "t")
    assert ps == proto.PostScript(None, None, None, (), None, None, None, None)
    assert stats(b"") == proto.ColumnStatistics()
    assert stats(lfield(2, b"")).int_statistics == proto.IntegerStatistics(None, None, None)
    (entry,) = proto.row_index(lfield(1, b""), "t")
    assert entry == proto.RowIndexEntry((), None)
    sf = proto.stripe_footer(lfield(1, b"") + lfield(2, b""), "t")
    assert sf == proto.StripeFooter(
        (proto.Stream(None, None, None),), (proto.ColumnEncoding(None, None, None),), None, 0
    )


def test_messages_decode_like_protobuf():
    # packed and unpacked repeated, unknown fields of every wire type, a complete group
    t = (
        vfield(1, 12)
        + lfield(2, uvarint(1) + uvarint(300))
        + vfield(2, 7)
        + lfield(3, b"a")
        + lfield(3, b"b\xff")
        + tag(99, I64)
        + b"\0" * 8
        + tag(98, I32)
        + b"\0" * 4
        + lfield(97, b"\xff" * 3)
        + vfield(96, 2**64 - 1)
        + tag(95, 3)
        + vfield(1, 1)
        + tag(95, 4)
        + vfield(5, 38)
        + lfield(7, lfield(1, b"k") + lfield(2, b"v"))
        + lfield(7, lfield(2, b"only a value"))
    )
    (typ,) = proto.footer(lfield(4, t), "t").types
    assert typ == proto.Type(
        12, (1, 300, 7), ("a", "b\ufffd"), None, 38, None, (("k", "v"), ("", "only a value"))
    )
    # a singular scalar seen twice keeps the last; a known field of another wire type is
    # skipped as unknown; singular messages seen twice are merged
    cs = stats(
        vfield(1, 5)
        + vfield(1, 9)
        + lfield(10, b"x")
        + lfield(2, vfield(1, zigzag(-3)))
        + lfield(2, vfield(2, zigzag(4)))
    )
    assert cs.number_of_values == 9 and cs.has_null is None
    assert cs.int_statistics == proto.IntegerStatistics(-3, 4, None)
    # doubles, bytes strings (never decoded), decimal text, bucket counts
    cs = stats(
        lfield(3, tag(1, I64) + struct.pack("<d", -1.5))
        + lfield(4, lfield(1, "é".encode()) + lfield(2, b"\xff") + lfield(4, b"lo"))
        + lfield(6, lfield(1, b"-0.5") + lfield(2, b"1\xff"))
        + lfield(5, lfield(1, uvarint(3) + uvarint(2**40)))
        + vfield(10, 1)
    )
    assert cs.double_statistics == proto.DoubleStatistics(-1.5, None, None)
    assert cs.string_statistics == proto.StringStatistics("é".encode(), b"\xff", None, b"lo")
    assert cs.decimal_statistics == proto.DecimalStatistics("-0.5", "1\ufffd", None)
    assert cs.bucket_statistics == proto.BucketStatistics((3, 2**40)) and cs.has_null is True


def test_bloom_filter_messages():
    words = [3, 2**64 - 1, 0]
    legacy = vfield(1, 4) + b"".join(tag(2, I64) + w.to_bytes(8, "little") for w in words)
    packed = vfield(1, 4) + lfield(2, b"".join(w.to_bytes(8, "little") for w in words))
    utf8 = vfield(1, 4) + lfield(3, b"\x01" * 16)
    index = lfield(1, legacy) + lfield(1, packed) + lfield(1, utf8) + lfield(1, b"")
    a, b, c, d = proto.bloom_filter_index(index, "t")
    assert a == b and a.bitset == b"".join(w.to_bytes(8, "little") for w in words)
    assert a.bitset_words == 3 and a.words() == tuple(words) and a.utf8bitset is None
    assert c.utf8bitset == b"\x01" * 16 and c.bitset == b""
    assert d == proto.BloomFilter(None, b"", None)
    with pytest.raises(CorruptFileError, match="not a valid BloomFilterIndex message"):
        proto.bloom_filter_index(lfield(1, lfield(2, b"x" * 7)), "t")  # packed, 7 bytes


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"\x0a\x05abc", id="length past the end"),
        pytest.param(b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\x7f", id="absurd length"),
        pytest.param(b"\x0b", id="unterminated group"),
        pytest.param(b"\x0c", id="end of a group never started"),
        pytest.param(b"\x0e", id="wire type 6"),
        pytest.param(b"\x0f", id="wire type 7"),
        pytest.param(b"\x00\x01", id="field number 0"),
        pytest.param(b"\x09\x01\x02", id="fixed64 cut short"),
        pytest.param(b"\x0d\x01", id="fixed32 cut short"),
        pytest.param(b"\x08", id="varint missing"),
        pytest.param(b"\x08\x80\x80", id="varint cut short"),
        pytest.param(b"\x08" + b"\xff" * 10 + b"\x01", id="varint of 11 bytes"),
        pytest.param(b"\x0b" * 101 + b"\x0c" * 101, id="groups nested 101 deep"),
    ],
)
def test_corrupt_wire(raw):
    for read, message in (
        (proto.footer, "Footer"),
        (proto.row_index, "RowIndex"),
        (proto.stripe_footer, "StripeFooter"),
    ):
        with pytest.raises(
            CorruptFileError, match=f"^f.orc: part at offset 7: not a valid {message} message"
        ):
            read(raw, "f.orc: part at offset 7")


def test_corrupt_nested_message_names_the_place():
    bad = lfield(1, lfield(2, b"\x0a\x09"))  # entry 0 -> statistics -> field cut short
    with pytest.raises(CorruptFileError, match=r"^f.orc: row index: not a valid RowIndex"):
        proto.row_index(bad, "f.orc: row index")


def test_protobuf_limits_fit_orc():
    """Unknown groups nest up to protobuf's limit (ORC writes no groups, and its deepest
    message here is four levels: Metadata > StripeStatistics > ColumnStatistics >
    IntegerStatistics)."""
    assert proto.footer(b"\x0b" * 90 + b"\x0c" * 90, "t").types == ()
    deep = lfield(1, lfield(1, lfield(2, vfield(1, zigzag(-7)))))
    assert proto.metadata(deep, "t").stripe_statistics[0][0].int_statistics.minimum == -7
    # a large message parses whole: 8 MiB of one bloom filter's words
    big = lfield(1, vfield(1, 3) + lfield(3, b"\xa5" * (8 << 20)))
    (f,) = proto.bloom_filter_index(big, "t")
    assert len(f.utf8bitset) == 8 << 20


def test_real_messages_round_trip(tmp_path):
    """The generated classes read and write the tails and stripe footers of real files
    byte for byte (unknown fields kept), so tests can edit them in place."""
    for name, data in small_files(tmp_path).items():
        f = read_orc(data)
        ps_raw = data[-1 - data[-1] : -1]
        footer_raw = decompress(
            data[len(data) - 1 - len(ps_raw) - f.postscript.footer_length : -1 - len(ps_raw)],
            f.compression,
            name=name,
        )
        parts = [(pb.PostScript, ps_raw), (pb.Footer, footer_raw)]
        for s in f.stripes:
            raw = data[s.footer_offset : s.footer_offset + s.footer_length]
            parts.append((pb.StripeFooter, decompress(raw, f.compression, name=name)))
        for message, raw in parts:
            assert parse(message, raw).SerializeToString() == raw, (name, message)
        if f.compression.kind == NONE:
            assert Tail(data).build() == data, name
