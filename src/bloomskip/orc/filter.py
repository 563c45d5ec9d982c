"""The Bloom filter of ORC's row index, bit-identical with ORC Java and ORC C++.

ORC writes one filter per row group (``BLOOM_FILTER_UTF8`` stream, one protobuf
``BloomFilter`` per row group: ``num_hash_functions`` and ``utf8bitset``, the ``m / 64``
words as little-endian longs). It is a classic Bloom filter, not a blocked one::

    sizing  n = max(expected_entries, 1)          writers pass the row index stride
            nb = (int) (-n * ln(fpp) / ln(2)**2)
            m  = nb + (64 - nb % 64)               always adds 1..64 bits
            k  = max(1, Math.round(m / n * ln(2)))
    add(v)  h = base hash of v (Murmur3 hash64 for bytes, Thomas Wang for longs)
            for i in 1..k: set bit ((int)(h) + i * (int)(h >>> 32), ~ if negative) % m
    test(v) all k bits set

Values reach the filter as ORC's writers feed them (:meth:`OrcBloomFilter.add_values`,
conversions in :mod:`.feeds`); the hashing runs in :mod:`.kernels`. This module owns the
filter, its sizing and the checks on a stored filter (:meth:`OrcBloomFilter.from_index`).

>>> f = OrcBloomFilter(10_000, 0.05)            # ORC's sizing: 62,400 bits, k = 4
>>> f.add_longs([1, 2, 3])
>>> f.test_longs([2, 42]).tolist()
[True, False]
>>> g = OrcBloomFilter.from_index(4, utf8bitset=f.to_utf8bitset())
>>> g == f
True
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Unpack

import numpy as np
import pyarrow as pa

from bloomskip._lazy import lazy
from bloomskip.errors import InvalidBitsetError, InvalidParameterError, ReadOnlyFilterError
from bloomskip.orc.feeds import (
    Conversion,
    Feed,
    double_feeds,
    feeds,
    long_feeds,
    scatter,
    var_feeds,
)
from bloomskip.sbbf.memory import byte_view, word_view

kernels = lazy("bloomskip.orc.kernels")

#: Java keeps ``numBits`` in an ``int``: the largest multiple of 64 below 2**31.
MAX_NUM_BITS = 2**31 - 64
#: Largest ``num_hash_functions`` accepted. Java and C++ accept any ``int`` (and a
#: count <= 0 makes every test true); their writers give k <= 64 for every fpp above
#: about 5e-20, and a larger k in a file is a sign of a foreign layout (apache/orc's
#: ``over1k_bloom.orc`` parses as k = 10000).
MAX_HASH_FUNCTIONS = 64

_LN2 = math.log(2)


# --------------------------------------------------------------------------- sizing


def java_round(x: float) -> int:
    """Java's ``Math.round(double)`` for finite ``x >= 0``: round half up, exactly.

    ``math.floor(x + 0.5)`` is wrong for 0.49999999999999994 (and Python's ``round``
    rounds ties to even).
    """
    r = math.floor(x)
    return r + 1 if x - r >= 0.5 else r


def optimal_num_bits(expected_entries: int, fpp: float) -> int:
    """ORC's ``m`` for ``expected_entries`` values at ``fpp`` (before the size check).

    ``nb = (int)(-n * ln(fpp) / (ln2 * ln2))`` with Java's saturating double-to-int cast,
    then ``nb + (64 - nb % 64)``. The result can exceed :data:`MAX_NUM_BITS`, where
    Java's ``int`` overflows and its constructor fails.
    """
    n = max(expected_entries, 1)
    nb = min(int(float(-n) * math.log(fpp) / (_LN2 * _LN2)), 2**31 - 1)
    return nb + (64 - nb % 64)


def optimal_num_hash_functions(expected_entries: int, num_bits: int) -> int:
    """ORC's ``k = max(1, (int) Math.round((double) m / n * ln2))``."""
    n = max(expected_entries, 1)
    return max(1, java_round(float(num_bits) / float(n) * _LN2))


# --------------------------------------------------------------------------- the filter


