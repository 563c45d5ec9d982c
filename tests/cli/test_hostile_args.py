"""Hostile command-line arguments (issue 17, "Tracebacks and hangs").

Every command and index action gets a table of bad arguments - empty strings, NaN, inf,
negative and huge numbers, non-UTF-8 bytes, FIFOs, sockets, devices and directories where
files are meant, missing paths, nonsense SQL, bad values per type - and must answer with
one line ``bloomskip: error: ...`` and exit 2: never a traceback, never a hang. Cases
that could block (FIFOs, Ctrl-C) run in a subprocess with a timeout; the rest in process
through ``main([...])``, where any exception that escapes fails the test with its
traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

from bloomskip import index
from bloomskip.cli import main
from bloomskip.index import integrity, tables
from bloomskip.parquet.write import add_bloom_filters

DEEP = "(" * 3000 + "n = 1" + ")" * 3000
NOTS = "NOT " * 3000 + "n = 1"
HUGE = "9" * 5000


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Iterator[dict[str, str]]:
    """Good files to aim bad options at, and bad paths of every kind."""
    root = Path(tempfile.mkdtemp(prefix="bs-hostile-"))  # short: a socket path has <108 B
    d = tmp_path_factory.mktemp("hostile")
    t = pa.table({"id": [f"u{i}" for i in range(3000)], "n": list(range(3000))})
    pq.write_table(t, d / "a.parquet", row_group_size=1000)
    add_bloom_filters(d / "a.parquet", None, ["id", "n"])
    po.write_table(t, d / "a.orc", bloom_filter_columns=[1, 2])
    (d / "lake").mkdir()
    pq.write_table(t, d / "lake" / "p.parquet")
    index.build(d / "lake", ["id"], d / "idx", progress=False)
    _damaged_indexes(d)
    os.mkfifo(d / "fifo")
    (d / "dir").mkdir()
    (d / "empty.parquet").write_bytes(b"")
    (d / "junk.parquet").write_bytes(b"PAR1" + b"x" * 100)
    (d / "keys-array.json").write_text("[1, 2]")
    (d / "keys-types.json").write_text('{"footer_key": 5}')
    (d / "keys-hex.json").write_text('{"column_keys": {"id": "zz"}}')
    (d / "keys-big.json").write_text('{"aad_prefix": "' + "x" * (2 << 20) + '"}')
    (d / "keys-bad.json").write_text("{not json")
    nonutf8 = os.fsdecode(os.fsencode(str(d)) + b"/\xff\xfe.parquet")
    Path(nonutf8).write_bytes((d / "a.parquet").read_bytes())
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(root / "sock"))
    paths = {
        "parquet": d / "a.parquet",
        "orc": d / "a.orc",
        "lake": d / "lake",
        "index": d / "idx",
        "fifo": d / "fifo",
        "dir": d / "dir",
        "missing": d / "missing.parquet",
        "empty": d / "empty.parquet",
        "junk": d / "junk.parquet",
        "sock": root / "sock",
        "nodir": d / "no" / "such" / "dir.parquet",
        "newfile": d / "new.parquet",
        "newindex": d / "new.idx",
        "damaged": d / "damaged.idx",
        "linked": d / "linked.idx",
        "forged": d / "forged.idx",
        "tables": d / "tables.idx",
    }
    out = {k: str(v) for k, v in paths.items()}
    for kind in ("array", "types", "hex", "big", "bad"):
        out[f"keys-{kind}"] = str(d / f"keys-{kind}.json")
    out["nonutf8"] = nonutf8
    yield out
    sock.close()
    shutil.rmtree(root, ignore_errors=True)


def _damaged_indexes(d: Path) -> None:
    """Copies of the index: a slab zeroed, the manifest a link, a forged source, and the
    fragment table replaced by another's bytes (issue 17: the index's own files are
    untrusted too)."""
    m = index.open(d / "idx").manifest
    seg = m.columns["id"].segments[0]
    for name in ("damaged", "linked", "forged", "tables"):
        shutil.copytree(d / "idx", d / f"{name}.idx")
    slab = d / "damaged.idx" / seg.slabs[0]
    slab.write_bytes(bytes(slab.stat().st_size))
    manifest = d / "linked.idx" / "_manifests" / "v00000000000000000001.json"
    os.rename(manifest, d / "elsewhere.json")
    os.symlink(d / "elsewhere.json", manifest)
    forged = d / "forged.idx" / "_manifests" / "v00000000000000000001.json"
    doc = json.loads(forged.read_text())
    doc["source"]["paths"] = [True]
    doc["checksum"] = integrity.json_checksum(doc)
    forged.write_text(json.dumps(doc))
    table = d / "tables.idx" / m.fragments  # another table's bytes (checksums its own)
    other = tables.encode(pq.read_table(table), "fragments/" + "0" * 32 + ".parquet")
    table.write_bytes(other.to_pybytes())


def _argv(template: tuple[str, ...], world: dict[str, str]) -> list[str]:
    return [a.format(**world) if "{" in a else a for a in template]


BUILD = ("index", "build", "{lake}", "{newindex}", "-c", "id")

# (id, argv with {placeholders}, a word the one-line error must hold); all exit 2
REFUSED: list[tuple[str, tuple[str, ...], str]] = [
    # size
    ("size-fpp-tiny", ("size", "--ndv", "1e6", "--fpp", "1e-128"), "1e-100"),
    ("size-fpp-near-1", ("size", "--ndv", "1e6", "--fpp", "0.9999999999999999"), "0.999999"),
    ("size-fpp-nan", ("size", "--ndv", "10", "--fpp", "nan"), "fpp"),
    ("size-fpp-inf", ("size", "--ndv", "10", "--fpp", "inf"), "fpp"),
    ("size-fpp-empty", ("size", "--ndv", "10", "--fpp", ""), "number"),
    ("size-fpp-negative", ("size", "--ndv", "10", "--fpp", "-0.1"), "strictly between"),
    ("size-ndv-text", ("size", "--ndv", "abc"), "not a distinct count"),
    ("size-ndv-empty", ("size", "--ndv", ""), "not a distinct count"),
    ("size-ndv-nan", ("size", "--ndv", "nan"), "not a distinct count"),
    ("size-ndv-inf", ("size", "--ndv", "inf"), "not a distinct count"),
    ("size-ndv-negative", ("size", "--ndv", "-5"), "from 0"),
    ("size-ndv-fraction", ("size", "--ndv", "1.5"), "whole number"),
    ("size-ndv-huge", ("size", "--ndv", "1e400"), "from 0"),
    ("size-ndv-exponent", ("size", "--ndv", "1e999999999999"), "from 0"),
    ("size-ndv-digits", ("size", "--ndv", HUGE), "from 0"),
    # hash
    ("hash-int8-range", ("hash", "--type", "int8", "300"), "out of range"),
    ("hash-uint64-negative", ("hash", "--type", "uint64", "-1"), "out of range"),
    ("hash-int-text", ("hash", "--type", "int32", "x"), "not an integer"),
    ("hash-int-huge", ("hash", "--type", "int64", HUGE), "integer"),
    ("hash-float32-range", ("hash", "--type", "float", "1e300"), "out of range"),
    ("hash-double-text", ("hash", "--type", "double", "one"), "not a number"),
    ("hash-date", ("hash", "--type", "date", "x"), "not a date"),
    ("hash-date-range", ("hash", "--type", "date", "2024-13-45"), "not a date"),
    ("hash-binary", ("hash", "--type", "binary", "zz"), "hexadecimal"),
    ("hash-bool-maybe", ("hash", "--type", "bool", "maybe"), "not a boolean"),
    ("hash-bool-empty", ("hash", "--type", "bool", ""), "not a boolean"),
    ("hash-string-nonutf8", ("hash", "a\udcff"), "UTF-8"),
    ("hash-type", ("hash", "--type", "int128", "1"), "invalid choice"),
    ("hash-hash", ("hash", "--hash", "md5", "x"), "invalid choice"),
    ("hash-unit", ("hash", "--type", "timestamp", "--unit", "min", "2024-01-01"), "choice"),
    ("hash-unit-int", ("hash", "--type", "int32", "--unit", "ms", "1"), "timestamp and time"),
    ("hash-ts-text", ("hash", "--type", "timestamp", "noon"), "not a timestamp"),
    ("hash-ts-date", ("hash", "--type", "timestamp", "2024-02-30"), "not a date"),
    ("hash-ts-hour", ("hash", "--type", "timestamp", "2024-01-01T24:00"), "out of range"),
    ("hash-ts-offset", ("hash", "--type", "timestamp", "2024-01-01T00:00+25:00"), "offset"),
    (
        "hash-ts-finer",
        ("hash", "--type", "timestamp", "--unit", "s", "2024-01-01T00:00:00.5"),
        "finer than the unit s",
    ),
    (
        "hash-ts-overflow",
        ("hash", "--type", "timestamp", "--unit", "ns", "9999-12-31"),
        "out of range",
    ),
    ("hash-time-text", ("hash", "--type", "time", "25:00"), "not a time of day"),
    ("hash-time-finer", ("hash", "--type", "time", "--unit", "ms", "00:00:00.0001"), "finer"),
    ("hash-decimal-nop", ("hash", "--type", "decimal", "1.5"), "needs --precision"),
    (
        "hash-decimal-digits",
        ("hash", "--type", "decimal", "--precision", "5", "--scale", "1", "1.25"),
        "more than 1 digits",
    ),
    ("hash-decimal-fit", ("hash", "--type", "decimal", "--precision", "3", "1000"), "does not fit"),
    (
        "hash-decimal-huge",
        ("hash", "--type", "decimal", "--precision", "3", "1e999999999"),
        "does not fit",
    ),
    ("hash-decimal-nan", ("hash", "--type", "decimal", "--precision", "3", "nan"), "decimal"),
    ("hash-decimal-text", ("hash", "--type", "decimal", "--precision", "3", "x"), "decimal"),
    ("hash-precision-0", ("hash", "--type", "decimal", "--precision", "0", "1"), "precision"),
    ("hash-precision-big", ("hash", "--type", "decimal", "--precision", "77", "1"), "precision"),
    (
        "hash-scale-big",
        ("hash", "--type", "decimal", "--precision", "3", "--scale", "4", "1"),
        "larger than --precision",
    ),
    ("hash-scale-int", ("hash", "--type", "int64", "--scale", "2", "1"), "apply to decimal"),
    ("hash-uuid", ("hash", "--type", "uuid", "1234"), "not a UUID"),
    ("hash-float16-range", ("hash", "--type", "float16", "1e5"), "out of range for float16"),
    ("hash-physical", ("hash", "--physical", "INT33", "x"), "physical type"),
    ("hash-physical-length", ("hash", "--physical", "INT32:4", "x"), "takes a length"),
    ("hash-physical-flba-0", ("hash", "--physical", "FLBA:0", "x"), "length"),
    ("hash-physical-mismatch", ("hash", "--physical", "INT96", "x"), "cannot hash"),
    (
        "hash-physical-flba-int",
        ("hash", "--type", "int8", "--physical", "FLBA", "1"),
        "give the length",
    ),
    (
        "hash-physical-arrow",
        ("hash", "--physical", "INT64", "--encoding", "arrow", "1"),
        "--encoding parquet",
    ),
    (
        "hash-arrow-decimal",
        ("hash", "--type", "decimal", "--precision", "3", "--encoding", "arrow", "1"),
        "no rule",
    ),
    # inspect (paths, and the key options shared with probe, prune and add-bloom)
    ("inspect-dir", ("inspect", "{dir}"), "not a Lance dataset"),
    ("inspect-missing", ("inspect", "{missing}"), "missing.parquet"),
    ("inspect-empty-path", ("inspect", ""), "empty"),
    ("inspect-socket", ("inspect", "{sock}"), "socket"),
    ("inspect-device", ("inspect", "/dev/null"), "character device"),
    ("inspect-empty-file", ("inspect", "{empty}"), "0 bytes"),
    ("inspect-junk", ("inspect", "{junk}"), "junk.parquet"),
    ("inspect-nul", ("inspect", "a\0b"), "NUL"),
    ("keys-footer-hex", ("inspect", "{parquet}", "--footer-key", "zz"), "hexadecimal"),
    ("keys-footer-length", ("inspect", "{parquet}", "--footer-key", "00ff"), "16, 24 or 32"),
    ("keys-column-form", ("inspect", "{parquet}", "--column-key", "id"), "COLUMN=HEX"),
    ("keys-column-empty", ("inspect", "{parquet}", "--column-key", "=00"), "COLUMN=HEX"),
    ("keys-master-base64", ("inspect", "{parquet}", "--master-key", "k=!!"), "base64"),
    ("keys-master-length", ("inspect", "{parquet}", "--master-key", "k=AAAA"), "16, 24 or 32"),
    ("keys-aad-nonutf8", ("inspect", "{parquet}", "--aad-prefix", "\udcff"), "UTF-8"),
    ("keys-file-missing", ("inspect", "{parquet}", "--keys", "{missing}"), "missing.parquet"),
    ("keys-file-dir", ("inspect", "{parquet}", "--keys", "{dir}"), "directory"),
    ("keys-file-array", ("inspect", "{parquet}", "--keys", "{keys-array}"), "JSON object"),
    ("keys-file-types", ("inspect", "{parquet}", "--keys", "{keys-types}"), "string"),
    ("keys-file-hex", ("inspect", "{parquet}", "--keys", "{keys-hex}"), "hexadecimal"),
    ("keys-file-big", ("inspect", "{parquet}", "--keys", "{keys-big}"), "at most"),
    ("keys-file-bad", ("inspect", "{parquet}", "--keys", "{keys-bad}"), "not JSON"),
    # probe
    ("probe-dir", ("probe", "{dir}", "-c", "n", "1"), "directory"),
    ("probe-missing", ("probe", "{missing}", "-c", "n", "1"), "missing.parquet"),
    ("probe-column-empty", ("probe", "{parquet}", "-c", "", "1"), "empty"),
    ("probe-column-unknown", ("probe", "{parquet}", "-c", "nope", "1"), "no column 'nope'"),
    ("probe-value-nonutf8", ("probe", "{parquet}", "-c", "id", "\udcff"), "UTF-8"),
    ("probe-orc-column", ("probe", "{orc}", "-c", "zz", "1"), "zz"),
    ("probe-junk", ("probe", "{junk}", "-c", "n", "1"), "junk.parquet"),
    # prune
    ("prune-sql-empty", ("prune", "{parquet}", "-w", ""), "empty"),
    ("prune-sql-blank", ("prune", "{parquet}", "-w", "   "), "empty"),
    ("prune-sql-nonsense", ("prune", "{parquet}", "-w", "n = = 1"), "cannot parse"),
    ("prune-sql-garbage", ("prune", "{parquet}", "-w", ";;; DROP TABLE x"), "predicate"),
    ("prune-sql-deep", ("prune", "{parquet}", "-w", DEEP), "nested too deeply"),
    ("prune-sql-nots", ("prune", "{parquet}", "-w", NOTS), "nested too deeply"),
    ("prune-sql-nonutf8", ("prune", "{parquet}", "-w", "\udcff = 1"), "UTF-8"),
    ("prune-sql-column", ("prune", "{parquet}", "-w", "nope = 1"), "no column"),
    ("prune-orc-sql", ("prune", "{orc}", "-w", "n = = 1"), "cannot parse"),
    ("prune-stages", ("prune", "{parquet}", "-w", "n = 1", "--stages", "x"), "stage"),
    ("prune-stages-empty", ("prune", "{parquet}", "-w", "n = 1", "--stages", ""), "stage"),
    ("prune-socket", ("prune", "{sock}", "-w", "n = 1"), "socket"),
    ("prune-empty-file", ("prune", "{empty}", "-w", "n = 1"), "0 bytes"),
    # add-bloom
    ("add-fpp-tiny", ("add-bloom", "{parquet}", "{newfile}", "--fpp", "1e-128"), "fpp"),
    ("add-fpp-near-1", ("add-bloom", "{parquet}", "{newfile}", "--fpp", "0.99999999"), "fpp"),
    ("add-fpp-nan", ("add-bloom", "{parquet}", "{newfile}", "--fpp", "nan"), "fpp"),
    ("add-dst-dir", ("add-bloom", "{parquet}", "{dir}"), "directory"),
    ("add-dst-nodir", ("add-bloom", "{parquet}", "{nodir}"), "does not exist"),
    ("add-dst-socket", ("add-bloom", "{parquet}", "{sock}"), "socket"),
    ("add-src-dir", ("add-bloom", "{dir}"), "directory"),
    ("add-orc-policy", ("add-bloom", "{orc}", "{newfile}", "--policy", "putze"), "Parquet files"),
    ("add-orc-column", ("add-bloom", "{orc}", "{newfile}", "-c", "zz"), "no column 'zz'"),
    ("add-column", ("add-bloom", "{parquet}", "{newfile}", "-c", "nope"), "no column 'nope'"),
    ("add-column-empty", ("add-bloom", "{parquet}", "{newfile}", "-c", ""), "empty"),
    ("add-policy", ("add-bloom", "{parquet}", "{newfile}", "--policy", "lance"), "choice"),
    ("add-ndv-text", ("add-bloom", "{parquet}", "{newfile}", "--ndv", "many"), "'auto'"),
    ("add-ndv-negative", ("add-bloom", "{parquet}", "{newfile}", "--ndv", "-1"), "from 0"),
    ("add-ndv-nan", ("add-bloom", "{parquet}", "{newfile}", "--ndv", "nan"), "distinct count"),
    ("add-ndv-huge", ("add-bloom", "{parquet}", "{newfile}", "--ndv", "1e400"), "from 0"),
    # index build / refresh / query / status / vacuum
    ("build-source-missing", ("index", "build", "{missing}", "{newindex}", "-c", "id"), "missing"),
    ("build-source-socket", ("index", "build", "{sock}", "{newindex}", "-c", "id"), "socket"),
    ("build-index-file", ("index", "build", "{lake}", "{parquet}", "-c", "id"), "a file"),
    ("build-index-uri", ("index", "build", "{lake}", "ftp://b/x", "-c", "id"), "not a store"),
    ("build-empty-dir", ("index", "build", "{dir}", "{newindex}", "-c", "id"), "no readable"),
    ("build-fpp-tiny", (*BUILD, "--fpp", "1e-300"), "fpp"),
    ("build-fpp-one", (*BUILD, "--fpp", "1"), "fpp"),
    ("build-threads-0", (*BUILD, "--threads", "0"), "thread count"),
    ("build-threads-neg", (*BUILD, "--threads", "-4"), "thread count"),
    ("build-threads-nan", (*BUILD, "--threads", "nan"), "thread count"),
    ("build-zone-rows-0", (*BUILD, "--zone-rows", "0"), "zone row count"),
    ("build-zone-rows-huge", (*BUILD, "--zone-rows", "1e12"), "zone row count"),
    ("build-column", (*BUILD[:-1], "nope"), "no column 'nope'"),
    ("build-column-twice", (*BUILD, "-c", "id"), "distinct"),
    ("build-spark-master", (*BUILD, "--spark", "foo"), "Spark master"),
    ("build-spark-empty", (*BUILD, "--spark", ""), "Spark master"),
    ("build-sizing", (*BUILD, "--sizing", "lance"), "invalid choice"),
    ("refresh-missing", ("index", "refresh", "{missing}"), "no zone index"),
    ("refresh-dir", ("index", "refresh", "{dir}"), "no zone index"),
    ("refresh-threads", ("index", "refresh", "{index}", "--threads", "-1"), "thread"),
    ("refresh-spark", ("index", "refresh", "{index}", "--spark", "local[0]"), "master"),
    ("query-missing", ("index", "query", "{missing}", "id = 'a'"), "no zone index"),
    ("query-dir", ("index", "query", "{dir}", "id = 'a'"), "no zone index"),
    ("query-file", ("index", "query", "{parquet}", "id = 'a'"), "no zone index"),
    ("query-socket", ("index", "query", "{sock}", "id = 'a'"), "socket"),
    ("query-sql-empty", ("index", "query", "{index}", ""), "empty"),
    ("query-sql-nonsense", ("index", "query", "{index}", "id = = 1"), "cannot parse"),
    ("query-sql-deep", ("index", "query", "{index}", DEEP), "nested too deeply"),
    ("query-sql-column", ("index", "query", "{index}", "nope = 1"), "no column"),
    (
        "query-max-in-fpp",
        ("index", "query", "{index}", "id = 'a'", "--max-in-fpp", "2"),
        "probability",
    ),
    (
        "query-max-in-fpp-nan",
        ("index", "query", "{index}", "id = 'a'", "--max-in-fpp", "nan"),
        "finite",
    ),
    ("status-missing", ("index", "status", "{missing}"), "no zone index"),
    ("status-dir", ("index", "status", "{dir}"), "no zone index"),
    ("vacuum-missing", ("index", "vacuum", "{missing}"), "no zone index"),
    ("vacuum-dir", ("index", "vacuum", "{dir}"), "no zone index"),
    ("vacuum-keep-0", ("index", "vacuum", "{index}", "--keep", "0"), "version count"),
    ("vacuum-keep-neg", ("index", "vacuum", "{index}", "--keep", "-1"), "version count"),
    ("vacuum-keep-text", ("index", "vacuum", "{index}", "--keep", "five"), "version count"),
    ("build-zone-rows-text", (*BUILD, "--zone-rows", "lots"), "zone row count"),
    # an index whose own files are damaged or forged (issue 17)
    ("query-damaged-slab", ("index", "query", "{damaged}", "id = 'u1'"), "checksum"),
    (
        "query-damaged-lean",
        ("index", "query", "{damaged}", "id = 'u1'", "--no-source-check"),
        "checksum",
    ),
    ("query-linked-manifest", ("index", "query", "{linked}", "id = 'u1'"), "not a regular"),
    ("status-linked-manifest", ("index", "status", "{linked}"), "not a regular file"),
    ("refresh-linked-manifest", ("index", "refresh", "{linked}"), "not a regular file"),
    ("vacuum-linked-manifest", ("index", "vacuum", "{linked}", "--keep", "1"), "not a regular"),
    ("query-forged-source", ("index", "query", "{forged}", "id = 'u1'"), "source is malformed"),
    ("refresh-forged-source", ("index", "refresh", "{forged}"), "source is malformed"),
    ("status-damaged-table", ("index", "status", "{tables}"), "fails its checksum"),
    ("index-action", ("index", "drop", "{index}"), "invalid choice"),
    # demo: refused before any lake is generated or Spark started
    ("demo-files-0", ("demo", "--files", "0"), "file count"),
    ("demo-rows-inf", ("demo", "--rows", "inf"), "row count"),
    ("demo-rows-per-file", ("demo", "--rows", "1e9", "--files", "1"), "more files"),
    ("demo-row-group-0", ("demo", "--row-group", "0"), "row count"),
    ("demo-repeat-0", ("demo", "--repeat", "0"), "repeat count"),
    ("demo-dir-file", ("demo", "--dir", "{parquet}"), "not a directory"),
    ("demo-sbbf-n", ("demo", "--sbbf", "--n", "1e12"), "key count"),
    ("demo-sbbf-n-nan", ("demo", "--sbbf", "--n", "nan"), "key count"),
    ("demo-sbbf-fpp", ("demo", "--sbbf", "--fpp", "1e-300"), "fpp"),
    # the top level
    ("no-command", (), "required"),
    ("unknown-command", ("frobnicate",), "invalid choice"),
    ("unknown-option", ("size", "--ndv", "1", "--bogus"), "unrecognized"),
]


@pytest.mark.parametrize(
    ("template", "word"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED]
)
def test_refused_in_one_line(world, capsys, template, word):
    rc = main(_argv(template, world))
    out, err = capsys.readouterr()
    assert rc == 2, (rc, out, err)
    assert err.startswith("bloomskip: error: ") and err.count("\n") == 1, err
    assert word in err, err
    assert "Traceback" not in err and out == ""


# Odd but meaningful input: answered, never a traceback.
ACCEPTED: list[tuple[str, tuple[str, ...], str]] = [
    ("size-ndv-underscores", ("size", "--ndv", "20_000_000"), "ndv 20,000,000"),
    ("size-ndv-exact", ("size", "--ndv", "1.5e3"), "ndv 1,500"),
    ("size-ndv-zero", ("size", "--ndv", "0"), "ndv 0"),
    ("hash-empty-string", ("hash", ""), "BYTE_ARRAY"),
    ("hash-float-nan", ("hash", "--type", "float", "nan"), "FLOAT"),
    ("hash-double-inf", ("hash", "--type", "double", "--", "-inf"), "DOUBLE"),
    ("hash-bool-words", ("hash", "--type", "bool", "YES", "f"), "BOOLEAN"),
    ("inspect-nonutf8-path", ("inspect", "{nonutf8}"), "3,000 rows"),
    ("probe-nonutf8-path", ("probe", "{nonutf8}", "-c", "n", "5"), "absent"),
    ("probe-not-a-number", ("probe", "{parquet}", "-c", "n", "abc"), "maybe"),
    ("prune-out-of-range", ("prune", "{parquet}", "-w", "n = " + HUGE[:40]), "0 of 3 row groups"),
    ("prune-nan", ("prune", "{parquet}", "-w", "n = NaN"), "may match"),
    ("query-unindexed", ("index", "query", "{index}", "n > 3"), "whole file"),
]


@pytest.mark.parametrize(
    ("template", "word"), [c[1:] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED]
)
def test_odd_but_meaningful_input_is_answered(world, capsys, template, word):
    rc = main(_argv(template, world))
    out, err = capsys.readouterr()
    assert (rc, err) == (0, "") and word in out, (rc, out, err)


def _cli(*argv: str | bytes, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bloomskip.cli", *argv],
        capture_output=True,
        timeout=timeout,  # a hang fails the test instead of blocking it
    )


# Arguments that would block forever if anything opened them.
FIFOS = [
    ("inspect", "{fifo}"),
    ("probe", "{fifo}", "-c", "n", "1"),
    ("prune", "{fifo}", "-w", "n = 1"),
    ("add-bloom", "{fifo}"),
    ("add-bloom", "{parquet}", "{fifo}"),
    ("inspect", "{parquet}", "--keys", "{fifo}"),
    ("index", "build", "{fifo}", "{newindex}", "-c", "id"),
    ("index", "build", "{lake}", "{fifo}", "-c", "id"),
    ("index", "query", "{fifo}", "id = 'a'"),
]


@pytest.mark.parametrize("template", FIFOS, ids=["-".join(t[:2]) for t in FIFOS])
def test_a_fifo_is_refused_before_it_is_opened(world, template):
    done = _cli(*_argv(template, world))
    err = done.stderr.decode()
    assert done.returncode == 2 and "is a FIFO" in err and err.count("\n") == 1, err
    assert "Traceback" not in err and done.stdout == b""


def test_spark_that_cannot_start_is_one_line(world):
    """--spark with a Java that cannot run: one line naming the master, exit 2."""
    pytest.importorskip("pyspark")
    env = {**os.environ, "JAVA_HOME": "/nonexistent-java"}
    argv = _argv(("index", "build", "{lake}", "{newindex}", "-c", "id"), world)
    done = subprocess.run(
        [sys.executable, "-m", "bloomskip.cli", *argv, "--spark", "local[1]"],
        capture_output=True,
        timeout=300,
        env=env,
    )
    err = done.stderr.decode()
    assert done.returncode == 2 and "Traceback" not in err, err
    assert err.splitlines()[-1].startswith("bloomskip: error: cannot start Spark on local[1]: ")


def test_non_utf8_bytes_in_paths(world):
    raw = os.fsencode(world["dir"]) + b"/\xff\xfe-missing.parquet"
    done = _cli("inspect", raw)
    assert done.returncode == 2 and b"Traceback" not in done.stderr
    assert done.stderr.startswith(b"bloomskip: error: inspect: argument FILE: ")
    done = _cli("inspect", os.fsencode(world["nonutf8"]))
    assert done.returncode == 0 and os.fsencode(world["nonutf8"]) in done.stdout


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr("bloomskip.cli.size.run", interrupted)
    assert main(["size", "--ndv", "10"]) == 130
    assert capsys.readouterr().err == "bloomskip: interrupted\n"


def test_ctrl_c_in_a_real_process():
    script = textwrap.dedent(
        """
        import signal, sys, time
        import bloomskip.cli.size as size

        # As in a terminal: a runner in the background may have started us ignoring SIGINT.
        signal.signal(signal.SIGINT, signal.default_int_handler)

        def slow(args):
            print("running", flush=True)
            time.sleep(60)
            return 0

        size.run = slow
        from bloomskip.cli import main
        sys.exit(main(["size", "--ndv", "10"]))
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert proc.stdout.readline() == b"running\n"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert (proc.returncode, err) == (130, b"bloomskip: interrupted\n")


