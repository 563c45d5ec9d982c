"""Known answers for the hash kernels: xxHash64 and MurmurHash3 against the reference
C libraries (through the ``xxhash`` and ``mmh3`` packages), at every length boundary."""

from __future__ import annotations

import mmh3
import numpy as np
import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st

from bloomskip.hashing import (
    HashAlgorithm,
    hash_boolean,
    hash_byte_array,
    hash_double,
    hash_fixed_len_byte_array,
    hash_float,
    hash_int32,
    hash_int64,
    hash_int96,
    kernels,
    plain,
)
from bloomskip.hashing.physical import var_bytes
from bloomskip.hashing.plain import Rows, VarBytes, Words, hash_plain


@pytest.fixture(autouse=True)
def kernels_only(monkeypatch):
    """Every batch to the compiled kernels: small ones would go to ``xxhash`` itself."""
    monkeypatch.setattr(plain, "SMALL_BATCH", -1)


@given(
    st.lists(st.binary(max_size=40), max_size=plain.SMALL_BATCH),
    st.lists(st.integers(0, 2**64 - 1), max_size=plain.SMALL_BATCH),
    st.sampled_from([np.uint8, np.uint16, np.uint32, np.uint64]),
    st.integers(1, 16),
)
def test_small_batches_hash_as_the_kernels_do(values, ints, dtype, width):
    """A lookup's few values are hashed without the kernels, to the same hashes."""
    words = Words(np.array([i % (np.iinfo(dtype).max + 1) for i in ints], dtype=dtype))
    rows = Rows(np.frombuffer(b"".join(v.ljust(width, b"!")[:width] for v in values), np.uint8)
                if values else np.zeros(0, np.uint8), width, len(values))  # fmt: skip
    var = var_bytes(values)
    for layout in (words, rows, var):
        small = plain._xxhash_small(layout)
        out = np.empty(len(layout), np.uint64)
        if isinstance(layout, Words):
            kernels.hash_words(layout.values, out)
        elif isinstance(layout, Rows):
            kernels.hash_rows(layout.data, layout.width, out, kernels.XXHASH64)
        else:
            assert isinstance(layout, VarBytes)
            kernels.hash_var(layout.offsets, layout.data, out, kernels.XXHASH64)
        assert small.tolist() == out.tolist()


def test_xxhash64_empty_input_vector():
    # The known answer of every Parquet implementation (arrow-rs test_hash_bytes).
    assert int(hash_byte_array([b""])[0]) == 17241709254077376921
    assert int(hash_byte_array([b""])[0]) == 0xEF46DB3751D8E999


@pytest.mark.parametrize("length", [*range(0, 70), 100, 1000, 4096 + 3])
def test_xxhash64_every_length_boundary(length):
    data = bytes((i * 131 + 7) % 256 for i in range(length))
    expected = xxhash.xxh64_intdigest(data)
    assert int(hash_byte_array([data])[0]) == expected
    if length:  # FIXED_LEN_BYTE_ARRAY has a length of at least 1
        assert int(hash_fixed_len_byte_array([data], length)[0]) == expected


#: The seed of the draft's MurmurHash3 (parquet-mr's and parquet-cpp's DEFAULT_SEED).
DRAFT_SEED = 1361930890


@pytest.mark.parametrize("length", [*range(0, 40), 127, 1000])
def test_murmur3_x64_128_low_64_bits(length):
    data = bytes((i * 37 + 1) % 256 for i in range(length))
    got = hash_byte_array([data], HashAlgorithm.MURMUR3_X64_128)[0]
    assert int(got) == mmh3.hash64(data, DRAFT_SEED, signed=False)[0]
    # The kernel itself, at any seed (its h1 and h2 start from the seed).
    buf = np.frombuffer(data, dtype=np.uint8)
    for seed in (0, 1, DRAFT_SEED, 2**32 - 1):
        expected = mmh3.hash64(data, seed, signed=False)[0]
        assert int(kernels.murmur3_bytes(buf, 0, length, seed)) == expected


