"""Known-answer tables for SBBF sizing: arrow-rs's classic formula and Lance's Putze search,
and the tables of the specs themselves (arrow-rs's sizing table, BloomFilter.md's
false-positive examples and ratios), so that no change can drift from them unnoticed."""

from __future__ import annotations

import pytest

from bloomskip.errors import InvalidParameterError
from bloomskip.sbbf import sizing

# arrow-rs parquet/src/bloom_filter/mod.rs, test_num_of_bits_from_ndv_fpp: (fpp, ndv, bits)
ARROW_RS_BITS = [
    (0.1, 10, 57),
    (0.01, 10, 96),
    (0.001, 10, 146),
    (0.1, 100, 577),
    (0.01, 100, 968),
    (0.001, 100, 1460),
    (0.1, 1000, 5772),
    (0.01, 1000, 9681),
    (0.001, 1000, 14607),
    (0.1, 10000, 57725),
    (0.01, 10000, 96815),
    (0.001, 10000, 146076),
    (0.1, 100000, 577254),
    (0.01, 100000, 968152),
    (0.001, 100000, 1460769),
    (0.1, 1000000, 5772541),
    (0.01, 1000000, 9681526),
    (0.001, 1000000, 14607697),
]

# arrow-rs test_optimal_num_of_bytes: (requested bytes, bitset bytes)
ARROW_RS_BYTES = [
    (0, 32),
    (9, 32),
    (31, 32),
    (32, 32),
    (33, 64),
    (99, 128),
    (1024, 1024),
    (999_000_000, 128 * 1024 * 1024),
]

# arrow-rs parquet/src/bloom_filter/mod.rs, module docs, "a table of calculated sizes for
# various FPP and NDV": (NDV, FPP, blocks b, size in KiB).
ARROW_RS_SIZE_TABLE = [
    (10_000, 0.1, 256, 8),
    (10_000, 0.01, 512, 16),
    (10_000, 0.001, 1_024, 32),
    (10_000, 0.0001, 1_024, 32),
    (100_000, 0.1, 4_096, 128),
    (100_000, 0.01, 4_096, 128),
    (100_000, 0.001, 8_192, 256),
    (100_000, 0.0001, 16_384, 512),
    (100_000, 0.00001, 16_384, 512),
    (1_000_000, 0.1, 32_768, 1_024),
    (1_000_000, 0.01, 65_536, 2_048),
    (1_000_000, 0.001, 65_536, 2_048),
    (1_000_000, 0.0001, 131_072, 4_096),
    (1_000_000, 0.00001, 131_072, 4_096),
    (1_000_000, 0.000001, 262_144, 8_192),
]

# parquet-format BloomFilter.md, "Sizing an SBBF": a filter of 1024 blocks holding
# (hash values inserted, false positive probability as written).
SPEC_FPP_EXAMPLES = [
    (26_214, "1.26 %"),  # "around 1.26%": 10 bits of space per hash value
    (52_428, "18 %"),  # twice as many: 5 bits per value
    (13_107, "0.04 %"),  # half as many: 20 bits per value
]

# BloomFilter.md, "sample values of the ratios needed to achieve certain false positive
# rates": (bits of space per insert, false positive probability).
SPEC_RATIO_TABLE = [
    (6.0, 0.10),
    (10.5, 0.01),
    (16.9, 0.001),
    (26.4, 0.0001),
    (41.0, 0.00001),
]

# Lance sbbf.rs, test_num_of_bits_from_ndv_fpp: (fpp, ndv, unclamped log2 bytes)
LANCE_LOG2_BYTES = [
    (0.1, 10, 3),
    (0.01, 10, 4),
    (0.001, 10, 5),
    (0.1, 100, 7),
    (0.01, 100, 8),
    (0.001, 100, 8),
    (0.1, 1000, 10),
    (0.01, 1000, 11),
    (0.001, 1000, 12),
]


@pytest.mark.parametrize(("fpp", "ndv", "bits"), ARROW_RS_BITS)
def test_parquet_bits_match_arrow_rs(fpp, ndv, bits):
    assert sizing.parquet_num_bits(ndv, fpp) == bits


@pytest.mark.parametrize(("requested", "expected"), ARROW_RS_BYTES)
def test_clamp_matches_arrow_rs(requested, expected):
    assert sizing.clamp_num_bytes(requested) == expected


@pytest.mark.parametrize(("ndv", "fpp", "blocks", "kib"), ARROW_RS_SIZE_TABLE)
def test_arrow_rs_size_table(ndv, fpp, blocks, kib):
    num_bytes = sizing.num_bytes_for(ndv, fpp, "parquet")
    assert num_bytes == kib * 1024
    assert num_bytes // sizing.BLOCK_BYTES == blocks


@pytest.mark.parametrize(("inserted", "written"), SPEC_FPP_EXAMPLES)
def test_spec_false_positive_examples(inserted, written):
    """Putze's formula gives the spec's examples to the digits it writes them with."""
    percent = 100 * sizing.putze_fpp(inserted, 1024 * sizing.BLOCK_BYTES)
    value = written.removesuffix(" %")
    decimals = len(value.partition(".")[2])
    assert f"{percent:.{decimals}f}" == value


def _significant(x: float, digits: int = 1) -> float:
    return float(f"{x:.{digits - 1}e}")


