"""Fuzzing the zone index's own files (issue 17): every byte of an index is untrusted.

A small lake of six Parquet files is indexed (two columns, file filters on, zones of 50
rows), refreshed after a file is added (a second segment) and after one is deleted (a
dropped fragment), so the index holds every kind of file: manifests of three versions,
fragment and file tables, serving directories and slabs (format 1's zone tables are
forged in a copy rewritten as format 1; serving parts are damaged during a build).
Each case copies it and mutates one file (:mod:`tests.support.index_fuzz`), then asks it
``=``, ``IN``, ``IS NULL`` and their AND/OR, with and without listing the source, and
``status``; some cases also ``refresh`` and ``vacuum`` it. A sibling directory of
canary files stands next to the index, and an audit hook records what Python opens,
creates and deletes.

* **Damaged** files (checksums not recomputed) must give a typed one-line error or
  candidates that hold every row DuckDB finds, in both query modes and after a refresh.
* **Forged** files (checksums recomputed: a CRC finds damage, not lies) must give an
  answer or a typed one-line error, within a time bound and a memory bound, whatever a
  count claims.
* Always: nothing outside the index root is opened, written or deleted (reads of the
  lake aside), canaries keep their bytes and times, ``vacuum`` keeps files that are not
  the index's and every file a kept version uses.

Seeded loops: case ``i`` is the same mutation on every run. More cases when hunting:
``BLOOMSKIP_INDEX_FUZZ=2000``; to replay damaged case 1216 alone,
``BLOOMSKIP_INDEX_FUZZ_FIRST=1216 BLOOMSKIP_INDEX_FUZZ=1``.
"""

from __future__ import annotations

import glob
import json
import os
import random
import shutil
import signal
import time
import traceback
import tracemalloc

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bloomskip import index
from bloomskip.errors import BloomskipError, CorruptFileError
from bloomskip.index import integrity, serving, store
from bloomskip.index.build import LocalRunner
from bloomskip.index.storage import LocalStorage
from tests.support import index_fuzz as fz

duckdb = pytest.importorskip("duckdb")

