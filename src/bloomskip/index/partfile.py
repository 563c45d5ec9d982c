"""Serving parts (``<uuid>.blocks``): what one indexing task writes of a column's zone
filters, block-major per size class and already compressed, for the slab jobs to gather
(:mod:`.serving`).

``magic | u32 header length | header JSON | sections`` (each 8-byte aligned); the header
holds the zone count, the classes (``blocks``, ``count``) and each section's ``[offset,
length]``. Section ``c<i>`` holds class ``i``'s block rows, each a *piece*: one zstd frame
of the row's ``count * 32`` bytes (block ``b`` of every zone of the class), row ``b``
after row ``b - 1``; section ``e<i>`` where each piece ends in ``c<i>`` (u64), and section
``k<i>`` one checksum per piece: its 64-bit XXH3, seeded with the part's name and the row's
place (:func:`.integrity.seed`) - a tenth of a CRC-32's cost (``bench/writes.py``), where
every piece is checked twice (written, then read by a slab job) and deleted with its part.

Pieces are zstd frames so that a slab's block row can be the pieces of consecutive parts
back to back - a zstd stream of several frames decodes to their contents in order - and a
slab job only copies them, instead of decompressing, gathering and compressing again
(which costs a build more than all the tasks' compression). A part is written by one
process and read by others (Spark tasks, possibly on other machines, through an object
store): a slab job checks each piece it reads, so a part damaged in between fails the
build instead of becoming slabs whose own checksums would vouch for wrong filters. Parts
live only for one build (orphans go with :func:`~.store.vacuum`), so their format changes
freely.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import xxhash

from bloomskip.errors import CorruptFileError
from bloomskip.index import integrity
from bloomskip.index.serving import (
    _HEAD,
    MAX_BLOCKS,
    MAX_HEADER,
    NO_CLASS,
    _align,
    _classes,
    _compress,
    _int,
    decompress,
    parse_header,
)
from bloomskip.index.storage import Storage

PART_MAGIC = b"BSKPART3"


def write_part(
    storage: Storage, rel: str, data: np.ndarray, offsets: np.ndarray
) -> tuple[np.ndarray, list[tuple[int, int]], int]:
    """Write the filters ``data[offsets[i]:offsets[i+1]]`` (bytes, back to back) as a part:
    block-major per size class. Returns each zone's class (its position among the part's
    classes, in order of first appearance; :data:`~.serving.NO_CLASS` for a bitset that is
    not whole blocks), the classes as ``(blocks, zones)``, and the part's size."""
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
    listed = [(b, len(ms)) for b, ms in classes.items()]
    header = {
        "zones": int(sizes.shape[0]),
        "classes": [{"blocks": b, "count": n} for b, n in listed],
    }
    pieces: list[list[bytes]] = []
    lengths = {}
    for i, (blocks, members) in enumerate(classes.items()):
        m = np.empty((blocks, len(members), 32), np.uint8)
        _fill_class(m, data, offsets, members, blocks)
        rows = [_compress(m[b]) for b in range(blocks)]  # each row contiguous: no copy
        pieces.append(rows)
        lengths[f"c{i}"] = sum(len(r) for r in rows)
        lengths[f"e{i}"], lengths[f"k{i}"] = blocks * 8, blocks * 8
    head, at = _layout(PART_MAGIC, header, lengths)
    body: list = [head]  # buffers back to back: the pieces are written, not copied
    size = len(head)
    for i, rows in enumerate(pieces):
        ends = np.cumsum([len(r) for r in rows], dtype=np.uint64).astype("<u8")
        sums = np.array([_sum(r, rel, i, b) for b, r in enumerate(rows)], "<u8")
        for name, section in ((f"c{i}", rows), (f"e{i}", [ends]), (f"k{i}", [sums])):
            if at[name][0] != size:  # pragma: no cover - _layout places them so
                raise AssertionError("part sections out of place")
            body.extend(section)
            size += at[name][1]
            body.append(bytes(_align(size) - size))
            size = _align(size)
    storage.write(rel, body, durable=False)  # read back once, checksums checked
    return zone_class, listed, size


def _fill_class(
    m: np.ndarray, data: np.ndarray, offsets: np.ndarray, members: list[int], blocks: int
) -> None:
    """``m[:, j, :]`` = zone ``members[j]``'s filter as ``blocks`` rows of 32 bytes: one
    strided copy for each run of zones that lie back to back in ``data``."""
    j = 0
    while j < len(members):
        k = j + 1
        while k < len(members) and members[k] == members[k - 1] + 1:
            k += 1
        lo, hi = int(offsets[members[j]]), int(offsets[members[k - 1] + 1])
        m[:, j:k, :] = data[lo:hi].reshape(k - j, blocks, 32).transpose(1, 0, 2)
        j = k


def _sum(piece, rel: str, cls: int, b: int) -> int:
    return xxhash.xxh3_64_intdigest(piece, seed=integrity.seed(rel, f"{cls}:{b}"))


