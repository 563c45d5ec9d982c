"""Lance interop (issue 7): bloomskip reads the BLOOMFILTER index pylance writes, and builds
zone indexes over Lance datasets that equal it byte for byte.

One module dataset: 15,000 rows in fragments of 6,000 / 6,000 / 3,000, ten column types
(int8, int16, int32, int64, float, double, string, binary, date, timestamp) with nulls in
four, 800 rows deleted *before* Lance indexes it (so zones have gaps). Four columns are
indexed with Lance's defaults (the string form: 8192 rows, p 0.00057), six with
``IndexConfig(number_of_items=1000, probability=0.01)``. The truth for queries is Lance's
own filtered scan with ``with_row_address=True``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bloomskip import index
from bloomskip.cli import main
from bloomskip.errors import CorruptFileError, IndexNotFoundError, SourceError
from bloomskip.sbbf.sizing import putze_num_bytes

lance = pytest.importorskip("lance")
from lance.file import LanceFileReader, LanceFileWriter  # noqa: E402
from lance.indices import IndexConfig  # noqa: E402

from bloomskip.lance import open_lance_index  # noqa: E402

# More examples when hunting: BLOOMSKIP_LANCE_EXAMPLES=300.
EXAMPLES = int(os.environ.get("BLOOMSKIP_LANCE_EXAMPLES", "20"))
N = 15_000
DEFAULT = ("i8", "f64", "b", "ts")  # create_scalar_index(col, "BLOOMFILTER")
SMALL = ("i16", "i32", "i64", "f32", "s", "d")  # number_of_items 1000, probability 0.01
PARAMS = {"number_of_items": 1000, "probability": 0.01}
DELETE = "i64 < 1000003 * 500 OR (i64 >= 1000003 * 7100 AND i64 < 1000003 * 7400)"
LANCE_COLUMNS = ["fragment_id", "zone_start", "zone_length", "has_null", "bloom_filter_data"]


def _table(start: int, n: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = np.arange(start, start + n)

    def nulls() -> np.ndarray:
        return rng.random(n) < 0.05

    return pa.table(
        {
            "i8": pa.array((ids % 200 - 100).astype(np.int8), mask=nulls()),
            "i16": pa.array((ids * 7 % 30000).astype(np.int16)),
            "i32": pa.array((ids * 13).astype(np.int32), mask=nulls()),
            "i64": pa.array(ids.astype(np.int64) * 1000003),
            "f32": pa.array((ids % 500).astype(np.float32) / 4, mask=nulls()),
            "f64": pa.array(ids.astype(np.float64) / 3),
            "s": pa.array([f"user-{i}" for i in ids], mask=nulls()),
            "b": pa.array([int(i).to_bytes(3, "little") for i in ids], pa.binary()),
            "d": pa.array((ids % 3000).astype(np.int32)).cast(pa.date32()),
            "ts": pa.array(ids * 1_000_000 + 1_700_000_000_000_000, pa.timestamp("us")),
        }
    )


def _index_lance(ds) -> None:
    for c in DEFAULT:
        ds.create_scalar_index(c, "BLOOMFILTER")
    for c in SMALL:
        ds.create_scalar_index(c, IndexConfig(index_type="bloomfilter", parameters=PARAMS))


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    root = tmp_path_factory.mktemp("lance")
    uri = str(root / "events.lance")
    ds = lance.write_dataset(_table(0, N), uri, max_rows_per_file=6000)
    ds.delete(DELETE)
    _index_lance(ds)
    big, small = str(root / "big.idx"), str(root / "small.idx")
    index.build(uri, list(DEFAULT), big, progress=False)  # Lance's defaults are ours
    index.build(uri, list(SMALL), small, zone_rows=1000, fpp=0.01, progress=False)
    return SimpleNamespace(root=root, uri=uri, big=big, small=small)


def _ours(lake, column: str) -> pa.Table:
    zi = index.open(lake.big if column in DEFAULT else lake.small)
    return zi.zones(column).select(LANCE_COLUMNS)


def _contains(res, addresses: list[int]) -> list[int]:
    """Row addresses that no candidate of ``res`` holds (must be empty); candidates are
    named ``fragment:<id>`` by both the Lance reader and zone indexes of Lance datasets."""
    cands = {int(c.path.removeprefix("fragment:")): c.zones for c in res.files}
    missed = []
    for a in addresses:
        frag, off = a >> 32, a & 0xFFFFFFFF
        zones = cands.get(frag, [])
        if zones is not None and not any(s <= off < s + n for s, n in zones):
            missed.append(a)
    return missed


def _truth(uri: str, where: str) -> list[int]:
    t = lance.dataset(uri).to_table(filter=where, with_row_address=True)
    return t.column("_rowaddr").to_pylist()


# ----------------------------------------------------------------------- zones and bytes


@pytest.mark.parametrize("column", DEFAULT + SMALL)
def test_zones_and_bytes_equal_lance(lake, column):
    lance_zones = open_lance_index(lake.uri, column).zones(column)
    ours = _ours(lake, column)
    assert ours.num_rows == lance_zones.num_rows > 0
    assert ours.drop_columns(["bloom_filter_data"]).equals(
        lance_zones.drop_columns(["bloom_filter_data"])
    )
    assert ours.column("bloom_filter_data").to_pylist() == (
        lance_zones.column("bloom_filter_data").to_pylist()
    )


def test_lance_rules_zones_after_deletions_and_fixed_sizes(lake):
    big = open_lance_index(lake.uri, "i8").zones("i8").to_pylist()
    # 6000-row fragments: fragment 0 lost offsets 0..499, fragment 1 offsets 1100..1399.
    assert [(z["fragment_id"], z["zone_start"], z["zone_length"]) for z in big] == [
        (0, 500, 5500),
        (1, 0, 6000),
        (2, 0, 3000),
    ]
    assert {len(z["bloom_filter_data"]) for z in big} == {32768} == {putze_num_bytes(8192, 0.00057)}
    small = open_lance_index(lake.uri, "s").zones("s").to_pylist()
    spans = [(z["fragment_id"], z["zone_start"], z["zone_length"]) for z in small]
    # 1000 live rows per zone; the zone around the deleted offsets 1100..1399 spans 1300.
    assert spans[:8] == [
        *[(0, s, 1000) for s in range(500, 5000, 1000)],
        (0, 5500, 500),
        (1, 0, 1000),
        (1, 1000, 1300),
    ]
    assert {len(z["bloom_filter_data"]) for z in small} == {putze_num_bytes(1000, 0.01)}
    meta = open_lance_index(lake.uri, "s").indexes["s"]
    assert (meta.number_of_items, meta.probability, meta.null_bitmap) == (1000, 0.01, True)


# ----------------------------------------------------------------------- queries

PREDICATES = [
    "i8 = 5",
    "i8 IN (-100, 99, 7)",
    "i16 = 7007",
    "i32 = 13000",
    "i64 = 1000003000",
    "f32 = 1.25",
    "f32 = 0.0",
    "f64 = 1000",
    "s = 'user-605'",
    "s IN ('user-1001', 'user-1002', 'user-14998', 'nope')",
    "b = X'e80300'",
    "d = date '1970-01-05'",
    "ts = timestamp '2023-11-14 22:30:00'",
    "s IS NULL",
    "i8 IS NULL OR i32 IS NULL",
    "i8 = 5 AND s = 'user-605'",
    "i64 = 1000003000 OR f64 = 1000",
    "(s = 'user-9000' OR i16 = 1) AND ts = timestamp '2023-11-14 22:30:00'",
    "i32 > 5 AND i8 = 3",
    "s = 'user-605' AND NOT (i32 = 13)",
]


@pytest.mark.parametrize("where", PREDICATES)
def test_candidates_contain_every_row_lance_returns(lake, where):
    truth = _truth(lake.uri, where)
    res = open_lance_index(lake.uri).query(where)
    assert _contains(res, truth) == []
    for idx in (lake.big, lake.small):
        assert _contains(index.open(idx).query(where), truth) == []


def test_selective_predicates_prune(lake):
    ix = open_lance_index(lake.uri)
    for where, most in (("i64 = 1000003000", 1), ("s = 'user-605'", 1), ("b = X'e80300'", 1)):
        res = ix.query(where)
        assert 1 <= res.zones_candidate <= most < res.zones_total, (where, res.to_json())
    assert ix.query("i64 = 7").files == []  # in no zone: no fragment to read


def test_uncovered_fragments_are_candidates(lake, tmp_path):
    uri = str(tmp_path / "copy.lance")
    shutil.copytree(lake.uri, uri)
    idx = str(tmp_path / "idx")  # bloomskip's own index, built with Lance's
    index.build(uri, ["s"], idx, zone_rows=1000, fpp=0.01, progress=False)
    ds = lance.write_dataset(_table(N, 2000, seed=1), uri, mode="append")
    ds.delete("i64 = 1000003 * 8000")  # after indexing: both keep their zones
    new = max(f.fragment_id for f in ds.get_fragments())
    ix = open_lance_index(uri)
    assert {ix_.covered for ix_ in ix.indexes.values()} == {frozenset({0, 1, 2})}
    where = f"s = 'user-{N + 5}'"  # only in the appended fragment
    res = ix.query(where)
    assert [(c.fragment_id, c.zones, c.reason) for c in res.files] == [
        (new, None, "not covered by the index")
    ]
    assert _contains(res, _truth(uri, where)) == []
    res = index.open(idx).query(where)
    assert [(c.path, c.reason) for c in res.files] == [(f"fragment:{new}", "not indexed")]
    assert _contains(res, _truth(uri, where)) == []
    assert _contains(index.open(idx).query("s = 'user-8001'"), _truth(uri, "s = 'user-8001'")) == []
    # Lance's optimize_indices indexes the new fragments only; so does a refresh, and the
    # zones (with the fragment whose rows were deleted since) are still Lance's
    ds = lance.write_dataset(_table(N + 2000, 1500, seed=2), uri, mode="append")
    ds.optimize.optimize_indices()
    rep = index.refresh(idx, progress=False)
    assert (rep.files_indexed, rep.files_unchanged) == (2, 3)
    theirs = open_lance_index(uri, "s")
    ours = index.open(idx).zones("s").select(LANCE_COLUMNS)
    assert theirs.indexes["s"].covered == frozenset({0, 1, 2, new, new + 1})
    assert ours.equals(theirs.zones("s"))
    # compaction rewrites fragments: the new ones are not covered and read in full
    lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=100_000)
    res = open_lance_index(uri).query("s = 'user-605'")
    assert res.files and all(c.zones is None for c in res.files)
    assert _contains(res, _truth(uri, "s = 'user-605'")) == []


# ----------------------------------------------------------------------- property


@st.composite
def datasets(draw):
    n = draw(st.integers(1, 300))
    pool_s = ["a", "b", "it's", "ünï", "", "x" * 30]
    pool_j = [0, 1, -1, 300, -32768, 32767]
    pool_x = [0.0, -0.0, 1.5, -2.25, 1e300]
    s = draw(st.lists(st.one_of(st.none(), st.sampled_from(pool_s)), min_size=n, max_size=n))
    j = draw(st.lists(st.one_of(st.none(), st.sampled_from(pool_j)), min_size=n, max_size=n))
    x = draw(st.lists(st.one_of(st.none(), st.sampled_from(pool_x)), min_size=n, max_size=n))
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "s": pa.array(s, pa.string()),
            "j": pa.array(j, pa.int16()),
            "x": pa.array(x, pa.float64()),
        }
    )
    return SimpleNamespace(
        table=table,
        per_file=draw(st.integers(10, 150)),
        before=draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, 40)), max_size=3)),
        after=draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, 40)), max_size=2)),
        append=draw(st.booleans()),
        items={c: draw(st.sampled_from([1, 3, 16, 64, 8192])) for c in ("s", "j", "x")},
        prob=draw(st.sampled_from([0.3, 0.01, 0.00057])),
        pools={"s": [*pool_s, "zz"], "j": [*pool_j, 5], "x": [*pool_x, 7.0]},
    )


def _lit(v) -> str:
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return repr(v)


@st.composite
def predicates(draw, pools, depth=0):
    if depth < 2 and draw(st.booleans()):
        op = draw(st.sampled_from(["AND", "OR"]))
        a = draw(predicates(pools, depth + 1))
        b = draw(predicates(pools, depth + 1))
        return f"({a} {op} {b})"
    col = draw(st.sampled_from(sorted(pools)))
    kind = draw(st.sampled_from(["eq", "in", "null"]))
    if kind == "null":
        return f"{col} IS NULL"
    if kind == "eq":
        return f"{col} = {_lit(draw(st.sampled_from(pools[col])))}"
    vals = draw(st.lists(st.sampled_from(pools[col]), min_size=1, max_size=4))
    return f"{col} IN ({', '.join(_lit(v) for v in vals)})"


def _deletes(ds, spans) -> None:
    for a, k in spans:
        ds.delete(f"id >= {a} AND id < {a + k}")


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(d=datasets(), data=st.data())
def test_property_candidates_contain_every_row(d, data):
    root = tempfile.mkdtemp(prefix="bloomskip-lance-")
    try:
        uri = f"{root}/p.lance"
        ds = lance.write_dataset(d.table, uri, max_rows_per_file=d.per_file)
        _deletes(ds, d.before)
        if ds.count_rows() == 0:
            return
        for c, items in d.items.items():
            params = {"number_of_items": items, "probability": d.prob}
            ds.create_scalar_index(c, IndexConfig(index_type="bloomfilter", parameters=params))
        idx = f"{root}/p.idx"
        index.build(uri, ["s"], idx, zone_rows=d.items["s"], fpp=d.prob, progress=False)
        assert (
            index.open(idx)
            .zones("s")
            .select(LANCE_COLUMNS)
            .equals(open_lance_index(uri).zones("s"))
        )
        if d.append:
            extra = d.table.slice(0, 20).set_column(
                0, "id", pa.array(range(1000, 1000 + min(20, d.table.num_rows)), pa.int64())
            )
            ds = lance.write_dataset(extra, uri, mode="append")
        _deletes(ds, d.after)
        ix = open_lance_index(uri)
        zi = index.open(idx)
        for _ in range(4):
            where = data.draw(predicates(d.pools))
            truth = _truth(uri, where)
            assert _contains(ix.query(where), truth) == [], where
            if "j" not in where and "x" not in where:
                assert _contains(zi.query(where), truth) == [], where
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ----------------------------------------------------------------------- errors and CLI


def test_typed_errors(lake, tmp_path):
    with pytest.raises(SourceError, match="not a Lance dataset"):
        open_lance_index(tmp_path)
    plain = str(tmp_path / "plain.lance")
    lance.write_dataset(_table(0, 10), plain)
    with pytest.raises(IndexNotFoundError, match="no Lance BLOOMFILTER index"):
        open_lance_index(plain)
    uri = str(tmp_path / "bad.lance")
    shutil.copytree(lake.uri, uri)
    ix = open_lance_index(uri, "s")
    path = ix.indexes["s"].segments[0].path
    good = LanceFileReader(path).read_all().to_table()
    meta = {k.decode(): v.decode() for k, v in good.schema.metadata.items()}
    for bad, why in (
        (good.drop_columns(["zone_length"]), "no zone_length"),
        (good.replace_schema_metadata({"bloomfilter_item": "1000"}), "bloomfilter_probability"),
        (good.replace_schema_metadata({**meta, "bloomfilter_item": "x"}), "bad bloom filter"),
    ):
        with LanceFileWriter(path, bad.schema) as w:
            w.write_batch(bad)
        with pytest.raises(CorruptFileError, match=f"{path}.*{why}"):
            open_lance_index(uri, "s")


def test_filters_of_the_wrong_size_are_may_match(lake, tmp_path):
    uri = str(tmp_path / "odd.lance")
    shutil.copytree(lake.uri, uri)
    path = open_lance_index(uri, "s").indexes["s"].segments[0].path
    t = LanceFileReader(path).read_all().to_table()
    data = t.column("bloom_filter_data").to_pylist()
    data[0] = data[0][:-1]  # not whole 32-byte blocks
    t = t.set_column(4, t.schema.field(4), pa.array(data, pa.binary()))
    with LanceFileWriter(path, t.schema) as w:
        w.write_batch(t)
    res = open_lance_index(uri, "s").query("s = 'no such user'")
    assert [(c.fragment_id, c.zones) for c in res.files] == [(0, [(500, 1000)])]


def test_cli_inspect_query_build(lake, tmp_path, capsys):
    assert main(["inspect", lake.uri, "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    by_col = {ix["column"]: ix for ix in rep["indexes"]}
    assert set(by_col) == set(DEFAULT + SMALL)
    assert (by_col["i8"]["zones"], by_col["i8"]["filter_sizes"]) == (3, [32768])
    assert (by_col["s"]["number_of_items"], by_col["s"]["probability"]) == (1000, 0.01)
    assert main(["inspect", lake.uri]) == 0
    assert "s_idx on s (string): BLOOMFILTER, number_of_items 1,000" in capsys.readouterr().out
    assert main(["index", "query", lake.uri, "s = 'user-605'", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert [(f["path"], f["zones"]) for f in res["files"]] == [("fragment:0", [[500, 1000]])]
    idx = str(tmp_path / "cli.idx")
    assert main(["index", "build", lake.uri, idx, "-c", "s", "--zone-rows", "1000",
                 "--fpp", "0.01", "--json"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["zones_written"] == res["zones_total"]
    assert main(["index", "query", idx, "s = 'user-605'", "--json"]) == 0
    ours = json.loads(capsys.readouterr().out)
    assert [(f["path"], f["zones"]) for f in ours["files"]] == [("fragment:0", [[500, 1000]])]
    assert index.open(idx).columns["s"].encoding == "arrow"
