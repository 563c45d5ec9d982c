"""ORC compression framing: the chunks of every compressed part of a file, decompressed
and (for the parts bloomskip writes) compressed.

When a file's PostScript names a codec, every part after it is compressed - Footer,
Metadata, each stripe footer and each stream - as a sequence of chunks, framing
restarting for every part (ORC spec v1, "Compression"). Each chunk starts with a 3-byte
little-endian header: bit 0 set means the chunk is stored as is ("original"), the other
23 bits are the chunk's length. A chunk holds at most ``compression_block_size`` bytes
once decompressed, and no chunk is longer than that on disk either (ORC Java's
``InStream.readHeader`` refuses it); this module enforces both.

Codecs, each chunk on its own:

* ZLIB: raw deflate (no zlib header), stdlib ``zlib``; the deflate stream must end
  exactly at the end of the chunk.
* SNAPPY: a raw Snappy block, whose varint prefix gives the exact size, through
  ``pyarrow.Codec("snappy")``.
* LZ4: a raw LZ4 block (no frame). pyarrow's ``lz4_raw`` needs the exact output size,
  so :func:`lz4_block_size` walks the block's sequences first (checking every length
  and match offset), then pyarrow decompresses.
* ZSTD: a zstd frame. With the frame content size (what ORC Java and C++ write),
  ``pyarrow.Codec("zstd")`` decompresses exactly that; without it, pyarrow's streaming
  decompressor reads at most one byte more than a chunk may hold.
* BROTLI (ORC Java 2.x): pyarrow's streaming brotli decompressor, bounded the same way.
* LZO: :class:`~bloomskip.errors.UnsupportedFileError`. pyarrow has no LZO codec, and
  neither pyarrow nor pyorc can write LZO files; the one PyPI decoder of raw LZO1X
  (``python-lzo``) binds liblzo2, which is GPL, so bloomskip does not depend on it.

Writing (:func:`compress`) frames a part as ORC's writers do (ORC Java's ``OutStream``):
chunks of at most the block size, each compressed with the file's codec - raw deflate
(stdlib ``zlib``), a raw Snappy block, a raw LZ4 block, a zstd frame recording its
content size, or a brotli stream (``pyarrow.Codec``) - and stored as is, with the
"original" bit, when compressing does not make it smaller.

Hostile input: a chunk header past the end of the part, a chunk longer than the block
size, output larger than the block size, a codec that fails, or a total output above
``limit`` (default :data:`MAX_DECOMPRESSED_BYTES`) raise
:class:`~bloomskip.errors.CorruptFileError` naming the part and the file offset of the
chunk. Decompressed output is bounded per chunk and in total before it is allocated.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

import pyarrow as pa

from bloomskip.errors import CorruptFileError, UnsupportedFileError

NONE, ZLIB, SNAPPY, LZO, LZ4, ZSTD, BROTLI = range(7)
CODEC_NAMES = {
    NONE: "NONE",
    ZLIB: "ZLIB",
    SNAPPY: "SNAPPY",
    LZO: "LZO",
    LZ4: "LZ4",
    ZSTD: "ZSTD",
    BROTLI: "BROTLI",
}

HEADER_SIZE = 3
#: ORC Java's reader default when the PostScript has no ``compression_block_size``.
DEFAULT_BLOCK_SIZE = 256 * 1024
#: Chunk lengths have 23 bits, and ORC Java's writers refuse block sizes from 2**23 up.
MAX_BLOCK_SIZE = (1 << 23) - 1
#: Largest decompressed part (footer, stripe footer or stream) read by default.
MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_NOT_FF = re.compile(rb"[^\xff]")
_CODECS: dict[str, pa.Codec] = {}


def _codec(name: str) -> pa.Codec:
    codec = _CODECS.get(name)
    if codec is None:
        codec = _CODECS[name] = pa.Codec(name)
    return codec


@dataclass(frozen=True, slots=True)
class Compression:
    """How a file's parts are compressed: the PostScript's codec and block size."""

    kind: int
    block_size: int

    @property
    def name(self) -> str:
        return CODEC_NAMES.get(self.kind, f"codec {self.kind}")


def compression_of(kind: int | None, block_size: int | None, label: str) -> Compression:
    """Validate a PostScript's codec and block size (absent codec means NONE)."""
    kind = NONE if kind is None else kind
    if kind == LZO:
        raise UnsupportedFileError(
            f"{label}: LZO-compressed ORC files are not supported (bloomskip has no LZO "
            "decoder); rewrite the file with ZLIB, SNAPPY, LZ4 or ZSTD"
        )
    if kind not in CODEC_NAMES:
        raise UnsupportedFileError(f"{label}: unknown ORC compression kind {kind}")
    size = DEFAULT_BLOCK_SIZE if block_size is None else block_size
    if kind != NONE and not 0 < size <= MAX_BLOCK_SIZE:
        raise CorruptFileError(
            f"{label}: compression block size {size} is not in 1..{MAX_BLOCK_SIZE} "
            "(chunk lengths have 23 bits)"
        )
    return Compression(kind, size)


