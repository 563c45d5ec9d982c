"""The Spark index build against a plain Spark scan, pair by pair, with the build's phases.

On one demo lake (:mod:`bloomskip.demo.lake`, made as ``bench/scale.py`` makes it, or
re-used from ``--data``): after an untimed build of a small lake (the Python workers
start) and an untimed scan, ``--reps`` pairs of

* ``scan_s``: Spark reading ``uuid, user_id`` (``select(...).write.format("noop")``);
* ``build_s``: ``bloomskip.spark.build_index`` of both columns (``overwrite=True``),
  split into ``index_s`` (the job whose tasks read the files and write their parts),
  ``slabs_s`` (the job that writes the slabs) and ``driver_s`` (the rest: listing,
  planning, directories, the commit),

each pair timed back to back so that drift on a shared machine hits both alike; the
report is the median of each figure and of the per-pair ratio ``build_s / scan_s``.
The session is ``bench/scale.py``'s (``local[*]``, 4g, ``maxResultSize=16m``).

    .venv/bin/python bench/spark_build.py [--data DIR] [--rows 20000000] [--reps 3]
                                          [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROWS_PER_FILE = 100_000


def say(msg: str) -> None:
    print(f"[spark_build] {msg}", file=sys.stderr, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=REPO / "bench" / "data")
    ap.add_argument("--rows", type=int, default=20_000_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()

    import bloomskip.spark as bs
    from bloomskip.demo.lake import KEY_COLUMNS, LakeSpec, ensure_lake
    from bloomskip.spark import build as sb

    files = max(1, args.rows // ROWS_PER_FILE)
    spec = LakeSpec(files=files, rows=args.rows, row_group_rows=20_000)
    lake = ensure_lake(args.data / f"lake-{args.rows}", spec, progress=say)
    from scale import bench_session  # this folder: the same session as bench/scale.py

    spark = bench_session()
    phases: dict[str, float] = {}

    def timing(name: str, fn, generator: bool = False):
        def run(self, *a, **k):
            t = time.perf_counter()
            out = list(fn(self, *a, **k)) if generator else fn(self, *a, **k)
            phases[name] = phases.get(name, 0.0) + time.perf_counter() - t
            return iter(out) if generator else out

        return run

    sb.SparkRunner.index = timing("index_s", sb.SparkRunner.index, generator=True)
    sb.SparkRunner.slabs = timing("slabs_s", sb.SparkRunner.slabs)
    cols = list(KEY_COLUMNS)
    src = str(lake.path)

    def scan() -> None:
        spark.read.parquet(src).select(*cols).write.format("noop").mode("overwrite").save()

    runs = []
    with tempfile.TemporaryDirectory(prefix="bloomskip-spark-build-") as tmp:
        small = ensure_lake(
            Path(tmp) / "warm-lake", LakeSpec(files=4, rows=40_000, row_group_rows=10_000)
        )
        bs.build_index(spark, str(small.path), cols, str(Path(tmp) / "warm-index"))
        scan()
        for i in range(args.reps):
            t = time.perf_counter()
            scan()
            scan_s = time.perf_counter() - t
            phases.clear()
            t = time.perf_counter()
            bs.build_index(spark, src, cols, str(Path(tmp) / "index"), overwrite=True)
            build_s = time.perf_counter() - t
            run = {"scan_s": scan_s, "build_s": build_s, "ratio": build_s / scan_s}
            run |= {k: phases.get(k, 0.0) for k in ("index_s", "slabs_s")}
            run["driver_s"] = build_s - run["index_s"] - run["slabs_s"]
            runs.append(run)
            say(f"pair {i + 1}: " + ", ".join(f"{k} {v:.3f}" for k, v in run.items()))
    spark.stop()
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    out = {"rows": args.rows, "files": files, "reps": args.reps, "median": med, "runs": runs}
    print(json.dumps(out, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
