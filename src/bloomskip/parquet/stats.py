"""Column chunk statistics: which literal values min/max and null counts rule out.

``Statistics`` (ColumnMetaData field 12) holds ``min_value``/``max_value`` (fields 6/5)
in the column's sort order, ``null_count`` (3) and the deprecated ``min``/``max`` (2/1)
that old writers computed with *signed* byte order. What is trusted:

* ``min_value``/``max_value`` only when the footer's ``column_orders`` (FileMetaData
  field 7) says TYPE_ORDER for the column - without it their meaning is undefined;
* the deprecated ``min``/``max`` only for signed integers and floats, where signed order
  is the type's order (it is wrong for strings, unsigned ints and decimals: PARQUET-686);
* nothing for INT96, FLOAT16, INTERVAL or BYTE_ARRAY decimals; a NaN bound disables the
  bounds (writers disagree on where NaN goes).

Values compare in the *physical* domain of the column's order: integers (signed or
unsigned), floats, unsigned bytes, or big-endian two's complement decimals.
Truncated string bounds (``is_min_value_exact`` false) are still a lower and an upper
bound, so they are safe to compare against.

:func:`decode` reads the statistics of many row groups at once from
:class:`~bloomskip.parquet.chunks.ChunkArrays`: integer and float bounds become numpy
arrays (compared with literals in one pass), byte and decimal bounds Python values.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np

from bloomskip.hashing.physical import PhysicalType
from bloomskip.parquet.chunks import (
    F_BOUNDS,
    F_META,
    F_NULLS,
    F_NULLS_OK,
    F_STATS,
    ChunkArrays,
    int_field,
)
from bloomskip.parquet.schema import BYTES, DECIMAL_BE, FLOAT, SIGNED, UNSIGNED, ColumnType
from bloomskip.parquet.thrift import Struct

_WIDTH = {PhysicalType.BOOLEAN: 1, PhysicalType.INT32: 4, PhysicalType.INT64: 8}
_NUMERIC = {SIGNED: np.int64, UNSIGNED: np.uint64, FLOAT: np.float64}

# Why a row group's bounds are not used (:attr:`Stats.note`).
_OK, _NO_STATS, _NO_ORDER, _MALFORMED, _NAN, _MIN_GT_MAX, _NOT_USED = range(7)


@dataclass(frozen=True)
class Stats:
    """What the statistics of one column say in the row groups asked about, in order."""

    note: list[str]  # why there are no bounds ("" where bounds are used)
    null_count: np.ndarray  # int64, -1 where unknown
    num_values: np.ndarray  # int64, valid where ``has_num_values``
    has_num_values: np.ndarray
    has_lo: np.ndarray  # bool: a lower bound is known
    has_hi: np.ndarray
    lo: Any  # bounds: a numpy array (integers, floats) or a list of Python values
    hi: Any
    numeric: bool

    @property
    def all_null(self) -> np.ndarray:
        """Row groups that hold only nulls (``null_count >= num_values > 0``)."""
        return (
            (self.null_count >= 0)
            & self.has_num_values
            & (self.num_values > 0)
            & (self.null_count >= self.num_values)
        )

    def excluded(self, keys: list) -> np.ndarray:
        """Row groups whose bounds rule out every key (keys in :func:`literal_key`'s
        domain; none rules anything out when ``keys`` is empty)."""
        n = self.has_lo.shape[0]
        if not keys:
            return np.zeros(n, np.bool_)
        dtype = self.lo.dtype if self.numeric else None
        if dtype is not None and all(_fits(k, dtype) for k in keys):
            out = self.has_lo | self.has_hi
            for key in np.array(keys, dtype=dtype):
                out &= (self.has_lo & (key < self.lo)) | (self.has_hi & (key > self.hi))
            return out
        los, his = self.values()
        out = self.has_lo | self.has_hi
        for k in keys:
            outside = [
                (lo is not None and k < lo) or (hi is not None and k > hi)
                for lo, hi in zip(los, his, strict=True)
            ]
            out &= np.array(outside, dtype=np.bool_)
        return out

    def values(self) -> tuple[list, list]:
        """Every row group's (min, max) as Python values, None where unknown."""
        lo = self.lo.tolist() if self.numeric else self.lo
        hi = self.hi.tolist() if self.numeric else self.hi
        has_lo, has_hi = self.has_lo.tolist(), self.has_hi.tolist()
        return (
            [v if h else None for v, h in zip(lo, has_lo, strict=True)],
            [v if h else None for v, h in zip(hi, has_hi, strict=True)],
        )


