"""``bloomskip add-bloom``: add bloom filters to a Parquet or ORC file without rewriting
its data.

The file's format (:mod:`bloomskip.formats`) picks the writer: Parquet,
:func:`bloomskip.parquet.write.add_bloom_filters` (data pages copied byte for byte, the
filters and a new footer appended); ORC, :func:`bloomskip.orc.write.add_bloom_filters`
(data streams copied byte for byte, BLOOM_FILTER_UTF8 streams added to each stripe's
index). Without DST the file is replaced atomically.
"""

from __future__ import annotations

import argparse
import sys

from bloomskip.cli import args as types
from bloomskip.cli.common import command, emit, emit_json
from bloomskip.cli.keys import KEYS_HELP, add_key_options, decryption
from bloomskip.cli.options import add_columns, add_file, add_fpp, add_json
from bloomskip.sbbf.sizing import POLICIES

HELP = "add bloom filters to a Parquet or ORC file without rewriting its data"

DESCRIPTION = """\
Add a bloom filter to each row group of the chosen columns of a Parquet or ORC file.
The data is copied byte for byte. Without DST the file is replaced atomically. Answers
nothing: it makes later lookups (prune, probe, Spark, DuckDB, ORC's readers) skip row
groups.

Parquet: each filter is sized for its row group's exact number of distinct values at
the target FPP (default 0.01); the filters and a new footer are appended.

ORC: each stripe gets the BLOOM_FILTER_UTF8 streams ORC Java writes, one filter per
row group sized for the row index stride at the target FPP (default 0.05, as ORC's
writers), in its index; the file needs a row index. --policy, --ndv and the key options
are for Parquet files.

Parquet sizing: --policy parquet (default) is the formula of parquet-java, arrow-rs, Arrow C++
and DuckDB, which can miss the target FPP a little; --policy putze always meets it.
--ndv auto skips counting the distinct values: each filter is built for as many as the
largest row group has rows, then folded down to the target FPP, as arrow-rs and Arrow
C++ do (their filters, byte for byte); --ndv N builds for N instead. The distinct
counts reported are then estimates.

Columns that already have filters are kept unless --replace; BOOLEAN columns never get
one (no reader uses them)."""

#: Options that only Parquet files take, and how to tell they were given.
_PARQUET_ONLY = ("--policy", "--ndv", "key options")

EPILOG = (
    """\
examples:
  bloomskip add-bloom events.parquet --column user_id
  bloomskip add-bloom in.parquet out.parquet -c user_id -c sku --fpp 0.001
  bloomskip add-bloom events.parquet -c user_id --policy putze
  bloomskip add-bloom events.parquet -c user_id --ndv auto --fpp 0.05
  bloomskip add-bloom enc.parquet -c ssn --keys keys.json
  bloomskip add-bloom events.orc -c user_id --fpp 0.01

An encrypted file needs its footer key (the footer is encrypted or signed again)
and the key of each encrypted column indexed; their filters are encrypted with
the column's key, plaintext columns get plaintext filters.

"""
    + KEYS_HELP
)


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "add-bloom", run, HELP, DESCRIPTION, EPILOG)
    add_file(p, "src", "the Parquet or ORC file to read")
    p.add_argument(
        "dst", nargs="?", metavar="DST", type=types.output_file,
        help="where to write (default: replace SRC)",
    )  # fmt: skip
    add_columns(p, "a column to index, repeatable (default: every column a filter can serve)")
    add_fpp(p, None, "target FPP (default 0.01 for Parquet, 0.05 for ORC)")
    p.add_argument(
        "--policy", choices=POLICIES,
        help="Parquet sizing: parquet (the writers' formula, default) or putze (meets the FPP)",
    )  # fmt: skip
    p.add_argument(
        "--ndv", type=types.ndv_or_auto, metavar="auto|N",
        help="build for N distinct values (auto: the largest row group's rows), then fold "
        "to the FPP, instead of counting them (default: count)",
    )  # fmt: skip
    p.add_argument("--replace", action="store_true", help="rebuild filters already there")
    p.add_argument("--progress", action="store_true", help="progress bar even without a TTY")
    add_json(p)
    add_key_options(p)


def run(args: argparse.Namespace) -> int:
    from bloomskip import formats

    progress = args.progress or sys.stderr.isatty()
    if formats.of_path(args.src).name == "orc":
        result = _run_orc(args, progress)
    else:
        from bloomskip.parquet.write import add_bloom_filters

        result = add_bloom_filters(
            args.src,
            args.dst,
            args.columns,
            0.01 if args.fpp is None else args.fpp,
            replace=args.replace,
            policy=args.policy or "parquet",
            ndv=args.ndv,
            progress=progress,
            decryption=decryption(args),
        )
    if args.json:
        emit_json(result.to_dict())
    else:
        emit(result.to_text())
    return 0


def _run_orc(args: argparse.Namespace, progress: bool):
    from bloomskip.errors import InvalidParameterError
    from bloomskip.orc.write import DEFAULT_FPP, add_bloom_filters

    given = (args.policy is not None, args.ndv is not None, decryption(args) is not None)
    wrong = [name for name, g in zip(_PARQUET_ONLY, given, strict=True) if g]
    if wrong:
        raise InvalidParameterError(
            f"{args.src} is an ORC file: {', '.join(wrong)} apply to Parquet files only"
        )
    return add_bloom_filters(
        args.src,
        args.dst,
        args.columns,
        DEFAULT_FPP if args.fpp is None else args.fpp,
        replace=args.replace,
        progress=progress,
    )
