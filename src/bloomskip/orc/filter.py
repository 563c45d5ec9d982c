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

Values reach the filter as ORC's writers feed them (:meth:`OrcBloomFilter.add_values`):
every integer width and dates (days) as a long, FLOAT promoted to double, doubles by
their bits, decimals as their canonical text ("1.5", "-0.05", "100"), timestamps as
milliseconds of the wall clock in the writer's time zone, strings as UTF-8 (VARCHAR
truncated, CHAR padded), binary as is. The hashing runs in :mod:`.kernels`.

>>> f = OrcBloomFilter(10_000, 0.05)            # ORC's sizing: 62,400 bits, k = 4
>>> f.add_longs([1, 2, 3])
>>> f.test_longs([2, 42]).tolist()
[True, False]
>>> g = OrcBloomFilter.from_index(4, utf8bitset=f.to_utf8bitset())
>>> g == f
True
"""

from __future__ import annotations

import datetime as _dt
import functools
import math
import re
import zoneinfo
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip._lazy import lazy
from bloomskip.errors import (
    InvalidBitsetError,
    InvalidParameterError,
    ReadOnlyFilterError,
    UnsupportedTypeError,
)
from bloomskip.hashing.arrow import as_arrow, is_var_binary, unview, var_bytes

kernels = lazy("bloomskip.orc.kernels")

#: Java keeps ``numBits`` in an ``int``: the largest multiple of 64 below 2**31.
MAX_NUM_BITS = 2**31 - 64
#: Largest ``num_hash_functions`` accepted. Java and C++ accept any ``int`` (and a
#: count <= 0 makes every test true); their writers give k <= 64 for every fpp above
#: about 5e-20, and a larger k in a file is a sign of a foreign layout (apache/orc's
#: ``over1k_bloom.orc`` parses as k = 10000).
MAX_HASH_FUNCTIONS = 64

_LN2 = math.log(2)
_MS_PER_DAY = 86_400_000
_MS_PER_UNIT = {"ms": 1, "us": 1_000, "ns": 1_000_000}
_UTC_NAMES = frozenset({"UTC", "GMT", "Etc/UTC", "Etc/GMT", "UCT", "Zulu", "Z", "+00:00"})
_CUSTOM_ZONE_RE = re.compile(r"^(?:GMT|UTC)?([+-])(\d{1,2})(?::?(\d{2}))?$")
_TABLE_START = -5_364_662_400  # 1800-01-01, in seconds
_TABLE_END = 7_258_118_400  # 2200-01-01
_DECIMAL_RE = re.compile(r"^decimal\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?$")
_LENGTH_RE = re.compile(r"^(char|varchar)\s*\(\s*(\d+)\s*\)$")


class OrcKind(StrEnum):
    """An ORC column kind (``Type.Kind`` of ``orc_proto.proto``, lower case)."""

    BOOLEAN = "boolean"
    BYTE = "byte"
    SHORT = "short"
    INT = "int"
    LONG = "long"
    FLOAT = "float"
    DOUBLE = "double"
    STRING = "string"
    BINARY = "binary"
    TIMESTAMP = "timestamp"
    LIST = "list"
    MAP = "map"
    STRUCT = "struct"
    UNION = "union"
    DECIMAL = "decimal"
    DATE = "date"
    VARCHAR = "varchar"
    CHAR = "char"
    TIMESTAMP_INSTANT = "timestamp_instant"

    @property
    def proto_id(self) -> int:
        """The ``Type.Kind`` number in ORC's protobuf (BOOLEAN = 0 ... TIMESTAMP_INSTANT = 18)."""
        return _KINDS.index(self)


_KINDS = list(OrcKind)
_ALIASES = {
    "tinyint": OrcKind.BYTE,
    "smallint": OrcKind.SHORT,
    "integer": OrcKind.INT,
    "bigint": OrcKind.LONG,
    "array": OrcKind.LIST,
    "uniontype": OrcKind.UNION,
    "timestamp with local time zone": OrcKind.TIMESTAMP_INSTANT,
}


class Writer(StrEnum):
    """Whose writer's quirks to reproduce (they differ for a few values only)."""

    JAVA = "java"  # ORC Java: Hive, Spark, orc-tools
    CPP = "c++"  # ORC C++ given normalized timestamps (seconds floored, nanos >= 0): pyorc
    PYARROW = "pyarrow"  # ORC C++ behind Arrow's adapter, which truncates timestamps

    @classmethod
    def parse(cls, value: str | Writer) -> Writer:
        try:
            return cls(value.lower() if isinstance(value, str) else value)
        except ValueError:
            raise InvalidParameterError(
                f"unknown ORC writer {value!r}: use 'java', 'c++' or 'pyarrow'"
            ) from None


