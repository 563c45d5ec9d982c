"""The serialized form of draft-era filters: a 12-byte header, then the bitset.

The initial bloom filter draft (parquet-format PARQUET-41, 2018) said only that a filter
"is stored with a header containing the size of the filter in bytes, the algorithm, and
the hash function". Its two implementations, parquet-mr's first ``BlockSplitBloomFilter``
(PARQUET-1328) and parquet-cpp's (PARQUET-1332), wrote that header as three
little-endian 32-bit integers, and parquet-cpp tested that its bytes equal parquet-mr's::

    offset  0   num_bytes     the bitset's size, a power of two from 32 B to 128 MiB
    offset  4   hash          0 = MURMUR3_X64_128 (the only one)
    offset  8   algorithm     0 = BLOCK (the only one)
    offset 12   bitset        num_bytes: blocks of eight little-endian uint32 words

The filter inside is probed with the draft's strategy (:class:`.strategy.Strategy`
``DRAFT``: MurmurHash3 with seed 1361930890, the block index masked to the block
count). Released Parquet files never hold this form: from PARQUET-1630 on, a filter is a
Thrift ``BloomFilterHeader`` and an xxHash64 bitset (:mod:`bloomskip.parquet.bloom`).
"""

from __future__ import annotations

import struct
from typing import Any

from bloomskip.errors import InvalidBitsetError, InvalidParameterError
from bloomskip.sbbf.filter import Sbbf
from bloomskip.sbbf.sizing import MAX_BYTES, MIN_BYTES
from bloomskip.sbbf.strategy import Strategy

#: Bytes of the draft's header: num_bytes, hash, algorithm.
HEADER_BYTES = 12
#: The draft's enum values: ``HashStrategy.MURMUR3_X64_128`` and ``Algorithm.BLOCK``.
MURMUR3_X64_128 = 0
BLOCK = 0

_HEADER = struct.Struct("<III")


def read_draft_filter(data: Any, *, copy: bool = False) -> Sbbf:
    """The filter of a draft-era serialized filter (header + bitset), with the draft's
    strategy. ``data`` is anything with the buffer protocol and must hold exactly one
    filter; without ``copy`` the filter views it (see :meth:`Sbbf.from_bytes`).

    Raises :class:`InvalidBitsetError` naming what is wrong: too short, a size that is
    not a power of two from 32 B to 128 MiB, another hash or algorithm, or a length
    other than header + bitset.
    """
    try:
        view = memoryview(data).cast("B")
    except TypeError as exc:
        raise InvalidBitsetError(
            f"a draft filter must be bytes-like, got {type(data).__name__}"
        ) from exc
    if len(view) < HEADER_BYTES:
        raise InvalidBitsetError(
            f"{len(view)} B is too short for a draft filter: its header alone is {HEADER_BYTES} B"
        )
    num_bytes, hash_id, algorithm = _HEADER.unpack_from(view)
    if num_bytes < MIN_BYTES or num_bytes > MAX_BYTES or num_bytes & (num_bytes - 1):
        raise InvalidBitsetError(
            f"draft filter header says {num_bytes} B: not a power of two from "
            f"{MIN_BYTES} B to {MAX_BYTES} B"
        )
    if hash_id != MURMUR3_X64_128 or algorithm != BLOCK:
        raise InvalidBitsetError(
            f"draft filter header has hash {hash_id} and algorithm {algorithm}: the draft "
            f"knows only hash {MURMUR3_X64_128} (MURMUR3_X64_128) and algorithm {BLOCK} (BLOCK)"
        )
    if len(view) != HEADER_BYTES + num_bytes:
        raise InvalidBitsetError(
            f"draft filter of {len(view)} B: its header says {HEADER_BYTES} + {num_bytes} B"
        )
    return Sbbf.from_bytes(view[HEADER_BYTES:], copy=copy, strategy=Strategy.DRAFT)


def draft_filter_bytes(f: Sbbf) -> bytes:
    """A draft filter in the draft's serialized form: header, then bitset."""
    if f.strategy is not Strategy.DRAFT:
        raise InvalidParameterError(
            f"only a draft filter has the draft's serialized form; this one has strategy "
            f"{f.strategy.value!r} (a Parquet file stores it after a BloomFilterHeader)"
        )
    return _HEADER.pack(f.num_bytes, MURMUR3_X64_128, BLOCK) + f.to_bytes()
