"""The filter itself: construction, insert/check, union, folding, statistics, bytes."""

from __future__ import annotations

import mmap

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomskip import (
    IncompatibleFiltersError,
    InvalidBitsetError,
    InvalidFilterSizeError,
    InvalidParameterError,
    ReadOnlyFilterError,
    Sbbf,
    hash_values,
)
from bloomskip.sbbf import build_filter, build_folded
from bloomskip.sbbf.kernels import SALT
from bloomskip.sbbf.sizing import num_bytes_for

# A filter written by parquet-mr/Spark for the strings "a0".."a9" (arrow-rs's test fixture).
PARQUET_MR_A0_A9 = bytes(
    [200, 1, 80, 20, 64, 68, 8, 109, 6, 37, 4, 67, 144, 80, 96, 32,
     8, 132, 43, 33, 0, 5, 99, 65, 2, 0, 224, 44, 64, 78, 96, 4]
)  # fmt: skip


def _spec_insert(words: np.ndarray, h: int) -> None:
    """The spec, one hash at a time in plain Python: the oracle for the kernels."""
    nblocks = len(words) // 8
    block = ((h >> 32) * nblocks) >> 32
    key = h & 0xFFFFFFFF
    for j in range(8):
        words[8 * block + j] |= 1 << (((key * int(SALT[j])) & 0xFFFFFFFF) >> 27)


def test_bit_exact_with_parquet_mr_fixture():
    f = Sbbf(32)
    f.insert([f"a{i}" for i in range(10)])
    assert f.to_bytes() == PARQUET_MR_A0_A9
    g = Sbbf.from_bytes(PARQUET_MR_A0_A9)
    assert g.check([f"a{i}" for i in range(10)]).all()