def decompress(
    data: bytes,
    compression: Compression,
    *,
    name: str,
    offset: int = 0,
    limit: int = MAX_DECOMPRESSED_BYTES,
) -> bytes:
    """The decompressed bytes of one framed part ``data`` (read from file ``offset``).

    ``name`` says which part it is (for errors, e.g. ``"f.orc: stripe 0 footer"``).
    """
    if compression.kind == NONE:
        if len(data) > limit:
            raise CorruptFileError(f"{name}: {len(data):,} bytes at {offset} exceed {limit:,}")
        return bytes(data)
    block = compression.block_size
    kind = compression.kind
    out: list[bytes] = []
    total = 0
    pos = 0
    n = len(data)
    while pos < n:
        at = offset + pos
        if n - pos < HEADER_SIZE:
            raise CorruptFileError(
                f"{name}: compression chunk header at file offset {at} cut short "
                f"({n - pos} of 3 bytes)"
            )
        header = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
        pos += HEADER_SIZE
        original = header & 1
        length = header >> 1
        if length > block:
            raise CorruptFileError(
                f"{name}: compression chunk at file offset {at} is {length:,} bytes, "
                f"more than the block size {block:,}"
            )
        if length > n - pos:
            raise CorruptFileError(
                f"{name}: compression chunk at file offset {at} claims {length:,} bytes "
                f"but {n - pos:,} are left"
            )
        chunk = data[pos : pos + length]
        pos += length
        if original:
            piece = bytes(chunk)
        else:
            piece = _decompress_chunk(kind, chunk, block, f"{name}: chunk at file offset {at}")
        total += len(piece)
        if total > limit:
            raise CorruptFileError(
                f"{name}: decompresses to more than {limit:,} bytes (chunk at file offset {at})"
            )
        out.append(piece)
    return out[0] if len(out) == 1 else b"".join(out)


def compress(data: bytes, compression: Compression) -> bytes:
    """``data`` framed as one compressed part of a file that uses ``compression``.

    NONE returns ``data`` unframed. Otherwise each piece of at most ``block_size`` bytes
    becomes one chunk: a 3-byte little-endian header (length << 1, bit 0 set when the
    piece is stored as is) and the compressed piece, or the piece itself when
    compressing does not shrink it - what ORC Java's and ORC C++'s readers expect.
    """
    kind = compression.kind
    if kind == NONE:
        return bytes(data)
    if kind not in _COMPRESSORS:
        raise UnsupportedFileError(f"bloomskip cannot write {compression.name}-compressed parts")
    block = compression.block_size
    squeeze = _COMPRESSORS[kind]
    view = memoryview(data)
    out = bytearray()
    for at in range(0, len(view), block):
        piece = view[at : at + block]
        packed = squeeze(piece)
        if len(packed) < len(piece):
            out += (len(packed) << 1).to_bytes(HEADER_SIZE, "little")
            out += packed
        else:
            out += ((len(piece) << 1) | 1).to_bytes(HEADER_SIZE, "little")
            out += piece
    return bytes(out)


def _deflate(piece: memoryview) -> bytes:
    c = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15)  # raw deflate
    return c.compress(piece) + c.flush()


def _pyarrow_compressor(name: str):
    def squeeze(piece: memoryview) -> bytes:
        return _codec(name).compress(piece, asbytes=True)

    return squeeze


_COMPRESSORS = {
    ZLIB: _deflate,
    SNAPPY: _pyarrow_compressor("snappy"),
    LZ4: _pyarrow_compressor("lz4_raw"),
    ZSTD: _pyarrow_compressor("zstd"),  # a frame with its content size, as ORC writes
    BROTLI: _pyarrow_compressor("brotli"),
}


def _decompress_chunk(kind: int, chunk: bytes, block: int, where: str) -> bytes:
    try:
        if kind == ZLIB:
            out = _inflate(chunk, block, where)
        elif kind == SNAPPY:
            out = _snappy(chunk, block, where)
        elif kind == LZ4:
            size = lz4_block_size(chunk, block, where)
            out = _codec("lz4_raw").decompress(chunk, decompressed_size=size, asbytes=True)
        elif kind == ZSTD:
            out = _zstd(chunk, block, where)
        else:  # BROTLI
            out = _stream(chunk, "brotli", block, where)
    except (OSError, pa.ArrowException, zlib.error, ValueError) as e:
        if isinstance(e, CorruptFileError):
            raise
        raise CorruptFileError(f"{where}: cannot decompress ({e})") from None
    if len(out) > block:
        raise CorruptFileError(
            f"{where}: decompresses to {len(out):,} bytes, more than the block size {block:,}"
        )
    return out