def test_vacuum_never_deletes_from_a_directory_that_is_no_index(tmp_path, capsys):
    """A directory shaped like an index (``columns/``, ``fragments/``) but with no committed
    version is refused: none of its files is touched, however old."""
    victim = tmp_path / "not-an-index" / "columns" / "data.parquet"
    victim.parent.mkdir(parents=True)
    victim.write_bytes(b"precious")
    old = time.time() - 7 * 86400
    os.utime(victim, (old, old))
    assert main(["index", "vacuum", str(tmp_path / "not-an-index"), "--keep", "1"]) == 2
    assert "no zone index here" in capsys.readouterr().err
    assert victim.read_bytes() == b"precious"


def test_help_of_every_command_and_action_teaches(capsys):
    """Each command and index action says what it does and shows real examples."""
    commands = ["demo", "size", "hash", "inspect", "probe", "prune", "add-bloom", "index"]
    actions = ["build", "refresh", "query", "status", "vacuum"]
    for argv in [[]] + [[c] for c in commands] + [["index", a] for a in actions]:
        assert main([*argv, "--help"]) == 0
        out = capsys.readouterr().out
        assert out.startswith("usage: bloomskip"), argv
        assert "examples:" in out and out.count(f"  bloomskip {' '.join(argv)}".rstrip()) >= 2, argv
