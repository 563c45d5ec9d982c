"""What an ORC column holds for pruning: its logical Arrow type and what its filter hashes.

:func:`schema_of` reads the file's column tree (:class:`~bloomskip.orc.file.Column`) into
the binding schema of :mod:`bloomskip.expr` (dotted name -> logical type) and one
:class:`OrcColumn` per column:

* ``arrow_type`` - the type a literal is converted to: the integer widths, floats,
  strings (also for CHAR/VARCHAR), binary, ``date32``, ``decimal128(p, s)``,
  ``timestamp[ns]`` for ``TIMESTAMP`` (the writer's wall clock) and ``timestamp[ns,
  UTC]`` for ``TIMESTAMP_INSTANT``; a Spark ``TIMESTAMP_NTZ`` column (a ``LONG`` of
  microseconds with the attribute ``spark.sql.catalyst.type=timestamp_ntz``) binds as
  ``timestamp[us]``. None for kinds no literal compares with (lists, maps, unions,
  structs, Hive 0.11 decimals without precision);
* ``orc_type`` - the :class:`~bloomskip.orc.types.OrcType` the filter hashes, or None;
* where it sits: its struct ancestors, and whether it is inside a list, map or union.

Type kinds and attributes follow ``orc_proto.proto`` (apache/orc-format).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from bloomskip.expr.bind import Column, schema_of_columns
from bloomskip.orc.types import (
    BINARY,
    BOOLEAN,
    BYTE,
    CHAR,
    DATE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INT,
    KIND_NAMES,
    LIST,
    LONG,
    MAP,
    SHORT,
    STRING,
    TIMESTAMP,
    TIMESTAMP_INSTANT,
    UNION,
    VARCHAR,
    OrcKind,
    OrcType,
)

if TYPE_CHECKING:
    from bloomskip.orc.file import Column as TreeColumn
    from bloomskip.orc.file import OrcFile

_NTZ_ATTRIBUTE = ("spark.sql.catalyst.type", "timestamp_ntz")


@dataclass(frozen=True)
class OrcColumn:
    """How bloomskip reads one ORC column: its logical type for literals, the filter's
    view of it, where it sits in the tree."""

    id: int
    name: str
    kind: int | None  # Type.Kind
    arrow_type: pa.DataType | None  # what literals convert to; None: not comparable
    orc_type: OrcType | None  # what the filter hashes; None: nothing bloomskip can hash
    ancestors: tuple[int, ...]  # struct ancestors, outermost first (root excluded)
    nested: str | None = None  # "list", "map" or "union" when inside one
    ntz: bool = False  # Spark TIMESTAMP_NTZ: a LONG of microseconds

    @property
    def kind_name(self) -> str:
        return KIND_NAMES.get(self.kind, f"kind {self.kind}")  # type: ignore[arg-type]


def schema_of(orc: OrcFile) -> tuple[dict[str, Column], list[OrcColumn]]:
    """The binding schema (dotted name -> logical type) and each column's reading."""
    infos: list[OrcColumn] = []
    for c in orc.columns:
        parent = infos[c.parent] if c.parent is not None else None
        nested = None
        ancestors: tuple[int, ...] = ()
        if parent is not None:
            nested = parent.nested or {LIST: "list", MAP: "map", UNION: "union"}.get(
                parent.kind  # type: ignore[arg-type]
            )
            ancestors = (*parent.ancestors, parent.id) if parent.id != 0 else ()
        arrow_type, orc_type, ntz = _types(c)
        infos.append(OrcColumn(c.id, c.name, c.kind, arrow_type, orc_type, ancestors, nested, ntz))
    schema = schema_of_columns(
        (i.name, Column(i.arrow_type, i.id, jvm_clock=i.kind == TIMESTAMP)) for i in infos[1:]
    )
    return schema, infos


def _types(c: TreeColumn) -> tuple[pa.DataType | None, OrcType | None, bool]:
    k = c.kind
    simple = {
        BOOLEAN: pa.bool_(),
        BYTE: pa.int8(),
        SHORT: pa.int16(),
        INT: pa.int32(),
        LONG: pa.int64(),
        FLOAT: pa.float32(),
        DOUBLE: pa.float64(),
        STRING: pa.string(),
        BINARY: pa.binary(),
        DATE: pa.date32(),
        # ORC keeps nanoseconds; literals outside 1677..2262 are then Unknown (may match)
        TIMESTAMP: pa.timestamp("ns"),
        TIMESTAMP_INSTANT: pa.timestamp("ns", tz="UTC"),
    }
    if k == LONG and _NTZ_ATTRIBUTE in c.type.attributes:
        return pa.timestamp("us"), OrcType(OrcKind.LONG), True
    if k in simple:
        return simple[k], OrcType.parse(k), False
    if k in (VARCHAR, CHAR):
        n = c.maximum_length
        if n is None or not 1 <= n <= 2**31 - 1:
            return pa.string(), None, False  # cannot reproduce the writer's cut or padding
        return pa.string(), OrcType.parse(k, n), False
    if k == DECIMAL:
        p, s = c.precision, c.scale
        if p is None or s is None or not (1 <= p <= 38 and 0 <= s <= p):
            return None, None, False  # Hive 0.11 decimals had no precision
        return pa.decimal128(p, s), OrcType(OrcKind.DECIMAL), False
    return None, None, False
