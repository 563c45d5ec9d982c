"""Folding on write: ``add_bloom_filters``/``write_table``/``add-bloom`` with ``ndv="auto"``
or ``ndv=N`` build each filter at the size for that many distinct values and fold it to
the target FPP, as arrow-rs (DataFusion, delta-rs) and Arrow C++ (pyarrow 24+) write.

What is proved here, against files the peers write at test time:

* pyarrow 26 with ``bloom_filter_options={"ndv": N, "fpp": p}`` and bloomskip with
  ``ndv=N, fpp=p`` write the same bitset for every column chunk; without ``ndv`` pyarrow
  starts from 1,048,576 rows (its default maximum row group length), bloomskip from
  ``ndv=1048576`` - the same bitsets again;
* DataFusion 55 with its default NDV (arrow-rs: the maximum row group size) and bloomskip
  with ``ndv="auto"`` (the largest row group's row count) write the same bitsets, and with
  an NDV given, the same for the same ``ndv=N``;
* the folded filters never lose a value (hypothesis), and the estimate that replaces the
  distinct count is close to it.

The comparisons rebuild a peer's file with ``replace=True``: the peer's own values, as the
peer stored them (arrow-rs stores small decimals as integers, pyarrow as FLBA), hashed by
bloomskip and folded by bloomskip, against the peer's bitsets read by an independent
parser (``tests/support/peers.py``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bloomskip import Sbbf
from bloomskip.errors import InvalidParameterError
from bloomskip.parquet import add_bloom_filters, write_table
from bloomskip.sbbf.sizing import num_bytes_for
from tests.support.peers import read_bloom_filters

ROWS_PER_GROUP = 4000
#: pyarrow's default ndv: ``DEFAULT_MAX_ROW_GROUP_LENGTH`` of parquet-cpp's properties.
PYARROW_DEFAULT_NDV = 1024 * 1024


def source_table(rows: int = 10_000, seed: int = 7) -> pa.Table:
    """Columns of most types, with duplicates and nulls; the last row group is partial."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, rows // 2, rows)
    nulls = rng.random(rows) < 0.05
    base = dt.datetime(2024, 1, 1)
    return pa.table(
        {
            "s": pa.array(
                [None if n else f"user_{i:06d}" for i, n in zip(ids, nulls, strict=True)]
            ),
            "i64": pa.array(ids * 7919, pa.int64()),
            "i8": pa.array((ids % 200 - 100).astype(np.int8)),
            "f64": pa.array(ids / 3.0),
            "d9": pa.array([decimal.Decimal(int(i)).scaleb(-2) for i in ids], pa.decimal128(9, 2)),
            "d20": pa.array([decimal.Decimal(int(i)) for i in ids], pa.decimal128(20, 0)),
            "ts": pa.array([base + dt.timedelta(seconds=int(i)) for i in ids], pa.timestamp("us")),
            "date": pa.array([dt.date(2000, 1, 1) + dt.timedelta(days=int(i)) for i in ids]),
            "fsb": pa.array([int(i).to_bytes(16, "little") for i in ids], pa.binary(16)),
            "low": pa.array([f"c{i % 7}" for i in ids]),
        }
    )


def peer_filters(path) -> dict[tuple[int, str], bytes]:
    return {(ff.row_group, ff.name): ff.bitset for ff in read_bloom_filters(path)}


def rebuilt(path, out, **kwargs) -> dict[tuple[int, str], bytes]:
    """The peer's file with every filter rebuilt by bloomskip (``replace=True``)."""
    result = add_bloom_filters(path, out, replace=True, **kwargs)
    assert result.added and all(f.replaced for f in result.added)
    return peer_filters(out)


def assert_same_filters(peer: dict, ours: dict) -> None:
    assert set(ours) <= set(peer) and ours, (sorted(peer), sorted(ours))
    for key, bitset in ours.items():
        assert bitset == peer[key], f"{key}: ours {len(bitset)} B, peer {len(peer[key])} B"


# ---------------------------------------------------------------------------- pyarrow


@pytest.mark.parametrize(("ndv", "fpp"), [(ROWS_PER_GROUP, 0.01), (50_000, 0.05), (2000, 0.2)])
def test_ndv_n_equals_pyarrows_folded_filters(tmp_path, ndv, fpp):
    table = source_table()
    path = tmp_path / "pyarrow.parquet"
    options = {c: {"ndv": ndv, "fpp": fpp} for c in table.column_names}
    pq.write_table(table, path, row_group_size=ROWS_PER_GROUP, bloom_filter_options=options)
    peer = peer_filters(path)
    assert len(peer) == 3 * len(table.column_names)
    assert_same_filters(peer, rebuilt(path, tmp_path / "ours.parquet", ndv=ndv, fpp=fpp))


def test_pyarrows_default_ndv_is_a_million_rows(tmp_path):
    table = source_table()
    path = tmp_path / "pyarrow.parquet"
    options = {c: {"fpp": 0.05} for c in table.column_names}
    pq.write_table(table, path, row_group_size=ROWS_PER_GROUP, bloom_filter_options=options)
    ours = rebuilt(path, tmp_path / "ours.parquet", ndv=PYARROW_DEFAULT_NDV, fpp=0.05)
    assert_same_filters(peer_filters(path), ours)


