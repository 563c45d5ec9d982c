"""The ORC column kinds and writers bloomskip models, as its filters and pruning name them.

* the ``Type.Kind`` numbers of ORC's ``orc_proto.proto`` (apache/orc-format) as the
  file's ``Type`` messages hold them (:data:`KIND_NAMES`, ``LONG``, ``DECIMAL``, ...);
* :class:`OrcKind` - the same kinds by lower-case name, with their protobuf numbers;
* :class:`OrcType` - a kind with the length CHAR/VARCHAR need, parsed from ORC's type
  names (``"bigint"``, ``"varchar(10)"``, ``"decimal(10,2)"``, ``"timestamp with local
  time zone"``), the kind names or the ``Type.Kind`` numbers;
* :class:`Writer` - whose writer quirks a filter reproduces (ORC Java, ORC C++, ORC C++
  behind Arrow's adapter).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bloomskip.errors import InvalidParameterError, UnsupportedTypeError

#: How a variable-length value is fed to the filter (the kernels' ``mode``).
VAR_RAW = 0  # STRING, BINARY: the bytes as they are
VAR_TRUNCATE = 1  # VARCHAR(n): at most n characters
VAR_PAD = 2  # CHAR(n): exactly n characters, padded with ' ' (one byte per pad)

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

# Type.Kind numbers
BOOLEAN, BYTE, SHORT, INT, LONG, FLOAT, DOUBLE, STRING, BINARY, TIMESTAMP = range(10)
LIST, MAP, STRUCT, UNION, DECIMAL, DATE, VARCHAR, CHAR, TIMESTAMP_INSTANT = range(10, 19)
INTEGERS = (BYTE, SHORT, INT, LONG)
TEXT = (STRING, VARCHAR, CHAR)
TIMESTAMPS = (TIMESTAMP, TIMESTAMP_INSTANT)
#: ``Type.Kind`` names by number, with the kinds of ORC 2.x bloomskip does not read.
KIND_NAMES = {i: k.name for i, k in enumerate(_KINDS)} | {19: "GEOMETRY", 20: "GEOGRAPHY"}
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
