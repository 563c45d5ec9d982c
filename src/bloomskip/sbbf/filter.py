"""The Split Block Bloom Filter of Apache Parquet, bit-exact with every Parquet writer.

Structure (parquet-format ``BloomFilter.md``)::

    filter  = num_blocks blocks                 (num_blocks = bytes / 32, a power of two)
    block   = 8 words of 32 bits (256 bits)     stored as 8 little-endian uint32
    insert(h):                                  h = xxHash64(PLAIN bytes, seed 0)
        b   = ((h >> 32) * num_blocks) >> 32    pick one block
        key = h & 0xFFFFFFFF
        for j in 0..7:  word[b][j] |= 1 << ((key * SALT[j] mod 2**32) >> 27)
    check(h): all eight of those bits are set

Because the block index is multiply-shift, block ``i`` of a filter of ``N`` blocks
holds exactly the hashes of blocks ``2i`` and ``2i+1`` of a filter of ``2N`` blocks. So
OR-ing *adjacent* groups of ``2**k`` blocks (:meth:`Sbbf.fold`) gives the filter that a
fresh build at the smaller size would give, bit for bit; OR-ing two filters of one
size (:meth:`Sbbf.union`) gives the filter of the union of their values.

Values reach the filter through :mod:`bloomskip.hashing`: an Arrow array, numpy array
or Python scalar is turned into the PLAIN bytes of its Parquet physical type (or, with
``encoding="arrow"``, of its Arrow width, as Lance does) and hashed in compiled kernels.

``strategy="draft"`` builds and reads filters as the initial draft of the spec stated
them (MurmurHash3, and the block index masked rather than multiply-shifted); everything
above holds for it too, except that folding ORs the filter's halves
(:mod:`bloomskip.sbbf.strategy`).
"""

from __future__ import annotations

import math
import secrets
from typing import Any

import numpy as np

from bloomskip._lazy import lazy
from bloomskip.errors import (
    IncompatibleFiltersError,
    InvalidBitsetError,
    InvalidParameterError,
    ReadOnlyFilterError,
)
from bloomskip.hashing.arrow import Encoding, PhysicalSpec, to_plain_columns
from bloomskip.hashing.plain import HashAlgorithm, Rows, VarBytes, Words, hash_plain
from bloomskip.sbbf import sizing
from bloomskip.sbbf.memory import aligned_zeros, byte_view, word_view
from bloomskip.sbbf.strategy import Strategy

kernels = lazy("bloomskip.sbbf.kernels")


