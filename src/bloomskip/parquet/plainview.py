"""A plaintext, one-column Parquet file holding one column chunk's pages, decrypted.

pyarrow reads encrypted files only with keys it can get itself (a uniform key, or its own
KMS plumbing); bloomskip's callers give keys their own way (explicit, by retriever, or a
KMS client). To read the *values* of an encrypted column chunk - which
:func:`~bloomskip.parquet.write.add_bloom_filters` hashes - this module decrypts the
chunk's pages and wraps them in a minimal plaintext file in memory that pyarrow then
decodes as usual::

    PAR1 | dictionary page? | data pages... | FileMetaData (one leaf, one row group) | PAR1

Each page header is a GCM module (dictionary page header: type 5; data page header:
type 4 with the data page ordinal), each page a GCM or CTR module (types 3 and 2); headers
are rewritten with ``compressed_page_size`` of the plaintext page and no CRC. A
DATA_PAGE_V2 keeps its levels: parquet-java leaves them in plaintext before the encrypted
values, Arrow C++ encrypts them with the values; both layouts are recognised by their
module length. The schema keeps the leaf and its ancestors (``num_children`` 1), so
pyarrow rebuilds lists and structs as in the original file.

Plaintext chunks of an encrypted file are copied as they are. Every length is checked
against the chunk's bounds before anything is read.
"""

from __future__ import annotations

import struct
from typing import BinaryIO

from bloomskip.errors import CorruptFileError, MissingKeyError, UnsupportedFileError
from bloomskip.parquet.aes import (
    DATA_PAGE,
    DATA_PAGE_HEADER,
    DICTIONARY_PAGE,
    DICTIONARY_PAGE_HEADER,
    LENGTH_BYTES,
    read_framed,
)
from bloomskip.parquet.crypto import ChunkCrypto
from bloomskip.parquet.footer import MAGIC, ColumnChunk, Footer
from bloomskip.parquet.thrift import (
    BINARY,
    I32,
    I64,
    LIST,
    STRUCT,
    List,
    Struct,
    decode_struct,
    encode_struct,
)

# PageType codes.
_DATA_PAGE, _INDEX_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2 = 0, 1, 2, 3
#: Largest page header (decrypted) accepted.
_MAX_HEADER = 16 * 1024 * 1024


def plaintext_chunk_file(fh: BinaryIO, footer: Footer, chunk: ColumnChunk) -> bytes:
    """The bytes of a plaintext Parquet file with just ``chunk`` (one row group)."""
    leaf = footer.leaves[chunk.column]
    label = f"{footer.path}: row group {chunk.row_group} column {leaf.name}"
    if chunk.locked:
        raise MissingKeyError(f"{footer.path}: {chunk.locked}")
    meta = chunk.meta
    if meta is None:
        raise CorruptFileError(f"{label}: column chunk has no metadata")
    dict_off, data_off = chunk.dictionary_page_offset, chunk.data_page_offset
    size = chunk.total_compressed_size
    has_dict = isinstance(dict_off, int) and dict_off > 0
    start = dict_off if has_dict else data_off
    if not isinstance(start, int) or not isinstance(size, int) or size < 0:
        raise CorruptFileError(f"{label}: no valid page offsets or size")
    end = start + size
    if start < 4 or end > footer.footer_offset:
        raise CorruptFileError(f"{label}: pages [{start}, {end}) are outside the data")
    if chunk.crypto is None:
        fh.seek(start)
        pages = fh.read(size)
        if len(pages) != size:
            raise CorruptFileError(f"{label}: file ends inside the column chunk")
        first_data = (data_off - start) if has_dict and isinstance(data_off, int) else 0
        dict_at = 0 if has_dict else None
    else:
        pages, dict_at, first_data = _decrypt_pages(fh, chunk.crypto, start, end, has_dict, label)
    return _wrap(footer, chunk, meta, pages, dict_at, first_data)


def _decrypt_pages(
    fh: BinaryIO, crypto: ChunkCrypto, start: int, end: int, has_dict: bool, label: str
) -> tuple[bytes, int | None, int]:
    """(plaintext pages, offset of the dictionary page or None, offset of the first data
    page), offsets relative to the start of the pages."""
    out = bytearray()
    pos = start
    ordinal = 0
    dict_at: int | None = None
    first_data: int | None = None
    while pos < end:
        is_dict = has_dict and pos == start
        what = f"{label} page at {pos}"
        module = DICTIONARY_PAGE_HEADER if is_dict else DATA_PAGE_HEADER
        plain, at = crypto.read_module(
            fh, pos, end, module, f"{what} header", page=None if is_dict else ordinal
        )
        if len(plain) > _MAX_HEADER:
            raise CorruptFileError(f"{what}: page header of {len(plain)} B")
        header, _ = decode_struct(plain, name=f"{what} header")
        page_type, compressed = header.get(1), header.get(3)
        if not isinstance(compressed, int) or not 0 <= compressed <= end - at:
            raise CorruptFileError(f"{what}: page size {compressed} runs past the chunk")
        stop = at + compressed
        if page_type == _DICTIONARY_PAGE and is_dict:
            body = _whole_module(fh, crypto, at, stop, DICTIONARY_PAGE, None, what)
            dict_at = len(out)
        elif page_type == _DATA_PAGE:
            body = _whole_module(fh, crypto, at, stop, DATA_PAGE, ordinal, what)
        elif page_type == _DATA_PAGE_V2:
            body = _v2_page(fh, crypto, header, at, stop, ordinal, what)
        else:
            raise UnsupportedFileError(f"{what}: page type {page_type} is not read here")
        if page_type != _DICTIONARY_PAGE:
            ordinal += 1
            if first_data is None:
                first_data = len(out)
        header.set(3, I32, len(body))
        header.remove(4)  # the CRC was of the encrypted bytes (or is rechecked by no one)
        out += encode_struct(header)
        out += body
        pos = stop
    if first_data is None:
        raise CorruptFileError(f"{label}: column chunk has no data page")
    return bytes(out), dict_at, first_data


