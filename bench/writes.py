"""What a build's bulk writes and part checksums cost, each beside its baseline in the same run.

1. **Page cache**: ``--files`` files of ``--mib`` MiB written one after another into a
   temporary directory under ``--dir`` (default: the system's), each fsynced, as they are
   (the baseline) and then synced and dropped from the page cache
   (``POSIX_FADV_DONTNEED``) before the next, as :mod:`bloomskip.index.storage` writes
   objects of ``DROP_BYTES`` or more. Rounds alternate; the report is the median of each.
   On a machine whose free pages are cheap the two are close; where the kernel must make
   room (a page cache full of a lake, a VM handing free memory back to its host) dropping
   lets each file reuse the pages of the one before.
2. **Checksums** of 10 KB pieces (a task's block row of 325 zones): CRC-32 (zlib) against
   XXH3-64 (xxhash), as parts check their pieces.

    .venv/bin/python bench/writes.py [--dir DIR] [--files 32] [--mib 40] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import zlib

import numpy as np
import xxhash


def write_all(root: str, data: bytes, files: int, drop: bool) -> float:
    t0 = time.perf_counter()
    for i in range(files):
        path = os.path.join(root, f"w{i}")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
            if drop:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    took = time.perf_counter() - t0
    for i in range(files):
        os.unlink(os.path.join(root, f"w{i}"))
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default=None)
    ap.add_argument("--files", type=int, default=32)
    ap.add_argument("--mib", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(int(time.time()))
    data = rng.integers(0, 256, args.mib << 20, dtype=np.uint8).tobytes()
    got: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(dir=args.dir) as root:
        for _ in range(args.rounds):
            for drop in (False, True):
                got[drop].append(write_all(root, data, args.files, drop))
    total = args.files * args.mib / 1024
    plain, dropped = statistics.median(got[False]), statistics.median(got[True])
    print(f"{args.files} files of {args.mib} MiB ({total:.2f} GiB), median of {args.rounds}:")
    print(f"  written and fsynced:          {plain:6.2f} s  {[round(x, 2) for x in got[False]]}")
    print(f"  ... and dropped after each:   {dropped:6.2f} s  {[round(x, 2) for x in got[True]]}")
    print(f"  ratio (as is / dropped):      {plain / dropped:6.2f}")

    piece = rng.integers(0, 256, 10_400, dtype=np.uint8).tobytes()
    n = 20_000

    def per_call(fn) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            fn(piece)
        return (time.perf_counter() - t0) / n * 1e6

    crc = statistics.median(per_call(lambda b: zlib.crc32(b, 12345)) for _ in range(3))
    xxh = statistics.median(
        per_call(lambda b: xxhash.xxh3_64_intdigest(b, seed=12345)) for _ in range(3)
    )
    print(
        f"checksum of a 10 KB piece: CRC-32 {crc:.2f} us, XXH3-64 {xxh:.2f} us, "
        f"ratio {crc / xxh:.1f}"
    )


if __name__ == "__main__":
    main()
