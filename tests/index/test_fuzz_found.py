"""What the index fuzzing found (issue 17), one test each, and the checks that need a
setting of their own: serving parts damaged during a build, sizes and counts that claim
gigabytes, links and FIFOs in an index, and damage to an index in an S3 bucket (moto's
server on loopback). The lake and index are :mod:`tests.support.index_world`'s.
"""

from __future__ import annotations

import glob
import json
import os
import random
import shutil
import signal
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
from tests.support import index_world as iw

duckdb = pytest.importorskip("duckdb")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    yield from iw.world(str(tmp_path_factory.mktemp("index-fuzz-found")))


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout


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
            iw.flip(path, off + 3, 5)
        return super().slabs(storage, jobs)


def test_a_part_damaged_before_its_slabs_fails_the_build(world):
    """Found: a part's bytes changed between its task and the slab jobs (a duplicated
    run of bytes) became slabs whose own checksums vouched for the wrong filters - a
    false negative for good. Now each block row of a part has its CRC-32."""
    root = os.path.join(world["base"], "parts-flipped")
    runner = _FlippingRunner(root)
    iw.one_line_error(lambda: index.build(world["lake"], ["s"], root, zone_rows=iw.ZONE_ROWS,
                                        runner=runner), "fails its checksum")  # fmt: skip
    assert not store.versions(root)


def _copy(world, name: str) -> str:
    root = os.path.join(world["base"], "regressions", name)
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(world["idx"], root, symlinks=True)
    return root


def _path(root: str, rel: str) -> str:
    return os.path.join(root, *rel.split("/"))


@pytest.mark.parametrize("check_source", [True, False])
def test_a_bit_cleared_in_a_slab_is_found_not_answered(world, check_source):
    """Found: a cleared filter bit in a slab dropped the zone holding the value."""
    root = _copy(world, f"slab-{check_source}")
    r = fz.roles(root)
    for rel in r["slab"]:
        with open(_path(root, rel), "r+b") as fh:
            fh.write(bytes(32))  # the first block of the first zones: bits cleared
    where = "s = 's0-3'"
    iw.one_line_error(lambda: [index.open(root).query(w, check_source=check_source)
                             for w in iw.PREDICATES], "fails its checksum")  # fmt: skip
    fresh = index.open(world["idx"]).query(where, check_source=check_source)
    assert iw.missing(fresh, world["truth"][where]) is None


def test_a_damaged_or_swapped_directory_is_refused(world):
    """Zone keys, lengths and flags read from a damaged directory would make zones vanish;
    a directory from another segment would give other zones' filters."""
    root = _copy(world, "directory")
    dirs = fz.roles(root)["directory"]
    s_dirs = [d for d in dirs if d.startswith("columns/0-s/")]
    size = os.path.getsize(_path(root, s_dirs[0]))
    iw.flip(_path(root, s_dirs[0]), size - 7)  # in the compressed body
    iw.one_line_error(lambda: index.open(root).query("s = 's0-3'"), "checksum")
    shutil.copyfile(_path(world["idx"], s_dirs[1]), _path(root, s_dirs[0]))
    iw.one_line_error(lambda: index.open(root).query("s = 's0-3'"), "checksum|bytes|zones")


