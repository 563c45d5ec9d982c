"""What a zone index is on storage: Parquet tables, serving files and versioned manifests.

::

    INDEX/                                     a local directory or an object-store prefix
      _bloomskip_index.json                    the marker: this root is a bloomskip index
      _manifests/v00000000000000000007.json    one per committed version; the highest wins
      fragments/<uuid>.parquet                 fragment_id -> source file (path, size, mtime)
      columns/<n>-<name>/<uuid>.zones.parquet  Lance's zone table, for one task's files
      columns/<n>-<name>/<uuid>.files.parquet  file-level filters (optional)
      columns/<n>-<name>/<uuid>.blocks         the same zones' filters, block-major (a part)
      columns/<n>-<name>/<uuid>.dir            a segment's zone directory (serving layout)
      columns/<n>-<name>/<uuid>.c<i>-<k>.slab  a block range of one size class (serving)

**Zone table** (the layout of Lance's ``bloomfilter.lance``)::

    fragment_id uint64, zone_start uint64, zone_length uint64, has_null bool,
    bloom_filter_data binary,       -- the raw SBBF bitset, no header, as Lance stores it
    ndv uint64                      -- distinct non-null values of the zone (bloomskip;
                                       under Putze sizing those that set a bit of the
                                       filter as it filled: a few fewer, 0 only for none)

with the schema metadata ``bloomfilter_item`` (rows per zone) and
``bloomfilter_probability`` (target FPP), as strings, as Lance writes them, and
``bloomskip.*`` keys naming the column, its physical type and value encoding, the hash,
the sizing policy and the format version. ``zone_start``/``zone_length`` are row
offsets inside the file; zones never cross files.

**Serving layout** (:mod:`.serving`): the same filters, block-major per size class, so a
point lookup reads about 32 bytes per zone.

**File table** (optional): ``fragment_id, num_rows, has_null, ndv, bloom_filter_data``:
one filter per file, sized for the file's NDV.

**Fragment table**: ``fragment_id uint64, path string, size int64, mtime_ns int64,
num_rows uint64, format string, etag string`` (local files: ``ctime:<ns>``), sorted by
fragment id in row groups of :data:`FRAGMENT_GROUP_ROWS`, so a lookup reads the rows of
its candidates only.

**Manifest** (JSON): format name and version, the index version, a commit id, the
source and, for a table source, the snapshot it covers (``{"table": "delta", "version":
N}`` or ``{"table": "iceberg", "snapshot_id": N}``; absent in manifests written before
tables were sources), the zoning, the source's Arrow schema, the fragment table and
its totals, the fragments dropped since their zones were written, and per column its
type, encoding, hash, sizing and *segments* (one per build or refresh: its zone table
parts, file table parts, serving directory and slabs). A commit writes new objects
first, then creates ``v<N+1>.json`` if no writer did (:mod:`.store`): readers see
version N or N+1, never half of one.

Every name in a manifest is untrusted: it must be one of the names above, under the
index root (:func:`check_name`), or the manifest is refused.
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
FORMAT_VERSION = 2
#: Versions this bloomskip reads (1: zone tables only, no serving layout).
READABLE_VERSIONS = (1, 2)
MARKER = "_bloomskip_index.json"
MANIFESTS = "_manifests"

#: Lance's defaults: rows per zone and target false-positive probability.
DEFAULT_ZONE_ROWS = 8192
DEFAULT_FPP = 0.00057
FRAGMENT_GROUP_ROWS = 1024

#: ``"putze"``: every zone sized for ``zone_rows`` distinct values with the Putze FPP, as
#: Lance does (32 KiB per zone with the defaults). ``"exact"``: each zone (and file filter)
#: sized for its own distinct count, so low-cardinality columns take a fraction of that.
SIZINGS = ("putze", "exact")
ALIGNS = ("rows", "row_groups")

_HEX = r"[0-9a-f]{32}"
_COLUMN_DIR = r"columns/\d{1,6}-[A-Za-z0-9_.-]{1,60}"
#: Every name an index writes.
NAMES = re.compile(
    rf"^(?:{re.escape(MARKER)}"
    rf"|{MANIFESTS}/v\d{{20}}\.json"
    rf"|(?:{MANIFESTS}/)?\.tmp-{_HEX}\.json"
    rf"|fragments/{_HEX}\.parquet"
    rf"|{_COLUMN_DIR}/{_HEX}(?:\.zones\.parquet|\.files\.parquet|\.blocks|\.dir|\.c\d{{1,3}}-\d{{1,6}}\.slab)"
    rf")(?:\.tmp-{_HEX})?\Z"
)
#: Names a manifest may refer to, by kind.
_KINDS = {
    "fragments": re.compile(rf"^fragments/{_HEX}\.parquet\Z"),
    "zones": re.compile(rf"^{_COLUMN_DIR}/{_HEX}\.zones\.parquet\Z"),
    "files": re.compile(rf"^{_COLUMN_DIR}/{_HEX}\.files\.parquet\Z"),
    "directory": re.compile(rf"^{_COLUMN_DIR}/{_HEX}\.dir\Z"),
    "slab": re.compile(rf"^{_COLUMN_DIR}/{_HEX}\.c\d{{1,3}}-\d{{1,6}}\.slab\Z"),
}
#: Largest manifest read, and the deepest JSON nesting accepted in it.
MAX_MANIFEST_BYTES = 256 * 1024 * 1024
MAX_JSON_DEPTH = 32

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
        pa.field("etag", pa.string(), nullable=True),
    ]
)
#: The ``format`` of a fragment that is no Parquet or ORC file (a lake's ``README``): it
#: holds no rows, so no query returns it while it is unchanged.
NOT_DATA = "none"


def check_name(rel: Any, kind: str, label: str) -> str:
    """``rel`` if it is a name of ``kind`` an index writes, else CorruptFileError."""
    if not isinstance(rel, str) or not _KINDS[kind].match(rel):
        raise CorruptFileError(f"{label}: {rel!r} is not a {kind} name of this index (refused)")
    return rel


def check_depth(raw: bytes, label: str, limit: int = MAX_JSON_DEPTH) -> None:
    """Refuse JSON nested deeper than ``limit`` before parsing it (the parser recurses)."""
    depth, in_string, escaped = 0, False, False
    for ch in raw:
        if in_string:
            if escaped:
                escaped = False
            elif ch == 0x5C:  # backslash
                escaped = True
            elif ch == 0x22:
                in_string = False
        elif ch == 0x22:
            in_string = True
        elif ch in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                raise CorruptFileError(f"{label}: JSON nested more than {limit} deep")
        elif ch in (0x5D, 0x7D):
            depth -= 1


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
    """One build's zones of one column: Lance zone table parts, file table parts, and the
    serving directory and slabs (format 1 segments have no serving layout)."""

    zones: tuple[str, ...]  # names relative to the index root
    files: tuple[str, ...]
    num_fragments: int
    num_zones: int
    zone_bytes: int  # bytes of filter data in the zone tables
    file_bytes: int
    directory: str | None = None
    directory_size: int = 0
    slabs: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        return [
            *self.zones,
            *self.files,
            *([self.directory] if self.directory else []),
            *self.slabs,
        ]

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["zones"], d["files"], d["slabs"] = list(self.zones), list(self.files), list(self.slabs)
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any], label: str) -> Segment:
        def names(value: Any, kind: str) -> tuple[str, ...]:
            items = [value] if isinstance(value, str) else value  # format 1: one name
            if not isinstance(items, list):
                raise CorruptFileError(f"{label}: segment {kind} is not a list of names")
            return tuple(check_name(v, kind, label) for v in items)

        directory = d.get("directory")
        return cls(
            zones=names(d["zones"], "zones"),
            files=names(d["files"], "files"),
            num_fragments=_count(d["num_fragments"], label),
            num_zones=_count(d["num_zones"], label),
            zone_bytes=_count(d["zone_bytes"], label),
            file_bytes=_count(d["file_bytes"], label),
            directory=None if directory is None else check_name(directory, "directory", label),
            directory_size=_count(d.get("directory_size", 0), label),
            slabs=names(d.get("slabs", []), "slab"),
        )


def _count(v: Any, label: str, limit: int = 1 << 63) -> int:
    """A non-negative integer below ``limit`` (by default: what an int64 holds)."""
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < limit:
        raise CorruptFileError(f"{label}: {v!r} is not a count below {limit}")
    return v


#: Fragment ids are below this: a zone key is ``fragment_id << 40 | zone_start`` (uint64).
FRAGMENT_ID_LIMIT = 1 << 24


def _fragment_id(v: Any, label: str) -> int:
    return _count(v, label, FRAGMENT_ID_LIMIT)


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
    file_filters: bool = False
    segments: tuple[Segment, ...] = ()
    #: Live fragments whose values could not be indexed for this column (read in full).
    failed: tuple[int, ...] = ()

    def with_segments(self, segments: tuple[Segment, ...]) -> ColumnIndex:
        return replace(self, segments=segments)

    @property
    def read_at_microseconds(self) -> bool:
        """Stored as INT96, which DuckDB and Spark read at whole microseconds: literals
        then match every nanosecond of their microsecond (``Column.microseconds``)."""
        return self.physical is not None and self.physical.physical_type is PhysicalType.INT96

    @property
    def physical_name(self) -> str:
        if self.physical is None:
            return f"arrow {self.arrow_type}"
        p = self.physical
        extra = f"({p.type_length})" if p.type_length else ""
        unit = f" [{p.time_unit}]" if p.time_unit else ""
        return f"{p.physical_type.value}{extra}{unit}"

    def identity(self) -> dict[str, Any]:
        """What a serving directory records of its column (cross-checked on read)."""
        return {
            "name": self.name,
            "arrow_type": str(self.arrow_type),
            "physical": self.physical_name,
            "encoding": self.encoding,
            "hash": f"{self.hash} seed {self.seed}",
        }

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
            "segments": [s.to_json() for s in self.segments],
            "failed": list(self.failed),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any], label: str) -> ColumnIndex:
        p = d["physical"]
        physical = (
            None
            if p is None
            else PhysicalSpec(PhysicalType(p["physical_type"]), p["type_length"], p["time_unit"])
        )
        directory = d["directory"]
        if not isinstance(directory, str) or not re.fullmatch(_COLUMN_DIR, directory):
            raise CorruptFileError(f"{label}: {directory!r} is not a column directory (refused)")
        segments = tuple(Segment.from_json(s, label) for s in d["segments"])
        for s in segments:
            if any(not n.startswith(directory + "/") for n in s.names):
                raise CorruptFileError(
                    f"{label}: a segment of {d['name']} lies outside {directory}"
                )
        fpp = d["fpp"]
        if isinstance(fpp, bool) or not isinstance(fpp, int | float) or not 0.0 < fpp < 1.0:
            raise CorruptFileError(f"{label}: fpp {fpp!r} of {d['name']!r} is not a probability")
        for key, ok in (
            ("name", isinstance(d["name"], str)),
            ("hash", isinstance(d["hash"], str)),
            ("seed", isinstance(d["seed"], int) and not isinstance(d["seed"], bool)),
            ("file_filters", isinstance(d["file_filters"], int)),  # bool is an int
        ):
            if not ok:
                raise CorruptFileError(f"{label}: {key} {d[key]!r} is not of its type")
        if d["sizing"] not in SIZINGS:
            raise CorruptFileError(f"{label}: sizing {d['sizing']!r} is not one of {SIZINGS}")
        return cls(
            name=d["name"],
            directory=directory,
            arrow_type=_type_from_b64(d["arrow_type_ipc"]),
            physical=physical,
            encoding=Encoding.parse(d["encoding"]).value,
            hash=d["hash"],
            seed=d["seed"],
            sizing=d["sizing"],
            fpp=float(fpp),
            file_filters=bool(d["file_filters"]),
            segments=segments,
            failed=tuple(_fragment_id(v, label) for v in d.get("failed", [])),
        )


#: Zones of one column, all segments together: what one directory may hold at most
#: (``serving.MAX_DIRECTORY`` at 26 bytes a zone, 41M: 335G rows of 8,192). A column's
#: zones are in memory for a query, so a forged manifest must not multiply them.
MAX_COLUMN_ZONES = (1 << 30) // 26


def _check_objects(fragments: str | None, columns: dict[str, ColumnIndex], label: str) -> None:
    """Every object is named once in a manifest (a directory listed in many segments
    would multiply the memory of a query), and a column holds at most MAX_COLUMN_ZONES."""
    names = [fragments] if fragments else []
    for c in columns.values():
        zones = sum(s.num_zones for s in c.segments)
        if zones > MAX_COLUMN_ZONES:
            raise CorruptFileError(
                f"{label}: column {c.name} claims {zones:,} zones, over {MAX_COLUMN_ZONES:,}"
            )
        names += [n for s in c.segments for n in s.names]
    if len(set(names)) != len(names):
        raise CorruptFileError(f"{label}: an object is named twice")


@dataclass(frozen=True)
class Manifest:
    """One committed version of an index."""

    version: int
    source: dict[str, Any]
    zoning: Zoning
    schema: pa.Schema
    fragments: str | None  # fragment table name, None before the first file
    next_fragment_id: int
    columns: dict[str, ColumnIndex] = field(default_factory=dict)
    committed_at: str = ""
    writer: str = ""
    commit_id: str = ""
    #: Fragments no longer live whose zones some segment still holds (compaction drops them).
    dropped: tuple[int, ...] = ()
    num_files: int = 0
    num_rows: int = 0
    num_bytes: int = 0  # of the live files (0: not recorded)
    format_version: int = FORMAT_VERSION
    #: The table snapshot the index covers (a Delta version, an Iceberg snapshot id); None
    #: for a lake of files.
    snapshot: dict[str, Any] | None = None
    #: Files of the source the last build or refresh could not read (paths as fragments'):
    #: a query that trusts the index (``check_source=False``) reads them in full.
    unreadable: tuple[str, ...] = ()

    @property
    def fragment_rows(self) -> int | None:
        """How many rows its fragment table holds: one per live file (a format 1
        manifest does not say)."""
        return self.num_files if self.format_version >= 2 else None

    def to_json(self) -> dict[str, Any]:
        return (
            {
                "format": FORMAT,
                "format_version": FORMAT_VERSION,
                "version": self.version,
                "commit_id": self.commit_id,
                "committed_at": self.committed_at,
                "writer": self.writer,
                "source": self.source,
                "zoning": asdict(self.zoning),
                "schema_ipc": base64.b64encode(self.schema.serialize().to_pybytes()).decode(),
                "fragments": self.fragments,
                "next_fragment_id": self.next_fragment_id,
                "num_files": self.num_files,
                "num_rows": self.num_rows,
                "num_bytes": self.num_bytes,
                "dropped": list(self.dropped),
                "columns": {name: c.to_json() for name, c in self.columns.items()},
            }
            | ({} if self.snapshot is None else {"snapshot": self.snapshot})
            | ({"unreadable": list(self.unreadable)} if self.unreadable else {})
        )

    @classmethod
    def from_json(cls, d: dict[str, Any], label: str) -> Manifest:
        try:
            if d.get("format") != FORMAT:
                raise CorruptFileError(f"{label}: not a bloomskip zone index manifest")
            version = d.get("format_version")
            if version not in READABLE_VERSIONS:
                raise CorruptFileError(
                    f"{label}: format version {version!r} is not one this bloomskip reads "
                    f"({', '.join(map(str, READABLE_VERSIONS))}); upgrade bloomskip or rebuild"
                )
            schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(d["schema_ipc"])))
            fragments = d["fragments"]
            if fragments is not None:
                check_name(fragments, "fragments", label)
            columns = {n: ColumnIndex.from_json(c, label) for n, c in d["columns"].items()}
            if any(c.name != n for n, c in columns.items()):
                raise CorruptFileError(f"{label}: a column is filed under another name")
            if len({c.directory for c in columns.values()}) != len(columns):
                raise CorruptFileError(f"{label}: two columns share a directory")
            _check_objects(fragments, columns, label)
            if not isinstance(d["source"], dict):
                raise CorruptFileError(f"{label}: the source is not an object")
            snapshot = d.get("snapshot")
            if snapshot is not None and not isinstance(snapshot, dict):
                raise CorruptFileError(f"{label}: the snapshot is not an object")
            return cls(
                version=_count(d["version"], label),
                source=d["source"],
                zoning=Zoning(**d["zoning"]),
                schema=schema,
                fragments=fragments,
                next_fragment_id=_count(d["next_fragment_id"], label, FRAGMENT_ID_LIMIT + 1),
                columns=columns,
                committed_at=str(d.get("committed_at", "")),
                writer=str(d.get("writer", "")),
                commit_id=str(d.get("commit_id", "")),
                dropped=tuple(_fragment_id(v, label) for v in d.get("dropped", [])),
                num_files=_count(d.get("num_files", 0), label),
                num_rows=_count(d.get("num_rows", 0), label),
                num_bytes=_count(d.get("num_bytes", 0), label),
                format_version=version,
                snapshot=snapshot,
                unreadable=_paths(d.get("unreadable", []), label),
            )
        except CorruptFileError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, pa.ArrowException) as e:
            raise CorruptFileError(f"{label}: malformed manifest: {e!r}") from e


def _paths(v: Any, label: str) -> tuple[str, ...]:
    """A manifest's list of source paths: distinct, at most as many as fragment ids."""
    if not isinstance(v, list) or not all(isinstance(p, str) and p and "\0" not in p for p in v):
        raise CorruptFileError(f"{label}: unreadable files are not a list of paths")
    if len(v) > FRAGMENT_ID_LIMIT or len(set(v)) != len(v):
        raise CorruptFileError(f"{label}: unreadable files are named twice, or too many")
    return tuple(v)


