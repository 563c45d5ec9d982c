"""Parts and slabs at the byte level: what a task writes of its zone filters comes back
row for row, and a slab job places every source's blocks where the plan says."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from bloomskip.index import partfile, serving
from bloomskip.index.storage import open_storage


def _reference_scatter(out: np.ndarray, got: np.ndarray, cols: np.ndarray) -> None:
    keep = cols >= 0
    out[:, cols[keep], :] = got[:, keep, :]


@pytest.mark.parametrize("layout", ["runs", "sorted", "shuffled", "none", "all_runs"])
@pytest.mark.parametrize("seed", range(12))
def test_scatter_places_every_kept_zone(layout, seed):
    rng = np.random.default_rng(seed)
    rows, count = int(rng.integers(1, 6)), int(rng.integers(1, 80))
    k = int(rng.integers(0, 60))
    m = min(k, count) if layout != "none" else 0
    cols = np.full(k, -1, np.int64)
    if layout in ("runs", "all_runs"):  # files' zones: runs kept together
        start = int(rng.integers(0, count - m + 1))
        pos = np.arange(start, start + m)
        sel = np.arange(m) if layout == "all_runs" else np.sort(rng.choice(k, m, replace=False))
    elif layout == "sorted":
        pos = np.sort(rng.choice(count, m, replace=False))
        sel = np.sort(rng.choice(k, m, replace=False))
    else:
        pos = rng.choice(count, m, replace=False)
        sel = rng.choice(k, m, replace=False)
    cols[sel] = pos
    got = rng.integers(0, 256, (rows, k, 32), dtype=np.uint8)
    want = rng.integers(0, 256, (rows, count, 32), dtype=np.uint8)
    out = want.copy()
    _reference_scatter(want, got, cols)
    serving._scatter(out, got, cols)
    assert np.array_equal(out, want)


@pytest.mark.parametrize("seed", range(8))
def test_part_rows_are_the_filters_block_major(tmp_path, seed):
    rng = np.random.default_rng(100 + seed)
    sizes = rng.choice([0, 32, 64, 96, 256, 1024, 50, 2048], int(rng.integers(0, 50)))
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    data = rng.integers(0, 256, int(offsets[-1]), dtype=np.uint8)
    storage = open_storage(str(tmp_path / "ix"))
    rel = "columns/0-x/p.blocks"
    zone_class, classes, size = partfile.write_part(storage, rel, data, offsets)
    assert size == storage.size(rel)
    part = partfile.Part(rel, tuple(classes), size)
    rank = {c: 0 for c in range(len(classes))}
    for z, n in enumerate(sizes.tolist()):
        blocks = n // 32
        usable = n > 0 and n % 32 == 0 and blocks & (blocks - 1) == 0
        if not usable:
            assert zone_class[z] == serving.NO_CLASS
            continue
        c = int(zone_class[z])
        assert classes[c][0] == blocks
        rows = part.rows(storage, c, 0, blocks)  # every row, each checksum checked
        want = data[offsets[z] : offsets[z + 1]].reshape(blocks, 32)
        assert np.array_equal(rows[:, rank[c], :], want)
        rank[c] += 1
    assert [rank[c] for c in range(len(classes))] == [n for _, n in classes]


def test_encode_rows_round_trips():
    rng = np.random.default_rng(7)
    for density in (0.0, 0.25, 1.0):
        rows = rng.integers(0, 256, (5, 40, 32), dtype=np.uint8)
        rows = rows * (rng.random(rows.shape) < density)
        rows = rows.astype(np.uint8)
        data, ends = serving.encode_rows(rows)
        at = 0
        for b in range(rows.shape[0]):
            end = int(ends[0, b])
            frame = data[at:end]
            assert np.array_equal(serving.decode_row(frame, 40, "t"), rows[b])
            at = end
        assert at == len(data)


@pytest.mark.parametrize("direct", [True, False], ids=["preadv", "one-range-copy"])
def test_read_into_fills_buffers_in_order_and_stops_where_the_object_ends(tmp_path, direct):
    from bloomskip.index.storage import Storage

    storage = open_storage(str(tmp_path / "ix"))
    data = np.random.default_rng(3).integers(0, 256, 50_000, dtype=np.uint8).tobytes()
    storage.write("columns/0-x/o.blocks", data)
    read = storage.read_into if direct else lambda *a: Storage.read_into(storage, *a)
    for start, sizes in [(0, [7] * 3000), (11, [0, 5, 1000, 0, 3]), (49_990, [4, 4, 4])]:
        bufs = [np.full(n, 255, np.uint8) for n in sizes]  # 3000 buffers: batched
        got = read("columns/0-x/o.blocks", start, [memoryview(b) for b in bufs])
        want = data[start : start + sum(sizes)]
        assert got == len(want)
        joined = b"".join(b.tobytes() for b in bufs)
        assert joined[:got] == want and set(joined[got:]) <= {255}
    with pytest.raises(FileNotFoundError):
        read("columns/0-x/none.blocks", 0, [memoryview(np.zeros(4, np.uint8))])


def _two_parts(tmp_path):
    rng = np.random.default_rng(5)
    storage = open_storage(str(tmp_path / "ix"))
    parts = []
    for i, zones in enumerate((3, 5)):
        data = rng.integers(0, 256, zones * 4 * 32, dtype=np.uint8)
        offsets = np.arange(zones + 1, dtype=np.int64) * 128
        rel = f"columns/0-x/p{i}.blocks"
        _, classes, size = partfile.write_part(storage, rel, data, offsets)
        parts.append((partfile.Part(rel, tuple(classes), size), data.reshape(zones, 4, 32)))
    return storage, parts


def test_a_slab_reads_each_parts_run_of_zones_in_place_as_the_gather_would(tmp_path, monkeypatch):
    storage, parts = _two_parts(tmp_path)
    sources = (
        (parts[0][0], 0, np.arange(5, 8)),  # the first part's zones go last
        (parts[1][0], 0, np.arange(0, 5)),
    )
    job = serving.SlabJob("columns/0-x/s.c0-0.slab", 4, 8, 1, 3, sources)
    direct = serving.build_slab(storage, job)
    data_direct = storage.read(job.rel)
    monkeypatch.setattr(serving, "_one_run", lambda cols: None)
    assert np.array_equal(serving.build_slab(storage, job), direct)
    assert storage.read(job.rel) == data_direct
    want = np.concatenate([parts[1][1], parts[0][1]])[:, 1:3, :].transpose(1, 0, 2)
    at = 0
    for b in range(2):
        end = int(direct[0, b])
        assert np.array_equal(serving.decode_row(data_direct[at:end], 8, "t"), want[b])
        at = end


def test_a_damaged_part_fails_the_slab_read_in_place(tmp_path):
    from bloomskip.errors import CorruptFileError

    storage, parts = _two_parts(tmp_path)
    part = parts[1][0]
    path = tmp_path / "ix" / part.rel
    raw = bytearray(path.read_bytes())
    raw[-200] ^= 1  # a bit of the class matrix's last rows
    path.write_bytes(bytes(raw))
    out = np.zeros((4, 5, 32), np.uint8)
    with pytest.raises(CorruptFileError, match="fails its checksum"):
        part.rows_into(storage, 0, 0, 4, out)
    short = partfile.Part(part.rel, part.classes, part.size)
    path.write_bytes(bytes(raw[: part.size - 100]))
    with pytest.raises(CorruptFileError):
        short.rows_into(storage, 0, 0, 4, out)


def _sparse_parts(tmp_path, zone_counts, blocks=8, seed=9):
    """Parts whose filters are a quarter ones, as Lance's defaults make them: their
    pieces compress."""
    rng = np.random.default_rng(seed)
    storage = open_storage(str(tmp_path / "ix"))
    parts = []
    for i, zones in enumerate(zone_counts):
        bits = rng.random((zones * blocks * 32, 8)) < 0.22
        data = np.packbits(bits, axis=1).reshape(-1)
        offsets = np.arange(zones + 1, dtype=np.int64) * blocks * 32
        rel = f"columns/0-x/q{i}.blocks"
        _, classes, size = partfile.write_part(storage, rel, data, offsets)
        parts.append((partfile.Part(rel, tuple(classes), size), data.reshape(zones, blocks, 32)))
    return storage, parts


def test_a_slab_of_parts_is_their_pieces_back_to_back_and_decodes_to_the_rows(tmp_path):
    storage, parts = _sparse_parts(tmp_path, (300, 700, 60, 400))
    count, at, sources = 1460, 0, []
    for part, zones in parts:
        sources.append((part, 0, np.arange(at, at + zones.shape[0])))
        at += zones.shape[0]
    job = serving.SlabJob("columns/0-x/s.c0-0.slab", 8, count, 2, 6, tuple(sources))
    ends = serving.build_slab(storage, job)
    data = storage.read(job.rel)
    want = np.concatenate([z for _, z in parts])[:, 2:6, :].transpose(1, 0, 2)
    start = 0
    for r in range(4):
        frame = data[start : int(ends[0, r])]
        pieces = b"".join(bytes(p.pieces(storage, 0, 2 + r, 3 + r)[0]) for p, _ in parts)
        assert frame == pieces and len(frame) < count * 32  # copied, not made again
        assert zlib.crc32(frame) == int(ends[1, r])
        assert np.array_equal(serving.decode_row(frame, count, "t"), want[r])
        start = int(ends[0, r])


def test_pieces_that_would_not_be_smaller_than_their_row_are_stored_as_is(tmp_path):
    storage, parts = _two_parts(tmp_path)  # random bytes: zstd cannot shrink them
    sources = ((parts[0][0], 0, np.arange(0, 3)), (parts[1][0], 0, np.arange(3, 8)))
    job = serving.SlabJob("columns/0-x/s.c0-0.slab", 4, 8, 0, 4, sources)
    ends = serving.build_slab(storage, job)
    assert np.array_equal(ends[0], np.arange(1, 5, dtype=np.uint64) * 8 * 32)
    data = storage.read(job.rel)
    want = np.concatenate([parts[0][1], parts[1][1]]).transpose(1, 0, 2)
    assert data == want.tobytes()


def test_a_slab_gathers_rows_when_parts_do_not_tile_its_zones_in_order(tmp_path):
    storage, parts = _sparse_parts(tmp_path, (3, 4))
    sources = ((parts[0][0], 0, np.array([0, 1, -1])), (parts[1][0], 0, np.arange(2, 6)))
    job = serving.SlabJob("columns/0-x/s.c0-0.slab", 8, 6, 0, 8, sources)
    ends = serving.build_slab(storage, job)
    data = storage.read(job.rel)
    both = np.concatenate([parts[0][1][:2], parts[1][1]]).transpose(1, 0, 2)
    start = 0
    for r in range(8):
        assert np.array_equal(serving.decode_row(data[start : int(ends[0, r])], 6, "t"), both[r])
        start = int(ends[0, r])


@pytest.mark.parametrize("where", ["piece", "ends", "checksums"])
def test_a_damaged_part_fails_the_slab_that_copies_its_pieces(tmp_path, where):
    from bloomskip.errors import CorruptFileError

    storage, parts = _sparse_parts(tmp_path, (3, 4))
    part = parts[1][0]
    header, _ = partfile.read_header(storage, part.rel, partfile.PART_MAGIC, part.size)
    section = {"piece": "c0", "ends": "e0", "checksums": "k0"}[where]
    off, length = header["sections"][section]
    path = tmp_path / "ix" / part.rel
    raw = bytearray(path.read_bytes())
    raw[off + length // 2] ^= 0x40
    path.write_bytes(bytes(raw))
    sources = ((parts[0][0], 0, np.arange(0, 3)), (part, 0, np.arange(3, 7)))
    job = serving.SlabJob("columns/0-x/s.c0-0.slab", 8, 7, 0, 8, sources)
    with pytest.raises(CorruptFileError, match=part.rel.split("/")[-1]):
        serving.build_slab(storage, job)
    assert not (tmp_path / "ix" / job.rel).exists()
