"""What ORC's writers feed their Bloom filters: Arrow values converted per column kind.

Each writer converts a column's values before hashing them (:func:`base_hashes` lists the
rules per kind): every integer width and dates (days) as a long, FLOAT promoted to double,
doubles by their bits, decimals as their canonical text ("1.5", "-0.05", "100"),
timestamps as milliseconds of the wall clock in the writer's time zone (:mod:`.zones`),
strings as UTF-8 (VARCHAR truncated, CHAR padded), binary as is; :class:`Writer` picks the
few values where ORC Java, ORC C++ and Arrow's adapter differ.

A :class:`Feed` holds the non-null values of one chunk in the form the kernels
(:mod:`.kernels`) hash: longs, Arrow strings with a cut or pad rule, or decimal words.
:func:`feeds` makes them from a column's values and kind, :func:`long_feeds`,
:func:`double_feeds` and :func:`var_feeds` from the inputs of the typed
``OrcBloomFilter.add_*`` / ``test_*`` methods. Each feed comes with the chunk's validity
mask, which :func:`scatter` uses to place results back among the nulls.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip._lazy import lazy
from bloomskip.errors import UnsupportedTypeError
from bloomskip.hashing.arrow import as_arrow, is_list_like, is_var_binary, unview, var_bytes
from bloomskip.orc.types import VAR_PAD, VAR_RAW, VAR_TRUNCATE, OrcKind, OrcType, Writer
from bloomskip.orc.zones import offsets_ms, tzinfo, zone_name

kernels = lazy("bloomskip.orc.kernels")

_MS_PER_DAY = 86_400_000
_MS_PER_UNIT = {"ms": 1, "us": 1_000, "ns": 1_000_000}


@dataclass(frozen=True)
class Feed:
    """The non-null values of one chunk in the form the filter hashes."""

    form: str  # "long", "var", "decimal", "none"
    values: Any = None  # int64 longs; var offsets; decimal words; or a count ("none")
    data: Any = None  # var: the bytes; decimal: words per value (2 or 4)
    mode: int = VAR_RAW
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
        elif self.form == "var":
            kernels.var_hashes(self.values, self.data, self.mode, self.arg, out.view(np.uint64))
        elif self.form == "decimal":
            kernels.decimal_hashes(self.values, self.data, self.arg, out.view(np.uint64))
        else:
            raise UnsupportedTypeError("this ORC column kind feeds nothing to its filter")
        return out

    def insert(self, words: np.ndarray, k: int) -> None:
        """Set the bits of every value in a filter's ``words`` probed ``k`` times."""
        if self.form == "long":
            kernels.insert_longs(words, k, self.values)
        elif self.form == "var":
            kernels.insert_var(words, k, self.values, self.data, self.mode, self.arg)
        elif self.form == "decimal":
            kernels.insert_hashes(words, k, self.hashes())

    def check(self, words: np.ndarray, k: int) -> np.ndarray:
        """``bool`` per value: are its bits set? (``True`` for kinds that feed nothing.)"""
        out = np.empty(len(self), dtype=np.bool_)
        if self.form == "long":
            kernels.check_longs(words, k, self.values, out)
        elif self.form == "var":
            kernels.check_var(words, k, self.values, self.data, self.mode, self.arg, out)
        elif self.form == "decimal":
            kernels.check_hashes(words, k, self.hashes(), out)
        else:
            out[:] = True
        return out


class Conversion(TypedDict, total=False):
    """The keywords that choose how a writer converts a column's values, taken by
    :func:`base_hashes` and ``OrcBloomFilter.add_values`` / ``test_values`` and passed on
    to :func:`feeds`, which holds their defaults: ``max_length`` of a CHAR or VARCHAR kind
    given without one, ``writer_timezone`` of TIMESTAMP columns (``"UTC"``) and
    ``writer``, whose quirks to reproduce (ORC Java)."""

    max_length: int | None
    writer_timezone: Any
    writer: str | Writer


def base_hashes(values: Any, orc_kind: Any, **conversion: Unpack[Conversion]) -> np.ndarray:
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
    parts = [feed.hashes() for feed, _ in feeds(values, orc_kind, **conversion) if len(feed)]
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