def snapshot_text(snapshot: dict[str, Any]) -> str:
    """``delta version 3``, ``iceberg snapshot 123``."""
    if "version" in snapshot:
        return f"{snapshot.get('table')} version {snapshot['version']}"
    return f"{snapshot.get('table')} snapshot {snapshot.get('snapshot_id')}"


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


#: The zone table metadata keys that must agree with the manifest's column.
IDENTITY_KEYS = (
    "bloomskip.column",
    "bloomskip.arrow_type",
    "bloomskip.physical_type",
    "bloomskip.encoding",
    "bloomskip.hash",
)


def check_zone_table(table: pa.Table, col: ColumnIndex, zoning: Zoning, label: str) -> None:
    """Refuse a zone table whose own metadata says it holds another column, another type
    or another hash than the manifest says (a table swapped, or a manifest edited)."""
    meta = {
        k.decode(errors="replace"): v.decode(errors="replace")
        for k, v in (table.schema.metadata or {}).items()
    }
    want = zone_metadata(col, zoning)
    for key in IDENTITY_KEYS:
        if meta.get(key) != want[key]:
            raise CorruptFileError(
                f"{label}: says {key} = {meta.get(key)!r}, the manifest {want[key]!r}"
            )


def column_directory(position: int, name: str) -> str:
    """A directory name for a column that is safe on every file system."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:60].strip(".") or "column"
    return f"columns/{position}-{safe}"


def _type_to_b64(t: pa.DataType) -> str:
    return base64.b64encode(pa.schema([pa.field("t", t)]).serialize().to_pybytes()).decode()


def _type_from_b64(text: str) -> pa.DataType:
    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text))).field(0).type
