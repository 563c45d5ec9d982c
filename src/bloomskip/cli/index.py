"""``bloomskip index build|refresh|query|status|vacuum``: the zone index on the command line.

Each action parses, calls :mod:`bloomskip.index` (or :mod:`bloomskip.lance` for a Lance
dataset), and prints the result's text or ``--json``. The wiring the index package must
not know lives here: ``--spark MASTER`` starts the Spark session and hands its runner
(:class:`bloomskip.spark.build.SparkRunner`) to ``build``/``refresh``.
"""

from __future__ import annotations

import argparse
from typing import Any

from bloomskip.cli import args as types
from bloomskip.cli.common import (
    CommandListFormatter,
    command,
    emit,
    emit_json,
    report,
    require_java,
)
from bloomskip.cli.options import (
    add_columns,
    add_encoding,
    add_fpp,
    add_index,
    add_json,
    add_workers,
    add_zone,
)
from bloomskip.errors import BloomskipError, InvalidParameterError, SparkJobError

HELP = "zone index over a lake: build, refresh, query, status, vacuum"

DESCRIPTION = """\
An external bloom filter index over a whole lake of Parquet/ORC files, in the layout
of Lance's bloom filter index: one SBBF per zone of rows (default 8192 rows, FPP
0.00057, Putze sizing; one per file too with --file-filters). INDEX is a local directory
or an object store prefix (s3://, gs://, az://). Queries answer which files - and which
zones in them - may hold rows matching =, IN and IS [NOT] NULL predicates. Files added or
changed since indexing are always candidates; 'refresh' indexes them.

A Lance dataset directory works as SOURCE (its fragments are the files; zones and filters
equal Lance's own BLOOMFILTER index), and as INDEX of 'query', which then answers from
the BLOOMFILTER indexes Lance wrote (needs the bloomskip[lance] extra).

A Delta Lake table (a directory holding _delta_log/) or an Iceberg table
(iceberg://CATALOG/NAMESPACE.TABLE, or a path to its *.metadata.json) works as SOURCE
too (needs the bloomskip[tables] extra): the index covers one snapshot's data files, as
the table lists them, and records that snapshot; 'query --as-of' answers for another."""

EPILOG = """\
examples:
  bloomskip index build lake/ lake.idx -c user_id -c trace_id
  bloomskip index query lake.idx "user_id = 'u_42' OR trace_id IN ('a', 'b')"
  bloomskip index refresh lake.idx && bloomskip index status lake.idx --json

Run 'bloomskip index ACTION --help' for the options and more examples of an action."""


def register(sub: argparse._SubParsersAction) -> None:
    ix = command(
        sub, "index", None, HELP, DESCRIPTION, EPILOG, formatter_class=CommandListFormatter
    )
    actions = ix.add_subparsers(dest="index_command", required=True, metavar="ACTION")
    for add in (_add_build, _add_refresh, _add_query, _add_status, _add_vacuum):
        add(actions)


# ----------------------------------------------------------------------------- build


BUILD_HELP = "index columns of every file under SOURCE"

BUILD_DESCRIPTION = """\
Index COLUMNs of every Parquet/ORC file under SOURCE (a directory, a file, a URI -
file://, s3://, gs://, hdfs:// - a Lance dataset, or a Delta or Iceberg table: the data
files of its latest snapshot) into INDEX, a new or empty local directory or object store
prefix (s3://, gs://, az://): one bloom filter per zone of --zone-rows rows (and one per
file with --file-filters). On an existing index: add the columns and refresh. Files that
cannot be read are listed as not indexed (and stay candidates of every query). Answers
nothing yet: 'index query' does."""

BUILD_EPILOG = """\
examples:
  bloomskip index build lake/ lake.idx -c user_id --zone-rows 4096
  bloomskip index build s3://bucket/events/ events.idx -c user_id --sizing exact
  bloomskip index build s3://bucket/events/ s3://bucket/events.idx -c user_id
  bloomskip index build lake/ lake.idx -c user_id --spark 'local[*]'
  bloomskip index build events_delta/ events.idx -c user_id
  bloomskip index build iceberg://prod/db.events events.idx -c user_id"""


