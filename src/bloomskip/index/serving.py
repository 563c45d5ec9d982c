"""The serving layout: zone filters stored block-major, so that a point lookup reads about
one 32-byte block per zone, in one contiguous read per size class, whatever the lake's size.

An SBBF of ``B`` blocks tests a hash ``h`` in block ``((h >> 32) * B) >> 32`` only: the
same block in every filter of that size. So for each *size class* (every zone filter of
``B`` blocks in a segment), block ``b`` of all its zones is stored side by side - a *block
row* - and a lookup of one value reads one block row: the blocks it needs and nothing
else. This is the "transposed" or bit-sliced layout of OpenObserve's bloom index and of
BitFunnel, applied to Parquet's SBBF. The filters' bytes are Parquet's (and Lance's): only
their order on disk differs, and :func:`served_zones` gives them back zone by zone, so
Lance's zone table is a view of this layout (:meth:`bloomskip.index.ZoneIndex.zones`).

Files, per indexed column and segment (names in :mod:`.layout`):

* **parts** (``<uuid>.blocks``, :mod:`.partfile`): what one indexing task wrote - its
  zones' filters, block-major within each size class, each block row a zstd frame (a
  *piece*) with its checksum. Intermediate: the slabs are made from them, then they are
  deleted.
* **slabs** (``<segment>.c<i>-<k>.slab``): block rows ``[k*s, (k+1)*s)`` of every zone of
  class ``i``, each row one *frame*: zstd-compressed, or stored as is when that is not
  smaller (a frame as long as its row is raw). Filters sized at Lance's defaults are
  about a quarter ones, so a frame is about 22 % smaller than its row. A build's frame
  is usually its parts' pieces of that row back to back (a zstd stream of several frames
  decodes to their contents in order), so that writing a slab copies bytes.
  In a class of at least :data:`PLANES_MIN_ZONES` zones a frame holds the row's 256
  *bit planes* instead (a plane table, then the planes; see below): a lookup reads the 8
  its value needs, 1/32 of the row, and checks each by the CRC-32 its table holds.
* **directory** (``<segment>.dir``), written once the slabs are: every zone of the
  segment sorted by zone key (``fragment_id << 40 | zone_start``) with its ``length``,
  ``flags`` (has a null, has a value), ``ndv`` and size class; and per class where each
  frame ends in its slab and its CRC-32. A JSON header names the column (cross-checked
  with the manifest), the directory itself (a whole directory copied over another
  segment's, of the same size and zone count, would otherwise hide that segment's
  zones) and the classes; the file ends with the CRC-32 of all before it.
  About 26 bytes per zone and 12 per block row, read whole by a lookup.

Every byte is untrusted: magic, header size and shape, section bounds and counts are
checked against the object's size, frames against their slab's. Checksums make a
changed byte an error rather than a different answer: a flipped bit of a filter would
otherwise drop matches. A frame must match its CRC and decompress to exactly its row (a
plane table must match its CRC and fit its frame, a plane its CRC and its size); a zone
whose class is unknown is "may match".
"""

from __future__ import annotations

import json
import posixpath
import threading
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

import numpy as np

from bloomskip.errors import CorruptFileError
from bloomskip.index.storage import Storage

DIR_MAGIC = b"BSKDIR02"
#: A directory with a class stored as bit planes (older readers refuse it by its magic).
DIR_MAGIC_PLANES = b"BSKDIR03"
_HEAD = 8 + 4  # magic, header length
MAX_HEADER = 1 << 20
MAX_BLOCKS = (128 << 20) // 32  # the SBBF's 128 MiB cap
#: A slab holds at most about this many bytes of rows (a lookup reads one row of it).
SLAB_BYTES = 64 << 20
NO_CLASS = 255
HAS_NULL, HAS_VALUE = 1, 2
ZSTD_LEVEL = 1
_ZONE_BYTES = 26  # the directory's bytes per zone
MAX_DIRECTORY = 1 << 30  # 41M zones: 330G rows of 8,192 per segment
#: A class of at least this many zones (134M rows of 8,192) stores each block row as 256
#: bit planes. Below it a lookup decodes a whole row (at most 512 KiB) and a build's slabs
#: are its parts' pieces copied; a planes class costs a build the rows decoded, transposed
#: and 256 small zstd frames per row, but a lookup of a new value at 26,000 zones 1.3 ms
#: where whole rows took 3.7-4.3 ms (and their decoding grows with the zones).
PLANES_MIN_ZONES = 16384
#: A planes frame starts with, per plane, where it ends (u32) and then its CRC-32 (u32).
PLANE_TABLE = 256 * 8


def uses_planes(count: int) -> bool:
    """Does a class of ``count`` zones store its block rows as bit planes?"""
    return count >= PLANES_MIN_ZONES


def block_index(hashes: np.ndarray, blocks: int) -> np.ndarray:
    """The block each hash selects in a filter of ``blocks`` blocks (multiply-shift)."""
    return (((hashes >> np.uint64(32)) * np.uint64(blocks)) >> np.uint64(32)).astype(np.int64)


