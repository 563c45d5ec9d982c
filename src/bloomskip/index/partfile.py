"""Serving parts (``<uuid>.blocks``): what one indexing task writes of a column's zone
filters, block-major per size class, for the slab jobs to gather (:mod:`.serving`).

``magic | u32 header length | header JSON | sections`` (each 8-byte aligned); the header
holds the zone count, the classes (``blocks``, ``count``) and each section's ``[offset,
length]``. Section ``c<i>`` is class ``i``'s matrix: block row ``b`` (block ``b`` of
every zone of the class, ``count * 32`` bytes) after row ``b - 1``; section ``k<i>`` holds
one CRC-32 per block row, seeded with the part's name and the row's place
(:func:`.integrity.seed`). A part is written by one process and read by others (Spark
tasks, possibly on other machines, through an object store): a slab job checks each row
it reads, so a part damaged in between fails the build instead of becoming slabs whose
own checksums would vouch for wrong filters. Parts live only for one build (orphans go
with :func:`~.store.vacuum`), so their format changes freely.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from bloomskip.errors import CorruptFileError
from bloomskip.index import integrity
from bloomskip.index.serving import (
    _HEAD,
    MAX_BLOCKS,
    MAX_HEADER,
    NO_CLASS,
    _align,
    _classes,
    _int,
    parse_header,
)
from bloomskip.index.storage import Storage

PART_MAGIC = b"BSKPART2"


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
    lengths = {}
    for i, (blocks, n) in enumerate(listed):
        lengths[f"c{i}"], lengths[f"k{i}"] = blocks * n * 32, blocks * 4
    out, at = _layout(PART_MAGIC, header, lengths)
    for i, (blocks, members) in enumerate(classes.items()):
        off = at[f"c{i}"][0]
        m = out[off : off + blocks * len(members) * 32].reshape(blocks, len(members), 32)
        _fill_class(m, data, offsets, members, blocks)
        sums = out[at[f"k{i}"][0] : at[f"k{i}"][0] + blocks * 4].view("<u4")
        sums[:] = [_crc(m[b], rel, i, b) for b in range(blocks)]
    storage.write(rel, memoryview(out), durable=False)  # read back once, row CRCs checked
    return zone_class, listed, int(out.shape[0])


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


def _crc(row, rel: str, cls: int, b: int) -> int:
    return zlib.crc32(row, integrity.seed(rel, f"{cls}:{b}"))


@dataclass(frozen=True)
class Part:
    """A part as the committing process knows it: its name, and per class its block
    count and zones (as its task reported them)."""

    rel: str
    classes: tuple[tuple[int, int], ...]  # (blocks, count) per class
    size: int

    def rows(self, storage: Storage, cls: int, b0: int, b1: int) -> np.ndarray:
        """Block rows ``[b0, b1)`` of class ``cls``, each checked against its CRC-32."""
        count = self.classes[cls][1] if 0 <= cls < len(self.classes) else 0
        out = np.empty((max(b1 - b0, 0), count, 32), np.uint8)
        self.rows_into(storage, cls, b0, b1, out)
        return out

    def rows_into(self, storage: Storage, cls: int, b0: int, b1: int, out: np.ndarray) -> None:
        """:meth:`rows` read straight into ``out``, ``(b1 - b0, count, 32)`` uint8 whose
        rows are each contiguous (a slab's columns for this part's zones): one read
        for all the rows, no copy (:meth:`~.storage.Storage.read_into`)."""
        header, _ = read_header(storage, self.rel, PART_MAGIC, self.size)
        label = storage.label(self.rel)
        zones = _int(header, "zones", label, 0, self.size)
        classes = _classes(header, label, zones)
        if [(c["blocks"], c["count"]) for c in classes] != list(self.classes):
            raise CorruptFileError(f"{label}: its classes are not those its task reported")
        blocks, count = self.classes[cls]
        if not 0 <= b0 <= b1 <= blocks:
            raise CorruptFileError(f"{label}: block rows {b0}..{b1} of a class of {blocks}")
        if out.shape != (b1 - b0, count, 32) or out.dtype != np.uint8:
            raise ValueError(f"rows of {count} blocks into an array of shape {out.shape}")
        span, sums = header["sections"].get(f"c{cls}"), header["sections"].get(f"k{cls}")
        if span is None or span[1] != blocks * count * 32:
            raise CorruptFileError(f"{label}: class {cls} matrix has the wrong size")
        if sums is None or sums[1] != blocks * 4:
            raise CorruptFileError(f"{label}: class {cls} checksums have the wrong size")
        width = count * 32
        (crcs,) = storage.read_ranges(self.rel, [(sums[0] + b0 * 4, (b1 - b0) * 4)])
        views = [memoryview(out[r]).cast("B") for r in range(b1 - b0)]
        got = storage.read_into(self.rel, span[0] + b0 * width, views) if width else 0
        if got != (b1 - b0) * width or len(crcs) != (b1 - b0) * 4:
            raise CorruptFileError(f"{label}: file ends inside class {cls}")
        want = np.frombuffer(crcs, dtype="<u4").tolist()
        for r in range(b1 - b0):
            if _crc(views[r], self.rel, cls, b0 + r) != want[r]:
                raise CorruptFileError(f"{label}: block row {b0 + r} fails its checksum")


def _layout(
    magic: bytes, header: dict[str, Any], lengths: dict[str, int]
) -> tuple[np.ndarray, dict[str, list[int]]]:
    """A zeroed buffer for ``magic | u32 header length | header JSON | sections (each
    8-byte aligned)`` with the magic and header written, and each section's ``[offset,
    length]`` (as the header records them); the caller fills the sections."""
    names = list(lengths)
    # The header holds the offsets, which depend on its own length: fix the width first.
    header = dict(header, sections={n: [0, int(lengths[n])] for n in names})
    at = 0
    for _ in range(3):
        text = json.dumps(header, separators=(",", ":")).encode()
        at = _align(_HEAD + len(text))
        offsets = {}
        for n in names:
            offsets[n] = [at, int(lengths[n])]
            at = _align(at + lengths[n])
        header = dict(header, sections=offsets)
    text = json.dumps(header, separators=(",", ":")).encode()
    if names and _align(_HEAD + len(text)) != header["sections"][names[0]][0]:
        raise AssertionError("serving header did not settle")  # pragma: no cover
    out = np.zeros(at if names else _HEAD + len(text), np.uint8)
    out[:8] = np.frombuffer(magic, np.uint8)
    out[8:12] = np.frombuffer(len(text).to_bytes(4, "little"), np.uint8)
    out[12 : 12 + len(text)] = np.frombuffer(text, np.uint8)
    return out, header["sections"]


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
