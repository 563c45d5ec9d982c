"""``bloomskip prune``: the row groups of a Parquet or ORC file that may hold matching rows.

Parquet: :func:`bloomskip.parquet.prune.prune` (statistics, dictionary, bloom filter);
ORC: :func:`bloomskip.orc.prune.prune` (statistics, bloom filter), row group by row group.
"""

from __future__ import annotations

import argparse

from bloomskip import formats
from bloomskip.cli import args as types
from bloomskip.cli.common import command, format_options, report
from bloomskip.cli.keys import KEYS_HELP, add_key_options
from bloomskip.cli.options import add_file, add_json, add_zone

HELP = "which row groups may hold rows matching a SQL predicate"

DESCRIPTION = """\
Decide for each row group whether it may hold a row matching a SQL predicate, using
min/max statistics, then the dictionary (Parquet), then the bloom filter, in Parquet
and ORC files alike (ORC units: row groups, stripe by stripe), and say why. Answers
"which row groups must a reader open for this query?"; bloomskip never skips a row
group that matches.

Predicates: col = lit, col IN (...), IS [NOT] NULL, !=, NOT IN, AND, OR, NOT; anything
else never prunes. Literals: 'text', 42, 1.5, DATE '2024-01-31', TIMESTAMP '2024-01-31
12:00:00' (against a column of instants: in --zone, or in UTC and this machine's
zone; against a local one: its wall clock), X'00ff', true/false, NULL."""

EPILOG = (
    """\
examples:
  bloomskip prune events.parquet --where "user_id = 'u_000123'"
  bloomskip prune events.parquet --where "id IN (7, 9) AND day IS NOT NULL" --json
  bloomskip prune enc.parquet -w "ssn = '123-45-6789'" \\
      --footer-key 00112233445566778899aabbccddeeff \\
      --column-key ssn=0f0e0d0c0b0a09080706050403020100

"""
    + KEYS_HELP
)


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "prune", run, HELP, DESCRIPTION, EPILOG)
    add_file(p)
    p.add_argument(
        "--where", "-w", required=True, metavar="SQL", type=types.sql, help="the SQL predicate"
    )
    p.add_argument(
        "--stages", type=types.stages,
        help="comma-separated evidence to use: statistics,dictionary,bloom (default: all)",
    )  # fmt: skip
    add_zone(p)
    add_json(p)
    add_key_options(p)


def run(args: argparse.Namespace) -> int:
    fmt = formats.of_path(args.file)
    options = format_options(fmt, args)
    if args.stages:
        options["stages"] = args.stages
    if args.zone:
        options["zone"] = args.zone
    result = fmt.prune(args.file, args.where, **options)
    return report(result, args.json)
