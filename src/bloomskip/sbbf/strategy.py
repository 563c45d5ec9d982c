"""A filter's strategy: which hash it stores and how a hash picks its block.

Parquet's Split Block Bloom Filter has been stated twice. Both set one bit in each of
the eight 32-bit words of one 32-byte block, from the low 32 bits of a 64-bit hash::

    key   = h & 0xFFFFFFFF
    bit_j = (key * SALT[j] mod 2**32) >> 27

They differ in the hash and in how the high 32 bits pick the block:

``Strategy.SPEC`` - parquet-format ``BloomFilter.md`` since PARQUET-1630 (2019), what
every released writer (parquet-java, arrow-rs, Arrow C++, DuckDB) does::

    h     = xxHash64(PLAIN bytes, seed 0)
    block = ((h >> 32) * num_blocks) >> 32          multiply-shift: any block count

``Strategy.DRAFT`` - the initial ``BloomFilter.md`` (PARQUET-41, 2018): "the most
significant 32 bits from the hash value are used as the index to select a block", as its
two implementations - parquet-mr's first ``BlockSplitBloomFilter`` (PARQUET-1328) and
parquet-cpp's (PARQUET-1332), byte-identical to each other - did it::

    h     = MurmurHash3_x64_128(PLAIN bytes, seed 1361930890), low 64 bits
    block = (h >> 32) & (num_blocks - 1)            the index modulo a power-of-two count

The rules agree for one block (32 B) and nowhere else: probing a draft filter of 1 KiB
or more with the spec's rule misses most of the values it holds. They also fold
differently. Under multiply-shift the hashes of block ``i`` of a filter of ``N/2`` blocks
are those of blocks ``2i`` and ``2i+1`` of ``N``, so folding ORs *adjacent* blocks; under
the draft's mask they are those of blocks ``i`` and ``i + N/2``, so folding ORs the two
*halves*. Each is the filter a direct build at the smaller size gives; the other way
round loses values.

A strategy is part of a filter (:class:`bloomskip.sbbf.Sbbf` keeps it), so that a filter
is always probed, folded and combined by the rules it was built with.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np

from bloomskip.errors import InvalidParameterError, parse_choice
from bloomskip.hashing.plain import HashAlgorithm


class BlockRule(StrEnum):
    """How the high 32 bits of a hash pick one of ``num_blocks`` blocks."""

    #: ``((h >> 32) * num_blocks) >> 32`` (the spec).
    MULTIPLY_SHIFT = "multiply-shift"
    #: ``(h >> 32) & (num_blocks - 1)``: the block count must be a power of two (the draft).
    MASK = "mask"


class Strategy(StrEnum):
    """A complete filter strategy: the hash, and the block rule that goes with it."""

    SPEC = "spec"
    DRAFT = "draft"

    @classmethod
    def parse(cls, value: str | Strategy) -> Strategy:
        return parse_choice(cls, value, "strategy")

    @classmethod
    def for_hash(cls, hash: str | HashAlgorithm) -> Strategy:
        """The strategy whose hash is ``hash`` (each hash belongs to one strategy)."""
        algorithm = HashAlgorithm.parse(hash)
        return cls.SPEC if algorithm is HashAlgorithm.XXHASH64 else cls.DRAFT

    @classmethod
    def resolve(cls, strategy: str | Strategy | None, hash: str | HashAlgorithm | None) -> Strategy:
        """The strategy of ``strategy=`` and/or ``hash=`` arguments (spec when neither)."""
        if strategy is None:
            return cls.SPEC if hash is None else cls.for_hash(hash)
        chosen = cls.parse(strategy)
        if hash is not None and HashAlgorithm.parse(hash) is not chosen.hash:
            raise InvalidParameterError(
                f"strategy {chosen.value!r} hashes with {chosen.hash.value}, not {hash}: "
                "give one of strategy= and hash="
            )
        return chosen

    @property
    def hash(self) -> HashAlgorithm:
        return HashAlgorithm.XXHASH64 if self is Strategy.SPEC else HashAlgorithm.MURMUR3_X64_128

    @property
    def block_rule(self) -> BlockRule:
        return BlockRule.MULTIPLY_SHIFT if self is Strategy.SPEC else BlockRule.MASK

    def block_index(self, hashes: np.ndarray, num_blocks: int) -> np.ndarray:
        """The block of each ``uint64`` hash (numpy; the kernels inline the same rule)."""
        h = np.asarray(hashes, dtype=np.uint64) >> np.uint64(32)
        if self.block_rule is BlockRule.MULTIPLY_SHIFT:
            return (h * np.uint64(num_blocks)) >> np.uint64(32)
        return h & np.uint64(num_blocks - 1)

    def fold_blocks(self, blocks: np.ndarray, group: int) -> np.ndarray:
        """``blocks`` (``num_blocks x 8`` words) folded ``group`` times smaller, flat.

        Multiply-shift ORs each run of ``group`` adjacent blocks; the mask ORs the
        ``group`` equal slices of the filter (block ``i`` with ``i + n``, ``i + 2n``...).
        """
        n = blocks.shape[0] // group
        if self.block_rule is BlockRule.MULTIPLY_SHIFT:
            stacked = blocks.reshape(n, group, 8)
            return np.bitwise_or.reduce(stacked, axis=1).reshape(-1)
        return np.bitwise_or.reduce(blocks.reshape(group, n, 8), axis=0).reshape(-1)