CASES = int(os.environ.get("BLOOMSKIP_INDEX_FUZZ", "80"))
FIRST = int(os.environ.get("BLOOMSKIP_INDEX_FUZZ_FIRST", "0"))  # to replay case N: N, 1
FORGED = max(CASES // 2, 25)  # over the kinds of forgery
CASE_SECONDS = 20.0
#: What one forged case may allocate (Python and numpy), whatever a count claims.
MEMORY = 64 << 20
ROWS, ZONE_ROWS = 200, 50


def _file(i: int) -> pa.Table:
    j = np.arange(ROWS)
    s = [None if (i % 2 == 0 and v % 23 == 5) else f"s{i}-{v % 40}" for v in j.tolist()]
    k = [None if v % 31 == 7 else (v * 7919 + i * 1000) % 5000 for v in j.tolist()]
    return pa.table({"s": pa.array(s, pa.string()), "k": pa.array(k, pa.int64())})


PREDICATES = [
    "s = 's0-3'",
    "s = 's5-39'",
    "k = 1919",
    "k IN (3000, 4, 999)",
    "s IS NULL",
    "k IS NULL",
    "s = 's4-7' OR k = 1097",
    "s IN ('s1-1', 's3-2') AND k IS NOT NULL",
]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    base = str(tmp_path_factory.mktemp("index-fuzz"))
    lake, idx, outside = (os.path.join(base, n) for n in ("lake", "idx", "outside"))
    os.makedirs(lake)
    os.makedirs(outside)
    for i in range(5):
        pq.write_table(_file(i), os.path.join(lake, f"p{i}.parquet"), row_group_size=100)
    index.build(lake, ["s", "k"], idx, zone_rows=ZONE_ROWS, sizing="exact", file_filters=True,
                progress=False)  # fmt: skip
    pq.write_table(_file(5), os.path.join(lake, "p5.parquet"), row_group_size=100)
    index.refresh(idx, progress=False)
    os.unlink(os.path.join(lake, "p2.parquet"))
    index.refresh(idx, progress=False)
    m = store.read_manifest(idx)
    assert m.version == 3 and m.dropped and len(m.columns["s"].segments) == 2
    pq.write_table(_file(9), os.path.join(outside, "canary.parquet"))
    with open(os.path.join(outside, "secret.txt"), "wb") as fh:
        fh.write(b"not for the index")
    files = sorted(glob.glob(os.path.join(lake, "*.parquet")))
    con = duckdb.connect()
    truth = {}
    for where in PREDICATES:
        truth[where] = con.execute(
            "SELECT filename, file_row_number FROM read_parquet(?, filename=true, "
            f"file_row_number=true) WHERE {where}",
            [files],
        ).fetchall()
        assert truth[where], where
    canaries = fz.snapshot(outside)
    lake_before = fz.snapshot(lake)
    yield {"base": base, "lake": lake, "idx": idx, "outside": outside, "truth": truth}
    assert fz.snapshot(outside) == canaries
    assert fz.snapshot(lake) == lake_before


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout


def _missing(res: index.QueryResult, truth) -> str | None:
    by_path = {f.path: f for f in res.files}
    for path, row in truth:
        f = by_path.get(path)
        if f is None:
            return f"{path} holds row {row} but is no candidate"
        if f.zones is not None and not any(s <= row < s + n for s, n in f.zones):
            return f"row {row} of {path} is in no candidate zone {f.zones}"
    return None


class Case:
    """One mutated copy of the index and what went wrong with it."""

    def __init__(self, world, name: str, root: str | None = None) -> None:
        self.world, self.name = world, name
        self.root = root or os.path.join(world["base"], "work", name)
        if root is None:  # a copy of the world's index
            shutil.rmtree(self.root, ignore_errors=True)
            shutil.copytree(world["idx"], self.root, symlinks=True)
        self.problems: list[str] = []
        self.what = ""
        self.typed = 0
        self.watch = fz.Watch()
        self.version = 3  # the world's latest: no answer may come from an older one

    def attempt(self, label: str, op):
        """``op()`` (watched), or None after a typed one-line error; anything else is a
        problem."""
        try:
            with self.watch:
                return op()
        except BloomskipError as e:
            self.typed += 1
            if "\n" in str(e).strip():
                self.problems.append(f"{label}: a message of several lines: {str(e)[:300]!r}")
        except _Timeout:
            raise
        except Exception as e:  # a traceback: exactly what must never happen
            frames = traceback.extract_tb(e.__traceback__)[-3:]
            where = " <- ".join(f"{os.path.basename(f.filename)}:{f.lineno}" for f in frames[::-1])
            self.problems.append(f"{label}: {type(e).__name__}: {str(e)[:200]} at {where}")
        return None

    def queries(self, strict: bool) -> None:
        for check_source in (True, False):
            zi = self.attempt("open", lambda: index.open(self.root))  # columns load once
            for where in PREDICATES if zi is not None else ():
                res = self.attempt(
                    f"query {where!r} check_source={check_source}",
                    lambda w=where, c=check_source, z=zi: z.query(w, check_source=c),
                )
                if res is not None and res.version < self.version:
                    self.problems.append(f"answered from version {res.version}: reverted")
                if res is not None and strict:
                    miss = _missing(res, self.world["truth"][where])
                    if miss:
                        self.problems.append(f"false negative, {where} ({check_source}): {miss}")
        self.attempt("status", lambda: index.open(self.root).status())

    def refresh(self, strict: bool) -> None:
        done = self.attempt("refresh", lambda: index.refresh(self.root, progress=False))
        if done is not None:
            self.version = done.version
            self.queries(strict)

    def vacuum(self, strict: bool) -> None:
        """Vacuum keeps what is not the index's; damaged, it keeps every file the newest
        manifest names, and deletes nothing at all if it fails."""
        foreign = [os.path.join(self.root, "notes.txt"), os.path.join(self.root, "columns", "x")]
        for f in foreign:
            if os.path.isdir(os.path.dirname(f)) and not os.path.islink(os.path.dirname(f)):
                with open(f, "wb") as fh:
                    fh.write(b"mine")
        before, refs = fz.files(self.root), fz.newest_references(self.root)
        done = self.attempt("vacuum", lambda: index.vacuum(self.root, keep_versions=1,
                                                             min_age_s=0))  # fmt: skip
        after = fz.files(self.root)
        for f in foreign:
            home = os.path.dirname(f)
            if os.path.isdir(home) and not os.path.islink(home) and not os.path.exists(f):
                self.problems.append(f"vacuum deleted {f}, which is not the index's")
        if not strict:
            return
        if done is None and before - after:
            self.problems.append(f"a failed vacuum deleted {sorted(before - after)[:3]}")
        lost = (refs or set()) & before - after
        if lost:
            self.problems.append(f"vacuum deleted {sorted(lost)[:3]}, the newest version's")

    def run(self, mutate, *, strict: bool, heavy: bool, memory: bool = False) -> None:
        rng = random.Random(self.name)
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
        if memory:
            tracemalloc.start()
        try:
            self.what = mutate(self.root, rng)
            self.queries(strict)
            if heavy:
                self.refresh(strict)
                self.vacuum(strict)
            self.problems += self.watch.outside(
                self.world["base"], self.root, readable=(self.world["lake"],)
            )
            if memory:
                peak = tracemalloc.get_traced_memory()[1]
                if peak > MEMORY:
                    self.problems.append(f"{peak:,} bytes allocated")
        except _Timeout:
            self.problems.append(f"no answer within {CASE_SECONDS} s")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if memory:
                tracemalloc.stop()
        if not self.problems:
            shutil.rmtree(self.root, ignore_errors=True)


def _report(failures: list[tuple[str, str, list[str]]]) -> str:
    lines = []
    for name, what, problems in failures[:10]:
        lines.append(f"{name} ({what}):")
        lines += [f"    {p}" for p in problems[:4]]
    return f"{len(failures)} cases failed:\n" + "\n".join(lines)


def test_damaged_index_files_give_typed_errors_or_every_matching_row(world):
    failures, typed = [], 0
    t0 = time.perf_counter()
    for i in range(FIRST, FIRST + CASES):
        case = Case(world, f"damaged-{i}")
        case.run(lambda root, rng: fz.damage(root, world["outside"], rng), strict=True,
                 heavy=i % 8 == 0)  # fmt: skip
        typed += case.typed
        if case.problems:
            failures.append((f"damaged-{i}", case.what, case.problems))
    assert not failures, _report(failures)
    assert CASES < 20 or typed > CASES  # most damage is caught, not silently ignored
    print(f"{CASES} damaged indexes, {typed} typed errors, {time.perf_counter() - t0:.1f} s")


FORGERS = {
    "manifest": fz.forge_manifest,
    "directory": fz.forge_directory,
    "slab": fz.forge_slab,
    "table": fz.forge_table,
    "format-1": fz.forge_format_1,
}


@pytest.mark.parametrize("kind", sorted(FORGERS))
def test_forged_index_files_answer_or_fail_typed_in_bounded_time_and_memory(world, kind):
    failures = []
    for i in range(FORGED // len(FORGERS)):
        case = Case(world, f"forged-{kind}-{i}")
        case.run(FORGERS[kind], strict=False, heavy=i % 4 == 0, memory=True)
        if case.problems:
            failures.append((f"forged-{kind}-{i}", case.what, case.problems))
    assert not failures, _report(failures)


# --------------------------------------------------------------------------- build parts


class _DamagingRunner(LocalRunner):
    """Threads, as the local engine; a part is damaged between the tasks and the slabs."""

    def __init__(self, root: str, rng: random.Random) -> None:
        super().__init__(threads=1, progress=False)
        self.root, self.rng, self.what = root, rng, "no part"

    def slabs(self, storage, jobs) -> list[np.ndarray]:
        parts = sorted(glob.glob(os.path.join(self.root, "columns", "*", "*.blocks")))
        if parts:
            path = self.rng.choice(parts)
            with open(path, "rb") as fh:
                data, what = fz.damage_bytes(fh.read(), self.rng)
            with open(path, "wb") as fh:
                fh.write(data)
            self.what = f"{os.path.basename(path)}: {what}"
        return super().slabs(storage, jobs)


def test_parts_damaged_before_their_slabs_are_built(world):
    """A serving part (``.blocks``) is read back to build the slabs; damaged in between,
    the build fails with a typed error and commits nothing, or builds what it read."""
    failures, typed = [], 0
    for i in range(max(CASES // 10, 8)):
        root = os.path.join(world["base"], "parts", str(i))
        runner = _DamagingRunner(root, random.Random(f"parts-{i}"))
        case = Case(world, f"parts-{i}", root)
        case.version = 1
        built = case.attempt("build", lambda r=root, run=runner: index.build(
            world["lake"], ["s", "k"], r, zone_rows=ZONE_ROWS, runner=run))  # fmt: skip
        if built is None:
            typed += 1
            if store.versions(root):
                case.problems.append("a failed build committed a version")
        else:
            case.queries(strict=True)
        if case.problems:
            failures.append((f"parts-{i}", runner.what, case.problems))
    assert not failures, _report(failures)
    assert typed  # damage is found, not built into the slabs


class _FlippingRunner(LocalRunner):
    """Flips one bit of a class matrix of every part before the slabs are built."""

    def __init__(self, root: str) -> None:
        super().__init__(threads=1, progress=False)
        self.root = root

    def slabs(self, storage, jobs) -> list[np.ndarray]:
        for path in glob.glob(os.path.join(self.root, "columns", "*", "*.blocks")):
            with open(path, "rb") as fh:
                data = fh.read()
            n = int.from_bytes(data[8:12], "little")
            off, _ = json.loads(data[12 : 12 + n])["sections"]["c0"]
            _flip(path, off + 3, 5)
        return super().slabs(storage, jobs)


def test_a_part_damaged_before_its_slabs_fails_the_build(world):
    """Found: a part's bytes changed between its task and the slab jobs (a duplicated
    run of bytes) became slabs whose own checksums vouched for the wrong filters - a
    false negative for good. Now each block row of a part has its CRC-32."""
    root = os.path.join(world["base"], "parts-flipped")
    runner = _FlippingRunner(root)
    _one_line_error(lambda: index.build(world["lake"], ["s"], root, zone_rows=ZONE_ROWS,
                                        runner=runner), "fails its checksum")  # fmt: skip
    assert not store.versions(root)


# ------------------------------------------------------------------- found by the fuzzing


def _copy(world, name: str) -> str:
    root = os.path.join(world["base"], "regressions", name)
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(world["idx"], root, symlinks=True)
    return root


def _path(root: str, rel: str) -> str:
    return os.path.join(root, *rel.split("/"))


def _flip(path: str, at: int, bit: int = 0) -> None:
    with open(path, "r+b") as fh:
        fh.seek(at)
        b = fh.read(1)[0]
        fh.seek(at)
        fh.write(bytes([b ^ (1 << bit)]))


def _one_line_error(op, match: str) -> None:
    with pytest.raises(BloomskipError, match=match) as e:
        op()
    assert "\n" not in str(e.value).strip(), str(e.value)


@pytest.mark.parametrize("check_source", [True, False])
def test_a_bit_cleared_in_a_slab_is_found_not_answered(world, check_source):
    """Found: a cleared filter bit in a slab dropped the zone holding the value."""
    root = _copy(world, f"slab-{check_source}")
    r = fz.roles(root)
    for rel in r["slab"]:
        with open(_path(root, rel), "r+b") as fh:
            fh.write(bytes(32))  # the first block of the first zones: bits cleared
    where = "s = 's0-3'"
    _one_line_error(lambda: [index.open(root).query(w, check_source=check_source)
                             for w in PREDICATES], "fails its checksum")  # fmt: skip
    fresh = index.open(world["idx"]).query(where, check_source=check_source)
    assert _missing(fresh, world["truth"][where]) is None


def test_a_damaged_or_swapped_directory_is_refused(world):
    """Zone keys, lengths and flags read from a damaged directory would make zones vanish;
    a directory from another segment would give other zones' filters."""
    root = _copy(world, "directory")
    dirs = fz.roles(root)["directory"]
    s_dirs = [d for d in dirs if d.startswith("columns/0-s/")]
    size = os.path.getsize(_path(root, s_dirs[0]))
    _flip(_path(root, s_dirs[0]), size - 7)  # in the compressed body
    _one_line_error(lambda: index.open(root).query("s = 's0-3'"), "checksum")
    shutil.copyfile(_path(world["idx"], s_dirs[1]), _path(root, s_dirs[0]))
    _one_line_error(lambda: index.open(root).query("s = 's0-3'"), "checksum|bytes|zones")


def test_a_damaged_fragment_table_is_refused_also_when_read_in_part(world):
    """Found: a damaged fragment table gave wrong paths to the lean lookup (no listing),
    and pyarrow's own errors escaped it as an OSError of several lines."""
    root = _copy(world, "fragments")
    rel = fz.roles(root)["fragments"][0]
    path = _path(root, rel)
    with open(path, "rb") as fh:
        good = fh.read()
    found = set()
    for at in range(4, len(good) - 8, max(1, len(good) // 40)):
        with open(path, "wb") as fh:
            fh.write(good[:at] + bytes([good[at] ^ 0x10]) + good[at + 1 :])
        for check_source in (False, True):
            try:
                res = index.open(root).query("s = 's0-3'", check_source=check_source)
            except BloomskipError as e:
                assert "\n" not in str(e).strip(), str(e)
                found.add(type(e).__name__)
                continue
            assert _missing(res, world["truth"]["s = 's0-3'"]) is None, (at, check_source)
    assert found == {"CorruptFileError"}


def test_a_table_swapped_for_another_columns_or_versions_is_refused(world):
    """Found: a file filter table of another column was probed as this column's; an
    older version's fragment table in place of the current one went unnoticed."""
    root = _copy(world, "swapped")
    r = fz.roles(root)
    s_files = [n for n in r["files"] if n.startswith("columns/0-s/")]
    k_files = [n for n in r["files"] if n.startswith("columns/1-k/")]
    shutil.copyfile(_path(root, k_files[0]), _path(root, s_files[0]))
    _one_line_error(lambda: index.open(root).query("s = 's0-3'"), "checksum")
    root = _copy(world, "reverted")
    r = fz.roles(root)
    shutil.copyfile(_path(root, r["old-fragments"][0]), _path(root, r["fragments"][0]))
    _one_line_error(lambda: index.open(root).query("s = 's0-3'", check_source=False),
                    "checksum")  # fmt: skip


def test_a_damaged_manifest_is_refused_even_when_it_parses(world):
    """Found: a digit changed in a manifest (a dropped fragment, the next fragment id, a
    size) was believed; now its checksum refuses it."""
    root = _copy(world, "manifest")
    rel = fz.roles(root)["manifest"][0]
    path = _path(root, rel)
    with open(path) as fh:
        text = fh.read()
    doc = json.loads(text)
    for key, value in [("next_fragment_id", 2), ("dropped", [0]), ("num_rows", 7)]:
        with open(path, "w") as fh:
            fh.write(json.dumps({**doc, key: value}, indent=1, sort_keys=True))
        _one_line_error(lambda: index.open(root), "checksum does not match")
    with open(path, "w") as fh:
        fh.write(text.replace('"fpp": 0.00057', '"fpp": 5.7e-4', 1))  # the same: accepted
    assert index.open(root).version == 3


def test_zone_table_metadata_that_is_not_utf8_is_a_typed_error(world):
    """Found: a damaged metadata value of a (format 1) zone table raised
    UnicodeDecodeError."""
    root = _copy(world, "metadata")
    fz.as_format_1(root)
    assert index.open(root).query("s = 's0-3'").paths  # readable as format 1
    rel = fz.roles(root)["zones"][0]
    t = pq.read_table(_path(root, rel))
    meta = dict(t.schema.metadata)
    meta[b"bloomskip.column"] = b"\xf0\x28 not utf-8"
    LocalStorage(root).write_table(rel, t.replace_schema_metadata(meta))
    _one_line_error(lambda: index.open(root).status(), "bloomskip.column")


def test_forged_probabilities_and_types_in_a_manifest_are_refused(world):
    """Found: a forged fpp (out of range, not a number) reached the IN-list rule."""
    root = _copy(world, "fpp")
    rel = fz.roles(root)["manifest"][0]
    with open(_path(root, rel)) as fh:
        doc = json.load(fh)
    for key, value in [("fpp", 1e308), ("fpp", -0.5), ("fpp", "x"), ("seed", "0"),
                       ("sizing", "lance"), ("file_filters", "yes")]:  # fmt: skip
        forged = json.loads(json.dumps(doc))
        forged["columns"]["s"][key] = value
        forged["checksum"] = integrity.json_checksum(forged)
        with open(_path(root, rel), "w") as fh:
            json.dump(forged, fh)
        _one_line_error(lambda: index.open(root), key)


def test_sizes_and_counts_that_claim_gigabytes_allocate_nothing(world):
    """A directory size of a petabyte in the manifest, zone counts, classes and body sizes
    that claim gigabytes: an answer or a typed error, with memory for the bytes that are
    really there."""
    root = _copy(world, "huge")
    rel = fz.roles(root)["manifest"][0]
    with open(_path(root, rel)) as fh:
        doc = json.load(fh)
    doc["columns"]["s"]["segments"][0]["directory_size"] = 10**15
    doc["checksum"] = integrity.json_checksum(doc)
    with open(_path(root, rel), "w") as fh:
        json.dump(doc, fh)
    directory = fz.roles(root)["directory"][0]
    header, body = fz.read_dir(root, directory)
    tracemalloc.start()
    try:
        res = index.open(root).query("s = 's0-3'")  # the size as the object says
        assert _missing(res, world["truth"]["s = 's0-3'"]) is None
        big = {"blocks": 2**22, "count": 2**40, "slab_blocks": 1}
        for forged, keep in [
            ({"zones": 2**40}, False),
            ({"zones": 2**24}, False),
            ({"classes": [big]}, False),
            ({"classes": [{**big, "count": 1}] * 200}, False),
            ({"body": [len(body), 2**29]}, True),
            ({"body": [2**40, 2**40]}, True),
        ]:
            fz.write_dir(root, directory, {**header, **forged}, body, keep_body=keep)
            size = os.path.getsize(_path(root, directory))
            for zones in (None, forged.get("zones")):
                with pytest.raises(CorruptFileError):
                    serving.read_directory(LocalStorage(root), directory, size, zones)
        assert tracemalloc.get_traced_memory()[1] < MEMORY
    finally:
        tracemalloc.stop()
    (data,) = LocalStorage(root).read_ranges(directory, [(0, 10**15)])  # what is there
    assert len(data) == os.path.getsize(_path(root, directory))
    with pytest.raises(CorruptFileError, match="refused"):
        LocalStorage(root).read_ranges(directory, [(-8, 8)])


# ----------------------------------------------------------------------- object stores


def test_damaged_index_objects_on_an_object_store(tmp_path):
    """The same damage to an index in an S3 bucket (moto on loopback): typed errors or
    every matching row; a vacuum of a damaged index deletes nothing."""
    pytest.importorskip("moto")
    obstore = pytest.importorskip("obstore")
    from bloomskip.index.storage import open_storage
    from tests.support.s3 import moto_server

    with moto_server() as s3:
        p = s3.fresh()
        for i in range(3):
            s3.write_table(_file(i), p, "lake", f"p{i}.parquet", row_group_size=100)
        lake, idx = s3.uri(p, "lake"), s3.uri(p, "idx")
        index.build(lake, ["s", "k"], idx, zone_rows=ZONE_ROWS, sizing="exact", progress=False)
        st = open_storage(idx)
        m = store.read_manifest(st)
        names = [store.manifest_name(1), m.fragments]
        for col in m.columns.values():
            for seg in col.segments:
                names += [seg.directory, *seg.slabs, *seg.zones]
        value = _file(1)["k"][10].as_py()
        where = f"k = {value}"
        holders = {lake + f"/p{i}.parquet" for i in range(3) if value in _file(i)["k"].to_pylist()}
        assert holders
        failures, typed = [], 0
        for i in range(24):
            rng = random.Random(f"s3-{i}")
            rel = rng.choice(names)
            good = st.read(rel)
            bad, what = fz.damage_bytes(good, rng)
            obstore.put(st._store, rel, bad)
            try:
                for check_source in (True, False):
                    try:
                        res = index.open(idx).query(where, check_source=check_source)
                    except BloomskipError as e:
                        typed += 1
                        assert "\n" not in str(e).strip(), str(e)
                        continue
                    if not holders <= set(res.paths):
                        failures.append(f"{rel}: {what}: {sorted(holders - set(res.paths))}")
                if rel.startswith("_manifests/") and bad != good:
                    before = s3.keys(p, "idx")
                    with pytest.raises(BloomskipError):
                        index.vacuum(idx, keep_versions=1, min_age_s=0)
                    assert s3.keys(p, "idx") == before
            finally:
                obstore.put(st._store, rel, good)
        assert not failures, failures
        assert typed


def test_a_manifest_replaced_by_a_link_is_refused_not_skipped(world):
    """Found: the newest manifest replaced by a symbolic link was not listed, so queries
    answered from the version before it and vacuum deleted the newest version's files."""
    root = _copy(world, "linked-manifest")
    rel = fz.roles(root)["manifest"][0]
    refs = fz.newest_references(root)
    os.rename(_path(root, rel), _path(root, "moved.json"))
    os.symlink(_path(root, "moved.json"), _path(root, rel))
    _one_line_error(lambda: index.open(root), "not a regular file")
    _one_line_error(lambda: index.vacuum(root, keep_versions=1, min_age_s=0), "not a regular")
    assert all(os.path.exists(_path(root, r)) for r in refs)


def test_a_fifo_or_a_file_where_the_index_expects_otherwise_is_a_typed_error(world):
    """A FIFO in place of a slab must not block its reader; a file in place of a column's
    directory gives a typed error, also to a refresh that writes there."""
    root = _copy(world, "fifo")
    slab = next(r for r in fz.roles(root)["slab"] if r.startswith("columns/0-s/"))
    os.unlink(_path(root, slab))
    os.mkfifo(_path(root, slab))
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    try:
        _one_line_error(lambda: index.open(root).query("s = 's0-3'"), "not a regular file")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    root = _copy(world, "file-for-directory")
    shutil.move(_path(root, "columns/0-s"), _path(root, "moved"))
    with open(_path(root, "columns/0-s"), "wb") as fh:
        fh.write(b"not a directory")
    _one_line_error(lambda: index.open(root).query("s = 's0-3'"), "cannot read")
    pq.write_table(_file(6), os.path.join(world["lake"], "p6.parquet"))  # to index: a write
    try:
        _one_line_error(lambda: index.refresh(root, progress=False), "cannot write")
    finally:
        os.unlink(os.path.join(world["lake"], "p6.parquet"))
