"""Parquet benchmark: add-bloom throughput against pyarrow reading the same columns, and
prune latency on a 1,000-row-group file - in one run, one process, same files.

1. **add-bloom** - a file of ``--rows`` rows (UUID-string key, int64 key, a payload
   column) in row groups of ``--row-group`` rows, written by pyarrow without filters.
   ``add_bloom_filters(src, dst, columns=[uuid, key])`` reads each chunk of the two
   columns, hashes it, counts its distinct hashes and builds its filter, and copies the
   file's pages, then writes the filters and the footer (fsynced, renamed). The baseline
   is ``pq.read_table(src, columns=[uuid, key])``: reading and decoding those columns is
   the least any retrofit must do, so the ratio is what filters cost on top of a read.
   The two are timed in interleaved pairs; the ratio is the median of the pairs' ratios.
2. **prune** - a file of 1,000 row groups of 1,000 rows with filters (``write_table``);
   median time of ``prune`` for

   * an absent UUID below every row group's minimum (``'00000000-…'``: statistics rule
     out every row group) and a 10-value IN list of absent keys (statistics rule out
     990 row groups, dictionaries the rest) - the two measures of the per-row-group
     target (<= 15 us);
   * an absent UUID inside every row group's [min, max] (``'7fffffff-…'``, as random
     keys are): every row group reaches the dictionary stage (each reads and hashes its
     1,000-entry dictionary page), and with ``stages=("statistics", "bloom")`` the
     bloom stage;

   and of parsing the footer alone. The baseline is pyarrow's
   ``ParquetFile(path).metadata`` (footer only, C++). CPU time is printed next to wall
   time: on a shared machine a call of a few milliseconds often waits for a core.

    .venv/bin/python bench/parquet.py [--quick] [--prune-only] [--rows N] [--reps R] [--json PATH]

Ratios printed are bloomskip / baseline from the same run; absolute times drift on
shared machines.

add-bloom, before and after issue 16 (one run each, 9 pairs, 2-core VM, load ~5.5; see
docs/performance.md): sorting to count distinct hashes and copying the pages before
building, 1.39 wall (1.77 CPU time); a hash-set count and the copy on its own thread,
0.99 wall (0.89 CPU time). The same "before" code measured 3.0-3.33 on a quieter machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bloomskip.parquet import add_bloom_filters, prune, write_table
from bloomskip.parquet.footer import read_footer


def _uuids(n: int, seed: int) -> pa.Array:
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 2**63, size=(n, 2), dtype=np.int64).view(np.uint8).reshape(n, 16)
    return pa.array([str(uuid.UUID(bytes=bytes(r))) for r in raw], pa.string())


def make_table(rows: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table(
        {
            "uuid": _uuids(rows, seed),
            "key": pa.array(rng.permutation(rows).astype(np.int64) * 7919),
            "payload": pa.array(rng.random(rows)),
        }
    )


def median_time(fn: Callable[[], Any], reps: int) -> float:
    return median_times(fn, reps)[0]


def median_times(fn: Callable[[], Any], reps: int) -> tuple[float, float]:
    """Median wall time and median CPU time of this process (user + system): on a
    shared machine a call of a few milliseconds often waits for a core, which the CPU
    time leaves out."""
    wall, cpu = [], []
    for _ in range(reps):
        c, t = time.process_time(), time.perf_counter()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), statistics.median(cpu)


def bench_add_bloom(tmp: Path, rows: int, row_group: int, reps: int) -> dict[str, Any]:
    src, dst = tmp / "src.parquet", tmp / "dst.parquet"
    pq.write_table(make_table(rows), src, row_group_size=row_group)
    columns = ["uuid", "key"]
    meta = pq.ParquetFile(src).metadata
    col_bytes = sum(
        meta.row_group(r).column(c).total_uncompressed_size
        for r in range(meta.num_row_groups)
        for c in range(2)
    )
    add_bloom_filters(src, dst, columns=columns)  # compile and warm the page cache
    pq.read_table(src, columns=columns)
    # Interleaved pairs (the order alternating), so that the load of a shared machine
    # weighs on both sides alike; the ratio is the median of the pairs' ratios. CPU time
    # (all threads, user + system) is kept too: other jobs barely change it.
    sides = [
        lambda: pq.read_table(src, columns=columns),
        lambda: add_bloom_filters(src, dst, columns=columns),
    ]
    wall: list[list[float]] = [[], []]
    cpu: list[list[float]] = [[], []]
    for rep in range(reps):
        for side in (0, 1) if rep % 2 == 0 else (1, 0):
            c, t = _cpu_seconds(), time.perf_counter()
            sides[side]()
            wall[side].append(time.perf_counter() - t)
            cpu[side].append(_cpu_seconds() - c)
    (reads, adds), (cpu_reads, cpu_adds) = wall, cpu
    t_read, t_add = statistics.median(reads), statistics.median(adds)
    ratio = statistics.median(a / r for a, r in zip(adds, reads, strict=True))
    result = add_bloom_filters(src, dst, columns=columns)
    return {
        "rows": rows,
        "row_groups": meta.num_row_groups,
        "file_mb": os.path.getsize(src) / 1e6,
        "column_mb": col_bytes / 1e6,
        "filters": len(result.added),
        "filter_mb": result.filter_bytes / 1e6,
        "pyarrow_read_s": t_read,
        "add_bloom_s": t_add,
        "add_bloom_mb_per_s": col_bytes / 1e6 / t_add,
        "add_bloom_rows_per_s": rows / t_add,
        "pyarrow_read_mb_per_s": col_bytes / 1e6 / t_read,
        "ratio": ratio,
        "pyarrow_read_cpu_s": statistics.median(cpu_reads),
        "add_bloom_cpu_s": statistics.median(cpu_adds),
        "cpu_ratio": statistics.median(cpu_adds) / statistics.median(cpu_reads),
    }


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


def bench_prune(tmp: Path, reps: int, row_groups: int = 1000, per_group: int = 1000) -> dict:
    path = tmp / "rg1000.parquet"
    table = make_table(row_groups * per_group, seed=11)
    write_table(table, path, ["uuid", "key"], row_group_size=per_group)
    absent = "'00000000-0000-0000-0000-000000000000'"
    in_list = ", ".join(str(7919 * k + 1) for k in range(10))  # none is a multiple of 7919
    point = f"uuid = {absent}"
    many = f"key IN ({in_list})"
    inside = "uuid = '7fffffff-0000-0000-0000-000000000000'"  # within every [min, max]
    bloom = ("statistics", "bloom")
    skipped = {}
    for label, pred, stages in (
        ("point", point, None),
        ("in10", many, None),
        ("inside", inside, None),
        ("inside_bloom", inside, bloom),
    ):  # warm-up (kernels compile), and sanity checks
        units = prune(path, pred, **({"stages": stages} if stages else {})).units
        assert len(units) == row_groups
        skipped[label] = sum(not u.may_match for u in units)
    t_meta, c_meta = median_times(lambda: pq.ParquetFile(path).metadata, reps)
    t_footer, c_footer = median_times(lambda: read_footer(path), reps)
    t_point, c_point = median_times(lambda: prune(path, point), reps)
    t_in, c_in = median_times(lambda: prune(path, many), reps)
    t_inside, c_inside = median_times(lambda: prune(path, inside), reps)
    t_inside_bloom, c_inside_bloom = median_times(lambda: prune(path, inside, stages=bloom), reps)
    return {
        "row_groups": row_groups,
        "file_mb": os.path.getsize(path) / 1e6,
        "skipped_point": skipped["point"],
        "skipped": skipped,
        "pyarrow_metadata_s": t_meta,
        "read_footer_s": t_footer,
        "prune_point_s": t_point,
        "prune_in10_s": t_in,
        "prune_inside_s": t_inside,
        "prune_inside_bloom_s": t_inside_bloom,
        "cpu_s": {
            "pyarrow_metadata": c_meta,
            "read_footer": c_footer,
            "prune_point": c_point,
            "prune_in10": c_in,
            "prune_inside": c_inside,
            "prune_inside_bloom": c_inside_bloom,
        },
        "prune_point_per_row_group_us": t_point / row_groups * 1e6,
        "prune_in10_per_row_group_us": t_in / row_groups * 1e6,
        "ratio_point": t_point / t_meta,
        "ratio_in10": t_in / t_meta,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=5_000_000, help="rows for add-bloom")
    ap.add_argument("--row-group", type=int, default=128 * 1024)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="500k rows, 3 reps")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--prune-only", action="store_true", help="skip the add-bloom part")
    args = ap.parse_args()
    if args.quick:
        args.rows, args.reps = 500_000, 3
    with tempfile.TemporaryDirectory(prefix="bloomskip-bench-") as d:
        tmp = Path(d)
        add = (
            None if args.prune_only else bench_add_bloom(tmp, args.rows, args.row_group, args.reps)
        )
        pr = bench_prune(tmp, args.reps)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    print(f"bench/parquet.py - {machine}, pyarrow {pa.__version__}, median of {args.reps}\n")
    if add is not None:
        print_add(add)
    print_prune(pr, args.reps)
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": machine, "add": add, "prune": pr}))


def print_add(add: dict[str, Any]) -> None:
    print(
        f"add-bloom: {add['rows']:,} rows, {add['row_groups']} row groups, columns uuid + "
        f"key = {add['column_mb']:.0f} MB uncompressed; {add['filters']} filters, "
        f"{add['filter_mb']:.2f} MB"
    )
    print(f"  {'':34} {'seconds':>9} {'MB/s':>9} {'rows/s':>13}")
    print(
        f"  {'pyarrow read_table(columns)':34} {add['pyarrow_read_s']:>9.3f} "
        f"{add['pyarrow_read_mb_per_s']:>9.0f} {add['rows'] / add['pyarrow_read_s']:>13,.0f}"
    )
    print(
        f"  {'bloomskip add_bloom_filters':34} {add['add_bloom_s']:>9.3f} "
        f"{add['add_bloom_mb_per_s']:>9.0f} {add['add_bloom_rows_per_s']:>13,.0f}"
    )
    print(
        f"  ratio add-bloom / pyarrow read: {add['ratio']:.2f} (CPU time, all threads: "
        f"{add['add_bloom_cpu_s']:.2f} s / {add['pyarrow_read_cpu_s']:.2f} s = "
        f"{add['cpu_ratio']:.2f})\n"
    )


def print_prune(pr: dict[str, Any], reps: int) -> None:
    n, cpu = pr["row_groups"], pr["cpu_s"]
    print(f"prune: {n} row groups of 1,000 rows, {pr['file_mb']:.1f} MB, median of {reps}")
    head = f"{'ms':>8} {'us/row group':>13} {'CPU us/rg':>10} {'/ pyarrow':>10} {'skipped':>8}"
    print(f"  {'':44} {head}")
    rows = [
        ("pyarrow ParquetFile(path).metadata", "pyarrow_metadata", None),
        ("bloomskip read_footer", "read_footer", None),
        ("prune uuid = '0000…' (below every min)", "prune_point", "point"),
        ("prune key IN (10 absent values)", "prune_in10", "in10"),
        ("prune uuid = '7fff…' (dictionary stage)", "prune_inside", "inside"),
        ("  same, stages statistics + bloom", "prune_inside_bloom", "inside_bloom"),
    ]
    for label, key, skip_key in rows:
        t = pr[f"{key}_s"]
        skip = "" if skip_key is None else f"{pr['skipped'][skip_key]:>8}"
        print(
            f"  {label:44} {t * 1e3:>8.2f} {t / n * 1e6:>13.1f} {cpu[key] / n * 1e6:>10.1f} "
            f"{t / pr['pyarrow_metadata_s']:>10.1f} {skip}"
        )
    worst = max(pr["prune_point_per_row_group_us"], pr["prune_in10_per_row_group_us"])
    worst_cpu = max(cpu["prune_point"], cpu["prune_in10"]) / n * 1e6
    verdict = "met" if worst <= 15 else "NOT met"
    print(
        f"  target <= 15 us per row group (point lookup, IN of 10): {verdict} "
        f"({worst:.1f} us wall, {worst_cpu:.1f} us CPU)"
    )


if __name__ == "__main__":
    main()
