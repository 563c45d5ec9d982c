"""``bloomskip hash``: the 64-bit hash a Parquet bloom filter stores for values.

xxHash64 (seed 0) of the PLAIN bytes of the column's Parquet physical type
(:mod:`bloomskip.hashing`), or of the Arrow-width bytes with ``--encoding arrow`` (Lance),
or the initial draft's MurmurHash3 with ``--hash murmur3_x64_128``. Every Arrow type
:func:`bloomskip.parquet.write.write_table` hashes has a ``--type`` (temporal types with
``--unit``, decimals with ``--precision``/``--scale``), and ``--physical`` says how a file
stores the column when that is not the default (INT96 timestamps, FLBA decimals). Each
value is read by :func:`bloomskip.cli.args.hash_value`.
"""

from __future__ import annotations

import argparse

from bloomskip.cli import args as types
from bloomskip.cli.common import command, emit, emit_json
from bloomskip.cli.options import add_encoding, add_json
from bloomskip.errors import InvalidParameterError

#: --type names (their Arrow types are built lazily: pyarrow loads only when hashing).
TYPE_NAMES = (
    "string", "binary", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "float16", "float", "double", "date", "time", "timestamp",
    "decimal", "uuid",
)  # fmt: skip

HELP = "the xxHash64 a Parquet bloom filter stores for a value"

DESCRIPTION = """\
The hash a Parquet bloom filter stores for each VALUE, as a column of TYPE hashes it:
xxHash64 (seed 0) of the PLAIN bytes of its Parquet physical type (int8 and int16
widen to INT32, dates are INT32 days, timestamps INT64 in their unit, decimals INT32,
INT64 or big-endian FIXED_LEN_BYTE_ARRAY by precision, strings their UTF-8 bytes).

--physical says how a file stores the column when that is not the default: INT96 for
Spark's timestamps, FIXED_LEN_BYTE_ARRAY[:N] for pyarrow's decimals, INT64 for a small
decimal stored wide. With --encoding arrow, the Arrow-width bytes are hashed instead,
as Lance's zone index does; with --hash murmur3_x64_128, the initial draft's hash
(MurmurHash3 x64_128, low 64 bits, seed 1361930890), which no released writer uses.

Prints one line per value: the value, the physical type, the hash in decimal and hex.
Booleans are true/false, t/f, yes/no or 1/0; dates YYYY-MM-DD; timestamps
YYYY-MM-DD[THH:MM[:SS[.fraction]]] with an optional Z or +HH:MM (converted to UTC);
times HH:MM[:SS[.fraction]]; binary values hex; UUIDs in their usual form."""

EPILOG = """\
examples:
  bloomskip hash user_000123                   a string
  bloomskip hash --type int16 7 -3             hashed as INT32, as Parquet stores int16
  bloomskip hash --type date 2024-01-31 --encoding arrow
  bloomskip hash --type timestamp --unit ms 2024-01-31T12:00:00.250Z
  bloomskip hash --type timestamp --unit ns --physical INT96 2024-01-31T12:00:00
  bloomskip hash --type decimal --precision 10 --scale 2 12.50 -3
  bloomskip hash --type decimal --precision 5 --scale 2 --physical FIXED_LEN_BYTE_ARRAY 1.25
  bloomskip hash --type uuid 12345678-1234-5678-1234-567812345678
  bloomskip hash --hash murmur3_x64_128 hello"""


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "hash", run, HELP, DESCRIPTION, EPILOG)
    p.add_argument(
        "--type", choices=TYPE_NAMES, default="string", metavar="TYPE",
        help=f"the column type: {', '.join(TYPE_NAMES)} (default string)",
    )  # fmt: skip
    p.add_argument(
        "--unit", choices=tuple(types.UNITS),
        help="unit of a timestamp or time column: s, ms, us (default) or ns",
    )  # fmt: skip
    p.add_argument(
        "--precision", type=types.PRECISION, metavar="P",
        help="digits of a decimal column (1 to 76; needed for --type decimal)",
    )  # fmt: skip
    p.add_argument(
        "--scale", type=types.SCALE, metavar="S",
        help="digits after the point of a decimal column (default 0)",
    )  # fmt: skip
    p.add_argument(
        "--physical", type=types.physical_spec, metavar="PHYSICAL",
        help=f"how the file stores the column, when not the default: {types.PHYSICAL_TYPES}",
    )  # fmt: skip
    add_encoding(
        p, "parquet", "parquet: PLAIN bytes of the physical type (default); arrow: as Lance"
    )
    p.add_argument(
        "--hash", choices=("xxhash64", "murmur3_x64_128"), default="xxhash64",
        help="xxhash64 (Parquet, default) or murmur3_x64_128 (the initial draft)",
    )  # fmt: skip
    p.add_argument("values", nargs="+", metavar="VALUE", help="a value (-- before one like -inf)")
    add_json(p, 'print one JSON object: {"physical", "hashes": [{"value", "hash", "hex"}]}')