def test_murmur3_known_answer_of_the_draft():
    """parquet-cpp's Murmur3Test (PARQUET-1332): bytes 0..7 hash to 913737700387071329
    with the draft's seed, the hash parquet-mr's draft-era filters hold."""
    assert HashAlgorithm.MURMUR3_X64_128.seed == DRAFT_SEED
    assert HashAlgorithm.XXHASH64.seed == 0
    got = hash_byte_array([bytes(range(8))], HashAlgorithm.MURMUR3_X64_128)[0]
    assert int(got) == 913737700387071329


@given(st.lists(st.binary(max_size=80), max_size=30))
def test_byte_array_matches_reference_for_any_bytes(values):
    expected = [xxhash.xxh64_intdigest(v) for v in values]
    assert hash_byte_array(values).tolist() == expected
    murmur = [mmh3.hash64(v, DRAFT_SEED, signed=False)[0] for v in values]
    assert hash_byte_array(values, HashAlgorithm.MURMUR3_X64_128).tolist() == murmur


@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=50))
def test_int64_hashes_8_le_bytes(values):
    expected = [xxhash.xxh64_intdigest(v.to_bytes(8, "little", signed=True)) for v in values]
    assert hash_int64(np.array(values, dtype=np.int64)).tolist() == expected


@given(st.lists(st.integers(-(2**31), 2**31 - 1), max_size=50))
def test_int32_hashes_4_le_bytes(values):
    expected = [xxhash.xxh64_intdigest(v.to_bytes(4, "little", signed=True)) for v in values]
    assert hash_int32(np.array(values, dtype=np.int32)).tolist() == expected


def test_floats_hash_raw_ieee_bits():
    vals = [0.0, -0.0, 1.5, float("inf"), float("nan")]
    d = np.array(vals, dtype=np.float64)
    f = np.array(vals, dtype=np.float32)
    assert hash_double(d).tolist() == [xxhash.xxh64_intdigest(x.tobytes()) for x in d]
    assert hash_float(f).tolist() == [xxhash.xxh64_intdigest(x.tobytes()) for x in f]
    assert hash_double([0.0])[0] != hash_double([-0.0])[0]


def test_boolean_and_int96():
    assert hash_boolean([True, False]).tolist() == [
        xxhash.xxh64_intdigest(b"\x01"),
        xxhash.xxh64_intdigest(b"\x00"),
    ]
    raw = (123).to_bytes(8, "little") + (2_440_588).to_bytes(4, "little")
    assert int(hash_int96([123], [2_440_588])[0]) == xxhash.xxh64_intdigest(raw)


def test_words_of_every_width_and_murmur_on_words():
    for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
        v = np.array([0, 1, np.iinfo(dtype).max], dtype=dtype)
        expected = [xxhash.xxh64_intdigest(x.tobytes()) for x in v]
        assert hash_plain(Words(v)).tolist() == expected
        expected_m = [mmh3.hash64(x.tobytes(), DRAFT_SEED, signed=False)[0] for x in v]
        assert hash_plain(Words(v), HashAlgorithm.MURMUR3_X64_128).tolist() == expected_m


def test_plain_layouts_reject_bad_buffers():
    from bloomskip.errors import InvalidParameterError
    from bloomskip.hashing.plain import VarBytes

    with pytest.raises(InvalidParameterError, match="uint8/16/32/64"):
        Words(np.zeros(3, dtype=np.int64))
    with pytest.raises(InvalidParameterError, match="need"):
        Rows(np.zeros(10, dtype=np.uint8), 4, 3)
    with pytest.raises(InvalidParameterError, match="inside the data buffer"):
        VarBytes(np.array([0, 5, 2], dtype=np.int32), np.zeros(5, dtype=np.uint8))
    with pytest.raises(InvalidParameterError, match="inside the data buffer"):
        VarBytes(np.array([0, 50], dtype=np.int64), np.zeros(5, dtype=np.uint8))
    assert len(var_bytes(["a", "bc"])) == 2
