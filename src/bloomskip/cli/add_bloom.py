"""``bloomskip add-bloom``: add bloom filters to a Parquet file without rewriting its data.

:func:`bloomskip.parquet.write.add_bloom_filters`: data pages copied byte for byte, the
filters and a new footer appended; without DST the file is replaced atomically.
"""

from __future__ import annotations

import argparse
import sys

from bloomskip.cli import args as types
from bloomskip.cli.common import emit, emit_json
from bloomskip.cli.keys import KEYS_HELP, add_key_options, decryption

DESCRIPTION = """\
Add a bloom filter to each row group of the chosen columns, sized for its exact number
of distinct values at the target FPP. The data pages are copied byte for byte; the
filters and a new footer are appended. Without DST the file is replaced atomically.
Answers nothing: it makes later lookups (prune, probe, Spark, DuckDB, pyarrow) skip
row groups.

Sizing: --policy parquet (default) is the formula of parquet-java, arrow-rs, Arrow C++
and DuckDB, which can miss the target FPP a little; --policy putze always meets it.
--ndv auto skips counting the distinct values: each filter is built for as many as the
largest row group has rows, then folded down to the target FPP, as arrow-rs and Arrow
C++ do (their filters, byte for byte); --ndv N builds for N instead. The distinct
counts reported are then estimates.

Columns that already have filters are kept unless --replace; BOOLEAN columns never get
one (no reader uses them)."""

EPILOG = (
    """\
examples:
  bloomskip add-bloom events.parquet --column user_id
  bloomskip add-bloom in.parquet out.parquet -c user_id -c sku --fpp 0.001
  bloomskip add-bloom events.parquet -c user_id --policy putze
  bloomskip add-bloom events.parquet -c user_id --ndv auto --fpp 0.05
  bloomskip add-bloom enc.parquet -c ssn --keys keys.json

An encrypted file needs its footer key (the footer is encrypted or signed again)
and the key of each encrypted column indexed; their filters are encrypted with
the column's key, plaintext columns get plaintext filters.

"""
    + KEYS_HELP
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "add-bloom",
        help="add bloom filters to a Parquet file without rewriting its data",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    p.add_argument("src", metavar="SRC", type=types.data_file, help="the Parquet file to read")
    p.add_argument(
        "dst",
        nargs="?",
        metavar="DST",
        type=types.output_file,
        help="where to write (default: replace SRC)",
    )
    p.add_argument(
        "--column", "-c", action="append", dest="columns", metavar="C", type=types.column,
        help="a column to index, repeatable (default: every column a filter can serve)",
    )  # fmt: skip
    p.add_argument("--fpp", type=types.fpp, default=0.01, help="target FPP (default 0.01)")
    p.add_argument(
        "--policy", choices=("parquet", "putze"), default="parquet",
        help="sizing: parquet (the writers' formula, default) or putze (meets the FPP)",
    )  # fmt: skip
    p.add_argument(
        "--ndv", type=types.ndv_or_auto, default=None, metavar="auto|N",
        help="build for N distinct values (auto: the largest row group's rows), then fold "
        "to the FPP, instead of counting them (default: count)",
    )  # fmt: skip
    p.add_argument("--replace", action="store_true", help="rebuild filters already there")
    p.add_argument("--progress", action="store_true", help="progress bar even without a TTY")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_key_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bloomskip.parquet.write import add_bloom_filters

    result = add_bloom_filters(
        args.src,
        args.dst,
        args.columns,
        args.fpp,
        replace=args.replace,
        policy=args.policy,
        ndv=args.ndv,
        progress=args.progress or sys.stderr.isatty(),
        decryption=decryption(args),
    )
    if args.json:
        emit_json(result.to_dict())
    else:
        emit(result.to_text())
    return 0
