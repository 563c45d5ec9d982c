"""``bloomskip demo --sbbf``: build a filter over 10 million values and show what it does.

The filter alone, without Spark or a lake (``make demo`` runs the Spark job in
:mod:`bloomskip.demo.job`): it sizes a filter from (NDV, FPP) under both policies,
inserts 10M distinct int64 keys and 1M string user ids, probes present and absent keys,
and prints size, fill, measured and predicted FPP, and throughput.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pyarrow as pa

from bloomskip.sbbf import Sbbf
from bloomskip.sbbf.sizing import num_bytes_for
from bloomskip.units import human_bytes


def _keys(n: int, seed: int) -> np.ndarray:
    """``n`` distinct pseudo-random int64 keys (a bijective mix of a counter)."""
    z = (np.arange(n, dtype=np.uint64) + np.uint64(seed)) * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return (z ^ (z >> np.uint64(31))).view(np.int64)


def _timed(fn: Callable[[], object], n: int) -> tuple[object, float]:
    t = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - t) * 1e9 / n


def run(n: int = 10_000_000, fpp: float = 0.01, out: Callable[[str], None] = print) -> None:
    out(f"bloomskip SBBF demo: {n:,} distinct int64 keys, target FPP {fpp}")
    for policy in ("parquet", "putze"):
        out(f"  sizing policy {policy!r:10}: {human_bytes(num_bytes_for(n, fpp, policy))}")

    present = _keys(n, 0)
    absent = _keys(1_000_000, 1 << 40)
    f = Sbbf.with_ndv_fpp(n, fpp, policy="putze")
    Sbbf(32).insert(present[:10])  # compile/load kernels outside the timings
    f.check(present[:10])
    _, ns_insert = _timed(lambda: f.insert(present), n)
    found, ns_check = _timed(lambda: f.check(present), n)
    assert bool(np.all(found)), "an inserted key was reported absent"
    false_pos = f.check(absent)
    out(
        f"  filter: {human_bytes(f.num_bytes)}, fill {f.fill_ratio():.3f}, "
        f"estimated NDV {f.estimated_ndv():,.0f}"
    )
    out(f"  hash+insert {ns_insert:.1f} ns/key, hash+check {ns_check:.1f} ns/key")
    out(
        f"  all {n:,} inserted keys found; FPP measured on 1M absent keys "
        f"{false_pos.mean():.5f}, predicted {f.predicted_fpp(n):.5f}"
    )

    users = pa.array([f"user_{i:09d}" for i in range(1_000_000)])
    g = Sbbf.with_ndv_fpp(len(users), fpp)
    _, ns_str = _timed(lambda: g.insert(users), len(users))
    probe = ["user_000000042", "user_999999999", "nobody"]
    out(
        f"  1M user ids (strings): {human_bytes(g.num_bytes)} (parquet sizing), "
        f"hash+insert {ns_str:.1f} ns/id"
    )
    for value, maybe in zip(probe, g.check(probe), strict=True):
        out(f"    {value!r:18} -> {'may be present' if maybe else 'definitely absent'}")
    folded = g.fold_to_fpp(0.05)
    out(
        f"  folded to target FPP 0.05: {human_bytes(folded.num_bytes)}, fill "
        f"{folded.fill_ratio():.3f}, predicted FPP {folded.predicted_fpp(len(users)):.4f}"
    )