def _inflate(chunk: bytes, block: int, where: str) -> bytes:
    d = zlib.decompressobj(-15)
    out = d.decompress(chunk, block + 1)
    if len(out) > block:
        raise CorruptFileError(f"{where}: inflates to more than the block size {block:,}")
    if not d.eof or d.unused_data or d.unconsumed_tail:
        raise CorruptFileError(f"{where}: the deflate stream does not end with the chunk")
    return out


def _snappy(chunk: bytes, block: int, where: str) -> bytes:
    size = 0
    shift = 0
    for i in range(min(len(chunk), 5)):
        b = chunk[i]
        size |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
    else:
        raise CorruptFileError(f"{where}: Snappy length prefix is cut short or too long")
    if size > block:
        raise CorruptFileError(
            f"{where}: Snappy block of {size:,} bytes is larger than the block size {block:,}"
        )
    return _codec("snappy").decompress(chunk, decompressed_size=size, asbytes=True)


def lz4_block_size(src: bytes, limit: int, where: str) -> int:
    """The decompressed size of the raw LZ4 block ``src``, checking its structure: every
    literal run and match within the input and the output so far, output at most ``limit``."""
    n = len(src)
    i = 0
    out = 0
    while True:
        if i >= n:
            raise CorruptFileError(f"{where}: LZ4 block ends inside a sequence (byte {i})")
        token = src[i]
        i += 1
        literals = token >> 4
        if literals == 15:
            literals, i = _lz4_length(src, i, literals, where)
        if literals > n - i:
            raise CorruptFileError(f"{where}: LZ4 literals run past the block (byte {i})")
        i += literals
        out += literals
        if out > limit:
            raise CorruptFileError(f"{where}: LZ4 block decompresses to more than {limit:,}")
        if i == n:  # the last sequence has literals only
            return out
        if n - i < 2:
            raise CorruptFileError(f"{where}: LZ4 match offset cut short (byte {i})")
        distance = src[i] | src[i + 1] << 8
        if distance == 0 or distance > out:
            raise CorruptFileError(
                f"{where}: LZ4 match offset {distance} with {out} bytes written (byte {i})"
            )
        i += 2
        match = token & 15
        if match == 15:
            match, i = _lz4_length(src, i, match, where)
        out += match + 4
        if out > limit:
            raise CorruptFileError(f"{where}: LZ4 block decompresses to more than {limit:,}")


def _lz4_length(src: bytes, i: int, base: int, where: str) -> tuple[int, int]:
    """An LZ4 length continued by bytes of 255 and a final byte below 255."""
    m = _NOT_FF.search(src, i)
    if m is None:
        raise CorruptFileError(f"{where}: LZ4 length runs past the block (byte {i})")
    j = m.start()
    return base + 255 * (j - i) + src[j], j + 1


def _zstd(chunk: bytes, block: int, where: str) -> bytes:
    size = zstd_content_size(chunk)
    if size is None:
        return _stream(chunk, "zstd", block, where)
    if size > block:
        raise CorruptFileError(
            f"{where}: zstd frame of {size:,} bytes is larger than the block size {block:,}"
        )
    return _codec("zstd").decompress(chunk, decompressed_size=size, asbytes=True)


def zstd_content_size(frame: bytes) -> int | None:
    """The Frame_Content_Size of a zstd frame header (RFC 8878 3.1.1.1), or None when the
    frame does not record it (or ``frame`` does not start with a zstd frame header)."""
    if len(frame) < 5 or frame[:4] != _ZSTD_MAGIC:
        return None
    fhd = frame[4]
    fcs_flag = fhd >> 6
    single_segment = (fhd >> 5) & 1
    dict_bytes = (0, 1, 2, 4)[fhd & 3]
    fcs_bytes = (single_segment, 2, 4, 8)[fcs_flag]
    if fcs_bytes == 0:
        return None
    at = 5 + (0 if single_segment else 1) + dict_bytes
    if len(frame) < at + fcs_bytes:
        return None
    value = int.from_bytes(frame[at : at + fcs_bytes], "little")
    return value + 256 if fcs_bytes == 2 else value


def _stream(chunk: bytes, codec: str, block: int, where: str) -> bytes:
    """Decompress with pyarrow's streaming decoder, reading at most ``block + 1`` bytes."""
    with pa.CompressedInputStream(pa.BufferReader(chunk), codec) as s:
        out = s.read(block + 1)
    if len(out) > block:
        raise CorruptFileError(
            f"{where}: {codec} chunk decompresses to more than the block size {block:,}"
        )
    return out
