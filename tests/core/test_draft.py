"""Known answers for the initial draft of Parquet's bloom filter (PARQUET-41, 2018).

The draft, restated here independently of bloomskip: a value's PLAIN bytes are hashed
with MurmurHash3 x64_128 (low 64 bits; ``mmh3`` is the oracle), seeded with
1361930890 as both draft-era implementations seeded it (parquet-mr's first
``BlockSplitBloomFilter``, PARQUET-1328; parquet-cpp's, PARQUET-1332); "the most
significant 32 bits from the hash value are used as the index to select a block",
modulo the power-of-two block count; the low 32 bits set one bit per word through the
eight salts. Serialized, a filter is three little-endian int32 (num_bytes, hash 0,
algorithm 0) and the bitset.

The one draft-era filter published, parquet-cpp's ``data/bloom_filter.bin`` (written by
parquet-mr from "hello", "parquet", "bloom", "filter" into 1024 B; parquet-cpp checks
byte for byte that its own build equals it), is pinned by its SHA-256 below.
"""

from __future__ import annotations

import hashlib
import struct

import mmh3
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomskip import (
    IncompatibleFiltersError,
    InvalidBitsetError,
    InvalidParameterError,
    Sbbf,
    hash_values,
)
from bloomskip.sbbf import BlockRule, Strategy, draft_filter_bytes, read_draft_filter

DRAFT_SEED = 1361930890
#: The eight salts, as the draft's ``Mask`` function lists them.
SALT = (
    0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D,
    0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31,
)  # fmt: skip

#: SHA-256 of parquet-cpp's data/bloom_filter.bin (1036 B: 12 B header + 1024 B bitset),
#: written by parquet-mr's draft-era BlockSplitBloomFilter from these four strings.
PARQUET_MR_DRAFT_FILE_SHA256 = "b37b890afa22e64ea6b5c00c19261f7400820f9d026234d789eda587fd5fba97"
PARQUET_MR_DRAFT_VALUES = ["hello", "parquet", "bloom", "filter"]


def draft_hash(plain: bytes) -> int:
    return mmh3.hash64(plain, DRAFT_SEED, signed=False)[0]