class OrcBloomFilter:
    """An ORC Bloom filter: ``m`` bits in 64-bit words, ``k`` probes per value.

    >>> f = OrcBloomFilter(10_000, 0.01)            # ORC >= 1.9 default: m = 95,872, k = 7
    >>> f.num_bits, f.num_hash_functions
    (95872, 7)
    >>> f.add_strings(["alice", "bob"])
    >>> f.test_strings(["alice", "carol"]).tolist()
    [True, False]

    Build one as a writer does - ``OrcBloomFilter(row_index_stride, fpp)``, then
    :meth:`add_values` with a column's values - or read one from a file with
    :meth:`from_index`, which never recomputes ``m`` and ``k``: ``m`` is 64 times the
    number of stored words, ``k`` is the stored ``num_hash_functions``.

    Typed add/test methods take the base types of ORC's ``BloomFilter`` class
    (``addLong``, ``addDouble``, ``addBytes``, ``addString``); :meth:`add_values` /
    :meth:`test_values` take an Arrow array and the ORC column kind and convert each value
    the way ORC's writer does before hashing it. Tests return a ``bool`` array: ``False``
    means the value is definitely not in the filter. Nulls are never added, and test
    ``False``.
    """

    __slots__ = ("_k", "_words")

    def __init__(self, expected_entries: int, fpp: float) -> None:
        if isinstance(expected_entries, bool) or not isinstance(expected_entries, int | np.integer):
            raise InvalidParameterError(
                f"expected_entries must be an int, got {type(expected_entries).__name__}"
            )
        expected_entries = int(expected_entries)
        if expected_entries < 0:
            raise InvalidParameterError(
                f"expected_entries must be >= 0 (0 is taken as 1, as ORC Java does), "
                f"got {expected_entries}"
            )
        if expected_entries > 2**63 - 1:
            raise InvalidParameterError("expected_entries must fit in a Java long")
        if isinstance(fpp, bool) or not isinstance(fpp, int | float) or not (0.0 < fpp < 1.0):
            raise InvalidParameterError(
                f"fpp must be a number strictly between 0 and 1, got {fpp!r}"
            )
        fpp = float(fpp)
        m = optimal_num_bits(expected_entries, fpp)
        if m > MAX_NUM_BITS:
            raise InvalidParameterError(
                f"{expected_entries} entries at fpp {fpp} need {m} bits; ORC keeps the bit "
                f"count in a Java int, so at most {MAX_NUM_BITS} bits (256 MiB) are possible"
            )
        k = optimal_num_hash_functions(expected_entries, m)
        if k > MAX_HASH_FUNCTIONS:
            raise InvalidParameterError(
                f"{expected_entries} entries at fpp {fpp} give k = {k} hash functions; "
                f"bloomskip accepts at most {MAX_HASH_FUNCTIONS} (raise fpp: every fpp "
                "above about 5e-20 gives k <= 64)"
            )
        self._words = np.zeros(m // 64, dtype=np.uint64)
        self._k = k

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_index(
        cls,
        num_hash_functions: int,
        bitset_words: Any = None,
        utf8bitset: Any = None,
        *,
        copy: bool = True,
    ) -> OrcBloomFilter:
        """The filter of one ``BloomFilter`` message of a row group's bloom filter index.

        Pass exactly one of:

        * ``utf8bitset`` - the bytes of the ``utf8bitset`` field (BLOOM_FILTER_UTF8
          streams): the words as little-endian longs. Its length must be a non-zero
          multiple of 8. With ``copy=False`` the filter views the buffer (a read-only
          buffer then gives a read-only filter).
        * ``bitset_words`` - the legacy ``repeated fixed64 bitset`` field (BLOOM_FILTER
          streams): a sequence or numpy array of the words (signed or unsigned 64-bit
          ints), or their bytes as 8-byte little-endian words.

        ``num_hash_functions`` must be 1..:data:`MAX_HASH_FUNCTIONS` and the filter at
        most :data:`MAX_NUM_BITS` bits; anything else raises
        :class:`~bloomskip.errors.InvalidParameterError` /
        :class:`~bloomskip.errors.InvalidBitsetError` (a reader treats that as "may
        match"). ORC Java accepts any ``int`` k and ignores a partial last word; ORC C++
        rejects a ``utf8bitset`` that is not whole words.
        """
        k = _validate_k(num_hash_functions)
        if (bitset_words is None) == (utf8bitset is None):
            raise InvalidParameterError(
                "pass exactly one of bitset_words (legacy BLOOM_FILTER) and utf8bitset "
                "(BLOOM_FILTER_UTF8)"
            )
        if utf8bitset is not None:
            words = _words_from_bytes(utf8bitset, "utf8bitset", copy)
        else:
            words = _words_from_longs(bitset_words, copy)
        self = cls.__new__(cls)
        self._words = words
        self._k = k
        return self

    def to_utf8bitset(self) -> bytes:
        """The ``utf8bitset`` field: every word as 8 little-endian bytes."""
        return self._words.tobytes()

    def to_bitset_words(self) -> np.ndarray:
        """The legacy ``bitset`` field: the words as a ``uint64`` array (a copy).

        ``.view(np.int64)`` gives the signed longs Java's ``getBitSet()`` returns.
        """
        return self._words.copy()

    def copy(self) -> OrcBloomFilter:
        return OrcBloomFilter.from_index(self._k, utf8bitset=self._words, copy=True)

    # ------------------------------------------------------------------ properties

    @property
    def num_bits(self) -> int:
        """``m``: 64 times the number of words."""
        return int(self._words.shape[0]) * 64

    @property
    def num_hash_functions(self) -> int:
        """``k``: bits probed per value."""
        return self._k

    @property
    def num_bytes(self) -> int:
        return int(self._words.shape[0]) * 8

    @property
    def words(self) -> np.ndarray:
        """The ``uint64`` words (a view, not a copy): bit ``p`` is ``words[p >> 6] >> (p & 63)``."""
        return self._words

    @property
    def writable(self) -> bool:
        return bool(self._words.flags.writeable)

    def popcount(self) -> int:
        """Number of set bits."""
        return int(np.bitwise_count(self._words).sum(dtype=np.int64))

    def fill_ratio(self) -> float:
        """Fraction of bits set, 0.0 .. 1.0."""
        return self.popcount() / self.num_bits

    # ------------------------------------------------------------------ base hashes

    def add_hashes(self, hashes: Any) -> None:
        """Set the bits of 64-bit base hashes (see :func:`base_hashes`)."""
        self._require_writable()
        kernels.insert_hashes(self._words, self._k, _as_u64(hashes))

    def test_hashes(self, hashes: Any) -> np.ndarray:
        h = _as_u64(hashes)
        out = np.empty(h.shape[0], dtype=np.bool_)
        kernels.check_hashes(self._words, self._k, h, out)
        return out

    def positions(self, hash64: int) -> list[int]:
        """The ``k`` bit positions that base hash ``hash64`` probes, in probe order."""
        h = _as_u64([hash64])
        out = np.empty((1, self._k), dtype=np.uint32)
        kernels.probe_positions(h, self._k, self.num_bits, out)
        return out[0].tolist()

    # ------------------------------------------------------------------ typed values

    def add_longs(self, values: Any) -> None:
        """``addLong`` of each value (int64; any integer array or sequence of ints)."""
        self._add(long_feeds(values))

    def test_longs(self, values: Any) -> np.ndarray:
        return self._test(long_feeds(values))

    def add_doubles(self, values: Any) -> None:
        """``addDouble`` of each value: ``addLong(Double.doubleToLongBits(v))``.

        Every NaN is hashed as Java's canonical NaN (``0x7ff8000000000000``); ORC C++
        hashes a NaN's raw bits (use ``add_longs(a.view(np.int64))`` for those).
        """
        self._add(double_feeds(values))

    def test_doubles(self, values: Any) -> np.ndarray:
        return self._test(double_feeds(values))

    def add_bytes(self, values: Any) -> None:
        """``addBytes`` of each value: an Arrow binary/string array or a sequence of bytes."""
        self._add(var_feeds(values, pa.large_binary()))

    def test_bytes(self, values: Any) -> np.ndarray:
        return self._test(var_feeds(values, pa.large_binary()))

    def add_strings(self, values: Any) -> None:
        """``BloomFilterUtf8.addString``: the UTF-8 bytes of each string."""
        self._add(var_feeds(values, pa.large_string()))

    def test_strings(self, values: Any) -> np.ndarray:
        return self._test(var_feeds(values, pa.large_string()))

    # ------------------------------------------------------------------ column values

    def add_values(self, values: Any, orc_kind: Any, **conversion: Unpack[Conversion]) -> None:
        """Add a column's values as ORC's writer feeds them to the filter.

        ``values`` is an Arrow array (or chunked array, or anything ``pyarrow.array``
        takes) and ``orc_kind`` the ORC column kind (:class:`~bloomskip.orc.types.OrcType`
        / :class:`~bloomskip.orc.types.OrcKind`, a name such as ``"bigint"``,
        ``"varchar(10)"`` or ``"decimal(12,2)"``, or a ``Type.Kind`` number). Nulls are
        skipped. The keywords ``max_length``, ``writer_timezone`` and ``writer``
        (:class:`~bloomskip.orc.feeds.Conversion`) choose the conversion; see
        :func:`~bloomskip.orc.feeds.base_hashes` for each kind.
        """
        self._add(feeds(values, orc_kind, **conversion))

    def test_values(
        self, values: Any, orc_kind: Any, **conversion: Unpack[Conversion]
    ) -> np.ndarray:
        """``bool`` per value: may a column of ``orc_kind`` holding it have this filter?

        Values are converted exactly as :meth:`add_values` converts them. Kinds whose
        writer adds nothing (BOOLEAN from ORC Java, STRUCT) test ``True``: the filter
        says nothing about them. Nulls test ``False``.
        """
        return self._test(feeds(values, orc_kind, **conversion))

    # ------------------------------------------------------------------ dunder

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OrcBloomFilter):
            return NotImplemented
        return self._k == other._k and bool(np.array_equal(self._words, other._words))

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return (
            f"OrcBloomFilter(num_bits={self.num_bits}, num_hash_functions={self._k}, "
            f"fill={self.fill_ratio():.4f})"
        )

    # ------------------------------------------------------------------ helpers

    def _require_writable(self) -> None:
        if not self._words.flags.writeable:
            raise ReadOnlyFilterError(
                "this filter views a read-only buffer; use OrcBloomFilter.from_index(..., "
                "copy=True) or .copy() to get a writable filter"
            )

    def _add(self, parts: Iterator[tuple[Feed, np.ndarray | None]]) -> None:
        self._require_writable()
        for feed, _ in parts:
            feed.insert(self._words, self._k)

    def _test(self, parts: Iterator[tuple[Feed, np.ndarray | None]]) -> np.ndarray:
        found = [scatter(feed.check(self._words, self._k), valid) for feed, valid in parts]
        if not found:
            return np.zeros(0, dtype=np.bool_)
        return found[0] if len(found) == 1 else np.concatenate(found)


