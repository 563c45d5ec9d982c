"""What ``bloomskip index status`` reports: coverage of the source as listed now (for a
table, its latest snapshot against the one indexed), stale, new and removed files, and
per column its zones, filter bytes, size on disk and predicted false-positive rate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from bloomskip.index import store
from bloomskip.index.layout import snapshot_text
from bloomskip.sbbf.sizing import putze_fpp_many
from bloomskip.sources.base import unchanged

if TYPE_CHECKING:
    from bloomskip.index.query import ZoneIndex


def index_status(zi: ZoneIndex, *, check_source: bool = True) -> dict[str, Any]:
    """Coverage, stale files, size and predicted FPP per column."""
    frags = zi.fragments()
    rows = {r["path"]: r for r in frags.to_pylist()}
    out: dict[str, Any] = {
        "index": zi.root,
        "version": zi.version,
        "committed_at": zi.manifest.committed_at,
        "source": zi.manifest.source.get("uri"),
        "zoning": {
            "zone_rows": zi.manifest.zoning.zone_rows,
            "align": zi.manifest.zoning.align,
        },
        "files_indexed": len(rows),
        "rows_indexed": int(sum(r["num_rows"] for r in rows.values())),
    }
    if zi.manifest.snapshot is not None:
        out["snapshot"] = zi.manifest.snapshot
    if check_source:
        src = zi.source
        listing = store.inside(zi.storage, src, src.list())
        if zi.manifest.snapshot is not None:
            out["table_snapshot"] = src.snapshot()
        seen = {f.path: f for f in listing}
        stale = [f.path for f in listing if f.path in rows and not unchanged(rows[f.path], f)]
        new = [f.path for f in listing if f.path not in rows]
        gone = [p for p in rows if p not in seen]
        fresh = len(listing) - len(stale) - len(new)
        out.update(  # named as queries and refreshes name them (s3://..., not bucket/...)
            files_listed=len(listing),
            coverage=(fresh / len(listing)) if listing else 1.0,
            stale_files=[src.uri_of(p) for p in stale],
            unindexed_files=[src.uri_of(p) for p in new],
            removed_files=[src.uri_of(p) for p in gone],
        )
    cols = {}
    total_rows = max(out["rows_indexed"], 1)
    for name, col in zi.columns.items():
        frag, nbytes, ndv = zi._zone_sizes(col)  # from the directories: no filter read
        fpp = putze_fpp_many(ndv, nbytes) if nbytes.size else nbytes
        zone_bytes = int(nbytes.sum())
        file_bytes = sum(s.file_bytes for s in col.segments)
        cols[name] = {
            "arrow_type": str(col.arrow_type),
            "physical": col.physical_name,
            "encoding": col.encoding,
            "hash": f"{col.hash} seed {col.seed}",
            "sizing": col.sizing,
            "fpp_target": col.fpp,
            "files": int(np.unique(frag).shape[0]),
            "zones": int(frag.shape[0]),
            "segments": len(col.segments),
            # indexed files whose values of this column could not be (a type that does not
            # convert): candidates in full of every condition on it
            "files_failed": len(col.failed),
            "zone_filter_bytes": zone_bytes,
            "file_filter_bytes": file_bytes,
            "bytes_per_row": (zone_bytes + file_bytes) / total_rows,
            "disk_bytes": sum(zi.storage.size(n) or 0 for s in col.segments for n in s.names),
            "predicted_fpp_mean": float(fpp.mean()) if nbytes.size else 0.0,
            "predicted_fpp_max": float(fpp.max()) if nbytes.size else 0.0,
        }
    out["columns"] = cols
    return out


def status_text(st: dict[str, Any]) -> str:
    """:func:`index_status` as a table: version, source, coverage, stale files, columns."""
    z = st["zoning"]
    lines = [
        f"{st['index']}: version {st['version']} ({st['committed_at']}), source {st['source']}",
        f"  zones of {z['zone_rows']:,} rows ({z['align']}); {st['files_indexed']} files, "
        f"{st['rows_indexed']:,} rows indexed; coverage {st['coverage']:.1%} of "
        f"{st['files_listed']} files listed",
    ]
    if st.get("snapshot") is not None:
        now = st.get("table_snapshot")
        lines.append(
            f"  indexed {snapshot_text(st['snapshot'])}"
            + ("" if now is None else f"; the table is at {snapshot_text(now)}")
        )
    for key, what in (
        ("stale_files", "changed since indexing"),
        ("unindexed_files", "not indexed"),
        ("removed_files", "removed since indexing"),
    ):
        if st[key]:
            lines.append(f"  {len(st[key])} {what}: {', '.join(st[key][:5])}")
    for name, c in st["columns"].items():
        if c.get("files_failed"):
            n = c["files_failed"]
            lines.append(
                f"  {name}: {n} {'file' if n == 1 else 'files'} not indexed for this column "
                "(its values did not convert; see refresh's report): read in full"
            )
    lines.append(
        f"  {'column':20} {'type':14} {'sizing':7} {'zones':>8} {'filter bytes':>14} "
        f"{'B/row':>7} {'on disk':>12} {'pred. FPP':>10}"
    )
    for name, c in st["columns"].items():
        lines.append(
            f"  {name[:20]:20} {c['arrow_type'][:14]:14} {c['sizing']:7} {c['zones']:>8,} "
            f"{c['zone_filter_bytes'] + c['file_filter_bytes']:>14,} "
            f"{c['bytes_per_row']:>7.2f} {c['disk_bytes']:>12,} "
            f"{c['predicted_fpp_mean']:>10.2e}"
        )
    return "\n".join(lines)


__all__ = ["index_status", "status_text"]