@dataclass(frozen=True)
class Part:
    """A part as the committing process knows it: its name, and per class its block
    count and zones (as its task reported them)."""

    rel: str
    classes: tuple[tuple[int, int], ...]  # (blocks, count) per class
    size: int

    def rows(self, storage: Storage, cls: int, b0: int, b1: int) -> np.ndarray:
        """Block rows ``[b0, b1)`` of class ``cls``, each checked against its checksum."""
        count = self.classes[cls][1] if 0 <= cls < len(self.classes) else 0
        out = np.empty((max(b1 - b0, 0), count, 32), np.uint8)
        self.rows_into(storage, cls, b0, b1, out)
        return out

    def rows_into(self, storage: Storage, cls: int, b0: int, b1: int, out: np.ndarray) -> None:
        """:meth:`rows` decompressed into ``out``, ``(b1 - b0, count, 32)`` uint8 (a
        slab's columns for this part's zones)."""
        count = self.classes[cls][1] if 0 <= cls < len(self.classes) else 0
        if out.shape != (b1 - b0, count, 32) or out.dtype != np.uint8:
            raise ValueError(f"rows of {count} blocks into an array of shape {out.shape}")
        label = storage.label(self.rel)
        for r, piece in enumerate(self.pieces(storage, cls, b0, b1)):
            row = decompress(piece, count * 32, label, "a block row")
            out[r] = np.frombuffer(row, np.uint8).reshape(count, 32)

    def pieces(self, storage: Storage, cls: int, b0: int, b1: int) -> list[memoryview]:
        """The pieces of block rows ``[b0, b1)`` of class ``cls`` (zstd frames), each
        checked against its checksum: one read of the ends and checksums, one of the
        pieces."""
        header, _ = read_header(storage, self.rel, PART_MAGIC, self.size)
        label = storage.label(self.rel)
        zones = _int(header, "zones", label, 0, self.size)
        classes = _classes(header, label, zones)
        if [(c["blocks"], c["count"]) for c in classes] != list(self.classes):
            raise CorruptFileError(f"{label}: its classes are not those its task reported")
        if not 0 <= cls < len(self.classes):
            raise CorruptFileError(f"{label}: no class {cls}")
        blocks, _count = self.classes[cls]
        if not 0 <= b0 <= b1 <= blocks:
            raise CorruptFileError(f"{label}: block rows {b0}..{b1} of a class of {blocks}")
        sections = header["sections"]
        span, ends_at, sums = (sections.get(f"{k}{cls}") for k in "cek")
        if span is None:
            raise CorruptFileError(f"{label}: class {cls} has no pieces")
        if ends_at is None or ends_at[1] != blocks * 8:
            raise CorruptFileError(f"{label}: class {cls} piece ends have the wrong size")
        if sums is None or sums[1] != blocks * 8:
            raise CorruptFileError(f"{label}: class {cls} checksums have the wrong size")
        if b0 == b1:
            return []
        first = b0 - 1 if b0 else b0  # where piece b0 starts: where piece b0 - 1 ends
        ranges = [(ends_at[0] + first * 8, (b1 - first) * 8), (sums[0] + b0 * 8, (b1 - b0) * 8)]
        raw_ends, sums_read = storage.read_ranges(self.rel, ranges)
        if len(raw_ends) != (b1 - first) * 8 or len(sums_read) != (b1 - b0) * 8:
            raise CorruptFileError(f"{label}: file ends inside class {cls}")
        bounds = np.frombuffer(raw_ends, "<u8").astype(np.int64)
        if not b0:
            bounds = np.concatenate([np.zeros(1, np.int64), bounds])
        if (np.diff(bounds) < 1).any() or bounds[0] < 0 or bounds[-1] > span[1]:
            raise CorruptFileError(f"{label}: class {cls} piece ends do not fit its pieces")
        lo, hi = int(bounds[0]), int(bounds[-1])
        (data,) = storage.read_ranges(self.rel, [(span[0] + lo, hi - lo)], once=True)
        if len(data) != hi - lo:
            raise CorruptFileError(f"{label}: file ends inside class {cls}")
        view, want = memoryview(data), np.frombuffer(sums_read, "<u8").tolist()
        out = []
        for r, (a, b) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)):
            piece = view[a - lo : b - lo]
            if _sum(piece, self.rel, cls, b0 + r) != want[r]:
                raise CorruptFileError(f"{label}: block row {b0 + r} fails its checksum")
            out.append(piece)
        return out


def _layout(
    magic: bytes, header: dict[str, Any], lengths: dict[str, int]
) -> tuple[bytes, dict[str, list[int]]]:
    """``magic | u32 header length | header JSON``, padded to 8 bytes, for sections of
    ``lengths`` that follow it in order, each 8-byte aligned; and each section's
    ``[offset, length]`` (as the header records them)."""
    names = list(lengths)
    # The header holds the offsets, which depend on its own length: fix the width first.
    header = dict(header, sections={n: [0, int(lengths[n])] for n in names})
    for _ in range(3):
        text = json.dumps(header, separators=(",", ":")).encode()
        at = _align(_HEAD + len(text))
        offsets = {}
        for n in names:
            offsets[n] = [at, int(lengths[n])]
            at = _align(at + lengths[n])
        header = dict(header, sections=offsets)
    text = json.dumps(header, separators=(",", ":")).encode()
    start = _align(_HEAD + len(text))
    if names and start != header["sections"][names[0]][0]:
        raise AssertionError("serving header did not settle")  # pragma: no cover
    head = magic + len(text).to_bytes(4, "little") + text
    return head + bytes(start - len(head)), header["sections"]


def read_header(storage: Storage, rel: str, magic: bytes, size: int) -> tuple[dict, bytes]:
    """The JSON header of a part, checked against the object's ``size``; also returns the
    bytes read so far (the start of the sections, often all of them)."""
    label = storage.label(rel)
    first = min(size, 64 << 10)
    try:
        (head,) = storage.read_ranges(rel, [(0, first)])
    except FileNotFoundError:
        raise CorruptFileError(f"{label}: listed by the index manifest but missing") from None
    if len(head) >= _HEAD and head[:8] == magic:
        n = int.from_bytes(head[8:12], "little")
        if n <= MAX_HEADER and _HEAD + n <= size and _HEAD + n > len(head):
            (rest,) = storage.read_ranges(rel, [(len(head), _HEAD + n - len(head))])
            head += rest
    return parse_header(head, magic, size, label), head


__all__ = ["PART_MAGIC", "Part", "read_header", "write_part"]
