"""What a lookup that checks its source knows before the index decides: the source's files
now - a directory listing, or a table's snapshot (no listing at all) - compared with the
index's fragment table, and a table's columns as they are in that snapshot.

* a file the index holds unchanged (same size and modification time or ETag,
  :func:`bloomskip.sources.base.unchanged`) is decided by the index
  (:func:`bloomskip.index.decide.decide`);
* a file the index does not hold, or holds changed, is a candidate in full - unless a
  table's partition values rule it out (:mod:`.known`: one predicate tree, the same
  rules as for indexed files);
* a file the index holds that the source no longer has is not in the listing, so never
  returned.

A table's column renamed since indexing is matched to the indexed one by field id
(Iceberg) or physical name (Delta column mapping), recorded in each Arrow field's
``bloomskip.table_column`` metadata (:data:`bloomskip.tables.base.COLUMN_KEY`); a
column added since is bound with its own type and, not being indexed, may match.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from bloomskip.expr.bind import Column, bind
from bloomskip.expr.expressions import Expression
from bloomskip.index import store
from bloomskip.index.known import KnownValues
from bloomskip.index.known import prune as prune_known
from bloomskip.index.layout import ColumnIndex
from bloomskip.sources import Source, SourceFile
from bloomskip.sources.base import unchanged

if TYPE_CHECKING:
    from bloomskip.index.query import ZoneIndex

#: Arrow field metadata naming a table column's identity (bloomskip.tables.base.COLUMN_KEY;
#: the index layer does not import the tables layer).
COLUMN_KEY = b"bloomskip.table_column"


@dataclass
class Listed:
    """The source now, against the index: what :func:`decide` is given, and the rest."""

    bound: Expression
    columns: dict[str, ColumnIndex]  # the index's columns, under renamed names too
    aliases: dict[str, str]  # a column's name now -> its indexed name
    fresh: dict[int, SourceFile]  # fragment id -> file, indexed and unchanged
    fids: np.ndarray  # the fresh files' fragment ids, sorted
    known: KnownValues | None  # the fresh files' partition values, in ``fids`` order
    stale: list[tuple[str, str]] = field(default_factory=list)  # (uri, why): in full
    pruned: list[str] = field(default_factory=list)  # stale, ruled out by partition values
    sizes: dict[str, int] = field(default_factory=dict)  # uri -> bytes, every file
    rows_total: int = 0  # of the fresh files
    snapshot: dict[str, Any] | None = None  # a table's snapshot listed
    uris: np.ndarray | None = None  # the fresh files' URIs, in ``fids`` order


@dataclass(frozen=True)
class _Matched:
    """A source's files against one open index, whatever the predicate."""

    files: list[SourceFile]
    fresh: dict[int, SourceFile]  # fragment id -> file, indexed and unchanged
    fids: np.ndarray  # the fresh files' fragment ids, sorted
    slots: np.ndarray  # each of ``fids``' position in ``files``
    stale: list[tuple[int, str]]  # (position in ``files``, why): not indexed, or changed
    sizes: dict[str, int]  # uri -> bytes, every file
    rows_total: int  # of the fresh files
    part: dict[str, pa.Array]  # a table's partition values, per file of ``files``
    uris: np.ndarray  # each of ``fids``' URI (objects)


#: Table snapshots matched per open index, at most (the latest few: time travel).
_KEEP_MATCHED = 4
_MATCHED_LOCK = threading.Lock()


def _match(zi: ZoneIndex, src: Source) -> _Matched:
    """List ``src`` and match its files with the index's fragments. A table snapshot's
    match is kept with the open index: both are immutable, so a lookup of an unchanged
    table costs what its candidates cost, not what its files do."""
    key = src.listing_key()
    if key is not None:
        with _MATCHED_LOCK:
            hit = zi._matched.get(id(key))
            if hit is not None and hit[0] is key:
                zi._matched.move_to_end(id(key))
                return hit[1]
    files = store.inside(zi.storage, src, src.list())
    part = src.partition_values(files) if src.snapshot() is not None else {}
    rows = zi.fragments_by_path()
    fresh: dict[int, SourceFile] = {}
    slot_of: dict[int, int] = {}
    stale: list[tuple[int, str]] = []
    sizes = {}
    uris = []
    for i, f in enumerate(files):
        uri = src.uri_of(f.path)
        uris.append(uri)
        sizes[uri] = f.size
        r = rows.get(f.path)
        if r is None:
            stale.append((i, "not indexed"))
        elif not unchanged(r, f):
            stale.append((i, "changed since indexing"))
        else:
            fresh[int(r["fragment_id"])] = f
            slot_of[int(r["fragment_id"])] = i
    fids = np.array(sorted(fresh), dtype=np.uint64)
    slots = np.array([slot_of[int(f)] for f in fids.tolist()], dtype=np.int64)
    total = sum(int(rows[f.path]["num_rows"]) for f in fresh.values())
    named = np.array(uris, dtype=object)[slots] if len(slots) else np.zeros(0, dtype=object)
    matched = _Matched(files, fresh, fids, slots, stale, sizes, total, part, named)
    if key is not None:
        with _MATCHED_LOCK:
            zi._matched[id(key)] = (key, matched)
            while len(zi._matched) > _KEEP_MATCHED:
                zi._matched.popitem(last=False)
    return matched


