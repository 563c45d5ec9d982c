"""A synthetic data lake for the demo and the Spark benchmark, generated with numpy.

Every file is generated from its own seeded random stream (``seed``, file number), so a
lake is the same bytes on every machine and files can be written in parallel threads
(numpy and pyarrow release the GIL). Columns:

============  =====================  ==================================================
``uuid``      string                 random UUID version 4, canonical 36-character form;
                                     unique (122 random bits per row)
``user_id``   int64                  uniform over ``user_ids`` ids (default rows / 4,
                                     i.e. 5M for 20M rows), so an id is in ~4 rows,
                                     spread over ~4 random files
``ts``        timestamp[us, UTC]     event time; the lake covers 2024 in file order,
                                     each file one slice (as a lake partitioned by time)
``country``   string                 20 country codes, skewed
``amount``    double                 order amount, log-normal, in cents
``quantity``  int32                  1..9
============  =====================  ==================================================

The two key columns are written PLAIN, without a dictionary: their values are (nearly)
all distinct, so a dictionary would be as large as the data, and Spark's dictionary
filter would then answer equality lookups by itself - the lake is meant to show what a
lake without any bloom filter costs. No bloom filters are written. Row groups hold
``row_group_rows`` rows.

A finished lake holds a stamp file (``_bloomskip_demo.json``; names starting with ``_``
are skipped by Spark and bloomskip listings) with its parameters. :func:`ensure_lake`
re-uses a lake whose stamp matches and never deletes a directory it did not create.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bloomskip.demo.record import Record
from bloomskip.errors import InvalidParameterError

#: Bump when the generated data changes: a lake with another version is regenerated.
LAKE_FORMAT = 1
STAMP = "_bloomskip_demo.json"
KEY_COLUMNS = ("uuid", "user_id")
SCHEMA = pa.schema(
    [
        ("uuid", pa.string()),
        ("user_id", pa.int64()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("country", pa.string()),
        ("amount", pa.float64()),
        ("quantity", pa.int32()),
    ]
)
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
# Character positions of the 32 hex digits in the 36-character UUID form (dashes between).
_UUID_POS = np.array([i for i in range(36) if i not in (8, 13, 18, 23)])
_COUNTRIES = ("US", "DE", "FR", "GB", "JP", "BR", "IN", "CN", "CA", "IT")
_COUNTRIES += ("ES", "MX", "KR", "NL", "SE", "PL", "AU", "CH", "AT", "NO")
_YEAR_START_US = 1_704_067_200_000_000  # 2024-01-01T00:00:00Z
_YEAR_US = 366 * 86_400 * 1_000_000


@dataclass(frozen=True)
class LakeSpec(Record):
    """What to generate: ``rows`` rows in total over ``files`` files."""

    files: int = 200
    rows: int = 20_000_000
    row_group_rows: int = 20_000
    user_ids: int | None = None  # distinct user ids drawn from; None: rows // 4
    seed: int = 42

    def __post_init__(self) -> None:
        if self.files < 1:
            raise InvalidParameterError(f"files must be at least 1, got {self.files}")
        if self.rows < self.files:
            raise InvalidParameterError(
                f"rows ({self.rows:,}) must be at least files ({self.files:,})"
            )
        if self.row_group_rows < 1:
            raise InvalidParameterError(f"row_group_rows must be >= 1, got {self.row_group_rows}")
        if self.user_ids is not None and self.user_ids < 1:
            raise InvalidParameterError(f"user_ids must be >= 1, got {self.user_ids}")

    @property
    def distinct_user_ids(self) -> int:
        return self.user_ids if self.user_ids is not None else max(1, self.rows // 4)

    def rows_of(self, i: int) -> int:
        """Rows in file ``i``: an even share, the first ``rows % files`` files one more."""
        base, extra = divmod(self.rows, self.files)
        return base + (1 if i < extra else 0)

    def file_name(self, i: int) -> str:
        return f"part-{i:05d}.parquet"

    def to_json(self) -> dict[str, Any]:
        return super().to_json() | {"user_ids": self.distinct_user_ids, "format": LAKE_FORMAT}


@dataclass(frozen=True)
class LookupKeys(Record):
    """Values to look up, taken from known rows of the lake (and one known absent)."""

    uuid_present: str
    uuid_absent: str
    user_id_present: int
    uuid_in: list[str]  # values from distinct files, all present
    where: dict[str, str] = field(default_factory=dict)  # query name -> SQL predicate


@dataclass
class Lake:
    """A generated lake on disk."""

    path: Path
    spec: LakeSpec
    files: list[Path]
    bytes: int
    generated: bool  # False: an existing lake was re-used
    seconds: float  # generation time (of the run that wrote it, if re-used)
    keys: LookupKeys

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "spec": self.spec.to_json(),
            "files": len(self.files),
            "bytes": self.bytes,
            "generated": self.generated,
            "seconds": round(self.seconds, 3),
            "keys": self.keys.to_json(),
        }


# ----------------------------------------------------------------------------- data


def uuid4_strings(rng: np.random.Generator, n: int) -> pa.Array:
    """``n`` random version-4 UUIDs as canonical lower-case strings, without Python loops."""
    raw = np.frombuffer(rng.bytes(16 * n), dtype=np.uint8).reshape(n, 16).copy()
    raw[:, 6] = (raw[:, 6] & 0x0F) | 0x40  # version 4
    raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80  # RFC 4122 variant
    digits = np.empty((n, 32), dtype=np.uint8)
    digits[:, 0::2] = _HEX[raw >> 4]
    digits[:, 1::2] = _HEX[raw & 0x0F]
    chars = np.full((n, 36), ord("-"), dtype=np.uint8)
    chars[:, _UUID_POS] = digits
    offsets = np.arange(0, 36 * (n + 1), 36, dtype=np.int32)
    return pa.Array.from_buffers(
        pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(chars.reshape(-1))]
    )


def file_table(spec: LakeSpec, i: int) -> pa.Table:
    """The rows of file ``i``: a pure function of ``spec`` and ``i``."""
    n = spec.rows_of(i)
    rng = np.random.default_rng([spec.seed, i])
    uuid = uuid4_strings(rng, n)
    user_id = rng.integers(0, spec.distinct_user_ids, size=n, dtype=np.int64) + 1_000_000
    slice_us = _YEAR_US // spec.files
    ts = np.sort(rng.integers(0, slice_us, size=n, dtype=np.int64)) + (
        _YEAR_START_US + i * slice_us
    )
    weights = 1.0 / np.arange(1, len(_COUNTRIES) + 1)
    country = rng.choice(len(_COUNTRIES), size=n, p=weights / weights.sum()).astype(np.int8)
    amount = np.round(rng.lognormal(3.5, 1.0, size=n), 2)
    quantity = rng.integers(1, 10, size=n, dtype=np.int32)
    return pa.Table.from_arrays(
        [
            uuid,
            pa.array(user_id),
            pa.array(ts, type=pa.timestamp("us", tz="UTC")),
            pa.DictionaryArray.from_arrays(
                pa.array(country), pa.array(_COUNTRIES)
            ).dictionary_decode(),
            pa.array(amount),
            pa.array(quantity),
        ],
        schema=SCHEMA,
    )


def write_file(spec: LakeSpec, i: int, path: Path) -> None:
    pq.write_table(
        file_table(spec, i),
        path,
        row_group_size=spec.row_group_rows,
        compression="snappy",
        use_dictionary=["country", "quantity"],
    )


def absent_uuid(spec: LakeSpec) -> str:
    """A v4 UUID from a random stream no file uses: absent but for a ~2**-75 chance."""
    stream = np.random.default_rng([spec.seed, 2**32 - 1])  # no file has this number
    return uuid4_strings(stream, 1)[0].as_py()


# ----------------------------------------------------------------------------- lake


def _read_stamp(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads((path / STAMP).read_text())
    except (OSError, ValueError):
        return None


def _spec_matches(stamp: dict[str, Any] | None, spec: LakeSpec) -> bool:
    return stamp is not None and stamp.get("spec") == spec.to_json()


def remove_generated(path: Path) -> None:
    """Delete a directory this module wrote (it holds a stamp); refuse anything else."""
    if not path.exists():
        return
    if not path.is_dir() or (_read_stamp(path) is None and any(path.iterdir())):
        raise InvalidParameterError(
            f"{path} exists and was not written by the demo (no {STAMP}); "
            "refusing to delete it - choose another --dir"
        )
    shutil.rmtree(path)


def ensure_lake(
    path: str | os.PathLike,
    spec: LakeSpec | None = None,
    *,
    fresh: bool = False,
    threads: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> Lake:
    """The lake at ``path`` for ``spec``: re-used if its stamp matches (unless ``fresh``),
    else generated anew (into a temporary sibling directory, then renamed)."""
    spec = spec or LakeSpec()
    path = Path(path).absolute()
    say = progress or (lambda _msg: None)
    stamp = _read_stamp(path)
    names = [spec.file_name(i) for i in range(spec.files)]
    if not fresh and _spec_matches(stamp, spec) and all((path / n).is_file() for n in names):
        files = [path / n for n in names]
        say(f"re-using the lake at {path} ({spec.files:,} files, {spec.rows:,} rows)")
        generated, seconds = False, float(stamp.get("seconds", 0.0))
    else:
        remove_generated(path)
        say(f"generating {spec.rows:,} rows in {spec.files:,} Parquet files under {path}")
        t0 = time.perf_counter()
        tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        workers = threads or os.cpu_count() or 1
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(lambda i: write_file(spec, i, tmp / names[i]), range(spec.files)))
        seconds = time.perf_counter() - t0
        doc = {"spec": spec.to_json(), "seconds": seconds, "created": time.time()}
        (tmp / STAMP).write_text(json.dumps(doc, indent=2) + "\n")
        tmp.rename(path)
        files = [path / n for n in names]
        generated = True
        say(f"generated the lake in {seconds:.1f}s")
    size = sum(f.stat().st_size for f in files)
    return Lake(path, spec, files, size, generated, seconds, lookup_keys(spec, files))


def lookup_keys(spec: LakeSpec, files: list[Path], in_values: int = 10) -> LookupKeys:
    """Keys read back from rows of the files chosen by the seed: the present keys and the
    IN list come from distinct files while there are enough files (cycling through them
    otherwise); the IN list holds ``in_values`` distinct uuids when the lake has that many
    rows."""
    rng = np.random.default_rng([spec.seed, 7])
    order = rng.permutation(spec.files)
    tables: dict[int, pa.Table] = {}

    def row(pick: int) -> dict[str, Any]:
        file_no = int(order[pick % spec.files])
        if file_no not in tables:
            tables[file_no] = pq.read_table(files[file_no], columns=list(KEY_COLUMNS))
        t = tables[file_no]
        return t.slice(int(rng.integers(0, t.num_rows)), 1).to_pylist()[0]

    first, second = row(0), row(1)
    wanted = min(in_values, spec.rows)
    uuid_in: list[str] = []
    pick = 2
    while len(uuid_in) < wanted:
        u = row(pick)["uuid"]
        if u not in uuid_in:
            uuid_in.append(u)
        pick += 1
    keys = LookupKeys(
        uuid_present=first["uuid"],
        uuid_absent=absent_uuid(spec),
        user_id_present=int(second["user_id"]),
        uuid_in=uuid_in,
    )
    in_list = ", ".join(f"'{u}'" for u in uuid_in)
    keys.where.update(
        {
            "uuid present": f"uuid = '{keys.uuid_present}'",
            "uuid absent": f"uuid = '{keys.uuid_absent}'",
            "user_id present": f"user_id = {keys.user_id_present}",
            f"uuid IN ({len(uuid_in)} values)": f"uuid IN ({in_list})",
        }
    )
    return keys
