"""Block rows stored as bit planes (large classes): the same filters, the same answers,
and every damaged or forged byte a typed error, never a missing zone.

The threshold (``serving.PLANES_MIN_ZONES``) is lowered so that small lakes use the
planes layout; each index is compared with the same lake indexed block row by block row.
"""

from __future__ import annotations

import json
import zlib

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bloomskip import index
from bloomskip.errors import CorruptFileError
from bloomskip.index import serving, store
from tests.support.index_dump import check_served, index_tables


def _reference_planes(row: np.ndarray) -> np.ndarray:
    bits = np.unpackbits(row, axis=1, bitorder="little")  # (count, 256)
    return np.packbits(np.ascontiguousarray(bits.T), axis=1, bitorder="little")


@pytest.mark.parametrize("count", [1, 7, 8, 9, 63, 1000])
def test_planes_are_the_bits_of_the_row_and_give_it_back(count):
    rng = np.random.default_rng(count)
    row = rng.integers(0, 256, (count, 32), dtype=np.uint8)
    planes = serving.to_planes(row)
    assert planes.shape == (256, (count + 7) // 8)
    assert np.array_equal(planes, _reference_planes(row))
    assert np.array_equal(serving.from_planes(planes, count), row)
    data, ends = serving.encode_rows(row[None], planes=True)
    assert int(ends[0, 0]) == len(data) and int(ends[1, 0]) == zlib.crc32(data[:2048])
    back = serving.decode_planes_frame(data, int(ends[1, 0]), count, "x")
    assert np.array_equal(back, row)


@pytest.fixture
def lake(tmp_path):
    d = tmp_path / "lake"
    d.mkdir()
    rng = np.random.default_rng(7)
    for i in range(3):
        n = 5000 + 777 * i
        pq.write_table(
            pa.table(
                {
                    "uid": [f"u-{i}-{j}" for j in range(n)],
                    "k": pa.array(rng.integers(0, 10**9, n), pa.int64()),
                }
            ),
            d / f"part-{i}.parquet",
        )
    return d


def _build(lake, path, monkeypatch, planes: bool, **kw):
    monkeypatch.setattr(serving, "PLANES_MIN_ZONES", 1 if planes else 1 << 40)
    index.build(lake, ["uid", "k"], path, zone_rows=256, progress=False, **kw)
    monkeypatch.undo()
    return path


def _classes(path) -> list[dict]:
    m = store.read_manifest(str(path))
    out = []
    for col in m.columns.values():
        for s in col.segments:
            data = (path / s.directory).read_bytes()
            n = int.from_bytes(data[8:12], "little")
            out += json.loads(data[12 : 12 + n])["classes"]
    return out


@pytest.mark.parametrize("sizing", ["putze", "exact"])
def test_a_planes_index_holds_the_same_zones_and_answers_the_same(
    lake, tmp_path, monkeypatch, sizing
):
    rows = _build(lake, tmp_path / "rows", monkeypatch, False, sizing=sizing)
    planes = _build(lake, tmp_path / "planes", monkeypatch, True, sizing=sizing)
    assert all(c.get("layout") == "planes" for c in _classes(planes))
    assert not any("layout" in c for c in _classes(rows))
    a, b = index_tables(rows), index_tables(planes)
    assert a.keys() == b.keys()
    for k in a:  # the Lance zone tables, byte for byte
        assert a[k].equals(b[k]), k
    assert check_served(planes) > 0
    ra, rb = index.open(rows), index.open(planes)
    k = pq.read_table(lake / "part-1.parquet").column("k")[123].as_py()
    wheres = [f"uid = 'u-{i}-{j}'" for i in range(3) for j in (0, 255, 256, 4999)]
    wheres += ["uid = 'nope'", f"k = {k}", f"uid IN ('u-0-1', 'u-2-6000') OR k = {k}"]
    wheres += [f"uid = 'u-1-{j}' AND k = {k}" for j in (122, 123)]
    for where in wheres:
        x, y = ra.query(where), rb.query(where)
        assert [(f.path, f.zones) for f in x.files] == [(f.path, f.zones) for f in y.files], where
    for i, j in [(0, 17), (1, 5776), (2, 6553)]:
        res = rb.query(f"uid = 'u-{i}-{j}'")
        assert any(
            f.path.endswith(f"part-{i}.parquet") and any(s <= j < s + n for s, n in f.zones)
            for f in res.files
        )


def test_a_lookup_reads_eight_planes_and_keeps_them_within_budget(lake, tmp_path, monkeypatch):
    path = _build(lake, tmp_path / "idx", monkeypatch, True)
    ix = index.open(path)
    ix.query("uid = 'u-0-1'", check_source=False)
    (served,) = [d.zones.sources[0].__defaults__[1] for d in ix._columns.values()]
    planes = [k for k in served._rows if len(k) == 4 and k[3] >= 0]
    tables = [k for k in served._rows if len(k) == 4 and k[3] < 0]
    assert len(planes) == 8 and len(tables) == 1
    before = ix.storage.bytes_read
    ix.query("uid = 'u-0-1'", check_source=False)  # all in memory: reads no filter byte
    assert ix.storage.bytes_read - before < 4096  # the fragment rows only
    served._limit = 1
    for j in range(5):
        ix.query(f"uid = 'u-1-{j}'", check_source=False)
    assert len(served._rows) == 1


def _frames(path):
    """Every planes slab of the index, and its directory."""
    m = store.read_manifest(str(path))
    for col in m.columns.values():
        for s in col.segments:
            d = serving.read_directory(index.open(path).storage, s.directory, s.directory_size)
            for cls, c in enumerate(d.classes):
                if c.get("planes"):
                    yield d, cls, c, s


def test_a_damaged_plane_or_table_is_an_error_never_a_missing_zone(lake, tmp_path, monkeypatch):
    import shutil

    good = _build(lake, tmp_path / "good", monkeypatch, True)
    where = "uid = 'u-1-77'"
    want = [(f.path, f.zones) for f in index.open(good).query(where).files]
    d, cls, c, seg = next(_frames(good))
    name, start, end, _crc = d.frame(cls, 0)
    for at in [start, start + 5, start + 1024 + 3, start + 2048, end - 1]:
        bad = tmp_path / f"bad-{at}"
        shutil.copytree(good, bad)
        slab = bad / name
        data = bytearray(slab.read_bytes())
        data[at] ^= 0x10
        slab.write_bytes(bytes(data))
        ix = index.open(bad)
        for b in range(c["blocks"]):  # read every plane of every row of the class
            srv = serving.ServedFilters(ix.storage, [d], [seg.slabs])
            try:
                srv.planes(0, cls, b, list(range(256)))
            except CorruptFileError as e:
                assert "\n" not in str(e)
                break
        else:
            raise AssertionError(f"a flipped byte at {at} was not found")
        try:
            got = [(f.path, f.zones) for f in ix.query(where).files]
        except CorruptFileError:
            continue
        for f in want:  # never fewer candidates
            assert f in got or any(g[0] == f[0] and g[1] is None for g in got)


def test_forged_plane_tables_are_refused(lake, tmp_path, monkeypatch):
    path = _build(lake, tmp_path / "idx", monkeypatch, True)
    d, cls, c, _seg = next(_frames(path))
    count = c["count"]
    name, start, end, _crc = d.frame(cls, 0)
    table = (path / name).read_bytes()[start : start + serving.PLANE_TABLE]
    ends = np.frombuffer(table, "<u4", 256).copy()
    crcs = table[1024:]
    bad = [ends[::-1].copy(), np.zeros(256, "<u4"), ends + 1]
    big = ends.copy()
    big[0] = serving.plane_bytes(count) + 1
    bad.append(big)
    for e in bad:
        forged = e.astype("<u4").tobytes() + crcs
        with pytest.raises(CorruptFileError, match="plane table"):
            serving.plane_table(forged, end - start, count, "x")
    with pytest.raises(CorruptFileError, match="cut short"):
        serving.plane_table(table[:100], end - start, count, "x")


def test_directories_with_planes_are_refused_by_the_older_magic(lake, tmp_path, monkeypatch):
    path = _build(lake, tmp_path / "idx", monkeypatch, True)
    m = store.read_manifest(str(path))
    s = m.columns["uid"].segments[0]
    f = path / s.directory
    data = f.read_bytes()
    assert data[:8] == serving.DIR_MAGIC_PLANES
    old = serving.DIR_MAGIC + data[8:-4]
    f.write_bytes(old + zlib.crc32(old).to_bytes(4, "little"))
    with pytest.raises(CorruptFileError, match="laid out as 'planes'"):
        index.open(path).query("uid = 'u-0-1'")
    n = int.from_bytes(data[8:12], "little")
    header = json.loads(data[12 : 12 + n])
    header["classes"][0]["layout"] = "sheets"  # as long: the manifest keeps its size
    text = json.dumps(header, separators=(",", ":")).encode()
    new = data[:8] + len(text).to_bytes(4, "little") + text + data[12 + n : -4]
    f.write_bytes(new + zlib.crc32(new).to_bytes(4, "little"))
    with pytest.raises(CorruptFileError, match="laid out as 'sheets'"):
        index.open(path).query("uid = 'u-0-1'")


def test_refresh_and_compaction_carry_planes_to_rows_and_back(lake, tmp_path, monkeypatch):
    path = _build(lake, tmp_path / "idx", monkeypatch, True)
    pq.write_table(pa.table({"uid": ["new-1"], "k": pa.array([5], pa.int64())}),
                   lake / "part-9.parquet")  # fmt: skip
    index.refresh(path, progress=False)  # a small rows segment beside the planes one
    layouts = {c.get("layout", "rows") for c in _classes(path)}
    assert layouts == {"rows", "planes"}
    ix = index.open(path)
    assert ix.query("uid = 'new-1'").paths == [str(lake / "part-9.parquet")]
    assert check_served(path) > 0
    (lake / "part-0.parquet").unlink()
    for _ in range(3):  # dropped files pile up: compaction reads the planes slabs
        index.refresh(path, progress=False)
    assert check_served(path) > 0
    assert index.open(path).query("uid = 'u-1-5'").files
