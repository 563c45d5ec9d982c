"""The compiled footer reader (``bloomskip.parquet.chunks``) answers as the structs do.

``prune`` and ``probe`` read a plaintext footer with compiled kernels into arrays; given
``footer=`` (or for encrypted files) they read :func:`read_footer`'s structs row by row.
Both must give the same units, answers and reasons, or the same error - on real files
and on thousands of footers mutated byte by byte and field by field (fields duplicated,
set to other Thrift types, min/max of odd sizes, NaN bounds, null counts that are
booleans or negative, column orders removed...). Mutations are seeded: a failing case
is rebuilt from its number.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import random
import struct
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bloomskip.errors import BloomskipError
from bloomskip.parquet import chunks, filters, probe, prune
from bloomskip.parquet.footer import read_footer
from bloomskip.parquet.thrift import (
    BINARY,
    BOOL_FALSE,
    BOOL_TRUE,
    DOUBLE,
    I32,
    I64,
    LIST,
    STRUCT,
    List,
    Struct,
    decode_struct,
    encode_struct,
)

ROWS = 120
PREDICATES = (
    "id IN (3, 57, 1000) OR user = 'user_0042'",
    "small = 3 AND (f = 1.5 OR d IN (0.5, 2.25))",
    "dec = 1.25 OR day = DATE '2024-01-05' OR u = 7",
    "user IS NULL OR id IS NOT NULL AND small != 2",
    "id NOT IN (1, 2) AND flag = true",
    "user = 'zzz' OR id = -5",
)


def seed_table() -> pa.Table:
    rng = np.random.default_rng(3)
    return pa.table(
        {
            "id": pa.array(range(ROWS), pa.int64()),
            "user": pa.array([None if i % 9 == 4 else f"user_{i:04d}" for i in range(ROWS)]),
            "small": pa.array([i % 5 for i in range(ROWS)], pa.int8()),
            "f": pa.array(rng.random(ROWS).astype(np.float32) * 4),
            "d": pa.array([float(i % 7) / 4 for i in range(ROWS)]),
            "dec": pa.array([Decimal(i % 11) / 4 for i in range(ROWS)], pa.decimal128(9, 2)),
            "day": pa.array([dt.date(2024, 1, 1 + i % 20) for i in range(ROWS)]),
            "flag": pa.array([i % 3 == 0 for i in range(ROWS)]),
            "u": pa.array([i % 13 for i in range(ROWS)], pa.uint32()),
        }
    )


@pytest.fixture(scope="module")
def seed(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("fast") / "seed.parquet"
    pq.write_table(
        seed_table(),
        path,
        row_group_size=30,
        bloom_filter_options={"id": True, "user": True, "d": True},
    )
    return path.read_bytes()


def outcome(call, *args, **kw) -> str:
    """``call(*args, **kw)``'s result as JSON text, or its typed error."""
    try:
        return json.dumps(call(*args, **kw).to_json())
    except BloomskipError as e:
        return f"{type(e).__name__}: {e}"


def both(monkeypatch, call, *args, **kw) -> tuple[str, str]:
    """The outcome through the compiled reader (and filters read in batches), and
    through the structs (and every filter loaded one by one)."""
    fast = outcome(call, *args, **kw)
    with monkeypatch.context() as m:
        m.setattr(chunks, "_open_plaintext", lambda *args: None)
        m.setattr(filters, "MAX_READ", 0)  # no filter is read in a batch
        slow = outcome(call, *args, **kw)
    return fast, slow


def agree(monkeypatch, path: Path, predicate: str, **kw) -> None:
    fast, slow = both(monkeypatch, prune, path, predicate, **kw)
    assert fast == slow, (path.name, predicate)
    given = outcome(prune, path, predicate, footer=read_footer(path), **kw)
    assert fast == given, (path.name, predicate)


def test_layouts_agree():
    """The row layout of the arrays is written twice: in the kernels, and numba-free."""
    from bloomskip.parquet import chunkkernels

    names = ("F_START", "F_END", "F_META", "F_STATS", "F_NULLS_OK", "F_NULLS", "META_INTS",
             "F_INTS", "META_SPANS", "F_SPANS", "BOUND_FIELDS", "F_BOUNDS", "NF")  # fmt: skip
    for name in names:
        assert getattr(chunks, name) == getattr(chunkkernels, name), name


