"""Scale benchmark of the zone index: what a build and a lookup cost as the lake grows -
20M and 200M rows of real files, and an index of 2B rows synthesized past this machine's
disk - each figure beside a baseline measured in the same run.

Per real lake (the demo's generator, :mod:`bloomskip.demo.lake`: ``uuid`` unique strings,
``user_id`` int64 with ~4 rows per id; 100,000 rows per file, row groups of 20,000; made
once with numpy and re-used from ``--data``):

1. **Spark** (a fresh driver process, ``local[*]``, 4g, ``spark.driver.maxResultSize=16m``
   so a build that collected filters would fail): ``plain_scan_s`` - Spark reading the two
   key columns (``noop`` sink), median of ``--reps``; ``build_s`` -
   ``bloomskip.spark.build_index`` of both columns, after an untimed build of a small lake
   (Python workers start); ``driver_peak_rss_mb`` - the driver's Python process peak
   (VmHWM), ``jvm_peak_rss_mb`` the JVM's (in local mode it runs the executors too);
   ``lookup_s`` / ``full_scan_s`` - four lookups (``uuid`` present, absent, ``user_id``
   present, ``uuid IN`` 10 values), each read through the index
   (``open_lake(...).plan(q).df.collect()``: few candidate rows are read on the driver)
   and by a full Spark scan, the rows checked equal; medians of ``--reps``, interleaved;
   the worst ratio is reported. ``spark_reads_files_s``: the same lookup with Spark
   reading the candidate files (``local_rows=0``), for comparison.
2. **Cold query** (a fresh Python process per run, OS page cache warm): a first lookup
   ``index.open(path).query("uuid = '...'", check_source=False)`` pays the process's lazy
   imports (``first_query_s``: pyarrow, and pandas, which ``pa.array`` imports when it is
   installed; sqlglot); then a new ``index.open`` and a lookup of another value, nothing of
   the index in memory: ``cold_query_s``, the bytes that open read from the index
   (``Storage.bytes_read``) and the process's peak RSS; median of ``--cold`` runs.
   ``warm_query_ms``: the median of lookups of further values on the open index.
3. **Size**: ``index_bytes_per_row`` - the ``uuid`` column's objects (directory + slabs)
   per row; the whole index per row and column is reported too.

The **synthesized index** (``--synth-rows``, default 2,000,000,000 in 20,000 fragments of
100,000 rows): real zone filters (each zone's rows as random 64-bit hashes, inserted by
the kernels: the shapes and fill of a unique column) written through the index's own
parts, slabs, directory and manifest code - no data behind it. 20 values are planted in
known zones; the cold and warm queries above run on it (``check_source=False``: there are
no files to list), and each answer must include its planted zone.

    .venv/bin/python bench/scale.py [--quick] [--data DIR] [--reps R] [--cold N]
                                    [--sizes 20000000,200000000] [--synth-rows N]
                                    [--skip-spark] [--json PATH]

``--quick``: lakes of 1M and 4M rows and a 40M-row synthesized index, to check that the
script works. Absolute times drift on shared machines; ratios are against baselines of
the same run. Results are also written to ``bench/results/scale.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
ROWS_PER_FILE = 100_000
ZONE_ROWS = 8192
#: The synthesized index's layout: 3, block rows of large classes as bit planes.
SYNTH_VERSION = 3


def say(msg: str) -> None:
    print(f"[scale] {msg}", file=sys.stderr, flush=True)


def peak_mb(pid: int | str = "self") -> float:
    """A process's peak resident set (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def java_children() -> list[int]:
    """The JVMs this process started (PySpark's gateway), by walking /proc."""
    me, out = os.getpid(), []
    parents = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
                parents[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    for pid in parents:
        p = pid
        while p in parents and p not in (0, 1):
            p = parents[p]
            if p == me:
                try:
                    if b"java" in (Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]):
                        out.append(pid)
                except OSError:
                    pass
                break
    return out


