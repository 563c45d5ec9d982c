"""ORC files written by pyorc (ORC C++) and pyarrow for the structure tests: every
codec, nested and logical types, small seeds for the hostile-file and fuzz tests, and
:func:`walk`, which calls every entry point of the structure layer on one file."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import random
import zoneinfo
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as po

from bloomskip.orc import read_orc

CODECS = ["uncompressed", "zlib", "snappy", "lz4", "zstd"]
PYORC_CODECS = {
    "uncompressed": "NONE",
    "zlib": "ZLIB",
    "snappy": "SNAPPY",
    "lz4": "LZ4",
    "zstd": "ZSTD",
}


def write_pyorc(path: Path, codec: str, rows: int = 12_000, stride: int = 2000) -> None:
    """Nested and logical types (union, map of lists, decimal, timestamp in Los Angeles)
    with filters on ``i``, ``s``, ``dec`` and ``ts`` (fpp 1 %)."""
    import pyorc

    schema = (
        "struct<i:bigint,s:string,u:uniontype<int,string>,m:map<string,array<int>>,"
        "dec:decimal(10,3),ts:timestamp>"
    )
    with open(path, "wb") as fh:
        w = pyorc.Writer(
            fh,
            schema,
            bloom_filter_columns=["i", "s", "dec", "ts"],
            bloom_filter_fpp=0.01,
            compression=getattr(pyorc.CompressionKind, PYORC_CODECS[codec]),
            row_index_stride=stride,
            stripe_size=32 * 1024,
            timezone=zoneinfo.ZoneInfo("America/Los_Angeles"),
        )
        base = dt.datetime(2020, 3, 7, tzinfo=dt.UTC)
        for k in range(rows):
            w.write(
                (
                    k,
                    f"s{k}",
                    k if k % 2 == 0 else str(k),
                    {str(k % 7): [k, k + 1]},
                    decimal.Decimal(k) / 8,
                    base + dt.timedelta(minutes=17 * k),
                )
            )
        w.close()


def write_char5(path: Path) -> None:
    """A pyorc file of ``k int, c char(5)`` holding ``(1, 'c1   ')`` and ``(2, 'c22  ')``:
    Spark compares CHAR padded (``c = 'c1'`` matches), other readers as written."""
    import pyorc

    with open(path, "wb") as fh, pyorc.Writer(fh, "struct<k:int,c:char(5)>") as w:
        w.write((1, "c1"))
        w.write((2, "c22"))


def small_files(folder: Path) -> dict[str, bytes]:
    """Small seeds of 2,500 rows in 2-10 stripes, row groups of 300 rows, filters on three
    columns: pyorc with 4 KiB compression chunks for every codec, pyarrow uncompressed and
    zstd, and a pyorc file of nested and logical types."""
    import pyorc

    rng = random.Random(3)
    rows = [(i, None if i % 9 == 0 else rng.randbytes(6).hex(), (i % 50,)) for i in range(2500)]
    out = {}
    for codec in CODECS:
        buf = io.BytesIO()
        with pyorc.Writer(
            buf,
            "struct<id:bigint,s:string,st:struct<x:smallint>>",
            bloom_filter_columns=[1, 2, 4],
            compression=getattr(pyorc.CompressionKind, PYORC_CODECS[codec]),
            row_index_stride=300,
            stripe_size=8192,
            compression_block_size=4096,
            memory_block_size=4096,
        ) as w:
            w.writerows(rows)
        out[f"pyorc-{codec}"] = buf.getvalue()
    table = pa.table(
        {
            "id": pa.array([r[0] for r in rows], pa.int64()),
            "s": pa.array([r[1] for r in rows]),
            "st": pa.array([{"x": r[2][0]} for r in rows], pa.struct([("x", pa.int16())])),
        }
    )
    for codec in ("uncompressed", "zstd"):
        path = folder / f"{codec}.orc"
        po.write_table(
            table,
            path,
            compression=codec,
            row_index_stride=300,
            bloom_filter_columns=[1, 2, 4],
            stripe_size=8 * 1024,
            batch_size=256,
        )
        out[f"pyarrow-{codec}"] = path.read_bytes()
    path = folder / "nested.orc"
    write_pyorc(path, "zlib", rows=1500, stride=400)
    out["pyorc-nested"] = path.read_bytes()
    return out


def walk(data: bytes, name: str = "case.orc") -> int:
    """Every entry point of the structure layer on one file; the number of filters read."""
    f = read_orc(data, name=name)
    f.metadata()
    seen = 0
    for s in f.stripes:
        f.stripe_footer(s.index)
        f.row_groups(s.index)
        for c in f.columns:
            f.column_encoding(s.index, c.id)
            f.row_index(s.index, c.id)
            bf = f.bloom_filters(s.index, c.id)
            seen += bf is not None
    return seen