@pytest.mark.parametrize("num_bytes", [32, 64, 1024, 1 << 16])
def test_kernels_match_the_spec_in_plain_python(num_bytes):
    hashes = hash_values(np.arange(500, dtype=np.int64))
    expected = np.zeros(num_bytes // 4, dtype=np.uint64)
    for h in hashes.tolist():
        _spec_insert(expected, h)
    f = Sbbf(num_bytes)
    f.insert_hashes(hashes)
    assert f.words.tolist() == expected.tolist()
    g = Sbbf(num_bytes)
    g.insert(np.arange(500, dtype=np.int64))  # fused hash+insert path
    assert g == f
    assert f.check_hashes(hashes).all()


@pytest.mark.parametrize("bad", [0, 16, 31, 33, 48, 1000, 3 << 10, (128 << 20) * 2, -32])
def test_bad_size_is_a_typed_error(bad):
    with pytest.raises(InvalidFilterSizeError, match="power of two from 32 B to"):
        Sbbf(bad)


def test_size_must_be_an_int():
    with pytest.raises(InvalidFilterSizeError, match="must be an int"):
        Sbbf(1024.0)  # type: ignore[arg-type]


@pytest.mark.parametrize("n", [0, 1, 31, 33, 100])
def test_bitset_not_whole_blocks_is_a_typed_error(n):
    with pytest.raises(InvalidBitsetError, match="multiple of 32 B"):
        Sbbf.from_bytes(b"\0" * n)


def test_bitset_of_wrong_kind():
    with pytest.raises(InvalidBitsetError, match="bytes-like"):
        Sbbf.from_bytes("not bytes")


def test_from_bytes_views_without_copy_and_rejects_writes_to_read_only():
    raw = bytearray(1024)
    f = Sbbf.from_bytes(raw)
    f.insert([1, 2, 3])
    assert bytes(raw) == f.to_bytes() and any(raw)  # the filter wrote into the caller's buffer
    ro = Sbbf.from_bytes(bytes(raw))
    assert not ro.writable and ro.check([1, 2, 3]).all()
    with pytest.raises(ReadOnlyFilterError, match="copy=True"):
        ro.insert([4])
    rw = Sbbf.from_bytes(bytes(raw), copy=True)
    rw.insert([4])
    assert rw.check([4])[0]


def test_filter_can_view_a_memory_mapped_file(tmp_path):
    f = Sbbf(4096)
    f.insert(pa.array(["x", "y"]))
    path = tmp_path / "filter.bin"
    path.write_bytes(b"HEADER" + f.to_bytes())
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        view = memoryview(mm)[6:]
        try:
            g = Sbbf.from_bytes(view, copy=True)  # offset 6 is not word-aligned
            assert g == f
            aligned = memoryview(mm)[8:]  # a 4-aligned view is used in place
            h = Sbbf.from_bytes(aligned[: 4096 - 32])
            assert not h.writable
            del h, g
        finally:
            view.release()
            aligned.release()


def test_union_equals_build_over_union_of_values():
    a, b, both = Sbbf(2048), Sbbf(2048), Sbbf(2048)
    a.insert(np.arange(0, 300))
    b.insert(np.arange(200, 600))
    both.insert(np.arange(0, 600))
    assert (a | b) == both
    assert a.union(b) == both


def test_union_refuses_mismatches():
    with pytest.raises(IncompatibleFiltersError, match="fold the larger"):
        Sbbf(64).union(Sbbf(32))
    with pytest.raises(IncompatibleFiltersError, match="hash="):
        Sbbf(32).union(Sbbf(32, hash="murmur3_x64_128"))
    with pytest.raises(IncompatibleFiltersError, match="encoding="):
        Sbbf(32).union(Sbbf(32, encoding="arrow"))


@pytest.mark.parametrize("k", [0, 1, 2, 5, 10])
def test_fold_equals_direct_build_at_smaller_size(k):
    values = pa.array([f"user_{i}" for i in range(5000)])
    big = Sbbf(1 << 15)
    big.insert(values)
    small = Sbbf((1 << 15) >> k)
    small.insert(values)
    assert big.fold(k) == small


def test_merging_halves_would_be_wrong():
    # Documented trap (reference 0.7): block i must merge with i+1, never with i+N/2.
    big = Sbbf(1 << 12)
    big.insert(np.arange(1000))
    w = big.words.reshape(-1, 8)
    halves = Sbbf.from_bytes((w[: len(w) // 2] | w[len(w) // 2 :]).tobytes())
    assert not halves.check(np.arange(1000)).all()
    assert big.fold(1).check(np.arange(1000)).all()


def test_fold_errors():
    with pytest.raises(InvalidParameterError, match="at most 0 times"):
        Sbbf(32).fold(1)
    with pytest.raises(InvalidParameterError, match="int >= 0"):
        Sbbf(64).fold(-1)


def test_fold_to_fpp_follows_arrow_rs_rule():
    # Reference 1.3: 20,000 distinct strings in a 1 MiB filter fold to 32 KiB at fpp 0.05.
    f = Sbbf(1 << 20)
    f.insert(pa.array([f"s{i:08d}" for i in range(20_000)]))
    folded = f.fold_to_fpp(0.05)
    assert folded.num_bytes == 32 * 1024
    assert 0.40 < folded.fill_ratio() < 0.50
    empty = Sbbf(1 << 20).fold_to_fpp(0.01)
    assert empty.num_bytes == 32
    assert Sbbf(32).folds_for_fpp(0.01) == 0
    with pytest.raises(InvalidParameterError):
        f.folds_for_fpp(0.0)


@pytest.mark.parametrize(("ndv", "fpp"), [(1000, 0.001), (20_000, 0.01), (100_000, 0.01)])
def test_putze_fold_sizes_as_putze_sizing(ndv, fpp):
    """policy="putze" folds to the size Putze's sizing gives the distinct count (here the
    estimate from the fill finds it); "parquet" to arrow-rs's rule, which may be smaller."""
    f = Sbbf(1 << 22)
    f.insert(pa.array([f"s{i:08d}" for i in range(ndv)]))
    assert f.fold_to_fpp(fpp, "putze").num_bytes == num_bytes_for(ndv, fpp, "putze")
    assert f.fold_to_fpp(fpp).num_bytes == num_bytes_for(ndv, fpp, "parquet")
    with pytest.raises(InvalidParameterError, match="unknown sizing policy"):
        f.folds_for_fpp(0.01, "lance")  # type: ignore[arg-type]
    assert Sbbf(1 << 10).folds_for_fpp(0.01, "putze") == 5  # empty: down to one block


@settings(max_examples=40, deadline=None)
@given(
    values=st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3000),
    log2=st.integers(5, 18),
    fpp=st.sampled_from([0.3, 0.05, 0.01, 0.001]),
    strategy=st.sampled_from(["spec", "draft"]),
    policy=st.sampled_from(["parquet", "putze"]),
)
def test_folding_never_loses_a_value(values, log2, fpp, strategy, policy):
    arr = np.array(values, dtype=np.int64)
    f = Sbbf(1 << log2, strategy=strategy)
    f.insert(arr)
    folded = f.fold_to_fpp(fpp, policy)
    assert folded.check(arr).all()
    fresh = Sbbf(folded.num_bytes, strategy=strategy)
    fresh.insert(arr)
    assert folded == fresh


def test_build_folded_starts_big_and_folds():
    hashes = hash_values(pa.array([f"k{i}" for i in range(5000)]))
    f, estimate, start = build_folded(hashes, 0.01, 1_000_000)
    assert start == num_bytes_for(1_000_000, 0.01) == 2 << 20
    assert estimate == pytest.approx(5000, rel=0.01)  # from the fill of the 2 MiB filter
    exact, ndv = build_filter(hashes, 0.01)
    assert ndv == 5000 and f == exact  # here the fold lands on the exact size
    g, estimate, start = build_folded(hashes[:0], 0.01, 1_000_000)
    assert g.num_bytes == 32 and estimate == 0 and start == 2 << 20


def test_statistics():
    f = Sbbf(1 << 16)
    assert f.fill_ratio() == 0.0 and f.estimated_ndv() == 0.0 and f.predicted_fpp() == 0.0
    f.insert(np.arange(10_000))
    assert f.popcount() <= 8 * 10_000
    assert f.estimated_ndv() == pytest.approx(10_000, rel=0.03)
    assert f.predicted_fpp() == pytest.approx(f.predicted_fpp(10_000), rel=0.1)
    full = Sbbf.from_bytes(b"\xff" * 32)
    assert full.fill_ratio() == 1.0 and full.predicted_fpp() == 1.0
    assert "num_bytes=65536" in repr(f)


def test_hash_inputs():
    f = Sbbf(256)
    f.insert_hashes(np.array([1, 2, 3], dtype=np.int64))
    f.insert_hashes([2**64 - 1])
    assert f.check_hashes(np.array([1, 2, 3, 2**64 - 1], dtype=np.uint64)).all()
    with pytest.raises(InvalidParameterError, match="64-bit integers"):
        f.check_hashes(np.array([1.5]))


def test_check_returns_false_for_nulls_and_keeps_positions():
    f = Sbbf(1024)
    f.insert(pa.array(["a", None, "b"]))
    got = f.check(pa.chunked_array([["a", None], ["b", "zzz-not-there"]]))
    assert got.tolist() == [True, False, True, False]
    assert f.check([]).tolist() == []
    assert "a" in f and "zzz-not-there" not in f


def test_murmur3_filter_is_a_different_filter():
    x, m = Sbbf(1024), Sbbf(1024, hash="murmur3_x64_128")
    x.insert(["a", "b"])
    m.insert(["a", "b"])
    assert x != m and m.check(["a", "b"]).all()
    m.insert(np.arange(10, dtype=np.int64))  # numeric words go through the byte kernel
    assert m.check(np.arange(10, dtype=np.int64)).all()
    with pytest.raises(InvalidParameterError, match="unknown hash"):
        Sbbf(32, hash="md5")


def test_with_ndv_fpp_policies():
    assert Sbbf.with_ndv_fpp(1000, 0.001).num_bytes == 2048
    assert Sbbf.with_ndv_fpp(1000, 0.001, policy="putze").num_bytes == 4096


# ----------------------------------------------------------------------------- build_filter


def _sorted_build(hashes: np.ndarray, fpp: float, policy: str) -> tuple[Sbbf, int]:
    """The builder as it was: count by sorting, insert sorted (the oracle)."""
    ordered = np.sort(hashes)
    ndv = int(ordered.size and 1 + np.count_nonzero(ordered[1:] != ordered[:-1]))
    f = Sbbf.with_ndv_fpp(ndv, fpp, policy=policy)
    f.insert_hashes(ordered)
    return f, ndv


@pytest.mark.parametrize("policy", ["parquet", "putze"])
@pytest.mark.parametrize(
    "case",
    ["empty", "one", "zero_and_dupes", "random_dupes", "low_bits_equal", "high_bits_equal"],
)
def test_build_filter_counts_exactly_and_builds_the_same_filter(case, policy):
    rng = np.random.default_rng(3)
    hashes = {
        "empty": np.zeros(0, np.uint64),
        "one": np.array([7], np.uint64),
        "zero_and_dupes": np.array([0, 0, 5, 5, 2**64 - 1, 0], np.uint64),
        "random_dupes": rng.choice(rng.integers(0, 2**64, 5000, np.uint64), 40_000),
        # Values a hash table keyed by low or high bits would pile into one run of slots.
        "low_bits_equal": (np.arange(20_000, dtype=np.uint64) << np.uint64(40)) | np.uint64(9),
        "high_bits_equal": np.arange(20_000, dtype=np.uint64) | np.uint64(0xABCD << 48),
    }[case]
    f, ndv = build_filter(hashes, 0.01, policy)
    expected, expected_ndv = _sorted_build(hashes, 0.01, policy)
    assert ndv == expected_ndv == np.unique(hashes).size
    assert f.to_bytes() == expected.to_bytes()


def test_count_distinct_kernel_against_numpy():
    from bloomskip.sbbf.kernels import count_distinct

    rng = np.random.default_rng(4)
    for n in (1, 2, 3, 100, 4097):
        h = rng.integers(0, 50, n).astype(np.uint64)
        for multiplier in (1, 3, 0x9E3779B97F4A7C15):
            assert count_distinct(h, np.uint64(multiplier)) == np.unique(h).size
