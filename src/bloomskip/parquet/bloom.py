"""Locate, validate and load the bloom filters of a Parquet file.

A column chunk's filter is a Thrift-compact ``BloomFilterHeader`` followed by the bitset,
at ``ColumnMetaData.bloom_filter_offset`` (field 14); ``bloom_filter_length`` (field 15,
header + bitset) is set by every current writer but absent from files before
parquet-format 2.10. Filters may sit after each row group (arrow-rs), after all row
groups (Arrow C++), after the page indexes (parquet-java) or before the footer (DuckDB);
only the offsets matter.

A filter is used only if it passes every check: algorithm BLOCK, hash XXHASH,
compression UNCOMPRESSED, ``num_bytes`` a power of two from 32 B to 128 MiB, header and
bitset inside the file and before the footer, and ``bloom_filter_length`` (when present)
equal to header + bitset. A filter that fails is reported with the reason and treated as
absent - never as "value absent".

The filter of an encrypted column is two AES-GCM modules with the column's key
(parquet-format ``BloomFilter.md``, "Encryption"): the header (module type 8) and the
bitset (type 9), each ``length | nonce | ciphertext | tag``; ``bloom_filter_length`` is
then both modules together. A module that fails authentication is an invalid filter
(its reason says so); a column whose key is missing has a "locked" filter.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from typing import BinaryIO

from bloomskip.errors import CorruptFileError, DecryptionError
from bloomskip.parquet.aes import BLOOM_FILTER_BITSET, BLOOM_FILTER_HEADER
from bloomskip.parquet.crypto import ChunkCrypto, Decryption
from bloomskip.parquet.footer import ColumnChunk, Footer
from bloomskip.parquet.thrift import I32, STRUCT, Struct, decode_struct, encode_struct
from bloomskip.sbbf import Sbbf
from bloomskip.sbbf.sizing import MAX_BYTES, MIN_BYTES, validate_num_bytes

#: Bytes read to find a header when ``bloom_filter_length`` is missing (a header is at
#: most 19 bytes for standard fields; room is left for unknown ones).
HEADER_WINDOW = 256


class FilterStatus(StrEnum):
    """What loading a column chunk's filter found (compares equal to its text)."""

    OK = "ok"
    ABSENT = "absent"  #: no filter
    INVALID = "invalid"  #: a filter that fails a check: never used
    LOCKED = "locked"  #: the column's key was not given


@dataclass(frozen=True)
class LoadedFilter:
    """The outcome of loading one column chunk's filter."""

    row_group: int
    column: int
    status: FilterStatus
    reason: str
    filter: Sbbf | None = None
    offset: int | None = None
    length: int | None = None  # header + bitset, as found
    header_length: int | None = None


def _union_member(header: Struct, fid: int) -> int | None:
    """Which member (field id) a one-member union field holds, or None."""
    f = header.field(fid)
    if f is None or f.type != STRUCT or len(f.value.fields) != 1:
        return None
    return f.value.fields[0].id


def parse_header(buf: bytes, *, name: str = "bloom filter") -> tuple[int, int]:
    """Validate a BloomFilterHeader at the start of ``buf``: (num_bytes, header length)."""
    header, end = decode_struct(buf, name=name)
    num_bytes = header.get(1)
    if not isinstance(num_bytes, int):
        raise CorruptFileError(f"{name}: header has no num_bytes")
    checks = ((2, "algorithm", "BLOCK"), (3, "hash", "XXHASH"), (4, "compression", "UNCOMPRESSED"))
    for fid, what, expected in checks:
        member = _union_member(header, fid)
        if member != 1:
            raise CorruptFileError(
                f"{name}: {what} is {'missing' if member is None else f'member {member}'}, "
                f"only {expected} is defined"
            )
    if num_bytes < MIN_BYTES or num_bytes > MAX_BYTES or num_bytes & (num_bytes - 1):
        raise CorruptFileError(
            f"{name}: num_bytes {num_bytes} is not a power of two from 32 B to 128 MiB"
        )
    return num_bytes, end


def encode_header(num_bytes: int) -> bytes:
    """The canonical BloomFilterHeader for a bitset of ``num_bytes``, as every writer emits it.

    ``numBytes`` (field 1, i32), then the three one-member unions ``algorithm`` = BLOCK,
    ``hash`` = XXHASH and ``compression`` = UNCOMPRESSED (fields 2-4, each member 1, an
    empty struct): ``15 <zigzag varint numBytes> 1c 1c 00 00 1c 1c 00 00 1c 1c 00 00 00``,
    15 to 19 bytes. Raises ``InvalidFilterSizeError`` unless ``num_bytes`` is a power of
    two from 32 B to 128 MiB.
    """
    validate_num_bytes(num_bytes)
    header = Struct()
    header.set(1, I32, num_bytes)
    for fid in (2, 3, 4):  # algorithm, hash, compression: member 1 of each union
        member = Struct()
        member.set(1, STRUCT, Struct())
        header.set(fid, STRUCT, member)
    return encode_struct(header)