def _add_build(actions: argparse._SubParsersAction) -> None:
    b = command(actions, "build", _build, BUILD_HELP, BUILD_DESCRIPTION, BUILD_EPILOG)
    b.add_argument(
        "source", metavar="SOURCE", type=types.source,
        help="directory, file or URI of the data; a Delta or Iceberg table",
    )  # fmt: skip
    add_index(
        b, "the index: a directory (created if missing) or an s3://, gs://, az:// prefix",
        types.new_index_dir,
    )  # fmt: skip
    add_columns(b, "a column to index, repeatable", required=True)
    b.add_argument(
        "--zone-rows", metavar="N", type=types.ZONE_ROWS,
        help="rows per zone (default 8192; adding to an index, its own)",
    )  # fmt: skip
    add_fpp(
        b,
        None,
        "target FPP per zone (default 0.00057, Lance's; a column already indexed keeps its own)",
    )
    b.add_argument(
        "--sizing", choices=("putze", "exact"),
        help="putze (default): every zone sized for --zone-rows values (Lance); exact: for "
        "its own distinct count (smaller for low-cardinality columns)",
    )  # fmt: skip
    b.add_argument(
        "--align", choices=("rows", "row_groups"),
        help="row_groups: never cut across a Parquet row group or ORC stripe (default "
        "rows; adding to an index, its own)",
    )  # fmt: skip
    add_encoding(
        b, None, "parquet: hash PLAIN bytes of the physical type (default); arrow: as Lance "
        "(default for a Lance dataset)",
    )  # fmt: skip
    ff = b.add_mutually_exclusive_group()
    ff.add_argument(
        "--file-filters", action="store_true",
        help="also keep one filter per file (off by default: a lookup reads a block per zone)",
    )  # fmt: skip
    ff.add_argument("--no-file-filters", action="store_true", help=argparse.SUPPRESS)
    add_workers(b)
    b.add_argument("--overwrite", action="store_true", help="replace an existing index")
    add_json(b)


def _engine(args: argparse.Namespace):
    """The runner for Spark tasks with ``--spark MASTER``, else None (threads)."""
    if not args.spark:
        return None
    require_java("--spark")
    from bloomskip.spark import local_session
    from bloomskip.spark.build import SparkRunner

    try:
        session = local_session(args.spark, app_name="bloomskip index")
    except BloomskipError:
        raise
    except Exception as e:  # Py4JJavaError, PySparkRuntimeError: no JVM, no master, ...
        lines = [line.strip() for line in str(e).splitlines() if line.strip()]
        why = next((x for x in lines if "Error" in x or "Exception" in x), "")
        why = (why or (lines[0] if lines else type(e).__name__)).lstrip(": ")
        raise SparkJobError(f"cannot start Spark on {args.spark}: {why[:500]}") from None
    return SparkRunner(session)


def _workers(args: argparse.Namespace) -> dict[str, Any]:
    """How ``build``/``refresh`` read the files (``--threads``, ``--spark``), and whether
    they show progress (not with ``--json``)."""
    return {
        "threads": args.threads,
        "progress": None if not args.json else False,
        "runner": _engine(args),
    }


def _build(args: argparse.Namespace) -> int:
    from bloomskip.index import build

    rep = build(
        args.source,
        args.columns,
        args.index,
        zone_rows=args.zone_rows,
        fpp=args.fpp,
        sizing=args.sizing,
        align=args.align,
        encoding=args.encoding,
        file_filters=args.file_filters,
        overwrite=args.overwrite,
        **_workers(args),
    )
    return report(rep, args.json)


# ----------------------------------------------------------------------------- refresh


REFRESH_HELP = "index new and changed files, drop removed ones"

REFRESH_DESCRIPTION = """\
Bring INDEX up to date with its source: index files added or changed since the last
version, drop files removed. Files whose (path, size, mtime) is unchanged are not
opened. For a table: the data files added since the indexed snapshot are read, those no
longer in the latest snapshot dropped, and the new version records that snapshot.
Commits a new version; readers see the old one or the new one, never half."""

REFRESH_EPILOG = """\
examples:
  bloomskip index refresh lake.idx
  bloomskip index refresh lake.idx --threads 4 --json
  bloomskip index refresh lake.idx --spark spark://head:7077"""


def _add_refresh(actions: argparse._SubParsersAction) -> None:
    r = command(actions, "refresh", _refresh, REFRESH_HELP, REFRESH_DESCRIPTION, REFRESH_EPILOG)
    add_index(r)
    add_workers(r)
    add_json(r)


def _refresh(args: argparse.Namespace) -> int:
    from bloomskip.index import refresh

    return report(refresh(args.index, **_workers(args)), args.json)


# ----------------------------------------------------------------------------- query


QUERY_HELP = "the files and zones that may hold rows matching a predicate"

QUERY_DESCRIPTION = """\
Candidate files and zones (row ranges) for a SQL predicate: answers "which files, and
which rows in them, must a reader open?". The index answers col = lit, col IN (...),
IS [NOT] NULL, under AND / OR; anything else (!=, ranges, columns not indexed) may
match. Files added or changed since indexing are candidates in full. Never drops a
matching row. INDEX may also be a Lance dataset: its own BLOOMFILTER indexes answer.
On a table's index the files are the snapshot's (the latest, or --as-of): files added
since indexing are candidates in full, files removed are never returned, and partition
values rule files out too."""

