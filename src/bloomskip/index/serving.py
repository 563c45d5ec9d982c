"""The serving layout: zone filters stored block-major, so that a point lookup reads about
one 32-byte block per zone, in one contiguous read per size class, whatever the lake's size.

An SBBF of ``B`` blocks tests a hash ``h`` in block ``((h >> 32) * B) >> 32`` only: the
same block in every filter of that size. So for each *size class* (every zone filter of
``B`` blocks in a segment), block ``b`` of all its zones is stored side by side, and a
lookup of one value reads ``zones x 32`` bytes - the blocks it needs and nothing else.
This is the "transposed" or bit-sliced layout of OpenObserve's bloom index and of
BitFunnel, applied to Parquet's SBBF. The filters' bytes are Parquet's; only their order
on disk differs. The Lance-compatible zone tables of :mod:`.layout` are written as well,
unchanged.

Files, per indexed column and segment (names in :mod:`.layout`):

* **parts** (``<uuid>.blocks``): what one indexing task wrote - its zones' filters,
  block-major within each size class. Intermediate: the slabs are made from them.
* **directory** (``<segment>.dir``): every zone of the segment, sorted by zone key
  (``fragment_id << 40 | zone_start``): ``key``, ``length``, ``flags`` (has a null, has a
  value) and its size class; a JSON header names the column (cross-checked with the
  manifest), the classes and their slabs. About 18 bytes per zone.
* **slabs** (``<segment>.c<i>-<k>.slab``): blocks ``[k*s, (k+1)*s)`` of every zone of class
  ``i``, block-major (``s`` blocks x zones x 32 bytes), no header: its size is known.

Every byte is untrusted: magic, header size and shape, section bounds and counts are
checked against the object's size; a zone whose class is unknown is "may match".
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bloomskip.errors import CorruptFileError
from bloomskip.index.storage import Storage

PART_MAGIC = b"BSKPART1"
DIR_MAGIC = b"BSKDIR01"
_HEAD = 8 + 4  # magic, header length
MAX_HEADER = 1 << 20
MAX_BLOCKS = (128 << 20) // 32  # the SBBF's 128 MiB cap
#: A slab holds at most about this many bytes (a lookup reads one block row of it).
SLAB_BYTES = 64 << 20
NO_CLASS = 255
HAS_NULL, HAS_VALUE = 1, 2


def block_index(hashes: np.ndarray, blocks: int) -> np.ndarray:
    """The block each hash selects in a filter of ``blocks`` blocks (multiply-shift)."""
    return (((hashes >> np.uint64(32)) * np.uint64(blocks)) >> np.uint64(32)).astype(np.int64)


# --------------------------------------------------------------------------- container


def _pack(magic: bytes, header: dict[str, Any], sections: dict[str, np.ndarray]) -> bytes:
    """``magic | u32 header length | header JSON | sections (8-byte aligned)``; the header
    records each section's ``[offset, length]``."""
    names = list(sections)
    raw = {n: np.ascontiguousarray(sections[n]).view(np.uint8).reshape(-1) for n in names}
    # The header holds the offsets, which depend on its own length: fix the width first.
    header = dict(header, sections={n: [0, int(raw[n].size)] for n in names})
    for _ in range(3):
        text = json.dumps(header, separators=(",", ":")).encode()
        at = _align(_HEAD + len(text))
        offsets = {}
        for n in names:
            offsets[n] = [at, int(raw[n].size)]
            at = _align(at + raw[n].size)
        header = dict(header, sections=offsets)
    text = json.dumps(header, separators=(",", ":")).encode()
    if _align(_HEAD + len(text)) != header["sections"][names[0]][0] if names else False:
        raise AssertionError("serving header did not settle")  # pragma: no cover
    out = bytearray(at if names else _HEAD + len(text))
    out[:8] = magic
    out[8:12] = len(text).to_bytes(4, "little")
    out[12 : 12 + len(text)] = text
    for n in names:
        off, length = header["sections"][n]
        out[off : off + length] = raw[n].tobytes()
    return bytes(out)


