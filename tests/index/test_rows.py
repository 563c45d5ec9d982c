"""The index's rule per row (``ZoneIndex.row_filter``): what a reader holding a candidate
zone's rows may drop. Hypothesis checks it against DuckDB in test_properties; these pin
the cases where it must keep rows it cannot judge."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bloomskip import index

ROWS = pa.table(
    {
        "k": pa.array([1, 2, None, 4, 5], pa.int64()),
        "s": pa.array(["a", None, "c", "d", "e"]),
        "c": pa.array([0, 1, 0, 1, 0], pa.int32()),
    }
)


@pytest.fixture
def zi(tmp_path):
    lake = tmp_path / "lake"
    lake.mkdir()
    pq.write_table(ROWS, lake / "a.parquet")
    index.build(lake, ["k", "s"], tmp_path / "idx")
    return index.open(tmp_path / "idx")


def _may(zi, where: str, table: pa.Table) -> list[bool]:
    return zi.row_filter(where).may(table).tolist()


@pytest.mark.parametrize(
    ("where", "want"),
    [
        ("k = 4", [False, False, False, True, False]),
        ("k IN (1, 5, 99)", [True, False, False, False, True]),
        ("k IS NULL", [False, False, True, False, False]),
        ("k IS NOT NULL", [True, True, False, True, True]),
        ("k != 4", [True, True, False, True, True]),  # only nulls are ruled out
        ("k = 4 OR s = 'a'", [True, False, False, True, False]),
        ("k = 4 AND s = 'a'", [False] * 5),
        ("k = 4 AND c = 1", [False, False, False, True, False]),
        ("c = 1", [True] * 5),  # not indexed: every row may match
        ("k = 4 OR c = 1", [True] * 5),
        ("k > 3", [True] * 5),  # not answered by the index
        ("NOT (k = 4)", [True, True, False, True, True]),
    ],
)
def test_the_engine_over_rows(zi, where, want):
    assert _may(zi, where, ROWS) == want


def test_values_that_do_not_convert_keep_every_row_but_nulls_stay_facts(zi):
    """``k`` read as text that is not a number: the column is blocked (every row may match
    every condition on it), but ``IS NULL`` - decided before anything is blocked - still
    knows which rows are null: a row read as null is null."""
    odd = pa.table({"k": pa.array(["x", None, "4"]), "s": pa.array(["a", "b", None])})
    assert _may(zi, "k = 4", odd) == [True, True, True]
    assert _may(zi, "k IS NOT NULL", odd) == [True, True, True]
    assert _may(zi, "k IS NULL", odd) == [False, True, False]


def test_a_column_the_table_lacks_and_a_too_long_in_list_keep_every_row(zi):
    assert _may(zi, "s = 'a'", ROWS.select(["k"])) == [True] * 5
    # an IN list the index does not use (a zone holding none of the values would still
    # be kept with a probability above max_in_fpp): every non-null row may match
    got = zi.row_filter("k IN (1, 4)", max_in_fpp=0.0).may(ROWS).tolist()
    assert got == [True, True, False, True, True]  # a null equals nothing
    assert np.asarray(zi.row_filter("k = 1").may(ROWS.slice(0, 0))).shape == (0,)
