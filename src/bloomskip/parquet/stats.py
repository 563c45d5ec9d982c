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
"""

from __future__ import annotations

import decimal
import math
import struct
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from bloomskip.hashing.physical import PhysicalType
from bloomskip.parquet.footer import ColumnChunk, Footer
from bloomskip.parquet.schema import BYTES, DECIMAL_BE, FLOAT, SIGNED, UNSIGNED, ColumnType
from bloomskip.parquet.thrift import Struct

_WIDTH = {PhysicalType.BOOLEAN: 1, PhysicalType.INT32: 4, PhysicalType.INT64: 8}


@dataclass(frozen=True)
class ChunkStats:
    """What a column chunk's statistics say, decoded; None where unknown."""

    min: Any = None
    max: Any = None
    null_count: int | None = None
    num_values: int | None = None
    note: str = ""  # why the bounds are not used, when they are not

    @property
    def all_null(self) -> bool:
        return (
            self.null_count is not None
            and self.num_values is not None
            and self.num_values > 0
            and self.null_count >= self.num_values
        )

    def excludes(self, key: Any) -> bool:
        """True when ``key`` lies outside [min, max]."""
        if self.min is not None and key < self.min:
            return True
        return self.max is not None and key > self.max


def has_type_order(footer: Footer, column: int) -> bool:
    orders = footer.metadata.get(7)
    items = getattr(orders, "items", None)
    if not items or column >= len(items) or not isinstance(items[column], Struct):
        return False
    return items[column].get(1) is not None  # ColumnOrder.TYPE_ORDER


def chunk_stats(footer: Footer, chunk: ColumnChunk, ctype: ColumnType) -> ChunkStats:
    """Decode the statistics of one column chunk for comparisons in ``ctype``'s order."""
    meta = chunk.meta
    num_values = chunk.num_values if isinstance(chunk.num_values, int) else None
    stats = meta.get(12) if meta is not None else None
    if not isinstance(stats, Struct):
        return ChunkStats(num_values=num_values, note="no statistics")
    null_count = stats.get(3)
    null_count = null_count if isinstance(null_count, int) and null_count >= 0 else None
    base = {"null_count": null_count, "num_values": num_values}
    if ctype.order is None:
        return ChunkStats(note=f"no usable min/max order for {ctype.logical}", **base)
    lo, hi = None, None
    if has_type_order(footer, chunk.column):
        lo, hi = stats.get(6), stats.get(5)
    if (
        lo is None
        and hi is None
        and ctype.order in (SIGNED, FLOAT)
        and (ctype.physical_type is not PhysicalType.BOOLEAN)
    ):
        lo, hi = stats.get(2), stats.get(1)
    try:
        lo_key = None if lo is None else _decode(lo, ctype)
        hi_key = None if hi is None else _decode(hi, ctype)
    except (ValueError, struct.error):
        return ChunkStats(note="malformed min/max", **base)
    if any(isinstance(k, float) and math.isnan(k) for k in (lo_key, hi_key)):
        return ChunkStats(note="NaN min/max", **base)
    if lo_key is not None and hi_key is not None and lo_key > hi_key:
        return ChunkStats(note="min > max", **base)
    return ChunkStats(lo_key, hi_key, **base)


def _decode(raw: Any, ctype: ColumnType) -> Any:
    if not isinstance(raw, bytes):
        raise ValueError("statistics value is not binary")
    order, ptype = ctype.order, ctype.physical_type
    if order in (SIGNED, UNSIGNED):
        width = _WIDTH.get(ptype)  # type: ignore[arg-type]
        if width is None or len(raw) != width:
            raise ValueError(f"{len(raw)}-byte bound for {ptype}")
        return int.from_bytes(raw, "little", signed=order == SIGNED)
    if order == FLOAT:
        fmt = "<f" if ptype is PhysicalType.FLOAT else "<d"
        if len(raw) != struct.calcsize(fmt):
            raise ValueError("float bound of the wrong size")
        return struct.unpack(fmt, raw)[0]
    if order == DECIMAL_BE:
        if not raw:
            raise ValueError("empty decimal bound")
        return int.from_bytes(raw, "big", signed=True)
    return raw  # BYTES: unsigned lexicographic, as Python compares bytes


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
