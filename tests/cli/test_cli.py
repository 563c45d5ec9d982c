"""The ``bloomskip`` command line."""

from __future__ import annotations

import json
import subprocess
import sys

import xxhash

from bloomskip.cli import main


def test_help_lists_commands(capsys):
    try:
        main(["--help"])
    except SystemExit as e:
        assert e.code == 0
    out = capsys.readouterr().out
    for cmd in ("demo", "size", "hash"):
        assert cmd in out


def test_size_json(capsys):
    assert main(["size", "--ndv", "1e6", "--fpp", "0.001", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    sizes = {r["policy"]: r["bytes"] for r in got["sizes"]}
    assert sizes == {"parquet": 2 * 1024 * 1024, "putze": 4 * 1024 * 1024}


def test_hash_widens_int16_to_int32(capsys):
    assert main(["hash", "--type", "int16", "7"]) == 0
    value, physical, h, _ = capsys.readouterr().out.split()
    assert (value, physical) == ("7", "INT32")
    assert int(h) == xxhash.xxh64_intdigest((7).to_bytes(4, "little"))


def test_bad_input_is_a_clear_error_and_exit_2(capsys):
    assert main(["size", "--ndv", "10", "--fpp", "1.5"]) == 2
    assert "strictly between 0 and 1" in capsys.readouterr().err


def test_demo_runs_as_a_console_script():
    # The Spark job itself runs end to end in tests/spark/test_demo.py on the shared session;
    # here: its help teaches, and the Spark-free filter demo runs in a fresh process.
    def run(*args: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", "bloomskip.cli", "demo", *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        ).stdout

    help_text = run("--help")
    for word in ("spark scan", "native bloom", "plan_read", "--dir", "--fresh", "--json"):
        assert word in help_text
    out = run("--sbbf", "--n", "2e4")
    assert "inserted keys found" in out and "definitely absent" in out


def test_inspect_reads_orc_files_too(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.orc as po

    path = tmp_path / "t.orc"
    t = pa.table({"id": [f"u{i}" for i in range(25_000)], "n": list(range(25_000))})
    po.write_table(t, path, bloom_filter_columns=[1])  # ORC column ids: 0 is the root
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "25,000 rows in 1 stripes, 3 row groups of 10,000" in out
    assert out.count("BLOOM_FILTER_UTF8") == 3
    assert main(["inspect", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["format"] == "orc" and len(report["row_groups"]) == 3


def test_prune_and_probe_read_orc_files(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.orc as po

    path = tmp_path / "t.orc"
    t = pa.table({"id": [f"u{i}" for i in range(25_000)], "n": list(range(25_000))})
    po.write_table(t, path, bloom_filter_columns=[1, 2])
    assert main(["prune", str(path), "--where", "id = 'u15000x' OR n = 3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"file", "units"}
    assert [(u["first_row"], u["num_rows"]) for u in out["units"]] == [
        (0, 10_000),
        (10_000, 10_000),
        (20_000, 5_000),
    ]
    assert [u["may_match"] for u in out["units"]] == [True, False, False]
    assert main(["probe", str(path), "-c", "n", "15000", "--json"]) == 0
    probe = json.loads(capsys.readouterr().out)
    assert [u["result"] for u in probe["row_groups"]] == ["absent", "maybe", "absent"]
