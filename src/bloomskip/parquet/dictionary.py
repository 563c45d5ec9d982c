"""A column chunk's dictionary: when it lists every value, and which values it holds.

A dictionary page proves a value absent only if *every* data page of the chunk is
dictionary-encoded; a writer that fell back to PLAIN after the dictionary filled up has
values the dictionary does not list (Trino got this wrong, trinodb/trino #23604). So:

* :func:`fully_dictionary_encoded` reads ``encoding_stats`` (ColumnMetaData field 13):
  every DATA_PAGE / DATA_PAGE_V2 entry must be PLAIN_DICTIONARY or RLE_DICTIONARY. Without
  encoding_stats it follows parquet-java: the chunk's ``encodings`` must contain
  PLAIN_DICTIONARY and nothing else but the level encodings RLE and BIT_PACKED (a
  v2 file without stats cannot be proven, so it is not used);
* :func:`dictionary_hashes` reads just the dictionary page (``PageHeader`` + payload),
  decompresses it with the chunk's codec through ``pyarrow.Codec``, decodes the PLAIN
  values and returns their xxHash64 hashes, sorted - the same hashes a bloom filter
  probe uses, so ``±0.0`` and every type are handled once, in the probe. Pruning asks
  :func:`hashes_at` instead: the hashes in page order with their distinct count
  (:class:`DictionaryHashes`; ``BYTE_ARRAY`` values hashed where they lie in the page,
  no sort), tested against the values looked up by a compiled kernel.

For an encrypted column the dictionary page header (module type 5, AES-GCM) and the page
(module type 3, AES-GCM, or AES-CTR under AES_GCM_CTR_V1) are decrypted with the column's
key first; the header's ``compressed_page_size`` then counts the encrypted page module.

Every size read from the file is checked before anything is allocated; anything odd
returns a reason instead of hashes, and the caller treats the chunk as "may match".
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa

from bloomskip._lazy import lazy
from bloomskip.errors import CorruptFileError, DecryptionError
from bloomskip.hashing.physical import PhysicalType
from bloomskip.hashing.plain import PlainValues, Rows, VarBytes, Words, hash_plain
from bloomskip.parquet.aes import DICTIONARY_PAGE as DICTIONARY_MODULE
from bloomskip.parquet.aes import DICTIONARY_PAGE_HEADER, read_framed
from bloomskip.parquet.crypto import ChunkCrypto
from bloomskip.parquet.footer import ColumnChunk, Footer
from bloomskip.parquet.thrift import Struct, decode_struct
from bloomskip.prune.evidence import Unavailable

kernels = lazy("bloomskip.parquet.kernels")
sbbf_kernels = lazy("bloomskip.sbbf.kernels")

#: The odd multiplier of :func:`~bloomskip.sbbf.kernels.count_distinct`'s hash set, drawn
#: once per process: no file can choose entries that crowd one run of its slots.
_MULTIPLIER = np.uint64(secrets.randbits(64) | 1)

# Encoding codes (parquet.thrift).
PLAIN, PLAIN_DICTIONARY, RLE, BIT_PACKED, RLE_DICTIONARY = 0, 2, 3, 4, 8
# PageType codes.
DATA_PAGE, DICTIONARY_PAGE, DATA_PAGE_V2 = 0, 2, 3

#: Largest dictionary page (uncompressed) bloomskip decodes; larger ones "may match".
MAX_DICTIONARY_BYTES = 256 * 1024 * 1024
_HEADER_WINDOWS = (1024, 64 * 1024, 1024 * 1024)
_CODECS = {
    "SNAPPY": "snappy",
    "GZIP": "gzip",
    "BROTLI": "brotli",
    "ZSTD": "zstd",
    "LZ4_RAW": "lz4_raw",
}
_DICT = (PLAIN_DICTIONARY, RLE_DICTIONARY)


def fully_dictionary_encoded(chunk: ColumnChunk) -> tuple[bool, str]:
    """Whether every data page of the chunk is dictionary-encoded, and how we know."""
    meta = chunk.meta
    if meta is None:
        return False, "no column metadata"
    return dictionary_coverage(meta.get(13), meta.get(2))


def dictionary_coverage(stats: Any, encodings: Any) -> tuple[bool, str]:
    """:func:`fully_dictionary_encoded` from ColumnMetaData's ``encoding_stats`` (field
    13) and ``encodings`` (field 2), as decoded (None when absent)."""
    if stats is not None and getattr(stats, "items", None) is not None:
        data_pages = 0
        for entry in stats.items:
            if not isinstance(entry, Struct):
                return False, "malformed encoding_stats"
            page_type, encoding, count = entry.get(1), entry.get(2), entry.get(3) or 0
            if not isinstance(count, int):
                return False, "malformed encoding_stats"
            if page_type in (DATA_PAGE, DATA_PAGE_V2) and count > 0:
                if encoding not in _DICT:
                    return False, "some data pages are not dictionary-encoded"
                data_pages += count
        if data_pages == 0:
            return False, "encoding_stats list no data pages"
        return True, "every data page is dictionary-encoded (encoding_stats)"
    encodings = getattr(encodings, "items", None) or []
    if not all(type(e) is int for e in encodings):
        return False, "malformed encodings"
    rest = set(encodings) - {RLE, BIT_PACKED}
    if PLAIN_DICTIONARY in rest and rest == {PLAIN_DICTIONARY}:
        return True, "every data page is dictionary-encoded (encodings)"
    return False, "cannot prove every data page is dictionary-encoded"


def dictionary_hashes(
    fh: BinaryIO,
    footer: Footer,
    chunk: ColumnChunk,
    physical: PhysicalType,
    type_length: int | None,
) -> np.ndarray | Unavailable:
    """Sorted unique xxHash64 of the chunk's dictionary entries, or why they are not
    available (a dictionary that is there but cannot be read says so)."""
    place = DictionaryPlace.of(footer, chunk.row_group, footer.leaves[chunk.column].name, chunk)
    found = hashes_at(fh, place, physical, type_length)
    return found if isinstance(found, Unavailable) else np.unique(found.hashes)


@dataclass(frozen=True)
class DictionaryPlace:
    """Where a chunk's dictionary page is: what :func:`dictionary_hashes` reads of the
    chunk (ColumnMetaData's dictionary_page_offset, data_page_offset,
    total_compressed_size and codec; None where not an integer)."""

    label: str  # "<file>: row group <r> column <name>"
    footer_offset: int
    dictionary_page_offset: int | None
    data_page_offset: int | None
    total_compressed_size: int | None
    codec: str
    crypto: ChunkCrypto | None = None

    @classmethod
    def of(cls, footer: Any, row_group: int, column: str, chunk: Any) -> DictionaryPlace:
        """The place of ``chunk`` (a decoded column chunk: its dictionary and data page
        offsets, size, codec and crypto) in row group ``row_group`` of ``footer``'s file."""
        return cls(
            f"{footer.path}: row group {row_group} column {column}",
            footer.footer_offset,
            chunk.dictionary_page_offset,
            chunk.data_page_offset,
            chunk.total_compressed_size,
            chunk.codec,
            chunk.crypto,
        )


