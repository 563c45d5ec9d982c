"""Pruning Parquet row groups: each stage, its reasons, and every "may match" fallback."""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bloomskip.cli import main
from bloomskip.errors import PredicateError
from bloomskip.parquet import probe, prune
from bloomskip.parquet.bloom import read_bloom_filters
from bloomskip.parquet.dictionary import fully_dictionary_encoded
from bloomskip.parquet.footer import read_footer

N, RG = 4000, 1000  # four row groups


def _table() -> pa.Table:
    ids = [f"user_{i:06d}" for i in range(N)]
    return pa.table(
        {
            "id": ids,
            "i64": pa.array([i * 3 for i in range(N)], pa.int64()),
            "low": [f"c{i % 5}" for i in range(N)],
            "f": pa.array([(-0.0 if i % 2 else 1.5) for i in range(N)], pa.float64()),
            "maybe": pa.array([None if i < RG else i for i in range(N)], pa.int32()),
            "tags": pa.array([[i, i + 1] for i in range(N)], pa.list_(pa.int64())),
        },
        schema=pa.schema(
            [
                pa.field("id", pa.string(), nullable=False),
                ("i64", pa.int64()),
                ("low", pa.string()),
                ("f", pa.float64()),
                ("maybe", pa.int32()),
                ("tags", pa.list_(pa.int64())),
            ]
        ),
    )


@pytest.fixture(scope="module")
def bloom_file(tmp_path_factory):
    """Filters on id and i64; no dictionaries, so the bloom stage is what prunes."""
    path = tmp_path_factory.mktemp("prune") / "bloom.parquet"
    pq.write_table(
        _table(),
        path,
        row_group_size=RG,
        use_dictionary=False,
        bloom_filter_options={"id": {"ndv": RG, "fpp": 0.01}, "i64": {"ndv": RG, "fpp": 0.01},
                              "f": {"ndv": 2, "fpp": 0.01}},
    )  # fmt: skip
    return path


def reasons(result) -> list[str]:
    return [u.reason for u in result.units]


def test_units_tile_the_file_in_order(bloom_file):
    r = prune(bloom_file, "id = 'user_000001'")
    assert [(u.first_row, u.num_rows) for u in r.units] == [(i * RG, RG) for i in range(4)]
    assert r.to_json()["file"] == str(bloom_file)


def test_statistics_prune_first(bloom_file):
    r = prune(bloom_file, "i64 = 3")
    assert [u.may_match for u in r.units] == [True, False, False, False]
    assert "statistics: outside [3000, 5997]" in r.units[1].reason


def test_statistics_bounds_are_shown_as_values_of_the_column_s_type(tmp_path):
    """Not as the physical integers (days, microseconds, unscaled decimals)."""
    import datetime as dt
    from decimal import Decimal

    t = pa.table(
        {
            "d": pa.array([dt.date(2024, 1, 1), dt.date(2024, 2, 1)]),
            "ts": pa.array(
                [dt.datetime(2024, 1, 1, 5), dt.datetime(2024, 1, 2)], pa.timestamp("us", "UTC")
            ),
            "dec": pa.array([Decimal("1.50"), Decimal("20.25")], pa.decimal128(10, 2)),
            "wide": pa.array([Decimal("-1.50"), Decimal("20.25")], pa.decimal128(30, 2)),
            "t": pa.array([dt.time(1, 2), dt.time(3, 4)]),
        }
    )
    pq.write_table(t, tmp_path / "typed.parquet")
    shown = {
        "d = DATE '2025-01-01'": "[2024-01-01, 2024-02-01]",
        "ts = TIMESTAMP '2025-01-01 00:00:00'": (
            "[2024-01-01 05:00:00+00:00, 2024-01-02 00:00:00+00:00]"
        ),
        "dec = 99.5": "[1.50, 20.25]",
        "wide = 99.5": "[-1.50, 20.25]",
        "t = TIME '05:00:00'": "[01:02:00, 03:04:00]",
    }
    for where, bounds in shown.items():
        assert (
            prune(tmp_path / "typed.parquet", where)
            .units[0]
            .reason.endswith(f"statistics: outside {bounds}")
        ), where


def test_bloom_filter_prunes_inside_min_max(bloom_file):
    # 4 is not a multiple of 3: inside [0, 2997] but absent.
    r = prune(bloom_file, "i64 = 4")
    assert not r.units[0].may_match and "bloom filter: absent" in r.units[0].reason
    r = prune(bloom_file, "id = 'user_000001x'")
    assert not r.units[0].may_match and "bloom filter: absent" in r.units[0].reason
    # Without the bloom stage the same row group may match.
    r = prune(bloom_file, "i64 = 4", stages=["statistics"])
    assert r.units[0].may_match and "bloom filter not used" in r.units[0].reason