def draft_build(num_bytes: int, plains: list[bytes]) -> list[int]:
    """The draft in plain Python: the oracle's words."""
    words = [0] * (num_bytes // 4)
    num_blocks = num_bytes // 32
    for plain in plains:
        h = draft_hash(plain)
        block = (h >> 32) & (num_blocks - 1)
        key = h & 0xFFFFFFFF
        for j in range(8):
            words[8 * block + j] |= 1 << (((key * SALT[j]) & 0xFFFFFFFF) >> 27)
    return words


def draft_file(num_bytes: int, plains: list[bytes]) -> bytes:
    words = draft_build(num_bytes, plains)
    return struct.pack("<III", num_bytes, 0, 0) + struct.pack(f"<{len(words)}I", *words)


# ---------------------------------------------------------------------------- known answers


def test_the_parquet_mr_draft_file():
    """Our draft build of the four strings is parquet-mr's file, byte for byte."""
    f = Sbbf(1024, strategy="draft")
    f.insert(PARQUET_MR_DRAFT_VALUES)
    raw = draft_filter_bytes(f)
    assert len(raw) == 1036
    assert hashlib.sha256(raw).hexdigest() == PARQUET_MR_DRAFT_FILE_SHA256
    # ... and the oracle's, so the pin above is the draft as restated here.
    assert raw == draft_file(1024, [v.encode() for v in PARQUET_MR_DRAFT_VALUES])
    assert f.popcount() == 32
    assert np.flatnonzero(f.words.reshape(-1, 8).any(axis=1)).tolist() == [9, 12, 26, 28]
    g = read_draft_filter(raw)
    assert g == f and not g.writable
    assert g.check([*PARQUET_MR_DRAFT_VALUES, "Hello", "parquet-mr"]).tolist() == [
        True, True, True, True, False, False,
    ]  # fmt: skip


@pytest.mark.parametrize("num_bytes", [32, 64, 1024, 1 << 16])
def test_strings_and_numbers_match_the_oracle(num_bytes):
    strings = [f"user_{i}" for i in range(300)]
    ints = list(range(-150, 150))
    plains = [s.encode() for s in strings] + [struct.pack("<q", i) for i in ints]
    f = Sbbf(num_bytes, strategy="draft")
    f.insert(pa.array(strings))
    f.insert(np.array(ints, dtype=np.int64))  # INT64: 8 little-endian bytes
    assert f.words.tolist() == draft_build(num_bytes, plains)
    assert f.check(pa.array(strings)).all() and f.check(np.array(ints, np.int64)).all()
    # The raw hashes through insert_hashes/check_hashes give the same filter.
    h = Sbbf(num_bytes, hash="murmur3_x64_128")
    hashes = np.concatenate(
        [hash_values(pa.array(strings), hash="murmur3_x64_128"),
         hash_values(np.array(ints, np.int64), hash="murmur3_x64_128")]
    )  # fmt: skip
    assert hashes.tolist() == [draft_hash(p) for p in plains]
    h.insert_hashes(hashes)
    assert h == f and h.check_hashes(hashes).all()


@settings(max_examples=50, deadline=None)
@given(
    values=st.lists(st.binary(max_size=40), max_size=60),
    probes=st.lists(st.binary(max_size=40), max_size=60),
    log2=st.integers(5, 14),
)
def test_any_bytes_any_size_match_the_oracle(values, probes, log2):
    num_bytes = 1 << log2
    f = Sbbf(num_bytes, strategy="draft")
    f.insert(pa.array(values, pa.binary()))
    words = draft_build(num_bytes, values)
    assert f.words.tolist() == words
    num_blocks = num_bytes // 32
    for probe, found in zip(probes, f.check(pa.array(probes, pa.binary())), strict=True):
        h = draft_hash(probe)
        block = (h >> 32) & (num_blocks - 1)
        key = h & 0xFFFFFFFF
        expected = all(
            words[8 * block + j] >> (((key * SALT[j]) & 0xFFFFFFFF) >> 27) & 1 for j in range(8)
        )
        assert bool(found) == expected


def test_the_spec_rule_would_miss_draft_values():
    """Why the block rule belongs to the strategy: probing a draft filter with the spec's
    multiply-shift loses values from 1 KiB up; at one block (32 B) the rules agree."""
    values = [f"v{i}".encode() for i in range(200)]
    for num_bytes in (32, 1024, 1 << 16):
        raw = draft_file(num_bytes, values)
        words = np.frombuffer(raw[12:], dtype="<u4").reshape(-1, 8)
        n = len(words)
        spec_found = 0
        for v in values:
            h = draft_hash(v)
            block = words[((h >> 32) * n) >> 32]
            mask = [1 << (((h & 0xFFFFFFFF) * s & 0xFFFFFFFF) >> 27) for s in SALT]
            spec_found += all(int(w) & m for w, m in zip(block, mask, strict=True))
        if num_bytes == 32:
            assert spec_found == len(values)
        else:
            assert spec_found < len(values) // 2
        assert read_draft_filter(raw).check(pa.array(values, pa.binary())).all()


# ---------------------------------------------------------------------------- the strategy


def test_strategy_is_hash_and_block_rule():
    assert Strategy.SPEC.hash.value == "xxhash64"
    assert Strategy.SPEC.block_rule is BlockRule.MULTIPLY_SHIFT
    assert Strategy.DRAFT.hash.value == "murmur3_x64_128"
    assert Strategy.DRAFT.block_rule is BlockRule.MASK
    assert Sbbf(32).strategy is Strategy.SPEC
    assert Sbbf(32, hash="murmur3_x64_128").strategy is Strategy.DRAFT
    assert Sbbf(32, strategy="draft", hash="murmur3_x64_128").strategy is Strategy.DRAFT
    assert Sbbf.with_ndv_fpp(100, 0.01, strategy="draft").strategy is Strategy.DRAFT
    assert "strategy='draft'" in repr(Sbbf(32, strategy="draft"))
    h = np.array([0xFFFF_FFFF_0000_0001, 0x8000_0000_0000_0000, 5 << 32], np.uint64)
    assert Strategy.SPEC.block_index(h, 4).tolist() == [3, 2, 0]
    assert Strategy.DRAFT.block_index(h, 4).tolist() == [3, 0, 1]


def test_strategy_errors():
    with pytest.raises(InvalidParameterError, match="unknown strategy 'lance'"):
        Sbbf(32, strategy="lance")
    with pytest.raises(InvalidParameterError, match="give one of strategy= and hash="):
        Sbbf(32, strategy="spec", hash="murmur3_x64_128")
    with pytest.raises(IncompatibleFiltersError, match=r"strategy=spec .*strategy=draft"):
        Sbbf(32) | Sbbf(32, strategy="draft")
    with pytest.raises(InvalidBitsetError, match="must be a power of two"):
        Sbbf.from_bytes(bytes(96), strategy="draft")
    assert Sbbf.from_bytes(bytes(96)).num_blocks == 3  # the spec reads any block count


def test_draft_folds_its_halves():
    values = pa.array([f"user_{i}" for i in range(3000)])
    big = Sbbf(1 << 14, strategy="draft")
    big.insert(values)
    for k in range(0, 10):
        small = Sbbf((1 << 14) >> k, strategy="draft")
        small.insert(values)
        assert big.fold(k) == small
        assert big.fold(k).check(values).all()
    # The spec's adjacent fold would be the wrong one for a draft filter.
    w = big.words.reshape(-1, 8)
    adjacent = Sbbf.from_bytes((w[0::2] | w[1::2]).tobytes(), strategy="draft")
    assert not adjacent.check(values).all()
    assert big.fold_to_fpp(0.01).strategy is Strategy.DRAFT


def test_draft_with_arrow_encoding():
    f = Sbbf(1024, strategy="draft", encoding="arrow")
    f.insert(pa.array([1, 2, 3], pa.int16()))
    assert f.words.tolist() == draft_build(1024, [struct.pack("<h", v) for v in (1, 2, 3)])
    with pytest.raises(IncompatibleFiltersError, match="encoding=arrow"):
        f | Sbbf(1024, strategy="draft")


# ---------------------------------------------------------------------------- serialized form


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"\x00" * 11, "too short"),
        (struct.pack("<III", 1000, 0, 0) + bytes(1000), "not a power of two"),
        (struct.pack("<III", 16, 0, 0) + bytes(16), "not a power of two"),
        (struct.pack("<III", 32, 1, 0) + bytes(32), "hash 1 and algorithm 0"),
        (struct.pack("<III", 32, 0, 7) + bytes(32), "hash 0 and algorithm 7"),
        (struct.pack("<III", 64, 0, 0) + bytes(32), r"12 \+ 64 B"),
        (struct.pack("<III", 32, 0, 0) + bytes(33), r"12 \+ 32 B"),
    ],
)
def test_bad_draft_bytes_are_typed_errors(raw, message):
    with pytest.raises(InvalidBitsetError, match=message):
        read_draft_filter(raw)


def test_draft_bytes_round_trip_and_refuse_spec_filters():
    f = Sbbf(64, strategy="draft")
    f.insert(["x"])
    g = read_draft_filter(bytearray(draft_filter_bytes(f)), copy=True)
    assert g == f and g.writable
    with pytest.raises(InvalidBitsetError, match="bytes-like"):
        read_draft_filter("text")
    with pytest.raises(InvalidParameterError, match="only a draft filter"):
        draft_filter_bytes(Sbbf(64))
