"""Mutations of a zone index's own files, and a watch on what the index touches, for the
index fuzz tests (``tests/index/test_fuzz.py``).

Two kinds of mutation, two standards:

* **damage** (:func:`damage`): what storage, networks and careless tools do - bits
  flipped, bytes set, zeroed, cut, inserted, duplicated, a file emptied or grown, a file
  swapped for another of its kind or for an older version's, a file or directory replaced
  by a symbolic link out of the index, a FIFO in a file's place, a file in a directory's.
  Checksums are *not* recomputed. An index so damaged must answer with a typed error or
  with candidates holding every matching row.
* **forgery** (:func:`forge_manifest`, :func:`forge_directory`, :func:`forge_slab`,
  :func:`forge_table`): a writer that means harm and recomputes every checksum - values
  of the wrong type, out of range, huge counts and sizes, negative numbers, names
  pointing out of the index, swapped columns. Answers may be wrong (a CRC detects
  damage, not lies), but every run still ends in an answer or a typed one-line error,
  in bounded time and memory, touching nothing outside the index root.

:class:`Watch` records, through an audit hook (:func:`sys.addaudithook`), every path
Python opens, creates, renames or deletes while armed; symbolic links are resolved when
checked, so a link inside the index that leads out of it is seen for what it is.
"""

from __future__ import annotations

import copy
import json
import os
import random
import stat
import sys
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bloomskip.index import integrity, serving, store
from bloomskip.index.storage import LocalStorage

# --------------------------------------------------------------------------------- roles


def roles(root: str) -> dict[str, list[str]]:
    """The index's files by role (names relative to ``root``): those of the latest
    manifest, older manifests, and the marker."""
    st = LocalStorage(root)
    found = store.versions(st)
    m = store.read_manifest(st, found[-1])
    out: dict[str, list[str]] = {
        "manifest": [store.manifest_name(found[-1])],
        "old-manifest": [store.manifest_name(v) for v in found[:-1]],
        "marker": ["_bloomskip_index.json"],
        "fragments": [m.fragments] if m.fragments else [],
        "zones": [],
        "files": [],
        "directory": [],
        "slab": [],
    }
    for col in m.columns.values():
        for seg in col.segments:
            out["zones"] += seg.zones
            out["files"] += seg.files
            out["directory"] += [seg.directory] if seg.directory else []
            out["slab"] += seg.slabs
    old = [store.read_manifest(st, v) for v in found[:-1]]
    out["old-fragments"] = sorted({o.fragments for o in old if o.fragments} - {m.fragments})
    return out


# -------------------------------------------------------------------------------- damage

BYTE_OPS = ("flip", "set", "zero", "cut", "insert", "delete", "duplicate", "empty", "grow")


def damage_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """``data`` damaged once, and what was done."""
    b = bytearray(data)
    op = rng.choice(BYTE_OPS)
    n = len(b)
    at = rng.randrange(n) if n else 0
    if op == "flip" and n:
        bit = rng.randrange(8)
        b[at] ^= 1 << bit
        return bytes(b), f"flip bit {bit} of byte {at}"
    if op == "set" and n:
        v = rng.randrange(256)
        b[at] = v
        return bytes(b), f"byte {at} = {v}"
    if op == "zero" and n:
        k = rng.randrange(1, 65)
        b[at : at + k] = bytes(len(b[at : at + k]))
        return bytes(b), f"zero {k} bytes at {at}"
    if op == "cut":
        return bytes(b[:at]), f"cut to {at} bytes"
    if op == "insert":
        extra = rng.randbytes(rng.randrange(1, 17))
        return bytes(b[:at] + extra + b[at:]), f"insert {len(extra)} bytes at {at}"
    if op == "delete" and n:
        k = rng.randrange(1, 17)
        return bytes(b[:at] + b[at + k :]), f"delete {k} bytes at {at}"
    if op == "duplicate" and n:
        k = rng.randrange(1, 65)
        return bytes(b[: at + k] + b[at : at + k] + b[at + k :]), f"duplicate {k} at {at}"
    if op == "grow":
        extra = rng.choice([bytes(64), rng.randbytes(64), bytes(b[-64:])])
        return bytes(b) + extra, "64 bytes appended"
    return b"", "emptied"


