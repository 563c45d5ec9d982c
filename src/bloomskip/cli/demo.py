"""``bloomskip demo``: point lookups on a 20M-row lake, three ways, with Spark.

The job is :func:`bloomskip.demo.run_demo`; ``--sbbf`` runs :func:`bloomskip.demo.sbbf.run`
(the filter alone, no Spark). Progress goes to stderr, the table (or ``--json``) to stdout.
"""

from __future__ import annotations

import argparse

from bloomskip.cli import args as types
from bloomskip.cli.common import command, emit, require_java
from bloomskip.cli.options import add_fpp, add_json
from bloomskip.errors import InvalidParameterError

#: Rows one generated file may hold (it is built in memory): bounds the memory a run uses.
MAX_ROWS_PER_FILE = 10_000_000

HELP = "point lookups on a 20M-row lake, three ways, with Spark"

DESCRIPTION = """\
Look rows up in a data lake three ways with Spark, check that they agree, and time them.

1. Generate a lake: 200 Parquet files, 20M rows (uuid, user_id, ts, country, amount,
   quantity), no bloom filters; about 1 GB, generated in 10-15 s with numpy.
   Kept in --dir and re-used by the next run with the same sizes.
2. Start a local Spark session on all cores (needs Java 17+ and pyspark:
   pip install 'bloomskip[spark]').
3. Build bloomskip's zone index on uuid and user_id with Spark (about 250 MB: a filter
   per 8,192-row zone and per file, for a false-positive rate of 0.00057).
4. Write a copy of the lake with Spark's own Parquet bloom filters on both columns,
   row groups about as large as the lake's (about a minute; kept and re-used).
5. Run the lookups - uuid present, uuid absent, user_id present, uuid IN (10 values) -
   each three ways:
     spark scan    spark.read.parquet(lake).where(q): reads every file
     native bloom  the same over the copy: Spark skips row groups whose bloom filter
                   rules the value out, but opens every file to ask
     bloomskip     bloomskip.spark.plan_read(spark, lake, index, q).df: the index
                   names the files and zones that may match; few rows are read on
                   the driver (a local relation), else Spark reads those files
   All three must return the same rows (else the demo fails). Then print seconds,
   files and bytes read (Spark's scan metrics, or the driver's read) and rows per
   lookup and way.

Progress goes to stderr, the table (or --json) to stdout. About 2.5 minutes the first
time on 2 cores, about a minute less when the lake and copy are re-used. Disk: about
2.4 GB in --dir."""

EPILOG = """\
examples:
  bloomskip demo                               the full 20M-row lake in ./demo-lake
  bloomskip demo --files 50 --rows 2e6         a 2M-row lake, in about a minute
  bloomskip demo --dir /tmp/lake --fresh --json > demo.json
  bloomskip demo --sbbf --n 1e6                no Spark: build and probe one filter"""


def register(sub: argparse._SubParsersAction) -> None:
    d = command(sub, "demo", run, HELP, DESCRIPTION, EPILOG)
    d.add_argument(
        "--dir", default="demo-lake", type=types.work_dir,
        help="working directory for the lake, its copy and the index (default ./demo-lake)",
    )  # fmt: skip
    d.add_argument("--files", type=types.FILES, default=200, help="Parquet files (default 200)")
    d.add_argument(
        "--rows", type=types.ROWS, default=20_000_000, help="rows in all (default 20M; 2e6 works)"
    )
    d.add_argument(
        "--row-group", type=types.ROWS, default=20_000, help="rows per row group (default 20,000)"
    )
    keep = d.add_mutually_exclusive_group()
    keep.add_argument(
        "--keep", dest="fresh", action="store_false",
        help="re-use the lake and the copy from an earlier run with the same sizes (default)",
    )  # fmt: skip
    keep.add_argument(
        "--fresh", action="store_true", help="delete and regenerate the lake and the copy"
    )
    d.add_argument(
        "--repeat", type=types.REPEAT, default=1,
        help="time each lookup N times, report the median",
    )  # fmt: skip
    add_json(d, "print the results as one JSON object")
    d.add_argument(
        "--sbbf", action="store_true",
        help="instead: the filter alone, without Spark (build and probe --n values)",
    )  # fmt: skip
    d.add_argument(
        "--n", type=types.SBBF_KEYS, default=10_000_000,
        help="--sbbf: distinct keys (10M; at most 1e8)",
    )  # fmt: skip
    add_fpp(d, 0.01, "--sbbf: target FPP (0.01)")
    d.set_defaults(fresh=False)


def run(args: argparse.Namespace) -> int:
    if args.sbbf:
        if args.json:
            raise InvalidParameterError("--sbbf prints a table only; --json is the Spark demo's")
        from bloomskip.demo.sbbf import run as run_sbbf

        run_sbbf(n=args.n, fpp=args.fpp, out=emit)
        return 0
    if -(-args.rows // args.files) > MAX_ROWS_PER_FILE:
        raise InvalidParameterError(
            f"--rows {args.rows:,} over --files {args.files:,} makes files of more than "
            f"{MAX_ROWS_PER_FILE:,} rows (each is built in memory): use more files"
        )
    require_java("the demo", "; 'bloomskip demo --sbbf' shows the filter alone without Spark")
    from bloomskip.demo import LakeSpec, run_demo

    spec = LakeSpec(files=args.files, rows=args.rows, row_group_rows=args.row_group)
    result = run_demo(args.dir, spec=spec, fresh=args.fresh, repeat=args.repeat)
    if args.json:
        import json

        emit(json.dumps(result.to_json(), indent=2))
    else:
        emit(result.table())
    return 0
