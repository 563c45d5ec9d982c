"""What storing a block row as bit planes costs, each way beside the one bloomskip uses.

A class of 16,384 zones or more stores each block row as 256 bit planes, each its own
zstd frame (:mod:`bloomskip.index.serving`): a lookup reads and decodes the 8 planes its
value needs. Building them is most of a large Spark build's slab job. This script makes
block rows like a 200M (26,000 zones) or 2B (262,144 zones) lake's - filters of 1,024
blocks holding 8,192 values, so each 32-bit word of a block has Poisson(8) bits set -
and times, per row, the ways to store its planes:

* ``planes``: 256 zstd frames of one plane each (what bloomskip writes);
* ``groups of G``: 256 / G frames of G planes each (a lookup then decodes G times the
  bytes: the "lookup" column is 8 such frames);
* ``dictionary``: one plane a frame, compressed with a zstd dictionary trained on planes
  (its entropy tables could spare each frame building its own);
* ``no entropy coding``: zstd level -1 (no Huffman: the size is the point);
* ``whole row``: one frame of the row (what a class below 16,384 zones stores).

Times are per row, the fastest of three rounds over ``--rows`` rows; sizes are compressed /
raw.

    .venv/bin/python bench/planes.py [--zones 26000,262144] [--rows 6]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa
import zstandard

from bloomskip.index import serving


def block_row(rng: np.random.Generator, zones: int) -> np.ndarray:
    """Block ``b`` of ``zones`` filters of 1,024 blocks and 8,192 values: each word holds
    Poisson(8) random bits (some coincide), as an SBBF sets one bit per word a value."""
    words = np.zeros((zones, 8), np.uint32)
    counts = rng.poisson(8, size=(zones, 8))
    for t in range(int(counts.max())):
        bit = rng.integers(0, 32, size=(zones, 8)).astype(np.uint32)
        words |= np.where(t < counts, np.uint32(1) << bit, np.uint32(0)).astype(np.uint32)
    return words.view(np.uint8).reshape(zones, 32)


def timed(fn, items) -> tuple[float, int]:
    """Ms per item of ``fn(item)`` over ``items`` (the fastest of three rounds: what a
    busy or noisy machine adds is not the method's), and the bytes one round returned."""
    best, size = float("inf"), 0
    for _ in range(3):
        t0 = time.perf_counter()
        size = sum(fn(item) for item in items)
        best = min(best, (time.perf_counter() - t0) / len(items))
    return best * 1e3, size


def lookup_ms(frames: list[bytes], n: int) -> float:
    """A lookup's decoding: 8 of the frames (one per word), pyarrow's zstd, as served."""
    codec = pa.Codec("zstd")
    picks = [frames[j * len(frames) // 8] for j in range(8)]
    t0 = time.perf_counter()
    for _ in range(50):
        for f in picks:
            codec.decompress(f, decompressed_size=n, asbytes=True)
    return (time.perf_counter() - t0) / 50 * 1e3


def bench(zones: int, rows: int) -> None:
    rng = np.random.default_rng(zones)
    block_rows = [block_row(rng, zones) for _ in range(rows)]
    planes = [serving.to_planes(r) for r in block_rows]
    raw = sum(p.nbytes for p in planes)
    c1 = zstandard.ZstdCompressor(level=1)
    print(
        f"\n{zones:,} zones: a row is {block_rows[0].nbytes / 1024:.0f} KiB, a plane "
        f"{planes[0].shape[1]:,} B; ms per row, compressed / raw, lookup = 8 frames decoded"
    )
    base = None
    lines = []
    for g in (1, 2, 4, 8):
        kept: list[list[bytes]] = []

        def grouped(p, g=g, kept=kept):
            frames = [c1.compress(x) for x in p.reshape(256 // g, -1)]
            kept[:] = [frames]
            return sum(map(len, frames))

        ms, size = timed(grouped, planes)
        look = lookup_ms(kept[0], planes[0].shape[1] * g)
        base = base or ms
        name = "planes (bloomskip)" if g == 1 else f"groups of {g} planes"
        lines.append((name, ms, size / raw, look))
    samples = [p[i].tobytes() for p in planes[:2] for i in range(0, 256, 4)]
    trained = zstandard.train_dictionary(16384, samples * 2)
    cd = zstandard.ZstdCompressor(level=1, dict_data=trained)
    ms, size = timed(lambda p: sum(len(cd.compress(x)) for x in p), planes)
    lines.append(("dictionary, a plane a frame", ms, size / raw, float("nan")))
    cn = zstandard.ZstdCompressor(level=-1)
    ms, size = timed(lambda p: sum(len(cn.compress(x)) for x in p), planes)
    lines.append(("no entropy coding (level -1)", ms, size / raw, float("nan")))
    ms, size = timed(lambda r: len(c1.compress(r.tobytes())), block_rows)
    lines.append(("whole row, one frame", ms, size / raw, float("nan")))
    for name, ms, ratio, look in lines:
        print(f"  {name:30s} {ms:7.2f} ms ({ms / base:4.2f}x)  size {ratio:.3f}  "
              f"lookup {look:.3f} ms")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zones", default="26000,262144", help="zones per class, comma-separated")
    ap.add_argument("--rows", type=int, default=6, help="block rows per measure")
    args = ap.parse_args()
    for zones in [int(z) for z in args.zones.split(",")]:
        bench(zones, args.rows)


if __name__ == "__main__":
    main()
