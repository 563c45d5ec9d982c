"""An index's content by role, for comparing two indexes built differently (threads and
Spark, or before and after a change): names differ between builds, content must not.

:func:`index_tables` returns the fragment table, and per column the live Lance zone table
(served from the slabs) and its file filters; :func:`check_served` proves that the
serving layout gives back exactly the filters the indexing function makes from the
files, zone for zone.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from bloomskip import index
from bloomskip.index import index_file
from bloomskip.sources import SourceFile


def index_tables(path) -> dict[str, pa.Table]:
    zi = index.open(path)
    out = {"fragments": zi.fragments().sort_by("fragment_id")}
    live = zi.fragments().column("fragment_id")
    for name, col in zi.columns.items():
        out[f"{name}/zones"] = zi.zones(name)
        files = [zi.storage.read_table(r) for s in col.segments for r in s.files]
        if files:
            ft = pa.concat_tables(files)
            ft = ft.filter(pc.is_in(ft.column("fragment_id"), value_set=live))
            out[f"{name}/files"] = ft.sort_by("fragment_id").replace_schema_metadata(None)
    return out


def check_served(path) -> int:
    """Every live zone of every column, as the serving layout gives it back, equals the
    zone the indexing function makes from the source file now (the files must not have
    changed since); returns how many zones were compared."""
    zi = index.open(path)
    rows = zi.fragments().to_pylist()
    compared = 0
    for name in zi.columns:
        col = zi.columns[name]
        want = {}
        for r in rows:
            f = SourceFile(r["path"], r["size"], r["mtime_ns"], r.get("etag"))
            fz = index_file(zi.source, f, [col], zi.manifest.zoning)
            if fz.error or name not in fz.columns or fz.columns[name].error:
                continue  # unreadable, not data, or not indexed for this column
            t = fz.zone_table(name, r["fragment_id"])
            for start, data in zip(
                t.column("zone_start").to_pylist(),
                t.column("bloom_filter_data").to_pylist(),
                strict=True,
            ):
                want[(r["fragment_id"], start)] = data
        zt = zi.zones(name)
        got = {
            (f, s): b
            for f, s, b in zip(
                zt.column("fragment_id").to_pylist(),
                zt.column("zone_start").to_pylist(),
                zt.column("bloom_filter_data").to_pylist(),
                strict=True,
            )
        }
        assert got.keys() == want.keys(), (name, sorted(set(got) ^ set(want))[:5])
        for k, b in want.items():
            assert got[k] == b, (name, k)
        compared += len(want)
    return compared


def assert_same_index(a, b) -> None:
    ta, tb = index_tables(a), index_tables(b)
    assert ta.keys() == tb.keys()
    for role in ta:
        assert ta[role].equals(tb[role]), role
    check_served(a)
    check_served(b)


__all__ = ["assert_same_index", "check_served", "index_tables"]