def _whole_module(
    fh: BinaryIO,
    crypto: ChunkCrypto,
    at: int,
    stop: int,
    module: int,
    ordinal: int | None,
    what: str,
) -> bytes:
    body, end = read_framed(fh, at, stop, what)
    if end != stop:
        raise CorruptFileError(f"{what}: encrypted page does not fill compressed_page_size")
    return crypto.decrypt(body, module, what, page=ordinal)


def _v2_page(
    fh: BinaryIO, crypto: ChunkCrypto, header: Struct, at: int, stop: int, ordinal: int, what: str
) -> bytes:
    v2 = header.get(8)
    levels = 0
    if isinstance(v2, Struct):
        dl, rl = v2.get(5), v2.get(6)
        levels = (dl if isinstance(dl, int) else 0) + (rl if isinstance(rl, int) else 0)
    if not 0 <= levels <= stop - at:
        raise CorruptFileError(f"{what}: level lengths run past the page")
    fh.seek(at)
    head = fh.read(LENGTH_BYTES)
    if len(head) == LENGTH_BYTES and struct.unpack("<I", head)[0] == stop - at - LENGTH_BYTES:
        return _whole_module(fh, crypto, at, stop, DATA_PAGE, ordinal, what)  # Arrow C++
    fh.seek(at)
    plain_levels = fh.read(levels)  # parquet-java: levels in plaintext, then the values
    if len(plain_levels) != levels:
        raise CorruptFileError(f"{what}: file ends inside the page")
    return plain_levels + _whole_module(fh, crypto, at + levels, stop, DATA_PAGE, ordinal, what)


def _schema_chain(elements: list[Struct], leaf_index: int, label: str) -> list[Struct]:
    """The schema elements from the root down to leaf ``leaf_index`` (as footer._leaves
    walks them), ancestors copied with one child each."""
    stack: list[list[int]] = [[0, _children(elements[0])]]
    i, leaf = 1, 0
    while stack and i < len(elements):
        top = stack[-1]
        if top[1] <= 0:
            stack.pop()
            continue
        top[1] -= 1
        idx = i
        i += 1
        n = _children(elements[idx])
        if n > 0:
            stack.append([idx, n])
        elif leaf == leaf_index:
            chain = []
            for anc, _ in stack:
                copy, _ = decode_struct(encode_struct(elements[anc]))
                copy.set(5, I32, 1)
                chain.append(copy)
            return [*chain, elements[idx]]
        else:
            leaf += 1
    raise CorruptFileError(f"{label}: leaf {leaf_index} not found in the schema")


def _children(el: Struct) -> int:
    n = el.get(5)
    return n if isinstance(n, int) and n > 0 else 0


def _wrap(
    footer: Footer,
    chunk: ColumnChunk,
    meta: Struct,
    pages: bytes,
    dict_at: int | None,
    first_data: int,
) -> bytes:
    label = f"{footer.path}: row group {chunk.row_group}"
    md, _ = decode_struct(encode_struct(meta))  # a copy
    base = len(MAGIC)
    md.set(9, I64, base + first_data)
    if dict_at is None:
        md.remove(11)
    else:
        md.set(11, I64, base + dict_at)
    md.set(7, I64, len(pages))
    for fid in (10, 14, 15):  # index page, bloom filter offset and length
        md.remove(fid)
    cc = Struct()
    cc.set(2, I64, base)
    cc.set(3, STRUCT, md)
    rg = Struct()
    rg.set(1, LIST, List(STRUCT, [cc]))
    total = meta.get(6)
    rg.set(2, I64, total if isinstance(total, int) else len(pages))
    num_rows = footer.row_groups[chunk.row_group].num_rows
    rg.set(3, I64, num_rows)
    elements = footer.metadata.get(2).items
    fmd = Struct()
    version = footer.metadata.get(1)
    fmd.set(1, I32, version if isinstance(version, int) else 1)
    fmd.set(2, LIST, List(STRUCT, _schema_chain(elements, chunk.column, label)))
    fmd.set(3, I64, num_rows)
    fmd.set(4, LIST, List(STRUCT, [rg]))
    created_by = footer.metadata.get(6)
    if isinstance(created_by, bytes):
        fmd.set(6, BINARY, created_by)
    raw = encode_struct(fmd)
    return MAGIC + pages + raw + struct.pack("<I", len(raw)) + MAGIC
