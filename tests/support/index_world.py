"""The small lake and zone index the index fuzz tests mutate copies of
(``tests/index/test_fuzz.py``, ``tests/index/test_fuzz_found.py``), the truth DuckDB
gives for their predicates, and checks shared by both.

Six Parquet files of 200 rows (two columns, nulls in both) are indexed with file
filters and zones of 50 rows, then refreshed after a file is added (a second segment)
and after one is deleted (a dropped fragment): the index holds manifests of three
versions, fragment and file tables, serving directories and slabs. A sibling directory
of canary files stands next to it; :func:`world` checks at the end that neither the
canaries nor the lake changed.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bloomskip import index
from bloomskip.errors import BloomskipError
from bloomskip.index import serving, store
from tests.support import index_fuzz as fz

ROWS, ZONE_ROWS = 200, 50
#: What one forged case may allocate (Python and numpy), whatever a count claims.
MEMORY = 64 << 20
CASE_SECONDS = 20.0

PREDICATES = [
    "s = 's0-3'",
    "s = 's5-39'",
    "k = 1919",
    "k IN (3000, 4, 999)",
    "s IS NULL",
    "k IS NULL",
    "s = 's4-7' OR k = 1097",
    "s IN ('s1-1', 's3-2') AND k IS NOT NULL",
]


def lake_file(i: int) -> pa.Table:
    """File ``i`` of the lake."""
    j = np.arange(ROWS)
    s = [None if (i % 2 == 0 and v % 23 == 5) else f"s{i}-{v % 40}" for v in j.tolist()]
    k = [None if v % 31 == 7 else (v * 7919 + i * 1000) % 5000 for v in j.tolist()]
    return pa.table({"s": pa.array(s, pa.string()), "k": pa.array(k, pa.int64())})


def world(base: str) -> Iterator[dict]:
    """Make the lake, the index, the canaries and the truth under ``base``; yields them
    (a module fixture's body), then checks that the canaries and the lake are intact."""
    import duckdb

    lake, idx, outside = (os.path.join(base, n) for n in ("lake", "idx", "outside"))
    os.makedirs(lake)
    os.makedirs(outside)
    for i in range(5):
        pq.write_table(lake_file(i), os.path.join(lake, f"p{i}.parquet"), row_group_size=100)
    threshold = serving.PLANES_MIN_ZONES
    serving.PLANES_MIN_ZONES = 2  # classes of 2 zones or more as bit planes: both layouts
    try:
        index.build(lake, ["s", "k"], idx, zone_rows=ZONE_ROWS, sizing="exact",
                    file_filters=True, progress=False)  # fmt: skip
        pq.write_table(lake_file(5), os.path.join(lake, "p5.parquet"), row_group_size=100)
        index.refresh(idx, progress=False)
        os.unlink(os.path.join(lake, "p2.parquet"))
        index.refresh(idx, progress=False)
    finally:
        serving.PLANES_MIN_ZONES = threshold
    m = store.read_manifest(idx)
    assert m.version == 3 and m.dropped and len(m.columns["s"].segments) == 2
    pq.write_table(lake_file(9), os.path.join(outside, "canary.parquet"))
    with open(os.path.join(outside, "secret.txt"), "wb") as fh:
        fh.write(b"not for the index")
    files = sorted(glob.glob(os.path.join(lake, "*.parquet")))
    con = duckdb.connect()
    truth = {}
    for where in PREDICATES:
        truth[where] = con.execute(
            "SELECT filename, file_row_number FROM read_parquet(?, filename=true, "
            f"file_row_number=true) WHERE {where}",
            [files],
        ).fetchall()
        assert truth[where], where
    canaries = fz.snapshot(outside)
    lake_before = fz.snapshot(lake)
    yield {"base": base, "lake": lake, "idx": idx, "outside": outside, "truth": truth}
    assert fz.snapshot(outside) == canaries
    assert fz.snapshot(lake) == lake_before


def missing(res: index.QueryResult, truth) -> str | None:
    """What a query's candidates miss of the rows DuckDB found (None: nothing)."""
    by_path = {f.path: f for f in res.files}
    for path, row in truth:
        f = by_path.get(path)
        if f is None:
            return f"{path} holds row {row} but is no candidate"
        if f.zones is not None and not any(s <= row < s + n for s, n in f.zones):
            return f"row {row} of {path} is in no candidate zone {f.zones}"
    return None


def flip(path: str, at: int, bit: int = 0) -> None:
    """Flip bit ``bit`` of byte ``at`` of the file ``path``."""
    with open(path, "r+b") as fh:
        fh.seek(at)
        b = fh.read(1)[0]
        fh.seek(at)
        fh.write(bytes([b ^ (1 << bit)]))


def one_line_error(op, match: str) -> None:
    """``op()`` raises a bloomskip error of one line matching ``match``."""
    with pytest.raises(BloomskipError, match=match) as e:
        op()
    assert "\n" not in str(e.value).strip(), str(e.value)


__all__ = [
    "CASE_SECONDS",
    "MEMORY",
    "PREDICATES",
    "ROWS",
    "ZONE_ROWS",
    "flip",
    "lake_file",
    "missing",
    "one_line_error",
    "world",
]
