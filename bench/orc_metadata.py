"""ORC metadata decoding: bloomskip's protobuf (upb) path, optionally next to the hand-written
wire decoder it replaced, on the same bytes in the same run.

Inputs, all decompressed message bytes:

* a file written by pyarrow (ORC C++): ``--rows`` rows (UUID string and int64 keys with
  bloom filters, a double payload), row groups of ``--stride`` rows; its PostScript,
  Footer, Metadata, every stripe footer, every row index and every bloom filter index;
* hostile messages: a RowIndex of 2^22 empty entries (2 bytes each), decoded whole and
  as ``OrcFile.row_index`` reads it for a stripe of three row groups (bloomskip's path
  checks the count before building views; the hand decoder's built them first), a Footer
  with one Type of 2^22 subtypes, a legacy BloomFilter of 2^20 unpacked fixed64 words.

Each decoder's median time per input kind, and with ``--baseline REV`` the ratio
baseline / protobuf (above 1: protobuf is faster) and each decoder's peak memory on the
hostile inputs (in a fresh process each, so the peaks do not mix). The baseline is
``src/bloomskip/orc/proto.py`` of git revision ``REV`` (3e3929c holds the hand decoder).

    .venv/bin/python bench/orc_metadata.py [--quick] [--baseline 3e3929c] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable
from pathlib import Path

import pyarrow.orc as po

sys.path.insert(0, str(Path(__file__).resolve().parent))
import google.protobuf

from bloomskip.errors import CorruptFileError
from bloomskip.orc import proto, read_orc
from bloomskip.orc.compression import decompress
from parquet import make_table, median_time

KINDS = ("postscript", "footer", "metadata", "stripe_footer", "row_index", "bloom_filter_index")


def file_messages(rows: int, stride: int) -> dict[str, list[bytes]]:
    """The decompressed bytes of every message of a pyarrow-written file, by kind."""
    with tempfile.TemporaryDirectory(prefix="bloomskip-bench-") as d:
        path = Path(d) / "bench.orc"
        po.write_table(make_table(rows), path, bloom_filter_columns=[1, 2], row_index_stride=stride)
        data = path.read_bytes()
    f = read_orc(data)
    ps_len = data[-1]
    ps_start = len(data) - 1 - ps_len
    footer_start = ps_start - f.postscript.footer_length
    meta_start, meta_len = f.metadata_range
    out: dict[str, list[bytes]] = {k: [] for k in KINDS}
    out["postscript"].append(data[ps_start:-1])
    out["footer"].append(decompress(data[footer_start:ps_start], f.compression, name="f"))
    raw = data[meta_start : meta_start + meta_len]
    out["metadata"].append(decompress(raw, f.compression, name="m"))
    for s in f.stripes:
        raw = data[s.footer_offset : s.footer_offset + s.footer_length]
        out["stripe_footer"].append(decompress(raw, f.compression, name="s"))
        for st in f.streams(s.index):
            if st.kind == 6:
                out["row_index"].append(f.read_stream(s.index, st))
            elif st.kind == 8:
                out["bloom_filter_index"].append(f.read_stream(s.index, st))
    return out


def hostile_messages() -> dict[str, bytes]:
    def lfield(number: int, payload: bytes) -> bytes:
        n, length = len(payload), b""
        while True:
            length += bytes([(n & 0x7F) | (0x80 if n >> 7 else 0)])
            n >>= 7
            if not n:
                return bytes([number << 3 | 2]) + length + payload

    subtypes = b"\x81\x01" * (1 << 22)  # 129: two bytes each
    words = b"\x11" + b"\xa5" * 8
    return {
        "row_index: 2^22 empty entries": b"\x0a\x00" * (1 << 22),
        "row_index_checked: the same, 3 expected": b"\x0a\x00" * (1 << 22),
        "footer: 2^22 subtypes": lfield(4, b"\x08\x0c" + lfield(2, subtypes)),
        "bloom_filter_index: 2^20 legacy words": lfield(1, b"\x08\x03" + words * (1 << 20)),
    }


def new_decoders() -> dict[str, Callable[[bytes], object]]:
    def one(fn: Callable) -> Callable[[bytes], object]:
        return lambda b: fn(b, "bench")

    def checked(b: bytes) -> object:
        try:
            return proto.row_index(b, "bench", _expect_3)
        except CorruptFileError:
            return None

    return {k: one(getattr(proto, k)) for k in KINDS} | {"row_index_checked": checked}


def baseline_decoders(rev: str) -> dict[str, Callable[[bytes], object]]:
    """The hand decoder of ``rev``, loaded from git without checking anything out."""
    root = Path(__file__).resolve().parent.parent
    source = subprocess.run(
        ["git", "show", f"{rev}:src/bloomskip/orc/proto.py"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    old = types.ModuleType("baseline_proto")
    sys.modules[old.__name__] = old  # dataclasses look their module up
    exec(compile(source, f"{rev}:proto.py", "exec"), old.__dict__)

    def one(fn: Callable) -> Callable[[bytes], object]:
        return lambda b: old.decode(fn, b, "bench")

    def checked(b: bytes) -> object:  # the hand decoder's reader checked after decoding
        entries = old.decode(old.decode_row_index, b, "bench").entries
        try:
            _expect_3(len(entries))
        except CorruptFileError:
            return None
        return entries

    return {k: one(getattr(old, f"decode_{k}")) for k in KINDS} | {"row_index_checked": checked}


def _expect_3(count: int) -> None:
    """A stripe of three row groups (what ``OrcFile.row_index`` checks)."""
    if count != 3:
        raise CorruptFileError(f"bench: {count} entries for 3 row groups")


def peak_mb(decoder: str, rev: str | None, name: str) -> float:
    """Peak memory (MB above the process's peak before decoding) of one hostile input."""
    out = subprocess.run(
        [sys.executable, __file__, "--peak", decoder, name, *(["--baseline", rev] if rev else [])],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return float(out)


def _peak(decoder: str, name: str, rev: str | None) -> None:
    raw = hostile_messages()[name]
    decode = (baseline_decoders(rev) if decoder == "baseline" else new_decoders())[
        name.split(":")[0]
    ]
    before = _high_water_kb()
    result = decode(raw)
    after = _high_water_kb()
    del result
    print((after - before) / 1024)


def _high_water_kb() -> int:
    """This process's peak resident memory: VmHWM on Linux (``ru_maxrss`` would carry the
    parent's peak over ``fork`` and ``exec``), ``ru_maxrss`` elsewhere."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--stride", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="200k rows, 3 reps")
    ap.add_argument("--baseline", help="git revision whose orc/proto.py to compare with")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--peak", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.peak:
        _peak(*args.peak, args.baseline)
        return
    if args.quick:
        args.rows, args.reps = 200_000, 3
    decoders = {"protobuf": new_decoders()}
    if args.baseline:
        decoders["baseline"] = baseline_decoders(args.baseline)
    messages = file_messages(args.rows, args.stride)
    hostile = hostile_messages()
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    print(
        f"bench/orc_metadata.py - {machine}, protobuf {google.protobuf.__version__} "
        f"(upb), median of {args.reps}\n"
    )
    print(f"{args.rows:,} rows, row groups of {args.stride:,} rows (pyarrow, ORC C++)")
    results: dict[str, dict[str, float]] = {}
    header = f"  {'input':42} {'messages':>8} {'MB':>7}"
    header += "".join(f" {n + ' ms':>12}" for n in decoders)
    print(header + ("  baseline/protobuf" if args.baseline else ""))
    inputs = [(k, msgs) for k, msgs in messages.items()] + [(k, [b]) for k, b in hostile.items()]
    for label, msgs in inputs:
        kind = label.split(":")[0]
        row = {}
        for name, dec in decoders.items():
            fn = dec[kind]
            fn(msgs[0])  # warm-up
            row[name] = median_time(lambda fn=fn, msgs=msgs: [fn(m) for m in msgs], args.reps)
        results[label] = row
        size = sum(map(len, msgs)) / 1e6
        line = f"  {label:42} {len(msgs):>8} {size:>7.2f}"
        line += "".join(f" {row[n] * 1e3:>12.2f}" for n in decoders)
        if args.baseline:
            line += f"  {row['baseline'] / row['protobuf']:>17.2f}"
        print(line)
    if args.baseline:
        print("\n  peak memory on the hostile inputs (MB, fresh process each)")
        for label in hostile:
            peaks = {n: peak_mb(n, args.baseline, label) for n in decoders}
            results[label].update({f"{n}_peak_mb": v for n, v in peaks.items()})
            shown = "".join(f"  {n} {v:>8.0f}" for n, v in peaks.items())
            print(f"  {label:42}{shown}")
    if args.json:
        summary = {"machine": machine, "rows": args.rows, "stride": args.stride}
        summary |= {"median_of": args.reps, "seconds": results}
        Path(args.json).write_text(json.dumps(summary))


if __name__ == "__main__":
    main()
