"""Table lookup benchmark: a point lookup through the zone index on 200-file Delta and
Iceberg tables against the same lookup on the plain-directory lake of the same files.

The lake: ``--files`` Parquet files of ``--rows`` rows (default 200 x 20,000), one
column ``k`` (unique int64) and a payload, written by pyarrow into a temporary
directory. Three sources hold exactly these files:

* **lake** - the directory (a lookup lists it: ``FileSource.list``);
* **delta, 1 commit** - a copy turned into a Delta table by
  ``deltalake.convert_to_deltalake`` (one commit adding 200 files);
* **delta, 200 commits** - the same files appended one commit each (delta-rs writes a
  checkpoint every 100 commits), the log a long-lived table has;
* **iceberg, 1 commit** - the lake's rows written again with Iceberg field ids and added
  by ``add_files`` in one commit, in a pyiceberg ``SqlCatalog`` on SQLite;
* **iceberg, 200 commits** - the same rows appended by pyiceberg one commit each (200
  manifests).

Each gets an index on ``k`` (zones of 8,192 rows), built once. A *lookup* is
``ZoneIndex.query("k = v", check_source=True)`` for a value present in one file: the
lake is listed and compared with the index; the table's snapshot is loaded (a table
read before is reused while no commit follows the one it read; delta-rs moves it
forward with ``update_incremental`` after a commit) and its file list compared with the
index. Measured per source, medians of ``--reps``, the sources interleaved lookup by
lookup, each in turn first: *warm* (the index opened once, different values per query)
and *cold* (``index.open`` + the query). The ratio is table / lake; the
issue's target is within 1.2x. The bench also counts directory listings during a table
lookup (``FileSource.list`` calls): there must be none - the snapshot gives the files.
For the tables, *read_tasks*: planning the read of the lookup's candidates
(``read_tasks``: each file with its deletes, as the Spark data source and ``read`` plan
them). Last, *after a commit*: each table of 200 commits gets 21 more (a file of 100 rows
each), and the first lookup after each is timed (the new snapshot read).

    .venv/bin/python bench/tables.py [--files N] [--rows N] [--reps R] [--json PATH] [--spark]

``--spark`` also times ``spark.read.format("bloomskip")`` lookups of the two tables of 200
commits (``local_session``): planning through the index, then a Spark job reading the
candidate file with its deletes.

Results are written as JSON to ``bench/results/tables.json``.
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
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bloomskip import index
from bloomskip.sources.files import FileSource

REPO = Path(__file__).resolve().parent.parent


def write_lake(root: Path, files: int, rows: int) -> list[pa.Table]:
    root.mkdir(parents=True)
    tables = []
    for i in range(files):
        rng = np.random.default_rng(i)
        t = pa.table(
            {
                "k": pa.array(np.arange(i * rows, (i + 1) * rows, dtype=np.int64)),
                "pay": pa.array(rng.random(rows)),
            }
        )
        pq.write_table(t, root / f"part-{i:05d}.parquet")
        tables.append(t)
    return tables


def write_iceberg(root: Path, tables: list[pa.Table]) -> tuple[Any, dict[str, str]]:
    """Two Iceberg tables of ``tables``' rows in a SqlCatalog ``bench`` under ``root``:
    ``ns.one`` (files with field ids, added in one commit) and ``ns.many`` (one append
    each). Returns the catalog and the sources by name."""
    from pyiceberg.catalog.sql import SqlCatalog

    from bloomskip.tables import configure_catalog

    root.mkdir(parents=True)
    props = {"uri": f"sqlite:///{root}/catalog.db", "warehouse": f"file://{root}/wh"}
    catalog = SqlCatalog("bench", **props)
    catalog.create_namespace("ns")
    configure_catalog("bench", type="sql", **props)
    ids = pa.schema(
        [
            pa.field(f.name, f.type, False, {"PARQUET:field_id": str(i + 1)})
            for i, f in enumerate(tables[0].schema)
        ]
    )
    one = catalog.create_table("ns.one", schema=ids)
    (root / "files").mkdir()
    paths = []
    for i, t in enumerate(tables):
        path = root / "files" / f"part-{i:05d}.parquet"
        pq.write_table(t.cast(ids), path)
        paths.append(f"file://{path}")
    one.add_files(paths)
    many = catalog.create_table("ns.many", schema=ids)
    for t in tables:
        many.append(t.cast(ids))
    return catalog, {
        "iceberg, 1 commit": "iceberg://bench/ns.one",
        "iceberg, 200 commits": "iceberg://bench/ns.many",
    }


def after_commits(indexes: dict[str, str], commit: dict[str, Any], n: int, rows: int) -> dict:
    """The first lookup after each of ``n`` commits (a file of 100 new rows), per table:
    the median, in seconds. ``commit[name](i)`` makes commit ``i``."""
    opened = {name: index.open(indexes[name]) for name in commit}
    times: dict[str, list[float]] = {name: [] for name in commit}
    for i in range(n):
        for name, make in commit.items():
            make(i)
            v = 10**12 + i * 100 + 7  # in the file just added
            t0 = time.perf_counter()
            res = opened[name].query(f"k = {v}")
            times[name].append(time.perf_counter() - t0)
            assert any(f.zones is None for f in res.files), name  # the new file: in full
    return {name: _median(ts) for name, ts in times.items()}


def spark_lookups(indexes: dict[str, str], tmp: Path, values: list[int]) -> dict[str, float]:
    """``spark.read.format("bloomskip")`` lookups of the 200-commit tables: the median
    of ``values[1:]`` (the first warms the session), seconds, rows checked."""
    from bloomskip.spark import local_session, register

    spark = local_session()
    register(spark)
    root = tmp / "iceberg"
    options = {
        "delta, 200 commits": {},
        "iceberg, 200 commits": {
            "catalog.type": "sql",
            "catalog.uri": f"sqlite:///{root}/catalog.db",
            "catalog.warehouse": f"file://{root}/wh",
        },
    }
    out = {}
    print("\nspark.read.format('bloomskip'), df.where('k = v').collect(), median of 8")
    for name, opts in options.items():
        df = spark.read.format("bloomskip").option("index", indexes[name]).options(**opts).load()
        times = []
        for v in values:
            t0 = time.perf_counter()
            rows = df.where(f"k = {v}").collect()
            times.append(time.perf_counter() - t0)
            assert [r["k"] for r in rows] == [v], name
        out[name] = _median(times[1:])
        print(f"{name:22} {out[name]:9.3f} s")
    spark.stop()
    return out


def _median(xs: list[float]) -> float:
    return statistics.median(xs)


class _Listings:
    """Counts ``FileSource.list`` calls (directory listings)."""

    def __init__(self) -> None:
        self.calls = 0
        self._orig = FileSource.list

    def __enter__(self) -> _Listings:
        counter = self

        def counted(src):
            counter.calls += 1
            return counter._orig(src)

        FileSource.list = counted
        return self

    def __exit__(self, *exc) -> None:
        FileSource.list = self._orig


def lookups(indexes: dict[str, str], values: list[int], reps: int, rows: int) -> dict[str, dict]:
    """Warm and cold lookup times per source, the sources interleaved rep by rep, in
    turn first (so a shared machine's drift hits them alike). An answer holds the file of the value
    (``rows`` per file; a zone filter's false positive may add another)."""
    opened = {name: index.open(idx) for name, idx in indexes.items()}
    for zi in opened.values():
        zi.query(f"k = {values[0]}")  # load the column once (warm)
    warm: dict[str, list[float]] = {n: [] for n in indexes}
    cold: dict[str, list[float]] = {n: [] for n in indexes}
    names = list(indexes)
    plan: dict[str, list[float]] = {n: [] for n in indexes if n != "lake"}
    for r, v in enumerate(values[:reps]):
        for name in names[r % len(names) :] + names[: r % len(names)]:  # each goes first
            idx = indexes[name]
            t0 = time.perf_counter()
            res = opened[name].query(f"k = {v}")
            warm[name].append(time.perf_counter() - t0)
            if name in plan:  # the candidates' read tasks (a table's reader: deletes)
                src = opened[name].source
                t0 = time.perf_counter()
                tasks = src.read_tasks([src.uri_of(p) for p in res.paths])
                plan[name].append(time.perf_counter() - t0)
                assert len(tasks) == len(res.paths)
            want = f"/part-{v // rows:05d}.parquet"  # the lake's names (the writers name theirs)
            assert res.files and (any(p.endswith(want) for p in res.paths) or "200" in name)
            t0 = time.perf_counter()
            index.open(idx).query(f"k = {v}")
            cold[name].append(time.perf_counter() - t0)
    out = {n: {"warm_s": _median(warm[n]), "cold_s": _median(cold[n])} for n in indexes}
    for n, ts in plan.items():
        out[n]["read_tasks_s"] = _median(ts)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--reps", type=int, default=101)
    ap.add_argument("--json", type=Path, default=REPO / "bench" / "results" / "tables.json")
    ap.add_argument(
        "--spark", action="store_true", help="also time spark.read.format('bloomskip') lookups"
    )
    args = ap.parse_args()
    from deltalake import convert_to_deltalake, write_deltalake

    tmp = Path(tempfile.mkdtemp(prefix="bloomskip-bench-tables-"))
    try:
        t0 = time.perf_counter()
        tables = write_lake(tmp / "lake", args.files, args.rows)
        shutil.copytree(tmp / "lake", tmp / "delta1")
        convert_to_deltalake(str(tmp / "delta1"))
        for t in tables:
            write_deltalake(str(tmp / "delta200"), t, mode="append")
        catalog, iceberg = write_iceberg(tmp / "iceberg", tables)
        print(f"data written in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        sources: dict[str, Any] = {"lake": tmp / "lake", "delta, 1 commit": tmp / "delta1"}
        sources["delta, 200 commits"] = tmp / "delta200"
        sources.update(iceberg)
        rng = np.random.default_rng(7)
        values = [int(v) for v in rng.integers(0, args.files * args.rows, args.reps)]
        results: dict[str, Any] = {
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}",
            "files": args.files,
            "rows_per_file": args.rows,
            "reps": args.reps,
            "sources": {},
        }
        indexes = {}
        for i, (name, path) in enumerate(sources.items()):
            indexes[name] = str(tmp / f"source-{i}.idx")
            rep = index.build(str(path), ["k"], indexes[name], progress=False)
            assert rep.files_indexed == args.files, rep.to_text()
        results["sources"] = lookups(indexes, values, args.reps, args.rows)
        for name, idx in indexes.items():  # listings, counted apart from the timing
            with _Listings() as listed:
                index.open(idx).query(f"k = {values[0]}")
            results["sources"][name]["directory_listings"] = listed.calls
        base = results["sources"]["lake"]
        print(f"\n{args.files} files x {args.rows:,} rows; lookup k = v (present in one file)")
        print(
            f"{'source':22} {'warm ms':>9} {'ratio':>7} {'cold ms':>9} {'ratio':>7}  listings"
            "  read_tasks ms"
        )
        for name, r in results["sources"].items():
            r["warm_ratio"] = r["warm_s"] / base["warm_s"]
            r["cold_ratio"] = r["cold_s"] / base["cold_s"]
            tasks = f"{r['read_tasks_s'] * 1e3:14.2f}" if "read_tasks_s" in r else f"{'-':>14}"
            print(
                f"{name:22} {r['warm_s'] * 1e3:9.2f} {r['warm_ratio']:6.2f}x "
                f"{r['cold_s'] * 1e3:9.2f} {r['cold_ratio']:6.2f}x  {r['directory_listings']:8}"
                f"{tasks}"
            )
        for name, r in results["sources"].items():
            if name != "lake" and r["directory_listings"]:
                raise SystemExit(f"{name}: a table lookup listed a directory")

        if args.spark:  # before the commits below add files the indexes do not hold
            results["spark"] = spark_lookups(indexes, tmp, values[:9])

        def added(i: int) -> pa.Table:  # commit i's file: 100 rows from 10**12 + 100 i
            k = np.arange(100, dtype=np.int64) + (10**12 + i * 100)
            return pa.table({"k": k, "pay": np.zeros(100)})

        many = catalog.load_table("ns.many")
        commit = {
            "delta, 200 commits": lambda i: write_deltalake(
                str(tmp / "delta200"), added(i), mode="append"
            ),
            "iceberg, 200 commits": lambda i: many.append(added(i).cast(many.schema().as_arrow())),
        }
        after = after_commits(indexes, commit, 21, args.rows)
        print("\nthe first lookup after a commit (a file of 100 rows), median of 21")
        for name, secs in after.items():
            results["sources"][name]["after_commit_s"] = secs
            print(f"{name:22} {secs * 1e3:9.2f} ms")
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