@dataclass(frozen=True)
class OrcType:
    """An ORC column kind with the length CHAR/VARCHAR need.

    :meth:`parse` reads ORC's type names (``"bigint"``, ``"varchar(10)"``,
    ``"char(4)"``, ``"decimal(10,2)"``, ``"timestamp with local time zone"``), the
    :class:`OrcKind` names and the protobuf ``Type.Kind`` numbers.
    """

    kind: OrcKind
    max_length: int | None = None

    @classmethod
    def parse(cls, value: Any, max_length: int | None = None) -> OrcType:
        if isinstance(value, OrcType):
            return value if max_length is None else cls(value.kind, _length(max_length))
        kind: OrcKind | None = None
        if isinstance(value, OrcKind):
            kind = value
        elif isinstance(value, int) and not isinstance(value, bool):
            if 0 <= value < len(_KINDS):
                kind = _KINDS[value]
        elif isinstance(value, str):
            name = " ".join(value.strip().lower().split())
            m = _LENGTH_RE.match(name)
            if m:
                if max_length is not None and int(m.group(2)) != max_length:
                    raise InvalidParameterError(f"{value!r} and max_length={max_length} disagree")
                kind, max_length = OrcKind(m.group(1)), int(m.group(2))
            elif _DECIMAL_RE.match(name):
                kind = OrcKind.DECIMAL  # the text of a decimal does not depend on (p, s)
            else:
                kind = _ALIASES.get(name) or (
                    OrcKind(name) if name in OrcKind._value2member_map_ else None
                )
        if kind is None:
            raise UnsupportedTypeError(
                f"unknown ORC column kind {value!r}: use one of "
                f"{', '.join(k.value for k in OrcKind)}, an ORC type name such as "
                "'bigint' or 'varchar(10)', or a Type.Kind number 0..18"
            )
        if kind in (OrcKind.CHAR, OrcKind.VARCHAR):
            if max_length is None:
                raise InvalidParameterError(
                    f"{kind.value.upper()} needs its maximum length: pass max_length= or "
                    f"'{kind.value}(n)'"
                )
            return cls(kind, _length(max_length))
        return cls(kind)