def _validate_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise InvalidParameterError(f"num_hash_functions must be an int, got {k!r}")
    k = int(k)
    if not 1 <= k <= MAX_HASH_FUNCTIONS:
        raise InvalidParameterError(
            f"num_hash_functions {k} is outside 1..{MAX_HASH_FUNCTIONS}: ORC writers give "
            "k <= 64 for any sane fpp; a larger (or zero) k is not a filter to trust"
        )
    return k


def _check_word_count(n_words: int, what: str) -> None:
    if n_words == 0:
        raise InvalidBitsetError(f"{what} is empty: an ORC filter has at least one 64-bit word")
    if n_words * 64 > MAX_NUM_BITS:
        raise InvalidBitsetError(
            f"{what} of {n_words} words is larger than ORC's maximum of "
            f"{MAX_NUM_BITS // 64} words ({MAX_NUM_BITS} bits, the Java int limit)"
        )


def _words_from_bytes(buf: Any, what: str, copy: bool) -> np.ndarray:
    if isinstance(buf, np.ndarray) and buf.dtype != np.uint8:
        buf = np.ascontiguousarray(buf).view(np.uint8).reshape(-1)
    raw = byte_view(buf, what)
    if raw.shape[0] % 8:
        raise InvalidBitsetError(
            f"{what} of {raw.shape[0]} bytes is not whole 64-bit words (a multiple of 8 bytes)"
        )
    _check_word_count(raw.shape[0] // 8, what)
    return word_view(raw, np.uint64, copy)


def _words_from_longs(words: Any, copy: bool) -> np.ndarray:
    if isinstance(words, bytes | bytearray | memoryview):
        return _words_from_bytes(words, "bitset", copy=True)
    arr = _integer_array(words)
    if arr.dtype == object and arr.ndim == 1:
        arr = _object_words(arr, "bitset words")
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise InvalidBitsetError(
            f"bitset words must be a 1-D sequence of 64-bit integers, got {arr.dtype} with "
            f"{arr.ndim} dimensions"
        )
    _check_word_count(arr.shape[0], "bitset")
    if arr.dtype.itemsize != 8:
        arr = arr.astype(np.int64 if arr.dtype.kind == "i" else np.uint64)
    return np.array(arr.view(np.uint64), copy=True)


def _object_words(arr: np.ndarray, what: str) -> np.ndarray:
    """Python ints (signed or unsigned 64-bit) as uint64 words; anything else is an error."""
    out = np.empty(arr.shape[0], dtype=np.uint64)
    for i, w in enumerate(arr.tolist()):
        if isinstance(w, bool) or not isinstance(w, int) or not -(2**63) <= w < 2**64:
            raise InvalidBitsetError(f"{what} must be 64-bit integers, got {w!r}")
        out[i] = w & 0xFFFFFFFFFFFFFFFF
    return out


def _integer_array(values: Any) -> np.ndarray:
    """An ndarray as is; Python ints as an object array (numpy would turn a mix of
    ints above 2**63 and below 0 into float64, losing bits)."""
    if isinstance(values, np.ndarray):
        return values
    if isinstance(values, int | np.integer):
        values = [values]
    try:
        return np.array(list(values), dtype=object)
    except TypeError:
        return np.asarray(values)


def _as_u64(hashes: Any) -> np.ndarray:
    arr = _integer_array(hashes)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.dtype == object and arr.ndim == 1:
        try:
            arr = _object_words(arr, "hashes")
        except InvalidBitsetError as e:
            raise InvalidParameterError(str(e)) from None
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise InvalidParameterError(
            f"hashes must be a 1-D array of 64-bit integers, got {arr.dtype} with "
            f"{arr.ndim} dimensions"
        )
    if arr.dtype.itemsize == 8 and arr.dtype.kind in "iu":
        return np.ascontiguousarray(arr).view(np.uint64)
    return arr.astype(np.int64).view(np.uint64)
