"""ORC benchmark: prune latency per file and per row group, next to pyarrow reading the file.

A file of ``--rows`` rows (UUID-string key with a bloom filter, int64 key with a bloom
filter, a payload column) is written by pyarrow's ORC writer (ORC C++) with row groups of
10,000 rows. Timed, median of ``--reps``, in one process:

* ``pyarrow.orc.read_table(path)`` - reading the whole file, the cost pruning avoids;
* ``read_orc(path)`` - bloomskip parsing the tail (PostScript, Footer);
* ``prune(path, "uuid = '…'")`` for an absent UUID (every row group reaches the bloom
  filter) and ``prune(path, "key IN (10 values)")``.

    .venv/bin/python bench/orc.py [--quick] [--rows N] [--reps R] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as po

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bloomskip.orc import prune, read_orc
from parquet import make_table, median_time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="200k rows, 3 reps")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()
    if args.quick:
        args.rows, args.reps = 200_000, 3
    with tempfile.TemporaryDirectory(prefix="bloomskip-bench-") as d:
        path = Path(d) / "bench.orc"
        po.write_table(make_table(args.rows), path, bloom_filter_columns=[1, 2])
        orc = read_orc(path)
        groups = len(orc.row_groups())
        absent = "uuid = '00000000-0000-0000-0000-000000000000'"
        many = "key IN (" + ", ".join(str(7919 * k + 1) for k in range(10)) + ")"
        units = prune(path, absent).units  # warm-up (kernels compile), sanity check
        skipped = sum(not u.may_match for u in units)
        t_read = median_time(lambda: po.read_table(path), args.reps)
        t_tail = median_time(lambda: read_orc(path), args.reps)
        t_point = median_time(lambda: prune(path, absent), args.reps)
        t_in = median_time(lambda: prune(path, many), args.reps)
        size = os.path.getsize(path)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    print(f"bench/orc.py - {machine}, pyarrow {pa.__version__}, median of {args.reps}\n")
    print(
        f"{args.rows:,} rows, {len(orc.stripes)} stripes, {groups} row groups, "
        f"{size / 1e6:.1f} MB; the absent uuid skipped {skipped} of {groups} row groups"
    )
    rows = [
        ("pyarrow orc.read_table(path)", t_read),
        ("bloomskip read_orc (tail)", t_tail),
        ("bloomskip prune uuid = ...", t_point),
        ("bloomskip prune key IN (10 values)", t_in),
    ]
    for label, t in rows:
        print(f"  {label:36} {t * 1e3:>9.2f} ms  {t / groups * 1e6:>8.1f} us per row group")
    print(f"  ratio prune / pyarrow read_table: {t_point / t_read:.3f}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "machine": machine,
                    "rows": args.rows,
                    "row_groups": groups,
                    "read_table_s": t_read,
                    "read_orc_s": t_tail,
                    "prune_point_s": t_point,
                    "prune_in10_s": t_in,
                    "skipped": skipped,
                    "median_of": args.reps,
                }
            )
        )


if __name__ == "__main__":
    main()
