"""The arguments several commands share, one function each, so that an option means,
parses and reads the same wherever it appears.

* :func:`add_file` - the Parquet/ORC file a command reads (``inspect``, ``probe``,
  ``prune``, ``add-bloom``);
* :func:`add_columns` - ``--column/-c C``, repeatable (``add-bloom``, ``index build``);
* :func:`add_fpp` - ``--fpp``, a target false-positive probability (``size``, ``demo``,
  ``add-bloom``, ``index build``);
* :func:`add_workers` - ``--threads N`` and ``--spark MASTER``, how the files are read
  (``index build``, ``index refresh``);
* :func:`add_index` - the ``INDEX`` directory of an ``index`` action;
* :func:`add_encoding` - ``--encoding parquet|arrow``, the bytes values are hashed as
  (``hash``, ``index build``);
* :func:`add_json` - ``--json``, the result as one JSON object (every command but ``hash``).

The values are checked by the ``type=`` functions of :mod:`.args`; the key options of
encrypted Parquet files are :func:`bloomskip.cli.keys.add_key_options`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from bloomskip.cli import args as types

SPARK_HELP = (
    "read the files in Spark tasks on this master (local[*], spark://host:7077, yarn, ...); "
    "needs bloomskip[spark] and Java 17+"
)


def add_file(
    p: argparse.ArgumentParser,
    dest: str = "file",
    help: str = "a Parquet or ORC file",
    type: Callable[[str], str] = types.data_file,
) -> None:
    """The positional file argument ``dest`` (its metavar: ``dest`` in capitals)."""
    p.add_argument(dest, metavar=dest.upper(), type=type, help=help)


def add_columns(p: argparse.ArgumentParser, help: str, required: bool = False) -> None:
    """``--column/-c C``, repeatable, into ``args.columns``."""
    p.add_argument(
        "--column", "-c", action="append", dest="columns", required=required, metavar="C",
        type=types.column, help=help,
    )  # fmt: skip


def add_fpp(p: argparse.ArgumentParser, default: float | None, help: str = "") -> None:
    """``--fpp P``; ``help`` by default says the default."""
    p.add_argument(
        "--fpp", type=types.fpp, default=default, help=help or f"target FPP (default {default})"
    )


def add_workers(p: argparse.ArgumentParser) -> None:
    """``--threads N`` (reader threads) and ``--spark MASTER`` (Spark tasks instead)."""
    p.add_argument(
        "--threads", metavar="N", type=types.THREADS, help="reader threads (default: CPU count)"
    )
    p.add_argument("--spark", metavar="MASTER", type=types.spark_master, help=SPARK_HELP)


ZONE_HELP = (
    "the time zone of timestamp literals without an offset, against columns of instants "
    "(your engine's session time zone: America/New_York, +05:30; default: UTC, and this "
    "machine's zone when it differs)"
)


def add_zone(p: argparse.ArgumentParser) -> None:
    """``--zone TZ``: the session time zone timestamp literals are read in."""
    p.add_argument("--zone", metavar="TZ", type=types.time_zone, help=ZONE_HELP)


def add_index(
    p: argparse.ArgumentParser,
    help: str = "the index directory",
    type: Callable[[str], str] = types.index_dir,
) -> None:
    """The positional ``INDEX`` directory of an ``index`` action."""
    p.add_argument("index", metavar="INDEX", type=type, help=help)


def add_encoding(p: argparse.ArgumentParser, default: str | None, help: str) -> None:
    """``--encoding``: ``parquet`` hashes the PLAIN bytes of the Parquet physical type,
    ``arrow`` the Arrow-width bytes (as Lance)."""
    p.add_argument("--encoding", choices=("parquet", "arrow"), default=default, help=help)


def add_json(p: argparse.ArgumentParser, help: str = "print one JSON object") -> None:
    """``--json``: print the result as one JSON object instead of text."""
    p.add_argument("--json", action="store_true", help=help)


__all__ = [
    "SPARK_HELP",
    "add_columns",
    "add_encoding",
    "add_file",
    "add_fpp",
    "add_index",
    "add_json",
    "add_workers",
]