@cache
def _codec():
    """pyarrow's zstd: decompression (one call per frame or plane a lookup reads)."""
    import pyarrow as pa

    return pa.Codec("zstd", compression_level=ZSTD_LEVEL)


_local = threading.local()


def _compress(data) -> bytes:
    """zstd at :data:`ZSTD_LEVEL` with this thread's reusable context (python-zstandard):
    pyarrow's ``Codec.compress`` sets up a context per call, half the cost of a 3 KiB
    bit plane (17 vs 8 us measured), and a build compresses hundreds of thousands."""
    c = getattr(_local, "zstd", None)
    if c is None:
        import zstandard

        c = _local.zstd = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
    return c.compress(data)


def encode_rows(rows: np.ndarray, planes: bool = False) -> tuple[bytes, np.ndarray]:
    """Block rows ``(s, count, 32)`` as frames back to back; and per frame where it ends
    and its CRC-32 (of a planes frame: of its plane table), ``(2, s)`` uint64."""
    frames, ends, at = [], np.zeros((2, rows.shape[0]), np.uint64), 0
    for b in range(rows.shape[0]):
        if planes:
            frame = _plane_frame(rows[b])
            crc = zlib.crc32(frame[:PLANE_TABLE])
        else:
            frame = _pack(np.ascontiguousarray(rows[b]))  # no copy into bytes first
            crc = zlib.crc32(frame)
        frames.append(frame)
        at += len(frame)
        ends[0, b], ends[1, b] = at, crc
    return b"".join(frames), ends


def _pack(raw: bytes | np.ndarray) -> bytes:
    """zstd, or ``raw`` itself (as bytes) when that is not smaller."""
    packed = _compress(raw)
    size = raw.nbytes if isinstance(raw, np.ndarray) else len(raw)
    return packed if len(packed) < size else bytes(raw)


def _unpack(data: bytes, n: int, label: str, what: str) -> bytes:
    """What :func:`_pack` made back to its ``n`` bytes, exactly, or an error."""
    return data if len(data) == n else decompress(data, n, label, what)


def decompress(data, n: int, label: str, what: str) -> bytes:
    """zstd (one frame, or several back to back) to exactly ``n`` bytes, or an error."""
    try:
        out = _codec().decompress(data, decompressed_size=n, asbytes=True)
    except (OSError, ValueError) as e:
        raise CorruptFileError(f"{label}: {what} does not decompress: {e}") from None
    if len(out) != n:  # pragma: no cover - pyarrow checks the size
        raise CorruptFileError(f"{label}: {what} is not {n} bytes")
    return out


def decode_row(frame: bytes, count: int, label: str) -> np.ndarray:
    """One frame back to its block row, ``(count, 32)`` bytes: exactly that, or an error."""
    data = _unpack(frame, count * 32, label, "a block row")
    return np.frombuffer(data, dtype=np.uint8).reshape(count, 32)


# ------------------------------------------------------------------------- bit planes
#
# A block row of a large class is stored as 256 *bit planes*: plane ``32*j + k`` holds
# bit ``k`` of word ``j`` of every zone's block, zone ``z`` at bit ``z % 8`` of byte
# ``z // 8``. A value's mask sets one bit per word, so a lookup reads and decodes 8 planes
# of ``count / 8`` bytes each - 1/32 of the row - and ANDs them. The frame: a plane table
# (per plane where it ends after the table, u32, then its CRC-32, u32), then the planes
# back to back, each zstd-compressed or stored as is when that is not smaller. The
# directory holds the CRC-32 of the table.


def plane_bytes(count: int) -> int:
    return (count + 7) // 8


def to_planes(row: np.ndarray) -> np.ndarray:
    """A block row ``(count, 32)`` uint8 as its 256 bit planes ``(256, ceil(count/8))``
    (compiled: builds and compactions only, never a lookup)."""
    from bloomskip.index import kernels

    out = np.zeros((256, plane_bytes(row.shape[0])), np.uint8)
    kernels.rows_to_planes(np.ascontiguousarray(row, dtype=np.uint8), out)
    return out


def from_planes(planes: np.ndarray, count: int) -> np.ndarray:
    """:func:`to_planes` undone: ``(count, 32)`` uint8."""
    from bloomskip.index import kernels

    out = np.empty((count, 32), np.uint8)
    kernels.planes_to_rows(np.ascontiguousarray(planes, dtype=np.uint8), out)
    return out


def _plane_frame(row: np.ndarray) -> bytes:
    packed = [_pack(p) for p in to_planes(row)]  # each plane a contiguous row: no copy
    ends = np.cumsum([len(p) for p in packed]).astype("<u4")
    crcs = np.array([zlib.crc32(p) for p in packed], "<u4")
    return ends.tobytes() + crcs.tobytes() + b"".join(packed)