def _length(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not (1 <= n <= 2**31 - 1):
        raise InvalidParameterError(
            f"CHAR/VARCHAR maximum length must be an int from 1 to 2**31-1, got {n!r}"
        )
    return n


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
        self._require_writable()
        for longs, _ in _long_chunks(values):
            kernels.insert_longs(self._words, self._k, longs)

    def test_longs(self, values: Any) -> np.ndarray:
        return self._test(_long_chunks(values), kernels.check_longs)

    def add_doubles(self, values: Any) -> None:
        """``addDouble`` of each value: ``addLong(Double.doubleToLongBits(v))``.

        Every NaN is hashed as Java's canonical NaN (``0x7ff8000000000000``); ORC C++
        hashes a NaN's raw bits (use ``add_longs(a.view(np.int64))`` for those).
        """
        self._require_writable()
        for bits, _ in _double_chunks(values):
            kernels.insert_doubles(self._words, self._k, bits)

    def test_doubles(self, values: Any) -> np.ndarray:
        return self._test(_double_chunks(values), kernels.check_doubles)

    def add_bytes(self, values: Any) -> None:
        """``addBytes`` of each value: an Arrow binary/string array or a sequence of bytes."""
        self._require_writable()
        for (offsets, data), _ in _var_chunks(values, pa.large_binary()):
            kernels.insert_var(self._words, self._k, offsets, data, kernels.VAR_RAW, 0)

    def test_bytes(self, values: Any) -> np.ndarray:
        return self._test_var(_var_chunks(values, pa.large_binary()), kernels.VAR_RAW, 0)

    def add_strings(self, values: Any) -> None:
        """``BloomFilterUtf8.addString``: the UTF-8 bytes of each string."""
        self._require_writable()
        for (offsets, data), _ in _var_chunks(values, pa.large_string()):
            kernels.insert_var(self._words, self._k, offsets, data, kernels.VAR_RAW, 0)

    def test_strings(self, values: Any) -> np.ndarray:
        return self._test_var(_var_chunks(values, pa.large_string()), kernels.VAR_RAW, 0)

    # ------------------------------------------------------------------ column values

    def add_values(
        self,
        values: Any,
        orc_kind: Any,
        *,
        max_length: int | None = None,
        writer_timezone: Any = "UTC",
        writer: str | Writer = Writer.JAVA,
    ) -> None:
        """Add a column's values as ORC's writer feeds them to the filter.

        ``values`` is an Arrow array (or chunked array, or anything ``pyarrow.array``
        takes) and ``orc_kind`` the ORC column kind (:class:`OrcType` / :class:`OrcKind`,
        a name such as ``"bigint"``, ``"varchar(10)"`` or ``"decimal(12,2)"``, or a
        ``Type.Kind`` number). Nulls are skipped. See :func:`base_hashes` for each kind.
        """
        self._require_writable()
        for feed, _ in _feeds(values, orc_kind, max_length, writer_timezone, writer):
            feed.insert(self)

    def test_values(
        self,
        values: Any,
        orc_kind: Any,
        *,
        max_length: int | None = None,
        writer_timezone: Any = "UTC",
        writer: str | Writer = Writer.JAVA,
    ) -> np.ndarray:
        """``bool`` per value: may a column of ``orc_kind`` holding it have this filter?

        Values are converted exactly as :meth:`add_values` converts them. Kinds whose
        writer adds nothing (BOOLEAN from ORC Java, STRUCT) test ``True``: the filter
        says nothing about them. Nulls test ``False``.
        """
        parts = []
        for feed, valid in _feeds(values, orc_kind, max_length, writer_timezone, writer):
            found = feed.check(self)
            if valid is not None:
                full = np.zeros(valid.shape[0], dtype=np.bool_)
                full[valid] = found
                found = full
            parts.append(found)
        return _concat(parts)

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

    def _test(self, chunks: Iterator[tuple[np.ndarray, np.ndarray | None]], kernel) -> np.ndarray:
        parts = []
        for arr, valid in chunks:
            found = np.empty(arr.shape[0], dtype=np.bool_)
            kernel(self._words, self._k, arr, found)
            parts.append(_scatter(found, valid))
        return _concat(parts)

    def _test_var(self, chunks, mode: int, max_chars: int) -> np.ndarray:
        parts = []
        for (offsets, data), valid in chunks:
            found = np.empty(offsets.shape[0] - 1, dtype=np.bool_)
            kernels.check_var(self._words, self._k, offsets, data, mode, max_chars, found)
            parts.append(_scatter(found, valid))
        return _concat(parts)


# --------------------------------------------------------------------------- feeds


@dataclass(frozen=True)
class _Feed:
    """The non-null values of one chunk in the form the filter hashes."""

    form: str  # "long", "double", "var", "decimal", "none"
    values: Any = None  # int64 longs or double bits; var offsets; decimal words; or a count
    data: Any = None  # var: the bytes; decimal: words per value (2 or 4)
    mode: int = 0  # kernels.VAR_RAW: the constants are known before numba loads
    arg: int = 0  # VARCHAR/CHAR length, or the decimal scale

    def __len__(self) -> int:
        if self.form == "var":
            return int(self.values.shape[0] - 1)
        if self.form == "decimal":
            return int(self.values.shape[0] // self.data)
        if self.form == "none":
            return int(self.values)
        return int(self.values.shape[0])

    def hashes(self) -> np.ndarray:
        out = np.empty(len(self), dtype=np.int64)
        if self.form == "long":
            kernels.long_hashes(self.values, out)
        elif self.form == "double":
            kernels.double_hashes(self.values, out)
        elif self.form == "var":
            kernels.var_hashes(self.values, self.data, self.mode, self.arg, out.view(np.uint64))
        elif self.form == "decimal":
            kernels.decimal_hashes(self.values, self.data, self.arg, out.view(np.uint64))
        else:
            raise UnsupportedTypeError("this ORC column kind feeds nothing to its filter")
        return out

    def insert(self, f: OrcBloomFilter) -> None:
        w, k = f._words, f._k
        if self.form == "long":
            kernels.insert_longs(w, k, self.values)
        elif self.form == "double":
            kernels.insert_doubles(w, k, self.values)
        elif self.form == "var":
            kernels.insert_var(w, k, self.values, self.data, self.mode, self.arg)
        elif self.form == "decimal":
            kernels.insert_hashes(w, k, self.hashes())

    def check(self, f: OrcBloomFilter) -> np.ndarray:
        w, k = f._words, f._k
        out = np.empty(len(self), dtype=np.bool_)
        if self.form == "long":
            kernels.check_longs(w, k, self.values, out)
        elif self.form == "double":
            kernels.check_doubles(w, k, self.values, out)
        elif self.form == "var":
            kernels.check_var(w, k, self.values, self.data, self.mode, self.arg, out)
        elif self.form == "decimal":
            kernels.check_hashes(w, k, self.hashes(), out)
        else:
            out[:] = True
        return out


def base_hashes(
    values: Any,
    orc_kind: Any,
    *,
    max_length: int | None = None,
    writer_timezone: Any = "UTC",
    writer: str | Writer = Writer.JAVA,
) -> np.ndarray:
    """The 64-bit base hash (int64) of each non-null value of an ORC column, in order.

    This is what ORC's writer hands to ``addLong`` / ``addBytes`` after converting the
    value for its column kind; test many filters against one literal with
    ``f.test_hashes(base_hashes([lit], kind))``. Per kind:

    =========================  ==========================================================
    BYTE, SHORT, INT, LONG     the value as a long (``getLongHash``); Java's BYTE writer
                               casts to ``byte`` first, so wider inputs wrap to int8
    DATE                       days since 1970-01-01 (``date64`` inputs are floored)
    FLOAT                      the value rounded to float32, promoted to double, hashed by
                               its bits; for the C++ writers a float64 input is hashed
                               unrounded (ORC C++ hashes the double it is given)
    DOUBLE                     its bits (``doubleToLongBits``: NaNs canonical)
    STRING, BINARY             the raw bytes (UTF-8 for strings; Murmur3 ``hash64``)
    VARCHAR(n)                 the bytes of the first n characters
    CHAR(n)                    the first n characters, or the value padded with spaces to
                               n characters (``Utf8Utils``: characters are bytes that are
                               not UTF-8 continuation bytes)
    DECIMAL                    the canonical text: plain notation, trailing fractional
                               zeros and a bare point dropped ("1.5", "-0.05", "100")
    TIMESTAMP                  epoch milliseconds (floored) of the wall clock in
                               ``writer_timezone``: a time-zone-aware input is an instant
                               shown in that zone; a naive input already is the wall clock
    TIMESTAMP_INSTANT          epoch milliseconds (floored) of the instant (naive = UTC)
    LIST, MAP                  the number of elements, as a long
    UNION                      the tag (index of the child type), as a long
    BOOLEAN                    nothing (ORC Java); 0 or 1 as a long for the C++ writers
    STRUCT                     nothing
    =========================  ==========================================================

    ``writer`` picks whose quirks to reproduce: ``"java"`` (default: ORC Java hashes
    instants from -999 ms to -1 ms after the epoch 1000 ms late, ORC-763, and NaNs as
    the canonical NaN), ``"c++"`` (ORC C++ fed floored seconds, as pyorc does: floored
    milliseconds, raw NaN bits, FLOAT given as float64 hashed unrounded) or
    ``"pyarrow"`` (ORC C++ behind Arrow's adapter, which splits timestamps with C++
    division: negative values with sub-millisecond digits hash their milliseconds
    truncated toward zero, not floored). Kinds that feed nothing raise
    :class:`~bloomskip.errors.UnsupportedTypeError`.
    """
    parts = [
        feed.hashes()
        for feed, _ in _feeds(values, orc_kind, max_length, writer_timezone, writer)
        if len(feed)
    ]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def decimal_strings(values: Any) -> pa.Array:
    """The canonical ORC text of each decimal, as ORC hashes it (an Arrow ``large_string``).

    >>> import decimal
    >>> decimal_strings([decimal.Decimal("1.50"), decimal.Decimal("-0.050")]).to_pylist()
    ['1.5', '-0.05']
    """
    arr = as_arrow(values)
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    out = []
    for chunk in chunks:
        if pa.types.is_dictionary(chunk.type):
            chunk = chunk.dictionary_decode()
        chunk = _decimal_array(chunk)
        words, nwords, scale = _decimal_words(chunk)  # null slots hold some value: format it
        n = len(chunk)
        offsets = np.empty(n + 1, dtype=np.int64)
        data = np.empty(n * kernels.DECIMAL_MAX_CHARS, dtype=np.uint8)
        used = kernels.decimal_strings(words, nwords, scale, offsets, data)
        strings = pa.Array.from_buffers(
            pa.large_string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data[:used])]
        )
        if chunk.null_count:
            strings = pc.if_else(chunk.is_valid(), strings, pa.scalar(None, pa.large_string()))
        out.append(strings)
    return pa.concat_arrays(out) if out else pa.array([], pa.large_string())


