"""ORC benchmark: prune latency per file and per row group, next to pyarrow reading the file.

A file of ``--rows`` rows (UUID-string key with a bloom filter, int64 key with a bloom
filter, a payload column) is written by pyarrow's ORC writer (ORC C++) with row groups of
10,000 rows. Timed, median of ``--reps``, in one process:

* ``pyarrow.orc.read_table(path)`` - reading the whole file, the cost pruning avoids;
* ``pyarrow.orc.ORCFile(path)`` and its schema and stripe count - ORC C++ reading the
  tail, the least any reader of the file does;
* ``read_orc(path)`` - bloomskip parsing the tail (PostScript, Footer);
* ``prune`` for an absent UUID below every minimum (``'00000000-…'``: the stripe
  statistics rule out every stripe, no row index is read) and for ``key IN (10 absent
  values)`` (stripe statistics cannot, row group statistics rule out most row groups,
  bloom filters the rest) - the two measures of the per-row-group target (<= 15 us);
* ``prune`` for an absent UUID and an absent key inside every row group's
  [min, max] (every row group reaches its bloom filter).

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
        lookups = {
            "point": "uuid = '00000000-0000-0000-0000-000000000000'",
            "in10": "key IN (" + ", ".join(str(7919 * k + 1) for k in range(10)) + ")",
            "inside": "uuid = '7fffffff-0000-0000-0000-000000000000'",
            "inside_key": f"key = {7919 * 20_000 + 1}",
        }
        skipped = {}
        for label, pred in lookups.items():  # warm-up (kernels compile), sanity check
            skipped[label] = sum(not u.may_match for u in prune(path, pred).units)
        t_read = median_time(lambda: po.read_table(path), args.reps)
        t_meta = median_time(lambda: _orc_metadata(path), args.reps)
        t_tail = median_time(lambda: read_orc(path), args.reps)
        times = {
            label: median_time(lambda pred=pred: prune(path, pred), args.reps)
            for label, pred in lookups.items()
        }
        size = os.path.getsize(path)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    print(f"bench/orc.py - {machine}, pyarrow {pa.__version__}, median of {args.reps}\n")
    print(
        f"{args.rows:,} rows, {len(orc.stripes)} stripes, {groups} row groups, {size / 1e6:.1f} MB"
    )
    print(f"  {'':40} {'ms':>8} {'us/row group':>13} {'/ ORCFile':>10} {'skipped':>8}")
    rows = [
        ("pyarrow orc.read_table(path)", t_read, None),
        ("pyarrow orc.ORCFile(path) metadata", t_meta, None),
        ("bloomskip read_orc (tail)", t_tail, None),
        ("prune uuid = '0000…' (below every min)", times["point"], "point"),
        ("prune key IN (10 absent values)", times["in10"], "in10"),
        ("prune uuid = '7fff…' (bloom filters)", times["inside"], "inside"),
        ("prune key = <inside> (bloom filters)", times["inside_key"], "inside_key"),
    ]
    for label, t, key in rows:
        skip = "" if key is None else f"{skipped[key]:>8}"
        print(f"  {label:40} {t * 1e3:>8.2f} {t / groups * 1e6:>13.1f} {t / t_meta:>10.1f} {skip}")
    print(f"  ratio prune / pyarrow read_table: {times['point'] / t_read:.3f} (point lookup)")
    worst = max(times["point"], times["in10"]) / groups * 1e6
    verdict = "met" if worst <= 15 else "NOT met"
    print(f"  target <= 15 us per row group (point lookup, IN of 10): {verdict} ({worst:.1f} us)")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "machine": machine,
                    "rows": args.rows,
                    "row_groups": groups,
                    "read_table_s": t_read,
                    "orcfile_metadata_s": t_meta,
                    "read_orc_s": t_tail,
                    "prune_point_s": times["point"],
                    "prune_in10_s": times["in10"],
                    "prune_inside_s": times["inside"],
                    "prune_inside_key_s": times["inside_key"],
                    "skipped": skipped["point"],
                    "skipped_by_lookup": skipped,
                    "median_of": args.reps,
                }
            )
        )


def _orc_metadata(path: Path) -> tuple:
    f = po.ORCFile(path)
    return f.schema, f.nstripes, f.nrows


if __name__ == "__main__":
    main()