def _align(n: int) -> int:
    return (n + 7) // 8 * 8


def read_header(storage: Storage, rel: str, magic: bytes, size: int) -> tuple[dict, bytes]:
    """The JSON header of a part or directory, checked against the object's ``size``;
    also returns the bytes read so far (the start of the sections, often all of them)."""
    label = storage.label(rel)
    first = min(size, 64 << 10)
    try:
        (head,) = storage.read_ranges(rel, [(0, first)])
    except FileNotFoundError:
        raise CorruptFileError(f"{label}: listed by the index manifest but missing") from None
    if len(head) < _HEAD or head[:8] != magic:
        raise CorruptFileError(f"{label}: not a bloomskip {magic[:7].decode()} file")
    n = int.from_bytes(head[8:12], "little")
    if n > MAX_HEADER or _HEAD + n > size:
        raise CorruptFileError(f"{label}: header of {n} bytes does not fit the file")
    if _HEAD + n > len(head):
        (rest,) = storage.read_ranges(rel, [(len(head), _HEAD + n - len(head))])
        head += rest
    try:
        header = json.loads(head[_HEAD : _HEAD + n])
    except (ValueError, RecursionError) as e:
        raise CorruptFileError(f"{label}: header is not JSON: {e}") from None
    if not isinstance(header, dict) or not isinstance(header.get("sections"), dict):
        raise CorruptFileError(f"{label}: header is not an object with sections")
    for name, span in header["sections"].items():
        if not (
            isinstance(span, list)
            and len(span) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in span)
            and span[0] + span[1] <= size
        ):
            raise CorruptFileError(f"{label}: section {name!r} lies outside the file")
    return header, head


def _int(header: dict, key: str, label: str, lo: int, hi: int) -> int:
    v = header.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        raise CorruptFileError(f"{label}: {key} = {v!r} is not in {lo}..{hi}")
    return v


def _classes(header: dict, label: str, zones: int) -> list[dict]:
    classes = header.get("classes")
    if not isinstance(classes, list) or len(classes) >= NO_CLASS:
        raise CorruptFileError(f"{label}: classes are not a list of at most {NO_CLASS - 1}")
    out = []
    for c in classes:
        if not isinstance(c, dict):
            raise CorruptFileError(f"{label}: a class is not an object")
        blocks = _int(c, "blocks", label, 1, MAX_BLOCKS)
        if blocks & (blocks - 1):
            raise CorruptFileError(f"{label}: {blocks} blocks is not a power of two")
        out.append({**c, "blocks": blocks, "count": _int(c, "count", label, 0, zones)})
    if sum(c["count"] for c in out) > zones:
        raise CorruptFileError(f"{label}: classes hold more zones than there are")
    return out


def _section(header: dict, head: bytes, storage: Storage, rel: str, name: str, dtype, n: int):
    span = header["sections"].get(name)
    label = storage.label(rel)
    if span is None:
        raise CorruptFileError(f"{label}: no section {name!r}")
    off, length = span
    if length != n * np.dtype(dtype).itemsize:
        raise CorruptFileError(f"{label}: section {name!r} holds {length} bytes, not {n} values")
    if off + length <= len(head):
        data = head[off : off + length]
    else:
        (data,) = storage.read_ranges(rel, [(off, length)])
    if len(data) != length:
        raise CorruptFileError(f"{label}: file ends inside section {name!r}")
    return np.frombuffer(data, dtype=dtype)


# -------------------------------------------------------------------------------- parts


