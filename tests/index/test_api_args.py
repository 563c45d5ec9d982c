"""The index's Python API refuses bad arguments as the command line does: one typed,
one-line error naming the parameter (:mod:`bloomskip.index.params`), never a raw
``TypeError``/``KeyError``/numpy error, never nonsense silently accepted; and a file ruled
out by its predicate alone says so, not "file filter"."""

from __future__ import annotations

import argparse

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bloomskip import index
from bloomskip.cli import args as cli_args
from bloomskip.errors import BloomskipError, InvalidParameterError, PredicateError
from bloomskip.index import params


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    base = tmp_path_factory.mktemp("api_args")
    lake = base / "lake"
    lake.mkdir()
    pq.write_table(
        pa.table({"s": ["a", "b", "c"], "c": pa.array([1, 2, 3], pa.int8())}),
        lake / "a.parquet",
    )
    index.build(lake, ["s", "c"], base / "idx", zone_rows=1)
    return base, lake, base / "idx"


def _refused(error: type[BloomskipError], fn, match: str) -> None:
    with pytest.raises(error, match=match) as info:
        fn()
    assert isinstance(info.value, BloomskipError)
    assert "\n" not in str(info.value)


IPE, PE = InvalidParameterError, PredicateError
IN = "s IN ('a', 'b')"
#: name: (the call on an open index, the error, what its message says)
QUERY_CASES = {
    "unknown column": (lambda ix: ix.zones("nope"), IPE, "no index of column 'nope'.*: c, s"),
    "zones(None)": (lambda ix: ix.zones(None), IPE, "column must be a column name"),
    "query(None)": (lambda ix: ix.query(None), PE, "SQL text .* got None"),
    "query(bytes)": (lambda ix: ix.query(b"s = 'a'"), PE, "decode the bytes"),
    "max_in_fpp str": (
        lambda ix: ix.query(IN, max_in_fpp="x"),
        IPE,
        "max_in_fpp must be a probability from 0 to 1, got 'x'",
    ),
    "max_in_fpp None": (lambda ix: ix.query(IN, max_in_fpp=None), IPE, "max_in_fpp .* None"),
    "max_in_fpp nan": (lambda ix: ix.query(IN, max_in_fpp=float("nan")), IPE, "got nan"),
    "max_in_fpp -1": (lambda ix: ix.query(IN, max_in_fpp=-1), IPE, "max_in_fpp .* got -1"),
    "max_in_fpp 1.5": (lambda ix: ix.query(IN, max_in_fpp=1.5), IPE, "max_in_fpp .* got 1.5"),
    "max_in_fpp True": (lambda ix: ix.query(IN, max_in_fpp=True), IPE, "max_in_fpp"),
    "row_filter max_in_fpp": (lambda ix: ix.row_filter(IN, max_in_fpp=2), IPE, "max_in_fpp"),
    "row_filter(None)": (lambda ix: ix.row_filter(None), PE, "SQL text"),
    "check_source str": (
        lambda ix: ix.query(IN, check_source="no"),
        IPE,
        "check_source must be True or False",
    ),
    "as_of str": (lambda ix: ix.query(IN, as_of="3"), IPE, "as_of must be a whole number"),
    "as_of -1": (lambda ix: ix.query(IN, as_of=-1), IPE, "as_of must be a whole number from 0"),
}


@pytest.mark.parametrize("case", list(QUERY_CASES))
def test_query_arguments_are_refused_with_a_typed_error(built, case):
    ix = index.open(built[2])
    fn, error, match = QUERY_CASES[case]
    _refused(error, lambda: fn(ix), match)


def test_max_in_fpp_takes_a_probability_from_0_to_1(built):
    ix = index.open(built[2])
    # 0: the index is used for single values only; 1: for every IN list (as --max-in-fpp)
    assert ix.query("s IN ('a', 'b')", max_in_fpp=0).notes  # says the IN list was not used
    assert [f.path for f in ix.query("s IN ('a', 'b')", max_in_fpp=1).files]
    assert ix.query("s = 'a'", max_in_fpp=0).files


def test_open_arguments_are_refused_with_a_typed_error(built):
    idx = built[2]
    _refused(
        InvalidParameterError,
        lambda: index.open(idx, version="x"),
        "version must be a whole number",
    )
    _refused(InvalidParameterError, lambda: index.open(idx, version=1.0), "version")
    _refused(InvalidParameterError, lambda: index.open(idx, version=True), "version")
    _refused(InvalidParameterError, lambda: index.open(None), "index_path must be a path")
    _refused(InvalidParameterError, lambda: index.open(b"/tmp"), "index_path must be a path")
    _refused(InvalidParameterError, lambda: index.open(""), "index_path: the path is empty")
    _refused(InvalidParameterError, lambda: index.open("a\0b"), "NUL")
    assert index.open(idx, version=1).version == 1