def test_in_list_and_boolean_structure(bloom_file):
    r = prune(bloom_file, "i64 IN (4, 3003) OR id = 'user_003999'")
    assert [u.may_match for u in r.units] == [False, True, False, True]
    r = prune(bloom_file, "i64 = 3 AND id = 'user_000002'")  # both present, other rows
    assert r.units[0].may_match
    r = prune(bloom_file, "i64 = 3 AND id = 'nope'")
    assert not r.units[0].may_match


def test_not_and_not_equal_never_use_the_filter(bloom_file):
    for sql in ("NOT i64 = 4", "i64 != 4", "i64 NOT IN (4, 5)", "NOT (i64 = 4 OR i64 = 5)"):
        r = prune(bloom_file, sql)
        assert all(u.may_match for u in r.units), sql


def test_float_zero_probes_both_zeros(bloom_file):
    for lit in ("0.0", "-0.0", "0"):
        r = prune(bloom_file, f"f = {lit}", stages=["bloom"])
        assert all(u.may_match for u in r.units), lit
    r = prune(bloom_file, "f = 2.5", stages=["bloom"])
    assert not any(u.may_match for u in r.units)


def test_nan_never_prunes(bloom_file):
    r = prune(bloom_file, "f = 'NaN'")
    assert all(u.may_match for u in r.units)
    assert "NaN never prunes" in r.units[0].reason


def test_literals_that_cannot_be_stored_cannot_match(bloom_file):
    r = prune(bloom_file, "maybe = 3000000000")  # outside int32
    assert not any(u.may_match for u in r.units)
    assert "outside the range of int32" in r.units[0].reason
    r = prune(bloom_file, "i64 = 1.5")
    assert not any(u.may_match for u in r.units)


def test_null_predicates(bloom_file):
    r = prune(bloom_file, "maybe IS NULL")
    assert [u.may_match for u in r.units] == [True, False, False, False]
    assert "no nulls" in r.units[1].reason
    r = prune(bloom_file, "maybe IS NOT NULL")
    assert [u.may_match for u in r.units] == [False, True, True, True]
    r = prune(bloom_file, "maybe = 5")  # row group 0 is all null
    assert not r.units[0].may_match and "null" in r.units[0].reason
    r = prune(bloom_file, "id IS NULL")  # REQUIRED column
    assert not any(u.may_match for u in r.units) and "REQUIRED" in r.units[0].reason


def test_repeated_columns_and_unsupported_conditions_may_match(bloom_file):
    r = prune(bloom_file, '"tags.list.element" = 99999')
    assert all(u.may_match for u in r.units) and "list or map" in r.units[0].reason
    r = prune(bloom_file, "i64 < 0")
    assert all(u.may_match for u in r.units) and "not used for pruning" in r.units[0].reason
    r = prune(bloom_file, "i64 < 0 AND i64 = 4")  # the other side still prunes
    assert not r.units[0].may_match


def test_predicate_errors(bloom_file):
    with pytest.raises(PredicateError, match="no column 'nope'"):
        prune(bloom_file, "nope = 1")
    with pytest.raises(PredicateError, match="cannot parse"):
        prune(bloom_file, "i64 = = 1")


def test_an_invalid_filter_means_may_match(bloom_file, tmp_path):
    bad = tmp_path / "bad.parquet"
    shutil.copy(bloom_file, bad)
    first = next(f for f in read_bloom_filters(bad) if f.status == "ok" and f.column == 1)
    with open(bad, "r+b") as fh:  # num_bytes 1024 -> 1023 (not a power of two)
        fh.seek(first.offset + 1)
        raw = bytearray(fh.read(2))
        raw[0] = (raw[0] & 0xFE) | 0x01 if raw[0] & 0x80 else raw[0] ^ 0x02
        fh.seek(first.offset + 1)
        fh.write(raw)
    r = prune(bad, "i64 = 4")
    assert r.units[0].may_match and "invalid" in r.units[0].reason


def test_a_poisoned_filter_proves_the_filter_is_what_prunes(bloom_file, tmp_path):
    poisoned = tmp_path / "poisoned.parquet"
    shutil.copy(bloom_file, poisoned)
    f = next(f for f in read_bloom_filters(poisoned) if f.column == 0 and f.row_group == 0)
    with open(poisoned, "r+b") as fh:
        fh.seek(f.offset + f.header_length)
        fh.write(bytes(f.filter.num_bytes))
    assert not prune(poisoned, "id = 'user_000001'").units[0].may_match  # zeros say absent
    assert prune(bloom_file, "id = 'user_000001'").units[0].may_match