def write_part(
    storage: Storage, rel: str, data: np.ndarray, offsets: np.ndarray
) -> tuple[np.ndarray, list[tuple[int, int]], int]:
    """Write the filters ``data[offsets[i]:offsets[i+1]]`` (bytes, back to back) as a part:
    block-major per size class. Returns each zone's class (its position among the part's
    classes, in order of first appearance; :data:`NO_CLASS` for a bitset that is not whole
    blocks), the classes as ``(blocks, zones)``, and the part's size."""
    sizes = np.diff(offsets)
    classes: dict[int, list[int]] = {}
    zone_class = np.full(sizes.shape[0], NO_CLASS, dtype=np.uint8)
    for z, n in enumerate(sizes.tolist()):
        blocks = n // 32
        if n <= 0 or n % 32 or blocks > MAX_BLOCKS or blocks & (blocks - 1):
            continue
        if blocks not in classes and len(classes) == NO_CLASS - 1:
            continue  # more sizes than a part can name: may match
        members = classes.setdefault(blocks, [])
        zone_class[z] = list(classes).index(blocks)
        members.append(z)
    sections = {}
    for i, (blocks, members) in enumerate(classes.items()):
        m = np.empty((blocks, len(members), 32), dtype=np.uint8)
        for j, z in enumerate(members):
            m[:, j, :] = data[offsets[z] : offsets[z + 1]].reshape(blocks, 32)
        sections[f"c{i}"] = m
    listed = [(b, len(ms)) for b, ms in classes.items()]
    header = {
        "zones": int(sizes.shape[0]),
        "classes": [{"blocks": b, "count": n} for b, n in listed],
    }
    body = _pack(PART_MAGIC, header, sections)
    storage.write(rel, body)
    return zone_class, listed, len(body)


@dataclass(frozen=True)
class Part:
    """A part as the driver knows it: its name, and per class its block count and zones."""

    rel: str
    classes: tuple[tuple[int, int], ...]  # (blocks, count) per class
    size: int


def read_part_blocks(storage: Storage, part: Part, cls: int, b0: int, b1: int) -> np.ndarray:
    """Blocks ``[b0, b1)`` of every zone of class ``cls`` in ``part``: (b1-b0, n, 32)."""
    header, _ = read_header(storage, part.rel, PART_MAGIC, part.size)
    label = storage.label(part.rel)
    zones = _int(header, "zones", label, 0, part.size)
    classes = _classes(header, label, zones)
    if [(c["blocks"], c["count"]) for c in classes] != list(part.classes):
        raise CorruptFileError(f"{label}: its classes are not those its task reported")
    blocks, count = part.classes[cls]
    span = header["sections"].get(f"c{cls}")
    if span is None or span[1] != blocks * count * 32:
        raise CorruptFileError(f"{label}: class {cls} matrix has the wrong size")
    start = span[0] + b0 * count * 32
    length = (b1 - b0) * count * 32
    (data,) = storage.read_ranges(part.rel, [(start, length)])
    if len(data) != length:
        raise CorruptFileError(f"{label}: file ends inside class {cls}")
    return np.frombuffer(data, dtype=np.uint8).reshape(b1 - b0, count, 32)


# ---------------------------------------------------------------------------- directory


def slab_blocks(blocks: int, zones: int) -> int:
    """Blocks per slab for a class: a power of two, a slab of at most SLAB_BYTES."""
    s = blocks
    while s > 1 and s * max(zones, 1) * 32 > SLAB_BYTES:
        s //= 2
    return s


def write_directory(
    storage: Storage,
    rel: str,
    identity: dict[str, Any],
    keys: np.ndarray,
    lengths: np.ndarray,
    flags: np.ndarray,
    zone_class: np.ndarray,
    classes: Sequence[tuple[int, int, int]],  # (blocks, count, slab_blocks)
) -> int:
    header = {
        "column": identity,
        "zones": int(keys.shape[0]),
        "classes": [{"blocks": b, "count": n, "slab_blocks": s} for b, n, s in classes],
    }
    data = _pack(
        DIR_MAGIC,
        header,
        {
            "keys": keys.astype("<u8"),
            "lengths": lengths.astype("<u8"),
            "flags": flags.astype(np.uint8),
            "class": zone_class.astype(np.uint8),
        },
    )
    storage.write(rel, data)
    return len(data)