def feeds(
    values: Any,
    orc_kind: Any,
    *,
    max_length: int | None = None,
    writer_timezone: Any = "UTC",
    writer: str | Writer = Writer.JAVA,
) -> Iterator[tuple[Feed, np.ndarray | None]]:
    """A column's values (any input of ``pyarrow.array``) as ``writer`` feeds a filter of
    ``orc_kind``: one :class:`Feed` and validity mask per chunk."""
    t = OrcType.parse(orc_kind, max_length)
    w = Writer.parse(writer)
    zone = zone_name(writer_timezone) if t.kind is OrcKind.TIMESTAMP else "UTC"
    for chunk, valid in _chunks(values):
        yield _feed(chunk, t, w, zone), valid


def _feed(arr: pa.Array, t: OrcType, writer: Writer, zone: str) -> Feed:
    kind = arr.type
    k = t.kind
    if pa.types.is_null(kind):
        return Feed("none", 0) if k in _SILENT else Feed("long", np.zeros(0, np.int64))
    if k in (OrcKind.BYTE, OrcKind.SHORT, OrcKind.INT, OrcKind.LONG):
        longs = _integers(arr, t)
        if k is OrcKind.BYTE:
            longs = longs.astype(np.int8).astype(np.int64)  # Java: (byte) value
        return Feed("long", longs)
    if k is OrcKind.DATE:
        return Feed("long", _days(arr))
    if k in (OrcKind.FLOAT, OrcKind.DOUBLE):
        return Feed("long", _double_bits(arr, t, writer))
    if k in (OrcKind.STRING, OrcKind.BINARY, OrcKind.VARCHAR, OrcKind.CHAR):
        if not (is_var_binary(kind) or pa.types.is_fixed_size_binary(kind)):
            raise _unsupported(arr, t)
        offsets, data = _var_buffers(arr)
        if k is OrcKind.VARCHAR:
            return Feed("var", offsets, data, VAR_TRUNCATE, t.max_length or 0)
        if k is OrcKind.CHAR:
            return Feed("var", offsets, data, VAR_PAD, t.max_length or 0)
        return Feed("var", offsets, data)
    if k is OrcKind.DECIMAL:
        words, nwords, scale = _decimal_words(_decimal_array(arr, t))
        return Feed("decimal", words, nwords, arg=scale)
    if k in (OrcKind.TIMESTAMP, OrcKind.TIMESTAMP_INSTANT):
        return Feed("long", _timestamp_millis(arr, t, writer, zone))
    if k in (OrcKind.LIST, OrcKind.MAP):
        if not is_list_like(kind):
            raise _unsupported(arr, t)
        if pa.types.is_map(kind):  # list_value_length has no kernel for maps
            return Feed("long", np.diff(_to_numpy_i64(arr.offsets)))
        return Feed("long", _to_numpy_i64(pc.list_value_length(arr)))
    if k is OrcKind.UNION:
        if not pa.types.is_union(kind):
            raise _unsupported(arr, t)
        return Feed("long", _union_tags(arr))
    if k is OrcKind.BOOLEAN:
        if not pa.types.is_boolean(kind):
            raise _unsupported(arr, t)
        if writer is not Writer.JAVA:
            return Feed("long", arr.to_numpy(zero_copy_only=False).astype(np.int64))
        return Feed("none", len(arr))
    return Feed("none", len(arr))  # STRUCT


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
    bits = np.ascontiguousarray(d.astype(np.float64)).view(np.int64)
    # Java hashes doubleToLongBits (NaNs canonical); C++ reinterprets the raw bits.
    return _canonical_nans(bits) if writer is Writer.JAVA else bits


def _canonical_nans(bits: np.ndarray) -> np.ndarray:
    """``Double.doubleToLongBits`` of doubles given as their int64 bits: every NaN becomes
    ``0x7ff8000000000000``."""
    nan = (bits & np.int64(0x7FFFFFFFFFFFFFFF)) > np.int64(0x7FF0000000000000)
    return np.where(nan, np.int64(kernels.CANONICAL_NAN_BITS), bits) if nan.any() else bits


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
    if t.kind is OrcKind.TIMESTAMP_INSTANT or tzinfo(zone) is _dt.UTC:
        # The value hashed is the instant itself (or the naive wall clock, which in a
        # UTC writer is the same number).
        return _java_quirk(ms) if java else ms
    if kind.tz is None:
        # A naive value is the wall clock: hashed as is, except for Java's quirk, which
        # applies when the instant it denotes in the writer's zone is just before the epoch.
        if not java:
            return ms
        instant = ms - offsets_ms(ms - offsets_ms(ms, zone), zone)
        return ms + 1000 * ((instant > -1000) & (instant < 0))
    # An instant: Java's TimestampTreeWriter hashes millis + zone.getOffset(millis)
    # (SerializationUtils.convertToUtc); C++ adds the offset of the floored second.
    q = _java_quirk(ms) if java else ms
    return q + offsets_ms(q, zone)


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