def _feeds(
    values: Any, orc_kind: Any, max_length: int | None, writer_timezone: Any, writer: Any
) -> Iterator[tuple[_Feed, np.ndarray | None]]:
    t = OrcType.parse(orc_kind, max_length)
    w = Writer.parse(writer)
    zone = _zone_name(writer_timezone) if t.kind is OrcKind.TIMESTAMP else "UTC"
    arr = as_arrow(values)
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    for chunk in chunks:
        if isinstance(chunk.type, pa.BaseExtensionType):
            chunk = chunk.storage
        if pa.types.is_dictionary(chunk.type):
            chunk = chunk.dictionary_decode()
        chunk = unview(chunk)
        valid = None
        if chunk.null_count:
            valid = chunk.is_valid().to_numpy(zero_copy_only=False)
            chunk = chunk.drop_null()
        yield _feed(chunk, t, w, zone), valid


def _feed(arr: pa.Array, t: OrcType, writer: Writer, zone: str) -> _Feed:
    kind = arr.type
    k = t.kind
    if pa.types.is_null(kind):
        return _Feed("none", 0) if k in _SILENT else _Feed("long", np.zeros(0, np.int64))
    if k in (OrcKind.BYTE, OrcKind.SHORT, OrcKind.INT, OrcKind.LONG):
        longs = _integers(arr, t)
        if k is OrcKind.BYTE:
            longs = longs.astype(np.int8).astype(np.int64)  # Java: (byte) value
        return _Feed("long", longs)
    if k is OrcKind.DATE:
        return _Feed("long", _days(arr))
    if k in (OrcKind.FLOAT, OrcKind.DOUBLE):
        bits = _double_bits(arr, t, writer)
        # Java hashes doubleToLongBits (NaNs canonical); C++ reinterprets the raw bits.
        return _Feed("double", bits) if writer is Writer.JAVA else _Feed("long", bits)
    if k in (OrcKind.STRING, OrcKind.BINARY, OrcKind.VARCHAR, OrcKind.CHAR):
        if not (is_var_binary(kind) or pa.types.is_fixed_size_binary(kind)):
            raise _unsupported(arr, t)
        offsets, data = _var_buffers(arr)
        if k is OrcKind.VARCHAR:
            return _Feed("var", offsets, data, kernels.VAR_TRUNCATE, t.max_length or 0)
        if k is OrcKind.CHAR:
            return _Feed("var", offsets, data, kernels.VAR_PAD, t.max_length or 0)
        return _Feed("var", offsets, data)
    if k is OrcKind.DECIMAL:
        words, nwords, scale = _decimal_words(_decimal_array(arr, t))
        return _Feed("decimal", words, nwords, arg=scale)
    if k in (OrcKind.TIMESTAMP, OrcKind.TIMESTAMP_INSTANT):
        return _Feed("long", _timestamp_millis(arr, t, writer, zone))
    if k in (OrcKind.LIST, OrcKind.MAP):
        if not (
            pa.types.is_list(kind)
            or pa.types.is_large_list(kind)
            or pa.types.is_map(kind)
            or pa.types.is_list_view(kind)
            or pa.types.is_large_list_view(kind)
            or pa.types.is_fixed_size_list(kind)
        ):
            raise _unsupported(arr, t)
        if pa.types.is_map(kind):  # list_value_length has no kernel for maps
            return _Feed("long", np.diff(_to_numpy_i64(arr.offsets)))
        return _Feed("long", _to_numpy_i64(pc.list_value_length(arr)))
    if k is OrcKind.UNION:
        if not pa.types.is_union(kind):
            raise _unsupported(arr, t)
        return _Feed("long", _union_tags(arr))
    if k is OrcKind.BOOLEAN:
        if not pa.types.is_boolean(kind):
            raise _unsupported(arr, t)
        if writer is not Writer.JAVA:
            return _Feed("long", arr.to_numpy(zero_copy_only=False).astype(np.int64))
        return _Feed("none", len(arr))
    return _Feed("none", len(arr))  # STRUCT


