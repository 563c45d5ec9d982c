"""The demo lake's bloom filters as Spark writes them: a copy of the lake with Spark's
native Parquet bloom filters (:func:`ensure_native_copy`, written once and re-used), and
bloomskip's own filters added to the lake's files in place (:func:`retrofit_lake`).

Spark writes through parquet-java with ``parquet.bloom.filter.enabled#col``,
``expected.ndv#col`` and ``fpp#col``; a stamp file records the settings, so a copy made
with other settings is written again. Shared with ``bench/spark.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from bloomskip.demo.lake import KEY_COLUMNS, STAMP, Lake, remove_generated
from bloomskip.demo.record import Record
from bloomskip.demo.ways import DemoMismatchError, Say, stderr
from bloomskip.index import DEFAULT_FPP


@contextlib.contextmanager
def spark_conf(spark, settings: Mapping[str, Any]) -> Iterator[None]:
    """Set runtime SQL settings for a block, then restore them (the session may be shared)."""
    old = {k: spark.conf.get(k, None) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, str(v))
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


@dataclass
class NativeCopy(Record):
    """The lake rewritten by Spark with native Parquet bloom filters on the key columns."""

    path: Path
    files: int
    bytes: int
    bloom_bytes: int  # the bloom filters in all footers
    row_groups: int
    block_size: int  # parquet.block.size given to the writer
    expected_ndv: int  # parquet.bloom.filter.expected.ndv#col
    fpp: float
    generated: bool
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return super().to_json() | {"path": str(self.path)}


def lake_bytes_per_row(lake: Lake) -> float:
    """Uncompressed bytes per row of the lake's row groups (what parquet.block.size counts)."""
    meta = pq.read_metadata(lake.files[0])
    size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    return size / max(meta.num_rows, 1)


def ensure_native_copy(
    spark,
    lake: Lake,
    path: str | os.PathLike,
    *,
    fpp: float = DEFAULT_FPP,
    fresh: bool = False,
    say: Say = stderr,
) -> NativeCopy:
    """Write (or re-use) a copy of ``lake`` with Spark's own Parquet bloom filters.

    One output file per lake file (no shuffle: every file is its own read split). The
    row-group size ``parquet.block.size`` is chosen so that row groups hold about as many
    rows as the lake's, and ``expected.ndv`` is that row count (the keys are distinct
    within a row group) - so native filters skip at the lake's row-group granularity,
    sized for the same false-positive rate as the zone index.
    """
    path = Path(path).absolute()
    rows = lake.spec.row_group_rows
    block_size = max(64 * 1024, int(rows * lake_bytes_per_row(lake)))
    settings = {
        "source": lake.spec.to_json(),
        "block_size": block_size,
        "expected_ndv": rows,
        "fpp": fpp,
        "columns": list(KEY_COLUMNS),
    }
    stamp = _stamp(path)
    if not fresh and stamp is not None and stamp.get("settings") == settings:
        say(f"re-using the native-bloom copy at {path}")
        return _native_info(path, stamp, generated=False)
    remove_generated(path)
    say(
        f"writing a copy with Spark's native bloom filters on {', '.join(KEY_COLUMNS)} to "
        f"{path} (parquet.block.size {block_size:,} B, expected.ndv {rows:,}, fpp {fpp})"
    )
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    t0 = time.perf_counter()
    split = 1 << 40  # larger than any file: every file is one split, alone in its task
    with spark_conf(
        spark,
        {
            "spark.sql.files.maxPartitionBytes": split,
            "spark.sql.files.openCostInBytes": split,
            "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        },
    ):
        writer = spark.read.parquet(str(lake.path)).write.option("parquet.block.size", block_size)
        for col in KEY_COLUMNS:
            writer = (
                writer.option(f"parquet.bloom.filter.enabled#{col}", "true")
                .option(f"parquet.bloom.filter.expected.ndv#{col}", str(rows))
                .option(f"parquet.bloom.filter.fpp#{col}", str(fpp))
            )
        writer.parquet(str(tmp))
    seconds = time.perf_counter() - t0
    doc = {"settings": settings, "seconds": seconds, "created": time.time()}
    (tmp / STAMP).write_text(json.dumps(doc, indent=2) + "\n")
    tmp.rename(path)
    say(f"wrote the copy in {seconds:.1f}s")
    return _native_info(path, doc, generated=True)


def retrofit_lake(spark, lake: Lake, *, fpp: float = DEFAULT_FPP, say: Say = stderr):
    """Add native Parquet bloom filters on the key columns to every file of the lake, in
    place, with Spark tasks (``bloomskip.spark.add_bloom_filters``): inside the files the
    index cannot rule out, Spark then skips row groups too. Files that have the filters
    are left alone, so a re-used lake costs one footer read per file."""
    import bloomskip.spark as bs

    say(f"adding bloom filters on {', '.join(KEY_COLUMNS)} to the lake's files (in place)")
    rep = bs.add_bloom_filters(spark, str(lake.path), list(KEY_COLUMNS), fpp=fpp)
    say(
        f"  {rep.files_changed:,} files changed ({rep.bytes_added / 2**20:.1f} MiB added), "
        f"{rep.files_unchanged:,} had them, {len(rep.failed)} failed, in {rep.seconds:.1f}s"
    )
    if rep.failed:
        raise DemoMismatchError(f"adding filters failed: {rep.failed[:3]}")
    return rep


def _stamp(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads((path / STAMP).read_text())
    except (OSError, ValueError):
        return None


def _native_info(path: Path, doc: dict[str, Any], *, generated: bool) -> NativeCopy:
    files = sorted(path.glob("*.parquet"))
    bloom = groups = 0
    for f in files:
        meta = pq.read_metadata(f)
        groups += meta.num_row_groups
        for i in range(meta.num_row_groups):
            rg = meta.row_group(i)
            for j in range(rg.num_columns):
                bloom += max(rg.column(j).bloom_filter_length or 0, 0)
    s = doc["settings"]
    return NativeCopy(
        path=path,
        files=len(files),
        bytes=sum(f.stat().st_size for f in files),
        bloom_bytes=bloom,
        row_groups=groups,
        block_size=s["block_size"],
        expected_ndv=s["expected_ndv"],
        fpp=s["fpp"],
        generated=generated,
        seconds=float(doc.get("seconds", 0.0)),
    )