QUERY_EPILOG = """\
examples:
  bloomskip index query lake.idx "user_id = 'u_42'"
  bloomskip index query lake.idx "user_id IN ('u_1', 'u_2') AND day IS NOT NULL" --json
  bloomskip index query events.lance "user_id = 42"
  bloomskip index query events.idx "user_id = 42 AND day = '2026-05-01'" --as-of 12"""


def _add_query(actions: argparse._SubParsersAction) -> None:
    q = command(actions, "query", _query, QUERY_HELP, QUERY_DESCRIPTION, QUERY_EPILOG)
    add_index(q, "a zone index directory, or a Lance dataset (its own index)")
    q.add_argument("where", metavar="WHERE", type=types.sql, help="the SQL predicate")
    q.add_argument(
        "--max-in-fpp", metavar="P", type=types.probability, default=0.5,
        help="ignore the index for an IN list when 1-(1-fpp)^k exceeds this (default 0.5)",
    )  # fmt: skip
    q.add_argument(
        "--no-source-check", action="store_true",
        help="do not list the source (faster; misses files added or changed since indexing)",
    )  # fmt: skip
    q.add_argument(
        "--as-of", metavar="N", type=types.AS_OF, default=None,
        help="a table's index: answer for the Delta version or Iceberg snapshot id N "
        "(default: the latest)",
    )  # fmt: skip
    add_zone(q)
    add_json(q)


def _query(args: argparse.Namespace) -> int:
    from bloomskip.index import open_index
    from bloomskip.lance.dataset import is_lance_dataset

    if is_lance_dataset(args.index):
        from bloomskip.lance import open_lance_index

        if args.as_of is not None:
            raise InvalidParameterError("--as-of needs the index of a Delta or Iceberg table")
        res = open_lance_index(args.index).query(
            args.where, max_in_fpp=args.max_in_fpp, zone=args.zone
        )
    else:
        if args.as_of is not None and args.no_source_check:
            raise InvalidParameterError("--as-of reads a snapshot: drop --no-source-check")
        res = open_index(args.index).query(
            args.where,
            check_source=not args.no_source_check,
            max_in_fpp=args.max_in_fpp,
            as_of=args.as_of,
            zone=args.zone,
        )
    return report(res, args.json)


# ----------------------------------------------------------------------------- status


STATUS_HELP = "coverage, stale files, size and predicted FPP per column"

STATUS_DESCRIPTION = """\
What INDEX covers and what it costs: its version and source, how many of the files
the source lists now are indexed and unchanged (coverage), which are stale, new or
removed, and per column its sizing, zones, filter bytes, bytes per row, size on disk
and mean predicted false-positive rate. Answers "is the index up to date, and worth
its size?"."""

STATUS_EPILOG = """\
examples:
  bloomskip index status lake.idx
  bloomskip index status lake.idx --json | jq .coverage"""


def _add_status(actions: argparse._SubParsersAction) -> None:
    s = command(actions, "status", _status, STATUS_HELP, STATUS_DESCRIPTION, STATUS_EPILOG)
    add_index(s)
    add_json(s)


def _status(args: argparse.Namespace) -> int:
    from bloomskip.index import ZoneIndex, open_index

    st = open_index(args.index).status()
    if args.json:
        emit_json(st)
    else:
        emit(ZoneIndex.status_text(st))
    return 0


# ----------------------------------------------------------------------------- vacuum


VACUUM_HELP = "delete old versions and files no kept version uses"

VACUUM_DESCRIPTION = """\
Delete the versions of INDEX older than the last --keep, and every table file no kept
version uses, if older than an hour (a running build's fresh files are never touched).
Refuses a directory that holds no zone index. Prints the files removed."""

VACUUM_EPILOG = """\
examples:
  bloomskip index vacuum lake.idx
  bloomskip index vacuum lake.idx --keep 1 --json"""


def _add_vacuum(actions: argparse._SubParsersAction) -> None:
    v = command(actions, "vacuum", _vacuum, VACUUM_HELP, VACUUM_DESCRIPTION, VACUUM_EPILOG)
    add_index(v)
    v.add_argument(
        "--keep", metavar="N", type=types.KEEP, default=5, help="versions to keep (default 5)"
    )
    add_json(v)


def _vacuum(args: argparse.Namespace) -> int:
    from bloomskip.index import open_index, vacuum

    root = open_index(args.index).root  # IndexNotFoundError unless a version is there
    removed = vacuum(root, keep_versions=args.keep)
    if args.json:
        emit_json({"removed": removed})
    else:
        files = "file" if len(removed) == 1 else "files"
        emit(f"removed {len(removed)} {files}" + "".join(f"\n  {r}" for r in removed[:50]))
    return 0