def damage(root: str, outside: str, rng: random.Random) -> str:
    """Damage one file of the index at ``root`` (checksums left as they are); ``outside``
    is a directory of canary files next to the index. Returns what was done."""
    r = roles(root)
    kinds = [k for k, names in r.items() if names and k != "old-fragments"]
    kind = rng.choice(kinds)
    rel = rng.choice(r[kind])
    path = os.path.join(root, *rel.split("/"))
    how = rng.random()
    if how < 0.08:  # swapped for another file of its kind, or an older version's
        pool = [n for n in r[kind] + (r["old-fragments"] if kind == "fragments" else [])]
        pool += r["old-manifest"] if kind == "manifest" else []
        others = [n for n in pool if n != rel]
        if others:
            other = rng.choice(others)
            with open(os.path.join(root, *other.split("/")), "rb") as fh:
                data = fh.read()
            _replace(path, data)
            return f"{rel}: content of {other}"
    if how < 0.12:  # a link out of the index, in its place
        target = rng.choice(sorted(os.listdir(outside)))
        os.unlink(path)
        os.symlink(os.path.join(outside, target), path)
        return f"{rel}: a symbolic link to {target} outside"
    if how < 0.14 and kind in ("zones", "files", "directory", "slab"):
        directory = os.path.dirname(path)
        moved = directory + ".moved"
        os.rename(directory, moved)
        if rng.random() < 0.5:
            os.symlink(outside, directory)
            return f"{os.path.dirname(rel)}: a symbolic link to the directory outside"
        with open(directory, "wb") as fh:
            fh.write(b"a file where a directory was")
        return f"{os.path.dirname(rel)}: a file in place of the directory"
    if how < 0.16:  # a reader that opened it would wait for a writer forever
        os.unlink(path)
        os.mkfifo(path)
        return f"{rel}: a FIFO in its place"
    with open(path, "rb") as fh:
        data, what = damage_bytes(fh.read(), rng)
    _replace(path, data)
    return f"{rel}: {what}"


def _replace(path: str, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)


# ------------------------------------------------------------------------------ forgery

#: Values a forger puts anywhere: wrong types, out of range, huge, negative, hostile names.
HOSTILE = [
    None,
    True,
    -1,
    0,
    2**31,
    2**63,
    2**64 + 7,
    10**40,
    1e308,
    -0.5,
    "",
    "x",
    "../../outside/canary.parquet",
    "/etc/passwd",
    "columns/0-s/" + "0" * 32 + ".dir",
    [],
    {},
    [1, 2, 3],
    {"a": 1},
    list(range(10_000)),
    "\udcff",
]


def _paths(doc: Any, at: tuple = ()) -> list[tuple]:
    out = [at]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*at, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:8]):
            out += _paths(v, (*at, i))
    return out


def _get(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def forge_json(doc: dict, rng: random.Random) -> tuple[dict, str]:
    """``doc`` with one value replaced, removed, duplicated or swapped."""
    doc = copy.deepcopy(doc)
    paths = [p for p in _paths(doc) if p]
    path = rng.choice(paths)
    parent, key = _get(doc, path[:-1]), path[-1]
    op = rng.random()
    if op < 0.15:
        if isinstance(parent, dict):
            del parent[key]
        else:
            parent.pop(key)
        return doc, f"removed {path}"
    if op < 0.25 and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[key]))
        return doc, f"duplicated {path}"
    if op < 0.35:
        other = rng.choice(paths)
        if other[: len(path)] != path and path[: len(other)] != other:
            a, b = copy.deepcopy(_get(doc, path)), copy.deepcopy(_get(doc, other))
            parent[key] = b
            _get(doc, other[:-1])[other[-1]] = a
            return doc, f"swapped {path} and {other}"
    if op < 0.45:
        value = _get(doc, path)
        if isinstance(value, int) and not isinstance(value, bool):
            parent[key] = value + rng.choice([-1, 1, 1 << 20, -(1 << 20), 1 << 40])
            return doc, f"{path} {value} -> {parent[key]}"
    value = rng.choice(HOSTILE)
    if rng.random() < 0.05:
        value = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]
    parent[key] = copy.deepcopy(value)
    return doc, f"{path} = {str(value)[:40]}"


