"""What a Parquet column holds: its logical Arrow type and how its values are stored.

From a schema leaf (:class:`~bloomskip.parquet.footer.LeafColumn`, our own parse of the
``SchemaElement``) this module derives a :class:`ColumnType`:

* ``arrow_type`` - the logical type a literal is converted to (``DECIMAL(p, s)``,
  ``TIMESTAMP(unit, isAdjustedToUTC)``, ``DATE``, ``INT(8, signed)``, ``STRING``, ...),
  from ``logicalType`` (field 10) or, for older files, ``converted_type`` (field 6);
* ``spec`` - the :class:`~bloomskip.hashing.arrow.PhysicalSpec` that says which bytes the
  writer hashed (physical type, FLBA length, time unit);
* ``order`` - how min/max statistics of the column compare (signed, unsigned, float,
  bytes, big-endian decimal), or None when statistics cannot be trusted for it;
* ``bloom_ok`` / ``why_not`` - whether equality can be decided by hashing a literal at
  all. BOOLEAN never is (parquet-java writes all-zero filters), nor are BYTE_ARRAY
  decimals (writers differ in how many bytes they use), FLOAT16 and INTERVAL.

Field ids and union members follow ``parquet.thrift`` (apache/parquet-format).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from bloomskip.hashing.arrow import PhysicalSpec
from bloomskip.hashing.physical import PhysicalType
from bloomskip.parquet.footer import LeafColumn
from bloomskip.parquet.thrift import Struct

P = PhysicalType

# LogicalType union members (SchemaElement field 10).
_STRING, _MAP, _LIST, _ENUM, _DECIMAL, _DATE, _TIME, _TIMESTAMP = 1, 2, 3, 4, 5, 6, 7, 8
_INTEGER, _UNKNOWN, _JSON, _BSON, _UUID, _FLOAT16 = 10, 11, 12, 13, 14, 15
_UNITS = {1: "ms", 2: "us", 3: "ns"}  # TimeUnit union members

# ConvertedType codes (SchemaElement field 6), for files without a logicalType.
_CONVERTED_STRING = {0, 4, 19}  # UTF8, ENUM, JSON
_CONVERTED_DECIMAL = 5
_CONVERTED_DATE = 6
_CONVERTED_TIME = {7: "ms", 8: "us"}
_CONVERTED_TIMESTAMP = {9: "ms", 10: "us"}
_CONVERTED_INT = {
    11: (8, False),
    12: (16, False),
    13: (32, False),
    14: (64, False),
    15: (8, True),
    16: (16, True),
    17: (32, True),
    18: (64, True),
}
_CONVERTED_INTERVAL = 21

#: Statistics orders.
SIGNED, UNSIGNED, FLOAT, BYTES, DECIMAL_BE = "signed", "unsigned", "float", "bytes", "decimal"


@dataclass(frozen=True)
class ColumnType:
    """A column's logical type, physical storage and what pruning may use."""

    name: str
    physical_type: PhysicalType | None
    arrow_type: pa.DataType | None  # None: literals cannot be converted
    spec: PhysicalSpec | None  # None: values cannot be hashed as the writer did
    logical: str  # a short description, e.g. "DECIMAL(10,2) as INT64"
    order: str | None  # statistics order, None: do not use statistics
    bloom_ok: bool
    why_not: str = ""  # why the bloom filter (and dictionary) cannot be used
    repeated: bool = False
    required: bool = False


def _union(el: Struct, fid: int) -> tuple[int, Struct] | None:
    """The member (id, struct) of a one-member union field, or None."""
    f = el.field(fid)
    if f is None or not isinstance(f.value, Struct) or len(f.value.fields) != 1:
        return None
    member = f.value.fields[0]
    return member.id, member.value if isinstance(member.value, Struct) else Struct()