def plane_table(table: bytes, frame: int, count: int, label: str) -> tuple[np.ndarray, np.ndarray]:
    """A frame's plane table, checked against the frame's length (``frame`` bytes) and
    its class: where each plane starts and ends after the table, ``(257,)`` int64, and
    each plane's CRC-32."""
    if len(table) != PLANE_TABLE:
        raise CorruptFileError(f"{label}: a plane table is cut short")
    ends = np.frombuffer(table, "<u4", 256).astype(np.int64)
    bounds = np.concatenate([np.zeros(1, np.int64), ends])
    sizes = np.diff(bounds)
    if (sizes < 1).any() or (sizes > plane_bytes(count)).any() or ends[-1] != frame - PLANE_TABLE:
        raise CorruptFileError(f"{label}: a plane table does not fit its frame")
    return bounds, np.frombuffer(table, "<u4", 256, 1024).astype(np.uint32)


def decode_plane(data: bytes, crc: int, count: int, label: str) -> np.ndarray:
    """One stored plane, checked by its CRC-32, back to its ``ceil(count/8)`` bytes."""
    if zlib.crc32(data) != crc:
        raise CorruptFileError(f"{label}: a bit plane fails its checksum")
    return np.frombuffer(_unpack(data, plane_bytes(count), label, "a bit plane"), np.uint8)


def decode_planes_frame(frame: bytes, crc: int, count: int, label: str) -> np.ndarray:
    """A whole planes frame (its table checked by ``crc``) back to its block row."""
    table = frame[:PLANE_TABLE]
    if zlib.crc32(table) != crc:
        raise CorruptFileError(f"{label}: a plane table fails its checksum")
    bounds, crcs = plane_table(table, len(frame), count, label)
    at = bounds + PLANE_TABLE
    planes = np.empty((256, plane_bytes(count)), np.uint8)
    for p in range(256):
        planes[p] = decode_plane(frame[at[p] : at[p + 1]], int(crcs[p]), count, label)
    return from_planes(planes, count)


# --------------------------------------------------------------------------- container


def _align(n: int) -> int:
    return (n + 7) // 8 * 8


def parse_header(head: bytes, magic: bytes, size: int, label: str, body: int | None = None) -> dict:
    """The header at the start of ``head`` (an object of ``size`` bytes), checked; its
    sections must lie within the object, or within ``body`` bytes (a compressed body's
    size once decompressed)."""
    if len(head) < _HEAD or head[:8] != magic:
        raise CorruptFileError(f"{label}: not a bloomskip {magic[:7].decode()} file")
    n = int.from_bytes(head[8:12], "little")
    if n > MAX_HEADER or _HEAD + n > min(size, len(head)):
        raise CorruptFileError(f"{label}: header of {n} bytes does not fit the file")
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
            and span[0] + span[1] <= (size if body is None else body)
        ):
            raise CorruptFileError(f"{label}: section {name!r} lies outside the file")
    return header


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


class BlockSource(Protocol):
    """Where a slab job gathers blocks from: a task's part, or an older segment's slabs."""

    classes: tuple[tuple[int, int], ...]  # (blocks, count) per class

    def rows(self, storage: Storage, cls: int, b0: int, b1: int) -> np.ndarray:
        """Block rows ``[b0, b1)`` of class ``cls``: ``(b1 - b0, count, 32)`` bytes."""


# ---------------------------------------------------------------------------- directory


def slab_blocks(blocks: int, zones: int) -> int:
    """Block rows per slab for a class: a power of two, a slab of at most SLAB_BYTES."""
    s = blocks
    while s > 1 and s * max(zones, 1) * 32 > SLAB_BYTES:
        s //= 2
    return s


def slab_name(directory_rel: str, cls: int, k: int) -> str:
    base = directory_rel[: -len(".dir")] if directory_rel.endswith(".dir") else directory_rel
    return f"{base}.c{cls}-{k}.slab"