@dataclass(frozen=True, slots=True)
class DictionaryHashes:
    """The xxHash64 of a dictionary page's entries, in page order (a repeated entry
    repeats its hash), and how many of them are distinct."""

    hashes: np.ndarray
    distinct: int

    def contains_any(self, probe: np.ndarray) -> bool:
        """Whether any of ``probe`` (hashes) is among the entries."""
        return bool(kernels.any_in(self.hashes, probe)) if self.hashes.size else False


def hashes_at(
    fh: BinaryIO, place: DictionaryPlace, physical: PhysicalType, type_length: int | None
) -> DictionaryHashes | Unavailable:
    """The hashes of the dictionary at ``place`` (:func:`dictionary_hashes` unsorted)."""
    try:
        page = _read_dictionary(fh, place)
        if isinstance(page, str):
            return Unavailable(f"dictionary unreadable: {page}")
        buf, count = page
        if physical is PhysicalType.BYTE_ARRAY:  # hashed where the values lie
            if count > buf.size // 4:
                raise CorruptFileError(
                    f"{place.label}: dictionary page too short for {count} values"
                )
            h = np.empty(count, np.uint64)
            if kernels.hash_byte_arrays(buf, count, h) < 0:
                raise CorruptFileError(
                    f"{place.label}: dictionary page BYTE_ARRAY lengths overrun it"
                )
        else:
            plain = _decode_plain(buf, count, physical, type_length, place.label)
            if isinstance(plain, str):
                return Unavailable(f"dictionary unreadable: {plain}")
            h = hash_plain(plain)
    except (CorruptFileError, DecryptionError) as e:
        return Unavailable(f"dictionary unreadable: {e}")
    distinct = int(sbbf_kernels.count_distinct(h, _MULTIPLIER)) if h.size else 0
    return DictionaryHashes(h, distinct)


