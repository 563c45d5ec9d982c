"""Spark benchmark: index build time against a plain Spark scan of the same columns, and
point-lookup latency three ways - full scan, Spark's native Parquet bloom filters,
bloomskip - in one run, one Spark session, on one generated lake.

The lake is the demo's (:mod:`bloomskip.demo.lake`): ``--files`` Parquet files, ``--rows``
rows in all (default 200 files, 20M rows), row groups of ``--row-group`` rows (20,000),
columns ``uuid`` (random UUID v4 strings, unique), ``user_id`` (int64, 5M distinct),
``ts``, ``country``, ``amount``, ``quantity``; key columns PLAIN (no dictionary), no bloom
filters. It is generated once with numpy (seeded) and cached under ``--data`` (default
``$TMPDIR/bloomskip-bench-spark``), with the copy written by Spark with native bloom
filters on ``uuid`` and ``user_id`` (:func:`bloomskip.demo.job.ensure_native_copy`: one
file per lake file, row groups of about the lake's size, ``expected.ndv`` = rows per row
group, the zone index's target FPP). The index is built anew in a temporary directory.

The Spark session is ``bloomskip.spark.local_session("local[*]")`` with 4g of driver
memory and the JVM's default JIT (the test suite's ``-XX:TieredStopAtLevel=1`` would turn
off C2; the script refuses to run with it). Measured:

1. **build** - ``bloomskip.spark.build_index(spark, lake, [uuid, user_id], ...)`` with the
   defaults (zone_rows 8,192, putze sizing), against a plain Spark scan of the same two
   columns (``spark.read.parquet(lake).select(uuid, user_id).write.format("noop")``), both
   the median of ``--reps`` after one untimed build on a few files (Python workers start,
   numba kernels load). Ratio = build / scan; target <= 2.
2. **lookups** - ``uuid = present``, ``uuid = absent``, ``user_id = present`` and ``uuid IN
   (10 present values)``, each answered by: a full scan (``spark.read.parquet(lake)
   .where(q)``, bloom filtering off), the native copy (``spark.read.parquet(copy)
   .where(q)``), and bloomskip (``bloomskip.spark.plan_read(spark, lake, index, q).df``,
   planning included); ``collect()`` of all columns, the three answers checked equal.
   Median of ``--reps`` warm runs (one untimed round of each way first), interleaved.
   Targets for the point lookups: full scan / bloomskip >= 20, native / bloomskip > 1.

    .venv/bin/python bench/spark.py [--quick] [--files N] [--rows N] [--reps R]
                                    [--data DIR] [--json PATH]

``--quick``: 20 files, 1M rows, for checking that the script works. Ratios are against
baselines measured in the same run; absolute times drift on shared machines. Results are
also written as JSON to ``bench/results/spark.json`` (``spark-quick.json``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bloomskip.demo.job import (
    WAYS,
    ThreeWays,
    describe_machine,
    ensure_native_copy,
    lookup_table,
    machine_info,
    retrofit_lake,
)
from bloomskip.demo.lake import KEY_COLUMNS, LakeSpec, ensure_lake
from bloomskip.units import human_bytes

REPO = Path(__file__).resolve().parent.parent
BENCH_CONF = {
    "spark.driver.memory": "4g",
    "spark.sql.shuffle.partitions": "4",
}
POINT_LOOKUPS = ("uuid present", "uuid absent", "user_id present")
TARGETS = {
    "build_ratio_max": 2.0,
    "scan_over_bloomskip_min": 20.0,
    "native_over_bloomskip_min": 1.0,
}


def say(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def bench_build(spark, lake, tmp: Path, reps: int) -> dict[str, Any]:
    import bloomskip.spark as bs

    cols = list(KEY_COLUMNS)
    src = str(lake.path)

    def scan() -> None:
        spark.read.parquet(src).select(*cols).write.format("noop").mode("overwrite").save()

    # Untimed, on a small lake: Python workers start and load the kernels. And one scan.
    small = ensure_lake(tmp / "warm-lake", LakeSpec(files=4, rows=40_000, row_group_rows=10_000))
    bs.build_index(spark, str(small.path), cols, str(tmp / "warm-index"))
    scan()
    scans, builds, reports = [], [], []
    for i in range(reps):
        scans.append(timed(scan))
        path = tmp / f"index-{i}"
        t = time.perf_counter()
        rep = bs.build_index(spark, src, cols, str(path), overwrite=True)
        builds.append(time.perf_counter() - t)
        reports.append(rep)
        say(f"build {i + 1}/{reps}: {builds[-1]:.1f}s, scan {scans[-1]:.1f}s")
    rep = reports[-1]
    build_s, scan_s = statistics.median(builds), statistics.median(scans)
    return {
        "columns": cols,
        "scan_runs": scans,
        "build_runs": builds,
        "scan_s": scan_s,
        "build_s": build_s,
        "ratio": build_s / scan_s,
        "files_indexed": rep.files_indexed,
        "zones_written": rep.zones_written,
        "bytes_written": rep.bytes_written,
        "index": str(tmp / f"index-{reps - 1}"),
    }


def bench_lookups(spark, lake, native, index: str, reps: int) -> dict[str, Any]:
    ways = ThreeWays(spark, lake.path, native.path, index)
    queries = lake.keys.where
    for where in queries.values():  # one untimed round of every way and lookup
        ways.warm_up(where)
    out = []
    for name, where in queries.items():
        ms = ways.measure(name, where, repeat=reps)
        say("lookup " + name + ": " + ", ".join(f"{m.way} {m.seconds:.3f}s" for m in ms))
        out += ms
    by = {(m.query, m.way): m for m in out}
    ratios = {}
    for name in queries:
        b = by[(name, "bloomskip")].seconds
        ratios[name] = {
            "scan_over_bloomskip": by[(name, "spark scan")].seconds / b,
            "native_over_bloomskip": by[(name, "native bloom")].seconds / b,
            "bloomskip_plan_s": by[(name, "bloomskip")].plan_seconds,
        }
    return {"measurements": [m.to_json() for m in out], "ratios": ratios, "_objs": out}


def bench_breakdown(spark, lake, index: str, lookups: dict[str, Any], reps: int) -> dict[str, Any]:
    """Where a bloomskip point lookup spends its time (``uuid present``), and what it would
    take with the index kept open and the candidate files handed to Spark as paths."""
    from bloomskip.index import open_index

    name = "uuid present"
    where = lake.keys.where[name]
    m = next(x for x in lookups["_objs"] if x.query == name and x.way == "bloomskip")
    src = str(lake.path)

    def cold() -> Any:
        return open_index(index).query(where)

    open_ix = open_index(index)
    res = open_ix.query(where)
    schema = spark.read.parquet(src).schema

    def listing() -> None:
        spark.read.parquet(src).inputFiles()

    def direct() -> None:
        r = open_ix.query(where)
        paths = r.paths
        df = (
            spark.read.schema(schema).parquet(*paths)
            if paths
            else spark.createDataFrame([], schema)
        )
        df.where(where).collect()

    direct()
    out = {
        "lookup": name,
        "candidates": len(res.paths),
        "total_s": m.seconds,
        "plan_read_s": m.plan_seconds,
        "collect_s": m.seconds - (m.plan_seconds or 0.0),
        "index_open_and_query_s": statistics.median(timed(cold) for _ in range(reps)),
        "index_query_open_s": statistics.median(
            timed(lambda: open_ix.query(where)) for _ in range(reps)
        ),
        "spark_listing_s": statistics.median(timed(listing) for _ in range(reps)),
        "direct_s": statistics.median(timed(direct) for _ in range(reps)),
    }
    scan = next(x for x in lookups["_objs"] if x.query == name and x.way == "spark scan")
    out["scan_over_direct"] = scan.seconds / out["direct_s"]
    return out


def report(r: dict[str, Any]) -> None:
    lk, nat, b, q = r["lake"], r["native_copy"], r["build"], r["lookups"]
    spec = lk["spec"]
    print(f"bench/spark.py - {describe_machine(r['machine'])}")
    print(
        f"lake: {spec['files']} files, {spec['rows']:,} rows, row groups of "
        f"{spec['row_group_rows']:,}, {human_bytes(lk['bytes'])}; native copy: "
        f"{nat['files']} files, {nat['row_groups']:,} row groups, "
        f"{human_bytes(nat['bytes'])} (bloom filters {human_bytes(nat['bloom_bytes'])}, "
        f"fpp {nat['fpp']}), written in {nat['seconds']:.0f}s\n"
    )
    print(f"1. index build on {', '.join(b['columns'])}, median of {r['reps']}")
    rows = spec["rows"]
    print(f"  {'':52} {'seconds':>8} {'rows/s':>12} {'ratio':>6}")
    print(
        f"  {'Spark scan of the same columns (noop write)':52} {b['scan_s']:8.2f} "
        f"{rows / b['scan_s']:12,.0f} {1:6.2f}"
    )
    print(
        f"  {'bloomskip.spark.build_index':52} {b['build_s']:8.2f} "
        f"{rows / b['build_s']:12,.0f} {b['ratio']:6.2f}"
    )
    print(
        f"  index: {b['zones_written']:,} zones, {human_bytes(b['bytes_written'])}; "
        f"target ratio <= {TARGETS['build_ratio_max']:g}: "
        f"{'met' if b['ratio'] <= TARGETS['build_ratio_max'] else 'NOT met'}\n"
    )
    print(f"2. lookups, median of {r['reps']} warm runs, seconds (planning included)")
    for line in lookup_table(q["_objs"]):
        print("  " + line)
    print(
        f"\n  {'lookup':22} {'scan / bloomskip':>17} {'native / bloomskip':>19} "
        f"{'bloomskip planning':>19}"
    )
    for name, x in q["ratios"].items():
        plan = x["bloomskip_plan_s"]
        print(
            f"  {name:22} {x['scan_over_bloomskip']:17.1f} {x['native_over_bloomskip']:19.2f} "
            f"{'-' if plan is None else f'{plan:.3f}s':>19}"
        )
    t = r["targets"]
    print(
        f"  point lookups ({', '.join(POINT_LOOKUPS)}): scan / bloomskip >= "
        f"{TARGETS['scan_over_bloomskip_min']:g} {'met' if t['scan_met'] else 'NOT met'} "
        f"(min {t['scan_min']:.1f}); native / bloomskip > "
        f"{TARGETS['native_over_bloomskip_min']:g} {'met' if t['native_met'] else 'NOT met'} "
        f"(min {t['native_min']:.2f})"
    )
    print(f"  ways: {', '.join(WAYS)}; all returned the same rows for every lookup\n")
    b = r["breakdown"]
    print(
        f"3. where bloomskip's time goes ({b['lookup']}, {b['candidates']} candidate "
        "file(s)), median"
    )
    rows3 = [
        ("bloomskip lookup (as in 2.)", b["total_s"]),
        ("  plan_read (ReadPlan.seconds)", b["plan_read_s"]),
        ("  collect() of ReadPlan.df", b["collect_s"]),
        ("index opened afresh + queried (filters read from disk)", b["index_open_and_query_s"]),
        ("index query on an open index", b["index_query_open_s"]),
        ("Spark listing the lake (read.parquet + inputFiles)", b["spark_listing_s"]),
        ("open index + read.schema(s).parquet(*candidates)", b["direct_s"]),
    ]
    for label, sec in rows3:
        print(f"  {label:56} {'-' if sec is None else f'{sec:8.3f}':>8}")
    print(
        f"  full scan / the last line: {b['scan_over_direct']:.1f} (what a lookup could take "
        "with the index kept open and no listing of the lake)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--rows", type=int, default=20_000_000, help="rows in all")
    ap.add_argument("--row-group", type=int, default=20_000)
    ap.add_argument("--reps", type=int, default=3, help="timed runs per measurement")
    ap.add_argument(
        "--data",
        type=Path,
        default=Path(tempfile.gettempdir()) / "bloomskip-bench-spark",
        help="where the lake and its native-bloom copy are cached",
    )
    ap.add_argument("--quick", action="store_true", help="20 files x 50,000 rows")
    ap.add_argument("--json", type=Path, help="default bench/results/spark[-quick].json")
    args = ap.parse_args()
    if args.quick:
        args.files, args.rows, args.row_group = 20, 1_000_000, 10_000
    if args.json is None:
        args.json = (
            REPO / "bench" / "results" / ("spark-quick.json" if args.quick else "spark.json")
        )
    t_start = time.perf_counter()
    import bloomskip.spark as bs

    spec = LakeSpec(files=args.files, rows=args.rows, row_group_rows=args.row_group)
    tag = f"{spec.files}x{spec.rows}-rg{spec.row_group_rows}"
    lake = ensure_lake(args.data / f"lake-{tag}", spec, progress=say)
    spark = bs.local_session(master="local[*]", app_name="bloomskip-bench", conf=BENCH_CONF)
    jvm_opts = spark.conf.get("spark.driver.extraJavaOptions", "") or ""
    if "TieredStopAtLevel" in jvm_opts:
        raise SystemExit(f"the benchmark session must not limit the JIT: {jvm_opts}")
    try:
        native = ensure_native_copy(spark, lake, args.data / f"native-{tag}", say=say)
        retrofit = retrofit_lake(spark, lake, say=say)  # bloomskip's own native filters
        results: dict[str, Any] = {
            "retrofit": retrofit.to_json() | {"outcomes": None},
            "machine": machine_info(spark),
            "spark_conf": BENCH_CONF,
            "reps": args.reps,
            "lake": lake.to_json(),
            "native_copy": native.to_json(),
        }
        with tempfile.TemporaryDirectory(prefix="bloomskip-bench-spark-") as d:
            step = time.perf_counter()
            results["build"] = bench_build(spark, lake, Path(d), args.reps)
            say(f"build: {time.perf_counter() - step:.0f}s")
            step = time.perf_counter()
            results["lookups"] = bench_lookups(
                spark, lake, native, results["build"]["index"], args.reps
            )
            say(f"lookups: {time.perf_counter() - step:.0f}s")
            results["breakdown"] = bench_breakdown(
                spark, lake, results["build"]["index"], results["lookups"], args.reps
            )
    finally:
        spark.stop()
    ratios = results["lookups"]["ratios"]
    scan_min = min(ratios[n]["scan_over_bloomskip"] for n in POINT_LOOKUPS)
    native_min = min(ratios[n]["native_over_bloomskip"] for n in POINT_LOOKUPS)
    results["targets"] = {
        **TARGETS,
        "build_met": results["build"]["ratio"] <= TARGETS["build_ratio_max"],
        "scan_min": scan_min,
        "scan_met": scan_min >= TARGETS["scan_over_bloomskip_min"],
        "native_min": native_min,
        "native_met": native_min > TARGETS["native_over_bloomskip_min"],
    }
    results["total_s"] = time.perf_counter() - t_start
    report(results)
    print(f"\ntotal {results['total_s']:.0f}s (lake and copy generation, if any, included)")
    results["lookups"].pop("_objs")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