def _arrow_type(args: argparse.Namespace):
    import pyarrow as pa

    name, unit = args.type, args.unit or "us"
    if name == "timestamp":
        return pa.timestamp(unit)
    if name == "time":
        return pa.time32(unit) if unit in ("s", "ms") else pa.time64(unit)
    if name == "decimal":
        p, s = args.precision, args.scale or 0
        return pa.decimal128(p, s) if p <= 38 else pa.decimal256(p, s)
    return {
        "bool": pa.bool_(), "int8": pa.int8(), "int16": pa.int16(), "int32": pa.int32(),
        "int64": pa.int64(), "uint8": pa.uint8(), "uint16": pa.uint16(),
        "uint32": pa.uint32(), "uint64": pa.uint64(), "float16": pa.float16(),
        "float": pa.float32(), "double": pa.float64(), "string": pa.string(),
        "binary": pa.binary(), "date": pa.date32(), "uuid": pa.binary(16),
    }[name]  # fmt: skip


def _check_options(args: argparse.Namespace) -> None:
    """Options that only some types take, and the ones a type needs."""
    if args.unit is not None and args.type not in ("timestamp", "time"):
        raise InvalidParameterError(f"hash --unit applies to timestamp and time, not {args.type}")
    if args.type != "decimal" and (args.precision is not None or args.scale is not None):
        raise InvalidParameterError(f"hash --precision/--scale apply to decimal, not {args.type}")
    if args.type == "decimal" and args.precision is None:
        raise InvalidParameterError("hash --type decimal needs --precision (and --scale)")
    if args.type == "decimal" and (args.scale or 0) > args.precision:
        raise InvalidParameterError(
            f"hash: --scale {args.scale} is larger than --precision {args.precision}"
        )
    if args.physical is not None and args.encoding == "arrow":
        raise InvalidParameterError("hash --physical applies to --encoding parquet only")


def _physical(args: argparse.Namespace, t):
    """The PhysicalSpec of ``--physical`` for the column type ``t`` (None: the default)."""
    from bloomskip.hashing.arrow import PhysicalSpec, decimal_flba_length, parquet_spec

    default = parquet_spec(t)
    if args.physical is None:
        return default
    name, length = args.physical
    if name == "FIXED_LEN_BYTE_ARRAY" and length is None:
        if args.type == "decimal":
            length = decimal_flba_length(args.precision)
        elif default.type_length is None:
            raise InvalidParameterError(
                f"hash --physical FIXED_LEN_BYTE_ARRAY: give the length of a {args.type} "
                "column, e.g. FIXED_LEN_BYTE_ARRAY:16"
            )
        else:
            length = default.type_length
    return PhysicalSpec(name, type_length=length, time_unit=default.time_unit)


def _values(args: argparse.Namespace, t):
    """The VALUEs as one Arrow array of type ``t``."""
    import pyarrow as pa

    parse = types.hash_value(
        args.type, unit=args.unit or "us", precision=args.precision or 38, scale=args.scale or 0
    )
    values = []
    for text in args.values:
        try:
            values.append(parse(text))
        except argparse.ArgumentTypeError as e:
            raise InvalidParameterError(f"hash --type {args.type}: {e}") from None
    if args.type in ("timestamp", "time"):  # counts of the unit: view them as the type
        storage = pa.int32() if pa.types.is_time32(t) else pa.int64()
        return pa.array(values, storage).view(t)
    return pa.array(values, t)


def run(args: argparse.Namespace) -> int:
    from bloomskip.hashing import hash_values
    from bloomskip.hashing.physical import PhysicalType

    _check_options(args)
    t = _arrow_type(args)
    array = _values(args, t)
    if args.encoding == "arrow":
        physical, label = None, "arrow"
    else:
        physical = _physical(args, t)
        label = physical.physical_type.value
        if physical.physical_type is PhysicalType.FIXED_LEN_BYTE_ARRAY:
            label += f"({physical.type_length})"
    hashes = hash_values(array, physical=physical, encoding=args.encoding, hash=args.hash)
    if args.json:
        rows = zip(args.values, hashes, strict=True)
        got = [{"value": v, "hash": int(h), "hex": f"0x{int(h):016x}"} for v, h in rows]
        emit_json({"physical": label, "hashes": got})
        return 0
    emit(
        "\n".join(
            f"{v}\t{label}\t{int(h)}\t0x{int(h):016x}"
            for v, h in zip(args.values, hashes, strict=True)
        )
    )
    return 0