@dataclass
class Directory:
    """A segment's zones as read from its directory: sorted keys and their facts, and where
    each zone's blocks are (class, position in the class)."""

    rel: str
    keys: np.ndarray  # uint64, strictly ascending
    lengths: np.ndarray  # uint64
    flags: np.ndarray  # uint8
    zone_class: np.ndarray  # uint8 (NO_CLASS: no usable filter)
    position: np.ndarray  # int64: the zone's index within its class
    classes: list[dict]  # blocks, count, slab_blocks
    identity: dict[str, Any]


def read_directory(storage: Storage, rel: str, size: int) -> Directory:
    header, head = read_header(storage, rel, DIR_MAGIC, size)
    label = storage.label(rel)
    zones = _int(header, "zones", label, 0, size // 18)
    classes = _classes(header, label, zones)
    for c in classes:
        s = _int(c, "slab_blocks", label, 1, c["blocks"])
        if s & (s - 1):
            raise CorruptFileError(f"{label}: slab of {s} blocks is not a power of two")
    keys = _section(header, head, storage, rel, "keys", "<u8", zones).astype(np.uint64)
    if zones > 1 and not (keys[1:] > keys[:-1]).all():
        raise CorruptFileError(f"{label}: zone keys are not strictly ascending")
    lengths = _section(header, head, storage, rel, "lengths", "<u8", zones).astype(np.uint64)
    flags = _section(header, head, storage, rel, "flags", np.uint8, zones)
    zone_class = _section(header, head, storage, rel, "class", np.uint8, zones).copy()
    zone_class[zone_class >= len(classes)] = NO_CLASS  # unknown class: may match
    position = np.zeros(zones, dtype=np.int64)
    for i, c in enumerate(classes):
        members = np.flatnonzero(zone_class == i)
        if members.shape[0] != c["count"]:
            raise CorruptFileError(
                f"{label}: class {i} says {c['count']} zones, has {members.shape[0]}"
            )
        position[members] = np.arange(members.shape[0])
    identity = header.get("column")
    if not isinstance(identity, dict):
        raise CorruptFileError(f"{label}: no column identity")
    return Directory(rel, keys, lengths, flags, zone_class, position, classes, identity)


def slab_name(directory_rel: str, cls: int, k: int) -> str:
    base = directory_rel[: -len(".dir")] if directory_rel.endswith(".dir") else directory_rel
    return f"{base}.c{cls}-{k}.slab"


@dataclass(frozen=True)
class SlabJob:
    """One slab of a segment to write: blocks ``[b0, b1)`` of the ``count`` zones of one
    size class, gathered from the parts that hold them. ``sources`` lists, per part, its
    class holding these zones and where each of that class's zones goes in the slab (-1:
    not in this segment)."""

    rel: str
    blocks: int
    count: int
    b0: int
    b1: int
    sources: tuple[tuple[Part, int, np.ndarray], ...]


def build_slab(storage: Storage, job: SlabJob) -> int:
    """Write ``job``'s slab; returns its size."""
    out = np.zeros((job.b1 - job.b0, job.count, 32), dtype=np.uint8)
    for part, cls, cols in job.sources:
        if part.classes[cls][0] != job.blocks:
            label = storage.label(part.rel)
            raise CorruptFileError(f"{label}: class {cls} is not {job.blocks} blocks")
        got = read_part_blocks(storage, part, cls, job.b0, job.b1)
        keep = cols >= 0
        out[:, cols[keep], :] = got[:, keep, :]
    storage.write(job.rel, memoryview(out).cast("B"))
    return out.size


class ServedFilters:
    """The zone filters of one column, read block by block from the segments' slabs as
    lookups need them; a block row once read is kept (so a warm lookup reads nothing)."""

    def __init__(
        self, storage: Storage, directories: Sequence[Directory], slabs: Sequence[Sequence[str]]
    ) -> None:
        self.storage = storage
        self.dirs = list(directories)
        self.slabs = [list(s) for s in slabs]
        self._rows: dict[tuple[int, int, int], np.ndarray] = {}

    def block_row(self, seg: int, cls: int, b: int) -> np.ndarray:
        """Block ``b`` of every zone of class ``cls`` of segment ``seg``: (count, 8) uint32."""
        key = (seg, cls, b)
        row = self._rows.get(key)
        if row is None:
            d = self.dirs[seg]
            c = d.classes[cls]
            s, count = c["slab_blocks"], c["count"]
            k = b // s
            names = self.slabs[seg]
            name = slab_name(d.rel, cls, k)
            if name not in names:
                raise CorruptFileError(
                    f"{self.storage.label(name)}: a slab the manifest does not list"
                )
            length = count * 32
            try:
                (data,) = self.storage.read_ranges(name, [((b - k * s) * length, length)])
            except FileNotFoundError:
                raise CorruptFileError(
                    f"{self.storage.label(name)}: listed by the index manifest but missing"
                ) from None
            if len(data) != length:
                raise CorruptFileError(f"{self.storage.label(name)}: slab cut short")
            row = self._rows[key] = np.frombuffer(data, dtype="<u4").reshape(count, 8)
        return row

    def probe(self, seg: np.ndarray, zone: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        """May zone ``zone[i]`` of segment ``seg[i]`` hold any of ``hashes``?"""
        from bloomskip.sbbf.masks import block_masks

        out = np.zeros(zone.shape[0], dtype=np.bool_)
        if zone.shape[0] == 0:
            return out
        masks = block_masks(hashes)  # (k, 8) uint32
        for s in np.unique(seg).tolist():
            d = self.dirs[s]
            mine = np.flatnonzero(seg == s)
            cls = d.zone_class[zone[mine]]
            out[mine[cls == NO_CLASS]] = True  # no usable filter: may match
            for c in np.unique(cls[cls != NO_CLASS]).tolist():
                at = mine[cls == c]
                pos = d.position[zone[at]]
                b = block_index(hashes, d.classes[c]["blocks"])
                hit = np.zeros(at.shape[0], dtype=np.bool_)
                for h in range(hashes.shape[0]):
                    words = self.block_row(s, c, int(b[h]))[pos]
                    hit |= ((words & masks[h]) == masks[h]).all(axis=1)
                out[at] = hit
        return out


__all__ = [
    "NO_CLASS",
    "Directory",
    "Part",
    "ServedFilters",
    "SlabJob",
    "block_index",
    "build_slab",
    "read_directory",
    "read_part_blocks",
    "served_zones",
    "slab_blocks",
    "slab_name",
    "write_directory",
    "write_part",
]


def served_zones(
    storage: Storage, directory: Directory, slabs: Sequence[str]
) -> list[bytes | None]:
    """Every zone's filter as the serving layout holds it (reading whole slabs), in
    directory order; None for a zone with no usable filter. For checks and tests: a
    lookup never reads this much."""
    out: list[bytes | None] = [None] * directory.keys.shape[0]
    for cls, c in enumerate(directory.classes):
        blocks, count, s = c["blocks"], c["count"], c["slab_blocks"]
        matrix = np.zeros((blocks, count, 32), dtype=np.uint8)
        for k in range(blocks // s):
            name = slab_name(directory.rel, cls, k)
            if name not in slabs:
                raise CorruptFileError(f"{storage.label(name)}: a slab the manifest does not list")
            data = storage.read(name)
            if len(data) != s * count * 32:
                raise CorruptFileError(f"{storage.label(name)}: slab of the wrong size")
            matrix[k * s : (k + 1) * s] = np.frombuffer(data, np.uint8).reshape(s, count, 32)
        for z in np.flatnonzero(directory.zone_class == cls).tolist():
            out[z] = matrix[:, directory.position[z], :].tobytes()
    return out