def test_a_directory_copied_over_another_segment_s_of_the_same_size_is_refused(tmp_path):
    """Found (hostile-input probe, 2026-11-29): two segments' directories of one size and
    zone count - one copied over the other, nothing forged - passed every check; its
    keys duplicated the first segment's, which the loader keeps once, so the second
    segment's file lost its zones and a lookup that trusts the index dropped it. A
    directory names itself now (here the manifest is made to agree on size and count)."""
    import dataclasses

    lake, idx = tmp_path / "lake", str(tmp_path / "idx")
    lake.mkdir()
    rng = np.random.default_rng(1)

    def part(i: int) -> None:
        s = [f"x{i}-{v:06d}" for v in rng.integers(10**6, size=1000)]
        pq.write_table(pa.table({"s": s}), lake / f"p{i}.parquet")

    for i in range(3):
        part(i)
    index.build(str(lake), ["s"], idx, zone_rows=250, progress=False)
    for i in (3, 4):
        part(i)
        index.refresh(idx, progress=False)
    m = store.read_manifest(idx)
    col = m.columns["s"]
    a, b = col.segments[1], col.segments[2]
    shutil.copyfile(_path(idx, a.directory), _path(idx, b.directory))
    same = dataclasses.replace(b, directory_size=a.directory_size, num_zones=a.num_zones)
    segments = (*col.segments[:2], same)
    columns = {**m.columns, "s": dataclasses.replace(col, segments=segments)}
    store.publish(idx, dataclasses.replace(m, version=m.version + 1, columns=columns))
    value = pq.read_table(lake / "p4.parquet").column("s")[0].as_py()
    iw.one_line_error(
        lambda: index.open(idx).query(f"s = '{value}'", check_source=False), "another segment"
    )


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
            assert iw.missing(res, world["truth"]["s = 's0-3'"]) is None, (at, check_source)
    assert found == {"CorruptFileError"}


def test_a_table_swapped_for_another_columns_or_versions_is_refused(world):
    """Found: a file filter table of another column was probed as this column's; an
    older version's fragment table in place of the current one went unnoticed."""
    root = _copy(world, "swapped")
    r = fz.roles(root)
    s_files = [n for n in r["files"] if n.startswith("columns/0-s/")]
    k_files = [n for n in r["files"] if n.startswith("columns/1-k/")]
    shutil.copyfile(_path(root, k_files[0]), _path(root, s_files[0]))
    iw.one_line_error(lambda: index.open(root).query("s = 's0-3'"), "checksum")
    root = _copy(world, "reverted")
    r = fz.roles(root)
    shutil.copyfile(_path(root, r["old-fragments"][0]), _path(root, r["fragments"][0]))
    iw.one_line_error(lambda: index.open(root).query("s = 's0-3'", check_source=False),
                    "checksum|rows where the manifest says")  # fmt: skip


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
        iw.one_line_error(lambda: index.open(root), "checksum does not match")
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
    iw.one_line_error(lambda: index.open(root).status(), "bloomskip.column")


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
        iw.one_line_error(lambda: index.open(root), key)


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
        assert iw.missing(res, world["truth"]["s = 's0-3'"]) is None
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
        assert tracemalloc.get_traced_memory()[1] < iw.MEMORY
    finally:
        tracemalloc.stop()
    (data,) = LocalStorage(root).read_ranges(directory, [(0, 10**15)])  # what is there
    assert len(data) == os.path.getsize(_path(root, directory))
    with pytest.raises(CorruptFileError, match="refused"):
        LocalStorage(root).read_ranges(directory, [(-8, 8)])


def _forge(root: str, change) -> None:
    """Apply ``change`` to the latest manifest, its checksum recomputed (a forger's)."""
    rel = fz.roles(root)["manifest"][0]
    with open(_path(root, rel)) as fh:
        doc = json.load(fh)
    change(doc)
    doc["checksum"] = integrity.json_checksum(doc)
    with open(_path(root, rel), "w") as fh:
        json.dump(doc, fh)


def test_an_overlong_fragment_table_is_refused_before_it_is_read(world):
    """Found (hostile-input probe): a fragment table grown to 4 GiB (sparse: damage, no
    forgery) was read whole by a lookup that lists the source - a MemoryError, or 4 GiB."""
    root = _copy(world, "long-fragments")
    rel = fz.roles(root)["fragments"][0]
    os.truncate(_path(root, rel), 4 << 30)
    tracemalloc.start()
    try:
        for check_source in (True, False):
            iw.one_line_error(
                lambda c=check_source: index.open(root).query("s = 's0-3'", check_source=c),
                "more than the index.s table can hold" if check_source else "unreadable",
            )
        assert tracemalloc.get_traced_memory()[1] < iw.MEMORY
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("key", ["dropped", "failed", "next_fragment_id"])
def test_fragment_ids_beyond_a_zone_keys_range_are_refused(world, key):
    """Found (hostile-input probe): a fragment id of 2**64 in ``dropped`` or a column's
    ``failed`` raised OverflowError from numpy."""
    root = _copy(world, f"fid-{key}")

    def change(doc):
        if key == "failed":
            doc["columns"]["s"]["failed"] = [2**64]
        elif key == "dropped":
            doc["dropped"] = [2**24]
        else:
            doc["next_fragment_id"] = 2**63

    _forge(root, change)
    iw.one_line_error(lambda: index.open(root), "is not a count below")


