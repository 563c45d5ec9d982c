"""Zone index benchmark: build time against pyarrow reading the same columns, index size
per row, query latency and measured false-positive rates - in one run, one process, on one
generated lake.

The lake: ``--files`` Parquet files of ``--rows`` rows (default 200 x 100,000 = 20M rows),
row groups of 50,000, written by pyarrow (snappy) with five columns:

=========  ===============================================  ===========================
``uuid``   string, 32 hex digits of a random UUID4          high cardinality (unique)
``k``      int64, uniform in [0, 2**62)                     high cardinality (unique)
``mid``    int64, uniform in 0..50,000                      ~43,000 distinct per file
``low``    int32, uniform in 0..99                          100 distinct
``pay``    float64 payload, not indexed
=========  ===============================================  ===========================

It is generated once with numpy (seeded) and cached under ``--data`` (default
``$TMPDIR/bloomskip-bench-index``; ``bench/.data`` is not git-ignored); indexes are built
anew in a temporary directory on every run. Measured:

1. **build** - ``index.build(lake, [uuid, k, mid, low], ...)`` with the local thread
   pool (``threads=None``: one worker per core), for ``zone_rows=8192`` with ``sizing=
   "putze"`` (the default, Lance's) and ``"exact"``, and ``zone_rows=1024``. The baseline
   is pyarrow reading the same four columns of every file, one file per task in a thread
   pool of the same size (what the builder reads), median of ``--reps``;
   ``pq.read_table(lake, columns)`` with pyarrow's own threads is printed too. Ratio =
   build / baseline read. Page cache warm for both; numba kernels compiled beforehand.
2. **size** - per column and sizing: filter bytes held in memory per row (zone filters,
   file filters) and bytes on disk per row (the zstd-compressed Parquet tables of the
   column: sparse filters compress), from ``ZoneIndex.status()``.
3. **query latency** - on the ``zone_rows=1024`` index (20M rows at 8,192 rows per zone
   are only ~2,600 zones; at 1,024, ~19,600 per column): ``uuid = v``, ``uuid IN (100
   values)``, ``k = v`` and ``k IN (100 values)``, values present in the lake. *Cold* =
   ``index.open()`` + the first query (the column's zone tables read from disk, OS page
   cache warm), median of ``--cold`` fresh opens; *warm* = median of ``--warm`` queries
   with different values on an open index. Both with ``check_source=True`` (the source
   is listed and compared, the default) and ``False``. The baseline is answering without
   an index: ``pq.read_table(lake, columns=[col], filters=...)`` (a full column scan).
4. **false positives** - ``--absent`` values known absent per column (UUIDs with version
   nibble 0, ``k >= 2**62``, ``mid > 50,000``, ``low >= 100``). Every file filter and
   every zone filter of the index is probed with every absent value (``Sbbf.check_hashes``
   on the stored bitsets), giving: the file-level rate; the zone-level rate over the
   zones a query probes (those of files whose file filter kept the value); the zone-level
   rate over all zones (zone filters alone); and the end-to-end rate (zones a query
   returns / zones). Each absent value is also queried (``col = v``) and the query must
   return exactly the zones the filters predict. Predicted = mean Putze FPP of the filters
   (their distinct count and size), as ``status()`` reports for zones.

    .venv/bin/python bench/index.py [--quick] [--files N] [--rows N] [--data DIR]
                                    [--reps R] [--absent N] [--json PATH]

``--quick``: 20 files x 50,000 rows (1M rows), for checking that the script works.
Ratios printed are against baselines measured in the same run; absolute times drift on
shared machines. Results are also written as JSON to ``bench/results/index.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bloomskip import index
from bloomskip.hashing import hash_values
from bloomskip.sbbf import Sbbf
from bloomskip.sbbf.sizing import putze_fpp_many

REPO = Path(__file__).resolve().parent.parent
COLUMNS = ("uuid", "k", "mid", "low")
CARDINALITY = {"uuid": "unique", "k": "unique", "mid": "0..50,000", "low": "0..99"}
MID_MAX, LOW_N = 50_000, 100
FORMAT_VERSION = 1  # of the generated lake: bump when the generator changes
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


# ----------------------------------------------------------------------------- data


def uuid_hex(rng: np.random.Generator, n: int, version: int = 4) -> pa.Array:
    """``n`` random UUIDs (RFC 4122 variant, given version nibble) as 32 hex digits."""
    raw = np.frombuffer(rng.bytes(16 * n), dtype=np.uint8).reshape(n, 16).copy()
    raw[:, 6] = (raw[:, 6] & 0x0F) | (version << 4)
    raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80
    chars = np.empty((n, 32), dtype=np.uint8)
    chars[:, 0::2] = _HEX[raw >> 4]
    chars[:, 1::2] = _HEX[raw & 0x0F]
    offsets = np.arange(0, 32 * (n + 1), 32, dtype=np.int32)
    return pa.Array.from_buffers(
        pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(chars.reshape(-1))]
    )


def make_file(rows: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table(
        {
            "uuid": uuid_hex(rng, rows),
            "k": pa.array(rng.integers(0, 2**62, size=rows, dtype=np.int64)),
            "mid": pa.array(rng.integers(0, MID_MAX + 1, size=rows, dtype=np.int64)),
            "low": pa.array(rng.integers(0, LOW_N, size=rows, dtype=np.int32)),
            "pay": pa.array(rng.random(rows)),
        }
    )


def lake(data: Path, files: int, rows: int, row_group: int, workers: int) -> Path:
    """The cached lake for these parameters, generated first if missing."""
    name = f"lake-v{FORMAT_VERSION}-{files}x{rows}-rg{row_group}"
    path = data / name
    done = data / f"{name}.done"
    if done.exists() and path.is_dir():
        return path
    t0 = time.perf_counter()
    tmp = data / f"{name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)

    def write(i: int) -> None:
        pq.write_table(make_file(rows, 1000 + i), tmp / f"part-{i:05d}.parquet", row_group)

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(write, range(files)))
    shutil.rmtree(path, ignore_errors=True)
    tmp.rename(path)
    done.write_text(f"{files} files x {rows} rows\n")
    print(f"generated {path} in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return path


def absent_values(column: str, n: int) -> pa.Array:
    """``n`` distinct values of ``column`` that no generated row holds."""
    rng = np.random.default_rng(99)
    if column == "uuid":
        return uuid_hex(rng, n, version=0)  # the lake's UUIDs all have version nibble 4
    if column == "k":
        return pa.array(rng.choice(2**40, size=n, replace=False).astype(np.int64) + 2**62)
    if column == "mid":
        return pa.array(np.arange(MID_MAX + 1, MID_MAX + 1 + n, dtype=np.int64))
    if column == "low":
        return pa.array(np.arange(LOW_N, LOW_N + n, dtype=np.int32))
    raise ValueError(column)


def sql(values: pa.Array | list) -> list[str]:
    """SQL literals for values."""
    out = values.to_pylist() if isinstance(values, pa.Array) else list(values)
    return [f"'{v}'" if isinstance(v, str) else str(v) for v in out]


# ----------------------------------------------------------------------------- timing


def median_time(fn: Callable[[], Any], reps: int) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def read_pool(paths: list[Path], columns: list[str], workers: int) -> list[pa.Table]:
    """pyarrow reading ``columns`` of every file, one file per task, ``workers`` threads."""

    def one(p: Path) -> pa.Table:
        return pq.ParquetFile(p).read(columns=columns, use_threads=False)

    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(one, paths))


# ----------------------------------------------------------------------------- 1. build


BUILDS = (  # label, zone_rows, sizing
    ("8192 putze", 8192, "putze"),
    ("8192 exact", 8192, "exact"),
    ("1024 putze", 1024, "putze"),
)


def warm_up(src: Path, tmp: Path) -> None:
    """Load (or compile) the numba kernels: a build and queries over one file."""
    first = sorted(src.glob("*.parquet"))[:1]
    ix_dir = tmp / "warm-up"
    index.build(first, list(COLUMNS), ix_dir, zone_rows=1024, progress=False)
    ix = index.open(ix_dir)
    for c, lits in (("uuid", "'x'"), ("k", "1, 2"), ("mid", "1"), ("low", "1")):
        ix.query(f"{c} IN ({lits})")
    shutil.rmtree(ix_dir)


def bench_build(src: Path, tmp: Path, reps: int, workers: int) -> dict[str, Any]:
    paths = sorted(src.glob("*.parquet"))
    cols = list(COLUMNS)
    read_pool(paths, cols, workers)  # page cache
    t_pool = median_time(lambda: read_pool(paths, cols, workers), reps)
    t_table = median_time(lambda: pq.read_table(src, columns=cols), reps)
    meta = pq.ParquetFile(paths[0]).metadata
    col_idx = [meta.schema.names.index(c) for c in cols]
    col_bytes = len(paths) * sum(
        meta.row_group(r).column(i).total_uncompressed_size
        for r in range(meta.num_row_groups)
        for i in col_idx
    )
    builds = {}
    for label, zone_rows, sizing in BUILDS:
        ix_dir = tmp / f"index-{zone_rows}-{sizing}"
        t = time.perf_counter()
        rep = index.build(
            src, cols, ix_dir, zone_rows=zone_rows, sizing=sizing, progress=False, overwrite=True
        )
        wall = time.perf_counter() - t
        if rep.failed:
            raise SystemExit(f"build {label} failed for {rep.failed[:3]}")
        builds[label] = {
            "zone_rows": zone_rows,
            "sizing": sizing,
            "dir": str(ix_dir),
            "seconds": wall,
            "report_seconds": rep.seconds,
            "zones_written": rep.zones_written,
            "bytes_written": rep.bytes_written,
            "ratio": wall / t_pool,
        }
    return {
        "files": len(paths),
        "columns": cols,
        "column_mb_uncompressed": col_bytes / 1e6,
        "workers": workers,
        "pyarrow_read_pool_s": t_pool,
        "pyarrow_read_table_s": t_table,
        "builds": builds,
    }


# ----------------------------------------------------------------------------- 2. size


def bench_size(builds: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for label, b in builds.items():
        ix = index.open(b["dir"])
        st = ix.status(check_source=False)
        rows = st["rows_indexed"]
        for c in COLUMNS:
            s = st["columns"][c]
            out.append(
                {
                    "index": label,
                    "column": c,
                    "zones": s["zones"],
                    "zone_filter_bytes_per_row": s["zone_filter_bytes"] / rows,
                    "file_filter_bytes_per_row": s["file_filter_bytes"] / rows,
                    "memory_bytes_per_row": s["bytes_per_row"],
                    "disk_bytes_per_row": s["disk_bytes"] / rows,
                    "predicted_zone_fpp_mean": s["predicted_fpp_mean"],
                    "fpp_target": s["fpp_target"],
                }
            )
    return out


# ----------------------------------------------------------------------------- 3. queries


def bench_query(
    ix_dir: str, src: Path, sample: pa.Table, cold_reps: int, warm_reps: int, reps: int
) -> dict[str, Any]:
    rng = np.random.default_rng(5)
    n = sample.num_rows
    cases = []
    for c in ("uuid", "k"):
        values = sql(sample.column(c).combine_chunks())
        ones = [f"{c} = {values[i]}" for i in rng.integers(0, n, size=warm_reps + cold_reps)]
        ins = [
            f"{c} IN ({', '.join(values[j] for j in rng.choice(n, size=100, replace=False))})"
            for _ in range(warm_reps + cold_reps)
        ]
        cases.append((f"{c} = v", ones))
        cases.append((f"{c} IN (100 values)", ins))
    out: dict[str, Any] = {"cases": []}
    zones_total = 0
    for label, preds in cases:
        row: dict[str, Any] = {"query": label}
        for check in (True, False):
            key = "listed" if check else "unlisted"
            cold = []
            for p in preds[:cold_reps]:
                t = time.perf_counter()
                ix = index.open(ix_dir)
                res = ix.query(p, check_source=check)
                cold.append(time.perf_counter() - t)
            ix = index.open(ix_dir)
            ix.query(preds[0], check_source=check)  # load the column
            warm, files, zones = [], [], []
            for p in preds[cold_reps:]:
                t = time.perf_counter()
                res = ix.query(p, check_source=check)
                warm.append(time.perf_counter() - t)
                files.append(len(res.files))
                zones.append(res.zones_candidate)
            zones_total = res.zones_total
            row[f"cold_{key}_s"] = statistics.median(cold)
            row[f"warm_{key}_s"] = statistics.median(warm)
            row["files_candidate_median"] = statistics.median(files)
            row["zones_candidate_median"] = statistics.median(zones)
            notes = [n for n in res.notes if not n.startswith("source not listed")]
            row["notes"] = sorted(set(row.get("notes", [])) | set(notes))
        out["cases"].append(row)
    # Without an index: pyarrow reads the column of every file and filters.
    v_uuid = sample.column("uuid")[0].as_py()
    v_k = sample.column("k").to_pylist()[:100]
    out["scan_uuid_eq_s"] = median_time(
        lambda: pq.read_table(src, columns=["uuid"], filters=[("uuid", "=", v_uuid)]), reps
    )
    out["scan_k_in100_s"] = median_time(
        lambda: pq.read_table(src, columns=["k"], filters=[("k", "in", v_k)]), reps
    )
    out["zones_total"] = zones_total
    return out


# ----------------------------------------------------------------------------- 4. FPP


def probe(bitsets: pa.ChunkedArray, hashes: np.ndarray) -> np.ndarray:
    """``(filters, values)`` bool: may stored bitset ``i`` hold value ``j``?"""
    out = np.empty((len(bitsets), hashes.shape[0]), dtype=np.bool_)
    i = 0
    for chunk in bitsets.chunks:
        for b in chunk:
            out[i] = Sbbf.from_bytes(b.as_buffer()).check_hashes(hashes)
            i += 1
    return out


def bench_fpp(label: str, ix_dir: str, n_absent: int, n_queries: int) -> list[dict[str, Any]]:
    ix = index.open(ix_dir)
    out = []
    for c in COLUMNS:
        col = ix.columns[c]
        absent = absent_values(c, n_absent)
        hashes = hash_values(absent, physical=col.physical, encoding=col.encoding)
        zt = ix.zones(c)
        zfrag = zt.column("fragment_id").to_numpy()
        hz = probe(zt.column("bloom_filter_data"), hashes)  # (zones, values)
        zbytes = np.asarray(pc.binary_length(zt.column("bloom_filter_data")))
        zndv = zt.column("ndv").to_numpy().astype(np.float64)
        rels = [r for s in col.segments for r in s.files]
        hf = None  # no file filters (the default): every zone is probed
        if rels:
            ft = pa.concat_tables(pq.read_table(os.path.join(ix.root, r)) for r in rels).sort_by(
                "fragment_id"
            )
            ffrag = ft.column("fragment_id").to_numpy()
            zfile = np.searchsorted(ffrag, zfrag)
            assert (ffrag[zfile] == zfrag).all(), "a zone without a file filter"
            hf = probe(ft.column("bloom_filter_data"), hashes)  # (files, values)
            fbytes = np.asarray(pc.binary_length(ft.column("bloom_filter_data")))
            fndv = ft.column("ndv").to_numpy().astype(np.float64)
        probed = hf[zfile] if hf is not None else np.ones_like(hz)
        returned = hz & probed
        # The query path must return exactly the zones the filters say.
        lits = sql(absent)
        step = max(1, n_absent // n_queries) if n_queries else 0
        checked, mismatched, t_q = 0, 0, 0.0
        for j in range(0, n_absent, step) if step else ():
            t = time.perf_counter()
            res = ix.query(f"{c} = {lits[j]}", check_source=False)
            t_q += time.perf_counter() - t
            checked += 1
            mismatched += res.zones_candidate != int(returned[:, j].sum())
        out.append(
            {
                "index": label,
                "column": c,
                "absent_values": n_absent,
                "files": int(np.unique(zfrag).shape[0]),
                "zones": int(hz.shape[0]),
                "file_fp": None if hf is None else int(hf.sum()),
                "file_fp_values": None if hf is None else int(hf.any(axis=0).sum()),
                "file_probes": None if hf is None else int(hf.size),
                "file_rate": None if hf is None else float(hf.mean()),
                "file_predicted": None
                if hf is None
                else float(putze_fpp_many(fndv, fbytes).mean()),
                "zone_probed_fp": int(returned.sum()),
                "zone_probed": int(probed.sum()),
                "zone_probed_rate": float(returned.sum() / max(probed.sum(), 1)),
                "zone_fp": int(hz.sum()),
                "zone_fp_values": int(hz.any(axis=0).sum()),
                "zone_probes": int(hz.size),
                "zone_rate": float(hz.mean()),
                "zone_predicted": float(putze_fpp_many(zndv, zbytes).mean()),
                "end_to_end_rate": float(returned.mean()),
                "zone_ndv_mean": float(zndv.mean()),
                "fpp_target": col.fpp,
                "queries_checked": checked,
                "queries_mismatched": int(mismatched),
                "query_mean_s": t_q / max(checked, 1),
            }
        )
    return out


# ----------------------------------------------------------------------------- report


def ms(s: float) -> str:
    return f"{s * 1e3:8.2f}"


def rate(x: float | None) -> str:
    if x is None:
        return f"{'-':>9}"
    return f"{x:9.2e}" if x else f"{0:9d}"


def report(r: dict[str, Any]) -> None:
    b = r["build"]
    rows = r["rows"]
    print(
        f"bench/index.py - {r['machine']}, pyarrow {pa.__version__}, "
        f"bloomskip {r['bloomskip']}\n"
        f"lake: {b['files']} files x {r['rows_per_file']:,} rows = {rows:,} rows, row groups "
        f"of {r['row_group']:,}, {r['lake_mb']:.0f} MB on disk; indexed columns "
        f"{', '.join(COLUMNS)} = {b['column_mb_uncompressed']:.0f} MB uncompressed\n"
    )
    print(
        f"1. build, {len(COLUMNS)} columns, {b['workers']} threads "
        f"(baseline: pyarrow reading the same columns, median of {r['reps']})"
    )
    print(f"  {'':44} {'seconds':>8} {'rows/s':>12} {'zones':>8} {'ratio':>6}")
    print(
        f"  {'pyarrow read, 1 file per task, ' + str(b['workers']) + ' threads':44} "
        f"{b['pyarrow_read_pool_s']:8.2f} {rows / b['pyarrow_read_pool_s']:12,.0f} "
        f"{'':8} {1:6.2f}"
    )
    t = b["pyarrow_read_table_s"]
    print(
        f"  {'pyarrow read_table(lake, columns)':44} {t:8.2f} {rows / t:12,.0f} {'':8} "
        f"{t / b['pyarrow_read_pool_s']:6.2f}"
    )
    for x in b["builds"].values():
        name = f"index.build zone_rows={x['zone_rows']} sizing={x['sizing']}"
        print(
            f"  {name:44} {x['seconds']:8.2f} {rows / x['seconds']:12,.0f} "
            f"{x['zones_written']:8,} {x['ratio']:6.2f}"
        )
    print("  (ratio = time / pyarrow read with the same pool; zones = all columns)\n")

    print("2. index size per row (in memory = filter bitsets; on disk = zstd Parquet tables)")
    print(
        f"  {'column':6} {'values':>9} {'index':>11} {'zones':>7} {'zone B/row':>10} "
        f"{'file B/row':>10} {'mem B/row':>9} {'disk B/row':>10} {'pred. zone fpp':>14}"
    )
    for s in r["size"]:
        print(
            f"  {s['column']:6} {CARDINALITY[s['column']]:>9} {s['index']:>11} "
            f"{s['zones']:7,} {s['zone_filter_bytes_per_row']:10.3f} "
            f"{s['file_filter_bytes_per_row']:10.4f} {s['memory_bytes_per_row']:9.3f} "
            f"{s['disk_bytes_per_row']:10.4f} {s['predicted_zone_fpp_mean']:14.2e}"
        )
    print(
        f"  (index = zone_rows and sizing; target fpp {r['size'][0]['fpp_target']}; "
        "filters are powers of two)\n"
    )

    q = r["query"]
    print(
        f"3. query latency, index zone_rows=1024 ({q['zones_total']:,} zones per column, "
        f"{b['files']} files), ms"
    )
    print(
        f"   cold = index.open() + first query (zone tables read), median of {r['cold']} opens;\n"
        f"   warm = median of {r['warm']} queries on an open index; values present in the lake"
    )
    print(
        f"  {'':20} {'listed (check_source=True)':>26} {'unlisted (=False)':>22} "
        f"{'candidates (median)':>20}"
    )
    print(
        f"  {'query':20} {'cold':>12} {'warm':>13} {'cold':>11} {'warm':>10} "
        f"{'files':>9} {'zones':>10}"
    )
    for c in q["cases"]:
        print(
            f"  {c['query']:20} {ms(c['cold_listed_s']):>12} {ms(c['warm_listed_s']):>13} "
            f"{ms(c['cold_unlisted_s']):>11} {ms(c['warm_unlisted_s']):>10} "
            f"{c['files_candidate_median']:>9g} {c['zones_candidate_median']:>10g}"
        )
        for note in c["notes"]:
            print(f"    note: {note}")
    by = {c["query"]: c for c in q["cases"]}
    print(
        f"  without an index, pyarrow read_table(lake, columns=[col], filters=...): uuid = v "
        f"{q['scan_uuid_eq_s'] * 1e3:.0f} ms, k IN (100 values) {q['scan_k_in100_s'] * 1e3:.0f}"
        " ms\n"
        f"  ratio warm listed query / scan: uuid = v "
        f"{by['uuid = v']['warm_listed_s'] / q['scan_uuid_eq_s']:.4f}, k IN (100 values) "
        f"{by['k IN (100 values)']['warm_listed_s'] / q['scan_k_in100_s']:.4f}\n"
    )

    f0 = r["fpp"][0]
    n_abs, n_files = f0["absent_values"], f0["files"]
    print(
        f"4. false positives: {n_abs:,} values known absent per column; every file filter and "
        "zone filter of each index probed with each"
    )
    print(
        f"   file: files whose filter keeps the value, of {n_files} files x {n_abs:,} values\n"
        "   probed: zones kept / zones probed, i.e. zones of the files the file filter kept "
        "(what a query sees)\n"
        "   all zones: zone filters alone, zones kept / zones x values\n"
        "   end-to-end: zones a query returns / zones x values (file AND zone filter)\n"
        "   [n]: distinct absent values behind the false positives; pred.: mean Putze FPP of "
        "the filters (their NDV and size)"
    )
    print(
        f"  {'index':10} {'column':6} {'file FP':>11} {'rate':>9} {'pred.':>9} "
        f"{'probed FP':>14} {'rate':>9} {'all-zone FP':>26} {'rate':>9} {'pred.':>9} "
        f"{'end-to-end':>10}"
    )
    mismatched = 0
    for f in r["fpp"]:
        mismatched += f["queries_mismatched"]
        file_fp = "-" if f["file_fp"] is None else f"{f['file_fp']:,} [{f['file_fp_values']}]"
        zone_fp = f"{f['zone_fp']:,} [{f['zone_fp_values']}]/{f['zone_probes']:,}"
        print(
            f"  {f['index']:10} {f['column']:6} {file_fp:>11} {rate(f['file_rate'])} "
            f"{rate(f['file_predicted'])} {f['zone_probed_fp']:>5,}/{f['zone_probed']:<8,} "
            f"{rate(f['zone_probed_rate'])} {zone_fp:>26} "
            f"{rate(f['zone_rate'])} {rate(f['zone_predicted'])} {rate(f['end_to_end_rate'])}"
        )
    checked = sum(f["queries_checked"] for f in r["fpp"])
    print(
        "  low: every file and zone holds the same 100 values, so its filters of one size are\n"
        "  bit-identical and an absent value that passes one passes all of them: its rates rest\n"
        "  on the [n] values, not on the probe count (likewise, partly, mid's file filters).\n"
        f"  queries checked: {checked:,} (col = absent value, check_source=False); "
        f"{mismatched} returned other zones than the filters say"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--rows", type=int, default=100_000, help="rows per file")
    ap.add_argument("--row-group", type=int, default=50_000)
    ap.add_argument("--reps", type=int, default=3, help="repetitions of baseline reads")
    ap.add_argument("--cold", type=int, default=7, help="fresh opens timed per query")
    ap.add_argument("--warm", type=int, default=50, help="queries timed per query shape")
    ap.add_argument("--absent", type=int, default=2000, help="absent values per column")
    ap.add_argument("--queries", type=int, default=500, help="absent values also queried")
    ap.add_argument(
        "--data",
        type=Path,
        default=Path(tempfile.gettempdir()) / "bloomskip-bench-index",
        help="where the generated lake is cached",
    )
    ap.add_argument("--quick", action="store_true", help="20 files x 50,000 rows, fewer reps")
    ap.add_argument("--json", type=Path, help="default bench/results/index[-quick].json")
    args = ap.parse_args()
    if args.quick:
        args.files, args.rows, args.row_group = 20, 50_000, 25_000
        args.reps, args.cold, args.warm, args.absent, args.queries = 2, 3, 10, 200, 50
    if args.json is None:
        name = "index-quick.json" if args.quick else "index.json"
        args.json = REPO / "bench" / "results" / name
    t_start = time.perf_counter()
    workers = min(32, os.cpu_count() or 1)  # what index.build(threads=None) uses
    src = lake(args.data, args.files, args.rows, args.row_group, workers)
    lake_mb = sum(p.stat().st_size for p in src.glob("*.parquet")) / 1e6
    from bloomskip import __version__

    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    results: dict[str, Any] = {
        "machine": machine,
        "bloomskip": __version__,
        "rows": args.files * args.rows,
        "rows_per_file": args.rows,
        "row_group": args.row_group,
        "lake_mb": lake_mb,
        "reps": args.reps,
        "cold": args.cold,
        "warm": args.warm,
    }
    with tempfile.TemporaryDirectory(prefix="bloomskip-bench-index-") as d:
        tmp = Path(d)
        warm_up(src, tmp)
        step = time.perf_counter()
        results["build"] = build = bench_build(src, tmp, args.reps, workers)
        print(f"build: {time.perf_counter() - step:.0f}s", file=sys.stderr)
        results["size"] = bench_size(build["builds"])
        step = time.perf_counter()
        rng = np.random.default_rng(3)
        files = sorted(src.glob("*.parquet"))
        picks = rng.choice(len(files), size=min(len(files), 20), replace=False)
        sample = pa.concat_tables(
            pq.read_table(files[i], columns=["uuid", "k"]) for i in sorted(picks)
        )
        fine = build["builds"]["1024 putze"]["dir"]
        results["query"] = bench_query(fine, src, sample, args.cold, args.warm, args.reps)
        print(f"query: {time.perf_counter() - step:.0f}s", file=sys.stderr)
        step = time.perf_counter()
        results["fpp"] = []
        for label, x in build["builds"].items():
            results["fpp"] += bench_fpp(label, x["dir"], args.absent, args.queries)
        print(f"fpp: {time.perf_counter() - step:.0f}s", file=sys.stderr)
    results["total_s"] = time.perf_counter() - t_start
    report(results)
    print(f"\ntotal {results['total_s']:.0f}s (lake generation, if any, included)")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