@dataclass
class Directory:
    """A segment's zones as read from its directory: sorted keys and their facts, where
    each zone's blocks are (class, position in the class), and per class where each block
    row's frame ends in its slab (a slab's first frame starts at 0) and its CRC-32."""

    rel: str
    keys: np.ndarray  # uint64, strictly ascending
    lengths: np.ndarray  # uint64
    flags: np.ndarray  # uint8
    ndv: np.ndarray  # uint64
    zone_class: np.ndarray  # uint8 (NO_CLASS: no usable filter)
    position: np.ndarray  # int64: the zone's index within its class
    classes: list[dict]  # blocks, count, slab_blocks
    ends: list[np.ndarray]  # per class, int64 per block row
    crcs: list[np.ndarray]  # per class, uint32 per block row
    identity: dict[str, Any]

    def frame(self, cls: int, b: int) -> tuple[str, int, int, int]:
        """Block row ``b`` of class ``cls``: its slab's name, where its frame lies, and
        the frame's CRC-32."""
        s = self.classes[cls]["slab_blocks"]
        end = int(self.ends[cls][b])
        start = 0 if b % s == 0 else int(self.ends[cls][b - 1])
        return slab_name(self.rel, cls, b // s), start, end, int(self.crcs[cls][b])


def write_directory(
    storage: Storage,
    rel: str,
    identity: dict[str, Any],
    zones: dict[str, np.ndarray],  # keys, lengths, flags, ndv, class
    classes: Sequence[tuple[int, int, int]],  # (blocks, count, slab_blocks)
    frames: Sequence[np.ndarray],  # per class, (ends, crcs) of its block rows: (2, blocks)
) -> int:
    """``magic | u32 header length | header JSON | zstd(sections) | u32 CRC-32`` - the
    keys as differences (a segment's keys are dense runs), so the body compresses
    many times over and a lookup reads a few bytes per zone."""
    keys = zones["keys"].astype(np.uint64)
    none = np.zeros((2, 0), np.uint64)
    frames_a = np.concatenate([np.asarray(f, np.uint64) for f in frames] or [none], axis=1)
    sections = {
        "key_deltas": np.diff(keys, prepend=np.uint64(0)).astype("<u8"),
        "lengths": zones["lengths"].astype("<u8"),
        "flags": zones["flags"].astype(np.uint8),
        "ndv": zones["ndv"].astype("<u8"),
        "class": zones["class"].astype(np.uint8),
        "ends": frames_a[0].astype("<u8"),
        "crcs": frames_a[1].astype("<u4"),
    }
    spans, parts, at = {}, [], 0
    for name, arr in sections.items():
        raw = np.ascontiguousarray(arr).view(np.uint8).tobytes()
        spans[name] = [at, len(raw)]
        parts.append(raw.ljust(_align(len(raw)), b"\0"))
        at += len(parts[-1])
    body = b"".join(parts)
    packed = _compress(body)
    header = {
        "column": identity,
        "name": posixpath.basename(rel),  # a directory copied over another's is refused
        "zones": int(keys.shape[0]),
        "codec": "zstd",
        "classes": [
            {"blocks": b, "count": n, "slab_blocks": s}
            | ({"layout": "planes"} if uses_planes(n) else {})
            for b, n, s in classes
        ],
        "body": [len(packed), len(body)],
        "sections": spans,
    }
    text = json.dumps(header, separators=(",", ":")).encode()
    magic = DIR_MAGIC_PLANES if any(uses_planes(n) for _, n, _ in classes) else DIR_MAGIC
    out = magic + len(text).to_bytes(4, "little") + text + packed
    out += zlib.crc32(out).to_bytes(4, "little")
    storage.write(rel, out)
    return len(out)


def read_directory(storage: Storage, rel: str, size: int, zones: int | None = None) -> Directory:
    """A segment's directory, read whole (one request) and checked; ``zones``: how many
    the manifest says it holds (it decides how much memory the body may take)."""
    label = storage.label(rel)
    if not 0 < size <= MAX_DIRECTORY:
        size = storage.size(rel) or 0
        if not 0 < size <= MAX_DIRECTORY:
            raise CorruptFileError(f"{label}: missing, empty or over {MAX_DIRECTORY} bytes")
    try:
        (data,) = storage.read_ranges(rel, [(0, size)])
    except FileNotFoundError:
        raise CorruptFileError(f"{label}: listed by the index manifest but missing") from None
    if len(data) != size or size < _HEAD + 4:
        raise CorruptFileError(f"{label}: {len(data)} bytes, the manifest says {size}")
    if zlib.crc32(data[:-4]) != int.from_bytes(data[-4:], "little"):
        raise CorruptFileError(f"{label}: checksum mismatch (changed or cut short)")
    data = data[:-4]
    magic = DIR_MAGIC_PLANES if data[:8] == DIR_MAGIC_PLANES else DIR_MAGIC
    header = parse_header(data, magic, len(data), label, body=MAX_DIRECTORY)
    if header.get("codec") != "zstd":
        raise CorruptFileError(f"{label}: codec {header.get('codec')!r} is not zstd")
    start = _HEAD + int.from_bytes(data[8:12], "little")
    span = header.get("body")
    if not (
        isinstance(span, list)
        and len(span) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in span)
        and span[0] == len(data) - start
        and 0 <= span[1] <= MAX_DIRECTORY
    ):
        raise CorruptFileError(f"{label}: body size {span!r} does not fit the file")
    n = _int(header, "zones", label, 0, MAX_DIRECTORY // _ZONE_BYTES)
    if zones is not None and n != zones:
        raise CorruptFileError(f"{label}: holds {n} zones, the manifest says {zones}")
    zones = n
    classes = _classes(header, label, zones)
    for c in classes:
        s = _int(c, "slab_blocks", label, 1, c["blocks"])
        if s & (s - 1):
            raise CorruptFileError(f"{label}: slab of {s} blocks is not a power of two")
        layout = c.get("layout", "rows")
        if layout not in ("rows", "planes") or (layout == "planes" and magic != DIR_MAGIC_PLANES):
            raise CorruptFileError(f"{label}: block rows laid out as {layout!r}")
        c["planes"] = layout == "planes"
    rows = sum(c["blocks"] for c in classes)
    expect = 3 * _align(8 * zones) + 2 * _align(zones) + _align(8 * rows) + _align(4 * rows)
    if span[1] != expect:
        raise CorruptFileError(f"{label}: body of {span[1]} bytes, {expect} for its zones")
    try:
        body = _codec().decompress(data[start:], decompressed_size=span[1], asbytes=True)
    except OSError as e:
        raise CorruptFileError(f"{label}: body does not decompress: {e}") from None

    def section(name: str, dtype, n: int) -> np.ndarray:
        span = header["sections"].get(name)
        if span is not None and span[0] + span[1] > len(body):
            raise CorruptFileError(f"{label}: section {name!r} lies outside the body")
        return _section(header, body, storage, rel, name, dtype, n)

    with np.errstate(over="ignore"):
        keys = np.cumsum(section("key_deltas", "<u8", zones).astype(np.uint64), dtype=np.uint64)
    if zones > 1 and not (keys[1:] > keys[:-1]).all():
        raise CorruptFileError(f"{label}: zone keys are not strictly ascending")
    lengths = section("lengths", "<u8", zones).astype(np.uint64)
    flags = section("flags", np.uint8, zones)
    ndv = section("ndv", "<u8", zones).astype(np.uint64)
    if not np.array_equal((flags & HAS_VALUE) > 0, ndv > 0):
        raise CorruptFileError(f"{label}: zone flags and distinct counts disagree")
    zone_class = section("class", np.uint8, zones).copy()
    zone_class[zone_class >= len(classes)] = NO_CLASS  # unknown class: may match
    all_ends = section("ends", "<u8", rows).astype(np.int64)
    all_crcs = section("crcs", "<u4", rows).astype(np.uint32)
    position = np.zeros(zones, dtype=np.int64)
    ends, crcs, at = [], [], 0
    for i, c in enumerate(classes):
        members = np.flatnonzero(zone_class == i)
        if members.shape[0] != c["count"]:
            raise CorruptFileError(
                f"{label}: class {i} says {c['count']} zones, has {members.shape[0]}"
            )
        position[members] = np.arange(members.shape[0])
        e = all_ends[at : at + c["blocks"]]
        starts = e.reshape(-1, c["slab_blocks"]).copy()
        starts[:, 1:] = starts[:, :-1]
        starts[:, 0] = 0
        frame = e - starts.reshape(-1)
        lo, hi = 1, c["count"] * 32
        if c["planes"]:
            lo, hi = PLANE_TABLE + 256, PLANE_TABLE + 256 * plane_bytes(c["count"])
        if (e < 0).any() or (frame < lo).any() or (frame > hi).any():
            raise CorruptFileError(f"{label}: class {i} has frames out of bounds")
        ends.append(e)
        crcs.append(all_crcs[at : at + c["blocks"]])
        at += c["blocks"]
    identity = header.get("column")
    if not isinstance(identity, dict):
        raise CorruptFileError(f"{label}: no column identity")
    name = header.get("name", posixpath.basename(rel))  # unnamed: written before 2026-11-29
    if name != posixpath.basename(rel):
        raise CorruptFileError(f"{label}: is the directory {name!r}, of another segment")
    return Directory(
        rel, keys, lengths, flags, ndv, zone_class, position, classes, ends, crcs, identity
    )


# -------------------------------------------------------------------------------- slabs


def read_rows(
    storage: Storage, d: Directory, slabs: Sequence[str], cls: int, b0: int, b1: int
) -> np.ndarray:
    """Block rows ``[b0, b1)`` of class ``cls`` of a segment: ``(b1-b0, count, 32)``."""
    count = d.classes[cls]["count"]
    out = np.empty((b1 - b0, count, 32), dtype=np.uint8)
    by_slab: dict[str, list[tuple[int, int, int, int]]] = {}
    for b in range(b0, b1):
        name, start, end, crc = d.frame(cls, b)
        by_slab.setdefault(name, []).append((b, start, end, crc))
    for name, frames in by_slab.items():
        label = storage.label(name)
        if name not in slabs:
            raise CorruptFileError(f"{label}: a slab the manifest does not list")
        lo, hi = frames[0][1], frames[-1][2]
        try:
            (data,) = storage.read_ranges(name, [(lo, hi - lo)])
        except FileNotFoundError:
            raise CorruptFileError(f"{label}: listed by the index manifest but missing") from None
        if len(data) != hi - lo:
            raise CorruptFileError(f"{label}: slab cut short")
        for b, start, end, crc in frames:
            frame = data[start - lo : end - lo]
            if d.classes[cls].get("planes"):
                out[b - b0] = decode_planes_frame(frame, crc, count, label)
                continue
            if zlib.crc32(frame) != crc:
                raise CorruptFileError(f"{label}: block row {b} fails its checksum")
            out[b - b0] = decode_row(frame, count, label)
    return out


@dataclass(frozen=True)
class SegmentBlocks:
    """An older segment's slabs as a :class:`BlockSource` (compaction)."""

    directory: Directory
    slabs: tuple[str, ...]

    @property
    def classes(self) -> tuple[tuple[int, int], ...]:
        return tuple((c["blocks"], c["count"]) for c in self.directory.classes)

    def rows(self, storage: Storage, cls: int, b0: int, b1: int) -> np.ndarray:
        return read_rows(storage, self.directory, self.slabs, cls, b0, b1)


@dataclass(frozen=True)
class SlabJob:
    """One slab of a segment to write: block rows ``[b0, b1)`` of the ``count`` zones of
    one size class, gathered from the sources that hold them. ``sources`` lists, per
    source, its class holding these zones and where each of that class's zones goes in
    the slab (-1: not in this segment)."""

    rel: str
    blocks: int
    count: int
    b0: int
    b1: int
    sources: tuple[tuple[BlockSource, int, np.ndarray], ...]
    planes: bool = False  # frames of bit planes (:func:`uses_planes`)


def build_slab(storage: Storage, job: SlabJob) -> np.ndarray:
    """Write ``job``'s slab; returns where each of its frames ends and its CRC-32, as
    ``(2, rows)`` uint64."""
    if not job.planes:
        joined = _joined(storage, job)
        if joined is not None:
            data, ends = joined
            storage.write(job.rel, data)
            return ends
    out = np.zeros((job.b1 - job.b0, job.count, 32), dtype=np.uint8)
    for src, cls, cols in job.sources:
        if src.classes[cls][0] != job.blocks:
            raise CorruptFileError(f"a source of {job.rel}: class {cls} is not {job.blocks} blocks")
        run = _one_run(cols)
        into = getattr(src, "rows_into", None)
        if run is not None and into is not None:  # a task's part, its zones side by side
            into(storage, cls, job.b0, job.b1, out[:, run : run + cols.shape[0], :])
        else:
            _scatter(out, src.rows(storage, cls, job.b0, job.b1), cols)
    data, ends = encode_rows(out, job.planes)
    storage.write(job.rel, data)
    return ends


def _joined(storage: Storage, job: SlabJob) -> tuple[list, np.ndarray] | None:
    """The slab of ``job`` as its sources' pieces back to back, when each source is a
    task's part (zstd pieces: :meth:`~.partfile.Part.pieces`) whose zones are one run of
    columns and the runs tile the class in order: block row ``b``'s frame is then piece
    ``b`` of each part in turn, a zstd stream of several frames that decodes to the whole
    row, and nothing is decompressed or compressed again. None: gather as rows instead."""
    runs = []
    for src, cls, cols in job.sources:
        if src.classes[cls][0] != job.blocks:
            raise CorruptFileError(f"a source of {job.rel}: class {cls} is not {job.blocks} blocks")
        if cols.shape[0] == 0:
            continue
        run = _one_run(cols)
        if run is None or cols.shape[0] != src.classes[cls][1] or not hasattr(src, "pieces"):
            return None  # a piece is every zone of its part's class: all must go, in order
        runs.append((run, cols.shape[0], src, cls))
    runs.sort(key=lambda r: r[0])
    at = 0
    for run, n, _, _ in runs:
        if run != at:
            return None
        at += n
    if at != job.count:
        return None
    got = [src.pieces(storage, cls, job.b0, job.b1) for _, _, src, cls in runs]
    width = job.count * 32
    body: list = []  # the slab's buffers, written back to back without joining them
    ends, end = np.zeros((2, job.b1 - job.b0), np.uint64), 0
    for r in range(job.b1 - job.b0):
        pieces = [p[r] for p in got]
        size = sum(p.nbytes for p in pieces)
        if size >= width:  # not smaller than the row: stored as is, as _pack does
            pieces = [decompress(b"".join(pieces), width, storage.label(job.rel), "a block row")]
            size = width
        crc = 0
        for p in pieces:
            crc = zlib.crc32(p, crc)
        body.extend(pieces)
        end += size
        ends[0, r], ends[1, r] = end, crc
    return body, ends


def _one_run(cols: np.ndarray) -> int | None:
    """Where the source's zones go when all of them go to consecutive columns (a task's
    files hold consecutive fragment ids): the first column; else None."""
    n = cols.shape[0]
    if n == 0 or int(cols[0]) < 0:
        return None
    first = int(cols[0])
    return first if int(cols[-1]) == first + n - 1 and bool((np.diff(cols) == 1).all()) else None


def _scatter(out: np.ndarray, got: np.ndarray, cols: np.ndarray) -> None:
    """``out[:, cols[i], :] = got[:, i, :]`` for every ``cols[i] >= 0``: a slice copy per
    run of zones that stay together (a file's zones do), else one gather of 32-byte
    items."""
    src = np.flatnonzero(cols >= 0)
    if src.shape[0] == 0:
        return
    dst = cols[src]
    cut = np.flatnonzero((np.diff(src) != 1) | (np.diff(dst) != 1)) + 1
    if cut.shape[0] * 8 > src.shape[0]:  # short runs
        rows = out.shape[0]
        o = out.view("V32").reshape(rows, out.shape[1])
        g = np.ascontiguousarray(got).view("V32").reshape(rows, got.shape[1])
        o[:, dst] = g[:, src]
        return
    lo = np.concatenate([[0], cut]).tolist()
    hi = np.concatenate([cut, [src.shape[0]]]).tolist()
    for a, b in zip(lo, hi, strict=True):
        d, s = int(dst[a]), int(src[a])
        out[:, d : d + b - a, :] = got[:, s : s + b - a, :]


def row_holds(row: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Which blocks of a block row ``(count, 8)`` uint32 hold every bit of ``mask``: word
    by word, in numpy (a lookup of a few values never loads the compiled kernels)."""
    ok = (row[:, 0] & mask[0]) == mask[0]
    for j in range(1, 8):
        ok &= (row[:, j] & mask[j]) == mask[j]
    return ok


#: Bytes of decoded block rows a :class:`ServedFilters` keeps for later lookups.
ROW_CACHE_BYTES = 64 << 20


def present(codes: np.ndarray) -> list[int]:
    """The distinct small non-negative integers in ``codes``, ascending (a count, not a
    hash table: segment, class and source numbers are few)."""
    if codes.shape[0] == 0:
        return []
    return np.flatnonzero(np.bincount(codes)).tolist()


class ServedFilters:
    """The zone filters of one column, read block row by block row (or, for a class
    stored as bit planes, plane by plane) from the segments' slabs as lookups need them.
    What was read is kept decoded, the most recently used first, up to
    :data:`ROW_CACHE_BYTES` (a lookup of a value seen before reads nothing; memory does
    not grow with the number of lookups)."""

    def __init__(
        self,
        storage: Storage,
        directories: Sequence[Directory],
        slabs: Sequence[Sequence[str]],
        cache_bytes: int | None = None,
    ) -> None:
        self.storage = storage
        self.dirs = list(directories)
        self.slabs = [list(s) for s in slabs]
        # (seg, cls, b): a block row; (seg, cls, b, -1): a plane table and its slab;
        # (seg, cls, b, p): plane p, decoded
        self._rows: OrderedDict[tuple, Any] = OrderedDict()
        self._cached = 0
        self._limit = ROW_CACHE_BYTES if cache_bytes is None else cache_bytes
        self._members: dict[Any, Any] = {}  # per segment, made once: see _class_members

    def _get(self, key: tuple) -> Any:
        got = self._rows.get(key)
        if got is not None:
            self._rows.move_to_end(key)
        return got

    def _keep(self, key: tuple, value: Any, nbytes: int) -> None:
        self._rows[key] = value
        self._cached += nbytes
        while self._cached > self._limit and len(self._rows) > 1:
            self._cached -= _nbytes(self._rows.popitem(last=False)[1])

    def block_row(self, seg: int, cls: int, b: int) -> np.ndarray:
        """Block ``b`` of every zone of class ``cls`` of segment ``seg``: (count, 8) uint32."""
        key = (seg, cls, b)
        row = self._get(key)
        if row is None:
            got = read_rows(self.storage, self.dirs[seg], self.slabs[seg], cls, b, b + 1)
            row = got[0].view("<u4")
            self._keep(key, row, row.nbytes)
        return row

    def planes(self, seg: int, cls: int, b: int, wanted: Sequence[int]) -> list[np.ndarray]:
        """Planes ``wanted`` of block row ``b`` of a planes class: each ``ceil(count/8)``
        bytes. The plane table, then the planes not in memory, in one read each."""
        d = self.dirs[seg]
        count = d.classes[cls]["count"]
        table = self._get((seg, cls, b, -1))
        if table is None:
            name, start, end, crc = d.frame(cls, b)
            label = self.storage.label(name)
            if name not in self.slabs[seg]:
                raise CorruptFileError(f"{label}: a slab the manifest does not list")
            head = self._read(name, [(start, PLANE_TABLE)])[0]
            if len(head) != PLANE_TABLE:
                raise CorruptFileError(f"{label}: slab cut short")
            if zlib.crc32(head) != crc:
                raise CorruptFileError(f"{label}: plane table of block row {b} fails its checksum")
            bounds, crcs = plane_table(head, end - start, count, label)
            table = (name, bounds + (start + PLANE_TABLE), crcs)
            self._keep((seg, cls, b, -1), table, 256 * 12)
        name, at, crcs = table
        out = {p: self._get((seg, cls, b, p)) for p in wanted}
        missing = [p for p, v in out.items() if v is None]
        if missing:
            label = self.storage.label(name)
            ranges = [(int(at[p]), int(at[p + 1] - at[p])) for p in missing]
            for p, data, (_, n) in zip(missing, self._read(name, ranges), ranges, strict=True):
                if len(data) != n:
                    raise CorruptFileError(f"{label}: slab cut short")
                plane = decode_plane(data, int(crcs[p]), count, label)
                self._keep((seg, cls, b, p), plane, _nbytes(plane))
                out[p] = plane
        return [out[p] for p in wanted]

    def _read(self, name: str, ranges: list[tuple[int, int]]) -> list[bytes]:
        try:
            return self.storage.read_ranges(name, ranges)
        except FileNotFoundError:
            raise CorruptFileError(
                f"{self.storage.label(name)}: listed by the index manifest but missing"
            ) from None

    def _class_hits(self, seg: int, cls: int, hashes: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Per zone of class ``cls`` (in class order): may it hold any of ``hashes``?"""
        d = self.dirs[seg]
        c = d.classes[cls]
        b = block_index(hashes, c["blocks"])
        if not c.get("planes"):
            hit = np.zeros(c["count"], dtype=np.bool_)
            for h in range(hashes.shape[0]):
                hit |= row_holds(self.block_row(seg, cls, int(b[h])), masks[h])
            return hit
        # one bit per word: plane 32 * j + (bit of word j)
        bits = np.log2(masks).astype(np.int64) + 32 * np.arange(8)
        acc = None
        for h in range(hashes.shape[0]):
            one = None
            for plane in self.planes(seg, cls, int(b[h]), bits[h].tolist()):
                one = plane.copy() if one is None else np.bitwise_and(one, plane, out=one)
            acc = one if acc is None else np.bitwise_or(acc, one, out=acc)
        return np.unpackbits(acc, count=c["count"], bitorder="little").view(np.bool_)

    def _class_members(self, seg: int) -> tuple[list[np.ndarray], np.ndarray | None]:
        """Per class of a segment its zones (directory order), and the zones with no
        usable filter (None: every zone has one) - once per open index."""
        got = self._members.get(seg)
        if got is None:
            d = self.dirs[seg]
            members = [np.flatnonzero(d.zone_class == c) for c in range(len(d.classes))]
            none = d.zone_class == NO_CLASS
            got = self._members[seg] = (members, none if none.any() else None)
        return got

    def segment_may(self, seg: int, hashes: np.ndarray) -> np.ndarray:
        """May each zone of segment ``seg`` (directory order) hold any of ``hashes``?"""
        from bloomskip.sbbf.masks import block_masks

        masks = block_masks(hashes)  # (k, 8) uint32
        members, none = self._class_members(seg)
        n = self.dirs[seg].keys.shape[0]
        if none is None and len(members) == 1:  # one class, every zone: its order
            return self._class_hits(seg, 0, hashes, masks)
        out = none.copy() if none is not None else np.zeros(n, np.bool_)  # none: may match
        for c, at in enumerate(members):
            if at.shape[0]:
                out[at] = self._class_hits(seg, c, hashes, masks)
        return out

    def probe_segment(self, seg: int, zone: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        """May zone ``zone[i]`` of segment ``seg`` hold any of ``hashes``?"""
        if zone.shape[0] == 0:
            return np.zeros(0, np.bool_)
        may = self.segment_may(seg, hashes)
        if zone.shape[0] == may.shape[0] and np.array_equal(zone, self._order(seg)):
            return may  # every zone, in order (a fresh array)
        return may[zone]

    def _order(self, seg: int) -> np.ndarray:
        got = self._members.get(("order", seg))
        if got is None:
            got = self._members[("order", seg)] = np.arange(self.dirs[seg].keys.shape[0])
        return got

    def probe(self, seg: np.ndarray, zone: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        """May zone ``zone[i]`` of segment ``seg[i]`` hold any of ``hashes``?"""
        out = np.zeros(zone.shape[0], dtype=np.bool_)
        for s in present(seg):
            mine = np.flatnonzero(seg == s)
            out[mine] = self.probe_segment(s, zone[mine], hashes)
        return out


def _nbytes(value: Any) -> int:
    """What a kept row (2-D), plane (1-D, with its entry: planes of a small class are a
    few bytes) or plane table (a tuple) counts against the cache's budget."""
    if isinstance(value, np.ndarray):
        return value.nbytes + (256 if value.ndim == 1 else 0)
    return 256 * 12


def served_zones(
    storage: Storage, directory: Directory, slabs: Sequence[str]
) -> list[bytes | None]:
    """Every zone's filter as the serving layout holds it (reading whole slabs), in
    directory order; None for a zone with no usable filter. For exports and checks: a
    lookup never reads this much."""
    out: list[bytes | None] = [None] * directory.keys.shape[0]
    for cls, c in enumerate(directory.classes):
        matrix = read_rows(storage, directory, slabs, cls, 0, c["blocks"])
        for z in np.flatnonzero(directory.zone_class == cls).tolist():
            out[z] = matrix[:, directory.position[z], :].tobytes()
    return out


__all__ = [
    "NO_CLASS",
    "BlockSource",
    "Directory",
    "SegmentBlocks",
    "ServedFilters",
    "SlabJob",
    "block_index",
    "build_slab",
    "read_directory",
    "read_rows",
    "served_zones",
    "slab_blocks",
    "slab_name",
    "write_directory",
]