def _read_dictionary(fh: BinaryIO, place: DictionaryPlace) -> tuple[np.ndarray, int] | str:
    """The dictionary page's payload (decrypted, decompressed) and its number of values,
    or why it is not read."""
    label = place.label
    dict_off, data_off = place.dictionary_page_offset, place.data_page_offset
    start = dict_off if isinstance(dict_off, int) and dict_off > 0 else data_off
    if not isinstance(start, int) or not 4 <= start < place.footer_offset:
        return "no dictionary page offset"
    limit = place.footer_offset
    size = place.total_compressed_size
    if isinstance(size, int) and size > 0:
        limit = min(limit, start + size)
    crypto = place.crypto
    if crypto is None:
        header, payload_at = _page_header(fh, start, limit, label)
    else:
        what = f"{label} dictionary page header"
        plain_header, payload_at = crypto.read_module(
            fh, start, limit, DICTIONARY_PAGE_HEADER, what
        )
        header, _ = decode_struct(plain_header, name=what)
    if header.get(1) != DICTIONARY_PAGE:
        return "the chunk has no dictionary page"
    dph = header.get(7)
    num_values = dph.get(1) if isinstance(dph, Struct) else None
    encoding = dph.get(2) if isinstance(dph, Struct) else None
    compressed, uncompressed = header.get(3), header.get(2)
    if not isinstance(num_values, int) or num_values < 0:
        raise CorruptFileError(f"{label}: dictionary page without a valid num_values")
    if encoding not in (PLAIN, PLAIN_DICTIONARY):
        return f"dictionary page encoding {encoding} is not PLAIN"
    if not isinstance(compressed, int) or not 0 <= compressed <= limit - payload_at:
        raise CorruptFileError(f"{label}: dictionary page size {compressed} runs past the chunk")
    if not isinstance(uncompressed, int) or not 0 <= uncompressed <= MAX_DICTIONARY_BYTES:
        return f"dictionary page of {uncompressed} B is larger than bloomskip decodes"
    if crypto is None:
        fh.seek(payload_at)
        raw = fh.read(compressed)
        if len(raw) != compressed:
            raise CorruptFileError(f"{label}: file ends inside the dictionary page")
    else:
        what = f"{label} dictionary page"
        body, end = read_framed(fh, payload_at, payload_at + compressed, what)
        if end != payload_at + compressed:
            raise CorruptFileError(f"{what}: encrypted module does not fill the page")
        raw = crypto.decrypt(body, DICTIONARY_MODULE, what)
    data = _decompress(raw, place.codec, uncompressed, label)
    if isinstance(data, str):
        return data
    return np.frombuffer(data, np.uint8), num_values


def _page_header(fh: BinaryIO, start: int, limit: int, label: str) -> tuple[Struct, int]:
    """Decode the PageHeader at ``start``, reading more only if it is long."""
    for window in _HEADER_WINDOWS:
        n = min(window, limit - start)
        fh.seek(start)
        buf = fh.read(n)
        try:
            header, end = decode_struct(buf, name=f"{label} page header")
            return header, start + end
        except CorruptFileError:
            if n < window:  # we already had everything up to the limit
                raise
    raise CorruptFileError(f"{label}: page header longer than {_HEADER_WINDOWS[-1]} B")


def _decompress(raw: bytes, codec: str, size: int, label: str) -> Any:
    """The page decompressed (bytes, or a ``pyarrow.Buffer``), or why not."""
    if codec == "UNCOMPRESSED":
        if len(raw) != size:
            raise CorruptFileError(f"{label}: dictionary page sizes disagree")
        return raw
    name = _CODECS.get(codec)
    if name is None:
        return f"dictionary page codec {codec} is not decoded by bloomskip"
    try:
        out = pa.Codec(name).decompress(raw, decompressed_size=size)
    except (pa.ArrowException, OSError, ValueError) as e:
        raise CorruptFileError(f"{label}: cannot decompress the dictionary page ({e})") from None
    if out.size != size:
        raise CorruptFileError(f"{label}: dictionary page decompressed to a different size")
    return out


def _decode_plain(
    buf: np.ndarray, count: int, physical: PhysicalType, type_length: int | None, label: str
) -> PlainValues | str:
    P = PhysicalType
    fixed = {P.INT32: np.uint32, P.INT64: np.uint64, P.FLOAT: np.uint32, P.DOUBLE: np.uint64}
    if physical in fixed:
        dtype = np.dtype(fixed[physical])
        if buf.size < count * dtype.itemsize:
            raise CorruptFileError(f"{label}: dictionary page too short for {count} values")
        return Words(buf[: count * dtype.itemsize].view(dtype))
    if physical in (P.INT96, P.FIXED_LEN_BYTE_ARRAY):
        width = 12 if physical is P.INT96 else (type_length or 0)
        if width <= 0 or buf.size < count * width:
            raise CorruptFileError(f"{label}: dictionary page too short for {count} values")
        return Rows(buf, width, count)
    if physical is P.BYTE_ARRAY:
        if count > buf.size // 4:
            raise CorruptFileError(f"{label}: dictionary page too short for {count} values")
        offsets, data = (
            np.empty(count + 1, np.int64),
            np.empty(max(buf.size - 4 * count, 0), np.uint8),
        )
        if kernels.split_byte_arrays(buf, count, offsets, data) < 0:
            raise CorruptFileError(f"{label}: dictionary page BYTE_ARRAY lengths overrun it")
        return VarBytes.trusted(offsets, data)
    return f"dictionary of {physical} is not decoded"