def _fits(key: Any, dtype: np.dtype) -> bool:
    if dtype.kind == "f":
        return type(key) is float
    if type(key) is not int:
        return False
    info = np.iinfo(dtype)
    return info.min <= key <= info.max


def has_type_order(orders: Any, column: int) -> bool:
    """Whether FileMetaData.column_orders (decoded) says TYPE_ORDER for ``column``."""
    items = getattr(orders, "items", None)
    if not items or column >= len(items) or not isinstance(items[column], Struct):
        return False
    return items[column].get(1) is not None  # ColumnOrder.TYPE_ORDER


def decode(
    arrays: ChunkArrays, units: np.ndarray, ctype: ColumnType, *, type_order: bool, used: bool
) -> Stats:
    """The statistics of ``units`` (row group numbers) for comparisons in ``ctype``'s
    order; ``type_order``: the footer says TYPE_ORDER for the column; ``used`` False
    when the statistics stage is off (then nothing is known)."""
    rows = arrays.fields[units]
    n = rows.shape[0]
    none = np.zeros(n, np.bool_)
    numeric = ctype.order in _NUMERIC
    empty: Any = np.zeros(n, _NUMERIC[ctype.order]) if numeric else [None] * n  # type: ignore[index]
    if not used:
        return Stats(["statistics not used"] * n, np.full(n, -1, np.int64),
                     np.zeros(n, np.int64), none, none, none, empty, empty, numeric)  # fmt: skip
    meta = rows[:, F_META] == 1
    stats = rows[:, F_STATS] == 1
    nv = int_field(5)  # num_values
    has_nv = meta & (rows[:, nv] == 1)
    nulls = np.where(stats & (rows[:, F_NULLS_OK] == 1), rows[:, F_NULLS], -1)
    code = np.where(stats, _OK, _NO_STATS)
    has_lo, has_hi, lo, hi = none.copy(), none.copy(), empty, empty
    if ctype.order is None:
        code[stats] = _NO_ORDER
    elif stats.any():
        has_lo, has_hi, lo, hi = _bounds(arrays, rows, stats, ctype, type_order, code)
    texts = {
        _OK: "",
        _NO_STATS: "no statistics",
        _NO_ORDER: f"no usable min/max order for {ctype.logical}",
        _MALFORMED: "malformed min/max",
        _NAN: "NaN min/max",
        _MIN_GT_MAX: "min > max",
    }
    note = [texts[c] for c in code.tolist()]
    usable = code == _OK
    return Stats(note, nulls, rows[:, nv + 1], has_nv, has_lo & usable,
                 has_hi & usable, lo, hi, numeric)  # fmt: skip