def test_build_arguments_are_refused_before_anything_is_written(built, tmp_path):
    _, lake, _ = built
    new = tmp_path / "new"
    cases = [
        (lambda: index.build(lake, [1], new), "each column must be a name"),
        (lambda: index.build(lake, None, new), "columns must be a column name or a list"),
        (lambda: index.build(lake, [""], new), "a column name cannot be empty"),
        (lambda: index.build(lake, ["s", "s"], new), "distinct"),
        (lambda: index.build(None, ["s"], new), "source must be a path or URI"),
        (lambda: index.build(b"lake", ["s"], new), "source must be a path or URI"),
        (lambda: index.build([lake, 3], ["s"], new), "each path of source must be"),
        (lambda: index.build("", ["s"], new), "source: the path is empty"),
        (lambda: index.build(lake, ["s"], ""), "index_path: the path is empty"),
        (lambda: index.build(lake, ["s"], None), "index_path must be a path"),
        (
            lambda: index.build(lake, ["s"], new, threads="2"),
            "threads must be a whole number from 1 to 1,024, got '2'",
        ),
        (lambda: index.build(lake, ["s"], new, threads=0), "threads"),
        (lambda: index.build(lake, ["s"], new, threads=2.0), "threads"),
        (lambda: index.build(lake, ["s"], new, file_filters="no"), "file_filters must be True"),
        (lambda: index.build(lake, ["s"], new, overwrite=1), "overwrite must be True or False"),
        (lambda: index.build(lake, ["s"], new, progress="yes"), "progress must be True or False"),
    ]
    for fn, match in cases:
        _refused(InvalidParameterError, fn, match)
    assert not new.exists()


def test_refresh_and_vacuum_arguments_are_refused(built):
    idx = built[2]
    _refused(InvalidParameterError, lambda: index.refresh(""), "index_path: the path is empty")
    _refused(InvalidParameterError, lambda: index.refresh(idx, threads="4"), "threads")
    _refused(InvalidParameterError, lambda: index.vacuum(None), "index_path")
    _refused(InvalidParameterError, lambda: index.vacuum(idx, keep_versions="x"), "keep_versions")
    _refused(InvalidParameterError, lambda: index.vacuum(idx, keep_versions=0), "keep_versions")
    _refused(InvalidParameterError, lambda: index.vacuum(idx, min_age_s=None), "min_age_s")
    _refused(InvalidParameterError, lambda: index.vacuum(idx, min_age_s=float("nan")), "min_age_s")
    _refused(InvalidParameterError, lambda: index.vacuum(idx, min_age_s=-1), "min_age_s")


@pytest.mark.parametrize(
    ("parse", "limit", "low"),
    [
        (cli_args.THREADS, params.MAX_THREADS, 1),
        (cli_args.KEEP, params.MAX_KEEP, 1),
        (cli_args.AS_OF, params.MAX_AS_OF, 0),
    ],
)
def test_the_api_and_the_command_line_take_the_same_counts(parse, limit, low):
    assert parse(str(limit)) == limit and parse(str(low)) == low
    for bad in (limit + 1, low - 1):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(str(bad))
        with pytest.raises(InvalidParameterError):
            params.count(bad, "n", low, limit)
    assert cli_args.probability("0") == params.probability(0, "p") == 0.0
    assert cli_args.probability("1") == params.probability(1, "p") == 1.0


@pytest.mark.parametrize("file_filters", [False, True])
def test_a_predicate_no_value_can_match_is_the_reason_not_a_filter(tmp_path, file_filters):
    lake = tmp_path / "lake"
    lake.mkdir()
    pq.write_table(pa.table({"c": pa.array([1, 2], pa.int8())}), lake / "a.parquet")
    index.build(lake, ["c"], tmp_path / "idx", zone_rows=1, file_filters=file_filters)
    ix = index.open(tmp_path / "idx")
    res = ix.query("c = 300")
    assert res.skip_reasons == {"predicate cannot match": 1}
    assert [why for _, why in res.skipped] == ["predicate cannot match"]
    assert any("no row can match" in n and "outside the range of int8" in n for n in res.notes)
    # a value that could be there but is not: the filters rule it out
    want = "file filter" if file_filters else "every zone ruled out"
    assert ix.query("c = 7").skip_reasons == {want: 1}
    # one impossible side of an OR does not decide the file; the other side does
    assert ix.query("c = 300 OR c = 7").skip_reasons == {want: 1}
    assert len(ix.query("c = 300 OR c = 1").files) == 1
    assert ix.query("c = 300", check_source=False).skip_reasons == {"predicate cannot match": 1}