class Sbbf:
    """A Parquet Split Block Bloom Filter.

    >>> f = Sbbf.with_ndv_fpp(1000, 0.01)          # 2 KiB, sized as arrow-rs/parquet-java do
    >>> f.insert(["alice", "bob"])
    >>> f.check(["alice", "carol"]).tolist()
    [True, False]

    ``strategy`` selects the hash and block rule: ``"spec"`` (xxHash64, what every
    Parquet file holds, the default) or ``"draft"`` (the initial draft's MurmurHash3 and
    masked block index); ``hash="murmur3_x64_128"`` is another way to ask for the draft.
    ``encoding`` says how values become bytes: ``"parquet"`` (the PLAIN bytes of the
    Parquet physical type, the default) or ``"arrow"`` (each Arrow type at its own width,
    as Lance's zone index). Both are part of the filter: :meth:`union` refuses to mix them.
    """

    __slots__ = ("_encoding", "_strategy", "_words")

    def __init__(
        self,
        num_bytes: int,
        *,
        strategy: str | Strategy | None = None,
        hash: str | HashAlgorithm | None = None,
        encoding: str | Encoding = Encoding.PARQUET,
    ) -> None:
        sizing.validate_num_bytes(num_bytes)
        self._strategy = Strategy.resolve(strategy, hash)
        self._encoding = Encoding.parse(encoding)
        self._words = aligned_zeros(num_bytes).view(np.uint32)

    # ------------------------------------------------------------------ construction

    @classmethod
    def with_ndv_fpp(
        cls,
        ndv: int,
        fpp: float,
        *,
        policy: sizing.SizingPolicy = "parquet",
        strategy: str | Strategy | None = None,
        hash: str | HashAlgorithm | None = None,
        encoding: str | Encoding = Encoding.PARQUET,
    ) -> Sbbf:
        """An empty filter sized for ``ndv`` distinct values at false-positive rate ``fpp``.

        ``policy="parquet"`` uses the classic formula of arrow-rs/parquet-java/Arrow C++;
        ``policy="putze"`` the exact SBBF FPP that Lance uses (see :mod:`.sizing`).
        """
        num_bytes = sizing.num_bytes_for(ndv, fpp, policy)
        return cls(num_bytes, strategy=strategy, hash=hash, encoding=encoding)

    @classmethod
    def from_bytes(
        cls,
        bitset: Any,
        *,
        copy: bool = False,
        strategy: str | Strategy | None = None,
        hash: str | HashAlgorithm | None = None,
        encoding: str | Encoding = Encoding.PARQUET,
    ) -> Sbbf:
        """A filter over raw bitset bytes: 32-byte blocks of eight little-endian u32 words.

        ``bitset`` is anything with the buffer protocol (``bytes``, ``bytearray``,
        ``memoryview``, ``mmap``, numpy array). Without ``copy`` the filter *views* the
        buffer (no copy; a read-only buffer gives a read-only filter). Any multiple of
        32 bytes up to 128 MiB is accepted, as readers do; writers use powers of two.
        A draft filter (``strategy="draft"``) must be a power of two: its block rule
        masks the hash to the block count.
        """
        chosen = Strategy.resolve(strategy, hash)
        encoding = Encoding.parse(encoding)
        raw = byte_view(bitset, "bitset")
        n = raw.shape[0]
        if n == 0 or n % sizing.BLOCK_BYTES or n > sizing.MAX_BYTES:
            raise InvalidBitsetError(
                f"bitset of {n} B is not an SBBF: its length must be a non-zero multiple of "
                f"{sizing.BLOCK_BYTES} B (whole 256-bit blocks) and at most 128 MiB"
            )
        if chosen is Strategy.DRAFT and n & (n - 1):
            raise InvalidBitsetError(
                f"bitset of {n} B is not a draft SBBF: the draft's block index masks the "
                "hash to the block count, so its length must be a power of two"
            )
        self = cls.__new__(cls)
        self._words = word_view(raw, np.uint32, copy)
        self._strategy = chosen
        self._encoding = encoding
        return self

    def to_bytes(self) -> bytes:
        """The bitset as bytes (a copy), as stored after a Parquet BloomFilterHeader."""
        return self._words.tobytes()

    def copy(self) -> Sbbf:
        return Sbbf.from_bytes(
            self._words, copy=True, strategy=self._strategy, encoding=self._encoding
        )

    # ------------------------------------------------------------------ properties

    @property
    def num_bytes(self) -> int:
        return int(self._words.shape[0] * 4)

    @property
    def num_blocks(self) -> int:
        return int(self._words.shape[0] // 8)

    @property
    def words(self) -> np.ndarray:
        """The filter's ``uint32`` words (a view, not a copy)."""
        return self._words

    @property
    def bitset(self) -> memoryview:
        """The filter's bytes (a view, not a copy)."""
        return memoryview(self._words.view(np.uint8))

    @property
    def strategy(self) -> Strategy:
        """The hash and block rule the filter was built with (:mod:`.strategy`)."""
        return self._strategy

    @property
    def hash(self) -> HashAlgorithm:
        return self._strategy.hash

    @property
    def encoding(self) -> Encoding:
        return self._encoding

    @property
    def writable(self) -> bool:
        return bool(self._words.flags.writeable)

    # ------------------------------------------------------------------ hashes

    def insert_hashes(self, hashes: np.ndarray) -> None:
        """Insert 64-bit hashes (anything convertible to a ``uint64`` array)."""
        self._require_writable()
        if self._strategy is Strategy.SPEC:
            kernels.insert_hashes(self._words, _as_u64(hashes))
        else:
            kernels.insert_hashes_masked(self._words, _as_u64(hashes))

    def check_hashes(self, hashes: np.ndarray) -> np.ndarray:
        """``bool`` array: may the filter contain each hash? (False = definitely absent)."""
        h = _as_u64(hashes)
        out = np.empty(h.shape[0], dtype=np.bool_)
        if self._strategy is Strategy.SPEC:
            kernels.check_hashes(self._words, h, out)
        else:
            kernels.check_hashes_masked(self._words, h, out)
        return out

    # ------------------------------------------------------------------ values

    def insert(
        self, values: Any, *, type: Any = None, physical: PhysicalSpec | None = None
    ) -> None:
        """Insert values: an Arrow array, numpy array, sequence or scalar. Nulls are skipped.

        ``type`` (an Arrow type) says how to read Python values; ``physical`` overrides
        the Parquet physical encoding (e.g. INT96 timestamps, FLBA(16) decimals).
        """
        self._require_writable()
        for plain, _valid in to_plain_columns(values, type, physical, self._encoding):
            self._insert_plain(plain)

    def check(
        self, values: Any, *, type: Any = None, physical: PhysicalSpec | None = None
    ) -> np.ndarray:
        """``bool`` array, one per value: may the filter contain it? Nulls give False."""
        parts = []
        for plain, valid in to_plain_columns(values, type, physical, self._encoding):
            found = self._check_plain(plain)
            if valid is not None:
                full = np.zeros(valid.shape[0], dtype=np.bool_)
                full[valid] = found
                found = full
            parts.append(found)
        if not parts:
            return np.zeros(0, dtype=np.bool_)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def __contains__(self, value: Any) -> bool:
        return bool(self.check(value)[0])

    def _insert_plain(self, plain: Words | Rows | VarBytes) -> None:
        if self._strategy is not Strategy.SPEC:  # hash, then insert by the draft's rule
            kernels.insert_hashes_masked(self._words, hash_plain(plain, self.hash))
            return
        code = self.hash.code
        if isinstance(plain, Words):
            kernels.insert_words(self._words, plain.values)
        elif isinstance(plain, Rows):
            kernels.insert_rows(self._words, plain.data, plain.width, plain.count, code)
        else:
            kernels.insert_var(self._words, plain.offsets, plain.data, code)

    def _check_plain(self, plain: Words | Rows | VarBytes) -> np.ndarray:
        if self._strategy is not Strategy.SPEC:
            return self.check_hashes(hash_plain(plain, self.hash))
        code = self.hash.code
        out = np.empty(len(plain), dtype=np.bool_)
        if isinstance(plain, Words):
            kernels.check_words(self._words, plain.values, out)
        elif isinstance(plain, Rows):
            kernels.check_rows(self._words, plain.data, plain.width, plain.count, code, out)
        else:
            kernels.check_var(self._words, plain.offsets, plain.data, code, out)
        return out

    # ------------------------------------------------------------------ combining

    def union(self, other: Sbbf) -> Sbbf:
        """A new filter holding the values of both (bitwise OR of equal-size filters)."""
        self._require_compatible(other)
        if other.num_bytes != self.num_bytes:
            raise IncompatibleFiltersError(
                f"cannot union a {self.num_bytes} B filter with a {other.num_bytes} B one: "
                "fold the larger one first (fold(k) halves the size k times)"
            )
        out = self.copy()
        np.bitwise_or(out._words, other._words, out=out._words)
        return out

    def __or__(self, other: Sbbf) -> Sbbf:
        return self.union(other)

    def fold(self, k: int = 1) -> Sbbf:
        """A filter ``2**k`` times smaller: block ``i`` = OR of blocks ``i*2**k .. +2**k-1``.

        Bit-identical to building the smaller filter from the same values. A draft filter
        folds by its own rule instead: block ``i`` = OR of blocks ``i``, ``i + n``,
        ``i + 2n``... (``n`` blocks after folding).
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise InvalidParameterError(f"fold count must be an int >= 0, got {k!r}")
        group = 1 << k
        if self.num_blocks % group:
            raise InvalidParameterError(
                f"cannot fold {self.num_blocks} blocks {k} times: the block count must be "
                f"a multiple of {group} (this filter can fold at most "
                f"{_trailing_zeros(self.num_blocks)} times)"
            )
        folded = self._strategy.fold_blocks(self._words.reshape(-1, 8), group)
        return Sbbf.from_bytes(folded, copy=True, strategy=self._strategy, encoding=self._encoding)

    def folds_for_fpp(self, target_fpp: float, policy: sizing.SizingPolicy = "parquet") -> int:
        """How many folds keep the estimated FPP at or below ``target_fpp``.

        ``policy="parquet"``: the rule of arrow-rs and Arrow C++ (``fold_to_target_fpp``),
        so that a filter built at a large size and folded matches theirs bit for bit: the
        fill after ``k`` folds is estimated as ``1 - (1 - fill) ** (2**k)`` and the FPP as
        ``fill ** 8``. ``policy="putze"``: Putze's exact FPP of the folded size for the
        distinct count estimated from this filter's fill (as :func:`.sizing.num_bytes_for`
        sizes). Either way an empty filter folds down to one block.
        """
        if not (0.0 < target_fpp < 1.0):
            raise InvalidParameterError(
                f"target fpp must be strictly between 0 and 1, got {target_fpp!r}"
            )
        if policy not in sizing.POLICIES:
            raise InvalidParameterError(
                f"unknown sizing policy {policy!r}: use one of {', '.join(sizing.POLICIES)}"
            )
        n = self.num_blocks
        if n < 2:
            return 0
        max_folds = _trailing_zeros(n)
        fill = self.fill_ratio()
        if fill == 0.0:
            return max_folds
        ndv = sizing.ndv_from_fill(fill, self.num_bytes)

        def fits(k: int) -> bool:
            if policy == "parquet":
                return sizing.fpp_after_folds(fill, k) <= target_fpp
            return sizing.putze_fpp(ndv, self.num_bytes >> k) <= target_fpp

        folds = 0
        while folds < max_folds and fits(folds + 1):
            folds += 1
        return folds

    def fold_to_fpp(self, target_fpp: float, policy: sizing.SizingPolicy = "parquet") -> Sbbf:
        """The smallest fold of this filter whose estimated FPP stays <= ``target_fpp``."""
        return self.fold(self.folds_for_fpp(target_fpp, policy))

    # ------------------------------------------------------------------ statistics

    def popcount(self) -> int:
        """Number of set bits."""
        return int(np.bitwise_count(self._words).sum(dtype=np.int64))

    def fill_ratio(self) -> float:
        """Fraction of bits set, 0.0 .. 1.0."""
        return self.popcount() / (self.num_bytes * 8)

    def estimated_ndv(self) -> float:
        """Distinct values most likely inserted, estimated from the fill."""
        return sizing.ndv_from_fill(self.fill_ratio(), self.num_bytes)

    def predicted_fpp(self, ndv: float | None = None) -> float:
        """Expected false-positive rate for ``ndv`` values (default: estimated from fill).

        Putze's exact SBBF formula, not ``fill ** 8``, which is too optimistic.
        """
        n = self.estimated_ndv() if ndv is None else ndv
        return 1.0 if math.isinf(n) else sizing.putze_fpp(n, self.num_bytes)

    # ------------------------------------------------------------------ dunder

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sbbf):
            return NotImplemented
        return (
            self._strategy is other._strategy
            and self._encoding is other._encoding
            and self.num_bytes == other.num_bytes
            and bool(np.array_equal(self._words, other._words))
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __len__(self) -> int:
        return self.num_bytes

    def __repr__(self) -> str:
        extra = "" if self._strategy is Strategy.SPEC else f", strategy={self._strategy.value!r}"
        if self._encoding is not Encoding.PARQUET:
            extra += f", encoding={self._encoding.value!r}"
        return f"Sbbf(num_bytes={self.num_bytes}, fill={self.fill_ratio():.4f}{extra})"

    # ------------------------------------------------------------------ helpers

    def _require_writable(self) -> None:
        if not self._words.flags.writeable:
            raise ReadOnlyFilterError(
                "this filter views a read-only buffer; use Sbbf.from_bytes(..., copy=True) "
                "or .copy() to get a writable filter"
            )

    def _require_compatible(self, other: Sbbf) -> None:
        if not isinstance(other, Sbbf):
            raise IncompatibleFiltersError(f"cannot combine an Sbbf with {type(other).__name__}")
        if other._strategy is not self._strategy or other._encoding is not self._encoding:
            raise IncompatibleFiltersError(
                f"cannot combine filters built with {self._describe()} and {other._describe()}"
            )

    def _describe(self) -> str:
        return (
            f"strategy={self._strategy.value} (hash={self.hash.value})/"
            f"encoding={self._encoding.value}"
        )


def build_filter(
    hashes: np.ndarray, fpp: float, policy: sizing.SizingPolicy = "parquet"
) -> tuple[Sbbf, int]:
    """A filter sized for the exact distinct count of ``hashes`` at ``fpp``, holding them.

    Returns the filter and that count. No hashes give the smallest filter, 32 B. Used for
    Parquet column chunks (``add_bloom_filters``) and zone index file filters.
    """
    # One pass over a hash set counts the distinct hashes (a sort costs 5-10x more); every
    # hash is then inserted, duplicates too: inserting one again sets no new bit, so the
    # filter is the same whatever the order or the repeats.
    hashes = _as_u64(hashes)
    ndv = int(kernels.count_distinct(hashes, odd_multiplier()))
    f = Sbbf(sizing.num_bytes_for(ndv, fpp, policy))
    f.insert_hashes(hashes)
    return f, ndv


def odd_multiplier() -> np.uint64:
    """A random odd 64-bit multiplier for the hash sets that count distinct values
    (:func:`build_filter`, the zone index's zones)."""
    return np.uint64(secrets.randbits(64) | 1)


def build_folded(
    hashes: np.ndarray, fpp: float, max_ndv: int, policy: sizing.SizingPolicy = "parquet"
) -> tuple[Sbbf, int, int]:
    """A filter for ``hashes`` without counting them: built at the size for ``max_ndv``
    distinct values at ``fpp``, then folded to ``fpp`` (:meth:`Sbbf.fold_to_fpp`).

    What arrow-rs and Arrow C++ write (they start from the configured NDV, by default
    the row group size, and fold), byte for byte, with ``policy="parquet"``. Returns the
    filter, the distinct count estimated from the fill before folding, and the size
    built at.
    """
    start = sizing.num_bytes_for(max_ndv, fpp, policy)
    f = Sbbf(start)
    f.insert_hashes(hashes)
    estimate = f.estimated_ndv()
    ndv = round(estimate) if math.isfinite(estimate) else int(hashes.size)
    return f.fold_to_fpp(fpp, policy), ndv, start


def _trailing_zeros(n: int) -> int:
    return (n & -n).bit_length() - 1


def _as_u64(hashes: Any) -> np.ndarray:
    arr = np.asarray(hashes)
    if arr.dtype == np.uint64 and arr.ndim == 1:
        return np.ascontiguousarray(arr)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise InvalidParameterError(
            f"hashes must be a 1-D array of 64-bit integers, got {arr.dtype} with "
            f"{arr.ndim} dimensions"
        )
    if arr.dtype.kind == "i" and arr.dtype.itemsize == 8:
        return np.ascontiguousarray(arr).view(np.uint64)
    return arr.astype(np.uint64)