def test_write_table_folds_like_pyarrow(tmp_path):
    """write_table(ndv=...) against pyarrow's own writer, same table, same row groups."""
    table = source_table(seed=11)
    theirs, ours = tmp_path / "pyarrow.parquet", tmp_path / "ours.parquet"
    options = {c: {"ndv": ROWS_PER_GROUP, "fpp": 0.01} for c in table.column_names}
    pq.write_table(table, theirs, row_group_size=ROWS_PER_GROUP, bloom_filter_options=options)
    result = write_table(table, ours, fpp=0.01, ndv=ROWS_PER_GROUP, row_group_size=ROWS_PER_GROUP)
    assert {f.folded_from for f in result.added} == {num_bytes_for(ROWS_PER_GROUP, 0.01)}
    assert_same_filters(peer_filters(theirs), peer_filters(ours))
    # "auto" starts from the largest row group, here the configured row group size.
    auto = write_table(table, tmp_path / "auto.parquet", ndv="auto", row_group_size=ROWS_PER_GROUP)
    assert [f.num_bytes for f in auto.added] == [f.num_bytes for f in result.added]
    assert_same_filters(peer_filters(theirs), peer_filters(tmp_path / "auto.parquet"))


# ---------------------------------------------------------------------------- DataFusion


@pytest.fixture(scope="module", params=[0.01, 0.05, 0.3])
def datafusion_file(request, tmp_path_factory):
    """``(path, fpp)``: the table written by DataFusion with its default NDV."""
    datafusion = pytest.importorskip("datafusion")
    path = tmp_path_factory.mktemp("datafusion") / "t.parquet"
    options = datafusion.ParquetWriterOptions(
        bloom_filter_on_write=True,
        bloom_filter_fpp=request.param,
        max_row_group_size=ROWS_PER_GROUP,
    )
    datafusion.SessionContext().from_arrow(source_table()).write_parquet_with_options(
        str(path), options
    )
    return path, request.param


def test_ndv_auto_equals_datafusions_default(datafusion_file, tmp_path):
    path, fpp = datafusion_file
    meta = pq.ParquetFile(path).metadata
    assert "datafusion" in meta.created_by
    assert max(meta.row_group(r).num_rows for r in range(meta.num_row_groups)) == ROWS_PER_GROUP
    ours = rebuilt(path, tmp_path / "ours.parquet", ndv="auto", fpp=fpp)
    assert len(ours) == meta.num_row_groups * meta.num_columns
    assert_same_filters(peer_filters(path), ours)


def test_ndv_n_equals_datafusions_copy(tmp_path):
    datafusion = pytest.importorskip("datafusion")
    path = tmp_path / "copy.parquet"
    ctx = datafusion.SessionContext()
    ctx.from_arrow(source_table(seed=3), name="t")
    ctx.sql(
        f"COPY t TO '{path}' STORED AS PARQUET OPTIONS ("
        "'format.bloom_filter_on_write' 'true', 'format.bloom_filter_fpp' '0.02', "
        f"'format.bloom_filter_ndv' '30000', 'format.max_row_group_size' '{ROWS_PER_GROUP}')"
    ).collect()
    ours = rebuilt(path, tmp_path / "ours.parquet", ndv=30_000, fpp=0.02)
    assert_same_filters(peer_filters(path), ours)


# ---------------------------------------------------------------------------- properties


def test_folded_results_report_an_estimate(tmp_path):
    table = pa.table({"k": [f"k{i % 2500}" for i in range(10_000)]})
    path = tmp_path / "t.parquet"
    exact = write_table(table, path, row_group_size=5000)
    folded = add_bloom_filters(path, tmp_path / "f.parquet", replace=True, ndv="auto")
    for e, f in zip(exact.added, folded.added, strict=True):
        assert e.ndv == 2500 and e.folded_from is None
        assert abs(f.ndv - 2500) < 50 and f.folded_from == num_bytes_for(5000, 0.01)
        assert f.num_bytes == e.num_bytes  # here folding lands on the exact size
    added = folded.to_dict()["added"][0]
    assert {"ndv", "num_bytes", "offset", "length", "replaced", "folded_from"} <= set(added)
    assert "~2," in folded.to_text()  # the summary marks the distinct counts as estimates


@pytest.mark.parametrize("bad", [-1, 1.5, "lots", True, 2**63])
def test_bad_ndv_is_refused_before_anything_is_written(tmp_path, bad):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"k": [1, 2, 3]}), path)
    before = path.read_bytes()
    with pytest.raises(InvalidParameterError, match="ndv must be None"):
        add_bloom_filters(path, ndv=bad)
    with pytest.raises(InvalidParameterError, match="ndv must be None"):
        write_table(pa.table({"k": [1]}), tmp_path / "w.parquet", ndv=bad)
    assert path.read_bytes() == before and not (tmp_path / "w.parquet").exists()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    values=st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), max_size=400),
    group=st.integers(1, 150),
    fpp=st.sampled_from([0.3, 0.05, 0.01, 0.0001]),
    policy=st.sampled_from(["parquet", "putze"]),
    ndv=st.one_of(st.just("auto"), st.integers(0, 10**6)),
)
def test_folded_filters_never_lose_a_value(values, group, fpp, policy, ndv):
    table = pa.table({"v": pa.array(values, pa.int64()), "s": pa.array(values).cast(pa.string())})
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/t.parquet"
        result = write_table(table, path, fpp=fpp, policy=policy, ndv=ndv, row_group_size=group)
        assert all(f.folded_from is not None for f in result.added)
        pf = pq.ParquetFile(path)
        for ff in read_bloom_filters(path):
            stored = pf.read_row_group(ff.row_group, columns=[ff.name]).column(0).drop_null()
            assert Sbbf.from_bytes(ff.bitset).check(stored).all(), (ff.row_group, ff.name)
