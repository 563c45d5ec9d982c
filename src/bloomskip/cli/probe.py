"""``bloomskip probe``: ask each row group's bloom filter whether values may be present.

Parquet: :func:`bloomskip.parquet.prune.probe`; ORC: :func:`bloomskip.orc.prune.probe`.
Each VALUE is converted to the column's type first, as ``prune`` converts literals.
"""

from __future__ import annotations

import argparse

from bloomskip import formats
from bloomskip.cli import args as types
from bloomskip.cli.common import command, format_options, report
from bloomskip.cli.keys import KEYS_HELP, add_key_options
from bloomskip.cli.options import add_file, add_json

HELP = "which row groups' bloom filters rule out some values"

DESCRIPTION = """\
For each row group of a Parquet or ORC file: 'absent' (the bloom filter rules out every
VALUE), 'maybe' (some VALUE may be present) or 'no filter', with the answer per value.
Answers "which row groups could hold these values?" from the filters alone (prune also
uses statistics and dictionaries).

VALUEs are converted to the column's type first, as prune does: for string columns a
VALUE is the text itself; otherwise it is a SQL literal (42, 1.5, DATE '2024-01-31',
X'00ff')."""

EPILOG = (
    """\
examples:
  bloomskip probe events.parquet --column user_id u_000123 u_999
  bloomskip probe events.parquet -c day "DATE '2024-01-31'" --json
  bloomskip probe enc.parquet -c ssn 123-45-6789 --keys keys.json

"""
    + KEYS_HELP
)


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "probe", run, HELP, DESCRIPTION, EPILOG)
    add_file(p)
    p.add_argument("--column", "-c", required=True, type=types.column, help="the column")
    p.add_argument(
        "values", nargs="+", metavar="VALUE", type=types.utf8_text, help="a value to look for"
    )
    add_json(p)
    add_key_options(p)


def _literal(text: str, column_type):
    """A VALUE: raw text for string columns, otherwise a SQL literal or, failing that, text."""
    import pyarrow as pa

    from bloomskip.expr.expressions import Literal
    from bloomskip.expr.sql import parse_literal

    if column_type is not None and (
        pa.types.is_string(column_type) or pa.types.is_large_string(column_type)
    ):
        return Literal("string", text)
    return parse_literal(text) or Literal("string", text)


def run(args: argparse.Namespace) -> int:
    from bloomskip.expr.bind import resolve

    fmt = formats.of_path(args.file)
    options = format_options(fmt, args)
    column_type = resolve(args.column, fmt.binding_schema(args.file, **options)).type
    values = [_literal(v, column_type) for v in args.values]
    result = fmt.probe(args.file, args.column, values, **options)
    return report(result, args.json)