_SILENT = frozenset({OrcKind.BOOLEAN, OrcKind.STRUCT})


def _unsupported(arr: pa.Array, t: OrcType) -> UnsupportedTypeError:
    return UnsupportedTypeError(
        f"cannot feed Arrow {arr.type} values to the filter of an ORC {t.kind.value.upper()} column"
    )


def _to_numpy_i64(arr: pa.Array) -> np.ndarray:
    return np.ascontiguousarray(arr.to_numpy(zero_copy_only=False), dtype=np.int64)


def _integers(arr: pa.Array, t: OrcType) -> np.ndarray:
    if not pa.types.is_integer(arr.type):
        raise _unsupported(arr, t)
    if arr.type != pa.int64():
        try:
            arr = pc.cast(arr, pa.int64())
        except pa.ArrowInvalid as e:
            raise UnsupportedTypeError(f"integers beyond a Java long: {e}") from e
    return _to_numpy_i64(arr)


def _days(arr: pa.Array) -> np.ndarray:
    if pa.types.is_date32(arr.type):
        return _to_numpy_i64(arr.cast(pa.int32()))
    if pa.types.is_date64(arr.type):
        ms = _to_numpy_i64(arr.cast(pa.int64()))
        return np.floor_divide(ms, _MS_PER_DAY)
    if pa.types.is_integer(arr.type):
        return _integers(arr, OrcType(OrcKind.DATE)).astype(np.int32).astype(np.int64)
    raise _unsupported(arr, OrcType(OrcKind.DATE))


