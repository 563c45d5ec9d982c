"""``bloomskip index build|refresh|query|status|vacuum``: the zone index on the command line.

Registered by :mod:`bloomskip.cli`; every command prints a table, or one JSON object with
``--json``.
"""

from __future__ import annotations

import argparse
import json

_DESCRIPTION = """\
An external bloom filter index over a whole lake of Parquet/ORC files, in the layout
of Lance's bloom filter index: one SBBF per zone of rows (default 8192 rows, FPP
0.00057, Putze sizing), plus one filter per file. Queries answer which files - and which
zones in them - may hold rows matching =, IN and IS [NOT] NULL predicates. Files added or
changed since indexing are always candidates; 'refresh' indexes them.

A Lance dataset directory works as SOURCE (its fragments are the files; zones and filters
equal Lance's own BLOOMFILTER index), and as INDEX of 'query', which then answers from
the BLOOMFILTER indexes Lance wrote (needs the bloomskip[lance] extra)."""

_EPILOG = """\
examples:
  bloomskip index build lake/ lake.idx -c user_id -c trace_id
  bloomskip index build s3://bucket/events/ events.idx -c user_id --sizing exact
  bloomskip index query lake.idx "user_id = 'u_42' OR trace_id IN ('a', 'b')"
  bloomskip index refresh lake.idx
  bloomskip index status lake.idx --json
  bloomskip index build events.lance events.idx -c user_id
  bloomskip index build lake/ lake.idx -c user_id --spark 'local[*]'
  bloomskip index query events.lance "user_id = 42"""