def load_filter(fh: BinaryIO, footer: Footer, chunk: ColumnChunk) -> LoadedFilter:
    """Load and validate the filter of one column chunk; never raises for a bad filter."""
    r, c = chunk.row_group, chunk.column
    if chunk.locked:
        return LoadedFilter(r, c, FilterStatus.LOCKED, chunk.locked)
    offset, length = chunk.bloom_filter_offset, chunk.bloom_filter_length
    md = chunk.meta  # the raw fields: an offset that is not an integer is no filter either
    if offset is None and (md is None or md.get(14) is None):
        return LoadedFilter(r, c, FilterStatus.ABSENT, "no bloom filter in this column chunk")
    label = f"{footer.path}: row group {r} column {footer.leaves[c].name} bloom filter"
    limit = footer.footer_offset  # nothing may overlap the footer
    try:
        if offset is None or (length is None and md.get(15) is not None):
            raise CorruptFileError(f"{label}: bloom_filter_offset or length is not an integer")
        if offset < 4 or offset >= limit:
            raise CorruptFileError(f"{label}: offset {offset} is outside the data of the file")
        if length is not None and (length <= 0 or offset + length > limit):
            raise CorruptFileError(
                f"{label}: length {length} at offset {offset} runs past the data"
            )
        if chunk.crypto is not None:
            bitset, total, header_len = _encrypted_filter(fh, chunk, offset, length, limit, label)
            return LoadedFilter(
                r,
                c,
                FilterStatus.OK,
                "bloom filter",
                Sbbf.from_bytes(bitset),
                offset,
                total,
                header_len,
            )
        fh.seek(offset)
        window = length if length is not None else min(HEADER_WINDOW, limit - offset)
        head = fh.read(window)
        num_bytes, header_len = parse_header(head, name=label)
        total = header_len + num_bytes
        if length is not None and length != total:
            raise CorruptFileError(
                f"{label}: bloom_filter_length {length} != header {header_len} + bitset {num_bytes}"
            )
        if offset + total > limit:
            raise CorruptFileError(f"{label}: bitset of {num_bytes} B runs past the data")
        if length is not None:
            bitset = head[header_len:total]
        else:
            fh.seek(offset + header_len)
            bitset = fh.read(num_bytes)
        if len(bitset) != num_bytes:
            raise CorruptFileError(f"{label}: file ends inside the bitset")
    except (CorruptFileError, DecryptionError) as e:
        return LoadedFilter(r, c, FilterStatus.INVALID, str(e), offset=offset, length=length)
    return LoadedFilter(
        r, c, FilterStatus.OK, "bloom filter", Sbbf.from_bytes(bitset), offset, total, header_len
    )


def _encrypted_filter(
    fh: BinaryIO, chunk: ColumnChunk, offset: int, length: int | None, limit: int, label: str
) -> tuple[bytes, int, int]:
    """(bitset, length of both modules, length of the header module) of an encrypted
    filter; raises CorruptFileError / DecryptionError."""
    crypto = chunk.crypto
    assert crypto is not None
    end = limit if length is None else offset + length
    header, at = crypto.read_module(fh, offset, end, BLOOM_FILTER_HEADER, f"{label} header")
    # parquet-java pads the header plaintext with zeros after the struct: ignored.
    num_bytes, _ = parse_header(header, name=label)
    bitset, stop = crypto.read_module(fh, at, end, BLOOM_FILTER_BITSET, f"{label} bitset")
    if len(bitset) != num_bytes:
        raise CorruptFileError(f"{label}: bitset of {len(bitset)} B, header says {num_bytes}")
    if length is not None and stop != end:
        raise CorruptFileError(
            f"{label}: bloom_filter_length {length} != the {stop - offset} B of its modules"
        )
    return bitset, stop - offset, at - offset


def encrypted_filter_modules(crypto: ChunkCrypto, f: Sbbf) -> bytes:
    """Header and bitset of ``f`` as the two encrypted modules of a column (fresh nonces)."""
    return crypto.encrypt(encode_header(f.num_bytes), BLOOM_FILTER_HEADER) + crypto.encrypt(
        bytes(f.bitset), BLOOM_FILTER_BITSET
    )


def read_bloom_filters(
    path: str | os.PathLike,
    footer: Footer | None = None,
    columns: list[str] | None = None,
    *,
    decryption: Decryption | None = None,
) -> list[LoadedFilter]:
    """Every (row group, column) filter of a file, in file order, loaded and validated.

    ``decryption`` gives the keys of an encrypted file; the filters of columns whose key
    is missing come back with status "locked"."""
    from bloomskip.parquet.footer import read_footer

    with open(path, "rb") as fh:
        footer = footer or read_footer(fh, name=os.fspath(path), decryption=decryption)
        wanted = None if columns is None else {footer.leaf(c).index for c in columns}
        return [
            load_filter(fh, footer, chunk)
            for rg in footer.row_groups
            for chunk in rg.columns
            if wanted is None or chunk.column in wanted
        ]
