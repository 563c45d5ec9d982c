"""An index's content by role, for comparing two indexes built differently (threads and
Spark, or before and after a change): names differ between builds, content must not.

:func:`index_tables` returns the fragment table, and per column the live Lance zone table
and its file filters; :func:`check_served` proves that the serving layout (directories
and slabs) holds exactly the zone tables' filters, zone for zone.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip import index
from bloomskip.index import serving


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
    """Every live zone of every column, as the serving layout holds it, equals the zone
    table's filter; returns how many zones were compared."""
    zi = index.open(path)
    live = set(zi.fragments().column("fragment_id").to_pylist())
    compared = 0
    for name, col in zi.columns.items():
        zt = zi.zones(name)
        want = {
            (f, s): b
            for f, s, b in zip(
                zt.column("fragment_id").to_pylist(),
                zt.column("zone_start").to_pylist(),
                zt.column("bloom_filter_data").to_pylist(),
                strict=True,
            )
        }
        got = {}
        for seg in col.segments:
            if seg.directory is None:
                continue
            d = serving.read_directory(zi.storage, seg.directory, seg.directory_size)
            filters = serving.served_zones(zi.storage, d, seg.slabs)
            for key, f in zip(d.keys.tolist(), filters, strict=True):
                fid, start = key >> 40, key & ((1 << 40) - 1)
                if fid in live:
                    got[(fid, start)] = f
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


__all__ = ["assert_same_index", "check_served", "index_tables", "np"]