def long_feeds(values: Any) -> Iterator[tuple[Feed, np.ndarray | None]]:
    """The inputs of ``add_longs`` / ``test_longs``: integers as Java longs."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        yield Feed("long", _np_longs(values)), None
        return
    for chunk, valid in _chunks(values):
        if pa.types.is_null(chunk.type):
            yield Feed("long", np.zeros(0, np.int64)), valid
            continue
        if not pa.types.is_integer(chunk.type):
            raise UnsupportedTypeError(f"add_longs/test_longs take integers, got {chunk.type}")
        yield Feed("long", _integers(chunk, OrcType(OrcKind.LONG))), valid


def _np_longs(values: np.ndarray) -> np.ndarray:
    values = values.reshape(-1)
    if values.dtype == np.uint64 and values.size and values.max() > 2**63 - 1:
        raise UnsupportedTypeError("add_longs/test_longs take Java longs (int64)")
    return np.ascontiguousarray(values, dtype=np.int64)


def double_feeds(values: Any) -> Iterator[tuple[Feed, np.ndarray | None]]:
    """The inputs of ``add_doubles`` / ``test_doubles``: doubles by ``doubleToLongBits``."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiu":
        d = np.ascontiguousarray(values.reshape(-1), dtype=np.float64)
        yield Feed("long", _canonical_nans(d.view(np.int64))), None
        return
    for chunk, valid in _chunks(values):
        if pa.types.is_null(chunk.type):
            yield Feed("long", np.zeros(0, np.int64)), valid
            continue
        yield Feed("long", _double_bits(chunk, OrcType(OrcKind.DOUBLE), Writer.JAVA)), valid


def var_feeds(values: Any, type: pa.DataType) -> Iterator[tuple[Feed, np.ndarray | None]]:
    """The inputs of ``add_bytes`` / ``add_strings`` and their tests: the raw bytes of
    Arrow strings or binaries as they are, Python values read as ``type``."""
    if isinstance(values, str | bytes | bytearray | memoryview):
        values = [values]
    arrow = isinstance(values, pa.Array | pa.ChunkedArray)
    for chunk, valid in _chunks(values, None if arrow else type):
        if pa.types.is_null(chunk.type):
            yield Feed("var", np.zeros(1, np.int64), np.zeros(0, np.uint8)), valid
            continue
        if not (is_var_binary(chunk.type) or pa.types.is_fixed_size_binary(chunk.type)):
            raise UnsupportedTypeError(f"expected strings or bytes, got Arrow {chunk.type}")
        yield Feed("var", *_var_buffers(chunk)), valid


def _chunks(values: Any, type: pa.DataType | None = None) -> Iterator[tuple[pa.Array, Any]]:
    """Each chunk of ``values`` without its nulls (extension types as their storage,
    dictionaries decoded, views as large strings), and its validity mask or None."""
    arr = as_arrow(values, type)
    for chunk in arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]:
        if isinstance(chunk.type, pa.BaseExtensionType):
            chunk = chunk.storage
        if pa.types.is_dictionary(chunk.type):
            chunk = chunk.dictionary_decode()
        chunk = unview(chunk)
        if chunk.null_count:
            yield chunk.drop_null(), chunk.is_valid().to_numpy(zero_copy_only=False)
        else:
            yield chunk, None


def scatter(found: np.ndarray, valid: np.ndarray | None) -> np.ndarray:
    """Results per non-null value placed among the nulls (which get ``False``)."""
    if valid is None:
        return found
    full = np.zeros(valid.shape[0], dtype=np.bool_)
    full[valid] = found
    return full