def _double_bits(arr: pa.Array, t: OrcType, writer: Writer) -> np.ndarray:
    kind = arr.type
    if not (pa.types.is_floating(kind) or pa.types.is_integer(kind) or pa.types.is_decimal(kind)):
        raise _unsupported(arr, t)
    if pa.types.is_float16(kind):
        arr = pc.cast(arr, pa.float32())
    if pa.types.is_integer(kind) or pa.types.is_decimal(kind):
        arr = pc.cast(arr, pa.float64(), safe=False)
    d = np.ascontiguousarray(arr.to_numpy(zero_copy_only=False))
    # ORC C++ hashes the double it is given (pyorc passes Python floats unrounded).
    unrounded = writer is not Writer.JAVA and d.dtype == np.float64
    if t.kind is OrcKind.FLOAT and not unrounded:
        with np.errstate(over="ignore"):
            d = d.astype(np.float32)
    return np.ascontiguousarray(d.astype(np.float64)).view(np.int64)


def _var_buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Offsets and data of a string/binary array; fixed-size binary as variable-length."""
    if pa.types.is_fixed_size_binary(arr.type):
        arr = pc.cast(arr, pa.large_binary())
    plain = var_bytes(arr)
    return plain.offsets, plain.data


def _decimal_array(arr: pa.Array, t: OrcType | None = None) -> pa.Array:
    """A decimal128 or decimal256 array of scale >= 0 with the same values."""
    kind = arr.type
    if pa.types.is_integer(kind):
        return pc.cast(arr, pa.decimal128(38, 0) if kind.bit_width < 128 else pa.decimal256(76, 0))
    if not pa.types.is_decimal(kind):
        raise _unsupported(arr, t or OrcType(OrcKind.DECIMAL))
    p, s = kind.precision, kind.scale
    if s < 0:  # whole numbers: the same values at scale 0
        p, s = p - s, 0
        if p > 76:
            raise UnsupportedTypeError(f"decimals of more than 76 digits: {kind}")
    if (p, s) != (kind.precision, kind.scale) or not (
        pa.types.is_decimal128(kind) or pa.types.is_decimal256(kind)
    ):
        arr = pc.cast(arr, pa.decimal128(p, s) if p <= 38 else pa.decimal256(p, s))
    return arr


def _decimal_words(arr: pa.Array) -> tuple[np.ndarray, int, int]:
    """(uint64 words, words per value, scale) of a decimal128/decimal256 array."""
    nwords = 2 if pa.types.is_decimal128(arr.type) else 4
    if len(arr) == 0:
        return np.zeros(0, dtype=np.uint64), nwords, arr.type.scale
    words = np.frombuffer(arr.buffers()[1], dtype=np.uint64)
    return words[nwords * arr.offset : nwords * (arr.offset + len(arr))], nwords, arr.type.scale


def _zone_name(zone: Any) -> str:
    if isinstance(zone, zoneinfo.ZoneInfo):
        zone = zone.key
    if not isinstance(zone, str) or not zone:
        raise InvalidParameterError(
            f"writer_timezone must be a time zone name such as 'America/Los_Angeles' "
            f"(the stripe footer's writer_timezone) or a zoneinfo.ZoneInfo, got {zone!r}"
        )
    _tzinfo(zone)  # unknown names fail here, not in the middle of a column
    return zone


@functools.lru_cache(maxsize=64)
def _tzinfo(zone: str) -> _dt.tzinfo:
    """A zone name as Java reads it: a tz database id or a custom "GMT+hh:mm" id."""
    if zone in _UTC_NAMES:
        return _dt.UTC
    m = _CUSTOM_ZONE_RE.match(zone)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        hours, minutes = int(m.group(2)), int(m.group(3) or 0)
        if hours > 23 or minutes > 59:
            raise InvalidParameterError(f"bad custom writer_timezone {zone!r}")
        return _dt.timezone(sign * _dt.timedelta(hours=hours, minutes=minutes))
    try:
        return zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError) as e:
        raise InvalidParameterError(
            f"unknown writer_timezone {zone!r}: not a time zone id of the tz database"
        ) from e


@functools.lru_cache(maxsize=64)
def _zone_table(zone: str) -> tuple[np.ndarray, np.ndarray]:
    """Offsets of ``zone`` from 1800 to 2200: (first second of each offset, offset in ms).

    Found by sampling the offset once a day and bisecting each change to the second
    (tz database transitions fall on whole seconds; two changes within one day would
    be missed - the database has none since 1800). Python's ``zoneinfo`` applies the
    zone's rule for years past its last listed transition, as Java's ``TimeZone`` does;
    pyarrow's time zone kernels do not (they keep standard time after 2037).
    """
    tz = _tzinfo(zone)

    def offset(sec: int) -> int:
        return round(_dt.datetime.fromtimestamp(sec, tz).utcoffset().total_seconds())

    starts = [_TABLE_START]
    offsets = [offset(_TABLE_START)]
    prev_sec = _TABLE_START
    for sec in range(_TABLE_START + 86_400, _TABLE_END + 86_400, 86_400):
        off = offset(sec)
        if off != offsets[-1]:
            lo, hi = prev_sec, sec
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if offset(mid) == offsets[-1]:
                    lo = mid
                else:
                    hi = mid
            starts.append(hi)
            offsets.append(offset(hi))
        prev_sec = sec
    return np.array(starts, dtype=np.int64), np.array(offsets, dtype=np.int64) * 1000


def _offsets_ms(ms: np.ndarray, zone: str) -> np.ndarray:
    """UTC offset of ``zone`` (ms) at each instant (epoch ms), as ``TimeZone.getOffset``."""
    tz = _tzinfo(zone)
    if tz is _dt.UTC or isinstance(tz, _dt.timezone):
        fixed = tz.utcoffset(None)
        return np.full(ms.shape, round(fixed.total_seconds()) * 1000, dtype=np.int64)
    starts, offsets = _zone_table(zone)
    sec = np.floor_divide(ms, 1000)
    out = offsets[np.maximum(np.searchsorted(starts, sec, side="right") - 1, 0)]
    outside = np.flatnonzero((sec < _TABLE_START) | (sec > _TABLE_END))
    for i in outside.tolist():  # rare: before 1800 or after 2200, one at a time
        try:
            off = _dt.datetime.fromtimestamp(int(sec[i]), tz).utcoffset()
            out[i] = round(off.total_seconds()) * 1000
        except (OverflowError, OSError, ValueError):  # beyond datetime's years 1..9999
            out[i] = offsets[0] if sec[i] < _TABLE_START else offsets[-1]
    return out


def _timestamp_millis(arr: pa.Array, t: OrcType, writer: Writer, zone: str) -> np.ndarray:
    kind = arr.type
    if not pa.types.is_timestamp(kind):
        raise _unsupported(arr, t)
    raw = _to_numpy_i64(arr.cast(pa.int64()))
    if kind.unit == "s":
        if raw.size and np.abs(raw).max() > (2**63 - 1) // 1000:
            raise UnsupportedTypeError("timestamps beyond the range of Java epoch milliseconds")
        ms = raw * 1000
    else:
        per_ms = _MS_PER_UNIT[kind.unit]
        ms = np.floor_divide(raw, per_ms)
        if writer is Writer.PYARROW:
            # Arrow's ORC adapter splits values with C++ division (seconds toward zero,
            # negative nanos), so ORC C++'s secs * 1000 + nanos / 1e6 truncates too.
            ms += (raw < 0) & (raw % per_ms != 0)
    java = writer is Writer.JAVA
    if t.kind is OrcKind.TIMESTAMP_INSTANT or _tzinfo(zone) is _dt.UTC:
        # The value hashed is the instant itself (or the naive wall clock, which in a
        # UTC writer is the same number).
        return _java_quirk(ms) if java else ms
    if kind.tz is None:
        # A naive value is the wall clock: hashed as is, except for Java's quirk, which
        # applies when the instant it denotes in the writer's zone is just before the epoch.
        if not java:
            return ms
        instant = ms - _offsets_ms(ms - _offsets_ms(ms, zone), zone)
        return ms + 1000 * ((instant > -1000) & (instant < 0))
    # An instant: Java's TimestampTreeWriter hashes millis + zone.getOffset(millis)
    # (SerializationUtils.convertToUtc); C++ adds the offset of the floored second.
    q = _java_quirk(ms) if java else ms
    return q + _offsets_ms(q, zone)


def _java_quirk(ms: np.ndarray) -> np.ndarray:
    """ORC Java's ``TimestampTreeWriter`` millis: instants in (-1 s, 0) come out 1 s late.

    ``secs = time / 1000`` truncates toward zero and the correction ``millis -= 1000``
    only fires when ``millis < 0``, which fails for exactly the floored millisecond
    values -999..-1.
    """
    return ms + 1000 * ((ms > -1000) & (ms < 0))


def _union_tags(arr: pa.Array) -> np.ndarray:
    codes = np.frombuffer(arr.buffers()[1], dtype=np.int8)[arr.offset : arr.offset + len(arr)]
    lookup = np.full(128, -1, dtype=np.int64)
    for child, code in enumerate(arr.type.type_codes):
        lookup[code] = child
    return lookup[codes.astype(np.int64)]


# --------------------------------------------------------------------------- inputs


def _chunks_of(values: Any) -> list[pa.Array]:
    arr = as_arrow(values)
    return arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]


def _long_chunks(values: Any) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        yield _np_longs(values), None
        return
    for chunk in _chunks_of(values):
        chunk, valid = _drop_nulls(chunk)
        if pa.types.is_null(chunk.type):
            yield np.zeros(0, np.int64), valid
            continue
        if not pa.types.is_integer(chunk.type):
            raise UnsupportedTypeError(f"add_longs/test_longs take integers, got {chunk.type}")
        yield _integers(chunk, OrcType(OrcKind.LONG)), valid


def _np_longs(values: np.ndarray) -> np.ndarray:
    values = values.reshape(-1)
    if values.dtype == np.uint64 and values.size and values.max() > 2**63 - 1:
        raise UnsupportedTypeError("add_longs/test_longs take Java longs (int64)")
    return np.ascontiguousarray(values, dtype=np.int64)


def _double_chunks(values: Any) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiu":
        d = np.ascontiguousarray(values.reshape(-1), dtype=np.float64)
        yield d.view(np.int64), None
        return
    for chunk in _chunks_of(values):
        chunk, valid = _drop_nulls(chunk)
        if pa.types.is_null(chunk.type):
            yield np.zeros(0, np.int64), valid
            continue
        yield _double_bits(chunk, OrcType(OrcKind.DOUBLE), Writer.JAVA), valid


def _var_chunks(values: Any, type: pa.DataType) -> Iterator[tuple[tuple, np.ndarray | None]]:
    if isinstance(values, str | bytes | bytearray | memoryview):
        values = [values]
    arr = values if isinstance(values, pa.Array | pa.ChunkedArray) else as_arrow(values, type)
    for chunk in arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]:
        if pa.types.is_dictionary(chunk.type):
            chunk = chunk.dictionary_decode()
        chunk, valid = _drop_nulls(chunk)
        if pa.types.is_null(chunk.type):
            yield (np.zeros(1, np.int64), np.zeros(0, np.uint8)), valid
            continue
        if not (is_var_binary(chunk.type) or pa.types.is_fixed_size_binary(chunk.type)):
            raise UnsupportedTypeError(f"expected strings or bytes, got Arrow {chunk.type}")
        yield _var_buffers(chunk), valid


def _drop_nulls(chunk: pa.Array) -> tuple[pa.Array, np.ndarray | None]:
    if isinstance(chunk.type, pa.BaseExtensionType):
        chunk = chunk.storage
    chunk = unview(chunk)
    if chunk.null_count:
        valid = chunk.is_valid().to_numpy(zero_copy_only=False)
        return chunk.drop_null(), valid
    return chunk, None


def _scatter(found: np.ndarray, valid: np.ndarray | None) -> np.ndarray:
    if valid is None:
        return found
    full = np.zeros(valid.shape[0], dtype=np.bool_)
    full[valid] = found
    return full


def _concat(parts: list[np.ndarray]) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=np.bool_)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


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
    try:
        raw = np.frombuffer(buf, dtype=np.uint8)
    except (TypeError, ValueError) as exc:
        raise InvalidBitsetError(
            f"{what} must be a bytes-like object, got {type(buf).__name__}"
        ) from exc
    if raw.shape[0] % 8:
        raise InvalidBitsetError(
            f"{what} of {raw.shape[0]} bytes is not whole 64-bit words (a multiple of 8 bytes)"
        )
    _check_word_count(raw.shape[0] // 8, what)
    if copy or raw.ctypes.data % 8:
        return raw.copy().view(np.uint64)
    return raw.view(np.uint64)


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
