"""What bloom filters a Parquet file holds: per row group and column, with statistics.

For an encrypted file (with ``decryption=``) the report also says how the file is
encrypted and, per column chunk, whether it is encrypted and with which key; a chunk
whose key is missing shows filter status "locked" and why.
"""

from __future__ import annotations

import os
from typing import Any

from bloomskip.parquet.bloom import load_filter
from bloomskip.parquet.crypto import Decryption
from bloomskip.parquet.footer import read_footer


def inspect_file(
    path: str | os.PathLike, *, decryption: Decryption | None = None
) -> dict[str, Any]:
    """A JSON-ready description of every column chunk's bloom filter in ``path``."""
    with open(path, "rb") as fh:
        footer = read_footer(fh, name=os.fspath(path), decryption=decryption)
        data_end = _end_of_row_group_data(footer)
        units = []
        for rg in footer.row_groups:
            cols = []
            for chunk in rg.columns:
                leaf = footer.leaves[chunk.column]
                lf = load_filter(fh, footer, chunk)
                entry: dict[str, Any] = {
                    "column": leaf.name,
                    "physical_type": leaf.physical_type.value if leaf.physical_type else None,
                    "filter": lf.status,
                    "reason": lf.reason,
                    "offset": lf.offset,
                    "length": lf.length,
                }
                if footer.crypto is not None:
                    crypto = chunk.crypto
                    entry["encryption"] = (
                        "plaintext"
                        if crypto is None
                        else ("footer key" if crypto.with_footer_key else "column key")
                    )
                if lf.filter is not None:
                    f = lf.filter
                    fill = f.fill_ratio()
                    entry.update(
                        bytes=f.num_bytes,
                        fill_ratio=round(fill, 6),
                        estimated_ndv=None if fill >= 1.0 else round(f.estimated_ndv()),
                        predicted_fpp=f.predicted_fpp(),
                        placement=(
                            "after all row groups"
                            if lf.offset >= data_end
                            else "between row groups"
                        ),
                    )
                cols.append(entry)
            units.append(
                {
                    "row_group": rg.index,
                    "first_row": rg.first_row,
                    "num_rows": rg.num_rows,
                    "columns": cols,
                }
            )
    report: dict[str, Any] = {
        "file": os.fspath(path),
        "file_size": footer.file_size,
        "created_by": footer.created_by,
        "num_rows": footer.num_rows,
    }
    if footer.crypto is not None:
        report["encryption"] = {
            "mode": footer.encryption,
            "algorithm": footer.crypto.algorithm,
            "footer": footer.crypto.signature,
        }
    report["row_groups"] = units
    return report


def inspect_text(report: dict[str, Any]) -> str:
    """:func:`inspect_file`'s report as the table ``bloomskip inspect`` prints: a line per
    row group and column (filter or not, size, fill, estimated NDV, predicted FPP)."""
    lines = [
        f"{report['file']}: {report['num_rows']:,} rows in {len(report['row_groups'])} "
        f"row groups, written by {report['created_by']}"
    ]
    enc = report.get("encryption")
    if enc:
        lines.append(f"encrypted: {enc['mode']}, {enc['algorithm']}; footer {enc['footer']}")
    lines.append(
        f"{'rg':>4} {'column':24} {'filter':8} {'bytes':>10} {'fill':>6} {'~ndv':>10} {'fpp':>9}"
    )
    for rg in report["row_groups"]:
        for c in rg["columns"]:
            if c["filter"] == "ok":
                lines.append(
                    f"{rg['row_group']:>4} {c['column'][:24]:24} {'yes':8} {c['bytes']:>10,} "
                    f"{c['fill_ratio']:>6.3f} {c['estimated_ndv'] or 0:>10,} "
                    f"{c['predicted_fpp']:>9.2g}"
                )
            else:
                shown = {"absent": "no", "locked": "LOCKED"}.get(c["filter"], "INVALID")
                lines.append(
                    f"{rg['row_group']:>4} {c['column'][:24]:24} {shown:8}"
                    + ("" if c["filter"] == "absent" else f"  {c['reason']}")
                )
    return "\n".join(lines)


def _end_of_row_group_data(footer) -> int:
    """First byte after the last column chunk's pages (a chunk starts at its dictionary).

    Locked chunks do not count; in encrypted files the row group's own ``file_offset``
    and ``total_compressed_size`` (fields 5 and 6, in the footer) bound them."""
    ends = [
        (c.dictionary_page_offset or c.data_page_offset or 0) + (c.total_compressed_size or 0)
        for g in footer.row_groups
        for c in g.columns
        if not c.locked
    ]
    groups = footer.metadata.get(4) if footer.crypto is not None else None
    for rg in groups.items if groups is not None else []:
        start, size = rg.get(5), rg.get(6)
        if type(start) is int and type(size) is int:
            ends.append(start + size)
    return max(ends, default=0)