def child(phase: str, payload: dict[str, Any], timeout: float = 7200) -> dict[str, Any]:
    """Run one phase of this script in a fresh interpreter; its last stdout line is JSON."""
    cmd = [sys.executable, __file__, "--child", phase, json.dumps(payload)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise SystemExit(f"{phase} failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------ phases


def bench_session():
    """The Spark session of the scale benchmarks: ``local[*]``, 4g, and
    ``spark.driver.maxResultSize=16m``, so a build that collected filters would fail."""
    import bloomskip.spark as bs

    return bs.local_session(
        "local[*]",
        conf={
            "spark.driver.memory": "4g",
            "spark.driver.maxResultSize": "16m",
            "spark.sql.shuffle.partitions": "4",
        },
    )


def phase_spark(p: dict[str, Any]) -> dict[str, Any]:
    """Build, plain scan and lookups on one lake, in this (fresh) driver process."""
    import bloomskip.spark as bs
    from bloomskip.demo.lake import KEY_COLUMNS, LakeSpec, ensure_lake
    from bloomskip.spark.local import LOCAL_ROWS

    spark = bench_session()
    cols, src, tmp, reps = list(KEY_COLUMNS), p["lake"], Path(p["tmp"]), p["reps"]
    small = ensure_lake(tmp / "warm-lake", LakeSpec(files=4, rows=40_000, row_group_rows=10_000))
    bs.build_index(spark, str(small.path), cols, str(tmp / "warm-index"))

    def scan() -> None:
        spark.read.parquet(src).select(*cols).write.format("noop").mode("overwrite").save()

    scan()
    scans = [timed(scan) for _ in range(reps)]
    index = str(tmp / "index")
    t = time.perf_counter()
    report = bs.build_index(spark, src, cols, index, overwrite=True)
    build_s = time.perf_counter() - t
    driver_mb = peak_mb()
    jvm_mb = max((peak_mb(pid) for pid in java_children()), default=float("nan"))
    say(f"build {build_s:.1f}s, scan {statistics.median(scans):.1f}s, driver {driver_mb:.0f} MB")
    schema = spark.read.parquet(src).schema
    opened = bs.open_lake(spark, src, index, schema=schema)
    lookups = {}
    for name, where in p["where"].items():

        def full(where=where):
            df = (
                spark.read.option("parquet.filter.bloom.enabled", "false")
                .schema(schema)
                .parquet(src)
                .where(where)
            )
            return sorted(tuple(r) for r in df.collect())

        def ours(where=where, local_rows=LOCAL_ROWS):
            plan = opened.plan(where, local_rows=local_rows)
            return sorted(tuple(r) for r in plan.df.collect()), plan.way

        def files(where=where):  # Spark reads the candidate files (no driver reads)
            return ours(where, local_rows=0)

        truth = full()
        (rows, way), (spark_rows, _) = ours(), files()
        if not truth == rows == spark_rows:
            raise SystemExit(f"{name}: the index's rows differ from the scan's")
        t_full, t_ours, t_files = [], [], []
        for _ in range(reps):  # interleaved: drift hits all alike
            t_full.append(timed(full))
            t_ours.append(timed(ours))
            t_files.append(timed(files))
        lookups[name] = {
            "full_scan_s": statistics.median(t_full),
            "lookup_s": statistics.median(t_ours),
            "way": way,
            "spark_reads_files_s": statistics.median(t_files),
        }
        say(f"{name}: scan {lookups[name]['full_scan_s']:.2f}s, index "
            f"{lookups[name]['lookup_s']:.3f}s ({way}), Spark reading the candidate files "
            f"{lookups[name]['spark_reads_files_s']:.3f}s")  # fmt: skip
    spark.stop()
    worst = max(lookups, key=lambda n: lookups[n]["lookup_s"] / lookups[n]["full_scan_s"])
    return {
        "lookup_s": max(v["lookup_s"] for v in lookups.values()),
        "full_scan_s": statistics.median(v["full_scan_s"] for v in lookups.values()),
        "worst_lookup": worst,
        "build_s": build_s,
        "plain_scan_s": statistics.median(scans),
        "driver_peak_rss_mb": driver_mb,
        "jvm_peak_rss_mb": jvm_mb,
        "zones_written": report.zones_written,
        "index": index,
        "lookups": lookups,
    }


def phase_query(p: dict[str, Any]) -> dict[str, Any]:
    """In this fresh process: a first lookup (paying the lazy imports of pyarrow, pandas
    through pyarrow, sqlglot), then a cold one - a new open of the index, nothing of it
    in memory - then warm ones on that open index."""
    from bloomskip import index

    first, second, others = p["values"][0], p["values"][1], p["values"][2:]
    expect = p.get("expect") or {}
    t = time.perf_counter()
    res = index.open(p["index"]).query(f"uuid = '{first}'", check_source=False)
    fresh = time.perf_counter() - t
    _check(res, expect.get(first))
    t = time.perf_counter()
    ix = index.open(p["index"])
    res = ix.query(f"uuid = '{second}'", check_source=False)
    cold = time.perf_counter() - t
    _check(res, expect.get(second))
    out = {
        "first_query_s": fresh,
        "cold_query_s": cold,
        "cold_query_rss_mb": peak_mb(),
        "cold_query_bytes_read": ix.storage.bytes_read,
        "cold_candidates": len(res.files),
        "zones_total": res.zones_total,
    }
    warm = []
    for v in others:
        t = time.perf_counter()
        res = ix.query(f"uuid = '{v}'", check_source=False)
        warm.append(time.perf_counter() - t)
        _check(res, expect.get(v))
    out["warm_query_ms"] = statistics.median(warm) * 1e3 if warm else float("nan")
    return out


def _check(res, want: list | None) -> None:
    """A planted value's zone must be among the candidates (synthesized index)."""
    if want is None:
        return
    fid, start = want
    for f in res.files:
        if f.fragment_id == fid and (f.zones is None or any(s == start for s, _ in f.zones)):
            return
    raise SystemExit(f"planted zone {want} missing from the answer")


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


# ------------------------------------------------------------------------------ lakes


def bench_lake(rows: int, data: Path, tmp: Path, args) -> dict[str, Any]:
    from bloomskip.demo.lake import LakeSpec, ensure_lake

    files = max(1, rows // ROWS_PER_FILE)
    spec = LakeSpec(files=files, rows=rows, row_group_rows=20_000)
    t = time.perf_counter()
    lake = ensure_lake(data / f"lake-{rows}", spec, progress=say)
    say(f"lake of {rows:,} rows: {lake.bytes / 1e9:.1f} GB ({time.perf_counter() - t:.0f}s)")
    keys = lake.keys
    out: dict[str, Any] = {"rows": rows, "files": files, "lake_bytes": lake.bytes}
    work = tmp / f"lake-{rows}"
    work.mkdir()
    if args.skip_spark:
        from bloomskip import index

        t = time.perf_counter()
        index.build(str(lake.path), ["uuid", "user_id"], str(work / "index"))
        out |= {"build_s": time.perf_counter() - t, "index": str(work / "index")}
    else:
        out |= child(
            "spark",
            {"lake": str(lake.path), "tmp": str(work), "reps": args.reps, "where": keys.where},
        )
    ix = Path(out["index"])
    uuid_bytes = sum(f.stat().st_size for f in (ix / "columns").glob("*-uuid/*"))
    all_bytes = sum(f.stat().st_size for f in ix.rglob("*") if f.is_file())
    out["index_bytes_per_row"] = uuid_bytes / rows
    out["index_bytes_per_row_and_column"] = all_bytes / rows / 2
    present = [keys.uuid_present, *keys.uuid_in]
    out |= queries(str(ix), present, args.cold)
    return out


def queries(index: str, present: list[str], cold: int, expect: dict | None = None) -> dict:
    runs = []
    for i in range(cold):
        values = present[i % len(present) :] + present[: i % len(present)]
        runs.append(
            child(
                "query",
                {
                    "index": index,
                    "values": values if i == cold - 1 else values[:2],
                    "expect": expect,
                },
            )
        )
    keys = ("first_query_s", "cold_query_s", "cold_query_rss_mb", "cold_query_bytes_read")
    med = {k: statistics.median(r[k] for r in runs) for k in keys}
    return med | {
        "warm_query_ms": runs[-1]["warm_query_ms"],
        "zones_total": runs[-1]["zones_total"],
        "cold_runs": [r["cold_query_s"] for r in runs],
    }


# -------------------------------------------------------------------------- synthesized


def synthesize(rows: int, data: Path, values: int = 20) -> tuple[Path, dict[str, list]]:
    """An index of ``rows`` rows of a unique string column, written through the index's
    own code from random zone filters (cached under ``data`` with a stamp)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bloomskip.hashing import hash_values
    from bloomskip.index import LocalRunner, partfile, serving, store
    from bloomskip.index import kernels as zk
    from bloomskip.index import segments as seg
    from bloomskip.index.layout import FRAGMENT_GROUP_ROWS, FRAGMENT_SCHEMA
    from bloomskip.index.parts import ColumnPart
    from bloomskip.index.storage import open_storage
    from bloomskip.sbbf.sizing import putze_num_bytes

    # one folder per layout version: an index of an older layout is never overwritten
    root = data / f"synth-{rows}-v{SYNTH_VERSION}"
    stamp = root / "_bench_stamp.json"
    planted_v = [f"planted-{i:04d}" for i in range(values)]
    files = rows // ROWS_PER_FILE
    rng = np.random.default_rng(20261125)
    plant_f = rng.integers(0, files, values)
    plant_z = rng.integers(0, -(-ROWS_PER_FILE // ZONE_ROWS), values)
    planted = zip(planted_v, plant_f, plant_z, strict=True)
    expect = {v: [int(f), int(z) * ZONE_ROWS] for v, f, z in planted}
    if stamp.exists() and json.loads(stamp.read_text()) == {"rows": rows, "v": SYNTH_VERSION}:
        return root / "index", expect
    import shutil

    shutil.rmtree(root, ignore_errors=True)
    lake = root / "lake"
    lake.mkdir(parents=True)
    pq.write_table(pa.table({"uuid": ["a"]}), lake / "seed.parquet")
    from bloomskip import index

    idx = root / "index"
    index.build(str(lake), ["uuid"], str(idx))  # a template: the column, its source
    storage = open_storage(str(idx))
    base = store.read_manifest(storage)
    col = base.columns["uuid"].with_segments(())
    zone_bytes = putze_num_bytes(ZONE_ROWS, col.fpp)
    starts = np.arange(0, ROWS_PER_FILE, ZONE_ROWS, dtype=np.uint64)
    lengths = np.minimum(ZONE_ROWS, ROWS_PER_FILE - starts).astype(np.uint64)
    per_file = starts.shape[0]
    planted_h = hash_values(pa.array(planted_v))
    files_per_part = max(1, min(100, files))
    parts = []
    t0 = time.perf_counter()
    for p0 in range(0, files, files_per_part):
        fids = np.arange(p0, min(files, p0 + files_per_part), dtype=np.uint64)
        n = fids.shape[0] * per_file
        words = np.zeros(n * zone_bytes // 4, np.uint32)
        offsets = np.arange(n, dtype=np.int64) * (zone_bytes // 4)
        sizes = np.full(n, zone_bytes // 4, np.int64)
        zl = np.tile(lengths, fids.shape[0]).astype(np.int64)
        hashes = rng.integers(0, 2**63, int(zl.sum()), dtype=np.uint64) * np.uint64(2) + (
            rng.integers(0, 2, int(zl.sum()), dtype=np.uint64)
        )
        bounds = np.concatenate([[0], np.cumsum(zl)]).astype(np.int64)
        zk.insert_runs(words, offsets, sizes, hashes, bounds)
        for v, (f, z) in enumerate(zip(plant_f, plant_z, strict=True)):
            if p0 <= f < p0 + fids.shape[0]:
                at = (int(f) - p0) * per_file + int(z)
                one = np.array([at], np.int64)
                zk.insert_runs(words, offsets[one], sizes[one], planted_h[v : v + 1],
                               np.array([0, 1], np.int64))  # fmt: skip
        frag = np.repeat(fids, per_file)
        keys = (frag << np.uint64(40)) | np.tile(starts, fids.shape[0])
        rel = store.new_name(col.directory, ".blocks")
        data_bytes = words.view(np.uint8)
        zone_class, classes, size = partfile.write_part(
            storage, rel, data_bytes, np.arange(n + 1, dtype=np.int64) * zone_bytes
        )
        ndv = np.tile(lengths, fids.shape[0])
        flags = np.full(n, serving.HAS_VALUE, np.uint8)
        parts.append(
            (
                ColumnPart(None, partfile.Part(rel, tuple(classes), size), frag, keys,
                           np.tile(lengths, fids.shape[0]), flags, ndv, zone_class),
                fids,
            )
        )  # fmt: skip
        if len(parts) % 20 == 0:
            say(f"synthesized {int(fids[-1]) + 1:,} of {files:,} fragments "
                f"({time.perf_counter() - t0:.0f}s)")  # fmt: skip
    plan = seg.plan_segment(col, parts)
    runner = LocalRunner(progress=False)
    segment = seg.finish(storage, plan, runner.slabs(storage, plan.jobs))
    for part, _ in parts:
        storage.delete(part.blocks.rel)
    frag_rows = pa.table(
        {
            "fragment_id": pa.array(np.arange(files), pa.uint64()),
            "path": [f"{lake}/synth-{i:06d}.parquet" for i in range(files)],
            "size": pa.array(np.full(files, 50 << 20), pa.int64()),
            "mtime_ns": pa.array(np.full(files, 1_700_000_000 * 10**9), pa.int64()),
            "num_rows": pa.array(np.full(files, ROWS_PER_FILE), pa.uint64()),
            "format": ["parquet"] * files,
            "etag": pa.array([None] * files, pa.string()),
        }
    ).cast(FRAGMENT_SCHEMA)
    frag_rel = store.new_name("fragments", ".parquet")
    storage.write_table(frag_rel, frag_rows, row_group_size=FRAGMENT_GROUP_ROWS)
    from dataclasses import replace

    manifest = replace(
        base,
        version=base.version + 1,
        fragments=frag_rel,
        next_fragment_id=files,
        columns={"uuid": col.with_segments((segment,))},
        num_files=files,
        num_rows=files * ROWS_PER_FILE,
        dropped=(),
    )
    store.publish(storage, manifest)
    stamp.write_text(json.dumps({"rows": rows, "v": SYNTH_VERSION}))
    say(f"synthesized index of {rows:,} rows in {time.perf_counter() - t0:.0f}s")
    return idx, expect


def bench_synth(rows: int, data: Path, args) -> dict[str, Any]:
    idx, expect = synthesize(rows, data)
    size = sum(f.stat().st_size for f in (idx / "columns").rglob("*") if f.is_file())
    out = {"rows": rows, "files": rows // ROWS_PER_FILE, "synthesized": True,
           "index_bytes_per_row": size / rows}  # fmt: skip
    values = list(expect)
    return out | queries(str(idx), values, args.cold, expect)


# ------------------------------------------------------------------------------ report


def report(r: dict[str, Any]) -> None:
    print(f"bench/scale.py - {r['machine']}")
    head = (
        f"{'rows':>14} {'files':>7} {'B/row':>6} {'build s':>8} {'scan s':>7} {'ratio':>6} "
        f"{'drv MB':>7} {'first s':>7} {'cold s':>7} {'cold MB':>8} {'cold KB read':>12} "
        f"{'B/zone':>7} {'warm ms':>8} {'lookup s':>9} {'scan/lkp':>9}"
    )
    print(head)
    for s in r["sizes"]:

        def f(key, fmt, s=s):
            v = s.get(key)
            return format(v, fmt) if isinstance(v, int | float) else "-"

        ratio = s["build_s"] / s["plain_scan_s"] if s.get("plain_scan_s") else None
        per_zone = s["cold_query_bytes_read"] / max(s.get("zones_total") or 1, 1)
        worst = min((v["full_scan_s"] / v["lookup_s"] for v in s.get("lookups", {}).values()),
                    default=None)  # fmt: skip
        print(
            f"{s['rows']:>14,} {s['files']:>7,} {f('index_bytes_per_row', '.2f'):>6} "
            f"{f('build_s', '.1f'):>8} {f('plain_scan_s', '.1f'):>7} "
            f"{format(ratio, '.2f') if ratio else '-':>6} {f('driver_peak_rss_mb', '.0f'):>7} "
            f"{s['first_query_s']:>7.3f} {s['cold_query_s']:>7.3f} {s['cold_query_rss_mb']:>8.0f} "
            f"{s['cold_query_bytes_read'] / 1024:>12,.0f} {per_zone:>7.1f} "
            f"{s['warm_query_ms']:>8.2f} {f('lookup_s', '.3f'):>9} "
            f"{format(worst, '.0f') + 'x' if worst else '-':>9}"
        )
    print("  B/row: the uuid column's index objects per row; ratio: Spark build / plain scan;")
    print("  drv MB: the driver's Python peak RSS (spark.driver.maxResultSize=16m); first: a")
    print("  fresh process's first lookup, its lazy imports included; cold: then a new open")
    print("  and lookup (check_source=False), its peak RSS, the bytes it read, per zone;")
    print("  lookup s: the slowest of four lookups through the index; scan/lkp: the smallest")
    print("  ratio of a full Spark scan to the same lookup.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, to check the script")
    ap.add_argument("--data", type=Path,
                    default=Path(tempfile.gettempdir()) / "bloomskip-bench-scale")  # fmt: skip
    ap.add_argument(
        "--sizes",
        default=None,
        help="lake rows, comma-separated (none: only the synthesized index)",
    )
    ap.add_argument("--synth-rows", type=int, default=None, help="0: none")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cold", type=int, default=5)
    ap.add_argument("--skip-spark", action="store_true", help="thread-pool build, no Spark")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        phase, payload = args.child
        fn = {"spark": phase_spark, "query": phase_query}[phase]
        print(json.dumps(fn(json.loads(payload))), flush=True)
        sys.stderr.flush()
        # No interpreter teardown (as the CLI): pyarrow's C++ thread pools can abort a
        # finished process there ("terminate called without an active exception").
        os._exit(0)
    spec = args.sizes or ("1000000,4000000" if args.quick else "20000000,200000000")
    sizes = [] if spec == "none" else [int(x) for x in spec.split(",")]
    synth = args.synth_rows  # 0: no synthesized index
    if synth is None:
        synth = 40_000_000 if args.quick else 2_000_000_000
    args.data.mkdir(parents=True, exist_ok=True)
    import platform

    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    result: dict[str, Any] = {"machine": machine, "sizes": []}
    with tempfile.TemporaryDirectory(dir=args.data) as tmp:
        for rows in sizes:
            result["sizes"].append(bench_lake(rows, args.data, Path(tmp), args))
            say(json.dumps(result["sizes"][-1]))
    if synth:
        result["sizes"].append(bench_synth(synth, args.data, args))
    report(result)
    out = args.json or REPO / "bench" / "results" / ("scale-quick.json" if args.quick
                                                      else "scale.json")  # fmt: skip
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