@pytest.mark.parametrize(("bits_per_insert", "fpp"), SPEC_RATIO_TABLE)
def test_spec_ratio_table(bits_per_insert, fpp):
    """Each ratio gives the table's FPP (to its one significant digit), and the least ratio
    that meets that FPP is within 0.1 bit of the table's (26.34 for the 26.4 row)."""
    num_bytes = 1024 * sizing.BLOCK_BYTES
    bits = 8 * num_bytes
    assert _significant(sizing.putze_fpp(bits / bits_per_insert, num_bytes)) == fpp
    low, high = 1.0, 100.0  # bits per insert: putze_fpp falls as the ratio grows
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (low, mid) if sizing.putze_fpp(bits / mid, num_bytes) <= fpp else (mid, high)
    assert abs(high - bits_per_insert) < 0.1


@pytest.mark.parametrize(("fpp", "ndv", "log2"), LANCE_LOG2_BYTES)
def test_putze_search_matches_lance(fpp, ndv, log2):
    assert sizing.putze_min_log2_bytes(ndv, fpp) == log2
    assert sizing.num_bytes_for(ndv, fpp, "putze") == 1 << max(log2, 5)


def test_lance_default_zone_is_32_kib():
    # Lance's defaults: 8192 items at p = 0.00057 -> 32 KiB (reference zone-index.md 1.3).
    assert sizing.num_bytes_for(8192, 0.00057, "putze") == 32 * 1024


def test_parquet_policy_examples():
    # 20,000 distinct at 1 %: 32 KiB in arrow-rs and parquet-java (reference section 2.1).
    assert sizing.num_bytes_for(20_000, 0.01, "parquet") == 32 * 1024
    # 1,048,576 distinct at 5 %: about 7.2 Mbit -> 1 MiB (arrow-rs properties docs).
    assert sizing.num_bytes_for(1_048_576, 0.05, "parquet") == 1024 * 1024
    assert sizing.num_bytes_for(0, 0.01, "parquet") == 32
    assert sizing.num_bytes_for(10**12, 0.01, "parquet") == sizing.MAX_BYTES


def test_putze_meets_target_and_parquet_may_not():
    for ndv in (100, 1000, 100_000):
        for fpp in (0.1, 0.01, 0.001):
            assert sizing.putze_fpp(ndv, sizing.num_bytes_for(ndv, fpp, "putze")) <= fpp
    # The classic formula under-sizes: 100 values at 1 % get 128 B, whose real FPP is higher.
    assert sizing.putze_fpp(100, sizing.num_bytes_for(100, 0.01, "parquet")) > 0.01


def test_putze_fpp_edges():
    assert sizing.putze_fpp(0, 32) == 0.0
    assert sizing.putze_fpp(10**9, 32) == 1.0


@pytest.mark.parametrize("fpp", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_bad_fpp_is_a_clear_error(fpp):
    with pytest.raises(InvalidParameterError, match="strictly between 0 and 1"):
        sizing.num_bytes_for(100, fpp)


@pytest.mark.parametrize("fpp", [1e-300, 1e-128, 1 - 1e-16, 0.9999999])
def test_fpp_beyond_what_the_formula_computes_is_refused(fpp):
    """Inside (0, 1) but where ``1 - fpp ** (1/8)`` rounds to 1 or 0 in float64: a typed
    error naming the accepted range, never ZeroDivisionError or a math domain error."""
    for policy in sizing.POLICIES:
        with pytest.raises(InvalidParameterError, match=r"from 1e-100 to 0\.999999"):
            sizing.num_bytes_for(1000, fpp, policy)  # type: ignore[arg-type]
    assert sizing.num_bytes_for(10**6, sizing.MIN_FPP) == sizing.MAX_BYTES
    assert sizing.num_bytes_for(10**6, sizing.MAX_FPP) == 65536


def test_ndv_and_sizes_that_would_overflow_or_divide_by_zero_are_refused():
    with pytest.raises(InvalidParameterError, match="ndv must be an int from 0 to 2"):
        sizing.num_bytes_for(10**400, 0.01)  # -8.0 * ndv would overflow
    assert sizing.num_bytes_for(sizing.MAX_NDV, 0.01) == sizing.MAX_BYTES
    for bad in (0, -32, float("nan"), float("inf"), "32"):
        with pytest.raises(InvalidParameterError, match="num_bytes"):
            sizing.putze_fpp(10, bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="num_bytes"):
        sizing.ndv_from_fill(0.5, 16)


def test_bad_ndv_and_policy():
    with pytest.raises(InvalidParameterError, match="ndv must be an int"):
        sizing.num_bytes_for(-1, 0.01)
    with pytest.raises(InvalidParameterError, match="unknown sizing policy 'lance'"):
        sizing.num_bytes_for(10, 0.01, "lance")  # type: ignore[arg-type]


def test_ndv_estimate_inverts_fill():
    nbytes = 1 << 20
    fill = 1 - (1 - 1 / (32 * (nbytes // 32))) ** 50_000
    assert sizing.ndv_from_fill(fill, nbytes) == pytest.approx(50_000, rel=1e-9)
    assert sizing.ndv_from_fill(0.0, nbytes) == 0.0


def test_putze_table_answers_as_the_search():
    """``num_bytes_for(..., "putze")`` bisects a cached capacity table; it must give what
    Lance's binary search over log2(bytes) gives, clamped to 32 B .. 128 MiB."""
    import random

    rng = random.Random(7)
    for fpp in (0.00057, 0.01, 0.001, 0.3):
        ndvs = [*range(0, 2000, 7), *(rng.randrange(2000, 10**9) for _ in range(60))]
        for ndv in ndvs:
            log2 = min(max(sizing.putze_min_log2_bytes(ndv, fpp), 5), 27)
            assert sizing.num_bytes_for(ndv, fpp, "putze") == 1 << log2, (ndv, fpp)
