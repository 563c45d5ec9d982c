"""``bloomskip hash``: the 64-bit hash a Parquet bloom filter stores for values.

xxHash64 (seed 0) of the PLAIN bytes of the column's Parquet physical type
(:mod:`bloomskip.hashing`), or of the Arrow-width bytes with ``--encoding arrow`` (Lance).
Each value is read per ``--type`` by :func:`bloomskip.cli.args.hash_value`.
"""

from __future__ import annotations

import argparse

from bloomskip.cli import args as types
from bloomskip.cli.common import emit
from bloomskip.errors import InvalidParameterError

#: --type names and their Arrow types (built lazily: pyarrow loads only when hashing).
TYPE_NAMES = (
    "string", "binary", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "float", "double", "date",
)  # fmt: skip

DESCRIPTION = """\
The hash a Parquet bloom filter stores for each VALUE, as a column of TYPE hashes it:
xxHash64 (seed 0) of the PLAIN bytes of its Parquet physical type (int8 and int16
widen to INT32, dates are INT32 days, strings their UTF-8 bytes). With --encoding
arrow, of the Arrow-width bytes instead, as Lance's zone index hashes.

Prints one line per value: the value, the physical type, the hash in decimal and hex.
Booleans are true/false, t/f, yes/no or 1/0; dates YYYY-MM-DD; binary values hex."""

EPILOG = """\
examples:
  bloomskip hash user_000123                   a string
  bloomskip hash --type int16 7 -3             hashed as INT32, as Parquet stores int16
  bloomskip hash --type date 2024-01-31 --encoding arrow"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "hash",
        help="the xxHash64 a Parquet bloom filter stores for a value",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    p.add_argument(
        "--type", choices=TYPE_NAMES, default="string", metavar="TYPE",
        help=f"the column type: {', '.join(TYPE_NAMES)} (default string)",
    )  # fmt: skip
    p.add_argument(
        "--encoding", choices=("parquet", "arrow"), default="parquet",
        help="parquet: PLAIN bytes of the physical type (default); arrow: as Lance",
    )  # fmt: skip
    p.add_argument("values", nargs="+", metavar="VALUE", help="a value (-- before one like -inf)")
    p.set_defaults(func=run)


def _arrow_type(name: str):
    import pyarrow as pa

    return {
        "bool": pa.bool_(), "int8": pa.int8(), "int16": pa.int16(), "int32": pa.int32(),
        "int64": pa.int64(), "uint8": pa.uint8(), "uint16": pa.uint16(),
        "uint32": pa.uint32(), "uint64": pa.uint64(), "float": pa.float32(),
        "double": pa.float64(), "string": pa.string(), "binary": pa.binary(),
        "date": pa.date32(),
    }[name]  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from bloomskip.hashing import hash_values
    from bloomskip.hashing.arrow import parquet_spec

    parse = types.hash_value(args.type)
    values = []
    for text in args.values:
        try:
            values.append(parse(text))
        except argparse.ArgumentTypeError as e:
            raise InvalidParameterError(f"hash --type {args.type}: {e}") from None
    t = _arrow_type(args.type)
    hashes = hash_values(values, type=t, encoding=args.encoding)
    physical = parquet_spec(t).physical_type.value if args.encoding == "parquet" else "arrow"
    emit(
        "\n".join(
            f"{v}\t{physical}\t{int(h)}\t0x{int(h):016x}"
            for v, h in zip(args.values, hashes, strict=True)
        )
    )
    return 0
