"""What a zone index is on disk: a directory of Parquet tables and versioned manifests.

::

    INDEX/
      _manifests/v00000000000000000007.json   one per committed version; the highest wins
      fragments/<uuid>.parquet                 fragment_id -> source file (path, size, mtime)
      columns/<n>-<name>/<uuid>.zones.parquet  a segment of one column's zone table
      columns/<n>-<name>/<uuid>.files.parquet  the same segment's file-level filters

**Zone table** (one per segment; the layout of Lance's ``bloomfilter.lance``)::

    fragment_id uint64, zone_start uint64, zone_length uint64, has_null bool,
    bloom_filter_data binary,       -- the raw SBBF bitset, no header, as Lance stores it
    ndv uint64                      -- distinct non-null values of the zone (bloomskip)

with the schema metadata ``bloomfilter_item`` (rows per zone) and
``bloomfilter_probability`` (target FPP), as strings, as Lance writes them, and
``bloomskip.*`` keys naming the column, its physical type and value encoding, the hash,
the sizing policy and the format version. ``zone_start``/``zone_length`` are row
offsets inside the file; zones never cross files.

**File table** (same segment): ``fragment_id, num_rows, has_null, ndv,
bloom_filter_data``: one filter per file holding every value of the file, sized for the
file's NDV, so a query can rule out a whole file before looking at its zones.

**Fragment table**: ``fragment_id uint64, path string, size int64, mtime_ns int64,
num_rows uint64, format string``.

**Manifest** (JSON): format name and version, the index version, the source, the zoning,
the source's Arrow schema, the fragment table, and per column its type, physical
encoding, hash, sizing and segments. A commit writes new tables first, then publishes
``v<N+1>.json`` with an atomic exclusive create (:mod:`.store`): readers see version N or
N+1, never half of one.
"""

from __future__ import annotations

import base64
import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import pyarrow as pa

from bloomskip.errors import CorruptFileError, InvalidParameterError
from bloomskip.hashing.arrow import Encoding, PhysicalSpec
from bloomskip.hashing.physical import PhysicalType

FORMAT = "bloomskip.zone-index"
FORMAT_VERSION = 1

#: Lance's defaults: rows per zone and target false-positive probability.
DEFAULT_ZONE_ROWS = 8192
DEFAULT_FPP = 0.00057

#: ``"putze"``: every zone sized for ``zone_rows`` distinct values with the Putze FPP, as
#: Lance does (32 KiB per zone with the defaults). ``"exact"``: each zone (and file filter)
#: sized for its own distinct count, so low-cardinality columns take a fraction of that.
SIZINGS = ("putze", "exact")
ALIGNS = ("rows", "row_groups")

ZONE_SCHEMA = pa.schema(
    [
        pa.field("fragment_id", pa.uint64(), nullable=False),
        pa.field("zone_start", pa.uint64(), nullable=False),
        pa.field("zone_length", pa.uint64(), nullable=False),
        pa.field("has_null", pa.bool_(), nullable=False),
        pa.field("bloom_filter_data", pa.binary(), nullable=False),
        pa.field("ndv", pa.uint64(), nullable=False),
    ]
)
FILE_SCHEMA = pa.schema(
    [
        pa.field("fragment_id", pa.uint64(), nullable=False),
        pa.field("num_rows", pa.uint64(), nullable=False),
        pa.field("has_null", pa.bool_(), nullable=False),
        pa.field("ndv", pa.uint64(), nullable=False),
        pa.field("bloom_filter_data", pa.binary(), nullable=False),
    ]
)
FRAGMENT_SCHEMA = pa.schema(
    [
        pa.field("fragment_id", pa.uint64(), nullable=False),
        pa.field("path", pa.string(), nullable=False),
        pa.field("size", pa.int64(), nullable=False),
        pa.field("mtime_ns", pa.int64(), nullable=False),
        pa.field("num_rows", pa.uint64(), nullable=False),
        pa.field("format", pa.string(), nullable=False),
    ]
)


@dataclass(frozen=True)
class Zoning:
    """How files are cut into zones; one setting for every column of an index, so the
    zones of all columns of a file coincide and AND/OR combine zone by zone."""

    zone_rows: int = DEFAULT_ZONE_ROWS
    align: str = "rows"  # "row_groups": zones never cross Parquet row groups / ORC stripes

    def __post_init__(self) -> None:
        if isinstance(self.zone_rows, bool) or not isinstance(self.zone_rows, int):
            raise InvalidParameterError(f"zone_rows must be an int, got {self.zone_rows!r}")
        if not 1 <= self.zone_rows <= 2**31:
            raise InvalidParameterError(f"zone_rows must be in 1..2**31, got {self.zone_rows}")
        if self.align not in ALIGNS:
            raise InvalidParameterError(f"align must be one of {ALIGNS}, got {self.align!r}")


@dataclass(frozen=True)
class Segment:
    """One build's zones and file filters for one column."""

    zones: str  # paths relative to the index directory
    files: str
    num_fragments: int
    num_zones: int
    zone_bytes: int  # bytes of filter data in the zone table
    file_bytes: int