def column_type(leaf: LeafColumn) -> ColumnType:
    """Derive the :class:`ColumnType` of a schema leaf."""
    el = leaf.element
    ptype = leaf.physical_type
    logical = _union(el, 10)
    converted = el.get(6)
    if type(converted) is not int:  # a hostile footer can put any Thrift type here
        converted = None
    base = {"name": leaf.name, "repeated": leaf.repeated, "required": leaf.required}

    def make(arrow_type, spec, desc, order, bloom_ok=True, why_not=""):
        return ColumnType(
            physical_type=ptype,
            arrow_type=arrow_type,
            spec=spec,
            logical=desc,
            order=order,
            bloom_ok=bloom_ok and spec is not None,
            why_not=why_not,
            **base,
        )

    def unsupported(desc: str, why: str):
        return make(None, None, desc, None, False, why)

    if ptype is None:
        return unsupported(f"physical type code {el.get(1)}", "unknown physical type")
    lid, lstruct = logical if logical is not None else (None, Struct())

    # Decimals, any storage.
    if lid == _DECIMAL or converted == _CONVERTED_DECIMAL:
        scale = lstruct.get(1) if lid == _DECIMAL else el.get(7)
        precision = lstruct.get(2) if lid == _DECIMAL else el.get(8)
        if (
            not isinstance(scale, int)
            or not isinstance(precision, int)
            or not (0 < precision <= 76 and 0 <= scale <= precision)
        ):
            return unsupported("DECIMAL", f"invalid decimal precision {precision} scale {scale}")
        arrow = (pa.decimal128 if precision <= 38 else pa.decimal256)(precision, scale)
        desc = f"DECIMAL({precision},{scale}) as {ptype}"
        if ptype in (P.INT32, P.INT64):
            return make(arrow, PhysicalSpec(ptype), desc, SIGNED)
        if ptype is P.FIXED_LEN_BYTE_ARRAY and isinstance(leaf.type_length, int):
            if leaf.type_length < 1 or leaf.type_length > 32:
                return unsupported(desc, f"FLBA length {leaf.type_length} for a decimal")
            return make(arrow, PhysicalSpec(ptype, leaf.type_length), desc, DECIMAL_BE)
        if ptype is P.BYTE_ARRAY:
            return make(
                arrow,
                None,
                desc,
                DECIMAL_BE,
                False,
                "BYTE_ARRAY decimals have no canonical byte form to hash",
            )
        return unsupported(desc, f"decimal stored as {ptype}")

    if ptype is P.BOOLEAN:
        return make(
            pa.bool_(),
            PhysicalSpec(ptype),
            "BOOLEAN",
            SIGNED,
            False,
            "BOOLEAN bloom filters are never trusted (parquet-java writes them all zeros)",
        )
    if ptype is P.INT96:
        return make(pa.timestamp("ns"), PhysicalSpec(ptype), "INT96 timestamp", None)
    if ptype is P.FLOAT:
        return make(pa.float32(), PhysicalSpec(ptype), "FLOAT", FLOAT)
    if ptype is P.DOUBLE:
        return make(pa.float64(), PhysicalSpec(ptype), "DOUBLE", FLOAT)

    if ptype in (P.INT32, P.INT64):
        width = 32 if ptype is P.INT32 else 64
        if lid == _DATE or converted == _CONVERTED_DATE:
            return make(pa.date32(), PhysicalSpec(ptype), "DATE", SIGNED)
        if lid in (_TIME, _TIMESTAMP):
            unit = _UNITS.get((_union(lstruct, 2) or (None,))[0])
            utc = bool(lstruct.get(1))
            if unit is None:
                return unsupported("TIME/TIMESTAMP", "unknown time unit")
            spec = PhysicalSpec(ptype, time_unit=unit)
            if lid == _TIME:
                arrow = pa.time32(unit) if unit == "ms" else pa.time64(unit)
                return make(arrow, spec, f"TIME({unit})", SIGNED)
            arrow = pa.timestamp(unit, tz="UTC" if utc else None)
            return make(arrow, spec, f"TIMESTAMP({unit}, utc={utc})", SIGNED)
        if converted in _CONVERTED_TIME:
            unit = _CONVERTED_TIME[converted]
            arrow = pa.time32(unit) if unit == "ms" else pa.time64(unit)
            return make(arrow, PhysicalSpec(ptype, time_unit=unit), f"TIME({unit})", SIGNED)
        if converted in _CONVERTED_TIMESTAMP:  # converted timestamps are UTC instants
            unit = _CONVERTED_TIMESTAMP[converted]
            arrow = pa.timestamp(unit, tz="UTC")
            return make(arrow, PhysicalSpec(ptype, time_unit=unit), f"TIMESTAMP({unit})", SIGNED)
        bits, signed = width, True
        if lid == _INTEGER:
            bits, signed = lstruct.get(1), bool(lstruct.get(2))
        elif converted in _CONVERTED_INT:
            bits, signed = _CONVERTED_INT[converted]
        if bits not in (8, 16, 32, 64) or bits > width:
            return unsupported(f"INT({bits})", f"integer width {bits} in {ptype}")
        arrow = getattr(pa, f"{'' if signed else 'u'}int{bits}")()
        desc = f"INT({bits}, {'signed' if signed else 'unsigned'})"
        return make(arrow, PhysicalSpec(ptype), desc, SIGNED if signed else UNSIGNED)

    if ptype is P.BYTE_ARRAY:
        if lid in (_STRING, _ENUM, _JSON) or converted in _CONVERTED_STRING:
            return make(pa.string(), PhysicalSpec(ptype), "STRING", BYTES)
        return make(pa.binary(), PhysicalSpec(ptype), "BINARY", BYTES)

    # FIXED_LEN_BYTE_ARRAY
    length = leaf.type_length
    if not isinstance(length, int) or length <= 0:
        return unsupported("FIXED_LEN_BYTE_ARRAY", f"invalid type_length {length}")
    if lid == _FLOAT16:
        return unsupported("FLOAT16", "FLOAT16 literals are not supported yet")
    if converted == _CONVERTED_INTERVAL:
        return unsupported("INTERVAL", "INTERVAL has no literal form")
    spec = PhysicalSpec(ptype, length)
    if lid == _UUID:
        return make(pa.uuid() if length == 16 else pa.binary(length), spec, "UUID", BYTES)
    return make(pa.binary(length), spec, f"FIXED_LEN_BYTE_ARRAY({length})", BYTES)
