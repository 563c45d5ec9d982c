"""What a checked lookup costs as a table's file count grows: a lake of ``--files`` small
Parquet files (10 rows each, one int64 column ``k`` with Iceberg field ids) as a plain
directory, a Delta table (``convert_to_deltalake``: one commit) and an Iceberg table
(``add_files`` in a pyiceberg ``SqlCatalog`` on SQLite: one commit), each indexed on
``k``.

For each source, with the index opened once: the median of ``--reps`` lookups of
``k = v`` checking the source (the default: a listing for the lake, the snapshot for a
table) and of the same lookups with ``check_source=False`` (the index alone). The checked
lookup of a lake lists its directory, so it grows with the files; a table's snapshot is
kept, so its lookup should cost what the unchecked one does plus loading the table.

    .venv/bin/python bench/table_files.py [--files 20000] [--reps 15] [--json PATH]

Writing and indexing 20,000 files takes about 3 minutes on 2 cores.
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

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bloomskip import index

REPO = Path(__file__).resolve().parent.parent
ROWS = 10


def write(root: Path, files: int) -> dict[str, str]:
    """The three sources of the same ``files`` files; returns their paths or URIs."""
    from deltalake import convert_to_deltalake
    from pyiceberg.catalog.sql import SqlCatalog

    from bloomskip.tables import configure_catalog

    schema = pa.schema([pa.field("k", pa.int64(), False, {"PARQUET:field_id": "1"})])
    lake = root / "lake"
    lake.mkdir(parents=True)
    for i in range(files):
        k = np.arange(i * ROWS, (i + 1) * ROWS, dtype=np.int64)
        pq.write_table(pa.table({"k": k}, schema=schema), lake / f"part-{i:06d}.parquet")
    shutil.copytree(lake, root / "delta")
    convert_to_deltalake(str(root / "delta"))
    (root / "iceberg").mkdir()
    props = {"uri": f"sqlite:///{root}/iceberg/catalog.db", "warehouse": f"file://{root}/wh"}
    catalog = SqlCatalog("wide", **props)
    catalog.create_namespace("ns")
    configure_catalog("wide", type="sql", **props)
    tbl = catalog.create_table("ns.t", schema=schema)
    tbl.add_files([f"file://{lake}/part-{i:06d}.parquet" for i in range(files)])
    return {"lake": str(lake), "delta": str(root / "delta"), "iceberg": "iceberg://wide/ns.t"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--json", type=Path, default=REPO / "bench" / "results" / "table_files.json")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bloomskip-bench-table-files-"))
    try:
        t0 = time.perf_counter()
        sources = write(tmp, args.files)
        print(f"data written in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        values = [int(v) for v in np.linspace(0, args.files * ROWS - 1, args.reps)]
        out = {
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}",
            "files": args.files,
            "reps": args.reps,
            "sources": {},
        }
        print(f"\n{args.files:,} files; lookup k = v, the index open, medians of {args.reps}")
        print(f"{'source':10} {'checked ms':>11} {'index alone ms':>15} {'build s':>8}")
        for name, src in sources.items():
            idx = str(tmp / f"{name}.idx")
            t0 = time.perf_counter()
            rep = index.build(src, ["k"], idx, progress=False)
            built = time.perf_counter() - t0
            assert rep.files_indexed == args.files, rep.to_text()
            zi = index.open(idx)
            zi.query("k = 0")  # the column, the table, the snapshot: loaded once
            timed: dict[bool, list[float]] = {True: [], False: []}
            for v in values:
                for checked in (True, False):
                    t0 = time.perf_counter()
                    res = zi.query(f"k = {v}", check_source=checked)
                    timed[checked].append(time.perf_counter() - t0)
                    want = f"part-{v // ROWS:06d}.parquet"
                    assert any(p.endswith(want) for p in res.paths), (name, v)
            row = {
                "checked_s": statistics.median(timed[True]),
                "index_alone_s": statistics.median(timed[False]),
                "build_s": built,
            }
            out["sources"][name] = row
            print(
                f"{name:10} {row['checked_s'] * 1e3:11.2f} {row['index_alone_s'] * 1e3:15.2f} "
                f"{built:8.1f}"
            )
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