def forge_manifest(root: str, rng: random.Random) -> str:
    """The latest manifest forged, its checksum recomputed."""
    rel = roles(root)["manifest"][0]
    path = os.path.join(root, *rel.split("/"))
    with open(path, "rb") as fh:
        doc = json.loads(fh.read())
    doc, what = forge_json(doc, rng)
    if isinstance(doc, dict):
        doc[integrity.MANIFEST_KEY] = integrity.json_checksum(doc)
    _replace(path, json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    return f"{rel}: {what}"


def read_dir(root: str, rel: str) -> tuple[dict, bytes]:
    """A directory's header and its body, decompressed."""
    with open(os.path.join(root, *rel.split("/")), "rb") as fh:
        data = fh.read()
    n = int.from_bytes(data[8:12], "little")
    header = json.loads(data[12 : 12 + n])
    packed = data[12 + n : -4]
    return header, _zstd().decompress(packed, decompressed_size=header["body"][1], asbytes=True)


def write_dir(root: str, rel: str, header: dict, body: bytes, *, keep_body: bool = False) -> None:
    """A directory with ``header`` and ``body`` and a valid checksum, as a forger writes
    one (the header's body size set to the body's, unless ``keep_body``)."""
    packed = _zstd().compress(body, asbytes=True)
    if not keep_body:
        header = {**header, "body": [len(packed), len(body)]}
    text = json.dumps(header, separators=(",", ":")).encode()
    classes = header.get("classes") if isinstance(header, dict) else None
    planes = isinstance(classes, list) and any(
        isinstance(c, dict) and "layout" in c for c in classes
    )
    magic = serving.DIR_MAGIC_PLANES if planes else serving.DIR_MAGIC
    out = magic + len(text).to_bytes(4, "little") + text + packed
    _replace(os.path.join(root, *rel.split("/")), out + zlib.crc32(out).to_bytes(4, "little"))


def _zstd():
    return pa.Codec("zstd")


def forge_directory(root: str, rng: random.Random) -> str:
    """A serving directory forged: header values, section or body spans, section bytes."""
    rel = rng.choice(roles(root)["directory"])
    header, body = read_dir(root, rel)
    keep_body = False
    what = rng.random()
    if what < 0.4:
        rest = {k: v for k, v in header.items() if k not in ("sections", "body")}
        rest, desc = forge_json(rest, rng)
        header = {**rest, "sections": header["sections"], "body": header["body"]}
    elif what < 0.6:
        v = rng.choice([0, 1, 7, -8, 2**31, 2**40, 2**62, 10**30])
        if rng.random() < 0.2:
            keep_body = True
            i = rng.randrange(2)
            header["body"][i] = v
            desc = f"body span [{i}] = {v}"
        else:
            name = rng.choice(sorted(header["sections"]))
            header["sections"][name][rng.randrange(2)] = v
            desc = f"section {name} span {header['sections'][name]}"
    else:
        name = rng.choice(sorted(header["sections"]))
        off, n = header["sections"][name]
        b = bytearray(body)
        values = rng.choice(["zero", "ones", "reverse", "random", "max"])
        chunk = bytes(b[off : off + n])
        if values == "zero":
            chunk = bytes(n)
        elif values == "ones":
            chunk = b"\xff" * n
        elif values == "reverse":
            chunk = chunk[::-1]
        elif values == "max" and n >= 8:
            chunk = chunk[: n - 8] + b"\xff" * 7 + b"\x7f"  # the last value huge
        else:
            chunk = rng.randbytes(n)
        b[off : off + n] = chunk
        body = bytes(b)
        desc = f"section {name} {values}"
    write_dir(root, rel, header, body, keep_body=keep_body)
    return f"{rel}: {desc}"


def _dir_of(slab: str) -> str:
    return slab.rsplit(".c", 1)[0] + ".dir"


def forge_slab(root: str, rng: random.Random) -> str:
    """A slab rewritten, and its directory's frame ends and CRCs with it: rows zeroed,
    set, reordered, cut or grown (a forger who knows the format)."""
    rel = rng.choice(roles(root)["slab"])
    path = os.path.join(root, *rel.split("/"))
    directory = _dir_of(rel)
    header, body = read_dir(root, directory)
    cls, k = (int(x) for x in rel.rsplit(".c", 1)[1].split(".")[0].split("-"))
    classes = header["classes"]
    s, count = classes[cls]["slab_blocks"], classes[cls]["count"]
    first = sum(c["blocks"] for c in classes[:cls]) + k * s  # the slab's first row
    ends_at, crcs_at = header["sections"]["ends"][0], header["sections"]["crcs"][0]
    ends = np.frombuffer(body, "<u8", s, ends_at + 8 * first).copy()
    crcs = np.frombuffer(body, "<u4", s, crcs_at + 4 * first).copy()
    with open(path, "rb") as fh:
        data = fh.read()
    frames = [data[int(a) : int(b)] for a, b in zip([0, *ends[:-1]], ends, strict=True)]
    planes = classes[cls].get("layout") == "planes"  # a frame: plane table, then planes
    op = rng.choice(["zero", "ones", "reverse", "cut", "grow", "empty-frame"])
    if op in ("zero", "ones"):
        row = np.full((1, count, 32), 0 if op == "zero" else 255, np.uint8)
        one = serving.encode_rows(row, planes)[0] if planes else row.tobytes()
        frames = [one for _ in frames]
    elif op == "reverse":
        frames = frames[::-1]
    elif op == "empty-frame":
        frames[rng.randrange(len(frames))] = b""
    out = b"".join(frames)
    ends = np.cumsum([len(f) for f in frames]).astype("<u8")
    crcs = np.array([zlib.crc32(f[: serving.PLANE_TABLE] if planes else f) for f in frames], "<u4")
    if op == "cut":
        out = out[: len(out) // 2]
    elif op == "grow":
        out += bytes(1 << 12)
    b = bytearray(body)
    b[ends_at + 8 * first : ends_at + 8 * (first + s)] = ends.tobytes()
    b[crcs_at + 4 * first : crcs_at + 4 * (first + s)] = crcs.tobytes()
    write_dir(root, directory, header, bytes(b))
    _replace(path, out)
    return f"{rel}: rows {op}"


def forge_table(
    root: str, rng: random.Random, kinds: tuple[str, ...] = ("fragments", "zones", "files")
) -> str:
    """A zone, file or fragment table rewritten with valid checksums and nonsense in it."""
    r = roles(root)
    kind = rng.choice([k for k in kinds if r[k]])
    rel = rng.choice(r[kind])
    path = os.path.join(root, *rel.split("/"))
    t = pq.read_table(path)
    name = rng.choice(t.column_names)
    col = t.column(name)
    i = t.column_names.index(name)
    n = t.num_rows
    op = rng.choice(["drop", "rename", "string", "negative", "huge", "nulls", "swap", "empty",
                     "repeat", "odd", "outside"])  # fmt: skip
    if op == "drop":
        t = t.remove_column(i)
    elif op == "rename":
        t = t.rename_columns([c if c != name else name + "_" for c in t.column_names])
    elif op == "string":
        t = t.set_column(i, name, pa.array([str(v) for v in col.to_pylist()], pa.string()))
    elif op == "negative":
        t = t.set_column(i, name, pa.array([-1] * n, pa.int64()))
    elif op == "huge":
        t = t.set_column(i, name, pa.array([2**64 - 1] * n, pa.uint64()))
    elif op == "nulls":
        t = t.set_column(i, name, pa.nulls(n, col.type))
    elif op == "swap" and t.num_columns > 1:
        j = rng.choice([k for k in range(t.num_columns) if k != i])
        names = t.column_names
        names[i], names[j] = names[j], names[i]
        t = t.rename_columns(names)
    elif op == "empty":
        t = t.slice(0, 0)
    elif op == "repeat":
        t = pa.concat_tables([t, t])
    elif op == "odd" and "bloom_filter_data" in t.column_names:
        k = t.column_names.index("bloom_filter_data")
        t = t.set_column(k, "bloom_filter_data", pa.array([b"\x00" * 33] * n, pa.binary()))
    elif op == "outside" and "path" in t.column_names:
        k = t.column_names.index("path")
        t = t.set_column(k, "path", pa.array(["/etc/passwd"] * n, pa.string()))
    LocalStorage(root).write_table(rel, t)
    return f"{rel}: {op} {name}"


def as_format_1(root: str) -> None:
    """Rewrite the latest version of the index at ``root`` as format 1 wrote it: each
    column's live zones in one Lance zone table, no serving layout, no checksum."""
    from bloomskip import index

    zi = index.open(root)
    path = os.path.join(root, *store.manifest_name(zi.version).split("/"))
    with open(path) as fh:
        doc = json.load(fh)
    doc["format_version"] = 1
    del doc[integrity.MANIFEST_KEY]
    for name, col in zi.columns.items():
        rel = f"{col.directory}/{'ab' * 16}.zones.parquet"
        pq.write_table(zi.zones(name), os.path.join(root, *rel.split("/")), use_dictionary=False)
        segs = doc["columns"][name]["segments"]
        doc["columns"][name]["segments"] = [
            {
                "zones": [rel],
                "files": [f for s in segs for f in s["files"]],
                "num_fragments": sum(s["num_fragments"] for s in segs),
                "num_zones": sum(s["num_zones"] for s in segs),
                "zone_bytes": sum(s["zone_bytes"] for s in segs),
                "file_bytes": sum(s["file_bytes"] for s in segs),
            }
        ]
    _replace(path, json.dumps(doc).encode())


def forge_format_1(root: str, rng: random.Random) -> str:
    """The index rewritten as format 1 (Lance zone tables), then a zone table forged."""
    as_format_1(root)
    return forge_table(root, rng, ("zones",))


# --------------------------------------------------------------------------------- watch

_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_EVENTS = {
    "open",
    "os.remove",
    "os.rename",
    "os.link",
    "os.mkdir",
    "os.rmdir",
    "os.symlink",
    "os.truncate",
    "os.chmod",
    "os.utime",
    "os.scandir",
    "os.listdir",
    "shutil.rmtree",
    "shutil.copyfile",
}
_armed: list | None = None
_installed = False


def _hook(event: str, args: tuple) -> None:
    if _armed is None or event not in _EVENTS:
        return
    write = event != "open" and event not in ("os.scandir", "os.listdir")
    if event == "open":
        mode, flags = (args[1], args[2]) if len(args) > 2 else (None, 0)
        write = bool((flags or 0) & _WRITES) or (isinstance(mode, str) and mode[:1] in "wax+")
    for a in args[:2]:
        if isinstance(a, str | bytes):
            _armed.append((event, os.fsdecode(a), write))


@dataclass
class Watch:
    """Records what Python opens, makes and removes while in a ``with`` block."""

    seen: list[tuple[str, str, bool]] = field(default_factory=list)

    def __enter__(self) -> Watch:  # re-entered: records add up
        global _armed, _installed
        if not _installed:
            sys.addaudithook(_hook)
            _installed = True
        _armed = self.seen
        return self

    def __exit__(self, *exc) -> None:
        global _armed
        _armed = None

    def outside(self, scope: str, allowed: str, readable: tuple[str, ...] = ()) -> list[str]:
        """Accesses under ``scope`` (a test's directory) that lead out of ``allowed`` (the
        index root), other than reads under ``readable`` (the lake)."""
        scope, allowed = os.path.realpath(scope), os.path.realpath(allowed)
        bad = []
        for event, path, write in self.seen:
            real = os.path.realpath(path)
            if not _under(real, scope) or _under(real, allowed):
                continue
            if not write and any(_under(real, os.path.realpath(r)) for r in readable):
                continue
            bad.append(f"{event} {path} -> {real}{' (write)' if write else ''}")
        return bad


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def files(root: str) -> set[str]:
    """Every name under ``root`` (links included, not followed), relative, with ``/``."""
    out = set()
    for dirpath, dirnames, names in os.walk(root):
        for n in names + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            out.add(os.path.relpath(os.path.join(dirpath, n), root).replace(os.sep, "/"))
    return out


def newest_references(root: str) -> set[str] | None:
    """The names the highest-numbered manifest file names, read as plain JSON (None if
    it cannot be read): what a vacuum must keep, however bloomskip sees the index."""
    found = sorted(n for n in os.listdir(os.path.join(root, "_manifests")) if n.endswith(".json")
                   and n.startswith("v"))  # fmt: skip
    try:
        path = os.path.join(root, "_manifests", found[-1])
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None  # a FIFO would block this reader; a link is not the index's
        with open(path, "rb") as fh:
            doc = json.loads(fh.read())
        refs = {doc["fragments"]} if doc.get("fragments") else set()
        for col in doc["columns"].values():
            for seg in col["segments"]:
                refs.update(seg["zones"], seg["files"], seg.get("slabs", []))
                refs.update([seg["directory"]] if seg.get("directory") else [])
        return {r for r in refs if isinstance(r, str)}
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        return None


def snapshot(directory: str) -> dict[str, tuple[bytes, int]]:
    """Every file under ``directory``: its bytes and mtime (canaries must not change)."""
    out = {}
    for dirpath, _, names in os.walk(directory):
        for n in names:
            p = os.path.join(dirpath, n)
            with open(p, "rb") as fh:
                out[p] = (fh.read(), os.stat(p).st_mtime_ns)
    return out


__all__ = [
    "HOSTILE",
    "Watch",
    "as_format_1",
    "damage",
    "damage_bytes",
    "files",
    "forge_directory",
    "forge_format_1",
    "forge_json",
    "forge_manifest",
    "forge_slab",
    "forge_table",
    "newest_references",
    "read_dir",
    "roles",
    "snapshot",
    "write_dir",
]