def test_real_files_agree(seed, tmp_path, monkeypatch):
    path = tmp_path / "seed.parquet"
    path.write_bytes(seed)
    result = prune(path, PREDICATES[0])
    assert len(result.units) == 4 and not all(u.may_match for u in result.units)
    for predicate in PREDICATES:
        for stages in (("statistics", "dictionary", "bloom"), ("statistics",), ("bloom",)):
            agree(monkeypatch, path, predicate, stages=stages)
    no_stats = tmp_path / "no_stats.parquet"
    pq.write_table(seed_table(), no_stats, row_group_size=50, write_statistics=False)
    for predicate in PREDICATES:
        agree(monkeypatch, no_stats, predicate)


# ---------------------------------------------------------------------- targeted edits

#: Every column, one leaf each: = / IN, IS NULL, IS NOT NULL and != together.
EVERY_COLUMN = (
    "id IN (3, 57) OR user = 'user_0042' OR small = 3 OR f = 1.5 OR d = 0.5 OR dec = 1.25 "
    "OR day = DATE '2024-01-05' OR flag = true OR u = 7",
    "id IS NULL OR user IS NULL OR small IS NULL OR f IS NULL OR d IS NULL OR dec IS NULL",
    "user IS NOT NULL AND id != 5 AND u != 7 AND day IS NOT NULL",
)


def edited(data: bytes, edit) -> bytes:
    start, footer = split(data)
    meta, _ = decode_struct(footer)
    edit(meta)
    return assemble(data[:start], encode_struct(meta))


def column_meta(meta: Struct, rg: int, col: int) -> Struct:
    return meta.get(4).items[rg].get(1).items[col].get(3)


@pytest.mark.parametrize("fid", [1, 2, 3, 5, 6])
@pytest.mark.parametrize("duplicate", [False, True])
def test_statistics_fields_of_every_type_agree(seed, tmp_path, monkeypatch, fid, duplicate):
    """Each Statistics field of each column set to each odd value (or added again after
    the real one, which must then be ignored): both paths answer alike."""
    path = tmp_path / "edited.parquet"
    for col in range(len(seed_table().columns)):
        for t, v in ODD_VALUES:

            def edit(meta: Struct, col=col, t=t, v=v) -> None:
                stats = column_meta(meta, 1, col).get(12)
                if duplicate and fid in stats:
                    stats.fields.append(type(stats.fields[0])(fid, t, v, dirty=True))
                    stats.changed = True
                else:
                    stats.set(fid, t, v)

            path.write_bytes(edited(seed, edit))
            for predicate in EVERY_COLUMN:
                fast, slow = both(monkeypatch, prune, path, predicate)
                assert fast == slow, (col, t, v, predicate)


@pytest.mark.parametrize("fid", [3, 5, 12])
def test_chunk_metadata_fields_of_every_type_agree(seed, tmp_path, monkeypatch, fid):
    """ColumnChunk.meta_data (3), ColumnMetaData.num_values (5) and .statistics (12) of
    another Thrift type, or removed, or a footer without column orders."""
    path = tmp_path / "edited.parquet"
    for col in range(len(seed_table().columns)):
        for t, v in (*ODD_VALUES, (None, None)):

            def edit(meta: Struct, col=col, t=t, v=v) -> None:
                chunk = meta.get(4).items[2].get(1).items[col]
                target = chunk if fid == 3 else chunk.get(3)
                if t is None:
                    target.remove(fid)
                    meta.remove(7)  # column_orders
                else:
                    target.set(fid, t, v)

            path.write_bytes(edited(seed, edit))
            for predicate in EVERY_COLUMN:
                fast, slow = both(monkeypatch, prune, path, predicate)
                assert fast == slow, (col, t, v, predicate)


# ---------------------------------------------------------------------------- mutations


def test_footer_without_row_groups_agrees(seed, tmp_path, monkeypatch):
    """A footer whose row group list is empty (as a mutated file had): no units, no
    chunk array of any leaf, and the same answer both ways."""

    def edit(meta: Struct) -> None:
        meta.set(4, LIST, List(STRUCT, []))
        meta.set(3, I64, 0)  # num_rows

    path = tmp_path / "no_row_groups.parquet"
    path.write_bytes(edited(seed, edit))
    for predicate in (*PREDICATES, *EVERY_COLUMN):
        fast, slow = both(monkeypatch, prune, path, predicate)
        assert fast == slow, predicate
        assert json.loads(fast)["units"] == []