def register(sub: argparse._SubParsersAction) -> None:
    ix = sub.add_parser(
        "index",
        help="build, refresh and query a zone index over a whole lake",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    isub = ix.add_subparsers(dest="index_command", required=True, metavar="ACTION")

    b = isub.add_parser(
        "build",
        help="index columns of every file under SOURCE",
        description="Index COLUMNs of every Parquet/ORC file under SOURCE (a directory, a\n"
        "file or a URI: file://, s3://, gs://, hdfs://) into INDEX, a local directory.\n"
        "On an existing index: add the columns and refresh.",
        epilog="example: bloomskip index build lake/ lake.idx -c user_id --zone-rows 4096",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    b.add_argument("source", help="directory, file or URI of the data")
    b.add_argument("index", help="the index directory (created if missing)")
    b.add_argument(
        "--column", "-c", action="append", dest="columns", required=True, metavar="C",
        help="a column to index, repeatable",
    )  # fmt: skip
    b.add_argument("--zone-rows", type=int, default=8192, help="rows per zone (default 8192)")
    b.add_argument("--fpp", type=float, default=0.00057, help="target FPP (default 0.00057)")
    b.add_argument(
        "--sizing", choices=("putze", "exact"), default="putze",
        help="putze: every zone sized for --zone-rows values (Lance); exact: for its own "
        "distinct count (smaller for low-cardinality columns)",
    )  # fmt: skip
    b.add_argument(
        "--align", choices=("rows", "row_groups"), default="rows",
        help="row_groups: never cut across a Parquet row group or ORC stripe",
    )  # fmt: skip
    b.add_argument(
        "--encoding", choices=("parquet", "arrow"), default=None,
        help="parquet: hash PLAIN bytes of the physical type (default); arrow: as Lance "
        "(default for a Lance dataset)",
    )  # fmt: skip
    b.add_argument("--no-file-filters", action="store_true", help="no per-file filters")
    b.add_argument("--threads", type=int, help="reader threads (default: CPU count)")
    b.add_argument(
        "--spark", metavar="MASTER",
        help="read the files in Spark tasks on this master (local[*], spark://host:7077, yarn, "
        "...); needs bloomskip[spark] and Java 17+",
    )  # fmt: skip
    b.add_argument("--overwrite", action="store_true", help="replace an existing index")
    b.add_argument("--json", action="store_true", help="print one JSON object")
    b.set_defaults(func=_build)

    r = isub.add_parser(
        "refresh",
        help="index new and changed files, drop removed ones",
        description="Bring INDEX up to date with its source: files whose (path, size, mtime)\n"
        "is unchanged are not opened.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("index")
    r.add_argument("--threads", type=int, help="reader threads (default: CPU count)")
    r.add_argument(
        "--spark", metavar="MASTER",
        help="read the files in Spark tasks on this master (local[*], spark://host:7077, yarn, "
        "...); needs bloomskip[spark] and Java 17+",
    )  # fmt: skip
    r.add_argument("--json", action="store_true", help="print one JSON object")
    r.set_defaults(func=_refresh)

    q = isub.add_parser(
        "query",
        help="the files and zones that may hold rows matching a predicate",
        description="Candidate files and zones (row ranges) for a SQL predicate. The index\n"
        "answers col = lit, col IN (...), IS [NOT] NULL, under AND / OR; anything else\n"
        "(!=, ranges, columns not indexed) may match. Never drops a matching row.",
        epilog="example: bloomskip index query lake.idx \"user_id IN ('u_1', 'u_2')\" --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    q.add_argument("index", help="a zone index directory, or a Lance dataset (its own index)")
    q.add_argument("where", help="the SQL predicate")
    q.add_argument(
        "--max-in-fpp", type=float, default=0.5,
        help="ignore the index for an IN list when 1-(1-fpp)^k exceeds this (default 0.5)",
    )  # fmt: skip
    q.add_argument(
        "--no-source-check", action="store_true",
        help="do not list the source (faster; misses files added or changed since indexing)",
    )  # fmt: skip
    q.add_argument("--json", action="store_true", help="print one JSON object")
    q.set_defaults(func=_query)

    s = isub.add_parser(
        "status",
        help="coverage, stale files, size and predicted FPP per column",
    )
    s.add_argument("index")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=_status)

    v = isub.add_parser(
        "vacuum",
        help="delete old versions and files no kept version uses",
    )
    v.add_argument("index")
    v.add_argument("--keep", type=int, default=5, help="versions to keep (default 5)")
    v.add_argument("--json", action="store_true", help="print one JSON object")
    v.set_defaults(func=_vacuum)


def _report(rep, as_json: bool) -> int:
    if as_json:
        print(json.dumps(rep.to_json()))
        return 0
    print(
        f"{rep.index}: version {rep.version}, columns {', '.join(rep.columns)}\n"
        f"  {rep.files_listed} files listed: {rep.files_indexed} indexed, "
        f"{rep.files_unchanged} unchanged, {rep.files_dropped} dropped, "
        f"{len(rep.failed)} not indexed\n"
        f"  {rep.zones_written:,} zones, {rep.bytes_written:,} B written in {rep.seconds:.2f} s"
    )
    for path, why in rep.failed[:20]:
        print(f"  not indexed: {path}: {why}")
    if len(rep.failed) > 20:
        print(f"  ... and {len(rep.failed) - 20} more (see --json)")
    return 0


def _engine(args: argparse.Namespace):
    """``index_files`` for Spark tasks with ``--spark MASTER``, else None (threads)."""
    if not args.spark:
        return None
    from bloomskip.spark import local_session
    from bloomskip.spark.build import spark_runner

    return spark_runner(local_session(args.spark, app_name="bloomskip index"))


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
        file_filters=not args.no_file_filters,
        threads=args.threads,
        progress=None if not args.json else False,
        overwrite=args.overwrite,
        index_files=_engine(args),
    )
    return _report(rep, args.json)


def _refresh(args: argparse.Namespace) -> int:
    from bloomskip.index import refresh

    rep = refresh(
        args.index,
        threads=args.threads,
        progress=None if not args.json else False,
        index_files=_engine(args),
    )
    return _report(rep, args.json)


def _query(args: argparse.Namespace) -> int:
    from bloomskip.index import open_index
    from bloomskip.lance.dataset import is_lance_dataset

    if is_lance_dataset(args.index):
        from bloomskip.lance import open_lance_index

        res = open_lance_index(args.index).query(args.where, max_in_fpp=args.max_in_fpp)
    else:
        res = open_index(args.index).query(
            args.where, check_source=not args.no_source_check, max_in_fpp=args.max_in_fpp
        )
    if args.json:
        print(json.dumps(res.to_json()))
        return 0
    print(f"{res.index} (version {res.version}): WHERE {res.predicate}")
    noun = "fragments" if res.files and res.files[0].path.startswith("fragment:") else "files"
    for f in res.files:
        zones = (
            "whole file"
            if f.zones is None
            else ", ".join(f"rows {s:,}+{n:,}" for s, n in f.zones[:4])
            + (f", ... ({len(f.zones)} zones)" if len(f.zones) > 4 else "")
        )
        print(f"  {f.path}: {zones} ({f.reason})")
    for n in res.notes:
        print(f"  note: {n}")
    print(
        f"{len(res.files)} of {res.files_total} {noun}, {res.zones_candidate:,} of "
        f"{res.zones_total:,} zones may match; {res.rows_candidate:,} of "
        f"{res.rows_total:,} rows to read ({res.seconds * 1000:.1f} ms)"
    )
    return 0


def _status(args: argparse.Namespace) -> int:
    from bloomskip.index import open_index

    st = open_index(args.index).status()
    if args.json:
        print(json.dumps(st))
        return 0
    print(
        f"{st['index']}: version {st['version']} ({st['committed_at']}), source {st['source']}\n"
        f"  zones of {st['zoning']['zone_rows']:,} rows ({st['zoning']['align']}); "
        f"{st['files_indexed']} files, {st['rows_indexed']:,} rows indexed; coverage "
        f"{st['coverage']:.1%} of {st['files_listed']} files listed"
    )
    for key, what in (
        ("stale_files", "changed since indexing"),
        ("unindexed_files", "not indexed"),
        ("removed_files", "removed since indexing"),
    ):
        if st[key]:
            print(f"  {len(st[key])} {what}: {', '.join(st[key][:5])}")
    print(
        f"  {'column':20} {'type':14} {'sizing':7} {'zones':>8} {'filter bytes':>14} "
        f"{'B/row':>7} {'on disk':>12} {'pred. FPP':>10}"
    )
    for name, c in st["columns"].items():
        print(
            f"  {name[:20]:20} {c['arrow_type'][:14]:14} {c['sizing']:7} {c['zones']:>8,} "
            f"{c['zone_filter_bytes'] + c['file_filter_bytes']:>14,} "
            f"{c['bytes_per_row']:>7.2f} {c['disk_bytes']:>12,} {c['predicted_fpp_mean']:>10.2e}"
        )
    return 0


def _vacuum(args: argparse.Namespace) -> int:
    from bloomskip.index import vacuum

    removed = vacuum(args.index, keep_versions=args.keep)
    if args.json:
        print(json.dumps({"removed": removed}))
    else:
        print(f"removed {len(removed)} files" + "".join(f"\n  {r}" for r in removed[:50]))
    return 0


__all__ = ["register"]
