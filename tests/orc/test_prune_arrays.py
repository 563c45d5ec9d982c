"""ORC pruning's arrays answer as its ranges do.

Integer columns are decided in arrays (:mod:`bloomskip.orc.bounds`: a stripe's row index
read once into count / bounds arrays, candidates compared in numpy), and a file's row
groups are held as columns (``row_group_columns``). Each is checked against the long way -
:class:`~bloomskip.orc.statistics.Range` per row group, ``row_groups()`` - on real files,
on synthetic row index entries of every shape, and on mutated files: the same units,
reasons and errors.
"""

from __future__ import annotations

import json
import random

import pytest

from bloomskip.errors import BloomskipError
from bloomskip.orc import messages_pb2 as pb
from bloomskip.orc import proto, prune, read_orc
from bloomskip.orc.bounds import UnitBounds, outside, stripe_bounds
from bloomskip.orc.prune import schema_of
from bloomskip.orc.statistics import entry_range
from tests.support.orc_files import small_files as make_small_files
from tests.support.orc_wire import Seed, mutate

pytest.importorskip("pyorc")

PREDICATES = (
    "id IN (3, 301, 1200, 99999)",
    "id = 2499 OR id = -7",
    "id IN (0, 9223372036854775807, -9223372036854775808)",
    "id IS NULL",
    "id = 5 AND s = 'abc'",
    "NOT (id IN (1, 2))",
    "st.x IN (3, 77)",
    "st.x = 49 OR id IN (600, 601)",
    "id != 4",
)


@pytest.fixture(scope="module")
def small_files(tmp_path_factory) -> dict[str, bytes]:
    return make_small_files(tmp_path_factory.mktemp("orc-arrays"))


def both(path, predicate: str, monkeypatch, **kw) -> tuple[str, str]:
    """The answer with the arrays, and with every row group through its Range."""

    def run() -> str:
        try:
            return json.dumps(prune(path, predicate, **kw).to_json())
        except BloomskipError as e:
            return f"{type(e).__name__}: {e}"

    fast = run()
    with monkeypatch.context() as m:
        m.setattr(UnitBounds, "of", lambda *args: None)
        slow = run()
    return fast, slow


def test_real_files_agree(small_files, tmp_path, monkeypatch):
    for name, data in small_files.items():
        path = tmp_path / f"{name}.orc"
        path.write_bytes(data)
        for predicate in PREDICATES:
            for stages in (("statistics", "bloom"), ("statistics",), ("bloom",)):
                fast, slow = both(path, predicate, monkeypatch, stages=stages)
                assert fast == slow, (name, predicate, stages)
    ruled = json.loads(both(tmp_path / "pyarrow-zstd.orc", PREDICATES[0], monkeypatch)[0])
    assert any("statistics: outside [" in u["reason"] for u in ruled["units"])


def test_row_group_columns_are_row_groups(small_files):
    for data in small_files.values():
        f = read_orc(data)
        columns = f.row_group_columns()
        assert tuple(columns) == f.row_groups()
        assert columns[1:4] == f.row_groups()[1:4]
        assert columns.stripes.tolist() == [g.stripe for g in f.row_groups()]
        assert columns.indexes.tolist() == [g.index for g in f.row_groups()]


def _entry(rng: random.Random) -> pb.RowIndexEntry:
    e = pb.RowIndexEntry()
    e.positions.extend([0, rng.randrange(100)])
    if rng.random() < 0.15:
        return e  # no statistics
    cs = e.statistics
    k = rng.random()
    if k < 0.2:
        cs.number_of_values = 0
    elif k < 0.85:
        cs.number_of_values = rng.randrange(1, 500)
    if rng.random() < 0.5:
        cs.has_null = rng.random() < 0.5
    if rng.random() < 0.85:
        s = cs.int_statistics
        for field in ("minimum", "maximum", "sum"):
            if rng.random() < 0.85:
                setattr(
                    s, field, rng.choice((0, -1, 1, 2**63 - 1, -(2**63), rng.randrange(-99, 99)))
                )
    elif rng.random() < 0.5:
        cs.string_statistics.minimum = b"a"
    return e


def test_stripe_bounds_read_entries_as_entry_range(small_files):
    """Synthetic entries of every shape: what the arrays hold is what each entry's Range
    says (all null, bounds, or none), for a trusted writer and for one that is not."""
    f = read_orc(small_files["pyarrow-uncompressed"])
    _, infos = schema_of(f)
    info = infos[1]  # id: bigint
    rng = random.Random(11)
    for _ in range(200):
        m = pb.RowIndex()
        m.entry.extend(_entry(rng) for _ in range(rng.randrange(0, 12)))
        m = proto.parse(pb.RowIndex, m.SerializeToString(), "synthetic")
        entries = proto.row_index_statistics(m, "int_statistics")
        ranges = [None if e is None else entry_range(f, info, *e) for e in entries]
        b = stripe_bounds(m, len(entries), trusted=True)
        for j, r in enumerate(ranges):
            assert b.zero[j] == (r is not None and r.count == 0)
            assert b.bounded[j] == (r is not None and r.lo is not None)
            if b.bounded[j]:
                assert (int(b.lo[j]), int(b.hi[j])) == (r.lo, r.hi)
        untrusted = stripe_bounds(m, len(entries), trusted=False)
        assert not untrusted.bounded.any()
        assert untrusted.zero.tolist() == b.zero.tolist()
        assert not stripe_bounds(m, len(entries) + 1, trusted=True).bounded.any()


def test_outside_leaves_keys_it_cannot_compare_to_the_ranges():
    m = pb.RowIndex()
    e = m.entry.add()
    e.statistics.number_of_values = 3
    e.statistics.int_statistics.minimum = 1
    e.statistics.int_statistics.maximum = 5
    b = stripe_bounds(m, 1, trusted=True)
    assert outside(b, [0, 6]).tolist() == [True]
    assert outside(b, [0, 3]).tolist() == [False]
    assert outside(b, []).tolist() == [False]
    assert outside(b, [2**63]) is None  # past int64: compared one by one
    assert outside(b, [True]) is None
    assert outside(b, [1.5]) is None


def test_mutated_files_agree(small_files, tmp_path, monkeypatch):
    """Row indexes, stripe footers and tails mutated: the same answers or errors."""
    rng = random.Random(5)
    seeds = [Seed(small_files[k]) for k in ("pyarrow-uncompressed", "pyorc-zlib", "pyorc-zstd")]
    path = tmp_path / "case.orc"
    compared = 0
    for case in range(360):
        path.write_bytes(mutate(seeds[case % len(seeds)], rng))
        predicate = PREDICATES[case % 4]
        fast, slow = both(path, predicate, monkeypatch)
        assert fast == slow, (case, predicate)
        compared += fast.startswith("{")
    assert compared > 100