def split(data: bytes) -> tuple[int, bytes]:
    (n,) = struct.unpack("<I", data[-8:-4])
    return len(data) - 8 - n, data[len(data) - 8 - n : -8]


def assemble(body: bytes, footer: bytes) -> bytes:
    return body + footer + struct.pack("<I", len(footer)) + b"PAR1"


def _structs(s: Struct, out: list[Struct]) -> None:
    out.append(s)
    for f in s.fields:
        if f.type == STRUCT:
            _structs(f.value, out)
        elif f.type in (LIST, 10) and f.value.elem_type == STRUCT:
            for item in f.value.items:
                _structs(item, out)


ODD_VALUES = (
    (BINARY, b""),
    (BINARY, b"\x00\x00\xc0\x7f"),  # a float NaN
    (BINARY, b"\x00\x00\x00\x00\x00\x00\xf8\x7f"),  # a double NaN
    (BINARY, b"\xff" * 8),
    (BINARY, b"\x01\x02\x03"),
    (BINARY, b"user_9999"),
    (I32, -1),
    (I64, 0),
    (I64, 2**40),
    (BOOL_TRUE, True),
    (BOOL_FALSE, False),
    (DOUBLE, 1.5),
    (STRUCT, Struct()),
    (LIST, List(I32, [1, 2])),
)


def _edit(rng: random.Random, footer: bytes) -> bytes:
    """One Thrift-aware edit of a field of the footer (any struct, any depth)."""
    meta, _ = decode_struct(footer)
    structs: list[Struct] = []
    _structs(meta, structs)
    metas = [m for m in structs if 5 in m and 9 in m]  # ColumnMetaData (num_values, offset)
    stats = [m.get(12) for m in metas if isinstance(m.get(12), Struct)]
    k = rng.random()
    s = rng.choice(stats if k < 0.4 and stats else metas if k < 0.6 else structs)
    if not s.fields:
        return footer
    f = rng.choice(s.fields)
    k = rng.random()
    if k < 0.5:
        s.set(f.id, *rng.choice(ODD_VALUES))
    elif k < 0.65:
        s.remove(f.id)
    elif k < 0.85:  # the field again, later in the struct (the first one counts)
        t, v = rng.choice(ODD_VALUES)
        s.fields.append(type(f)(f.id, t, v, dirty=True))
        s.changed = True
    else:  # a field of the Statistics struct that is not there yet
        fid = rng.choice((1, 2, 3, 5, 6, 7, 8))
        if fid not in s:
            s.set(fid, *rng.choice(ODD_VALUES))
    return encode_struct(meta)


def mutate(data: bytes, rng: random.Random) -> bytes:
    start, footer = split(data)
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.6:
            with contextlib.suppress(BloomskipError):
                footer = _edit(rng, footer)
        else:
            buf = bytearray(footer)
            pos = rng.randrange(len(buf))
            op = rng.random()
            if op < 0.5:
                buf[pos] ^= 1 << rng.randrange(8)
            elif op < 0.7:
                buf[pos] = rng.randrange(256)
            elif op < 0.85:
                buf[pos:pos] = rng.randbytes(rng.randint(1, 4))
            else:
                del buf[pos : pos + rng.randint(1, 4)]
            footer = bytes(buf)
    return assemble(data[:start], footer)


CASES = 1200


def test_mutated_footers_agree(seed, tmp_path, monkeypatch):
    """Fast and slow paths agree on every mutated footer: the same units and reasons,
    or the same error; ``probe`` too."""
    path = tmp_path / "case.parquet"
    seen = {"ok": 0, "error": 0}
    for i in range(CASES):
        rng = random.Random(f"fast:{i}")
        path.write_bytes(mutate(seed, rng))
        predicate = PREDICATES[i % len(PREDICATES)]
        fast, slow = both(monkeypatch, prune, path, predicate)
        assert fast == slow, f"case {i}: {predicate}"
        seen["error" if fast.startswith(("Corrupt", "Unsupported")) else "ok"] += 1
        if i % 5 == 0:
            column, value = (("id", 3), ("user", "user_0003"), ("d", 0.5))[i % 3]
            fast, slow = both(monkeypatch, probe, path, column, [value])
            assert fast == slow, f"case {i}: probe {column}"
    # the mutations reach past the first checks: many cases prune, many are refused
    assert seen["ok"] > CASES // 4 and seen["error"] > CASES // 10, seen
