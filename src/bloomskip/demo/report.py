"""What ``bloomskip demo`` prints: the machine, the lake, the index, the native copy,
and one table row per lookup and way (seconds, speed-up over the scan, files, bytes and
rows scanned). :func:`lookup_table`, :func:`machine_info` and :func:`describe_machine` are
shared with ``bench/spark.py``.
"""

from __future__ import annotations

import contextlib
import os
import platform
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bloomskip.demo.lake import KEY_COLUMNS
from bloomskip.demo.ways import WAY_HELP, WAYS, Measurement
from bloomskip.units import human_bytes

if TYPE_CHECKING:
    from bloomskip.demo.job import DemoResult


def machine_info(spark=None) -> dict[str, Any]:
    """Cores, memory and versions, for reports."""
    import numpy
    import pyarrow

    from bloomskip import __version__

    info: dict[str, Any] = {
        "platform": platform.platform(terse=True),
        "machine": platform.machine(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "bloomskip": __version__,
        "pyarrow": pyarrow.__version__,
        "numpy": numpy.__version__,
    }
    with contextlib.suppress(ValueError, OSError, AttributeError):
        info["ram_gib"] = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    try:
        import pyspark

        info["pyspark"] = pyspark.__version__
    except ImportError:
        pass
    if spark is not None:
        with contextlib.suppress(Exception):
            info["java"] = spark.sparkContext._jvm.System.getProperty("java.version")
        with contextlib.suppress(Exception):
            info["spark_master"] = spark.sparkContext.master
    return info


def describe_machine(info: Mapping[str, Any]) -> str:
    parts = [f"{info.get('cores')} cores"]
    if "ram_gib" in info:
        parts.append(f"{info['ram_gib']:g} GiB RAM")
    parts.append(f"{info.get('machine')}")
    parts.append(f"Python {info.get('python')}")
    for k in ("pyspark", "java", "pyarrow"):
        if k in info:
            parts.append(f"{'Java' if k == 'java' else k} {info[k]}")
    return ", ".join(parts)


def _count(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


def lookup_table(measurements: list[Measurement]) -> list[str]:
    """The lookup rows: query, way, seconds, speed-up over the scan, files, bytes, rows."""
    head = (
        f"{'lookup':22} {'way':13} {'seconds':>8} {'vs scan':>8} {'files read':>11} "
        f"{'bytes read':>11} {'rows scanned':>13} {'rows':>5}"
    )
    lines = [head, "-" * len(head)]
    by_query: dict[str, list[Measurement]] = {}
    for m in measurements:
        by_query.setdefault(m.query, []).append(m)
    for name, ms in by_query.items():
        scan = next((m.seconds for m in ms if m.way == "spark scan"), None)
        for i, m in enumerate(ms):
            files = _count(m.files_read)
            if m.files_read is not None and m.files_total is not None:
                files = f"{m.files_read:,}/{m.files_total:,}"
            speed = f"{scan / m.seconds:.1f}x" if scan and m.seconds > 0 else "-"
            lines.append(
                f"{name if i == 0 else '':22} {m.way:13} {m.seconds:8.2f} {speed:>8} "
                f"{files:>11} {human_bytes(m.bytes_read):>11} {_count(m.rows_scanned):>13} "
                f"{m.rows:>5,}"
            )
    return lines


def render(r: DemoResult) -> str:
    s = r.lake.spec
    lines = [
        f"bloomskip demo - {describe_machine(r.machine)}",
        f"lake      {r.lake.path}: {len(r.lake.files):,} Parquet files, {s.rows:,} rows, row "
        f"groups of {s.row_group_rows:,}, {human_bytes(r.lake.bytes)}"
        + ("" if r.lake.generated else " (re-used)")
        + f"; generated in {r.lake.seconds:.1f}s",
        f"index     {r.index.path}: {', '.join(KEY_COLUMNS)}, {r.index.zones_written:,} zones, "
        f"{human_bytes(r.index.bytes_written)}, built with Spark in {r.index.seconds:.1f}s",
        f"native    {r.native.path}: {r.native.files:,} files, {r.native.row_groups:,} row "
        f"groups, {human_bytes(r.native.bytes)} of which bloom filters "
        f"{human_bytes(r.native.bloom_bytes)}; written by Spark in {r.native.seconds:.1f}s"
        + ("" if r.native.generated else " (re-used)"),
        "",
    ]
    lines += lookup_table(r.measurements)
    lines += [
        "",
        "ways:  " + "\n       ".join(f"{w:13} {WAY_HELP[w]}" for w in WAYS),
        "files read, bytes read, rows scanned: Spark's scan metrics numFiles, filesSize (the "
        "size of the files the",
        "scan opens) and numOutputRows (the rows of the row groups it decodes); native bloom "
        "opens every file",
        "but decodes only the row groups its bloom filters keep. bloomskip's lookups read on "
        "the driver count the",
        "candidate files (bytes: their size) and the rows of the candidate zones decoded.",
    ]
    plans = [m for m in r.measurements if m.way == "bloomskip" and m.plan_seconds is not None]
    if plans:
        lines.append(
            "bloomskip seconds include planning (the index lookup and Spark's listing): "
            + ", ".join(f"{m.plan_seconds:.2f}s" for m in plans)
            + "."
        )
    lines.append(f"All three ways returned the same rows for every lookup. Total {r.seconds:.0f}s.")
    return "\n".join(lines)
