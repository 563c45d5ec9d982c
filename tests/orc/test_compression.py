"""ORC compression framing: chunks of every codec, with sizes and bytes from pyarrow's own
compressors (and zlib's), stored chunks mixed in, and chunk headers, block sizes and
codec streams that lie."""

from __future__ import annotations

import os
import zlib

import pyarrow as pa
import pytest

from bloomskip.errors import CorruptFileError, UnsupportedFileError
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
from tests.support.orc_wire import frame_original

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
