"""The ``bloomskip`` command line."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import struct
import subprocess
import sys
import uuid

import mmh3
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import xxhash

from bloomskip import Sbbf
from bloomskip.cli import main
from bloomskip.sbbf.sizing import num_bytes_for
from tests.support.peers import read_bloom_filters


def test_help_lists_commands(capsys):
    try:
        main(["--help"])
    except SystemExit as e:
        assert e.code == 0
    out = capsys.readouterr().out
    for cmd in ("demo", "size", "hash"):
        assert cmd in out


def test_python_dash_m_bloomskip_is_the_command():
    out = subprocess.run(
        [sys.executable, "-m", "bloomskip", "size", "--ndv", "1000", "--fpp", "0.01", "--json"],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout  # fmt: skip
    assert json.loads(out)["sizes"]


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


def test_size_shows_blocks_as_arrow_rs_does(capsys):
    # arrow-rs's sizing table: 1,000,000 values at 0.01 -> b = 65,536 blocks, 2,048 KB.
    assert main(["size", "--ndv", "1e6", "--fpp", "0.01", "--json"]) == 0
    parquet = json.loads(capsys.readouterr().out)["sizes"][0]
    assert (parquet["policy"], parquet["bytes"], parquet["blocks"]) == ("parquet", 2 << 20, 65536)
    assert main(["size", "--ndv", "1e6", "--fpp", "0.01"]) == 0
    assert "2,097,152 B     65,536 blocks" in capsys.readouterr().out


def _hash_line(capsys, *argv: str) -> tuple[str, int]:
    assert main(["hash", *argv]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1
    _, physical, h, hexa = lines[0].split("\t")
    assert int(hexa, 16) == int(h)
    return physical, int(h)


# (hash arguments, Arrow type, Python value, PLAIN bytes an independent statement gives)
_TYPED = [
    (("--type", "timestamp", "--unit", "ms", "2024-01-31T12:00:00.250Z"),
     "INT64", struct.pack("<q", 1706702400250)),
    (("--type", "timestamp", "--unit", "us", "2024-01-31T14:00:00.25+02:00"),
     "INT64", struct.pack("<q", 1706702400250000)),
    (("--type", "timestamp", "--unit", "s", "1969-12-31T23:59:59"),
     "INT64", struct.pack("<q", -1000)),  # Parquet has no seconds: milliseconds
    (("--type", "timestamp", "--unit", "ns", "--physical", "INT96", "2024-01-31T12:00:00.5"),
     "INT96", struct.pack("<qi", 43_200_500_000_000, 2_460_341)),
    (("--type", "time", "--unit", "ms", "12:00:00.5"), "INT32", struct.pack("<i", 43_200_500)),
    (("--type", "time", "--unit", "ns", "00:00:00.000000001"), "INT64", struct.pack("<q", 1)),
    (("--type", "decimal", "--precision", "10", "--scale", "2", "-12.5"),
     "INT64", struct.pack("<q", -1250)),
    (("--type", "decimal", "--precision", "5", "--scale", "2", "--physical", "FLBA", "1.25"),
     "FIXED_LEN_BYTE_ARRAY(3)", (125).to_bytes(3, "big")),
    (("--type", "decimal", "--precision", "4", "--physical", "FIXED_LEN_BYTE_ARRAY:16", "-1"),
     "FIXED_LEN_BYTE_ARRAY(16)", b"\xff" * 16),
    (("--type", "decimal", "--precision", "40", "--scale", "0", "1"),
     "FIXED_LEN_BYTE_ARRAY(17)", (1).to_bytes(17, "big")),
    (("--type", "uuid", "12345678-1234-5678-1234-567812345678"),
     "FIXED_LEN_BYTE_ARRAY(16)", bytes.fromhex("12345678123456781234567812345678")),
    (("--type", "float16", "1.5"), "FIXED_LEN_BYTE_ARRAY(2)", b"\x00\x3e"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "physical", "plain"), _TYPED)
def test_hash_every_type_write_table_hashes(capsys, argv, physical, plain):
    got_physical, h = _hash_line(capsys, *argv)
    assert got_physical == physical
    assert h == xxhash.xxh64_intdigest(plain)


def test_hash_the_draft_hash(capsys):
    _, h = _hash_line(capsys, "--hash", "murmur3_x64_128", "hello")
    assert h == mmh3.hash64(b"hello", 1361930890, signed=False)[0]
    _, h = _hash_line(capsys, "--hash", "murmur3_x64_128", "--type", "int64", "7")
    assert h == mmh3.hash64(struct.pack("<q", 7), 1361930890, signed=False)[0]


def test_hash_agrees_with_pyarrows_filters(tmp_path, capsys):
    """pyarrow writes a one-value filter per column: each is the 32 B filter of the one
    hash ``bloomskip hash`` prints for that value (INT96 and float16 included)."""
    table = pa.table(
        {
            "ts": pa.array([dt.datetime(2024, 1, 31, 12, 0, 0, 250000)], pa.timestamp("ms")),
            "dec": pa.array([decimal.Decimal("1.25")], pa.decimal128(5, 2)),
            "uid": pa.array([uuid.UUID(int=0x12345678).bytes], pa.binary(16)),
            "tm": pa.array([dt.time(12, 0, 0, 500000)], pa.time32("ms")),
            "int96": pa.array([dt.datetime(2024, 1, 31, 12)], pa.timestamp("ns")),
            "f16": pa.array([np.float16(-2.5)], pa.float16()),
        }
    )
    options = {c: {"ndv": 1, "fpp": 0.01} for c in table.column_names}
    filters = {}
    for int96 in (False, True):  # INT96 applies to every timestamp column of a file
        path = tmp_path / f"t{int96}.parquet"
        columns = ["int96"] if int96 else [c for c in table.column_names if c != "int96"]
        pq.write_table(
            table.select(columns),
            path,
            bloom_filter_options={c: options[c] for c in columns},
            use_deprecated_int96_timestamps=int96,
        )
        filters.update({ff.name: ff for ff in read_bloom_filters(path)})
    args = {
        "ts": ("--type", "timestamp", "--unit", "ms", "2024-01-31T12:00:00.25"),
        "dec": ("--type", "decimal", "--precision", "5", "--scale", "2", "--physical", "FLBA",
                "1.25"),
        "uid": ("--type", "uuid", str(uuid.UUID(int=0x12345678))),
        "tm": ("--type", "time", "--unit", "ms", "12:00:00.5"),
        "int96": ("--type", "timestamp", "--unit", "ns", "--physical", "INT96",
                  "2024-01-31T12:00:00"),
        "f16": ("--type", "float16", "-2.5"),
    }  # fmt: skip
    assert sorted(filters) == sorted(args)
    for name, argv in args.items():
        _, h = _hash_line(capsys, *argv)
        one = Sbbf(filters[name].header.num_bytes)
        one.insert_hashes([h])
        assert one.to_bytes() == filters[name].bitset, name


def test_add_bloom_policy_and_ndv_auto(tmp_path, capsys):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"k": [f"k{i}" for i in range(3000)]}), path, row_group_size=1000)
    assert main(["add-bloom", str(path), str(tmp_path / "a.parquet"), "--json"]) == 0
    exact = json.loads(capsys.readouterr().out)["added"]
    assert {(f["ndv"], f["num_bytes"], f["folded_from"]) for f in exact} == {(1000, 2048, None)}
    argv = ["add-bloom", str(path), str(tmp_path / "b.parquet"), "--fpp", "0.001"]
    assert main([*argv, "--policy", "putze", "--json"]) == 0
    putze = json.loads(capsys.readouterr().out)["added"]
    assert {f["num_bytes"] for f in putze} == {4096} != {num_bytes_for(1000, 0.001)}
    argv = ["add-bloom", str(path), str(tmp_path / "c.parquet"), "--ndv", "auto", "--fpp", "0.05"]
    assert main([*argv, "--json"]) == 0
    folded = json.loads(capsys.readouterr().out)["added"]
    assert {f["folded_from"] for f in folded} == {num_bytes_for(1000, 0.05)}
    assert all(abs(f["ndv"] - 1000) < 30 for f in folded)  # estimated from the fill
    assert main(argv) == 0
    assert "~" in capsys.readouterr().out  # the human summary marks estimates
    assert main(["add-bloom", str(path), "--ndv", "1e6", "--json"]) == 0  # in place
    assert {f["folded_from"] for f in json.loads(capsys.readouterr().out)["added"]} == {2 << 20}


def test_a_first_run_says_kernels_are_compiling(tmp_path, monkeypatch, capsys):
    """Found (new-user walkthrough): the first ``prune`` on a machine sat silent for 11 s
    while numba compiled. On a terminal, with no kernel cached where numba looks, the
    commands that run kernels say so first; a command that runs none, or output that is
    not a terminal, says nothing."""
    import bloomskip.cli as cli
    from bloomskip.cli.common import kernels_cached

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    assert not kernels_cached()
    folder = tmp_path / "cache" / "sbbf_0123456789abcdef"  # numba's <folder>_<sha1> there
    folder.mkdir(parents=True)
    (folder / "kernels.insert-1.py311.nbi").write_bytes(b"")
    assert kernels_cached()
    monkeypatch.setattr(cli, "kernels_cached", lambda: False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    for argv, said in [(["hash", "5"], False), (["index", "status", str(tmp_path)], True)]:
        cli.main(argv)
        assert ("compiling its kernels" in capsys.readouterr().err) == said, argv


def test_small_command_line_mistakes_get_a_way_out(tmp_path, capsys):
    """Found (new-user walkthrough): an unquoted predicate, an unclosed string, a Parquet
    file cut short, ``hash --json`` and ``demo --sbbf --json`` (ignored), ``--version``."""
    from bloomskip.cli import main

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"k": [1, 2, 3]}), path)
    assert main(["prune", str(path), "-w", "k", "=", "5"]) == 2
    assert "quote it whole" in capsys.readouterr().err
    assert main(["prune", str(path), "-w", "k = 'abc"]) == 2
    assert "closing quote is missing" in capsys.readouterr().err
    path.write_bytes(path.read_bytes()[:-3])
    assert main(["prune", str(path), "-w", "k = 1"]) == 2
    assert "ends without its footer" in capsys.readouterr().err
    assert main(["hash", "--type", "int64", "--json", "5"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["physical"] == "INT64" and got["hashes"][0]["value"] == "5"
    assert main(["demo", "--sbbf", "--json"]) == 2
    assert "--json is the Spark demo's" in capsys.readouterr().err
    assert main(["--version"]) == 0 and capsys.readouterr().out.startswith("bloomskip ")


def test_zone_reads_timestamp_literals_as_a_sessions_wall_clock(tmp_path, capsys):
    """``--zone`` on ``prune`` and ``index query``: TIMESTAMP '2024-01-01 10:00:00' in a
    New York session is 15:00 UTC. Without it the literal is read in UTC (and this
    machine's zone), which rules that row group out; an unknown zone is an error."""
    lake = tmp_path / "lake"
    lake.mkdir()
    days = [dt.datetime(2024, 1, d, 15, tzinfo=dt.UTC) for d in (1, 2)]
    ts = pa.array([days[0]] * 1000 + [days[1]] * 1000, pa.timestamp("us", tz="UTC"))
    path = lake / "a.parquet"
    pq.write_table(pa.table({"ts": ts, "k": range(2000)}), path, row_group_size=1000)
    where = "ts = TIMESTAMP '2024-01-01 10:00:00'"

    def prune(*extra: str) -> list[bool]:
        assert main(["prune", str(path), "-w", where, "--json", *extra]) == 0
        return [u["may_match"] for u in json.loads(capsys.readouterr().out)["units"]]

    assert prune("--zone", "America/New_York") == [True, False]
    assert prune("--zone=-05:00") == [True, False]  # argparse: a leading "-" needs "="
    assert prune("--zone", "UTC") == [False, False]
    idx = tmp_path / "lake.idx"
    assert main(["index", "build", str(lake), str(idx), "-c", "ts", "--zone-rows", "1000"]) == 0
    capsys.readouterr()

    def query(*extra: str) -> int:
        assert main(["index", "query", str(idx), where, "--json", *extra]) == 0
        return len(json.loads(capsys.readouterr().out)["files"])

    assert query("--zone", "America/New_York") == 1
    assert query("--zone", "Asia/Tokyo") == 0
    for argv in (["prune", str(path), "-w", where], ["index", "query", str(idx), where]):
        assert main([*argv, "--zone", "America/NewYork"]) == 2
        assert "not a time zone: 'America/NewYork'" in capsys.readouterr().err