def compare(
    zi: ZoneIndex, src: Source, predicate: str | Expression, zone: str | None = None
) -> Listed:
    """List ``src`` (a table: its snapshot) and compare it with the index ``zi``; bind
    ``predicate`` to the columns as they are now (``zone``: as :func:`~.bind.bind`)."""
    m = _match(zi, src)
    files = m.files
    snapshot = src.snapshot()
    schema, aliases, taken = (
        _binding(zi, src, files) if snapshot is not None else (zi.schema(), {}, set())
    )
    columns = {n: c for n, c in zi.columns.items() if n not in taken}
    columns.update({new: zi.columns[old] for new, old in aliases.items()})
    bound = bind(predicate, schema, zone)
    part = m.part
    if part:  # the snapshot's partition columns, by the names a latest read has for them
        moved = src.unsettled()
        part = {n: v for n, v in part.items() if n not in moved}
    types = {n: c.type for n, c in schema.items() if c.type is not None}
    every = KnownValues(part, types) if part else None
    may = np.ones(len(m.stale), np.bool_)
    if every is not None and m.stale and every.uses(bound):
        slots = np.array([i for i, _ in m.stale], dtype=np.int64)
        may = prune_known(bound, every, len(m.stale), slots)
    known = every.take(m.slots) if every is not None else None
    out = Listed(
        bound, columns, aliases, m.fresh, m.fids, known,
        sizes=dict(m.sizes), snapshot=snapshot, uris=m.uris,
    )  # fmt: skip
    for (i, why), keep in zip(m.stale, may, strict=True):
        uri = src.uri_of(files[i].path)
        if keep:
            out.stale.append((uri, why))
        else:
            out.pruned.append(uri)
    out.rows_total = m.rows_total
    return out


def table_names(then: pa.Schema, now: pa.Schema) -> tuple[dict[str, str], set[str]]:
    """A table's columns, indexed as ``then``, read as ``now``, matched by the table
    column each field is (:data:`COLUMN_KEY`: field id, physical name): the names now
    that the index knows by another name (renamed, or swapped), and the index's names
    that now name another column (swapped, or dropped and reused) - never to be answered
    for by the index's column of that name."""

    def key(f: pa.Field) -> bytes | None:
        return (f.metadata or {}).get(COLUMN_KEY)

    old_name = {key(f): f.name for f in then if key(f) is not None}
    old_key = {f.name: key(f) for f in then}
    renamed, taken = {}, set()
    for f in now:
        k = key(f)
        if k is not None and old_name.get(k, f.name) != f.name:
            renamed[f.name] = old_name[k]
        if f.name in old_key and old_key[f.name] != k:  # a key gained (an older index's
            taken.add(f.name)  # Delta partition column) is not proof of the same column
    return renamed, taken


def _binding(
    zi: ZoneIndex, src: Source, files: list[SourceFile]
) -> tuple[dict[str, Column], dict[str, str], set[str]]:
    """The binding schema: the snapshot's columns, an indexed one (matched by field id
    or physical name) with its indexed type, the others with their own (added since
    indexing: may match); the indexed columns' names now -> indexed names where they
    differ; and the indexed names that now name another column."""
    now = src.arrow_schema(files)
    renamed, taken = table_names(zi.manifest.schema, now)
    schema = {n: c for n, c in zi.schema().items() if n not in taken}
    aliases = {}
    for f in now:
        old = renamed.get(f.name)
        if old is not None and old in zi.columns:
            aliases[f.name] = old
            schema[f.name] = _as_indexed(zi.schema()[old], f)
        elif f.name not in schema:
            schema[f.name] = Column(f.type, f.name)
        else:  # found (probe): widened since (int -> long), a literal only the new type
            schema[f.name] = _as_indexed(schema[f.name], f)  # holds is "no row"
    for name, t in src.unsettled().items():  # a latest read's column, not the index's
        taken.add(name)
        aliases.pop(name, None)
        schema[name] = Column(t, name)
    return schema, aliases, taken


def _as_indexed(indexed: Column, now: pa.Field) -> Column:
    """A column bound as it was indexed, and with the table's type now if that differs
    (a literal that fits only the latter then binds as "may match")."""
    widened = None if indexed.type == now.type else now.type
    return replace(indexed, key=now.name, widened_to=widened)


__all__ = ["Listed", "compare", "table_names"]
