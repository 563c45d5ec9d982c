"""``bloomskip inspect``: the bloom filters of a Parquet or ORC file, or a Lance dataset.

Parquet: :func:`bloomskip.parquet.inspect.inspect_file`; ORC:
:func:`bloomskip.orc.inspect.inspect_orc`; a Lance dataset directory: the BLOOMFILTER
indexes Lance wrote (:meth:`bloomskip.lance.LanceIndex.describe`). Each report prints as
a table (the ``*_text`` function next to its producer) or, with ``--json``, as is.
"""

from __future__ import annotations

import argparse

from bloomskip import formats
from bloomskip.cli import args as types
from bloomskip.cli.common import command, emit, emit_json, format_options
from bloomskip.cli.keys import KEYS_HELP, add_key_options
from bloomskip.cli.options import add_file, add_json

HELP = "the bloom filters in a Parquet/ORC file or a Lance dataset"

DESCRIPTION = """\
The bloom filters of a Parquet or ORC file, per row group and column: whether a filter
is there (or why it cannot be used: damaged, or locked by encryption), its size, fill
ratio, estimated distinct values, predicted false-positive rate and position in the
file. For a Lance dataset directory: its BLOOMFILTER indexes, per zone.

Answers "does this file have bloom filters, and are they any good?" - a filter filled
over about half its bits no longer rules much out."""

EPILOG = (
    """\
examples:
  bloomskip inspect events.parquet
  bloomskip inspect events.parquet --json | jq '.row_groups[0]'
  bloomskip inspect events.lance
  bloomskip inspect spark.parquet --master-key kf=AAECAwQFBgcICQoLDA0ODw== --master-key kc=...

"""
    + KEYS_HELP
)


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "inspect", run, HELP, DESCRIPTION, EPILOG)
    add_file(
        p, help="a Parquet or ORC file, or a Lance dataset directory",
        type=types.data_file_or_dataset,
    )  # fmt: skip
    add_json(p)
    add_key_options(p)


def run(args: argparse.Namespace) -> int:
    from bloomskip.lance.dataset import is_lance_dataset

    if is_lance_dataset(args.file):
        from bloomskip.lance import open_lance_index
        from bloomskip.lance.reader import describe_text

        report = open_lance_index(args.file).describe()
        text = describe_text
    else:
        fmt = formats.of_path(args.file)
        report = fmt.inspect(args.file, **format_options(fmt, args))
        text = fmt.inspect_text
    if args.json:
        emit_json(report)
    else:
        emit(text(report))
    return 0