@dataclass(frozen=True)
class ColumnIndex:
    """One indexed column: what its values are, how they are hashed and sized."""

    name: str
    directory: str
    arrow_type: pa.DataType
    physical: PhysicalSpec | None  # None with encoding "arrow"
    encoding: str = Encoding.PARQUET.value
    hash: str = "xxhash64"
    seed: int = 0
    sizing: str = "putze"
    fpp: float = DEFAULT_FPP
    file_filters: bool = True
    segments: tuple[Segment, ...] = ()

    def with_segments(self, segments: tuple[Segment, ...]) -> ColumnIndex:
        return replace(self, segments=segments)

    @property
    def physical_name(self) -> str:
        if self.physical is None:
            return f"arrow {self.arrow_type}"
        p = self.physical
        extra = f"({p.type_length})" if p.type_length else ""
        unit = f" [{p.time_unit}]" if p.time_unit else ""
        return f"{p.physical_type.value}{extra}{unit}"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "directory": self.directory,
            "arrow_type": str(self.arrow_type),
            "arrow_type_ipc": _type_to_b64(self.arrow_type),
            "physical": None
            if self.physical is None
            else {
                "physical_type": self.physical.physical_type.value,
                "type_length": self.physical.type_length,
                "time_unit": self.physical.time_unit,
            },
            "encoding": self.encoding,
            "hash": self.hash,
            "seed": self.seed,
            "sizing": self.sizing,
            "fpp": self.fpp,
            "file_filters": self.file_filters,
            "segments": [asdict(s) for s in self.segments],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ColumnIndex:
        p = d["physical"]
        physical = (
            None
            if p is None
            else PhysicalSpec(PhysicalType(p["physical_type"]), p["type_length"], p["time_unit"])
        )
        return cls(
            name=d["name"],
            directory=d["directory"],
            arrow_type=_type_from_b64(d["arrow_type_ipc"]),
            physical=physical,
            encoding=d["encoding"],
            hash=d["hash"],
            seed=d["seed"],
            sizing=d["sizing"],
            fpp=float(d["fpp"]),
            file_filters=bool(d["file_filters"]),
            segments=tuple(Segment(**s) for s in d["segments"]),
        )


@dataclass(frozen=True)
class Manifest:
    """One committed version of an index."""

    version: int
    source: dict[str, Any]
    zoning: Zoning
    schema: pa.Schema
    fragments: str | None  # fragment table path, None before the first file
    next_fragment_id: int
    columns: dict[str, ColumnIndex] = field(default_factory=dict)
    committed_at: str = ""
    writer: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "version": self.version,
            "committed_at": self.committed_at,
            "writer": self.writer,
            "source": self.source,
            "zoning": asdict(self.zoning),
            "schema_ipc": base64.b64encode(self.schema.serialize().to_pybytes()).decode(),
            "fragments": self.fragments,
            "next_fragment_id": self.next_fragment_id,
            "columns": {name: c.to_json() for name, c in self.columns.items()},
        }

    @classmethod
    def from_json(cls, d: dict[str, Any], label: str) -> Manifest:
        try:
            if d.get("format") != FORMAT:
                raise CorruptFileError(f"{label}: not a bloomskip zone index manifest")
            if d.get("format_version") != FORMAT_VERSION:
                raise CorruptFileError(
                    f"{label}: format version {d.get('format_version')} is not one this "
                    f"bloomskip reads ({FORMAT_VERSION}); upgrade bloomskip or rebuild"
                )
            schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(d["schema_ipc"])))
            return cls(
                version=int(d["version"]),
                source=d["source"],
                zoning=Zoning(**d["zoning"]),
                schema=schema,
                fragments=d["fragments"],
                next_fragment_id=int(d["next_fragment_id"]),
                columns={n: ColumnIndex.from_json(c) for n, c in d["columns"].items()},
                committed_at=d.get("committed_at", ""),
                writer=d.get("writer", ""),
            )
        except CorruptFileError:
            raise
        except (KeyError, TypeError, ValueError, pa.ArrowException) as e:
            raise CorruptFileError(f"{label}: malformed manifest: {e!r}") from e


def zone_metadata(col: ColumnIndex, zoning: Zoning) -> dict[str, str]:
    """Schema metadata of a zone table: Lance's two keys, then bloomskip's."""
    return {
        "bloomfilter_item": str(zoning.zone_rows),
        "bloomfilter_probability": repr(col.fpp),
        "bloomskip.format_version": str(FORMAT_VERSION),
        "bloomskip.column": col.name,
        "bloomskip.arrow_type": str(col.arrow_type),
        "bloomskip.physical_type": col.physical_name,
        "bloomskip.encoding": col.encoding,
        "bloomskip.hash": f"{col.hash} seed {col.seed}",
        "bloomskip.sizing": col.sizing,
        "bloomskip.align": zoning.align,
    }


def column_directory(position: int, name: str) -> str:
    """A directory name for a column that is safe on every file system."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:60].strip(".") or "column"
    return f"columns/{position}-{safe}"


def _type_to_b64(t: pa.DataType) -> str:
    return base64.b64encode(pa.schema([pa.field("t", t)]).serialize().to_pybytes()).decode()


def _type_from_b64(text: str) -> pa.DataType:
    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text))).field(0).type