def _bounds(
    arrays: ChunkArrays,
    rows: np.ndarray,
    stats: np.ndarray,
    ctype: ColumnType,
    type_order: bool,
    code: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, Any, Any]:
    """Decode min/max where ``stats``; marks ``code`` for malformed, NaN and min > max."""
    n = rows.shape[0]
    # min_value/max_value (bounds 0, 1) with TYPE_ORDER; else, for signed integers and
    # floats, the deprecated min/max (bounds 2, 3) when neither of those is there.
    lo_b = np.full(n, 0 if type_order else -1)
    hi_b = np.full(n, 1 if type_order else -1)
    kind = rows[:, F_BOUNDS::3]  # (n, 4): kinds of min_value, max_value, min, max
    neither = (kind[:, 0] == 0) & (kind[:, 1] == 0) if type_order else np.ones(n, np.bool_)
    if ctype.order in (SIGNED, FLOAT) and ctype.physical_type is not PhysicalType.BOOLEAN:
        lo_b[neither], hi_b[neither] = 2, 3
    decoded = []
    bad = ~stats
    for sel in (lo_b, hi_b):
        k = np.where(sel >= 0, np.take_along_axis(kind, np.maximum(sel, 0)[:, None], 1)[:, 0], 0)
        col = F_BOUNDS + 3 * np.maximum(sel, 0)
        pos = np.take_along_axis(rows, (col + 1)[:, None], 1)[:, 0]
        size = np.take_along_axis(rows, (col + 2)[:, None], 1)[:, 0]
        k = np.where(stats, k, 0)
        bad |= k == 2  # a bound of another Thrift type
        present, values, malformed = _decode(arrays.data, k == 1, pos, size, ctype)
        bad |= malformed
        decoded.append((present, values))
    (has_lo, lo), (has_hi, hi) = decoded
    code[stats & bad] = _MALFORMED
    ok = stats & ~bad
    if ctype.order == FLOAT:
        nan = ok & ((has_lo & np.isnan(lo)) | (has_hi & np.isnan(hi)))
        code[nan] = _NAN
        ok &= ~nan
    both = ok & has_lo & has_hi
    if isinstance(lo, np.ndarray):
        inverted = both & (lo > hi)
    else:
        inverted = np.array([b and x > y for b, x, y in zip(both.tolist(), lo, hi, strict=True)],
                            dtype=np.bool_)  # fmt: skip
    code[inverted] = _MIN_GT_MAX
    return has_lo, has_hi, lo, hi


def _decode(
    data: bytes, present: np.ndarray, pos: np.ndarray, size: np.ndarray, ctype: ColumnType
) -> tuple[np.ndarray, Any, np.ndarray]:
    """Binary bounds -> (present, values, malformed) in ``ctype``'s order."""
    order, ptype = ctype.order, ctype.physical_type
    n = present.shape[0]
    if order in _NUMERIC:
        if order == FLOAT:
            width = 4 if ptype is PhysicalType.FLOAT else 8
            stored = np.dtype("<f4" if width == 4 else "<f8")
        else:
            width = _WIDTH.get(ptype, 0)  # type: ignore[arg-type]
            stored = np.dtype(f"<{'i' if order == SIGNED else 'u'}{max(width, 1)}")
        malformed = present & ((size != width) | (width == 0))  # no width: no decoding
        good = present & ~malformed
        values = np.zeros(n, _NUMERIC[order])
        if good.any():
            at = pos[good]
            raw = np.frombuffer(data, np.uint8)[at[:, None] + np.arange(width)]
            values[good] = np.ascontiguousarray(raw).view(stored)[:, 0]
        return good, values, malformed
    out: list[Any] = [None] * n
    malformed = np.zeros(n, np.bool_)
    for j in np.flatnonzero(present).tolist():
        raw = data[int(pos[j]) : int(pos[j] + size[j])]
        if order == DECIMAL_BE:
            if not raw:
                malformed[j] = True
                continue
            out[j] = int.from_bytes(raw, "big", signed=True)
        else:  # BYTES: unsigned lexicographic, as Python compares bytes
            out[j] = raw
    return present & ~malformed, out, malformed


def literal_key(value: Any, ctype: ColumnType) -> Any:
    """A converted literal (:mod:`bloomskip.expr.literals`) in the statistics' domain."""
    order = ctype.order
    if isinstance(value, Decimal):  # decimals compare by unscaled value
        scale = getattr(ctype.arrow_type, "scale", 0)
        # Exactly: the default context would round a 38-digit value to 28 digits.
        return int(value.scaleb(scale, decimal.Context(prec=100)))
    if order == BYTES:
        return value.encode("utf-8") if isinstance(value, str) else bytes(value)
    if order == FLOAT:
        return float(value)
    if hasattr(value, "toordinal"):  # datetime.date -> days since the epoch
        return value.toordinal() - 719_163
    if isinstance(value, bool):
        return int(value)
    if order in (SIGNED, UNSIGNED) and isinstance(value, int):
        return value
    raise ValueError(f"no statistics key for {value!r} in {ctype.logical}")
