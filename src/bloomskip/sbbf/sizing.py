"""How big an SBBF must be, and how full it is: sizing policies and FPP estimates.

Two policies turn (NDV, target FPP) into a bitset size:

``"parquet"``
    The classic formula of the Parquet spec, used by arrow-rs, parquet-java, Arrow C++
    and DuckDB: ``bits = floor(-8 * ndv / ln(1 - fpp ** (1/8)))``, ``bytes = bits // 8``,
    clamped to 32 B .. 128 MiB and rounded up to a power of two. It treats the filter as
    a classic Bloom filter with k = 8 and so under-sizes it when the power-of-two
    rounding does not save it: 100 values at 1 % get 128 B, whose real FPP is 1.14 %.
``"putze"``
    The exact FPP of a split block filter (Putze, Sanders, Singler, "Cache-, hash- and
    space-efficient Bloom filters", eq. 3: a Poisson mix of block loads), searched over
    log2(bytes) as Lance, Impala and Kudu do. The filter meets the target.

Sizes, and the FPP each really gives (Putze's formula), for a few targets::

    ndv        target   parquet            putze
    1,000      0.001    2 KiB   (1.2e-3)   4 KiB   (3.2e-5)
    100,000    0.01     128 KiB (1.0e-2)   256 KiB (3.3e-4)
    1,000,000  0.001    2 MiB   (1.0e-3)   4 MiB   (2.8e-5)
    8,192      0.00057  32 KiB  (3.6e-5)   32 KiB  (3.6e-5)   (Lance's default zone)

Power-of-two rounding often gives both policies the same size; they differ when the
classic formula lands just under a power of two that the exact FPP needs to cross.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Callable
from typing import Literal

from bloomskip.errors import InvalidFilterSizeError, InvalidParameterError

#: Smallest bitset: one 32-byte block.
MIN_BYTES = 32
#: Largest bitset any Parquet reader accepts (Arrow C++ and parquet-java reject more).
MAX_BYTES = 128 * 1024 * 1024
#: Bytes per block: eight 32-bit words.
BLOCK_BYTES = 32
#: Bits per block.
BLOCK_BITS = 256

SizingPolicy = Literal["parquet", "putze"]
POLICIES: tuple[str, ...] = ("parquet", "putze")

#: Accepted target FPPs. Inside (0, 1) the classic formula still needs
#: ``1 - fpp ** (1/8)`` to be neither 0 nor 1 in float64 (it divides by its log): below
#: about 1e-128 it rounds to 1, above about 1 - 1e-15 to 0. Far inside both edges.
MIN_FPP = 1e-100
MAX_FPP = 0.999999
#: Largest distinct count accepted (Parquet counts are signed 64-bit).
MAX_NDV = 2**63 - 1

_LOG2_MIN = 5
_LOG2_MAX = 27
_PUTZE_TERMS = 750


def validate_num_bytes(num_bytes: int) -> int:
    """Return ``num_bytes`` if it is a legal SBBF size, else raise InvalidFilterSizeError."""
    if isinstance(num_bytes, bool) or not isinstance(num_bytes, int):
        raise InvalidFilterSizeError(
            f"filter size must be an int number of bytes, got {type(num_bytes).__name__}"
        )
    if num_bytes < MIN_BYTES or num_bytes > MAX_BYTES or num_bytes & (num_bytes - 1):
        raise InvalidFilterSizeError(
            f"filter size {num_bytes} B is not accepted: it must be a power of two from "
            f"{MIN_BYTES} B to {MAX_BYTES} B (128 MiB), e.g. 32, 1024, 1048576"
        )
    return num_bytes


def _validate_ndv_fpp(ndv: int, fpp: float) -> None:
    if isinstance(ndv, bool) or not isinstance(ndv, int) or not 0 <= ndv <= MAX_NDV:
        raise InvalidParameterError(f"ndv must be an int from 0 to 2**63-1, got {ndv!r}")
    if isinstance(fpp, bool) or not isinstance(fpp, (int, float)) or not (0.0 < fpp < 1.0):
        raise InvalidParameterError(
            f"fpp must be a probability strictly between 0 and 1, got {fpp!r}"
        )
    if not MIN_FPP <= fpp <= MAX_FPP:
        raise InvalidParameterError(
            f"fpp must be a probability strictly between 0 and 1, from {MIN_FPP:g} to "
            f"{MAX_FPP:g} (beyond, the sizing formula cannot be computed), got {fpp!r}"
        )


def _validate_num_bytes(num_bytes: float, least: float = 0.0) -> None:
    """A filter size the estimates can divide by: finite, > ``least`` (numpy numbers too)."""
    try:
        ok = least < num_bytes < math.inf
    except TypeError:
        ok = False
    if not ok:
        raise InvalidParameterError(
            f"num_bytes must be a finite number of bytes > {least:g}, got {num_bytes!r}"
        )


def clamp_num_bytes(num_bytes: int) -> int:
    """Clamp to 32 B .. 128 MiB and round up to the next power of two."""
    n = min(max(int(num_bytes), MIN_BYTES), MAX_BYTES)
    return 1 << (n - 1).bit_length()


def parquet_num_bits(ndv: int, fpp: float) -> int:
    """Bits the Parquet formula asks for: ``floor(-8 * ndv / ln(1 - fpp ** (1/8)))``."""
    _validate_ndv_fpp(ndv, fpp)
    return int(-8.0 * ndv / math.log(1.0 - fpp ** (1.0 / 8.0)))


def putze_fpp(ndv: float, num_bytes: int) -> float:
    """Exact expected FPP of an SBBF of ``num_bytes`` holding ``ndv`` distinct values.

    Poisson mixture over block loads: with ``lam = 256 * ndv / bits`` keys per block on
    average, a block holding ``i`` keys answers a probe falsely with probability
    ``(1 - (31/32) ** i) ** 8``. Summed over 750 terms from the smallest up, in log space.
    """
    _validate_num_bytes(num_bytes)
    bits = 8.0 * num_bytes
    if ndv <= 0:
        return 0.0
    if ndv / bits > 2.0:
        return 1.0
    lam = BLOCK_BITS * ndv / bits
    log_lam = math.log(lam)
    result = 0.0
    for i in range(_PUTZE_TERMS - 1, 0, -1):
        log_p = i * log_lam - lam - math.lgamma(i + 1)
        log_inner = 8.0 * math.log(1.0 - (1.0 - 1.0 / 32.0) ** i)
        result += math.exp(log_p + log_inner)
    return min(result, 1.0)


def putze_fpp_many(ndv, num_bytes):
    """:func:`putze_fpp` over numpy arrays (each pair once), for whole zone tables."""
    import numpy as np

    ndv = np.asarray(ndv, dtype=np.float64)
    num_bytes = np.asarray(num_bytes, dtype=np.float64)
    pairs, inverse = np.unique(np.stack([ndv, num_bytes], axis=1), axis=0, return_inverse=True)
    out = np.zeros(pairs.shape[0])
    i = np.arange(_PUTZE_TERMS - 1, 0, -1, dtype=np.float64)
    lgam = np.array([math.lgamma(x + 1) for x in i])
    log_inner = 8.0 * np.log1p(-((1.0 - 1.0 / 32.0) ** i))
    for j in range(0, pairs.shape[0], 256):
        n, b = pairs[j : j + 256, 0], pairs[j : j + 256, 1]
        bits = 8.0 * b
        lam = np.where(n > 0, BLOCK_BITS * n / np.maximum(bits, 1.0), 1.0)
        terms = np.exp(i[None, :] * np.log(lam)[:, None] - lam[:, None] - lgam + log_inner)
        res = np.minimum(terms.sum(axis=1), 1.0)
        res = np.where(n <= 0, 0.0, np.where(n / np.maximum(bits, 1.0) > 2.0, 1.0, res))
        out[j : j + 256] = res
    return out[inverse.reshape(-1)]


def _first_true(low: int, high: int, holds: Callable[[int], bool]) -> int:
    """The least ``x`` in ``(low, high]`` for which ``holds(x)``, by bisection, given that
    ``holds`` is false up to some point and true from there on and that ``holds(high)``;
    ``low`` itself is never tested."""
    while high > low + 1:
        mid = (high + low) // 2
        if holds(mid):
            high = mid
        else:
            low = mid
    return high


def putze_min_log2_bytes(ndv: int, fpp: float) -> int:
    """Smallest log2(bytes) whose Putze FPP is <= ``fpp`` (binary search, unclamped)."""
    _validate_ndv_fpp(ndv, fpp)
    return _first_true(0, 64, lambda log2: putze_fpp(ndv, 1 << log2) <= fpp)


def num_bytes_for(ndv: int, fpp: float, policy: SizingPolicy = "parquet") -> int:
    """Bitset size in bytes for ``ndv`` distinct values at target ``fpp`` under ``policy``."""
    if policy == "parquet":
        return clamp_num_bytes(parquet_num_bits(ndv, fpp) // 8)
    if policy == "putze":  # putze_min_log2_bytes's search, through a cached table
        return putze_num_bytes(ndv, fpp)
    raise InvalidParameterError(
        f"unknown sizing policy {policy!r}: use one of {', '.join(POLICIES)}"
    )


@functools.lru_cache(maxsize=64)
def putze_capacities(fpp: float) -> tuple[int, ...]:
    """For each log2 size 5..27, the most distinct values it holds at Putze FPP <= ``fpp``.

    The FPP of a fixed size rises with the NDV, so ``num_bytes_for(ndv, fpp, "putze")``
    is the first size whose capacity is >= ``ndv``: :func:`putze_num_bytes` answers in
    a bisection of this table instead of 750-term sums, which matters when every zone of
    an index is sized from its own NDV.
    """
    _validate_ndv_fpp(0, fpp)
    return tuple(_putze_capacity(1 << log2, fpp) for log2 in range(_LOG2_MIN, _LOG2_MAX + 1))


def _putze_capacity(num_bytes: int, fpp: float) -> int:
    """The most distinct values ``num_bytes`` hold at Putze FPP <= ``fpp``."""
    lo, hi = 0, 1  # putze_fpp(lo) <= fpp < putze_fpp(hi)
    while putze_fpp(hi, num_bytes) <= fpp:
        lo, hi = hi, hi * 2
    return _first_true(lo, hi, lambda n: putze_fpp(n, num_bytes) > fpp) - 1


def putze_num_bytes(ndv: int, fpp: float) -> int:
    """``num_bytes_for(ndv, fpp, "putze")``, from the cached :func:`putze_capacities`."""
    _validate_ndv_fpp(ndv, fpp)
    caps = putze_capacities(float(fpp))
    i = bisect.bisect_left(caps, ndv)
    return 1 << (_LOG2_MIN + min(i, len(caps) - 1))


def ndv_from_fill(fill_ratio: float, num_bytes: int) -> float:
    """Distinct values that most likely produced ``fill_ratio`` in a filter of ``num_bytes``.

    Each insert sets one bit, uniformly, in each of the 8 words of one block, so a given
    bit stays clear with probability ``(1 - 1/(32 * blocks)) ** n``.
    """
    if fill_ratio <= 0.0:
        return 0.0
    if fill_ratio >= 1.0:
        return math.inf
    _validate_num_bytes(num_bytes, BLOCK_BYTES - 1)
    blocks = num_bytes // BLOCK_BYTES
    return math.log1p(-fill_ratio) / math.log1p(-1.0 / (32.0 * blocks))


def fpp_after_folds(fill_ratio: float, folds: int) -> float:
    """Estimated FPP after ``folds`` foldings, from the current average fill.

    The estimate of arrow-rs and Arrow C++ (``fold_to_target_fpp``): OR-ing 2 blocks
    turns a clear probability ``q`` into ``q**2``; FPP is taken as ``fill ** 8``.
    """
    q = 1.0 - fill_ratio
    for _ in range(folds):
        q *= q
    return (1.0 - q) ** 8
