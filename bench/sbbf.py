"""Single-threaded SBBF benchmark: bloomskip against the C reference, same process, same data.

The C reference (``../shared/bench/ref_sbbf.c``, XXH64 from libxxhash, AVX2 block
insert/check with prefetch) is built as a shared library into ``bench/.build/`` and called
through ctypes, so both implementations run on the same buffers, in the same process,
interleaved rep by rep: compare the ratios, not the absolute times (shared machines drift).

Datasets (exactly those of the header comment of ``ref_sbbf.c``, generated with numpy)::

    mix(i)     = splitmix64 finaliser of (i+1) * 0x9E3779B97F4A7C15
    int64[i]   = mix(i)                                     i in [0, 2N)
    str16[i]   = 16 lowercase hex digits of mix(i + 2**36)
    uuid36[i]  = hex(mix(2i + 2**37)) . hex(mix(2i+1 + 2**37)), dashed 8-4-4-4-12
    rows [0, N) are inserted; query j = row j if mix(j + 3 * 2**36) >> 63 else row N + j

Workloads, per dataset (ns per value, median of ``--reps``):

    hash          C lib_hash_*            bloomskip.hash_values(values)   (public, allocates)
    hash/kernel   C lib_hash_*            hashing.kernels.hash_words/hash_var (preallocated)
    insert        C lib_insert_avx2_pf    Sbbf.insert_hashes
    check         C lib_check_avx2_pf     Sbbf.check_hashes               (half present)
    hash+insert   C lib_hash_insert_2p_*  Sbbf.insert(numpy int64 / pyarrow string array)
    hash+check    C lib_hash_check_2p_*   Sbbf.check(...)

Every run also verifies the results: equal hashes, equal filter bytes after each insert,
equal check answers.

    .venv/bin/python bench/sbbf.py [--quick | --n N] [--reps R] [--json PATH]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

REPO = Path(__file__).resolve().parent.parent
BUILD = REPO / "bench" / ".build"
LIB = BUILD / "libsbbf_ref.so"

SIZES = [(32 << 10, "32KiB"), (1 << 20, "1MiB"), (16 << 20, "16MiB"), (128 << 20, "128MiB")]
DATASETS = ("int64", "str16", "uuid36")
#: bloomskip / C above this is flagged in the table.
FLAG_RATIO = 1.5

FIRST_CALL = (
    "import time; t=time.perf_counter(); import bloomskip, numpy as np; "
    "f=bloomskip.Sbbf(1<<20); f.insert(np.arange(10)); f.check(np.arange(10)); "
    "f.insert(['a']); print(time.perf_counter()-t)"
)

_U64 = np.uint64


# ----------------------------------------------------------------------------- C side


def shared_dir() -> Path:
    """``../shared`` next to the repository, or ``$BLOOMSKIP_SHARED``."""
    env = os.environ.get("BLOOMSKIP_SHARED")
    return Path(env).resolve() if env else REPO.parent / "shared"


def _ensure_libxxhash() -> None:
    if Path("/usr/include/xxhash.h").exists():
        return
    print("installing libxxhash-dev (Debian) ...", file=sys.stderr)
    sudo = [] if os.geteuid() == 0 else (["sudo"] if shutil.which("sudo") else [])
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run([*sudo, "apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run([*sudo, "apt-get", "install", "-y", "-qq", "libxxhash-dev"], check=True, env=env)


def build_reference() -> Path:
    """Build ``libsbbf_ref.so`` into bench/.build (again only when the source is newer)."""
    src = shared_dir() / "bench" / "ref_sbbf.c"
    if not src.exists():
        raise SystemExit(f"C reference not found at {src} (set BLOOMSKIP_SHARED)")
    if LIB.exists() and LIB.stat().st_mtime >= src.stat().st_mtime:
        return LIB
    _ensure_libxxhash()
    BUILD.mkdir(parents=True, exist_ok=True)
    cmd = [
        "gcc",
        "-O3",
        "-march=native",
        "-fopenmp",
        "-fPIC",
        "-shared",
        "-DSBBF_LIB",
        str(src),
        "-o",
        str(LIB),
        "-lxxhash",
    ]
    subprocess.run(cmd, check=True)
    return LIB


class Reference:
    """ctypes bindings of the exported C kernels (all single-threaded)."""

    def __init__(self, path: Path) -> None:
        lib = ctypes.CDLL(str(path))
        p, n = ctypes.c_void_p, ctypes.c_size_t
        u64 = ctypes.c_uint64
        sig = {
            "lib_hash_i64": ([p, n, p], None),
            "lib_hash_arrow": ([p, p, n, p], None),
            "lib_insert_avx2_pf": ([p, u64, p, n], None),
            "lib_check_avx2_pf": ([p, u64, p, n, p], n),
            "lib_hash_insert_2p_i64": ([p, u64, p, n], None),
            "lib_hash_insert_2p_arrow": ([p, u64, p, p, n], None),
            "lib_hash_check_2p_i64": ([p, u64, p, n, p], n),
            "lib_hash_check_2p_arrow": ([p, u64, p, p, n, p], n),
        }
        for name, (args, res) in sig.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, res
            setattr(self, name[4:], fn)


def _ptr(a: np.ndarray) -> int:
    return a.ctypes.data


# ----------------------------------------------------------------------------- data


def mix(i: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser of ``(i + 1) * golden``, vectorized (uint64 wraps)."""
    z = (i.astype(_U64) + _U64(1)) * _U64(0x9E3779B97F4A7C15)
    z ^= z >> _U64(30)
    z *= _U64(0xBF58476D1CE4E5B9)
    z ^= z >> _U64(27)
    z *= _U64(0x94D049BB133111EB)
    z ^= z >> _U64(31)
    return z


