"""Property: on any history of a Delta or Iceberg table, an index built at any point
answers every predicate at every snapshot with the table reader's rows.

Hypothesis draws a history - appends to partitions, deletes, partition overwrites,
(Delta) merges and compactions, (Iceberg) an added column, an indexed and another
column swapping names, position delete files - and the point in it where
the index is built; then, at every snapshot (time travel, before and after the index),
predicates on indexed and partition columns. The truth is the table's own reader
(``deltalake``'s ``DeltaTable.scan()``, pyiceberg's ``scan().to_arrow()``) filtered by
DuckDB; bloomskip's rows are the index's candidate files and zones at that snapshot,
read with deletes applied, then filtered the same way. They must be equal: no matching
row outside a candidate zone, no deleted row back, no file of another snapshot.

More examples when hunting: ``BLOOMSKIP_TABLE_EXAMPLES=200``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bloomskip import index
from tests.support.tables import (
    POSITION_DELETE_SCHEMA,
    canonical,
    commit_delete_file,
    delta_rows,
    iceberg_catalog,
    iceberg_rows,
    matching,
    rows_via_index,
)

EXAMPLES = int(os.environ.get("BLOOMSKIP_TABLE_EXAMPLES", "5"))
PARTS = ["a", "b", None]

appends = st.tuples(st.just("append"), st.integers(1, 40), st.sampled_from([0, 1, 2, 3]))
deletes = st.tuples(st.just("delete"), st.integers(2, 5), st.integers(0, 4))
overwrites = st.tuples(st.just("overwrite"), st.integers(1, 20), st.sampled_from(["a", "b"]))


def _predicates():
    value = st.integers(0, 160)
    key = st.integers(0, 6).map(lambda j: f"'k{j}'")
    part = st.sampled_from(["'a'", "'b'"])
    return st.one_of(
        value.map(lambda v: f"id = {v}"),
        st.lists(value, min_size=1, max_size=4).map(
            lambda vs: f"id IN ({', '.join(map(str, vs))})"
        ),
        key.map(lambda k: f"key = {k}"),
        part.map(lambda p: f"part = {p}"),
        st.just("part IS NULL"),
        st.tuples(key, part).map(lambda kp: f"key = {kp[0]} AND part = {kp[1]}"),
        st.tuples(value, part).map(lambda vp: f"id = {vp[0]} OR part = {vp[1]}"),
        st.tuples(key, value).map(lambda kv: f"(key = {kv[0]} OR id = {kv[1]}) AND part IS NULL"),
    )


class _Rows:
    def __init__(self, seed: int) -> None:
        self.next, self.rng = 0, np.random.default_rng(seed)

    def make(self, n: int, choice: int, parts: list[str | None] | None = None) -> pa.Table:
        ids = np.arange(self.next, self.next + n, dtype=np.int64)
        self.next += n
        if parts is None:
            parts = [PARTS[choice]] if choice < 3 else PARTS
        return pa.table(
            {
                "id": ids,
                "key": [f"k{int(v) % 7}" for v in self.rng.integers(0, 100, n)],
                "part": pa.array([parts[i % len(parts)] for i in range(n)], pa.string()),
                "num": ids + 40,  # not indexed; Iceberg histories swap its name with id's
            }
        )


def _check_all(idx: str, versions, truth_of, predicates) -> None:
    for v in versions:
        truth = truth_of(v)
        for where in predicates:
            got, _ = rows_via_index(idx, where, as_of=v, columns=["id", "key", "part"])
            got = got.select(["id", "key", "part"])  # in this order, whatever the table's
            want = matching(truth, where).select(["id", "key", "part"])
            assert canonical(got) == canonical(want), (v, where)


# ------------------------------------------------------------------------------ Delta

delta_ops = st.lists(
    st.one_of(
        appends,
        deletes,
        overwrites,
        st.tuples(st.just("merge"), st.integers(1, 15), st.integers(0, 2)),
        st.tuples(st.just("compact"), st.just(0), st.just(0)),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=delta_ops,
    at=st.integers(0, 6),
    zone_rows=st.sampled_from([3, 8, 64]),
    predicates=st.lists(_predicates(), min_size=2, max_size=4),
    seed=st.integers(0, 2**16),
)
def test_delta_histories(ops, at, zone_rows, predicates, seed):
    from deltalake import DeltaTable, write_deltalake

    rows = _Rows(seed)
    with tempfile.TemporaryDirectory() as tmp:
        path, idx = str(Path(tmp) / "t"), str(Path(tmp) / "t.idx")
        write_deltalake(path, rows.make(30, 3), partition_by=["part"])
        built = False
        for i, (op, a, b) in enumerate([*ops, ("end", 0, 0)]):
            if i == min(at, len(ops)):
                index.build(path, ["id", "key"], idx, zone_rows=zone_rows)
                built = True
            if op == "append":
                write_deltalake(path, rows.make(a, b), mode="append")
            elif op == "delete":
                DeltaTable(path).delete(f"id % {a} = {b % a}")
            elif op == "overwrite":
                write_deltalake(
                    path, rows.make(a, 0, [b]), mode="overwrite", predicate=f"part = '{b}'"
                )
            elif op == "merge":
                src = rows.make(a, 3)
                src = src.set_column(0, "id", pa.array(np.arange(a, dtype=np.int64) * 3 + b))
                (
                    DeltaTable(path)
                    .merge(src, predicate="t.id = s.id", source_alias="s", target_alias="t")
                    .when_matched_update_all()
                    .when_not_matched_insert_all()
                    .execute()
                )
            elif op == "compact":
                DeltaTable(path).optimize.compact()
        assert built
        latest = DeltaTable(path).version()
        _check_all(idx, range(latest + 1), lambda v: delta_rows(path, v), predicates)


# ---------------------------------------------------------------------------- Iceberg

iceberg_ops = st.lists(
    st.one_of(
        appends,
        deletes,
        overwrites,
        st.tuples(st.just("add_column"), st.just(0), st.just(0)),
        st.tuples(st.just("swap"), st.just(0), st.just(0)),  # id and num swap names
        # merge-on-read: a position delete file of every a-th row of one data file
        st.tuples(st.just("posdelete"), st.integers(2, 5), st.integers(0, 9)),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=max(3, EXAMPLES // 2), suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=iceberg_ops,
    at=st.integers(0, 5),
    zone_rows=st.sampled_from([3, 8, 64]),
    partitioned=st.booleans(),
    predicates=st.lists(_predicates(), min_size=2, max_size=3),
    seed=st.integers(0, 2**16),
)
def test_iceberg_histories(ops, at, zone_rows, partitioned, predicates, seed):
    pytest.importorskip("pyiceberg")
    from pyiceberg.types import LongType

    rows = _Rows(seed)
    with tempfile.TemporaryDirectory() as tmp:
        name = f"prop{seed}"
        catalog = iceberg_catalog(Path(tmp), name)
        first = rows.make(30, 3)
        tbl = catalog.create_table("ns.t", schema=first.schema)
        if partitioned:
            with tbl.update_spec() as spec:
                spec.add_identity("part")
        tbl.append(first)
        idx, extra = str(Path(tmp) / "t.idx"), False
        for i, (op, a, b) in enumerate([*ops, ("end", 0, 0)]):
            if i == min(at, len(ops)):
                index.build(f"iceberg://{name}/ns.t", ["id", "key"], idx, zone_rows=zone_rows)

            def shaped(t: pa.Table, extra: bool = extra) -> pa.Table:
                if not extra:
                    return t
                return t.append_column("extra", pa.array(np.arange(t.num_rows), pa.int64()))

            if op == "append":
                tbl.append(shaped(rows.make(a, b)))
            elif op == "delete":  # pyiceberg's filters have no modulo: a range
                tbl.delete(f"id >= {a * 7 + b} and id < {a * 9 + b}")
            elif op == "overwrite":
                tbl.overwrite(shaped(rows.make(a, 0, [b])), overwrite_filter=f"part == '{b}'")
            elif op == "add_column" and not extra:
                with tbl.update_schema() as upd:
                    upd.add_column("extra", LongType())
                extra = True
            elif op == "posdelete" and not partitioned:  # (the helper's tables are not)
                files = sorted(t.file.file_path for t in tbl.scan().plan_files())
                if files:
                    path = files[b % len(files)]
                    pos = list(range(b % a, 30, a))  # past a file's end: no row
                    deletes = pa.table(
                        {"file_path": [path] * len(pos), "pos": pos}, schema=POSITION_DELETE_SCHEMA
                    )
                    commit_delete_file(tbl, "position", deletes)
                    event("position deletes")
                    tbl = catalog.load_table("ns.t")
            elif op == "swap":  # a query on id then means num's field: never id's filters
                for old, new in (("id", "tmp"), ("num", "id"), ("tmp", "num")):
                    with tbl.update_schema() as upd:
                        upd.rename_column(old, new)
        tbl = catalog.load_table("ns.t")
        snaps = [s.snapshot_id for s in tbl.snapshots()]
        _check_all(idx, snaps, lambda sid: iceberg_rows(tbl, sid), predicates)
        for sid in snaps:  # each file read alone (its manifest planned, not the snapshot)
            src = index.open(idx).source.as_of(sid)
            got = [
                i
                for f in src.loaded().files
                for task in src.read_tasks([src.uri_of(f.path)])
                for part in task.read(None, ["id"])
                for i in part.column("id").to_pylist()
            ]
            assert sorted(got) == sorted(iceberg_rows(tbl, sid).column("id").to_pylist()), sid