def test_a_directory_named_by_many_segments_or_zones_beyond_one_directory_are_refused(world):
    """Found (hostile-input probe): a manifest listing one directory in 8 segments made a
    query hold it 8 times (5.7 GiB from a 2.5 MB directory): every object is named once,
    and a column's zones are bounded as one directory's."""
    root = _copy(world, "dup-segments")

    def twice(doc):
        segs = doc["columns"]["s"]["segments"]
        segs.append(json.loads(json.dumps(segs[0])))

    _forge(root, twice)
    iw.one_line_error(lambda: index.open(root), "an object is named twice")
    root = _copy(world, "many-zones")

    def many(doc):
        for seg in doc["columns"]["s"]["segments"]:
            seg["num_zones"] = 2**40

    _forge(root, many)
    iw.one_line_error(lambda: index.open(root), "claims .* zones, over")


def test_a_source_on_a_file_system_that_cannot_be_made_is_a_typed_error(world):
    """Found (hostile-input probe): a manifest naming an hdfs:// source on a machine
    without a JVM raised a bare OSError with 10 KB of library paths."""
    pytest.importorskip("pyarrow.fs")
    root = _copy(world, "hdfs-source")
    _forge(root, lambda doc: doc["source"].update(filesystem="hdfs", uri="hdfs://127.0.0.1:1/x"))
    for check_source in (True, False):
        with pytest.raises(BloomskipError) as e:
            index.open(root).query("s = 's0-3'", check_source=check_source)
        assert "\n" not in str(e.value) and len(str(e.value)) < 600, str(e.value)


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
            s3.write_table(iw.lake_file(i), p, "lake", f"p{i}.parquet", row_group_size=100)
        lake, idx = s3.uri(p, "lake"), s3.uri(p, "idx")
        index.build(lake, ["s", "k"], idx, zone_rows=iw.ZONE_ROWS, sizing="exact", progress=False)
        st = open_storage(idx)
        m = store.read_manifest(st)
        names = [store.manifest_name(1), m.fragments]
        for col in m.columns.values():
            for seg in col.segments:
                names += [seg.directory, *seg.slabs, *seg.zones]
        value = iw.lake_file(1)["k"][10].as_py()
        where = f"k = {value}"
        holders = {
            lake + f"/p{i}.parquet" for i in range(3) if value in iw.lake_file(i)["k"].to_pylist()
        }
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
    iw.one_line_error(lambda: index.open(root), "not a regular file")
    iw.one_line_error(lambda: index.vacuum(root, keep_versions=1, min_age_s=0), "not a regular")
    assert all(os.path.exists(_path(root, r)) for r in refs)


def test_a_fifo_or_a_file_where_the_index_expects_otherwise_is_a_typed_error(world):
    """A FIFO in place of a slab must not block its reader; a file in place of a column's
    directory gives a typed error, also to a refresh that writes there."""
    root = _copy(world, "fifo")
    slab = next(r for r in fz.roles(root)["slab"] if r.startswith("columns/0-s/"))
    os.unlink(_path(root, slab))
    os.mkfifo(_path(root, slab))
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, iw.CASE_SECONDS)
    try:
        iw.one_line_error(lambda: index.open(root).query("s = 's0-3'"), "not a regular file")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    root = _copy(world, "file-for-directory")
    shutil.move(_path(root, "columns/0-s"), _path(root, "moved"))
    with open(_path(root, "columns/0-s"), "wb") as fh:
        fh.write(b"not a directory")
    iw.one_line_error(lambda: index.open(root).query("s = 's0-3'"), "0-s is not a directory")
    pq.write_table(iw.lake_file(6), os.path.join(world["lake"], "p6.parquet"))  # to index: a write
    try:
        iw.one_line_error(lambda: index.refresh(root, progress=False), "0-s is not a directory")
    finally:
        os.unlink(os.path.join(world["lake"], "p6.parquet"))