def _mix_py(i: int) -> int:
    m = (1 << 64) - 1
    z = ((i + 1) * 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def hex_rows(v: np.ndarray) -> np.ndarray:
    """``(len(v), 16)`` uint8: the 16 lowercase hex digits of each uint64, high digit first."""
    be = v.astype(">u8").view(np.uint8).reshape(-1, 8)
    out = np.empty((v.shape[0], 16), dtype=np.uint8)
    out[:, 0::2] = _HEX[be >> 4]
    out[:, 1::2] = _HEX[be & 15]
    return out


def query_rows(n: int) -> np.ndarray:
    """Row probed by query j: j (present) or N + j (absent)."""
    j = np.arange(n, dtype=np.int64)
    present = (mix(j + 3 * (1 << 36)) >> _U64(63)).astype(bool)
    return np.where(present, j, n + j)


class Dataset:
    """Inserted rows [0, N) and the N query rows, as numpy (and Arrow, for strings)."""

    name: str
    n: int
    values: np.ndarray  # int64 values, or string data (uint8)
    qvalues: np.ndarray
    offsets: np.ndarray | None = None  # int32 Arrow offsets (strings)
    qoffsets: np.ndarray | None = None
    arrow: Any = None  # what the public API is given (numpy int64 / pa.StringArray)
    qarrow: Any = None

    def __init__(self, name: str, n: int) -> None:
        self.name, self.n = name, n
        src = query_rows(n)
        if name == "int64":
            allv = mix(np.arange(2 * n, dtype=np.int64)).view(np.int64)
            self.values = allv[:n].copy()
            self.qvalues = allv[src]
            self.arrow, self.qarrow = self.values, self.qvalues
            self._spot_check()
            return
        width = 16 if name == "str16" else 36
        if 2 * n * width >= 2**31:
            raise SystemExit(f"--n {n} too large for int32 Arrow offsets of {name}")
        if name == "str16":
            rows = hex_rows(mix(np.arange(2 * n, dtype=np.int64) + (1 << 36)))
        else:
            pairs = mix(np.arange(4 * n, dtype=np.int64) + (1 << 37))
            digits = hex_rows(pairs).reshape(2 * n, 32)  # hex(mix(2i)) . hex(mix(2i+1))
            rows = np.full((2 * n, 36), ord("-"), dtype=np.uint8)
            for a, b, c in ((0, 8, 0), (9, 13, 8), (14, 18, 12), (19, 23, 16), (24, 36, 20)):
                rows[:, a:b] = digits[:, c : c + (b - a)]
            del digits
        self.values = np.ascontiguousarray(rows[:n]).reshape(-1)
        self.qvalues = rows[src].reshape(-1)
        del rows
        self.offsets = np.arange(0, (n + 1) * width, width, dtype=np.int32)
        self.qoffsets = self.offsets
        self.arrow = _string_array(self.offsets, self.values)
        self.qarrow = _string_array(self.qoffsets, self.qvalues)
        self._spot_check()

    def row(self, i: int, query: bool = False) -> bytes:
        vals = self.qvalues if query else self.values
        if self.offsets is None:
            return int(vals[i]).to_bytes(8, "little", signed=True)
        off = self.qoffsets if query else self.offsets
        return vals[off[i] : off[i + 1]].tobytes()

    def _spot_check(self) -> None:
        """A few rows against a plain-Python reading of the ref_sbbf.c header comment."""
        n = self.n
        for j in sorted({0, 1, n // 3, n // 2 + 1, n - 1}):
            src = j if _mix_py(j + 3 * (1 << 36)) >> 63 else n + j
            for i, query in ((j, False), (j, True)):
                r = src if query else i
                if self.name == "int64":
                    want = _mix_py(r).to_bytes(8, "little")
                elif self.name == "str16":
                    want = f"{_mix_py(r + (1 << 36)):016x}".encode()
                else:
                    h = f"{_mix_py(2 * r + (1 << 37)):016x}{_mix_py(2 * r + 1 + (1 << 37)):016x}"
                    want = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}".encode()
                got = self.row(i, query)
                if got != want:
                    raise AssertionError(f"{self.name} row {r}: {got!r} != {want!r}")


def _string_array(offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    return pa.StringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(data))


# ----------------------------------------------------------------------------- timing


def _vm_busy() -> float:
    """Non-idle CPU seconds of the whole machine (all CPUs, incl. steal)."""
    with open("/proc/stat") as fh:
        f = [int(x) for x in fh.readline().split()[1:9]]
    return (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) / os.sysconf("SC_CLK_TCK")


def _self_cpu() -> float:
    t = os.times()
    return t.user + t.system


class Bench:
    """Interleaved C / bloomskip timings of one workload; results collected in ``rows``."""

    def __init__(self, reps: int) -> None:
        self.reps = reps
        self.rows: list[dict[str, Any]] = []

    def run(
        self,
        dataset: str,
        workload: str,
        size: str,
        n: int,
        c_fn: Callable[[], Any],
        py_fn: Callable[[], Any],
        setup: Callable[[str], None] | None = None,
    ) -> tuple[Any, Any]:
        times: dict[str, list[float]] = {"c": [], "bloomskip": []}
        loads: list[float] = []
        out: dict[str, Any] = {}
        for r in range(self.reps):
            order = (("c", c_fn), ("bloomskip", py_fn))
            for side, fn in order if r % 2 == 0 else order[::-1]:
                if setup is not None:
                    setup(side)  # resets only this side's filter
                b0, s0 = _vm_busy(), _self_cpu()
                t0 = time.perf_counter()
                out[side] = fn()
                dt = time.perf_counter() - t0
                times[side].append(dt * 1e9 / n)
                loads.append(((_vm_busy() - b0) - (_self_cpu() - s0)) / dt)
        c_ns = statistics.median(times["c"])
        py_ns = statistics.median(times["bloomskip"])
        row = {
            "dataset": dataset,
            "workload": workload,
            "size": size,
            "c_ns": c_ns,
            "bloomskip_ns": py_ns,
            "ratio": py_ns / c_ns,
            "c_reps": times["c"],
            "bloomskip_reps": times["bloomskip"],
            "foreign_load_max": max(loads),
        }
        self.rows.append(row)
        flag = "  <-- > 1.5" if row["ratio"] > FLAG_RATIO else ""
        print(
            f"  {dataset:7s} {workload:12s} {size:7s} C {c_ns:7.2f}  bloomskip {py_ns:7.2f}"
            f"  ratio {row['ratio']:5.2f}{flag}",
            file=sys.stderr,
            flush=True,
        )
        return out["c"], out["bloomskip"]


def _check(ok: bool, what: str) -> None:
    if not ok:
        raise AssertionError(f"verification failed: {what}")


# ----------------------------------------------------------------------------- workloads


def bench_dataset(ds: Dataset, ref: Reference, bench: Bench) -> dict[str, Any]:
    import bloomskip
    from bloomskip.hashing import kernels as hk

    n = ds.n
    name = ds.name
    is_str = ds.offsets is not None
    h_c = np.empty(n, dtype=np.uint64)
    hq = np.empty(n, dtype=np.uint64)
    res_c = np.empty(n, dtype=np.uint8)
    out_k = np.empty(n, dtype=np.uint64)
    if is_str:
        ref.hash_arrow(_ptr(ds.qoffsets), _ptr(ds.qvalues), n, _ptr(hq))
        c_hash = lambda: ref.hash_arrow(_ptr(ds.offsets), _ptr(ds.values), n, _ptr(h_c))  # noqa: E731
        k_hash = lambda: hk.hash_var(ds.offsets, ds.values, out_k, hk.XXHASH64)  # noqa: E731
    else:
        ref.hash_i64(_ptr(ds.qvalues), n, _ptr(hq))
        c_hash = lambda: ref.hash_i64(_ptr(ds.values), n, _ptr(h_c))  # noqa: E731
        words = ds.values.view(np.uint64)
        k_hash = lambda: hk.hash_words(words, out_k)  # noqa: E731

    # warm-up: every numba kernel used below is compiled / loaded from cache here
    warm = bloomskip.Sbbf(1 << 20)
    small = ds.arrow[:1000]
    warm.insert(small)
    warm.check(small)
    warm.insert_hashes(hq[:1000])
    warm.check_hashes(hq[:1000])
    bloomskip.hash_values(small)
    k_hash()

    _, h_py = bench.run(name, "hash", "-", n, c_hash, lambda: bloomskip.hash_values(ds.arrow))
    _check(np.array_equal(h_c, h_py), f"{name}: hash_values != C XXH64")
    out_k[:] = 0
    bench.run(name, "hash/kernel", "-", n, c_hash, k_hash)
    _check(np.array_equal(h_c, out_k), f"{name}: hash kernel != C XXH64")
    del h_py

    for num_bytes, size in SIZES:
        z = num_bytes // 32
        f_c = bloomskip.Sbbf(num_bytes).words  # same allocator as bloomskip's filter
        f_py = bloomskip.Sbbf(num_bytes)

        def reset(side: str, f_c: np.ndarray = f_c, f_py: Any = f_py) -> None:
            (f_c if side == "c" else f_py.words).fill(0)

        bench.run(
            name,
            "insert",
            size,
            n,
            lambda f_c=f_c, z=z: ref.insert_avx2_pf(_ptr(f_c), z, _ptr(h_c), n),
            lambda f_py=f_py: f_py.insert_hashes(h_c),
            reset,
        )
        _check(np.array_equal(f_c, f_py.words), f"{name} {size}: insert_hashes filter bytes")
        reference = f_c.copy()

        _, found = bench.run(
            name,
            "check",
            size,
            n,
            lambda f_c=f_c, z=z: ref.check_avx2_pf(_ptr(f_c), z, _ptr(hq), n, _ptr(res_c)),
            lambda f_py=f_py: f_py.check_hashes(hq),
        )
        _check(np.array_equal(res_c.view(np.bool_), found), f"{name} {size}: check_hashes")
        hits = int(found.sum())

        if is_str:
            c_ins = lambda f_c=f_c, z=z: ref.hash_insert_2p_arrow(  # noqa: E731
                _ptr(f_c), z, _ptr(ds.offsets), _ptr(ds.values), n
            )
            c_chk = lambda f_c=f_c, z=z: ref.hash_check_2p_arrow(  # noqa: E731
                _ptr(f_c), z, _ptr(ds.qoffsets), _ptr(ds.qvalues), n, _ptr(res_c)
            )
        else:
            c_ins = lambda f_c=f_c, z=z: ref.hash_insert_2p_i64(  # noqa: E731
                _ptr(f_c), z, _ptr(ds.values), n
            )
            c_chk = lambda f_c=f_c, z=z: ref.hash_check_2p_i64(  # noqa: E731
                _ptr(f_c), z, _ptr(ds.qvalues), n, _ptr(res_c)
            )
        bench.run(
            name, "hash+insert", size, n, c_ins, lambda f_py=f_py: f_py.insert(ds.arrow), reset
        )
        _check(np.array_equal(f_c, reference), f"{name} {size}: C hash+insert filter bytes")
        _check(np.array_equal(f_py.words, reference), f"{name} {size}: Sbbf.insert filter bytes")

        res_c.fill(2)
        _, found = bench.run(
            name, "hash+check", size, n, c_chk, lambda f_py=f_py: f_py.check(ds.qarrow)
        )
        _check(np.array_equal(res_c.view(np.bool_), found), f"{name} {size}: Sbbf.check")
        _check(int(found.sum()) == hits, f"{name} {size}: hash+check hits")
        print(
            f"  {name} {size}: verified (filter bytes equal, {hits}/{n} probes hit)",
            file=sys.stderr,
            flush=True,
        )
        del f_c, f_py, reference
    return {"dataset": name, "verified": True}


# ----------------------------------------------------------------------------- context


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {"platform": platform.platform()}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        fields = dict(
            (k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in out.splitlines())
        )
        info["model"] = fields.get("Model name", "?")
        info["cpus"] = int(fields.get("CPU(s)", "0"))
        cores = int(fields.get("Core(s) per socket", "0")) * int(fields.get("Socket(s)", "1"))
        info["cores"] = cores
        for key in ("L1d cache", "L2 cache", "L3 cache"):
            info[key] = fields.get(key, "?")
        flags = fields.get("Flags", "").split()
        info["simd"] = [f for f in ("avx2", "avx512f", "avx512bw", "avx512vl") if f in flags]
    except (OSError, subprocess.CalledProcessError, ValueError):
        info["model"] = "?"
    return info


def versions() -> dict[str, str]:
    import llvmlite
    import numba

    import bloomskip

    gcc = subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "llvmlite": llvmlite.__version__,
        "pyarrow": pa.__version__,
        "bloomskip": bloomskip.__version__,
        "gcc": gcc.splitlines()[0] if gcc else "?",
    }


def first_call_cost() -> float:
    """Seconds from import to the first insert/check in a new process, numba cache warm."""
    env = dict(os.environ)
    secs = 0.0
    for _ in range(2):  # the first run may fill the cache; report the second
        out = subprocess.run(
            [sys.executable, "-c", FIRST_CALL],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
            env=env,
        ).stdout
        secs = float(out.strip().splitlines()[-1])
    return secs


def print_table(rows: list[dict[str, Any]]) -> None:
    print(f"{'workload':22s} {'size':>7s} {'C ns/value':>11s} {'bloomskip':>10s} {'ratio':>6s}")
    for r in rows:
        flag = "  !" if r["ratio"] > FLAG_RATIO else ""
        print(
            f"{r['dataset'] + ' ' + r['workload']:22s} {r['size']:>7s} {r['c_ns']:11.2f}"
            f" {r['bloomskip_ns']:10.2f} {r['ratio']:6.2f}{flag}"
        )
    print(f"(ratio = bloomskip / C; '!' marks ratio > {FLAG_RATIO})")
    print(
        "hash = public bloomskip.hash_values (allocates and page-faults its result; C writes "
        "into a reused buffer);\nhash/kernel = the same kernel into a preallocated array. "
        "insert/check = of precomputed hashes; hash+insert/hash+check = Sbbf.insert/.check."
    )


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000_000, help="values per dataset")
    ap.add_argument("--quick", action="store_true", help="N = 1,000,000")
    ap.add_argument("--reps", type=int, default=5, help="repetitions (median reported)")
    ap.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated subset")
    ap.add_argument("--json", type=Path, help="write results as JSON here")
    args = ap.parse_args(argv)
    n = 1_000_000 if args.quick else args.n
    names = [d for d in args.datasets.split(",") if d]
    unknown = set(names) - set(DATASETS)
    if unknown:
        ap.error(f"unknown dataset(s): {', '.join(sorted(unknown))}")

    ref = Reference(build_reference())
    mach, vers = machine(), versions()
    print(
        f"machine: {mach.get('model')}, {mach.get('cores')} cores "
        f"({mach.get('cpus')} CPUs), L1d {mach.get('L1d cache')}, L2 {mach.get('L2 cache')}, "
        f"L3 {mach.get('L3 cache')}, {' '.join(mach.get('simd', []))}"
    )
    print("versions: " + ", ".join(f"{k} {v}" for k, v in vers.items()))
    print(f"N = {n:,} values, {args.reps} reps, single thread\n", flush=True)

    bench = Bench(args.reps)
    verified = []
    for name in names:
        t0 = time.perf_counter()
        ds = Dataset(name, n)
        print(f"dataset {name} built in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        verified.append(bench_dataset(ds, ref, bench))
        del ds

    first = first_call_cost()
    print()
    print_table(bench.rows)
    print(f"first call in a fresh process (numba cache warm): {first * 1e3:.0f} ms")
    busy = [r for r in bench.rows if r["foreign_load_max"] > 0.25]
    if busy:
        print(f"note: other load on the machine (> 0.25 CPU) during {len(busy)} workloads")
    print("verified: hashes, filter bytes after every insert, and check results equal C")

    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        doc = {
            "n": n,
            "reps": args.reps,
            "machine": mach,
            "versions": vers,
            "first_call_s": first,
            "verified": verified,
            "results": bench.rows,
        }
        args.json.write_text(json.dumps(doc, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
