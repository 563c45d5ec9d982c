"""ORC filters rebuilt bit for bit under every codec, from each writer's files.

Compression only frames the streams, but the bloom filter index is read through that
framing: a rebuild from the file's own values must equal the stored filters whatever the
codec (NONE, ZLIB, SNAPPY, LZ4, ZSTD), for pyarrow, pyorc (ORC C++) and Spark (ORC Java).
"""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.orc as pa_orc
import pytest

from bloomskip.orc import OrcBloomFilter, read_orc

CODECS = ["NONE", "ZLIB", "SNAPPY", "LZ4", "ZSTD"]
N = 2500


def _values() -> dict[str, pa.Array]:
    i = np.arange(N, dtype=np.int64)
    return {
        "id": pa.array([f"user_{j * 7919 % N:06d}é" for j in range(N)]),
        "n": pa.array(i * 104729 - 10**7),
        "x": pa.array(i / 7.0 - 100),
    }


KINDS = {"id": "string", "n": "bigint", "x": "double"}


def _assert_rebuilds(orc, values, writer: str, codec: str) -> None:
    assert orc.compression.name == codec
    checked = 0
    for s, _ in enumerate(orc.stripes):
        for name, kind in KINDS.items():
            col = orc.column(name)
            bfs = orc.bloom_filters(s, col.id)
            assert bfs is not None, (s, name)
            for g in orc.row_groups(s):
                stored = OrcBloomFilter.from_index(
                    bfs.num_hash_functions(g.index), utf8bitset=bfs.bitset(g.index)
                )
                ours = OrcBloomFilter(orc.row_index_stride, 0.05)
                ours.add_values(values[name].slice(g.first_row, g.num_rows), kind, writer=writer)
                assert ours == stored, (orc.compression, name, g)
                checked += 1
    assert checked >= 3 * 3


@pytest.mark.parametrize("codec", CODECS)
def test_pyarrow_every_codec(tmp_path, codec):
    values = _values()
    path = tmp_path / "t.orc"
    pa_orc.write_table(
        pa.table(values), path, bloom_filter_columns=[1, 2, 3], bloom_filter_fpp=0.05,
        row_index_stride=1000, compression="uncompressed" if codec == "NONE" else codec.lower(),
    )  # fmt: skip
    _assert_rebuilds(read_orc(path), values, "pyarrow", codec)


@pytest.mark.parametrize("codec", CODECS)
def test_pyorc_every_codec(codec):
    pyorc = pytest.importorskip("pyorc")
    values = _values()
    buf = io.BytesIO()
    with pyorc.Writer(
        buf, "struct<id:string,n:bigint,x:double>", bloom_filter_columns=["id", "n", "x"],
        bloom_filter_fpp=0.05, row_index_stride=1000,
        compression=getattr(pyorc.CompressionKind, codec),
    ) as w:  # fmt: skip
        for row in zip(*(v.to_pylist() for v in values.values()), strict=True):
            w.write(row)
    _assert_rebuilds(read_orc(buf.getvalue()), values, "c++", codec)


@pytest.mark.spark
@pytest.mark.parametrize("codec", CODECS)
def test_spark_every_codec(spark, tmp_path, codec):
    values = _values()
    rows = list(zip(*(v.to_pylist() for v in values.values()), strict=True))
    df = spark.createDataFrame(rows, "id string, n bigint, x double").coalesce(1)
    out = tmp_path / "spark"
    (
        df.write.option("orc.bloom.filter.columns", "id,n,x")
        .option("orc.bloom.filter.fpp", "0.05")
        .option("orc.row.index.stride", "1000")
        .option("compression", codec.lower() if codec != "NONE" else "none")
        .orc(str(out))
    )
    (path,) = out.glob("*.orc")
    _assert_rebuilds(read_orc(path), values, "java", codec)
