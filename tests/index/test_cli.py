"""``bloomskip index build|refresh|query|status|vacuum``."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from bloomskip.cli import main


def _lake(tmp_path):
    d = tmp_path / "lake"
    d.mkdir()
    for i in range(3):
        t = pa.table({"id": [f"id-{i}-{j}" for j in range(2000)], "n": list(range(2000))})
        pq.write_table(t, d / f"p{i}.parquet")
    return d


def test_build_query_status_refresh_vacuum_json(tmp_path, capsys):
    lake, idx = _lake(tmp_path), str(tmp_path / "idx")
    assert main(["index", "build", str(lake), idx, "-c", "id", "--zone-rows", "500", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert (rep["version"], rep["files_indexed"], rep["zones_written"]) == (1, 3, 12)
    assert main(["index", "query", idx, "id IN ('id-1-1200', 'nope')", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert [(f["path"], f["zones"]) for f in res["files"]] == [
        (str(lake / "p1.parquet"), [[1000, 500]])
    ]
    assert (res["files_total"], res["zones_total"], res["rows_candidate"]) == (3, 12, 500)
    assert main(["index", "status", idx, "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["coverage"] == 1.0 and st["columns"]["id"]["zones"] == 12
    pq.write_table(pa.table({"id": ["late"], "n": [1]}), lake / "p9.parquet")
    assert main(["index", "query", idx, "id = 'late'", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["files"][0]["reason"] == "not indexed"
    assert main(["index", "refresh", idx, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["files_indexed"] == 1
    assert main(["index", "vacuum", idx, "--keep", "1", "--json"]) == 0
    assert "removed" in json.loads(capsys.readouterr().out)


def test_tables_for_people(tmp_path, capsys):
    lake, idx = _lake(tmp_path), str(tmp_path / "idx")
    assert main(["index", "build", str(lake), idx, "-c", "id", "-c", "n", "--sizing", "exact"]) == 0
    assert "3 indexed" in capsys.readouterr().out
    assert main(["index", "query", idx, "id = 'id-2-5' AND n != 3"]) == 0
    out = capsys.readouterr().out
    assert "p2.parquet: rows 0-1,999" in out and "note: n != 3" in out
    assert main(["index", "status", idx]) == 0
    assert "coverage 100.0% of 3 files" in capsys.readouterr().out


def test_errors_exit_2_with_the_reason(tmp_path, capsys):
    assert main(["index", "query", str(tmp_path / "none"), "a = 1"]) == 2
    assert "no zone index here" in capsys.readouterr().err
    lake = _lake(tmp_path)
    assert main(["index", "build", str(lake), str(tmp_path / "i"), "-c", "zz"]) == 2
    assert "no column 'zz'" in capsys.readouterr().err
    assert main(["index", "build", str(lake), str(tmp_path / "i"), "-c", "id"]) == 0
    capsys.readouterr()
    assert main(["index", "query", str(tmp_path / "i"), "id = = 1"]) == 2
    assert capsys.readouterr().err.startswith("bloomskip: error:")
