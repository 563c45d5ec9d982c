"""What bloom filters an ORC file holds: per row group and column, as a JSON-ready dict.

The shape follows ``bloomskip.parquet.inspect.inspect_file``: ``row_groups`` lists the
units in file order (stripe by stripe), each with ``first_row`` and ``num_rows`` (they
tile every row of the file) and one entry per column whose ``filter`` is ``"ok"``,
``"absent"`` or ``"invalid"`` (with the reason). ORC adds the writer information, the
stripes, and per filter its stream kind, ``bloom_encoding``, ``k`` and size in bytes.

"ok" is a structural verdict only - ``1 <= k <= 64`` and a non-empty bitset whose
length is a whole number of 64-bit words; which filters may be trusted for pruning
(writer bugs, encodings) is decided where filters are used, not here.
"""

from __future__ import annotations

import os
from typing import Any

from bloomskip.errors import BloomskipError
from bloomskip.orc.file import OrcFile, read_orc
from bloomskip.orc.stripes import BLOOM_FILTER_UTF8, ColumnBloomFilters

MAX_K = 64


def inspect_orc(path: str | os.PathLike) -> dict[str, Any]:
    """A JSON-ready description of every row group's bloom filters in the ORC file."""
    f = read_orc(path)
    stripes = []
    units = []
    number = 0
    # columns listed per row group: every column but the root (unless it has a filter)
    for s in f.stripes:
        entry: dict[str, Any] = {
            "stripe": s.index,
            "offset": s.offset,
            "first_row": s.first_row,
            "num_rows": s.num_rows,
        }
        groups = f.row_groups(s.index)
        filters, problems = _stripe_filters(f, s.index, entry)
        stripes.append(entry)
        for g in groups:
            cols = []
            for c in f.columns:
                if c.id == 0 and 0 not in filters and 0 not in problems:
                    continue
                cols.append(_column_entry(f, c.id, g.index, filters, problems))
            units.append(
                {
                    "row_group": number,
                    "stripe": g.stripe,
                    "stripe_row_group": g.index,
                    "first_row": g.first_row,
                    "num_rows": g.num_rows,
                    "columns": cols,
                }
            )
            number += 1
    w = f.writer
    return {
        "file": os.fspath(path),
        "format": "orc",
        "file_size": f.file_size,
        "created_by": _created_by(f),
        "writer": w.to_dict(),
        "compression": f.compression.name,
        "compression_block_size": f.compression.block_size,
        "num_rows": f.num_rows,
        "row_index_stride": f.row_index_stride,
        "columns": [
            {"id": c.id, "name": c.name, "type": c.type_name, "parent": c.parent} for c in f.columns
        ],
        "stripes": stripes,
        "row_groups": units,
    }


def inspect_orc_text(report: dict[str, Any]) -> str:
    """:func:`inspect_orc`'s report as the table ``bloomskip inspect`` prints: a line per
    row group and column that has a filter (or an unusable one, with the reason)."""
    lines = [
        f"{report['file']}: {report['num_rows']:,} rows in {len(report['stripes'])} stripes, "
        f"{len(report['row_groups'])} row groups of {report['row_index_stride']:,}, "
        f"{report['compression']}, written by {report['created_by']}",
        f"{'rg':>4} {'stripe':>6} {'column':24} {'filter':8} {'bytes':>10} {'k':>3}  stream",
    ]
    for rg in report["row_groups"]:
        for c in rg["columns"]:
            if c["filter"] == "absent":
                continue
            if c["filter"] == "ok":
                lines.append(
                    f"{rg['row_group']:>4} {rg['stripe']:>6} {c['column'][:24] or '(root)':24} "
                    f"{'yes':8} {c['bytes']:>10,} {c['k']:>3}  {c['kind']}"
                )
            else:
                lines.append(
                    f"{rg['row_group']:>4} {rg['stripe']:>6} {c['column'][:24]:24} "
                    f"{'INVALID':8}  {c['reason']}"
                )
    return "\n".join(lines)


def _created_by(f: OrcFile) -> str:
    w = f.writer
    software = f" {w.software_version}" if w.software_version else ""
    return f"{w.writer_name}{software} (writer version {w.writer_version_name})"


def _stripe_filters(
    f: OrcFile, stripe: int, entry: dict[str, Any]
) -> tuple[dict[int, ColumnBloomFilters], dict[int, str]]:
    """Each column's bloom filter index in the stripe, or why it cannot be read."""
    filters: dict[int, ColumnBloomFilters] = {}
    problems: dict[int, str] = {}
    try:
        entry["writer_timezone"] = f.writer_timezone(stripe)
        f.streams(stripe)
    except BloomskipError as e:
        entry["error"] = str(e)
        for c in f.columns:
            problems[c.id] = str(e)
        return filters, problems
    for c in f.columns:
        try:
            bf = f.bloom_filters(stripe, c.id)
        except BloomskipError as e:
            problems[c.id] = str(e)
            continue
        if bf is not None:
            filters[c.id] = bf
    return filters, problems


def _column_entry(
    f: OrcFile,
    column: int,
    row_group: int,
    filters: dict[int, ColumnBloomFilters],
    problems: dict[int, str],
) -> dict[str, Any]:
    c = f.columns[column]
    out: dict[str, Any] = {"column": c.name, "id": c.id, "type": c.type_name}
    if column in problems:
        out.update(filter="invalid", reason=problems[column])
        return out
    bf = filters.get(column)
    if bf is None:
        out.update(filter="absent", reason="no bloom filter stream")
        return out
    k = bf.num_hash_functions(row_group)
    bits = bf.bitset(row_group)
    reason = ""
    if k is None or not 1 <= k <= MAX_K:
        reason = f"k = {k} is not in 1..{MAX_K}"
    elif not bits:
        reason = "empty bitset"
    elif len(bits) % 8:
        reason = f"bitset of {len(bits)} bytes is not a whole number of 64-bit words"
    out.update(
        filter="invalid" if reason else "ok",
        reason=reason,
        kind=bf.kind,
        kinds_present=[
            "BLOOM_FILTER_UTF8" if k8 == BLOOM_FILTER_UTF8 else "BLOOM_FILTER"
            for k8 in bf.kinds_present
        ],
        bloom_encoding=bf.bloom_encoding,
        k=k,
        bytes=len(bits),
        offset=bf.offset,
        length=bf.length,
    )
    return out