def test_a_directory_swapped_for_a_link_mid_operation_leads_nowhere_outside(tmp_path, monkeypatch):
    """Found (probe): every check was made on a path, then the operation opened the path
    again; whoever could write the index could swap ``columns/`` for a link to another
    directory in between (``renameat2``) and make vacuum delete there, or a refresh write
    there. Each operation now holds its directory by descriptor, opened step by step
    without following links: the swap below, made at the worst moment, changes nothing
    outside the index."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.blocks").write_bytes(b"not ours")
    root = tmp_path / "idx"
    (root / "columns").mkdir(parents=True)
    (root / "columns" / "x.blocks").write_bytes(b"ours")
    storage = LocalStorage(str(root))
    real_dir = LocalStorage._dir

    def swap_after_opening(self, parts, rel, *, create=False):
        fd = real_dir(self, parts, rel, create=create)
        if parts and not (root / "columns").is_symlink():
            os.rename(root / "columns", root / "moved")
            os.symlink(other, root / "columns")
        return fd

    def reset() -> None:
        if (root / "columns").is_symlink():
            os.unlink(root / "columns")
            os.rename(root / "moved", root / "columns")

    monkeypatch.setattr(LocalStorage, "_dir", swap_after_opening)
    storage.delete("columns/x.blocks")  # deletes ours, in the directory it opened
    assert (other / "x.blocks").read_bytes() == b"not ours"
    assert not (root / "moved" / "x.blocks").exists()
    reset()
    storage.write("columns/y.blocks", b"new")
    assert not (other / "y.blocks").exists() and (root / "moved" / "y.blocks").exists()
    reset()
    assert storage.create("columns/z.json", b"{}")
    assert not (other / "z.json").exists()
    reset()
    assert [e.rel for e in storage.list("columns")] == ["columns/y.blocks", "columns/z.json"]
    reset()
    assert storage.read("columns/y.blocks") == b"new"
    monkeypatch.undo()
    # a link already in place is refused on every operation, never followed
    reset()
    os.rename(root / "columns", root / "moved")
    os.symlink(other, root / "columns")
    for op in (
        lambda: storage.delete("columns/x.blocks"),
        lambda: storage.write("columns/x.blocks", b"w"),
        lambda: storage.read("columns/x.blocks"),
        lambda: storage.list("columns", strict=True),
        lambda: storage.size("columns/x.blocks"),
    ):
        with pytest.raises(CorruptFileError, match="columns is a symbolic link"):
            op()
    assert storage.list("columns") == []
    assert (other / "x.blocks").read_bytes() == b"not ours"


def test_a_name_ending_in_a_newline_is_no_name_of_the_index(world):
    """Found (probe): ``$`` also matches before a final newline, so a stray
    ``_manifests/v...02.json\\n`` was taken for version 2, and every command then failed
    on a version that does not exist."""
    from bloomskip.index.layout import check_name
    from bloomskip.index.storage import check_rel

    root = _copy(world, "newline")
    before = store.versions(root)
    stray = f"v{before[-1] + 1:020d}.json\n"
    with open(os.path.join(root, "_manifests", stray), "w") as fh:
        fh.write("{}")
    assert store.versions(root) == before
    assert index.open(root).query("s = 's0-3'").files
    with pytest.raises(CorruptFileError):
        check_rel("fragments/" + "0" * 32 + ".parquet\n")
    with pytest.raises(CorruptFileError):
        check_name("fragments/" + "0" * 32 + ".parquet\n", "fragments", "manifest")


def test_a_fragment_table_that_decodes_to_far_more_than_it_holds_is_refused(world):
    """Found (probe): with its checksums recomputed, a fragment table of a few KB held an
    extra column of 300 MB of zeros (1.3 GB of memory to query), a list column (15 GB),
    or 3M rows (2.3 GB); a refresh read it with no limit at all. Now only the columns of
    its kind are read, no more rows than the manifest's files, and no more bytes than
    64 times the file's - checked as it is decoded, so that a value repeated by a
    dictionary counts every time."""
    from bloomskip.index import tables

    root = _copy(world, "bomb")
    rel = fz.roles(root)["fragments"][0]
    good = pq.read_table(_path(root, rel))
    zeros = pa.array([b"\0" * (8 << 20)] * good.num_rows, pa.binary())
    cases = {
        "column 'junk'": good.append_column("junk", zeros),
        "column 'etag'": good.set_column(
            good.schema.get_field_index("etag"),
            "etag",
            pa.array([["x"]] * good.num_rows, pa.list_(pa.string())),
        ),
        "rows where the manifest says": pa.concat_tables([good] * 3),
        "decoded from": good.set_column(
            good.schema.get_field_index("path"), "path", zeros.cast(pa.string())
        ),
    }
    for match, table in cases.items():
        data = tables.encode(table, rel).to_pybytes()  # checksums that agree
        assert len(data) < 200_000, (match, len(data))
        with open(_path(root, rel), "wb") as fh:
            fh.write(data)
        iw.one_line_error(lambda: index.open(root).query("s = 's0-3'"), match)
        iw.one_line_error(lambda: index.open(root).query("s = 's0-3'", check_source=False), match)
        iw.one_line_error(lambda: index.refresh(root, progress=False), match)


def test_zones_that_do_not_fit_in_memory_are_a_typed_error(world, monkeypatch):
    """Found (hostile-input probe, 2026-11-29): a forged directory of 66 KB whose zstd body
    stands for 1 GB (40M zones; a real one of uniform zones compresses ~7,000x, so the
    ratio cannot tell them apart) ended a lookup in a raw ``MemoryError`` under a 2 GiB
    limit. It is an ``OutOfMemoryError`` (a ``MemoryError`` too) naming the column."""
    from bloomskip.errors import OutOfMemoryError
    from bloomskip.index import query

    def outsized(*args, **kwargs):
        raise MemoryError("Unable to allocate 305. MiB for an array with shape (40000000,)")

    uniform = 1_000_000  # a real directory of uniform zones: its size says little
    storage = LocalStorage(str(world["base"]))
    size = serving.write_directory(
        storage,
        "uniform.dir",
        {"name": "s"},
        {
            "keys": (np.arange(uniform, dtype=np.uint64) // 4 << np.uint64(40))
            | (np.arange(uniform, dtype=np.uint64) % 4 * np.uint64(8192)),
            "lengths": np.full(uniform, 8192, np.uint64),
            "flags": np.full(uniform, serving.HAS_VALUE, np.uint8),
            "ndv": np.ones(uniform, np.uint64),
            "class": np.full(uniform, serving.NO_CLASS, np.uint8),
        },
        [],
        [],
    )
    assert size * 1000 < uniform * 26, size  # 26 MB of body in under 26 KB
    monkeypatch.setattr(query, "load_column", outsized)
    with pytest.raises(OutOfMemoryError, match=r"column 's': its .* zones .* fit in memory") as e:
        index.open(world["idx"]).query("s = 's0-3'")
    assert isinstance(e.value, MemoryError) and "\n" not in str(e.value)
    monkeypatch.setattr(query.ZoneIndex, "_served_table", outsized)  # the export, too
    with pytest.raises(OutOfMemoryError, match="fit in memory"):
        index.open(world["idx"]).zones("s")