# -------------------------------------------------------------------- dictionary


@pytest.mark.parametrize("codec", ["none", "snappy", "gzip", "zstd", "brotli", "lz4"])
def test_dictionary_stage_for_every_codec(tmp_path, codec):
    path = tmp_path / f"dict_{codec}.parquet"
    pq.write_table(_table(), path, row_group_size=RG, compression=codec)
    r = prune(path, "low = 'c9'")  # inside min/max [c0, c4]? no: c9 > c4
    assert not any(u.may_match for u in r.units)
    r = prune(path, "low = 'c11'")  # inside [c0, c4], not in the dictionary
    assert not any(u.may_match for u in r.units)
    assert "dictionary: not among its 5 values" in r.units[0].reason
    r = prune(path, "low = 'c3'")
    assert all(u.may_match for u in r.units) and "in the dictionary" in r.units[0].reason
    r = prune(path, "id IN ('user_000001', 'user_000001a')")
    assert [u.may_match for u in r.units] == [True, False, False, False]


def test_a_chunk_that_fell_back_to_plain_is_not_judged_by_its_dictionary(tmp_path):
    path = tmp_path / "fallback.parquet"
    pq.write_table(_table(), path, row_group_size=N, dictionary_pagesize_limit=256,
                   data_page_size=512)  # fmt: skip
    footer = read_footer(path)
    chunk = footer.row_groups[0].columns[0]
    full, why = fully_dictionary_encoded(chunk)
    assert not full and "not dictionary-encoded" in why
    # Every id value must still be found (no false negative from a partial dictionary).
    for i in (0, 1500, 3999):
        assert prune(path, f"id = 'user_{i:06d}'").units[0].may_match


# -------------------------------------------------------------------------- probe


def test_probe_reports_each_row_group(bloom_file):
    r = probe(bloom_file, "id", ["user_000001", "user_002500", "zzz"])
    assert [u.result for u in r.units] == ["maybe", "absent", "maybe", "absent"]
    assert r.units[0].values == ("maybe", "absent", "absent")
    r = probe(bloom_file, "low", ["c1"])
    assert all(u.result == "no filter" for u in r.units)


# ---------------------------------------------------------------------------- CLI


def test_cli_prune_json_shape(bloom_file, capsys):
    assert main(["prune", str(bloom_file), "--where", "i64 IN (4, 3003)", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"file", "units"}
    assert out["file"] == str(bloom_file)
    assert [set(u) for u in out["units"]] == [{"first_row", "num_rows", "may_match", "reason"}] * 4
    assert [u["may_match"] for u in out["units"]] == [False, True, False, False]
    assert sum(u["num_rows"] for u in out["units"]) == N


def test_cli_prune_and_probe_tables(bloom_file, capsys):
    assert main(["prune", str(bloom_file), "-w", "id = 'user_000001'"]) == 0
    out = capsys.readouterr().out
    assert "1 of 4 row groups may match; 3,000 of 4,000 rows skipped" in out
    assert main(["probe", str(bloom_file), "-c", "i64", "3", "4"]) == 0
    out = capsys.readouterr().out
    assert "3: maybe present" in out and "4: absent" in out
    assert main(["probe", str(bloom_file), "-c", "i64", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["row_groups"][0]["result"] == "maybe"


def test_cli_errors_exit_2(bloom_file, capsys):
    assert main(["prune", str(bloom_file), "-w", "nope = 1"]) == 2
    assert "no column 'nope'" in capsys.readouterr().err
    assert main(["prune", str(bloom_file) + ".missing", "-w", "i64 = 1"]) == 2


def test_an_unreadable_dictionary_means_may_match_and_says_why(tmp_path):
    from bloomskip.parquet.thrift import decode_struct

    path = tmp_path / "bad_dict.parquet"
    pq.write_table(_table(), path, row_group_size=RG, compression="snappy")
    chunk = read_footer(path).row_groups[0].columns[2]  # "low", dictionary-encoded
    start = chunk.dictionary_page_offset
    data = bytearray(path.read_bytes())
    _, header_len = decode_struct(bytes(data[start : start + 256]))
    payload = start + header_len
    data[payload : payload + 8] = b"\xff" * 8  # snappy cannot decode this
    path.write_bytes(bytes(data))
    r = prune(path, "low = 'c11'")
    assert r.units[0].may_match and "dictionary unreadable" in r.units[0].reason
    assert not r.units[1].may_match  # other row groups are unaffected
